// The tile pass of tile_merge with 8-connectivity, on bit-packed pixel runs.
//
// A thread block labels one 64 x 64-pixel tile (kThreads = 128 threads). The tile is held as 128
// words of 32 pixels (word = 2 * row + half, bit j = pixel 32 * half + j of the row); a run is a
// maximal set bit range of one word, so a run split by the word seam is two runs, united
// explicitly. Run ids are word * 16 + rank of the run in its word (a 32-bit word has at most 16
// runs); they order like the raster index of each run's first pixel, so union-find that links the
// larger root under the smaller (compare-and-swap on 16-bit parents in shared memory) leaves every
// tile-local component rooted at its raster-first run, whose first pixel is the component's first.
//
// Phases, separated by barriers (the kernel in label.cu calls them with __syncthreads between; a
// host build runs each phase for every thread in turn, which is one legal interleaving):
//   load     one word per thread: 32 mask bytes -> 32 bits, run starts, parents = self; with
//            statistics: accumulators reset, the pixels around the tile as bit masks
//   unite    one word per thread: each run with the runs of the row above that its 8-neighbourhood
//            overlaps (bit masks, a few instructions per pair) and, across the word seam, with the
//            left half's last run
//   jump     rounds of pointer jumping (parent = grandparent) until every run points at its root
//   resolve  one word per thread: roots marked; with statistics each run adds its area, coordinate
//            sums and extent to its root's accumulator: O(1) per run (a run is a pixel range)
//   emit     the outputs of the block-based tile pass it replaces, so the border merge, numbering
//            and statistics merge after it are unchanged: for every 2x2 block its component's root
//            key (global), roots per (pixel row, tile column), and with statistics one record per
//            root at the root's block and the list of roots that touch another tile
//
// Work is per run, not per pixel or block: a word is ~6 instructions to load and pack, and each
// run a few bit operations plus its unions.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WINNOW_HD __host__ __device__ __forceinline__
#else
#include <bit>
#include <cstring>
#define WINNOW_HD inline
#endif

namespace winnow::detail::cuda::runs {

constexpr int kSide = 64;            // tile side in pixels
constexpr int kWords = 2 * kSide;    // 32-pixel words per tile
constexpr int kThreads = kWords;     // one word per thread in every phase
constexpr int kRunsPerWord = 16;     // at most 16 runs in 32 bits
constexpr int kRuns = kWords * kRunsPerWord;
constexpr int kNodes = kSide / 2 * (kSide / 2);  // 2x2 blocks per tile: one statistics slot each
constexpr std::uint32_t kNone = 0xFFFFFFFFu;
// Components that touch another tile, listed per tile: each owns a perimeter block, so a tile has
// at most 4 * 32 - 4 of them.
constexpr int kXCap = 128;

// ---- portable intrinsics ------------------------------------------------------------------------

WINNOW_HD int popc(std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return __popc(v);
#else
  return std::popcount(v);
#endif
}
WINNOW_HD int ctz(std::uint32_t v) {  // 32 for v == 0
#if defined(__CUDA_ARCH__)
  return __clz(__brev(v));
#else
  return std::countr_zero(v);
#endif
}
WINNOW_HD std::uint32_t atomic_add(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  const std::uint32_t o = *p;
  *p = o + v;
  return o;
#endif
}
WINNOW_HD void atomic_min(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicMin(p, v);
#else
  if (v < *p) *p = v;
#endif
}
WINNOW_HD void atomic_max(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicMax(p, v);
#else
  if (v > *p) *p = v;
#endif
}
WINNOW_HD void atomic_or(std::uint32_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicOr(p, v);
#else
  *p |= v;
#endif
}
WINNOW_HD std::uint32_t atomic_cas16(std::uint16_t* p, std::uint32_t expected, std::uint32_t desired) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(reinterpret_cast<unsigned short*>(p), static_cast<unsigned short>(expected),
                   static_cast<unsigned short>(desired));
#else
  const std::uint32_t o = *p;
  if (o == expected) *p = static_cast<std::uint16_t>(desired);
  return o;
#endif
}
WINNOW_HD std::uint32_t load32(const std::uint8_t* p) {  // 4-byte aligned
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned int*>(p));
#else
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
#endif
}
WINNOW_HD void load128(const std::uint8_t* p, std::uint32_t v[4]) {  // 16-byte aligned
#if defined(__CUDA_ARCH__)
  const uint4 q = __ldg(reinterpret_cast<const uint4*>(p));
  v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
#else
  std::memcpy(v, p, 16);
#endif
}
WINNOW_HD std::uint8_t load8(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}
WINNOW_HD void store_record(std::uint32_t* S, std::int64_t n, std::uint32_t a, std::uint32_t b, std::uint32_t c,
                            std::uint32_t d) {
#if defined(__CUDA_ARCH__)
  reinterpret_cast<uint4*>(S)[n] = make_uint4(a, b, c, d);
#else
  S[4 * n] = a, S[4 * n + 1] = b, S[4 * n + 2] = c, S[4 * n + 3] = d;
#endif
}

// ---- bits -----------------------------------------------------------------------------------------

// Bits 0..e set (e in 0..31).
WINNOW_HD std::uint32_t upto(int e) { return e >= 31 ? 0xFFFFFFFFu : (2u << e) - 1u; }
// One bit per byte of v: bit i set when byte i (little-endian) is non-zero.
WINNOW_HD std::uint32_t nonzero_bytes(std::uint32_t v) {
  std::uint32_t t = ((v & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | v;  // bit 7 of each byte: byte != 0
  t = (t >> 7) & 0x01010101u;
  return (t * 0x00204081u) >> 21 & 0xFu;  // gathers bits 0, 8, 16, 24 into bits 0..3
}
// The first bit of every run of set bits.
WINNOW_HD std::uint32_t run_starts(std::uint32_t w) { return w & ~(w << 1); }
// Last bit of the run of set bits of w that contains bit b.
WINNOW_HD int run_end(std::uint32_t w, int b) { return b + ctz(~(w >> b)) - 1; }

// ---- the tile's shared state ----------------------------------------------------------------------

struct TileShared {
  std::uint32_t bits[kWords];
  std::uint16_t parent[kRuns];       // run id -> parent run id (union-find)
  std::uint8_t x0[kRuns];            // run id -> its first pixel's column in the tile
  std::uint16_t roots[kWords];       // bit k: run k of the word is a root (after resolve)
  // With statistics: the pixels around the tile (bit j of [i]: pixel 32 i + j of that side) and
  // the four corners (bit 0: (-1, -1), 1: (64, -1), 2: (-1, 64), 3: (64, 64)).
  std::uint32_t above[2], below[2], left[2], right[2], corners;
  std::uint32_t listed;              // entries of this tile in the list of roots that touch another tile
};

// Per root, at its 2x2 block's slot (two components never share a block's first pixel):
// area << 18 | sum x; sum y | runs with an outside neighbour << 18; min column; max column; max row.
// A 64 x 64 tile bounds each field (area <= 4096, sums < 2^18, runs <= 2048).
struct TileStats {
  std::uint32_t ax[kNodes], sy[kNodes], cmin[kNodes], cmax[kNodes], rmax[kNodes];
};

struct TileArgs {
  const std::uint8_t* mask;
  std::int64_t mstride;
  int W, H, shift;
  int bw, bh;                    // 2x2 blocks per row / column of the image
  int ntx;                       // tiles per row
  bool v16, v4;                  // mask rows 16- / 4-byte aligned (pointer and stride)
  std::uint32_t* P;              // per 2x2 block: global key of its component's root, or kNone
  std::uint32_t* S;              // with statistics: 4 words per 2x2 block, written at roots
  std::uint32_t* xlist;          // with statistics: kXCap block indices per tile
  std::uint32_t* xcount;         // with statistics: entries per tile
  std::uint32_t* rc;             // roots per (pixel row, tile column)
};

WINNOW_HD std::uint32_t id_of(int word, int k) { return static_cast<std::uint32_t>(word * kRunsPerWord + k); }
WINNOW_HD int row_of(std::uint32_t id) { return static_cast<int>(id >> 5); }
// The 2x2 block (tile-relative, 0..1023) holding a run's first pixel.
WINNOW_HD int slot_of(const TileShared& s, std::uint32_t id) { return (row_of(id) >> 1) * (kSide / 2) + (s.x0[id] >> 1); }

WINNOW_HD std::uint32_t find_halve(std::uint16_t* p, std::uint32_t k) {
  volatile std::uint16_t* vp = p;
  for (;;) {
    const std::uint32_t q = vp[k];
    if (q == k) return k;
    const std::uint32_t g = vp[q];
    if (g != q) vp[k] = static_cast<std::uint16_t>(g);  // an ancestor over a parent: never a cycle
    k = g;
  }
}
// Links the larger root under the smaller. A compare-and-swap that fails found b linked meanwhile;
// the loop retries from its new parent. Halving stores never touch a root (a node that is not a
// root never becomes one again), so they never race with the compare-and-swap.
WINNOW_HD void unite(std::uint16_t* p, std::uint32_t a, std::uint32_t b) {
  for (;;) {
    a = find_halve(p, a);
    b = find_halve(p, b);
    if (a == b) return;
    if (a > b) {
      const std::uint32_t t = a;
      a = b;
      b = t;
    }
    const std::uint32_t old = atomic_cas16(p + b, b, a);
    if (old == b) return;
    b = old;
  }
}

// ---- phases -------------------------------------------------------------------------------------

// Pixel (x, y) of the image as 0 / 1, 0 outside.
WINNOW_HD std::uint32_t pixel(const TileArgs& a, int x, int y) {
  if (x < 0 || y < 0 || x >= a.W || y >= a.H) return 0;
  return load8(a.mask + static_cast<std::int64_t>(y) * a.mstride + x) ? 1u : 0u;
}

template <bool Stats>
WINNOW_HD void phase_load(const TileArgs& a, int tx, int ty, TileShared& s, TileStats* st, int t) {
  const int row = t >> 1, half = t & 1;
  const int px0 = tx * kSide, py0 = ty * kSide;
  const int x = px0 + 32 * half, y = py0 + row;
  std::uint32_t w = 0;
  if (y < a.H && x < a.W) {
    const std::uint8_t* p = a.mask + static_cast<std::int64_t>(y) * a.mstride + x;
    const int valid = a.W - x < 32 ? a.W - x : 32;
    if (valid == 32 && a.v16) {
      std::uint32_t v[8];
      load128(p, v);
      load128(p + 16, v + 4);
      for (int i = 0; i < 8; ++i) w |= nonzero_bytes(v[i]) << (4 * i);
    } else if (valid == 32 && a.v4) {
      for (int i = 0; i < 8; ++i) w |= nonzero_bytes(load32(p + 4 * i)) << (4 * i);
    } else {
      for (int i = 0; i < valid; ++i) w |= (load8(p + i) ? 1u : 0u) << i;
    }
  }
  s.bits[t] = w;
  int k = 0;
  for (std::uint32_t r = run_starts(w); r; r &= r - 1, ++k) {
    const std::uint32_t id = id_of(t, k);
    s.parent[id] = static_cast<std::uint16_t>(id);
    s.x0[id] = static_cast<std::uint8_t>(32 * half + ctz(r));
  }
  if constexpr (Stats) {
    for (int i = t; i < kNodes; i += kThreads) {
      st->ax[i] = st->sy[i] = st->cmax[i] = st->rmax[i] = 0;
      st->cmin[i] = 0xFFu;
    }
    if (t < 2) s.above[t] = s.below[t] = s.left[t] = s.right[t] = 0;
    if (t == 0) s.corners = s.listed = 0;
  }
}

template <bool Stats>
WINNOW_HD void phase_unite(const TileArgs& a, int tx, int ty, TileShared& s, int t) {
  const int row = t >> 1, half = t & 1;
  if constexpr (Stats) {  // the pixels around the tile, set here (reset in phase_load)
    const int px0 = tx * kSide, py0 = ty * kSide;
    const int i = t & 63, side = t >> 6;  // side 0: row above, column left; 1: row below, column right
    if (pixel(a, px0 + i, side ? py0 + kSide : py0 - 1)) atomic_or(side ? &s.below[i >> 5] : &s.above[i >> 5], 1u << (i & 31));
    if (pixel(a, side ? px0 + kSide : px0 - 1, py0 + i)) atomic_or(side ? &s.right[i >> 5] : &s.left[i >> 5], 1u << (i & 31));
    if (t < 4 && pixel(a, (t & 1) ? px0 + kSide : px0 - 1, (t & 2) ? py0 + kSide : py0 - 1)) atomic_or(&s.corners, 1u << t);
  }
  const std::uint32_t w = s.bits[t];
  if (!w) return;
  // across the word seam: the right half's first run continues the left half's last run
  if (half == 1 && (w & 1u) && (s.bits[t - 1] >> 31))
    unite(s.parent, id_of(t, 0), id_of(t - 1, popc(run_starts(s.bits[t - 1])) - 1));
  if (row == 0) return;
  const int u = t - 2;  // the same half of the row above
  const std::uint32_t up = s.bits[u], ups = run_starts(up);
  // the other half of the row above, where it touches this word's end pixels diagonally
  const bool up_left = half == 1 && (s.bits[u - 1] >> 31);
  const bool up_right = half == 0 && (s.bits[u + 1] & 1u);
  if (!up && !up_left && !up_right) return;
  int k = 0;
  for (std::uint32_t r = run_starts(w); r; r &= r - 1, ++k) {
    const int b0 = ctz(r), b1 = run_end(w, b0);
    const std::uint32_t m = upto(b1) & ~((1u << b0) - 1u);
    const std::uint32_t id = id_of(t, k);
    std::uint32_t touch = (m | (m << 1) | (m >> 1)) & up;
    std::uint32_t last = kNone;  // the up run united last (consecutive runs often share one)
    while (touch) {
      const int b = ctz(touch);
      const std::uint32_t upid = id_of(u, popc(ups & upto(b)) - 1);
      // The first link of a run that is still a root needs no find: hang it under the up run
      // (a smaller id in the same set). Otherwise a full union.
      if (last == kNone) {
        if (atomic_cas16(s.parent + id, id, upid) != id) unite(s.parent, id, upid);
      } else if (upid != last) {
        unite(s.parent, id, upid);
      }
      last = upid;
      touch &= ~upto(run_end(up, b));
    }
    if (b0 == 0 && up_left) unite(s.parent, id, id_of(u - 1, popc(run_starts(s.bits[u - 1])) - 1));
    if (b1 == 31 && up_right) unite(s.parent, id, id_of(u + 1, 0));
  }
}

// Whether a run (row, columns c0..c1 of the tile, inside word half `half`) has a foreground
// 8-neighbour outside the tile.
WINNOW_HD bool touches_outside(const TileShared& s, int row, int half, int c0, int c1) {
  const std::uint32_t m = upto(c1 - 32 * half) & ~((1u << (c0 - 32 * half)) - 1u);
  const std::uint32_t d = m | (m << 1) | (m >> 1);
  const auto along = [&](const std::uint32_t* side, std::uint32_t lo_corner, std::uint32_t hi_corner) {
    if (d & side[half]) return true;
    if (m & 1u) {  // the pixel before the word
      if (half == 1 ? (side[0] >> 31) != 0 : lo_corner != 0) return true;
    }
    if (m >> 31) {  // the pixel after the word
      if (half == 0 ? (side[1] & 1u) != 0 : hi_corner != 0) return true;
    }
    return false;
  };
  const std::uint32_t cn = s.corners;
  if (row == 0 && along(s.above, cn & 1u, cn & 2u)) return true;
  if (row == kSide - 1 && along(s.below, cn & 4u, cn & 8u)) return true;
  const auto column = [&](const std::uint32_t* side, std::uint32_t top_corner, std::uint32_t bottom_corner) {
    for (int r = row - 1; r <= row + 1; ++r) {
      if (r < 0 ? top_corner != 0 : r >= kSide ? bottom_corner != 0 : ((side[r >> 5] >> (r & 31)) & 1u) != 0) return true;
    }
    return false;
  };
  if (c0 == 0 && column(s.left, cn & 1u, cn & 4u)) return true;
  if (c1 == kSide - 1 && column(s.right, cn & 2u, cn & 8u)) return true;
  return false;
}

// One round of pointer jumping over the thread's runs: parent = grandparent (an ancestor, so
// concurrent rounds only shorten paths). Returns whether anything changed; the kernel repeats
// rounds until no thread changes anything, then every parent is a root: log2(depth) rounds, where
// finds would walk the whole depth (rows unite in parallel, so a dense component's runs form
// chains as deep as the tile).
WINNOW_HD bool phase_jump(TileShared& s, int t) {
  const int n = popc(run_starts(s.bits[t]));
  bool changed = false;
  for (int k = 0; k < n; ++k) {
    const std::uint32_t id = id_of(t, k);
    const std::uint32_t p = s.parent[id], g = s.parent[p];
    if (g != p) {
      s.parent[id] = static_cast<std::uint16_t>(g);
      changed = true;
    }
  }
  return changed;
}

template <bool Stats>
WINNOW_HD void phase_resolve(TileShared& s, TileStats* st, int t) {
  const std::uint32_t w = s.bits[t];
  const int row = t >> 1, half = t & 1;
  std::uint32_t roots = 0;
  int k = 0;
  for (std::uint32_t r = run_starts(w); r; r &= r - 1, ++k) {
    const std::uint32_t id = id_of(t, k);
    const std::uint32_t root = s.parent[id];  // after phase_jump
    if (root == id) roots |= 1u << k;
    if constexpr (Stats) {
      const int b0 = ctz(r), b1 = run_end(w, b0);
      const std::uint32_t len = static_cast<std::uint32_t>(b1 - b0 + 1);
      const std::uint32_t c0 = static_cast<std::uint32_t>(32 * half + b0), c1 = c0 + len - 1;
      const int slot = slot_of(s, root);
      const bool ext = touches_outside(s, row, half, static_cast<int>(c0), static_cast<int>(c1));
      atomic_add(st->ax + slot, (len << 18) | (len * c0 + len * (len - 1) / 2));
      atomic_add(st->sy + slot, len * static_cast<std::uint32_t>(row) | (ext ? 1u << 18 : 0u));
      // extent: atomics only where they would change it (a stale read only errs towards an
      // atomic that changes nothing)
      if (c0 < st->cmin[slot]) atomic_min(st->cmin + slot, c0);
      if (c1 > st->cmax[slot]) atomic_max(st->cmax + slot, c1);
      if (static_cast<std::uint32_t>(row) > st->rmax[slot]) atomic_max(st->rmax + slot, static_cast<std::uint32_t>(row));
    }
  }
  s.roots[t] = static_cast<std::uint16_t>(roots);
}

template <bool Stats>
WINNOW_HD void phase_emit(const TileArgs& a, int tx, int ty, TileShared& s, TileStats* st, int t) {
  const int px0 = tx * kSide, py0 = ty * kSide;
  const int bx0 = tx * (kSide / 2), by0 = ty * (kSide / 2);
  // P: thread t takes 8 blocks of block row t / 4
  {
    const int lby = t >> 2, q = t & 3, half = q >> 1, off = (q & 1) * 16;
    const int by = by0 + lby;
    if (by < a.bh) {
      const int top = 2 * (2 * lby) + half, bot = top + 2;
      const std::uint32_t wt = s.bits[top], wb = s.bits[bot];
      std::uint32_t* out = a.P + static_cast<std::int64_t>(by) * a.bw;
      for (int j = 0; j < 8; ++j) {
        const int bx = bx0 + 8 * q + j;
        if (bx >= a.bw) break;
        const int b = off + 2 * j;
        const std::uint32_t pt = (wt >> b) & 3u, pb = (wb >> b) & 3u;
        std::uint32_t v = kNone;
        if (pt | pb) {
          const int word = pt ? top : bot;
          const int bit = b + (((pt ? pt : pb) & 1u) ? 0 : 1);
          const std::uint32_t root = s.parent[id_of(word, popc(run_starts(pt ? wt : wb) & upto(bit)) - 1)];
          v = (static_cast<std::uint32_t>(py0 + row_of(root)) << a.shift) | static_cast<std::uint32_t>(px0 + s.x0[root]);
        }
        out[bx] = v;
      }
    }
  }
  const int row = t >> 1, half = t & 1;
  // roots per pixel row
  if (half == 0 && py0 + row < a.H)
    a.rc[static_cast<std::int64_t>(py0 + row) * a.ntx + tx] = static_cast<std::uint32_t>(popc(s.roots[t]) + popc(s.roots[t + 1]));
  if constexpr (Stats) {
    const std::int64_t tile = static_cast<std::int64_t>(ty) * a.ntx + tx;
    for (std::uint32_t r = s.roots[t]; r; r &= r - 1) {
      const std::uint32_t id = id_of(t, ctz(r));
      const int slot = slot_of(s, id);
      const std::uint32_t ax = st->ax[slot], sye = st->sy[slot];
      const bool ext = (sye >> 18) != 0;
      const std::int64_t n = static_cast<std::int64_t>(by0 + (row >> 1)) * a.bw + bx0 + (s.x0[id] >> 1);
      store_record(a.S, n, (ax >> 18) | (ext ? 0x80000000u : 0u), ax & 0x3FFFFu, sye & 0x3FFFFu,
                   st->cmin[slot] | (st->cmax[slot] << 8) | (st->rmax[slot] << 16) | (static_cast<std::uint32_t>(row) << 24));
      if (ext) a.xlist[tile * kXCap + atomic_add(&s.listed, 1u)] = static_cast<std::uint32_t>(n);
    }
  }
}

}  // namespace winnow::detail::cuda::runs
