#!/usr/bin/env bash
# Downloads (here, on Debian 12) the .deb files the GPU machine lacks into .deps/debs, which
# the device runs carry. On that machine scripts/device-env.sh unpacks them into a prefix.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .deps/debs
cd .deps/debs
apt-get download libtiff-dev libtiff6 libtiffxx6 libjpeg62-turbo libdeflate0 libdeflate-dev libjbig0 \
  libjbig-dev liblerc4 liblerc-dev libwebp7 liblzma-dev libzstd-dev \
  libcfitsio-dev libcfitsio10 libhwy-dev libhwy1 nlohmann-json3-dev 2>&1 | grep -v '^W:' || true
ls
