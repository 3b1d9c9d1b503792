// Run-time backend choice.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/gpu_guard.hpp"
#include "winnow/backend.hpp"
#include "winnow/error.hpp"

using namespace winnow;

namespace {
struct EnvGuard {
  explicit EnvGuard(const char* value) {
    if (const char* old = std::getenv("WINNOW_BACKEND")) saved = old, had = true;
    if (value) setenv("WINNOW_BACKEND", value, 1);
    else unsetenv("WINNOW_BACKEND");
  }
  ~EnvGuard() {
    if (had) setenv("WINNOW_BACKEND", saved.c_str(), 1);
    else unsetenv("WINNOW_BACKEND");
  }
  std::string saved;
  bool had = false;
};
}  // namespace

TEST(Backend, ParseAndPrint) {
  for (auto b : {Backend::automatic, Backend::cpu, Backend::cuda}) EXPECT_EQ(parse_backend(to_string(b)), b);
  EXPECT_THROW(parse_backend("opencl"), InputError);
}

TEST(Backend, ExplicitCpuIsAlwaysCpu) {
  EnvGuard env("cuda");
  EXPECT_EQ(resolve_backend(Backend::cpu), Backend::cpu);
}

TEST(Backend, EnvironmentDecidesAutomatic) {
  EnvGuard env("cpu");
  EXPECT_EQ(resolve_backend(Backend::automatic), Backend::cpu);
}

TEST(Backend, AutomaticPrefersCuda) {
  EnvGuard env(nullptr);
  EXPECT_EQ(resolve_backend(Backend::automatic), cuda_available() ? Backend::cuda : Backend::cpu);
}

TEST(Backend, CudaWithoutDeviceIsAnErrorNotAFallback) {
  if (cuda_available()) {
    EXPECT_EQ(resolve_backend(Backend::cuda), Backend::cuda);
    EXPECT_FALSE(cuda_devices().empty());
  } else {
    EXPECT_THROW(resolve_backend(Backend::cuda), BackendError);
    EnvGuard env("cuda");
    EXPECT_THROW(resolve_backend(Backend::automatic), BackendError);
  }
}

TEST(Backend, GpuDevicesAreListed) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  const auto devs = cuda_devices();
  ASSERT_FALSE(devs.empty());
  EXPECT_GE(devs[0].compute_major, 7);
  EXPECT_GT(devs[0].total_memory_bytes, 0u);
}
