#pragma once
/// @file volume.hpp
/// Non-owning 3D volume views and owning volumes: x varies fastest in memory, then y, then z.
/// Strides are counted in elements; voxel spacing (the physical size of a voxel along x, y and
/// z, in the file's units, usually mm) travels with the volume. 64-bit sizes throughout.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace winnow {

/// A view of nx x ny x nz voxels at `data`: voxel (x, y, z) is data[z * slice_stride + y * row_stride + x].
template <class T>
struct VolumeView {
  T* data = nullptr;
  std::int64_t nx = 0, ny = 0, nz = 0;
  std::int64_t row_stride = 0;    ///< elements between the starts of consecutive rows (y)
  std::int64_t slice_stride = 0;  ///< elements between the starts of consecutive slices (z)
  double sx = 1, sy = 1, sz = 1;  ///< voxel spacing along x, y, z

  VolumeView() = default;
  /// Strides default to the contiguous ones (nx, nx * ny).
  VolumeView(T* d, std::int64_t x, std::int64_t y, std::int64_t z, std::int64_t rs = -1, std::int64_t ss = -1)
      : data(d), nx(x), ny(y), nz(z), row_stride(rs < 0 ? x : rs), slice_stride(ss < 0 ? row_stride * y : ss) {}
  template <class U>
  requires std::is_convertible_v<U*, T*> VolumeView(const VolumeView<U>& o)
      : data(o.data),
        nx(o.nx),
        ny(o.ny),
        nz(o.nz),
        row_stride(o.row_stride),
        slice_stride(o.slice_stride),
        sx(o.sx),
        sy(o.sy),
        sz(o.sz) {}

  /// Voxel (x, y, z); no bounds check.
  T& operator()(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return data[z * slice_stride + y * row_stride + x];
  }
  /// Row y of slice z (nx voxels).
  T* row(std::int64_t y, std::int64_t z) const { return data + z * slice_stride + y * row_stride; }
  /// Number of voxels.
  std::int64_t size() const { return nx * ny * nz; }
  /// True when any dimension is zero (or negative).
  bool empty() const { return nx <= 0 || ny <= 0 || nz <= 0; }
  /// True when the voxels lie back to back (no padding between rows or slices).
  bool contiguous() const { return row_stride == nx && slice_stride == nx * ny; }
};

/// Tag of the Volume constructor whose voxels are zero by calloc: memory fresh from the system
/// (large volumes) is zero already, so no pass writes the zeros, and a writer that then leaves the
/// zero voxels alone writes only the others (a label volume: the foreground).
struct ZeroPages {};
inline constexpr ZeroPages zero_pages{};

namespace detail {
/// The allocator of Volume's storage: malloc, or calloc for a ZeroPages volume (any instance frees
/// any other's memory), and elements constructed without a value default-initialised (their
/// storage left as allocated) rather than value-initialised.
template <class T>
struct VolumeAllocator {
  using value_type = T;
  using propagate_on_container_move_assignment = std::true_type;
  using is_always_equal = std::true_type;
  bool zeroed = false;
  VolumeAllocator() = default;
  explicit VolumeAllocator(bool z) noexcept : zeroed(z) {}
  template <class U>
  VolumeAllocator(const VolumeAllocator<U>& o) noexcept : zeroed(o.zeroed) {}
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    void* p = zeroed ? std::calloc(n, sizeof(T)) : std::malloc(std::max<std::size_t>(n, 1) * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) noexcept { std::free(p); }
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const VolumeAllocator<U>&) const noexcept {
    return true;
  }
};
}  // namespace detail

/// Owning, contiguous volume with its voxel spacing (1 unless set).
template <class T>
class Volume {
 public:
  Volume() = default;
  /// nx x ny x nz voxels set to `fill`, spacing 1.
  Volume(std::int64_t nx, std::int64_t ny, std::int64_t nz, T fill = T{})
      : nx_(nx), ny_(ny), nz_(nz), voxels_(static_cast<std::size_t>(nx * ny * nz), fill) {}
  /// nx x ny x nz voxels zero by calloc (`winnow::zero_pages`), spacing 1.
  Volume(std::int64_t nx, std::int64_t ny, std::int64_t nz, ZeroPages)
      : nx_(nx), ny_(ny), nz_(nz), voxels_(static_cast<std::size_t>(nx * ny * nz), detail::VolumeAllocator<T>(true)) {}

  std::int64_t nx() const { return nx_; }
  std::int64_t ny() const { return ny_; }
  std::int64_t nz() const { return nz_; }
  double sx() const { return sx_; }
  double sy() const { return sy_; }
  double sz() const { return sz_; }
  /// Sets the voxel spacing along x, y and z.
  void set_spacing(double sx, double sy, double sz) { sx_ = sx, sy_ = sy, sz_ = sz; }
  std::int64_t size() const { return nx_ * ny_ * nz_; }
  bool empty() const { return size() == 0; }
  bool contiguous() const { return true; }
  T* data() { return voxels_.data(); }
  const T* data() const { return voxels_.data(); }
  /// Voxel (x, y, z); no bounds check.
  T& operator()(std::int64_t x, std::int64_t y, std::int64_t z) { return voxels_[index(x, y, z)]; }
  const T& operator()(std::int64_t x, std::int64_t y, std::int64_t z) const { return voxels_[index(x, y, z)]; }
  std::span<T> voxels() { return voxels_; }
  std::span<const T> voxels() const { return voxels_; }
  /// A view of the whole volume, spacing included.
  VolumeView<T> view() { return with_spacing(VolumeView<T>(voxels_.data(), nx_, ny_, nz_)); }
  VolumeView<const T> view() const { return with_spacing(VolumeView<const T>(voxels_.data(), nx_, ny_, nz_)); }

 private:
  std::size_t index(std::int64_t x, std::int64_t y, std::int64_t z) const {
    return static_cast<std::size_t>((z * ny_ + y) * nx_ + x);
  }
  template <class V>
  V with_spacing(V v) const {
    v.sx = sx_, v.sy = sy_, v.sz = sz_;
    return v;
  }
  std::int64_t nx_ = 0, ny_ = 0, nz_ = 0;
  double sx_ = 1, sy_ = 1, sz_ = 1;
  std::vector<T, detail::VolumeAllocator<T>> voxels_;
};

}  // namespace winnow
