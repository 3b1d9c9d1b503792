// libFuzzer target: volume reading (NIfTI, gzip-compressed too, NRRD, .npy, TIFF stacks; the
// format from the first bytes). Any input must end in a volume or a winnow::InputError.
#include <cstddef>
#include <cstdint>

#include "fuzz_read.hpp"
#include "winnow/error.hpp"
#include "winnow/volume_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  winnow::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  try {
    (void)winnow::io::read_volume(file.path());
  } catch (const winnow::Error&) {
  }
  return 0;
}
