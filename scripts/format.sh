#!/usr/bin/env bash
# Applies the project's C++/CUDA style (.clang-format, clang-format 14 or later) to every tracked
# source file, or checks it with --check (non-zero exit and the files that differ).
#   scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
format="${CLANG_FORMAT:-$(command -v clang-format || true)}"
if [ -z "$format" ]; then
  echo "clang-format not found: apt-get install clang-format" >&2
  exit 2
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h')
if [ "${1:-}" = --check ]; then
  status=0
  for f in "${files[@]}"; do
    if ! "$format" --style=file "$f" | cmp -s - "$f"; then echo "$f"; status=1; fi
  done
  exit $status
fi
"$format" --style=file -i "${files[@]}"
