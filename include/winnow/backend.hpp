#pragma once
/// @file backend.hpp
/// Run-time backend choice. `cpu` is always there; `cuda` when compiled in and a device answers.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace winnow {

enum class Backend { automatic, cpu, cuda };

/// "auto", "cpu" or "cuda".
std::string_view to_string(Backend b);
/// Parses "auto"/"automatic", "cpu", "cuda" (or "gpu"); throws InputError on anything else.
Backend parse_backend(std::string_view name);

/// True when the CUDA backend was compiled in and at least one device answers.
bool cuda_available();
/// True when the CUDA backend was compiled into this build (whether or not a device answers).
bool cuda_compiled_in();

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::size_t total_memory_bytes = 0;
  int compute_major = 0, compute_minor = 0;
  int multiprocessors = 0;
};
/// The CUDA devices that answer (empty without CUDA).
std::vector<DeviceInfo> cuda_devices();

/// Turns a request into a concrete backend:
/// - `automatic`: the `WINNOW_BACKEND` environment variable if set, else `cuda` when available, else `cpu`;
/// - `cuda` when it is not available: throws BackendError (never a silent fallback).
Backend resolve_backend(Backend requested);

namespace detail {
/// The CPU backend's threads: OpenMP's (OMP_NUM_THREADS, or one per core).
int cpu_threads();
}  // namespace detail

}  // namespace winnow
