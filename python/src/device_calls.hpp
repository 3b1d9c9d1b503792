#pragma once
// What the extension's CUDA functions keep between calls, per (device, stream): compaction's
// reusable workspace, the labelings' temporary storage and their per-component statistics
// records, the count in device memory and a pinned host word to read it back. A call of the Python layer on device
// arrays then costs one extension call and no allocation of temporary storage (allocations through CuPy or PyTorch and
// a sizing call cost more than the small kernels themselves).
//
// Marching cubes counts in one call and extracts in the next (the Python layer allocates the
// mesh in between, once the totals are on the host): its storage is apart from the others', so
// a compaction or labeling in between leaves the count in place, and remembers what it counted
// (a key of the volume and options), so the extraction counts again only when another count
// took the storage since.
//
// DeviceCall, constructed with the GIL released, makes the array's device current (and
// restores the previous one), locks the (device, stream) entry for the call (its storage serves
// one call at a time), and orders the call after the entry's previous use (an event: a new
// stream may get the handle of a destroyed one whose work is still running). Storage only
// grows; growing frees the old storage in stream order. release_device_calls() frees every
// entry (the Python layer calls it at exit, while the CUDA runtime is still up).
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#if WINNOW_HAVE_CUDA
#include "winnow/cuda/compact.hpp"
#endif

struct CUstream_st;
using cudaStream_t = CUstream_st*;

namespace winnow::python {

/// What a marching-cubes count was of (volume pointer, shape, strides, element type, level,
/// options), compared bit for bit.
using MeshCountKey = std::array<std::uint64_t, 11>;

#if WINNOW_HAVE_CUDA
struct StreamEntry;

class DeviceCall {
 public:
  DeviceCall(int device, std::uintptr_t stream);
  ~DeviceCall();
  DeviceCall(const DeviceCall&) = delete;
  DeviceCall& operator=(const DeviceCall&) = delete;

  [[nodiscard]] cudaStream_t stream() const { return stream_; }
  /// Compaction's workspace on this stream (grows as needed; skips the per-call reset).
  cuda::CompactWorkspace& compaction();
  /// At least `bytes` of temporary storage (CUB style: contents undefined).
  void* scratch(std::size_t bytes);
  /// Marching cubes' temporary storage (at least `bytes`, apart from scratch()) and the key of
  /// the count it holds (all zero: none; growing clears it).
  void* mesh_scratch(std::size_t bytes);
  MeshCountKey& mesh_count_key();
  /// Storage for a labeling's per-component statistics records, apart from scratch() (at least
  /// `bytes`; grows only, contents undefined) and its size in bytes.
  void* records(std::size_t bytes);
  [[nodiscard]] std::size_t records_bytes() const;
  /// Copies `bytes` from device memory to (pageable) host memory after the call's work, waiting
  /// for the stream.
  void copy_to_host(void* host, const void* device, std::size_t bytes);
  /// Reads `bytes` of device memory after the call's work through the entry's two pinned blocks:
  /// consume(host, offset, bytes) reads one block (a multiple of `unit` bytes, at `offset` in the
  /// device range) while the next one copies. For large results that the host converts anyway:
  /// pinned copies run at the link's speed, and the conversion overlaps them.
  void read_in_blocks(const void* device, std::size_t bytes, std::size_t unit,
                      const std::function<void(const void*, std::size_t, std::size_t)>& consume);
  /// Sixteen device bytes for the count (or the two totals) the call writes.
  void* count();
  /// The count (`bytes` wide: 4 or 8) copied to the host after the call's work, waiting for the
  /// stream; nothing (no wait) when `wanted` is false.
  std::optional<std::uint64_t> read_count(bool wanted, std::size_t bytes);
  /// The two 64-bit totals at count(), likewise (one copy, one wait).
  std::array<std::uint64_t, 2> read_totals();

 private:
  StreamEntry& entry_;
  cudaStream_t stream_;
  int previous_device_;
  int device_;
};
#endif

/// Frees the storage of every (device, stream) entry; later calls allocate again.
void release_device_calls();

}  // namespace winnow::python
