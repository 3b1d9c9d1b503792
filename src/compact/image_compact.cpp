// Image compaction, front end: argument checks, backend choice, dispatch (CPU path in
// cpu/image_compact.cpp, CUDA path in cuda/image_compact.cu), and the rendering of packed pixels.
#include "winnow/image_compact.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "compact/backends.hpp"
#include "winnow/error.hpp"

namespace winnow {
namespace {

std::string format_threshold(double t) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", t);
  return buf;
}

}  // namespace

ImageCompactResult compact_image(ImageView<const Rgba8> image, const ImageCompactOptions& options) {
  if (!(options.threshold >= 0.0 && options.threshold <= 255.0))
    throw InputError("threshold " + format_threshold(options.threshold) + " is outside 0..255");
  if (image.width < 0 || image.height < 0 || (!image.empty() && (image.data == nullptr || image.stride < image.width)))
    throw InputError("compact_image: invalid image view");
  const std::uint64_t pixels =
      image.empty() ? 0 : static_cast<std::uint64_t>(image.width) * static_cast<std::uint64_t>(image.height);
  if (pixels > 0xFFFFFFFFull)
    throw InputError("image of " + std::to_string(image.width) + "x" + std::to_string(image.height) +
                     " pixels is too large for image compaction (at most 2^32 - 1 pixels)");

  const Backend backend = resolve_backend(options.backend);
  ImageCompactResult result;
  result.backend = backend;
#ifdef WINNOW_HAVE_CUDA
  if (backend == Backend::cuda) {
    if (pixels == 0) return result;
    return detail::cuda::compact_image(image, options);
  }
#endif
  result.backend = Backend::cpu;
  if (pixels == 0) return result;
  return detail::cpu::compact_image(image, options);
}

Image<Rgba8> render_packed(ImageView<const Rgba8> image, const std::vector<std::uint32_t>& index) {
  const std::uint64_t pixels =
      image.empty() ? 0 : static_cast<std::uint64_t>(image.width) * static_cast<std::uint64_t>(image.height);
  if (index.size() > pixels)
    throw InputError("render_packed: " + std::to_string(index.size()) + " indices for an image of " +
                     std::to_string(pixels) + " pixels");
  if (!index.empty() && *std::max_element(index.begin(), index.end()) >= pixels)
    throw InputError("render_packed: pixel index out of range");
  Image<Rgba8> out(image.width, image.height, Rgba8{0, 0, 0, 0});
  const auto w = static_cast<std::uint32_t>(image.width);
  const auto m = static_cast<std::int64_t>(index.size());
  Rgba8* dst = out.data();
#pragma omp parallel for schedule(static) num_threads(detail::cpu_threads()) if (m > 65536)
  for (std::int64_t i = 0; i < m; ++i) {
    const std::uint32_t v = index[static_cast<std::size_t>(i)];
    dst[i] = image(v % w, v / w);
  }
  return out;
}

}  // namespace winnow
