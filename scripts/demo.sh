#!/usr/bin/env bash
# The demo: winnow's main jobs on the bundled sample data, on every available backend.
# Outputs land in demo-out/.
set -euo pipefail
build=${1:-build}
root="$(cd "$(dirname "$0")/.." && pwd)"
winnow="$build/apps/winnow/winnow"
data="$root/examples/data"
out=demo-out
mkdir -p "$out"

"$winnow" devices
backends=(cpu)
if "$winnow" devices | grep -q '^cuda:[0-9]'; then backends+=(cuda); fi

echo
echo "== image compaction: bright sources of the Hubble Deep Field"
for b in "${backends[@]}"; do
  mkdir -p "$out/$b"
  "$winnow" compact "$data/hubble_deep_field.jpg" --threshold 40 --backend "$b" \
    --out-packed "$out/$b/hubble-packed.png" --out-sorted "$out/$b/hubble-sorted.png" \
    --out-list "$out/$b/hubble-pixels.csv"
done

echo
echo "== connected components of the coins"
for b in "${backends[@]}"; do
  "$winnow" label "$data/coins.png" --backend "$b" --min-area 20 \
    --out-colored "$out/$b/coins-labels.png" --stats "$out/$b/coins-stats.csv"
done

echo
echo "== tile puzzle: the cat cut into 6x8 tiles, shuffled, restored; and 3x3 by exhaustive search"
"$winnow" scramble "$data/chelsea.png" --grid 6x8 --seed 7 --out "$out/chelsea-scrambled.png" \
  --truth "$out/chelsea-truth.json"
"$winnow" scramble "$data/astronaut.png" --grid 3x3 --seed 7 --out "$out/astronaut-scrambled.png" \
  --truth "$out/astronaut-truth.json"
for b in "${backends[@]}"; do
  "$winnow" unscramble "$out/chelsea-scrambled.png" --grid 6x8 --backend "$b" \
    --out "$out/$b/chelsea-restored.png" --placement "$out/$b/chelsea-placement.json"
  "$winnow" puzzle-score "$out/$b/chelsea-placement.json" "$out/chelsea-truth.json"
  "$winnow" unscramble "$out/astronaut-scrambled.png" --grid 3x3 --backend "$b" \
    --out "$out/$b/astronaut-restored.png" --placement "$out/$b/astronaut-placement.json"
  "$winnow" puzzle-score "$out/$b/astronaut-placement.json" "$out/astronaut-truth.json"
done

echo
echo "== voxel compaction: grey matter of the MNI152 brain map (probability > 128 of 255) as a point cloud"
for b in "${backends[@]}"; do
  "$winnow" voxels "$data/volumes/mni152_gm.nii.gz" --level 128 --backend "$b" --out "$out/$b/mni152-gm.ply"
done

echo
echo "== isosurface: the grey-matter surface of the MNI152 brain map (probability 0.5: level 127.5 of 255)"
for b in "${backends[@]}"; do
  "$winnow" isosurface "$data/volumes/mni152_gm.nii.gz" --level 127.5 --normals --backend "$b" \
    --out "$out/$b/mni152-gm-surface.ply" --preview "$out/$b/mni152-gm-surface.png"
done

echo
echo "outputs in $out/:"
find "$out" -type f | sort | sed 's/^/  /'
