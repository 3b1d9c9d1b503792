// libFuzzer target for one file reader, compiled once per reader: WINNOW_FUZZ_READER names it
// (fuzz/CMakeLists.txt). `image` and `volume` are the dispatching readers (io::read_rgbaf,
// io::read_volume: the format from the first bytes); the others force one format's decoder on
// every input (io::detail::read_rgbaf_as, read_volume_as), so each format's parser gets all the
// fuzzer's executions. Any input must end in an image, a volume or a winnow::Error (one line),
// never a crash, a leak, undefined behaviour or an allocation beyond the fuzzer's limit.
#include "fuzz_read.hpp"

#include <cstddef>
#include <cstdint>

#include "io/io_detail.hpp"
#include "io/volume_detail.hpp"
#include "winnow/error.hpp"
#include "winnow/io.hpp"
#include "winnow/volume_io.hpp"

namespace {

enum class Reader { image, png, jpeg, tiff, fits, volume, nifti, nrrd, npy, tiff_stack };
constexpr Reader kReader = Reader::WINNOW_FUZZ_READER;

void read(const std::string& path) {
  using winnow::io::detail::ImageFormat;
  using winnow::io::detail::VolumeFormat;
  namespace io = winnow::io;
  switch (kReader) {
    case Reader::image: (void)io::read_rgbaf(path); return;
    case Reader::png: (void)io::detail::read_rgbaf_as(path, ImageFormat::png); return;
    case Reader::jpeg: (void)io::detail::read_rgbaf_as(path, ImageFormat::jpeg); return;
    case Reader::tiff: (void)io::detail::read_rgbaf_as(path, ImageFormat::tiff); return;
    case Reader::fits: (void)io::detail::read_rgbaf_as(path, ImageFormat::fits); return;
    case Reader::volume: (void)io::read_volume(path); return;
    case Reader::nifti: (void)io::detail::read_volume_as(path, VolumeFormat::nifti); return;  // .nii.gz too
    case Reader::nrrd: (void)io::detail::read_volume_as(path, VolumeFormat::nrrd); return;
    case Reader::npy: (void)io::detail::read_volume_as(path, VolumeFormat::npy); return;
    case Reader::tiff_stack: (void)io::detail::read_volume_as(path, VolumeFormat::tiff_stack); return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  winnow::fuzz::MemoryFile file(data, size);
  if (!file.ok()) return 0;
  try {
    read(file.path());
  } catch (const winnow::Error&) {}
  return 0;
}
