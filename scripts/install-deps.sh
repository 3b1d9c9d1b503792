#!/usr/bin/env bash
# Installs the Debian 12 packages winnow needs to build, test and benchmark, if any is missing.
# As root: apt-get installs them. Otherwise: prints the exact command and stops. Packages given
# as arguments are needed too (make test-tsan: clang libomp-dev).
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config
  libpng-dev libjpeg-dev libtiff-dev libcfitsio-dev   # image files
  zlib1g-dev                                          # gzip-compressed volume files
  libhwy-dev                                          # SIMD (Highway CompressStore)
  libcli11-dev nlohmann-json3-dev                     # command line, JSON
  libgtest-dev libbenchmark-dev                       # tests, CPU benchmarks
  libopencv-core-dev libopencv-imgproc-dev            # reference in tests and benchmarks only
  python3-venv python3-dev                            # the Python package and its tests (make test)
  "$@"
)
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
if [ "$(id -u)" -eq 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "winnow needs these Debian packages; run:" >&2
  echo "  sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
