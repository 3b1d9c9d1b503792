#pragma once
/// @file image.hpp
/// Non-owning image views and owning images. Row-major, `stride` counted in elements.
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace winnow {

/// An 8-bit RGBA pixel (4 bytes).
struct Rgba8 {
  std::uint8_t r = 0, g = 0, b = 0, a = 0;
  friend bool operator==(const Rgba8&, const Rgba8&) = default;
};
/// A float RGBA pixel (16 bytes).
struct RgbaF32 {
  float r = 0, g = 0, b = 0, a = 0;
  friend bool operator==(const RgbaF32&, const RgbaF32&) = default;
};

template <class T>
struct ImageView {
  T* data = nullptr;
  std::int64_t width = 0, height = 0;
  std::int64_t stride = 0;  ///< elements between the starts of consecutive rows

  ImageView() = default;
  ImageView(T* d, std::int64_t w, std::int64_t h, std::int64_t s = -1)
      : data(d), width(w), height(h), stride(s < 0 ? w : s) {}
  template <class U>
  requires std::is_convertible_v<U*, T*> ImageView(const ImageView<U>& o)
      : data(o.data), width(o.width), height(o.height), stride(o.stride) {}

  T& operator()(std::int64_t x, std::int64_t y) const { return data[y * stride + x]; }
  T* row(std::int64_t y) const { return data + y * stride; }
  std::int64_t size() const { return width * height; }
  bool empty() const { return width <= 0 || height <= 0; }
  bool contiguous() const { return stride == width; }
};

/// Owning, contiguous image.
template <class T>
class Image {
 public:
  Image() = default;
  Image(std::int64_t w, std::int64_t h, T fill = T{})
      : width_(w), height_(h), pixels_(static_cast<std::size_t>(w * h), fill) {}

  std::int64_t width() const { return width_; }
  std::int64_t height() const { return height_; }
  std::int64_t size() const { return width_ * height_; }
  bool empty() const { return size() == 0; }
  T* data() { return pixels_.data(); }
  const T* data() const { return pixels_.data(); }
  T& operator()(std::int64_t x, std::int64_t y) { return pixels_[y * width_ + x]; }
  const T& operator()(std::int64_t x, std::int64_t y) const { return pixels_[y * width_ + x]; }
  std::span<T> pixels() { return pixels_; }
  std::span<const T> pixels() const { return pixels_; }
  ImageView<T> view() { return {pixels_.data(), width_, height_, width_}; }
  ImageView<const T> view() const { return {pixels_.data(), width_, height_, width_}; }

 private:
  std::int64_t width_ = 0, height_ = 0;
  std::vector<T> pixels_;
};

/// Rec. 601 luma 0.299 R + 0.587 G + 0.114 B of an 8-bit pixel, in thousandths (0..255000).
/// Integer arithmetic makes the value, and so every threshold test and sort, identical on all
/// backends (a float sum can differ by FMA contraction between compilers).
constexpr std::uint32_t luminance_milli(const Rgba8& p) { return 299u * p.r + 587u * p.g + 114u * p.b; }
/// Rec. 601 luma in 0..255.
constexpr double luminance(const Rgba8& p) { return luminance_milli(p) / 1000.0; }
/// A luminance threshold t (0..255) in thousandths, such that luminance(p) > t exactly when
/// luminance_milli(p) > luminance_threshold_milli(t): t rounded down to 1/1000, the 1e-9
/// absorbing the error of t * 1000 (4.044 * 1000 is 4043.9999...).
constexpr std::uint32_t luminance_threshold_milli(double t) { return static_cast<std::uint32_t>(t * 1000.0 + 1e-9); }

}  // namespace winnow
