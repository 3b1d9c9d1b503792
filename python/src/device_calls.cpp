// The per-(device, stream) storage of the extension's CUDA functions (see device_calls.hpp).
#include "device_calls.hpp"

#if WINNOW_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "winnow/error.hpp"

namespace winnow::python {

namespace {
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw BackendError(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}
}  // namespace

/// Device storage that only grows. Used under the entry's mutex.
struct Scratch {
  void* data = nullptr;
  std::size_t bytes = 0;

  // Frees in stream order where a stream is given (growing), else after the device has
  // finished (release).
  void free(cudaStream_t stream) {
    if (data) check(stream ? cudaFreeAsync(data, stream) : cudaFree(data), "freeing temporary storage");
    data = nullptr;
    bytes = 0;
  }
  // Returns whether it grew (its contents are then undefined).
  bool grow(std::size_t wanted, cudaStream_t stream) {
    if (wanted <= bytes) return false;
    free(stream);
    wanted += wanted / 4;  // room to grow a little without another allocation
    check(cudaMallocAsync(&data, wanted, stream), "allocating temporary storage");
    bytes = wanted;
    return true;
  }
};

struct StreamEntry {
  std::mutex mutex;
  cuda::CompactWorkspace compaction;
  Scratch scratch;
  Scratch mesh;
  Scratch records;                      // labelings' statistics records
  MeshCountKey mesh_key{};              // what `mesh` holds the count of
  void* count = nullptr;                // 16 device bytes
  void* host_count = nullptr;           // 16 pinned host bytes
  cudaEvent_t done = nullptr;           // recorded after each use
  std::array<void*, 2> staging{};       // read_in_blocks' pinned blocks (allocated on first use)
  std::array<cudaEvent_t, 2> staged{};  // each block's copy done

  void release() {
    scratch.free(nullptr);
    mesh.free(nullptr);
    records.free(nullptr);
    mesh_key = {};
    compaction = cuda::CompactWorkspace();
    if (count) cudaFree(count);
    if (host_count) cudaFreeHost(host_count);
    if (done) cudaEventDestroy(done);
    for (int i = 0; i < 2; ++i) {
      if (staging[i]) cudaFreeHost(staging[i]);
      if (staged[i]) cudaEventDestroy(staged[i]);
      staging[i] = nullptr;
      staged[i] = nullptr;
    }
    count = host_count = nullptr;
    done = nullptr;
  }
};

namespace {
// Never destroyed: at process exit the CUDA runtime may be gone before static destructors run
// (release_device_calls frees the storage earlier).
std::mutex& table_mutex() {
  static auto* m = new std::mutex;
  return *m;
}
std::map<std::pair<int, std::uintptr_t>, StreamEntry*>& table() {
  static auto* t = new std::map<std::pair<int, std::uintptr_t>, StreamEntry*>;
  return *t;
}
StreamEntry& entry_of(int device, std::uintptr_t stream) {
  std::lock_guard<std::mutex> lock(table_mutex());
  StreamEntry*& e = table()[{device, stream}];
  if (!e) e = new StreamEntry;
  return *e;
}
}  // namespace

DeviceCall::DeviceCall(int device, std::uintptr_t stream)
    : entry_(entry_of(device, stream)), stream_(reinterpret_cast<cudaStream_t>(stream)), device_(device) {
  check(cudaGetDevice(&previous_device_), "cudaGetDevice");
  if (previous_device_ != device) check(cudaSetDevice(device), "cudaSetDevice");
  entry_.mutex.lock();
  try {
    if (!entry_.done) {
      check(cudaEventCreateWithFlags(&entry_.done, cudaEventDisableTiming), "cudaEventCreate");
      check(cudaMalloc(&entry_.count, 16), "cudaMalloc");
      check(cudaHostAlloc(&entry_.host_count, 16, cudaHostAllocDefault), "cudaHostAlloc");
    } else {
      check(cudaStreamWaitEvent(stream_, entry_.done, 0), "cudaStreamWaitEvent");
    }
  } catch (...) {
    entry_.mutex.unlock();
    if (previous_device_ != device_) cudaSetDevice(previous_device_);
    throw;
  }
}

DeviceCall::~DeviceCall() {
  if (entry_.done) cudaEventRecord(entry_.done, stream_);
  entry_.mutex.unlock();
  if (previous_device_ != device_) cudaSetDevice(previous_device_);
}

cuda::CompactWorkspace& DeviceCall::compaction() { return entry_.compaction; }

void* DeviceCall::scratch(std::size_t bytes) {
  entry_.scratch.grow(bytes, stream_);
  return entry_.scratch.data;
}

void* DeviceCall::mesh_scratch(std::size_t bytes) {
  if (entry_.mesh.grow(bytes, stream_)) entry_.mesh_key = {};
  return entry_.mesh.data;
}

MeshCountKey& DeviceCall::mesh_count_key() { return entry_.mesh_key; }

void* DeviceCall::records(std::size_t bytes) {
  entry_.records.grow(bytes, stream_);
  return entry_.records.data;
}

std::size_t DeviceCall::records_bytes() const { return entry_.records.bytes; }

namespace {
constexpr std::size_t kStagingBytes = std::size_t{16} << 20;  // per block: a few ms of copy each
}  // namespace

void DeviceCall::read_in_blocks(const void* device, std::size_t bytes, std::size_t unit,
                                const std::function<void(const void*, std::size_t, std::size_t)>& consume) {
  if (bytes == 0) return;
  if (!entry_.staging[0]) {
    for (int i = 0; i < 2; ++i) {
      check(cudaHostAlloc(&entry_.staging[i], kStagingBytes, cudaHostAllocDefault), "cudaHostAlloc");
      check(cudaEventCreateWithFlags(&entry_.staged[i], cudaEventDisableTiming), "cudaEventCreate");
    }
  }
  const std::size_t block = kStagingBytes / unit * unit;
  const auto* source = static_cast<const std::uint8_t*>(device);
  auto copy = [&](int slot, std::size_t offset) {
    const std::size_t length = std::min(block, bytes - offset);
    check(cudaMemcpyAsync(entry_.staging[slot], source + offset, length, cudaMemcpyDeviceToHost, stream_),
          "reading the statistics");
    check(cudaEventRecord(entry_.staged[slot], stream_), "cudaEventRecord");
  };
  copy(0, 0);
  int slot = 0;
  for (std::size_t offset = 0; offset < bytes; offset += block, slot ^= 1) {
    if (offset + block < bytes) copy(slot ^ 1, offset + block);  // its block was consumed last round
    check(cudaEventSynchronize(entry_.staged[slot]), "cudaEventSynchronize");
    consume(entry_.staging[slot], offset, std::min(block, bytes - offset));
  }
}

void DeviceCall::copy_to_host(void* host, const void* device, std::size_t bytes) {
  if (bytes) check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_), "reading the statistics");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void* DeviceCall::count() { return entry_.count; }

std::optional<std::uint64_t> DeviceCall::read_count(bool wanted, std::size_t bytes) {
  if (!wanted) return std::nullopt;
  check(cudaMemcpyAsync(entry_.host_count, entry_.count, bytes, cudaMemcpyDeviceToHost, stream_), "reading the count");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  if (bytes == 4) return *static_cast<const std::uint32_t*>(entry_.host_count);
  return *static_cast<const std::uint64_t*>(entry_.host_count);
}

std::array<std::uint64_t, 2> DeviceCall::read_totals() {
  check(cudaMemcpyAsync(entry_.host_count, entry_.count, 16, cudaMemcpyDeviceToHost, stream_), "reading the totals");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  const auto* totals = static_cast<const std::uint64_t*>(entry_.host_count);
  return {totals[0], totals[1]};
}

void release_device_calls() {
  std::lock_guard<std::mutex> lock(table_mutex());
  for (auto& [key, entry] : table()) {
    std::lock_guard<std::mutex> entry_lock(entry->mutex);
    int previous = 0;
    if (cudaGetDevice(&previous) != cudaSuccess) continue;
    cudaSetDevice(key.first);
    entry->release();
    cudaSetDevice(previous);
  }
}

}  // namespace winnow::python

#else

namespace winnow::python {
void release_device_calls() {}
}  // namespace winnow::python

#endif
