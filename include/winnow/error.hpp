#pragma once
/// @file error.hpp
/// Errors thrown by winnow. Every message is one line that names the file or argument at fault.
#include <stdexcept>
#include <string>

namespace winnow {

/// Base class of everything winnow throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input from the user: unreadable or corrupt file, unsupported format, out-of-range argument.
/// The CLI maps it to exit status 2.
class InputError : public Error {
 public:
  using Error::Error;
};

/// A backend was asked for that is not compiled in or has no device, or a device call failed.
class BackendError : public Error {
 public:
  using Error::Error;
};

}  // namespace winnow
