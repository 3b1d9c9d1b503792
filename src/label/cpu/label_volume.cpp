// Run-based CPU labeling of volumes, 6/18/26-connectivity, binary or multi-label, in parallel
// slabs of rows (detail::cpu::label_volume).
//
// Algorithm: the row-runs method of label_runs.cpp (He, Chao, Suzuki 2008, "A run-based two-scan
// labeling algorithm", with a flat union-find) extended to 3D.
//   Rows are numbered r = z * ny + y (raster order), and a run is a maximal segment of a row whose
//   voxels are foreground (binary: non-zero) or, for multi-label input, hold one same non-zero
//   value. Run indices follow raster order, so the smallest index of a component is the run that
//   holds its first voxel; union-find always links the larger root under the smaller one, which
//   keeps that run the root.
//   A run of row (y, z) can touch runs of four earlier rows; which of them, and whether runs that
//   only meet diagonally in x count, depends on the connectivity (w = 1: the intervals are widened
//   by one voxel, so runs that touch at an edge or corner in x join):
//       row            6-connectivity   18-connectivity   26-connectivity
//       (y-1, z)       overlap          w = 1             w = 1
//       (y,   z-1)     overlap          w = 1             w = 1
//       (y-1, z-1)     -                overlap           w = 1
//       (y+1, z-1)     -                overlap           w = 1
//   (A run is an interval of x, so "overlap" is a shared x: a face; w = 1 adds x +- 1: an edge in
//   the first two rows, a corner in the last two.) With nz = 1 only the first row exists, so 6 is
//   4-connectivity and 18 = 26 is 8-connectivity. Multi-label input unites only runs of equal value.
//   1. Slabs: the rows are cut into ranges of consecutive rows (several per thread, dynamic
//      schedule, so a descheduled thread on a busy machine leaves its later slabs to the others).
//      Each slab finds its rows' runs (for 8-bit binary input 64 voxels at a time from SSE2 bit
//      rows, row_runs.hpp; otherwise from bit rows built by a scalar loop) and unites each run with
//      the touching runs of the earlier rows of the same slab, run by run with the run's root
//      carried along, with path halving, in a slab-local parent array. The touching runs of a
//      row are found by rank: each of the last ny + 1 rows keeps its run starts and ends as bit
//      rows with per-word prefix counts, so the first and last touching run are two popcounts
//      (no loop whose exits mispredict on dense volumes: 10-20 % of the scan at density 0.5-0.9);
//      slices too wide for that ring (16 MiB per slab) take a two-pointer scan instead. Binary
//      runs start in the set of their first touching run, and an earlier row whose touching runs
//      (at most 4) all have that root as parent is passed by one SIMD compare: on dense volumes
//      nearly every run meets only runs of its own set, and the union loop then never runs.
//      The scan is compiled twice, for the x86-64 baseline and for the POPCNT instruction, and
//      picked at run time. A slab's run arrays are allocated once for all the runs it can hold
//      (pages are touched only as runs are written).
//   2. The slab arrays are concatenated into one parent array (prefix sum of the runs per slab).
//   3. Seams: every row pair that crosses a slab boundary (the first ny + 1 rows of a slab with the
//      rows before it) is united sequentially, without path compression, so every non-root still
//      points into its own slab; the roots the seams re-parent are recorded.
//   4. Numbering, in parallel: each slab ranks its remaining roots in index order; a prefix sum
//      over slabs gives each slab its first label; the recorded roots get their component's label.
//      Labels are then 1..N in raster order of each component's first voxel.
//   5. Each slab resolves its runs' labels in index order (a run's parent is a smaller index of
//      the same slab, already resolved, or it carries its label), writes its label rows once, and
//      accumulates the statistics per run (count, coordinate sums in closed form, bounding box).
//      A slab's own labels go straight to the output records; labels first seen in earlier slabs
//      go to a side array (calloc's zero pages: only touched pages cost) merged at the end.
//
// Complexity: O(voxels) to find the runs (the input is read once), O(runs * alpha) union-find, O(ny *
// slabs * runs per row) for the seams, O(runs) numbering, O(voxels) to write the labels. Memory:
// per run two 32-bit bounds, its parent (32-bit indices when the volume's rows can hold fewer than
// 2^31 runs, else 64-bit) and, for multi-label input, its value; no provisional label volume.
#include <omp.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "common/threads.hpp"
#include "label/backends.hpp"
#include "label/cpu/row_runs.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cpu {

double volume_narrow_run_index_limit = 2147483648.0;  // 2^31: the flag bit leaves 31 bits

namespace {

// Slabs per thread: more than one, so a descheduled thread leaves its later slabs to the others.
constexpr int kSlabsPerThread = 8;
// A slab's run arrays start with room for this many runs at most (or for all it can hold).
constexpr std::int64_t kReservedRunsPerSlab = std::int64_t{1} << 24;
// Below this many voxels one thread does it all (thread start-up costs more than it saves).
constexpr std::int64_t kParallelVoxels = std::int64_t{1} << 18;

/// An uninitialised growable array of trivial values (std::vector would zero what is overwritten).
template <class U>
class Buffer {
 public:
  /// Makes room for `more` values past size() and returns where they go.
  U* extend(std::size_t more) {
    if (size_ + more > cap_) reserve(std::max(size_ + more, cap_ * 2 + 1024));
    return data_.get() + size_;
  }
  /// Room for n values in all, allocated but not touched (pages cost only once written).
  void reserve(std::size_t n) {
    if (n <= cap_) return;
    std::unique_ptr<U[]> grown(new U[n]);
    if (size_) std::memcpy(grown.get(), data_.get(), size_ * sizeof(U));
    data_ = std::move(grown);
    cap_ = n;
  }
  void grow_by(std::size_t n) { size_ += n; }
  U* data() { return data_.get(); }
  const U* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  void release() {
    data_.reset();
    size_ = cap_ = 0;
  }

 private:
  std::unique_ptr<U[]> data_;
  std::size_t size_ = 0, cap_ = 0;
};

/// The runs [st[i], en[i]) of one row, left to right; returns their number. Binary: runs of
/// non-zero voxels; multi-label: runs of one non-zero value (two different values side by side
/// are two runs). Room for (nx + 1) / 2 runs (binary) or nx runs (multi-label) is needed.
template <class T, bool Multi>
inline std::uint32_t volume_row_runs(const T* m, std::int64_t nx, std::uint32_t* st, std::uint32_t* en) {
  if constexpr (!Multi && sizeof(T) == 1) {
    return row_runs(reinterpret_cast<const std::uint8_t*>(m), nx, st, en);
  } else {
    std::uint32_t ns = 0, ne = 0;
    std::uint64_t carry = 0;  // bit 0: the previous chunk's last voxel is foreground
    T previous{};
    for (std::int64_t x0 = 0; x0 < nx; x0 += 64) {
      const int n = static_cast<int>(std::min<std::int64_t>(64, nx - x0));
      const T* c = m + x0;
      std::uint64_t nz = 0, diff = 0;  // bit i: voxel is non-zero / differs from the one before
      for (int i = 0; i < n; ++i) nz |= static_cast<std::uint64_t>(c[i] != T{}) << i;
      if constexpr (Multi) {
        diff = static_cast<std::uint64_t>(c[0] != previous);
        for (int i = 1; i < n; ++i) diff |= static_cast<std::uint64_t>(c[i] != c[i - 1]) << i;
        previous = c[n - 1];
      }
      const std::uint64_t prev_nz = (nz << 1) | carry;
      std::uint64_t starts, ends;
      if constexpr (Multi) {
        starts = nz & diff;
        ends = prev_nz & diff;  // bits past n are 0: a run still open at nx is closed below
        if (n < 64) ends |= prev_nz & (std::uint64_t{1} << n);
      } else {
        starts = nz & ~prev_nz;
        ends = ~nz & prev_nz;
      }
      carry = nz >> 63;
      const auto base = static_cast<std::uint32_t>(x0);
      ns = append_bit_positions(starts, base, st, ns);
      ne = append_bit_positions(ends, base, en, ne);
    }
    if (ne < ns) en[ne] = static_cast<std::uint32_t>(nx);
    return ns;
  }
}

/// One row's runs as the union step sees them: bounds, values (multi-label) and the index of the
/// first run in the parent array.
template <class T, class Idx>
struct RowRuns {
  const std::uint32_t* st;
  const std::uint32_t* en;
  const T* value;  // multi-label only
  std::uint32_t n;
  Idx first;
};

/// A row's run bounds as bit rows with per-word prefix counts, so that "how many runs start
/// before x" and "how many end at or before x" are a load and a popcount each: the range of runs
/// that touch an interval is found without a data-dependent loop (whose exits mispredict on
/// dense volumes). Bit x of `starts` is set when a run starts at x, of `ends` when one ends
/// (exclusively) at x, so x runs up to nx.
struct RunBits {
  const std::uint64_t* starts;
  const std::uint64_t* ends;
  const std::uint32_t* starts_before;  // runs starting before word w
  const std::uint32_t* ends_before;
  /// Bits set before position x.
  [[gnu::always_inline]] static std::uint32_t rank(const std::uint64_t* bits, const std::uint32_t* before, std::uint32_t x) {
    return before[x >> 6] + static_cast<std::uint32_t>(__builtin_popcountll(bits[x >> 6] & ((std::uint64_t{1} << (x & 63)) - 1)));
  }
};

/// The bit rows of the last rows of a slab, a ring of ny + 2 rows (a row and the ny + 1 before
/// it, back to (y-1, z-1)).
class RunBitsRing {
 public:
  RunBitsRing(std::int64_t nx, std::int64_t ny)
      : words_(static_cast<std::size_t>(((nx + 1) >> 6) + 1)), rows_(static_cast<std::size_t>(ny + 2)),
        bits_(rows_ * words_ * 2), counts_(rows_ * words_ * 2) {}
  /// Bytes a ring of this shape takes.
  static double bytes(std::int64_t nx, std::int64_t ny) {
    return static_cast<double>(((nx + 1) >> 6) + 1) * static_cast<double>(ny + 2) * 24.0;
  }
  /// Records row r's runs.
  [[gnu::always_inline]] void set(std::int64_t r, const std::uint32_t* st, const std::uint32_t* en, std::uint32_t n) {
    std::uint64_t* s = bits_.data() + slot(r) * words_ * 2;
    std::uint64_t* e = s + words_;
    std::fill(s, s + words_ * 2, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      s[st[i] >> 6] |= std::uint64_t{1} << (st[i] & 63);
      e[en[i] >> 6] |= std::uint64_t{1} << (en[i] & 63);
    }
    std::uint32_t* sc = counts_.data() + slot(r) * words_ * 2;
    std::uint32_t* ec = sc + words_;
    std::uint32_t cs = 0, ce = 0;
    for (std::size_t w = 0; w < words_; ++w) {
      sc[w] = cs, ec[w] = ce;
      cs += static_cast<std::uint32_t>(__builtin_popcountll(s[w]));
      ce += static_cast<std::uint32_t>(__builtin_popcountll(e[w]));
    }
  }
  RunBits get(std::int64_t r) const {
    const std::uint64_t* s = bits_.data() + slot(r) * words_ * 2;
    const std::uint32_t* c = counts_.data() + slot(r) * words_ * 2;
    return {s, s + words_, c, c + words_};
  }

 private:
  std::size_t slot(std::int64_t r) const { return static_cast<std::size_t>(r) % rows_; }
  std::size_t words_, rows_;
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> counts_;
};

/// Calls join(index of a's run, index of b's run) for every pair of runs that touch: their x
/// intervals overlap once widened by `widen` (0 or 1) voxels, and for multi-label input their
/// values are equal. Two pointers: O(a.n + b.n + pairs).
template <class T, bool Multi, class Idx, class Join>
inline void touching_runs(const RowRuns<T, Idx>& a, const RowRuns<T, Idx>& b, std::uint32_t widen, Join&& join) {
  std::uint32_t j = 0;
  for (std::uint32_t i = 0; i < b.n; ++i) {
    const std::uint32_t s = b.st[i], e = b.en[i] + widen;
    while (j < a.n && a.en[j] + widen <= s) ++j;
    for (std::uint32_t q = j; q < a.n && a.st[q] < e; ++q)
      if (!Multi || a.value[q] == b.value[i]) join(a.first + q, b.first + i);
  }
}

/// The earlier rows that row r = z * ny + y may touch, with the widening each needs (see the
/// table above). Calls visit(row, widen) for each that exists.
template <class Visit>
inline void earlier_rows(std::int64_t r, std::int64_t ny, int connectivity, Visit&& visit) {
  const std::int64_t y = r % ny, z = r / ny;
  const std::uint32_t face_or_edge = connectivity == 6 ? 0 : 1;
  if (y > 0) visit(r - 1, face_or_edge);
  if (z > 0) {
    visit(r - ny, face_or_edge);
    if (connectivity != 6) {
      const std::uint32_t edge_or_corner = connectivity == 26 ? 1 : 0;
      if (y > 0) visit(r - ny - 1, edge_or_corner);
      if (y + 1 < ny) visit(r - ny + 1, edge_or_corner);
    }
  }
}

// The scan may load up to 4 parent entries from the first touching run of an earlier row on, past
// the runs the buffer holds so far: kParentSlack entries of room stay behind them.
constexpr std::uint32_t kParentSlack = 4;

/// Whether the `count` parent entries from `parent` on all already hold `root` (false when unsure).
/// On dense volumes nearly every run touches runs that share its root: one 4-lane compare with a
/// well-predicted branch then replaces a loop whose exit mispredicts (its trip count is 1 to 3).
template <class Idx>
[[gnu::always_inline]] inline bool already_joined(const Idx* parent, std::uint32_t count, Idx root) {
#if defined(__SSE2__)
  if constexpr (sizeof(Idx) == 4) {
    if (count > 4) return false;
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(parent));
    const auto equal = static_cast<unsigned>(
        _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(v, _mm_set1_epi32(static_cast<int>(root))))));
    const unsigned wanted = (1u << count) - 1u;
    return (equal & wanted) == wanted;
  }
#endif
  (void)parent, (void)root;
  return count == 0;
}

/// The slab scan's union step for one new row b (every run still its own root): each run is
/// united with the touching runs of the earlier rows of the slab (from `first_row` on), run by
/// run, so the run's current root is carried along instead of looked up (He, Chao, Suzuki's
/// provisional label), and a neighbour whose parent already is that root costs one load. The
/// connectivity is a template argument: the rows and their widening are then constants, and the
/// loop over them unrolls.
template <class T, bool Multi, class Idx, int Conn, class RowOf>
[[gnu::always_inline]] inline void unite_with_earlier_rows(Idx* p, const RowRuns<T, Idx>& b, std::int64_t r, std::int64_t first_row,
                                    std::int64_t ny, std::int64_t nx, const RunBitsRing* ring, RowOf&& row_of) {
  // Slots in the order of earlier_rows: (y-1, z), (y, z-1), then (y-1, z-1), (y+1, z-1) unless 6.
  constexpr int kSlots = Conn == 6 ? 2 : 4;
  constexpr std::uint32_t kWiden[4] = {Conn == 6 ? 0u : 1u, Conn == 6 ? 0u : 1u, Conn == 26 ? 1u : 0u,
                                       Conn == 26 ? 1u : 0u};
  RowRuns<T, Idx> rows[kSlots]{};  // zeroed: a slot before the slab is read only through n == 0
  RunBits bits[kSlots]{};  // read only when the ring holds them
  std::uint32_t j[kSlots];
  const std::int64_t y = r % ny, z = r / ny;
  const std::int64_t row_of_slot[4] = {y > 0 ? r - 1 : -1, z > 0 ? r - ny : -1, z > 0 && y > 0 ? r - ny - 1 : -1,
                                       z > 0 && y + 1 < ny ? r - ny + 1 : -1};
  bool any = false;
  for (int t = 0; t < kSlots; ++t) {
    j[t] = 0;
    if (row_of_slot[t] >= first_row) {  // rows before the slab: across the seam, step 3
      rows[t] = row_of(row_of_slot[t]);
      if (ring) bits[t] = ring->get(row_of_slot[t]);
      any |= rows[t].n > 0;
    } else {
      rows[t].n = 0;
    }
  }
  if (!any) return;
  for (std::uint32_t i = 0; i < b.n; ++i) {
    const Idx self = b.first + i;
    const std::uint32_t s = b.st[i];
    // The touching runs [lo[t], hi[t]) of each earlier row.
    std::uint32_t lo[kSlots], hi[kSlots];
#pragma GCC unroll 4
    for (int t = 0; t < kSlots; ++t) {
      const RowRuns<T, Idx>& a = rows[t];
      lo[t] = hi[t] = 0;
      if (a.n == 0) continue;  // no runs, or a row across the seam (its bits are not set)
      const std::uint32_t w = kWiden[t], e = b.en[i] + w;
      // The runs q of a that touch [s, e): en[q] > s - w and st[q] < e + w.
      if (ring) {
        lo[t] = RunBits::rank(bits[t].ends, bits[t].ends_before, s + 1 - w);
        hi[t] = RunBits::rank(bits[t].starts, bits[t].starts_before, std::min<std::uint32_t>(e, static_cast<std::uint32_t>(nx)));
      } else {
        std::uint32_t q = j[t];
        while (q < a.n && a.en[q] + w <= s) ++q;
        j[t] = lo[t] = q;
        while (q < a.n && a.st[q] < e) ++q;
        hi[t] = q;
      }
    }
    // Binary input: the run joins the first touching run's set at once, so that on dense volumes
    // (every touching run already in that set) each row is one compare (already_joined) and no
    // loop runs. Multi-label input must compare values first: the run starts as its own root.
    Idx root = self;
    if constexpr (!Multi) {
#pragma GCC unroll 4
      for (int t = 0; t < kSlots; ++t)
        if (hi[t] > lo[t]) {
          root = find_halving(p, p[rows[t].first + lo[t]]);
          break;
        }
    }
#pragma GCC unroll 4
    for (int t = 0; t < kSlots; ++t) {
      const RowRuns<T, Idx>& a = rows[t];
      if (already_joined(p + a.first + lo[t], hi[t] - lo[t], root)) continue;
      for (std::uint32_t q = lo[t]; q < hi[t]; ++q) {
        if (Multi && a.value[q] != b.value[i]) continue;
        Idx other = p[a.first + q];
        if (other == root) continue;
        other = find_halving(p, other);
        if (other == root) continue;
        if (other < root) {
          p[root] = other;
          root = other;
        } else {
          p[other] = root;
        }
      }
    }
    p[self] = root;
  }
}

/// Statistics of the labels first seen in an earlier slab, accumulated in a zeroed side array.
struct ForeignSums {
  std::uint64_t voxels, sx, sy, sz;
  std::int64_t min_x, max_x, min_y, max_y, min_z, max_z;
};

struct FreeDeleter {
  void operator()(void* q) const { std::free(q); }
};

/// What one slab keeps between the passes.
template <class T, class Idx>
struct Slab {
  std::int64_t row0 = 0, row1 = 0;  // rows [row0, row1)
  Buffer<std::uint32_t> st, en;
  Buffer<T> value;              // multi-label only
  Buffer<Idx> parent;           // slab-local indices until concatenated
  std::vector<Idx> row_first;   // slab-local index of each row's first run; one more at the end
  Idx base = 0;                 // global index of the slab's first run
};

/// The runs of row r of a slab, their indices counted from `index_base` (0: slab-local).
template <class T, bool Multi, class Idx>
inline RowRuns<T, Idx> slab_row_runs(const Slab<T, Idx>& sl, std::int64_t r, Idx index_base) {
  const std::size_t lr = static_cast<std::size_t>(r - sl.row0);
  const Idx f = sl.row_first[lr];
  return RowRuns<T, Idx>{sl.st.data() + f, sl.en.data() + f, Multi ? sl.value.data() + f : nullptr,
                         static_cast<std::uint32_t>(sl.row_first[lr + 1] - f), static_cast<Idx>(index_base + f)};
}

/// Step 1 for one slab: finds its rows' runs and unites each with the touching runs of the
/// slab's earlier rows, in a slab-local parent array.
template <class T, bool Multi, class Idx>
[[gnu::always_inline]] inline void scan_slab(Slab<T, Idx>& sl, const VolumeView<const T>& vol, int connectivity,
                                             bool use_ring) {
  const std::int64_t nx = vol.nx, ny = vol.ny;
  const std::int64_t per_row = Multi ? nx : (nx + 1) / 2;  // at most this many runs in a row
  sl.row_first.resize(static_cast<std::size_t>(sl.row1 - sl.row0) + 1);
  // Room for the most runs the slab can hold, up to a cap: the pages are touched only as runs are
  // written, and growing by copies (a copy of everything, twice the pages) is left to huge slabs.
  const auto room_for_all = static_cast<std::size_t>(std::min<std::int64_t>(
      (sl.row1 - sl.row0) * per_row + kParentSlack + 1, kReservedRunsPerSlab));
  sl.st.reserve(room_for_all), sl.en.reserve(room_for_all), sl.parent.reserve(room_for_all);
  if constexpr (Multi) sl.value.reserve(room_for_all);
  std::unique_ptr<RunBitsRing> ring;
  if (use_ring) ring = std::make_unique<RunBitsRing>(nx, ny);
  Idx k = 0;
  for (std::int64_t r = sl.row0; r < sl.row1; ++r) {
    const auto room = static_cast<std::size_t>(per_row) + 1;
    std::uint32_t* st = sl.st.extend(room);
    std::uint32_t* en = sl.en.extend(room);
    const T* in = vol.row(r % ny, r / ny);
    const std::uint32_t n = volume_row_runs<T, Multi>(in, nx, st, en);
    sl.row_first[static_cast<std::size_t>(r - sl.row0)] = k;
    if constexpr (Multi) {
      T* v = sl.value.extend(n);
      for (std::uint32_t i = 0; i < n; ++i) v[i] = in[st[i]];
      sl.value.grow_by(n);
    }
    Idx* p = sl.parent.extend(n + kParentSlack);
    for (std::uint32_t i = 0; i < n; ++i) p[i] = k + i;
    sl.st.grow_by(n), sl.en.grow_by(n), sl.parent.grow_by(n);
    sl.row_first[static_cast<std::size_t>(r - sl.row0) + 1] = k + n;
    if (ring) ring->set(r, st, en, n);
    if (n > 0) {
      const auto row_of = [&](std::int64_t q) { return slab_row_runs<T, Multi, Idx>(sl, q, 0); };
      const RowRuns<T, Idx> b = row_of(r);
      Idx* parent = sl.parent.data();
      if (connectivity == 6) unite_with_earlier_rows<T, Multi, Idx, 6>(parent, b, r, sl.row0, ny, nx, ring.get(), row_of);
      else if (connectivity == 18) unite_with_earlier_rows<T, Multi, Idx, 18>(parent, b, r, sl.row0, ny, nx, ring.get(), row_of);
      else unite_with_earlier_rows<T, Multi, Idx, 26>(parent, b, r, sl.row0, ny, nx, ring.get(), row_of);
    }
    k += n;
  }
}

// The rank lookups of the scan are popcounts. The library is built for the x86-64 baseline, where
// __builtin_popcountll is a libgcc call (a quarter of the scan at density 0.9); every x86-64 CPU
// since 2008 has the POPCNT instruction, so the scan is compiled a second time for it and chosen
// at run time.
#if defined(__x86_64__) && !defined(__POPCNT__) && defined(__GNUC__)
inline bool cpu_has_popcnt() {
  static const bool has = __builtin_cpu_supports("popcnt");
  return has;
}
template <class T, bool Multi, class Idx>
[[gnu::target("popcnt")]] void scan_slab_popcnt(Slab<T, Idx>& sl, const VolumeView<const T>& vol, int connectivity,
                                                bool use_ring) {
  scan_slab<T, Multi, Idx>(sl, vol, connectivity, use_ring);
}
#else
inline bool cpu_has_popcnt() { return false; }  // the portable build already has the instruction, or none exists
template <class T, bool Multi, class Idx>
void scan_slab_popcnt(Slab<T, Idx>& sl, const VolumeView<const T>& vol, int connectivity, bool use_ring) {
  scan_slab<T, Multi, Idx>(sl, vol, connectivity, use_ring);
}
#endif

template <class T, bool Multi, class Idx, class Label>
std::uint64_t label_runs_3d(const VolumeLabelRequest<T>& req, VolumeView<Label> labels,
                            std::vector<VolumeComponentSums>* sums) {
  constexpr Idx kFlag = Idx{1} << (sizeof(Idx) * 8 - 1);  // numbering: the entry holds a label offset
  constexpr Idx kMask = kFlag - 1;
  const auto& vol = req.volume;
  const std::int64_t nx = vol.nx, ny = vol.ny, rows = vol.ny * vol.nz;
  const int connectivity = req.connectivity;

  const bool par = vol.size() >= kParallelVoxels;
  const int threads = par ? std::max(1, cpu_threads()) : 1;
  const std::int64_t nslabs = std::min<std::int64_t>(rows, par ? std::int64_t{threads} * kSlabsPerThread : 1);
  std::vector<Slab<T, Idx>> slabs(static_cast<std::size_t>(nslabs));
  for (std::int64_t s = 0; s < nslabs; ++s) {
    slabs[static_cast<std::size_t>(s)].row0 = rows * s / nslabs;
    slabs[static_cast<std::size_t>(s)].row1 = rows * (s + 1) / nslabs;
  }
  auto row_runs_of = [&](const Slab<T, Idx>& sl, std::int64_t r, Idx index_base) {
    return slab_row_runs<T, Multi, Idx>(sl, r, index_base);
  };

  // The bit rows find touching runs without data-dependent loops; a ring per slab as long as it
  // stays small (very wide slices take the two-pointer scan instead).
  const bool use_ring = RunBitsRing::bytes(nx, ny) <= req.run_bits_ring_limit;
  const bool popcnt = cpu_has_popcnt();
  // Progress: each slab's scan (step 1) and its label rows (step 5) are one pass each.
  std::atomic<std::uint64_t> passes_done{0};
  const auto passes = static_cast<std::uint64_t>(2 * nslabs);
  auto pass_done = [&] {
    if (req.progress) (*req.progress)(passes_done.fetch_add(1) + 1, passes);
  };
  // 1. Slabs: runs and their unions inside the slab.
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    Slab<T, Idx>& sl = slabs[static_cast<std::size_t>(s)];
    if (popcnt) scan_slab_popcnt<T, Multi, Idx>(sl, vol, connectivity, use_ring);
    else scan_slab<T, Multi, Idx>(sl, vol, connectivity, use_ring);
    pass_done();
  }

  // 2. One parent array with global indices.
  Idx total = 0;
  for (auto& sl : slabs) {
    sl.base = total;
    total += static_cast<Idx>(sl.parent.size());
  }
  std::unique_ptr<Idx[]> parent_storage(new Idx[total > 0 ? total : 1]);
  Idx* p = parent_storage.get();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    Slab<T, Idx>& sl = slabs[static_cast<std::size_t>(s)];
    const Idx* local = sl.parent.data();
    const std::size_t n = sl.parent.size();
    for (std::size_t i = 0; i < n; ++i) p[sl.base + i] = static_cast<Idx>(sl.base + local[i]);
    sl.parent.release();
  }

  // 3. Seams: row pairs across slab boundaries, sequential, roots re-parented recorded.
  std::vector<Idx> moved;
  auto slab_of_row = [&](std::int64_t r) -> const Slab<T, Idx>& {
    std::size_t lo = 0, hi = slabs.size();  // the last slab with row0 <= r
    while (hi - lo > 1) {
      const std::size_t mid = (lo + hi) / 2;
      (slabs[mid].row0 <= r ? lo : hi) = mid;
    }
    return slabs[lo];
  };
  for (std::size_t s = 1; s < slabs.size(); ++s) {
    const Slab<T, Idx>& sl = slabs[s];
    for (std::int64_t r = sl.row0; r < std::min(sl.row1, sl.row0 + ny + 1); ++r) {
      const RowRuns<T, Idx> b = row_runs_of(sl, r, sl.base);
      if (b.n == 0) continue;
      earlier_rows(r, ny, connectivity, [&](std::int64_t q, std::uint32_t widen) {
        if (q >= sl.row0) return;  // inside the slab: step 1
        const Slab<T, Idx>& other = slab_of_row(q);
        touching_runs<T, Multi, Idx>(row_runs_of(other, q, other.base), b, widen, [&](Idx ia, Idx ib) {
          const Idx ra = find_root(p, ia), rb = find_root(p, ib);
          if (ra == rb) return;
          const Idx hi = std::max(ra, rb);
          p[hi] = std::min(ra, rb);
          moved.push_back(hi);
        });
      });
    }
  }

  // 4. Labels 1..N in index (= raster) order: each slab ranks its roots (entry := kFlag | rank);
  //    the roots the seams re-parented get their component's label as an offset from their own
  //    slab's first label (mod 2^(bits-1)), so every run resolves inside its slab in step 5.
  std::vector<std::uint64_t> lab_lo(slabs.size() + 1, 0);  // labels of slab s: (lab_lo[s], lab_lo[s+1]]
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    const Slab<T, Idx>& sl = slabs[static_cast<std::size_t>(s)];
    const Idx k0 = sl.base, k1 = static_cast<Idx>(sl.base + sl.st.size());
    Idx c = 0;
    for (Idx k = k0; k < k1; ++k)
      if (p[k] == k) p[k] = kFlag | c++;
    lab_lo[static_cast<std::size_t>(s) + 1] = c;
  }
  for (std::size_t s = 0; s < slabs.size(); ++s) lab_lo[s + 1] += lab_lo[s];
  const std::uint64_t count = lab_lo.back();
  {
    auto slab_index_of_run = [&](Idx k) {
      std::size_t lo = 0, hi = slabs.size();
      while (hi - lo > 1) {
        const std::size_t mid = (lo + hi) / 2;
        (slabs[mid].base <= k ? lo : hi) = mid;
      }
      return lo;
    };
    std::vector<std::uint64_t> label_of(moved.size());
    for (std::size_t i = 0; i < moved.size(); ++i) {
      Idx g = moved[i];
      while (!(p[g] & kFlag)) g = p[g];
      label_of[i] = lab_lo[slab_index_of_run(g)] + (p[g] & kMask) + 1;
    }
    for (std::size_t i = 0; i < moved.size(); ++i)
      p[moved[i]] = kFlag | (static_cast<Idx>(label_of[i] - lab_lo[slab_index_of_run(moved[i])] - 1) & kMask);
  }

  // 5. Label rows and statistics.
  const bool want = sums != nullptr;
  std::vector<std::unique_ptr<ForeignSums, FreeDeleter>> foreign(want ? slabs.size() : 0);
  std::vector<std::vector<Idx>> foreign_seen(want ? slabs.size() : 0);
  VolumeComponentSums* own = nullptr;
  if (want) {
    sums->assign(count, VolumeComponentSums{});
    own = sums->data();
    for (std::size_t s = 1; s < foreign.size(); ++s) {
      foreign[s].reset(static_cast<ForeignSums*>(std::calloc(lab_lo[s] + 1, sizeof(ForeignSums))));
      if (!foreign[s]) throw std::bad_alloc();
    }
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    const Slab<T, Idx>& sl = slabs[static_cast<std::size_t>(s)];
    const std::uint64_t lo = lab_lo[static_cast<std::size_t>(s)];
    const Idx lo1 = static_cast<Idx>(lo + 1);
    ForeignSums* fa = want ? foreign[static_cast<std::size_t>(s)].get() : nullptr;
    std::vector<Idx>* seen = want ? &foreign_seen[static_cast<std::size_t>(s)] : nullptr;
    const auto nx32 = static_cast<std::uint32_t>(nx);
    for (std::int64_t r = sl.row0; r < sl.row1; ++r) {
      const RowRuns<T, Idx> runs = row_runs_of(sl, r, sl.base);
      const std::int64_t y = r % ny, z = r / ny;
      Label* out = labels.row(y, z);
      std::uint32_t x = 0;
      for (std::uint32_t i = 0; i < runs.n; ++i) {
        const Idx k = runs.first + i;
        const Idx v = p[k];
        const Idx L = (v & kFlag) ? static_cast<Idx>((lo1 + v) & kMask) : p[v];  // p[v]: resolved already
        p[k] = L;
        const std::uint32_t a = runs.st[i], b = runs.en[i];
        if constexpr (std::is_same_v<Label, std::uint32_t>) {
          fill_over(out, x, a, nx32, 0);  // 16-byte stores that may run past b, never past the row
          fill_over(out, a, b, nx32, static_cast<std::uint32_t>(L));
        } else {
          std::fill(out + x, out + a, Label{0});
          std::fill(out + a, out + b, static_cast<Label>(L));
        }
        x = b;
        if (!want) continue;
        const std::uint64_t len = b - a;
        const std::uint64_t sx = (static_cast<std::uint64_t>(a) + b - 1) * len / 2;
        if (L > lo) {
          VolumeComponentSums& o = own[L - 1];
          o.voxels += len;
          o.sum_x += sx, o.sum_y += static_cast<std::uint64_t>(y) * len, o.sum_z += static_cast<std::uint64_t>(z) * len;
          o.min_x = std::min<std::int64_t>(o.min_x, a), o.max_x = std::max<std::int64_t>(o.max_x, b - 1);
          o.min_y = std::min(o.min_y, y), o.max_y = std::max(o.max_y, y);
          o.min_z = std::min(o.min_z, z), o.max_z = z;
          o.value = Multi ? static_cast<std::uint64_t>(runs.value[i]) : 1;
        } else {
          ForeignSums& f = fa[L];
          if (f.voxels == 0) {
            seen->push_back(L);
            f.min_x = a, f.max_x = b - 1, f.min_y = f.max_y = y, f.min_z = z;
          } else {
            f.min_x = std::min<std::int64_t>(f.min_x, a), f.max_x = std::max<std::int64_t>(f.max_x, b - 1);
            f.min_y = std::min(f.min_y, y), f.max_y = std::max(f.max_y, y);
          }
          f.max_z = z;
          f.voxels += len;
          f.sx += sx, f.sy += static_cast<std::uint64_t>(y) * len, f.sz += static_cast<std::uint64_t>(z) * len;
        }
      }
      if constexpr (std::is_same_v<Label, std::uint32_t>) fill_over(out, x, nx32, nx32, 0);
      else std::fill(out + x, out + nx, Label{0});
    }
    pass_done();
  }
  if (want) {
    for (std::size_t s = 1; s < slabs.size(); ++s)
      for (const Idx L : foreign_seen[s]) {
        const ForeignSums& f = foreign[s].get()[L];
        VolumeComponentSums part;
        part.voxels = f.voxels, part.sum_x = f.sx, part.sum_y = f.sy, part.sum_z = f.sz;
        part.min_x = f.min_x, part.max_x = f.max_x, part.min_y = f.min_y, part.max_y = f.max_y;
        part.min_z = f.min_z, part.max_z = f.max_z;
        own[L - 1].add(part);
      }
  }
  return count;
}

template <class T, bool Multi, class Label>
std::uint64_t dispatch_index(const VolumeLabelRequest<T>& req, VolumeView<Label> labels,
                             std::vector<VolumeComponentSums>* sums) {
  const std::int64_t per_row = Multi ? req.volume.nx : (req.volume.nx + 1) / 2;
  // Doubles are exact far beyond the bound.
  const double bound = static_cast<double>(per_row) * static_cast<double>(req.volume.ny) * static_cast<double>(req.volume.nz);
  if (bound < volume_narrow_run_index_limit) return label_runs_3d<T, Multi, std::uint32_t>(req, labels, sums);
  return label_runs_3d<T, Multi, std::uint64_t>(req, labels, sums);
}

}  // namespace

template <class T>
std::uint64_t label_volume(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums) {
  if (sums) sums->clear();
  if (req.volume.empty()) return 0;
  if (req.volume.nx >= (std::int64_t{1} << 31))
    throw Error("label: rows of 2^31 voxels and more are not supported (nx = " + std::to_string(req.volume.nx) + ")");
  if (req.connectivity != 6 && req.connectivity != 18 && req.connectivity != 26)
    throw Error("label: volume connectivity must be 6, 18 or 26");
  const bool wide = req.labels64.data != nullptr;
  if (req.multilabel) {
    if (wide) return dispatch_index<T, true>(req, req.labels64, sums);
    return dispatch_index<T, true>(req, req.labels32, sums);
  }
  if (wide) return dispatch_index<T, false>(req, req.labels64, sums);
  return dispatch_index<T, false>(req, req.labels32, sums);
}

template std::uint64_t label_volume<std::uint8_t>(const VolumeLabelRequest<std::uint8_t>&, std::vector<VolumeComponentSums>*);
template std::uint64_t label_volume<std::uint16_t>(const VolumeLabelRequest<std::uint16_t>&, std::vector<VolumeComponentSums>*);
template std::uint64_t label_volume<std::uint32_t>(const VolumeLabelRequest<std::uint32_t>&, std::vector<VolumeComponentSums>*);
template std::uint64_t label_volume<std::uint64_t>(const VolumeLabelRequest<std::uint64_t>&, std::vector<VolumeComponentSums>*);

}  // namespace winnow::detail::cpu
