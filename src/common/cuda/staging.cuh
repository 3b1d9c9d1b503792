#pragma once
// Host <-> device copies of pageable (ordinary) host memory through pinned staging buffers, for
// the host APIs (label, compact, compact_image), which take the caller's std::vector-like memory.
//
// Why: a cudaMemcpy from pageable memory is staged by the driver through its own small pinned
// buffers, one thread copying, at a fraction of the link's bandwidth. Here the copy goes through a
// process-wide ring of pinned buffers (four of 4 MiB, allocated once per device): the host threads
// (OpenMP) copy chunk k into one buffer while the DMA engine moves the chunks before it,
// so the host copy and the transfer overlap and both run near their peaks. Pinning the caller's
// memory instead (cudaHostRegister) costs more than the copy for a one-shot call.
#include <cuda_runtime.h>

#include <cstddef>

namespace winnow::detail::cuda {

/// Copies `rows` rows of `row_bytes` bytes from pageable host memory (`src`, rows `src_pitch` bytes
/// apart) to device memory (`dst`, `dst_pitch`) in stream order on `stream`. Returns when the host
/// memory may be reused (the last chunk has been copied into the staging buffer); the transfers
/// complete in stream order. Throws BackendError on a CUDA error.
void copy_to_device(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                    std::size_t rows, cudaStream_t stream);

/// Copies rows from device memory to pageable host memory; returns when every byte has arrived
/// (it waits for the stream's work before the copies, as a cudaMemcpy would).
void copy_to_host(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                  std::size_t rows, cudaStream_t stream);

}  // namespace winnow::detail::cuda
