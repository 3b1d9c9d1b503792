# winnow — the two commands a newcomer needs:
#   make demo   install what is missing, build (Release), run the main jobs on bundled data
#   make test   install what is missing, build (Release), run the whole test suite (CTest)
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build demo test bench-cpu gpu-check clean

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
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

bench-cpu: build
	@$(BUILD)/bench/bench_compact_cpu

gpu-check:
	@scripts/gpu-check.sh

clean:
	rm -rf $(BUILD) demo-out
