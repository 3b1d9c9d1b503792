// CUDA stream compaction: the pieces compiled once for every element type (the CUB scan of
// counts, the workspace, the choice behind `automatic`, the flags-to-indices form, the count of
// non-zero flags).
// The algorithms themselves are described in kernels/compact_kernels.cuh; the per-type
// instantiations live in compact_1_2.cu, compact_4.cu and compact_8_16.cu.
#include <cub/device/device_scan.cuh>
#include <cuda/std/functional>

#include "compact/cuda/compact_impl.cuh"

namespace winnow::detail::cuda {

void scan_counts(void* d_temp, std::size_t& temp_bytes, const std::uint32_t* d_counts, std::uint64_t* d_offsets,
                 std::uint64_t count, cudaStream_t stream) {
  WINNOW_CUDA_CHECK(cub::DeviceScan::ExclusiveScan(d_temp, temp_bytes, d_counts, d_offsets, ::cuda::std::plus<>{},
                                                   std::uint64_t{0}, static_cast<std::int64_t>(count), stream));
}

WorkspaceState::~WorkspaceState() {
  if (base) cudaFree(base);  // a destructor must not throw; an error here has no one to report to
}

void WorkspaceState::reserve(std::uint64_t words, std::size_t general, cudaStream_t stream) {
  int current = 0;
  WINNOW_CUDA_CHECK(cudaGetDevice(&current));
  if (base && current != device)
    throw InputError("compaction: a CompactWorkspace of device " + std::to_string(device) + " used on device " +
                     std::to_string(current));
  if (base && words <= status_capacity && general <= general_bytes) return;
  const std::uint64_t capacity = std::max(words, status_capacity);
  const std::size_t general_size = std::max(general, general_bytes);
  const std::size_t total = general_offset(capacity) + general_size;
  if (base) {
    WINNOW_CUDA_CHECK(cudaStreamSynchronize(stream));  // earlier calls in this stream may still use it
    WINNOW_CUDA_CHECK(cudaFree(base));
    base = nullptr;
    bytes = 0;
  }
  WINNOW_CUDA_CHECK(cudaMalloc(&base, total));
  device = current;
  bytes = total;
  status_capacity = capacity;
  general_bytes = general_size;
  WINNOW_CUDA_CHECK(cudaMemsetAsync(base, 0, general_offset(capacity), stream));
  zero_prefix[0] = zero_prefix[1] = capacity;
  counter_zero[0] = counter_zero[1] = true;
  next_status = next_counter = 0;
}

CompactAlgorithm automatic_algorithm(std::uint64_t /*n*/, std::size_t /*element_size*/, Order /*order*/) {
  // From bench/results/compact-gpu.md (H200, int32): unordered, single_pass (atomic tile offsets)
  // is fastest everywhere; stable, single_pass (decoupled look-back; shared-memory tiles for
  // aligned predicate inputs) is ahead of block_ballot's two passes at every size and selectivity
  // measured (2^21 - 2^28).
  return CompactAlgorithm::single_pass;
}

CompactAlgorithm resolve_algorithm(CompactAlgorithm a, std::uint64_t n, std::size_t element_size, Order order) {
  return a == CompactAlgorithm::automatic ? automatic_algorithm(n, element_size, order) : a;
}

}  // namespace winnow::detail::cuda

namespace winnow::cuda {

template <class Index>
static void flagged_indices(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_flags, std::uint64_t n,
                            Index* d_out, std::uint64_t* d_count, const CompactOptions& o, cudaStream_t stream,
                            detail::cuda::WorkspaceState* ws = nullptr) {
  using namespace detail::cuda;
  if (sizeof(Index) == 4 && n > (std::uint64_t{1} << 32))
    throw InputError("compact_flagged_indices: 32-bit indices cannot address " + std::to_string(n) + " elements");
  const kern::FlagOnlySource src{d_flags, aligned_to(d_flags, 16)};
  const kern::IndexSink<Index> sink{d_out};
  run_compaction(src, n, sink, d_count, resolve_algorithm(o.algorithm, n, 1, o.order), o.order, d_temp, temp_bytes,
                 stream, ws);
}

void compact_flagged_indices(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_flags, std::uint64_t n,
                             std::uint32_t* d_out, std::uint64_t* d_count, const CompactOptions& o,
                             cudaStream_t stream) {
  flagged_indices(d_temp, temp_bytes, d_flags, n, d_out, d_count, o, stream);
}
void compact_flagged_indices(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_flags, std::uint64_t n,
                             std::uint64_t* d_out, std::uint64_t* d_count, const CompactOptions& o,
                             cudaStream_t stream) {
  flagged_indices(d_temp, temp_bytes, d_flags, n, d_out, d_count, o, stream);
}

void compact_flagged_indices(CompactWorkspace& ws, const std::uint8_t* d_flags, std::uint64_t n, std::uint32_t* d_out,
                             std::uint64_t* d_count, const CompactOptions& o, cudaStream_t stream) {
  std::size_t bytes = 0;
  flagged_indices(nullptr, bytes, d_flags, n, d_out, d_count, o, stream, &ws.state());
}
void compact_flagged_indices(CompactWorkspace& ws, const std::uint8_t* d_flags, std::uint64_t n, std::uint64_t* d_out,
                             std::uint64_t* d_count, const CompactOptions& o, cudaStream_t stream) {
  std::size_t bytes = 0;
  flagged_indices(nullptr, bytes, d_flags, n, d_out, d_count, o, stream, &ws.state());
}

CompactWorkspace::CompactWorkspace() : state_(std::make_unique<detail::cuda::WorkspaceState>()) {}
CompactWorkspace::~CompactWorkspace() = default;
CompactWorkspace::CompactWorkspace(CompactWorkspace&&) noexcept = default;
CompactWorkspace& CompactWorkspace::operator=(CompactWorkspace&&) noexcept = default;
std::size_t CompactWorkspace::bytes() const noexcept { return state_ ? state_->bytes : 0; }
detail::cuda::WorkspaceState& CompactWorkspace::state() {
  if (!state_) state_ = std::make_unique<detail::cuda::WorkspaceState>();  // moved from: starts over
  return *state_;
}

}  // namespace winnow::cuda

namespace winnow::cuda {
namespace {

constexpr int kCountThreads = 256;

/// Non-zero bytes of a 32-bit word: each byte folded onto its lowest bit, then counted.
__device__ __forceinline__ unsigned nonzero_bytes(unsigned w) {
  w |= w >> 4;
  w |= w >> 2;
  w |= w >> 1;
  return __popc(w & 0x01010101u);
}

/// Threads read the 16-byte-aligned body as uint4 (grid-stride); the first threads also take the
/// unaligned head and the tail byte by byte. One atomic per warp.
__global__ void __launch_bounds__(kCountThreads)
    count_nonzero_flags(const std::uint8_t* flags, std::uint64_t head, std::uint64_t body, std::uint64_t tail,
                        unsigned long long* count) {
  const std::uint64_t id = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  unsigned long long found = 0;
  if (id < head) found += flags[id] != 0;
  if (id < tail) found += flags[head + body * 16 + id] != 0;
  const auto* words = reinterpret_cast<const uint4*>(flags + head);
  for (std::uint64_t i = id; i < body; i += stride) {
    const uint4 v = words[i];
    found += nonzero_bytes(v.x) + nonzero_bytes(v.y) + nonzero_bytes(v.z) + nonzero_bytes(v.w);
  }
  for (int offset = 16; offset > 0; offset /= 2) found += __shfl_down_sync(0xffffffffu, found, offset);
  if ((threadIdx.x & 31) == 0 && found) atomicAdd(count, found);
}

}  // namespace

void count_flagged(const std::uint8_t* d_flags, std::uint64_t n, std::uint64_t* d_count, cudaStream_t stream) {
  if (!d_count) throw InputError("count_flagged: d_count is null");
  if (n && !d_flags) throw InputError("count_flagged: d_flags is null");
  WINNOW_CUDA_CHECK(cudaMemsetAsync(d_count, 0, sizeof(std::uint64_t), stream));
  if (n == 0) return;
  const auto address = reinterpret_cast<std::uintptr_t>(d_flags);
  const std::uint64_t head = std::min<std::uint64_t>(n, (16 - address % 16) % 16);
  const std::uint64_t body = (n - head) / 16, tail = n - head - body * 16;
  const std::uint64_t blocks =
      std::max<std::uint64_t>(1, std::min<std::uint64_t>((body + kCountThreads - 1) / kCountThreads, 4096));
  count_nonzero_flags<<<static_cast<unsigned>(blocks), kCountThreads, 0, stream>>>(
      d_flags, head, body, tail, reinterpret_cast<unsigned long long*>(d_count));
  WINNOW_CUDA_CHECK_LAUNCH();
}

}  // namespace winnow::cuda
