#pragma once
// Checks the library's bad-input contract: an InputError whose one-line message names the file;
// and, for files whose header claims more than they hold, that the claim is refused before it is
// allocated.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "winnow/error.hpp"

namespace winnow::test {

/// Expects f() to throw InputError whose message is one line, names `path` and contains `fragment`.
template <class F>
void expect_input_error(F&& f, const std::filesystem::path& path, const std::string& fragment) {
  try {
    f();
    ADD_FAILURE() << "no error for " << path << " (expected one containing '" << fragment << "')";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(fragment), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
}

/// Expects f() to throw InputError containing `fragment` in a child process whose address space
/// is limited to 1 GiB: a reader that sized its buffers from a damaged header's claim would fail
/// there with another message (out of memory) or be killed. Skipped under sanitizers, whose shadow
/// memory needs more address space than that. The child runs the test body again up to here
/// (gtest's threadsafe death-test style) and exits without unwinding: a temporary directory the
/// body made is named in `child_temp_dir` for the child to remove.
template <class F>
void expect_input_error_within_1GiB(F&& f, const std::string& fragment,
                                    const std::filesystem::path& child_temp_dir = {}) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not work under sanitizers";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  GTEST_SKIP() << "an address-space limit does not work under sanitizers";
#endif
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto read_in_1GiB = [&] {
    auto exit_with = [&](int status) {
      std::error_code ec;
      if (!child_temp_dir.empty()) std::filesystem::remove_all(child_temp_dir, ec);
      std::exit(status);
    };
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = rlim_t{1} << 30;
    if (setrlimit(RLIMIT_AS, &limit) != 0) exit_with(3);
    try {
      f();
    } catch (const InputError& e) {
      exit_with(std::string(e.what()).find(fragment) != std::string::npos ? 0 : 1);
    }
    exit_with(2);
  };
  EXPECT_EXIT(read_in_1GiB(), ::testing::ExitedWithCode(0), "") << "expected an InputError with '" << fragment << "'";
}

}  // namespace winnow::test
