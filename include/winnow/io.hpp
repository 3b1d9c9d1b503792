#pragma once
/// @file io.hpp
/// Image files: PNG, JPEG, TIFF (8/16-bit, grey/RGB/RGBA) and FITS (any BITPIX) in; PNG and TIFF out.
/// Every writer writes to a temporary name beside the target and renames it into place, so a
/// failed run leaves no half-written file. Errors are InputError with a one-line message that
/// names the file.
#include <cstdint>
#include <filesystem>
#include <string>

#include "winnow/image.hpp"

namespace winnow::io {

/// What was in the file before conversion.
struct ImageInfo {
  std::string format;  ///< "png", "jpeg", "tiff", "fits"
  int channels = 0;    ///< 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA
  int bits = 0;        ///< bits per sample in the file (8, 16, 32, -32, -64 for FITS floats)
};

/// Reads any supported image as 8-bit RGBA. Grey becomes R=G=B; missing alpha becomes 255;
/// 16-bit samples are rounded to 8 bits (v*255/65535). FITS data (after BSCALE/BZERO) is mapped
/// linearly from [min, max] of its finite values to [0, 255]; NaN pixels become 0.
/// The format is detected from the file's first bytes, not its name.
Image<Rgba8> read_rgba8(const std::filesystem::path& path, ImageInfo* info = nullptr);

/// Reads any supported image as float RGBA in the file's full precision, scaled to [0, 255]
/// (so 8- and 16-bit files share one range; alpha likewise).
Image<RgbaF32> read_rgbaf(const std::filesystem::path& path, ImageInfo* info = nullptr);

/// Writes 8-bit RGBA PNG.
void write_png(const std::filesystem::path& path, ImageView<const Rgba8> image);
/// Writes 8-bit grey PNG.
void write_png(const std::filesystem::path& path, ImageView<const std::uint8_t> image);
/// Writes a single-channel 32-bit unsigned TIFF (e.g. a label image).
void write_tiff(const std::filesystem::path& path, ImageView<const std::uint32_t> image);

/// Throws InputError naming `path` when its directory does not exist or is not writable.
/// Called before long work so a bad output path fails fast.
void check_writable(const std::filesystem::path& path);

/// A fresh temporary file in `target`'s directory (created empty and exclusively; its name is
/// short, whatever the target's length), listed for removal on a signal (below) until
/// `release_temporary`.
std::filesystem::path temporary_beside(const std::filesystem::path& target);
/// Takes `temp` off the list (it was renamed into place or removed).
void release_temporary(const std::filesystem::path& temp);
/// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the listed temporaries, then end
/// the process as the signal would have. A signal ignored at the time (nohup) stays ignored. For programs (the CLI),
/// not called by the library.
void remove_temporaries_on_signals();

/// Writes a file atomically: opens a temporary beside `path`, and `commit()` renames it onto
/// `path`. Destroying an uncommitted AtomicFile removes the temporary.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  /// The temporary path to write to.
  const std::filesystem::path& temp_path() const { return temp_; }
  /// Renames the temporary onto the target; throws InputError on failure.
  void commit();

 private:
  std::filesystem::path target_, temp_;
  bool committed_ = false;
};

/// Writes text atomically (CSV, JSON).
void write_text(const std::filesystem::path& path, const std::string& text);

}  // namespace winnow::io
