// Pinned multi-buffered staging for host <-> device copies (see staging.cuh).
//
// Both directions cut the copy into segments no larger than a staging buffer: whole rows when a
// row fits (as many as fit), else pieces of one row. Host to device: wait until buffer k mod 4 is
// free (its last transfer's event), copy the segment into it with the host threads, enqueue the
// transfer and record the event. Device to host: keep the transfers of the next three segments
// enqueued while segment k is copied out of its buffer, so the two overlap the same way.
// Four buffers of 4 MiB rather than two of 16: what does not overlap is the first segment's host
// copy and the last one's transfer (host to device), or the first transfer and the last host
// copy (device to host): a quarter of the time it was with 16 MiB segments (about 0.3 ms per
// direction at 50 GB/s), while the transfers queued ahead absorb the host copy's jitter.
// One mutex per device serialises callers that share the buffers.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "common/cuda/check.cuh"
#include "common/cuda/staging.cuh"

namespace winnow::detail::cuda {
namespace {

constexpr std::size_t kChunk = std::size_t{4} << 20;
constexpr int kBuffers = 4;

struct Staging {
  std::mutex mutex;
  void* buffer[kBuffers] = {};
  cudaEvent_t free[kBuffers] = {};
};

// One set per device, allocated on first use and kept for the process (pinned memory is slow to
// allocate; 16 MiB per device).
Staging& staging_of_current_device() {
  static std::mutex table_mutex;
  static std::vector<Staging*> table;
  int device = 0;
  WINNOW_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(table_mutex);
  if (table.size() <= static_cast<std::size_t>(device)) table.resize(static_cast<std::size_t>(device) + 1, nullptr);
  if (!table[device]) {
    auto* s = new Staging;
    for (int b = 0; b < kBuffers; ++b) {
      WINNOW_CUDA_CHECK(cudaHostAlloc(&s->buffer[b], kChunk, cudaHostAllocDefault));
      WINNOW_CUDA_CHECK(cudaEventCreateWithFlags(&s->free[b], cudaEventDisableTiming));
    }
    table[device] = s;
  }
  return *table[device];
}

// Host copy of `rows` rows of `bytes` with the OpenMP threads: a contiguous block (both pitches
// equal to the row) is split evenly, separate rows are shared out whole; one thread below 1 MiB,
// where starting the others costs more than the copy.
void copy_rows(char* dst, std::size_t dst_pitch, const char* src, std::size_t src_pitch, std::size_t bytes,
               std::size_t rows) {
  const std::size_t total = bytes * rows;
  const int threads = total >= (std::size_t{1} << 20) ? std::min(omp_get_max_threads(), 8) : 1;
  if (rows == 1 || (dst_pitch == bytes && src_pitch == bytes)) {
    const std::size_t part = (total + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
      const std::size_t begin = std::min(total, static_cast<std::size_t>(t) * part),
                        end = std::min(total, begin + part);
      if (end > begin) std::memcpy(dst + begin, src + begin, end - begin);
    }
    return;
  }
  const auto n = static_cast<std::int64_t>(rows);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t r = 0; r < n; ++r)
    std::memcpy(dst + static_cast<std::size_t>(r) * dst_pitch, src + static_cast<std::size_t>(r) * src_pitch, bytes);
}

// A segment of the copy: `rows` whole rows starting at `row`, or (rows == 1) the bytes
// [offset, offset + bytes) of one row.
struct Segment {
  std::size_t row, rows, offset, bytes;
};

std::vector<Segment> segments(std::size_t row_bytes, std::size_t rows) {
  std::vector<Segment> out;
  if (row_bytes == 0 || rows == 0) return out;
  if (row_bytes <= kChunk) {
    const std::size_t per = kChunk / row_bytes;
    for (std::size_t r = 0; r < rows; r += per) out.push_back({r, std::min(per, rows - r), 0, row_bytes});
  } else {
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t o = 0; o < row_bytes; o += kChunk) out.push_back({r, 1, o, std::min(kChunk, row_bytes - o)});
  }
  return out;
}

}  // namespace

void copy_to_device(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                    std::size_t rows, cudaStream_t stream) {
  Staging& st = staging_of_current_device();
  std::lock_guard<std::mutex> lock(st.mutex);
  int b = 0;
  for (const Segment& g : segments(row_bytes, rows)) {
    WINNOW_CUDA_CHECK(cudaEventSynchronize(st.free[b]));  // its previous transfer has left the buffer
    char* buf = static_cast<char*>(st.buffer[b]);
    copy_rows(buf, g.bytes, static_cast<const char*>(src) + g.row * src_pitch + g.offset, src_pitch, g.bytes, g.rows);
    WINNOW_CUDA_CHECK(cudaMemcpy2DAsync(static_cast<char*>(dst) + g.row * dst_pitch + g.offset, dst_pitch, buf, g.bytes,
                                        g.bytes, g.rows, cudaMemcpyHostToDevice, stream));
    WINNOW_CUDA_CHECK(cudaEventRecord(st.free[b], stream));
    b = (b + 1) % kBuffers;
  }
}

void copy_to_host(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t row_bytes,
                  std::size_t rows, cudaStream_t stream) {
  Staging& st = staging_of_current_device();
  std::lock_guard<std::mutex> lock(st.mutex);
  const std::vector<Segment> seg = segments(row_bytes, rows);
  auto enqueue = [&](std::size_t k) {
    const Segment& g = seg[k];
    const int b = static_cast<int>(k % kBuffers);
    WINNOW_CUDA_CHECK(cudaMemcpy2DAsync(st.buffer[b], g.bytes,
                                        static_cast<const char*>(src) + g.row * src_pitch + g.offset, src_pitch,
                                        g.bytes, g.rows, cudaMemcpyDeviceToHost, stream));
    WINNOW_CUDA_CHECK(cudaEventRecord(st.free[b], stream));
  };
  const std::size_t ahead = kBuffers - 1;  // transfers queued beyond the segment being copied out
  for (std::size_t k = 0; k < std::min(ahead, seg.size()); ++k) enqueue(k);
  for (std::size_t k = 0; k < seg.size(); ++k) {
    // Buffer (k + ahead) mod kBuffers was last copied out at k - 1: the host is done with it.
    if (k + ahead < seg.size()) enqueue(k + ahead);
    const Segment& g = seg[k];
    const int b = static_cast<int>(k % kBuffers);
    WINNOW_CUDA_CHECK(cudaEventSynchronize(st.free[b]));
    const char* buf = static_cast<const char*>(st.buffer[b]);
    copy_rows(static_cast<char*>(dst) + g.row * dst_pitch + g.offset, dst_pitch, buf, g.bytes, g.bytes, g.rows);
  }
}

}  // namespace winnow::detail::cuda
