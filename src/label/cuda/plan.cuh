#pragma once
// Host side of CUDA labeling, shared by its units: the plan of one device call (geometry, the
// algorithm's node layout, the temporary storage layout), and the passes each algorithm implements
// in its own unit (their dependent launches: common/cuda/dependent_launch.cuh):
//   link:   every foreground node joined to its component's root (tile pass, border pass, flatten;
//           or the global union-find), roots counted per (pixel row, chunk or tile column);
//   number: after the exclusive scan of those counts, every root gets number | kHigh, and the
//           statistics records are initialised (or written in full where already final).
// label.cu runs link, the scan and number (run_core), then the label pass (run_final).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/cuda/check.cuh"
#include "common/cuda/dependent_launch.cuh"
#include "label/cuda/image_nodes.cuh"
#include "winnow/cuda/label.hpp"
#include "winnow/label.hpp"

namespace winnow::detail::cuda {

constexpr int kMaxGridY = 65535;
// block_union_find's numbering: a thread block ranks the roots of kChunk nodes of one node row.
constexpr int kNumThreads = 256, kNumItems = 4, kChunk = kNumThreads * kNumItems;
// tile_merge 8-connectivity: tiles of kTB x kTB 2x2 blocks; the local components that touch
// another tile, listed per tile, each own a perimeter block, so a tile has at most 4 * 32 - 4.
constexpr int kTB = kTileNodes;
constexpr int kXCap = 128;
// tile_merge 4-connectivity: tiles of kTile x kTile pixels.
constexpr int kTile = kTileNodes;
static_assert(kTile == 32, "a tile row is one warp (ballots) and 1 << 5 pixels wide (unite_counted<1, 5>)");

struct Plan {
  Geo g{};
  int B = 2;
  LabelAlgorithm algorithm = LabelAlgorithm::block_union_find;
  int conn = 8;
  bool local2 = false;  // tile_merge on 2x2 blocks (8-connectivity)
  bool local1 = false;  // tile_merge on pixels (4-connectivity)
  std::size_t nodes = 0;
  int nchunks = 0;
  std::size_t ncounts = 0;
  std::size_t scan_bytes = 0;
  // temp layout
  std::size_t ntiles = 0;  // local2: tiles of 32x32 blocks
  std::size_t off_P = 0, off_S = 0, off_xlist = 0, off_xcount = 0, off_counts = 0, off_offsets = 0, off_scan = 0,
              total = 0;
};

/// Pointers into a call's temporary storage, laid out by the plan.
struct Scratch {
  std::uint32_t* P = nullptr;        ///< union-find forest: one node per pixel or 2x2 block
  uint4* S = nullptr;                ///< tile_merge 8: per-node statistics of tile-local components
  std::uint32_t* xlist = nullptr;    ///< tile_merge 8: per tile, the local components that leave it
  std::uint32_t* xcount = nullptr;   ///< ... and their number
  std::uint32_t* counts = nullptr;   ///< roots per (pixel row, chunk or tile column)
  std::uint32_t* offsets = nullptr;  ///< their exclusive scan
  Scratch(const Plan& p, void* d_temp) {
    auto* base = static_cast<char*>(d_temp);
    P = reinterpret_cast<std::uint32_t*>(base + p.off_P);
    S = reinterpret_cast<uint4*>(base + p.off_S);
    xlist = reinterpret_cast<std::uint32_t*>(base + p.off_xlist);
    xcount = reinterpret_cast<std::uint32_t*>(base + p.off_xcount);
    counts = reinterpret_cast<std::uint32_t*>(base + p.off_counts);
    offsets = reinterpret_cast<std::uint32_t*>(base + p.off_offsets);
  }
};

// ---- the passes of each algorithm (one unit each) ---------------------------------------------
// block_union_find.cu: global union-find, then a compress pass that counts roots per chunk.
void link_block_union_find(const Plan& p, const Scratch& t, const std::uint8_t* d_mask, cudaStream_t s);
void number_block_union_find(const Plan& p, const Scratch& t, RawComponentStats* st, std::uint64_t cap, cudaStream_t s);
// tile_merge4.cu: tiles of 32 x 32 pixels.
void link_tile_merge4(const Plan& p, const Scratch& t, const std::uint8_t* d_mask, cudaStream_t s);
void number_tile_merge4(const Plan& p, const Scratch& t, RawComponentStats* st, std::uint64_t cap, cudaStream_t s);
// tile_merge8.cu: tiles of 32 x 32 2x2 blocks; with `stats`, per-tile statistics records.
void link_tile_merge8(const Plan& p, const Scratch& t, const std::uint8_t* d_mask, bool stats, cudaStream_t s);
void number_tile_merge8(const Plan& p, const Scratch& t, RawComponentStats* st, std::uint64_t cap, cudaStream_t s);

}  // namespace winnow::detail::cuda
