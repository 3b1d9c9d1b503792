# winnow — the two commands a newcomer needs:
#   make demo   install what is missing, build (Release), run the main jobs on bundled data
#   make test   install what is missing, build (Release), run the test suite (CTest, all but the
#               tests labelled slow), then build the Python package into $(BUILD)/python-venv and
#               run its pytest suite
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo test test-slow test-python test-sanitize test-tsan bench-cpu gpu-check clean

all: build

deps:
	@scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@scripts/demo.sh $(BUILD)

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) -LE slow
	@JOBS=$(JOBS) scripts/python-test.sh $(BUILD)

# The tests labelled slow: a short run of every fuzz target (scripts/fuzz.sh, WINNOW_FUZZ_SECONDS
# each, default 30; clang), in $(BUILD)/fuzz-short.
test-slow: build
	@ctest --test-dir $(BUILD) --output-on-failure -L slow

# The Python package alone (pip install into $(BUILD)/python-venv, then pytest tests/python).
test-python: deps
	@JOBS=$(JOBS) scripts/python-test.sh $(BUILD)

# The CPU suite under AddressSanitizer + UndefinedBehaviorSanitizer (its own build folder, no CUDA,
# no benchmarks); any report fails the test that triggered it.
test-sanitize: deps
	@cmake -S . -B $(BUILD)-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWINNOW_WITH_CUDA=OFF \
	  -DWINNOW_BUILD_BENCH=OFF -DWINNOW_SANITIZE=address,undefined > /dev/null
	@cmake --build $(BUILD)-sanitize -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(BUILD)-sanitize --output-on-failure -j $(JOBS) -LE slow

# The OpenMP paths under ThreadSanitizer (the capabilities whose CPU code runs in parallel), in a
# build folder of its own: clang with LLVM's libomp and its Archer tool, which tells TSan about
# OpenMP's barriers and tasks (GCC's libgomp is not instrumented: its synchronisation shows as
# false races). Races reported inside libomp itself (not instrumented) are ignored; any report in
# winnow's code fails the run.
TSAN_TESTS = test_compact test_label test_label_volume test_label_statistics test_histopyramid test_isosurface
ARCHER ?= $(firstword $(wildcard /usr/lib/llvm-*/lib/libarcher.so))
test-tsan:
	@scripts/install-deps.sh clang libomp-dev
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD)-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWINNOW_WITH_CUDA=OFF \
	  -DWINNOW_BUILD_BENCH=OFF -DWINNOW_BUILD_PYTHON=OFF -DWINNOW_SANITIZE=thread > /dev/null
	@cmake --build $(BUILD)-tsan -j $(JOBS) --target $(TSAN_TESTS)
	@test -n "$(ARCHER)" || { echo "libarcher.so not found (Debian: libomp-dev)" >&2; exit 1; }
	@for t in $(TSAN_TESTS); do \
	  OMP_TOOL_LIBRARIES=$(ARCHER) TSAN_OPTIONS="halt_on_error=1 ignore_noninstrumented_modules=1" \
	    $(BUILD)-tsan/tests/$$t --gtest_brief=1 || exit 1; \
	done

bench-cpu: build
	@$(BUILD)/bench/bench_compact_cpu

gpu-check:
	@scripts/gpu-check.sh

clean:
	rm -rf $(BUILD) $(BUILD)-sanitize $(BUILD)-tsan demo-out
