// CUDA labeling, block_union_find (BUF; Allegretti, Bolelli, Grana, "Optimized Block-Based
// Algorithms to Label Connected Components on GPUs", IEEE TPDS 2019): union-find over the whole
// image at once, without tiles. With 8-connectivity the image is cut into 2x2 blocks -- all
// foreground pixels of a block are 8-connected -- and union-find runs over blocks (a quarter of
// the nodes). With 4-connectivity the pixels of a 2x2 block need not be connected, so the nodes are
// pixels (Playne & Hawick 2018). Kernels: init (each node's key), merge (atomicMin union of a node
// with its backward neighbours), compress_count (every node -> its root, roots counted per chunk of
// a node row), assign (roots ranked in raster order with a block scan).
// Selectable; `automatic` picks tile_merge, which is faster at both connectivities
// (bench/results/label.md). O(W*H) work; union-find trees are shallow in practice.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>

#include "label/cuda/plan.cuh"

namespace winnow::detail::cuda {
namespace {

template <int B>
__global__ void init_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g) {
  const int bx = blockIdx.x * blockDim.x + threadIdx.x;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    if (bx >= g.bw) continue;
    std::uint32_t k = kNone;
#pragma unroll
    for (int dy = 0; dy < B; ++dy)
#pragma unroll
      for (int dx = 0; dx < B; ++dx) {
        const int x = bx * B + dx, y = by * B + dy;
        if (k == kNone && fg(m, g, x, y)) k = key_of(x, y, g);
      }
    P[static_cast<long long>(by) * g.bw + bx] = k;
  }
}

// 8-connectivity on 2x2 blocks: a b / c d.
__global__ void merge8_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g) {
  const int bx = blockIdx.x * blockDim.x + threadIdx.x;
  const ImageForest<2> forest{P, g};
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    if (bx >= g.bw) continue;
    const long long b = static_cast<long long>(by) * g.bw + bx;
    if (P[b] == kNone) continue;
    const int x = bx * 2, y = by * 2;
    const bool a = fg(m, g, x, y), bb = fg(m, g, x + 1, y), c = fg(m, g, x, y + 1);
    // left block
    if ((a || c) && (fg(m, g, x - 1, y) || fg(m, g, x - 1, y + 1))) unite(forest, P[b], P[b - 1]);
    if (y > 0) {
      const long long u = b - g.bw;
      if ((a || bb) && (fg(m, g, x, y - 1) || fg(m, g, x + 1, y - 1))) unite(forest, P[b], P[u]);
      if (a && fg(m, g, x - 1, y - 1)) unite(forest, P[b], P[u - 1]);
      if (bb && fg(m, g, x + 2, y - 1)) unite(forest, P[b], P[u + 1]);
    }
  }
}

// 4-connectivity on pixels.
__global__ void merge4_kernel(const std::uint8_t* m, std::uint32_t* P, Geo g) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const ImageForest<1> forest{P, g};
  for (int y = blockIdx.y; y < g.H; y += gridDim.y) {
    if (x >= g.W) continue;
    const long long i = static_cast<long long>(y) * g.W + x;
    if (P[i] == kNone) continue;
    if (x > 0 && P[i - 1] != kNone) unite(forest, P[i], P[i - 1]);
    if (y > 0 && P[i - g.W] != kNone) unite(forest, P[i], P[i - g.W]);
  }
}

// ---- numbering ----------------------------------------------------------------------------------
//
// compress_count: every node -> its root; per chunk of a node row, the roots whose key lies in
// the node row's first / second pixel row are counted (packed in 16-bit halves). An exclusive scan
// (CUB) over (pixel row, chunk) gives each chunk its first number; assign ranks the roots inside
// the chunk with a block scan in row order, writes number | kHigh into the root, and initialises
// the statistics record.

template <int B>
__global__ void __launch_bounds__(kNumThreads)
    compress_count_kernel(std::uint32_t* P, Geo g, int nchunks, std::uint32_t* counts) {
  using Reduce = cub::BlockReduce<std::uint32_t, kNumThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    std::uint32_t c = 0;
#pragma unroll
    for (int j = 0; j < kNumItems; ++j) {
      const int bx = blockIdx.x * kChunk + j * kNumThreads + threadIdx.x;
      if (bx >= g.bw) continue;
      const std::uint32_t n = static_cast<std::uint32_t>(by * g.bw + bx);
      const std::uint32_t p = P[n];
      if (p == kNone) continue;
      const std::uint32_t r = find_root_read_only(ImageForest<B, const std::uint32_t>{P, g}, p);
      if (r != p) P[n] = r;
      else if (node_of<B>(p, g) == n) c += (B == 2 && static_cast<int>(p >> g.shift) != B * by) ? 0x10000u : 1u;
    }
    const std::uint32_t total = Reduce(tmp).Sum(c);
    if (threadIdx.x == 0) {
      const long long y = static_cast<long long>(by) * B;
      counts[y * nchunks + blockIdx.x] = total & 0xFFFFu;
      if (B == 2 && y + 1 < g.H) counts[(y + 1) * nchunks + blockIdx.x] = total >> 16;
    }
    __syncthreads();
  }
}

template <int B>
__global__ void __launch_bounds__(kNumThreads)
    assign_kernel(std::uint32_t* P, Geo g, int nchunks, const std::uint32_t* offsets, RawComponentStats* st,
                  std::uint64_t cap) {
  using Scan = cub::BlockScan<std::uint32_t, kNumThreads>;
  __shared__ typename Scan::TempStorage tmp;
  for (int by = blockIdx.y; by < g.bh; by += gridDim.y) {
    std::uint32_t f[kNumItems], c = 0;
#pragma unroll
    for (int j = 0; j < kNumItems; ++j) {
      // blocked: thread t owns nodes 4t..4t+3, so the block scan ranks them in row order
      const int bx = blockIdx.x * kChunk + threadIdx.x * kNumItems + j;
      f[j] = 0;
      if (bx < g.bw) {
        const std::uint32_t n = static_cast<std::uint32_t>(by * g.bw + bx);
        const std::uint32_t p = P[n];
        if (p != kNone && !(p & kHigh) && node_of<B>(p, g) == n)
          f[j] = (B == 2 && static_cast<int>(p >> g.shift) != B * by) ? 0x10000u : 1u;
      }
      c += f[j];
    }
    std::uint32_t before;
    Scan(tmp).ExclusiveSum(c, before);
    const long long y = static_cast<long long>(by) * B;
    std::uint32_t next0 = offsets[y * nchunks + blockIdx.x] + (before & 0xFFFFu) + 1;
    std::uint32_t next1 = (B == 2 && y + 1 < g.H) ? offsets[(y + 1) * nchunks + blockIdx.x] + (before >> 16) + 1 : 0;
#pragma unroll
    for (int j = 0; j < kNumItems; ++j) {
      if (!f[j]) continue;
      const int bx = blockIdx.x * kChunk + threadIdx.x * kNumItems + j;
      const std::uint32_t n = static_cast<std::uint32_t>(by * g.bw + bx);
      const std::uint32_t num = f[j] == 1u ? next0++ : next1++;
      P[n] = num | kHigh;
      if (st && num <= cap) st[num - 1] = empty_stats();
    }
    __syncthreads();
  }
}

}  // namespace

void link_block_union_find(const Plan& p, const Scratch& t, const std::uint8_t* d_mask, cudaStream_t s) {
  const Geo g = p.g;
  const dim3 nb(128);
  const dim3 ng((g.bw + 127) / 128, std::min(g.bh, kMaxGridY));
  if (p.B == 2) {
    init_kernel<2><<<ng, nb, 0, s>>>(d_mask, t.P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
    merge8_kernel<<<ng, nb, 0, s>>>(d_mask, t.P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
  } else {
    init_kernel<1><<<ng, nb, 0, s>>>(d_mask, t.P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
    merge4_kernel<<<ng, nb, 0, s>>>(d_mask, t.P, g);
    WINNOW_CUDA_CHECK_LAUNCH();
  }
  const dim3 cg(p.nchunks, std::min(g.bh, kMaxGridY));
  if (p.B == 2) compress_count_kernel<2><<<cg, kNumThreads, 0, s>>>(t.P, g, p.nchunks, t.counts);
  else compress_count_kernel<1><<<cg, kNumThreads, 0, s>>>(t.P, g, p.nchunks, t.counts);
  WINNOW_CUDA_CHECK_LAUNCH();
}

void number_block_union_find(const Plan& p, const Scratch& t, RawComponentStats* st, std::uint64_t cap,
                             cudaStream_t s) {
  const Geo g = p.g;
  const dim3 cg(p.nchunks, std::min(g.bh, kMaxGridY));
  if (p.B == 2) assign_kernel<2><<<cg, kNumThreads, 0, s>>>(t.P, g, p.nchunks, t.offsets, st, cap);
  else assign_kernel<1><<<cg, kNumThreads, 0, s>>>(t.P, g, p.nchunks, t.offsets, st, cap);
  WINNOW_CUDA_CHECK_LAUNCH();
}

}  // namespace winnow::detail::cuda
