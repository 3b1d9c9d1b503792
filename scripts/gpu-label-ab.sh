#!/usr/bin/env bash
# On a CUDA machine: an A/B of the GPU volume labeling benchmark (scripts/gpu-ab.sh) and the
# labeling tests of this tree with WINNOW_REQUIRE_GPU=1.
#   scripts/gpu-label-ab.sh OVERLAY LOG_DIR [bench_label_volume_gpu arguments...]
# OVERLAY holds the earlier files at their paths in the tree (OVERLAY/src/label/cuda/x.cu); e.g.
#   mkdir -p .ab/src/label/cuda && git show HEAD~1:src/label/cuda/label_volume.cu > .ab/src/label/cuda/label_volume.cu
# WINNOW_AB_TESTS=0 leaves the tests out; the other WINNOW_AB_* settings as for gpu-ab.sh (rounds,
# jobs, a time limit per test, a deadline for starting rounds).
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
overlay=$1 logs=$2
shift 2
if [ "${WINNOW_AB_TESTS:-1}" = 0 ]; then
  export WINNOW_AB_TESTS=
else
  export WINNOW_AB_TESTS="test_label_volume_device test_label:*Cuda*:*CUDA*:*Multi*:*Device*:*Gpu* \
test_label_volume:*Cuda*:*CUDA*:*Band*:*Wide*"
fi
exec "$root/scripts/gpu-ab.sh" "$overlay" "$logs" "bench_label_volume_gpu $*"
