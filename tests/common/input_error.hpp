#pragma once
// Checks the library's bad-input contract: an InputError whose one-line message names the file.
#include <gtest/gtest.h>

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

}  // namespace winnow::test
