#pragma once
/// @file cuda/compact.hpp
/// Device API of stream compaction for CUDA users: device pointers, a stream, the count written
/// to device memory, no host synchronisation. Needs no CUDA header (cudaStream_t is declared
/// here exactly as the CUDA runtime declares it).
///
/// Temporary storage, CUB style: call once with d_temp == nullptr to get `temp_bytes`, allocate,
/// call again. Or pass a DeviceAllocator and winnow takes and returns what it needs itself.
/// d_out must have room for n elements (the number kept is known only on the device).
#include <cstddef>
#include <cstdint>

#include "winnow/compact.hpp"

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::cuda {

/// Supplies device memory for temporaries (e.g. a pool). Calls are stream-ordered.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  virtual void* allocate(std::size_t bytes, cudaStream_t stream) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes, cudaStream_t stream) = 0;
};

/// Keeps d_in[i] matching `pred`; writes them to d_out and the count to *d_count.
/// `options.backend` is ignored. Throws BackendError on a CUDA error.
template <class T>
void compact(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n, T* d_out,
             std::uint64_t* d_count, const Predicate& pred, const CompactOptions& options,
             cudaStream_t stream);
template <class T>
void compact(DeviceAllocator& alloc, const T* d_in, std::uint64_t n, T* d_out,
             std::uint64_t* d_count, const Predicate& pred, const CompactOptions& options,
             cudaStream_t stream);

/// Keeps d_in[i] where d_flags[i] != 0.
template <class T>
void compact_flagged(void* d_temp, std::size_t& temp_bytes, const T* d_in, const std::uint8_t* d_flags,
                     std::uint64_t n, T* d_out, std::uint64_t* d_count, const CompactOptions& options,
                     cudaStream_t stream);

/// Writes the indices of the elements matching `pred` (ascending when options.order is stable).
template <class T, class Index>  // Index: std::uint32_t (n <= 2^32) or std::uint64_t
void compact_indices(void* d_temp, std::size_t& temp_bytes, const T* d_in, std::uint64_t n,
                     Index* d_out_indices, std::uint64_t* d_count, const Predicate& pred,
                     const CompactOptions& options, cudaStream_t stream);

}  // namespace winnow::cuda
