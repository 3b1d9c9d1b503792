// libFuzzer target: image reading (PNG, JPEG, TIFF, FITS; the format from the first bytes). Any
// input must end in an image or a winnow::InputError, never a crash, a leak or undefined behaviour.
#include <cstddef>
#include <cstdint>

#include "fuzz_read.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  winnow::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  try {
    (void)winnow::io::read_rgbaf(file.path());
  } catch (const winnow::Error&) {
  }
  return 0;
}
