#pragma once
// The storage behind winnow::cuda::CompactWorkspace (defined in compact.cu).
//
// Why: the single_pass kernels need zeroed words (look-back status words, or the unordered
// output counter), and the CUB-style forms clear them before every launch. At launch-bound
// sizes that reset costs about as much as the compaction itself adds to a bare launch
// (bench/probes/launch_overhead_probe.cu: 2^21 int32 on an H200, 9.2 us kernel alone, 11.3 us
// after a memset). A workspace keeps two copies of those words: a call uses the one that is
// zero and its kernel zeroes the other while it runs (nothing reads it in this call), so the
// next call in the same stream finds its words ready. The host side tracks what is known zero.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace winnow::detail::cuda {

struct WorkspaceState {
  int device = -1;
  void* base = nullptr;
  std::size_t bytes = 0;
  std::uint64_t status_capacity = 0;      // words in each of the two status arrays
  std::size_t general_bytes = 0;          // temporaries of the other paths (reset before each use)
  std::uint64_t zero_prefix[2] = {0, 0};  // status array k: words [0, zero_prefix[k]) are zero
  bool counter_zero[2] = {false, false};  // counter k is zero
  int next_status = 0, next_counter = 0;  // the array / counter the next call takes

  ~WorkspaceState();

  std::uint64_t* status(int k) const {
    return reinterpret_cast<std::uint64_t*>(static_cast<char*>(base) + 256) + k * status_capacity;
  }
  unsigned long long* counter(int k) const { return static_cast<unsigned long long*>(base) + k; }
  void* general() const { return static_cast<char*>(base) + general_offset(status_capacity); }
  static std::size_t general_offset(std::uint64_t capacity) {
    return 256 + ((2 * capacity * sizeof(std::uint64_t) + 255) & ~std::size_t{255});
  }

  /// Room for `words` status words per array and `general` bytes of other temporaries on the
  /// current device; a larger allocation starts zeroed (in `stream`).
  void reserve(std::uint64_t words, std::size_t general, cudaStream_t stream);
};

}  // namespace winnow::detail::cuda
