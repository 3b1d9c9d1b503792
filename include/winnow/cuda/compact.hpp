#pragma once
/// @file cuda/compact.hpp
/// Device API of stream compaction for CUDA users: device pointers, a stream, the count written
/// to device memory, no host synchronisation. Needs no CUDA header (cudaStream_t is declared
/// here exactly as the CUDA runtime declares it).
///
/// Temporary storage, CUB style: call once with d_temp == nullptr to get `temp_bytes`, allocate,
/// call again. Or pass a DeviceAllocator and winnow takes and returns what it needs itself. Or
/// pass a CompactWorkspace: reusable storage that also spares repeated calls their reset.
/// d_out must have room for n elements (the number kept is known only on the device).
///
/// For the precompiled element types listed in winnow/compact.hpp (u8, u16, i32, u32, f32, i64,
/// u64, f64, Rgba8, RgbaF32); the host API's carried types (any other T of 1-16 bytes) are not
/// offered here: pass device memory as the precompiled type of the same size. `options.algorithm`:
/// automatic (single_pass), single_pass, block_ballot, group_scan, histopyramid;
/// `options.order`: stable keeps input order, any may be faster. Inputs need no particular
/// alignment (16-byte aligned inputs take the vectorised path). Works for n > 2^32.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "winnow/compact.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::detail::cuda {
struct WorkspaceState;
}

namespace winnow::cuda {

/// Supplies device memory for temporaries (e.g. a pool). Calls are stream-ordered.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) = 0;
};

/// Reusable temporary storage for a sequence of compactions. It grows to the largest call and is
/// left ready for the next: the single_pass kernels zero, while they run, the words that the
/// next call will need, so a call on a workspace skips the reset that the other forms issue
/// before each launch (about 2 us; what separates calls at launch-bound sizes). Allocated on
/// first use on the current device; freed by the destructor. Calls on one workspace must be
/// ordered: one stream, or streams synchronised with each other (as with any reused storage).
/// Growing is the one exception to "no host synchronisation": the first call, and a call larger
/// than any before, allocate with cudaMalloc, and a growing workspace first waits for its stream
/// (earlier calls may still use the old storage). Calls within the size held never wait. Under
/// stream capture make one call of the largest size beforehand (capture cannot allocate).
class CompactWorkspace {
 public:
  CompactWorkspace();
  ~CompactWorkspace();
  CompactWorkspace(CompactWorkspace&&) noexcept;
  CompactWorkspace& operator=(CompactWorkspace&&) noexcept;
  CompactWorkspace(const CompactWorkspace&) = delete;
  CompactWorkspace& operator=(const CompactWorkspace&) = delete;
  /// Device bytes held.
  [[nodiscard]] std::size_t bytes() const noexcept;
  /// winnow's own view of the storage.
  winnow::detail::cuda::WorkspaceState& state();

 private:
  std::unique_ptr<winnow::detail::cuda::WorkspaceState> state_;
};

/// Keeps d_in[i] matching `pred`; writes them to d_out and the count to *d_count.
/// `options.backend` is ignored. Throws BackendError on a CUDA error.
template <class T>
void compact(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, T* d_out, std::uint64_t* d_count,
             const Predicate& pred, const CompactOptions& options, cudaStream_t stream);
template <class T>
void compact(DeviceAllocator& alloc, const T* d_in, std::uint64_t n, T* d_out, std::uint64_t* d_count,
             const Predicate& pred, const CompactOptions& options, cudaStream_t stream);
template <class T>
void compact(CompactWorkspace& workspace, const T* d_in, std::uint64_t n, T* d_out, std::uint64_t* d_count,
             const Predicate& pred, const CompactOptions& options, cudaStream_t stream);

/// Keeps d_in[i] where d_flags[i] != 0.
template <class T>
void compact_flagged(void* d_temp, std::size_t& temp_bytes, const T* d_in, const std::uint8_t* d_flags, std::uint64_t n,
                     T* d_out, std::uint64_t* d_count, const CompactOptions& options, cudaStream_t stream);
template <class T>
void compact_flagged(DeviceAllocator& alloc, const T* d_in, const std::uint8_t* d_flags, std::uint64_t n, T* d_out,
                     std::uint64_t* d_count, const CompactOptions& options, cudaStream_t stream);
template <class T>
void compact_flagged(CompactWorkspace& workspace, const T* d_in, const std::uint8_t* d_flags, std::uint64_t n, T* d_out,
                     std::uint64_t* d_count, const CompactOptions& options, cudaStream_t stream);

/// Writes the indices of the elements matching `pred` (ascending when options.order is stable).
/// Throws InputError for 32-bit indices when n > 2^32.
template <class T, class Index>  // Index: std::uint32_t (n <= 2^32) or std::uint64_t
void compact_indices(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, Index* d_out_indices,
                     std::uint64_t* d_count, const Predicate& pred, const CompactOptions& options, cudaStream_t stream);
template <class T, class Index>
void compact_indices(DeviceAllocator& alloc, const T* d_in, std::uint64_t n, Index* d_out_indices,
                     std::uint64_t* d_count, const Predicate& pred, const CompactOptions& options, cudaStream_t stream);
template <class T, class Index>
void compact_indices(CompactWorkspace& workspace, const T* d_in, std::uint64_t n, Index* d_out_indices,
                     std::uint64_t* d_count, const Predicate& pred, const CompactOptions& options, cudaStream_t stream);

/// Writes the indices i where d_flags[i] != 0 (no element array needed).
void compact_flagged_indices(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_flags, std::uint64_t n,
                             std::uint32_t* d_out_indices, std::uint64_t* d_count, const CompactOptions& options,
                             cudaStream_t stream);
void compact_flagged_indices(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_flags, std::uint64_t n,
                             std::uint64_t* d_out_indices, std::uint64_t* d_count, const CompactOptions& options,
                             cudaStream_t stream);
void compact_flagged_indices(CompactWorkspace& workspace, const std::uint8_t* d_flags, std::uint64_t n,
                             std::uint32_t* d_out_indices, std::uint64_t* d_count, const CompactOptions& options,
                             cudaStream_t stream);
void compact_flagged_indices(CompactWorkspace& workspace, const std::uint8_t* d_flags, std::uint64_t n,
                             std::uint64_t* d_out_indices, std::uint64_t* d_count, const CompactOptions& options,
                             cudaStream_t stream);

/// Writes the number of non-zero flags among d_flags[0..n) to *d_count (zeroed, then added to by
/// the kernel: no temporary storage). One read of the flags: what a caller that allocates each
/// result at its size counts before the compaction (a byte an element, where a float32
/// compaction moves five). Any alignment. Throws BackendError on a CUDA error.
void count_flagged(const std::uint8_t* d_flags, std::uint64_t n, std::uint64_t* d_count, cudaStream_t stream);

}  // namespace winnow::cuda
