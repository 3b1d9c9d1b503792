#pragma once
/// @file cuda/histopyramid.hpp
/// Device API of stream expansion (winnow/histopyramid.hpp says what it computes) for CUDA users:
/// device pointers, a stream, the total written to device memory, no host synchronisation. Needs
/// no CUDA header (cudaStream_t is declared here exactly as the CUDA runtime declares it).
///
/// Temporary storage, CUB style: call once with d_temp == nullptr to get `temp_bytes` (nothing is
/// launched), allocate, call again with the same n. The storage grows with n/8192 (about 12 bytes
/// per 8192 counts).
///
/// d_counts: n counts (0..255; any alignment, 16-byte aligned is fastest). The call writes
/// d_element[k] and, when d_rank is not null, d_rank[k] for k < min(total, capacity), and the
/// total (not capped) to *d_total. When h_total is not null it must be host memory that the
/// device can write (cudaHostAlloc with cudaHostAllocMapped, or any pointer valid on the device):
/// the total is stored there too by the time the stream reaches the end of the call, so a caller
/// that sizes its outputs can wait on an event and read it without a copy. Works for n > 2^32
/// (32-bit elements: n <= 2^32, else InputError).
#include <cstddef>
#include <cstdint>

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::cuda {

void histopyramid_expand(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_counts, std::uint64_t n,
                         std::uint64_t* d_element, std::uint8_t* d_rank, std::uint64_t* d_total, std::uint64_t capacity,
                         cudaStream_t stream, std::uint64_t* h_total = nullptr);
void histopyramid_expand(void* d_temp, std::size_t& temp_bytes, const std::uint8_t* d_counts, std::uint64_t n,
                         std::uint32_t* d_element, std::uint8_t* d_rank, std::uint64_t* d_total, std::uint64_t capacity,
                         cudaStream_t stream, std::uint64_t* h_total = nullptr);

}  // namespace winnow::cuda
