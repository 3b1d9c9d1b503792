// Statistics of a label array (winnow/label_statistics.hpp): per label its voxel count, bounding
// box and exact coordinate sums, and with an intensity volume the sum, minimum and maximum of its
// values.
//
// Algorithm. One pass over the rows; each row is cut into runs of equal labels, and a run of
// length n from x0 to x1 adds to its label's record at once: n voxels, x0 + ... + x1 =
// (x0 + x1) n / 2 to the sum of x, n y and n z to those of y and z, and its ends to the box (the
// intensity values are still read one by one, in a loop the compiler vectorises). Without an
// intensity the background is not cut into runs: a row's zeros are counted and their x summed
// in a vectorised loop, its box taken from the first and last zero, and the scan for labels
// skips zeros eight at a time. The cost is O(voxels) reads plus O(runs) record updates, so a
// sparse labeling costs little more than reading it. Without a given M, a first pass finds the
// largest label (and, for signed types, a negative one).
//
// Threads. Each thread takes a contiguous share of the rows into a table of its own, merged at
// the end; that pays while the tables are small beside the work (M times the threads at most a
// sixteenth of the voxels: few labels, such as a segmentation's). With more labels the shares
// share the result's table: a labeling numbers its components in raster order (winnow, scipy,
// cc3d), so the labels of a share of rows are mostly above every label of the shares before it.
// A first pass finds each share's smallest and largest non-zero label (the same pass that finds M
// when it is not given); share t then owns the labels above the earlier shares' largest and
// writes their records straight into the result (no other share holds them), and keeps a table
// of its own only for its smaller labels (components that began in earlier shares: about a
// slice's worth), added in at the end with the backgrounds. When those own tables would exceed a
// quarter of M (labels scattered over the rows, not numbered by a labeling), one thread runs
// alone, as it does below 2^16 voxels (no parallel region for small work: on a busy machine
// waking threads costs more than the work). 256^3 at density 0.1, 6-connected (1.18 M labels), 2
// cores: 89-93 -> 67-69 ms; the table's allocation (35 ms of page faults for 80 bytes a label)
// is serial either way; scattered labels unchanged (bench/results/label.md).

// Exactness. Counts and coordinate sums are 64-bit integers (exact up to 2^64 / max coordinate
// voxels); integer intensity sums too, accumulated in 128 bits for 64-bit types and checked to
// fit 64 bits at the end.
#include <omp.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/threads.hpp"
#include "winnow/error.hpp"
#include "winnow/label_statistics.hpp"

namespace winnow {
namespace {

constexpr std::int64_t kSerialVoxels = std::int64_t{1} << 16;

/// Adds a run of a row (x0..x1, inclusive) to a label's record.
inline void add_run(LabelRecord& r, std::int64_t x0, std::int64_t x1, std::int64_t y, std::int64_t z) {
  const auto n = static_cast<std::uint64_t>(x1 - x0 + 1);
  const auto ends = static_cast<std::uint64_t>(x0 + x1);
  r.voxels += n;
  r.sums[0] += (ends % 2 == 0) ? ends / 2 * n : n / 2 * ends;  // (x0 + x1) n / 2, one factor even
  r.sums[1] += n * static_cast<std::uint64_t>(y);
  r.sums[2] += n * static_cast<std::uint64_t>(z);
  r.lower[0] = std::min(r.lower[0], x0), r.upper[0] = std::max(r.upper[0], x1);
  r.lower[1] = std::min(r.lower[1], y), r.upper[1] = std::max(r.upper[1], y);
  r.lower[2] = std::min(r.lower[2], z), r.upper[2] = std::max(r.upper[2], z);
}

/// Adds the zeros of a row to the background's record; returns their number.
template <class L>
std::int64_t add_background_row(LabelRecord& r, const L* row, std::int64_t nx, std::int64_t y, std::int64_t z) {
  std::uint64_t zeros = 0, sum_x = 0;
  if (nx <= 65536) {  // 32-bit lanes (the sum of x stays below 2^31): the loop vectorises
    std::uint32_t count = 0, sum = 0;
    const auto n = static_cast<std::uint32_t>(nx);
    for (std::uint32_t x = 0; x < n; ++x) {
      const std::uint32_t zero = row[x] == 0;
      count += zero;
      sum += (0u - zero) & x;
    }
    zeros = count, sum_x = sum;
  } else {
    for (std::int64_t x = 0; x < nx; ++x) {
      const std::uint64_t zero = row[x] == 0;
      zeros += zero;
      sum_x += (std::uint64_t{0} - zero) & static_cast<std::uint64_t>(x);
    }
  }
  if (zeros == 0) return 0;
  std::int64_t first = 0, last = nx - 1;
  while (row[first] != 0) ++first;
  while (row[last] != 0) --last;
  r.voxels += zeros;
  r.sums[0] += sum_x;
  r.sums[1] += zeros * static_cast<std::uint64_t>(y);
  r.sums[2] += zeros * static_cast<std::uint64_t>(z);
  r.lower[0] = std::min(r.lower[0], first), r.upper[0] = std::max(r.upper[0], last);
  r.lower[1] = std::min(r.lower[1], y), r.upper[1] = std::max(r.upper[1], y);
  r.lower[2] = std::min(r.lower[2], z), r.upper[2] = std::max(r.upper[2], z);
  return static_cast<std::int64_t>(zeros);
}

/// Adds another part's record of the same label.
inline void add(LabelRecord& r, const LabelRecord& o) {
  r.voxels += o.voxels;
  for (int d = 0; d < 3; ++d) {
    r.sums[d] += o.sums[d];
    r.lower[d] = std::min(r.lower[d], o.lower[d]), r.upper[d] = std::max(r.upper[d], o.upper[d]);
  }
}

/// No intensity: nothing per voxel.
struct NoIntensity {
  struct Acc {
    void add(const Acc&) {}
  };
  template <class Row>
  static void run(Acc&, Row, std::int64_t, std::int64_t) {}
};

/// The intensity's sums (128 bits for 64-bit integers), minimum and maximum of a label.
template <class V>
struct WithIntensity {
  using Wide = std::conditional_t<
      std::is_floating_point_v<V>, double,
      std::conditional_t<(sizeof(V) == 8), std::conditional_t<std::is_signed_v<V>, __int128, unsigned __int128>,
                         IntensitySum<V>>>;
  struct Acc {
    Wide sum = 0;
    V minimum = std::is_floating_point_v<V> ? std::numeric_limits<V>::infinity() : std::numeric_limits<V>::max();
    V maximum = std::is_floating_point_v<V> ? -std::numeric_limits<V>::infinity() : std::numeric_limits<V>::lowest();
    void add(const Acc& o) {
      sum += o.sum;
      if (o.minimum < minimum) minimum = o.minimum;
      if (o.maximum > maximum) maximum = o.maximum;
    }
  };
  static void run(Acc& acc, const V* row, std::int64_t x0, std::int64_t x1) {  // x1 inclusive
    IntensitySum<V> s = 0;  // a run is one row: no 64-bit overflow below 2^32 values of 2^32
    V lo = acc.minimum, hi = acc.maximum;
    if constexpr (sizeof(V) == 8 && !std::is_floating_point_v<V>) {
      Wide wide = 0;
      for (std::int64_t x = x0; x <= x1; ++x) {
        wide += row[x];
        lo = row[x] < lo ? row[x] : lo;
        hi = row[x] > hi ? row[x] : hi;
      }
      acc.sum += wide;
    } else {
      for (std::int64_t x = x0; x <= x1; ++x) {
        s += static_cast<IntensitySum<V>>(row[x]);
        lo = row[x] < lo ? row[x] : lo;  // NaN compares false: ignored
        hi = row[x] > hi ? row[x] : hi;
      }
      acc.sum += s;
    }
    acc.minimum = lo, acc.maximum = hi;
  }
};

template <class L>
using Unsigned = std::make_unsigned_t<L>;

template <class L>
[[noreturn]] void throw_label(L value, std::uint64_t m) {
  if constexpr (std::is_signed_v<L>)
    if (value < 0) throw InputError("labels: expected non-negative labels, found " + std::to_string(value));
  throw InputError("labels: label " + std::to_string(value) + " is not below the number of labels given, " +
                   std::to_string(m));
}

/// The shares of rows that the pass gives its threads (share s of n: rows [rows s / n,
/// rows (s + 1) / n)), each with its smallest and largest non-zero label (lo > hi: none; one share
/// alone: lo left 1), and whether any label is negative (a signed type's).
struct ShareWindows {
  std::vector<std::uint64_t> lo, hi;
  bool negative = false;
  [[nodiscard]] std::uint64_t largest() const { return hi.empty() ? 0 : *std::max_element(hi.begin(), hi.end()); }
};
template <class L>
ShareWindows share_windows(const VolumeView<const L>& labels, int shares) {
  using U = Unsigned<L>;
  const std::int64_t rows = labels.ny * labels.nz;
  ShareWindows w;
  w.lo.assign(static_cast<std::size_t>(shares), 1);
  w.hi.assign(static_cast<std::size_t>(shares), 0);
  bool negative = false;
#pragma omp parallel num_threads(shares) if (shares > 1) reduction(|| : negative)
  for (int s = omp_get_thread_num(); s < shares; s += omp_get_num_threads()) {
    U below = std::numeric_limits<U>::max(), largest = 0;  // below: the smallest label less 1 (0 wraps)
    bool neg = false;
    auto scan = [&](auto with_below) {
      for (std::int64_t r = rows * s / shares; r < rows * (s + 1) / shares; ++r) {
        const L* row = labels.row(r % labels.ny, r / labels.ny);
        for (std::int64_t x = 0; x < labels.nx; ++x) {  // vectorised
          if constexpr (std::is_signed_v<L>) neg |= row[x] < 0;
          const auto l = static_cast<U>(row[x]);
          if constexpr (decltype(with_below)::value) below = std::min<U>(below, static_cast<U>(l - 1));
          largest = std::max<U>(largest, l);
        }
      }
    };
    // One share (one thread) needs no window, and its minimum would cost a fifth of the pass.
    if (shares > 1) scan(std::true_type{});
    else scan(std::false_type{});
    w.lo[static_cast<std::size_t>(s)] = largest == 0 ? 1 : static_cast<std::uint64_t>(below) + 1;
    w.hi[static_cast<std::size_t>(s)] = static_cast<std::uint64_t>(largest);
    negative = negative || neg;
  }
  w.negative = negative;
  return w;
}

template <class L, class V>
void check_shape(const VolumeView<const L>& labels, const VolumeView<const V>& intensity) {
  if (intensity.nx != labels.nx || intensity.ny != labels.ny || intensity.nz != labels.nz)
    throw InputError("intensity: expected the shape of labels");
  if (!intensity.empty() && !intensity.data) throw InputError("intensity: null data");
}

template <class L>
void check_view(const VolumeView<const L>& labels) {
  if (labels.nx < 0 || labels.ny < 0 || labels.nz < 0) throw InputError("labels: negative size");
  if (!labels.empty() && !labels.data) throw InputError("labels: null data");
}

/// A table of the pass. Whole: the records and accumulators of every label, one per thread.
/// Shared: one per share of rows; its labels from `owned` up go straight into the result's table
/// (no other share holds them), those in [lo, owned) into its own, the background into its own.
template <class Acc>
struct PassTable {
  std::uint64_t lo = 0, owned = 0;
  std::vector<LabelRecord> records;
  std::vector<Acc> accs;
  LabelRecord* result_records = nullptr;
  Acc* result_accs = nullptr;
  LabelRecord background_record;
  Acc background_acc;
  LabelRecord& shared_record(std::size_t l) {
    return l >= owned ? result_records[l] : l == 0 ? background_record : records[l - lo];
  }
  Acc& shared_acc(std::size_t l) { return l >= owned ? result_accs[l] : l == 0 ? background_acc : accs[l - lo]; }
};

/// The pass: records (and intensity accumulators) per label, merged over the threads. `windows`:
/// the shares' label windows for `threads` shares when the count of labels found them already.
template <class L, class I, class V>
void accumulate(const VolumeView<const L>& labels, const VolumeView<const V>* intensity, std::uint64_t m,
                bool check_labels, bool background_only, int threads, ShareWindows windows,
                std::vector<LabelRecord>& records, std::vector<typename I::Acc>& accs) {
  using Acc = typename I::Acc;
  const std::int64_t rows = labels.ny * labels.nz;
  const std::uint64_t table = background_only ? 1 : m;
  // Where whole tables per thread would outweigh the work: shared ones, if the shares' labels
  // allow (see Threads above). Share t owns the labels above every earlier share's; its smaller
  // ones are its own table's.
  std::vector<std::uint64_t> owned_from, own_size;
  const bool whole_tables =
      table * static_cast<std::uint64_t>(threads) * 16 <= static_cast<std::uint64_t>(labels.size());
  if (threads > 1 && !whole_tables) {
    if (windows.lo.size() != static_cast<std::size_t>(threads)) windows = share_windows(labels, threads);
    owned_from.assign(static_cast<std::size_t>(threads), 1);
    own_size.assign(static_cast<std::size_t>(threads), 0);
    std::uint64_t earlier = 0, own_tables = 0;
    for (std::size_t t = 0; t < owned_from.size(); ++t) {
      owned_from[t] = earlier + 1;
      if (windows.hi[t] >= windows.lo[t] && windows.lo[t] < owned_from[t])
        own_size[t] = std::min(owned_from[t], windows.hi[t] + 1) - windows.lo[t];
      own_tables += own_size[t];
      earlier = std::max(earlier, windows.hi[t]);
    }
    // A negative label, or one beyond M, is the single-threaded pass's to report.
    if (own_tables > table / 4 || earlier >= table || windows.negative) threads = 1, owned_from.clear();
  }
  const bool shared = !owned_from.empty();
  std::vector<PassTable<Acc>> tables(static_cast<std::size_t>(threads));
  records.assign(table, LabelRecord{});
  accs.assign(table, Acc{});
  std::int64_t bad_row = -1;  // the first row holding a label >= m (check_labels)
  // Rows [first, last) into a table: kShared, a share's (PassTable::shared_record), else the
  // whole one at whole_records, whole_accs.
  auto add_rows = [&](auto shared_tag, PassTable<Acc>& own, LabelRecord* whole_records, Acc* whole_accs,
                      std::int64_t first, std::int64_t last) {
    constexpr bool kShared = decltype(shared_tag)::value;
    // Copies, not the captured references: the records' stores could alias those.
    const std::uint64_t limit = m;
    const bool check = check_labels, background = background_only;
    // (kShared is a constant: each instance keeps one side.)
    auto record = [&](std::size_t l) -> LabelRecord& { return kShared ? own.shared_record(l) : whole_records[l]; };
    auto acc = [&](std::size_t l) -> Acc& { return kShared ? own.shared_acc(l) : whole_accs[l]; };
    for (std::int64_t r = first; r < last; ++r) {
      const std::int64_t y = r % labels.ny, z = r / labels.ny;
      const L* row = labels.row(y, z);
      const V* values = nullptr;
      if constexpr (!std::is_same_v<I, NoIntensity>) values = intensity->row(y, z);
      const std::int64_t nx = labels.nx;
      std::int64_t x = 0;
      bool bad = false;
      if constexpr (std::is_same_v<I, NoIntensity>) {
        // Without intensity the background needs no runs: its count and x sum over the row in a
        // loop the compiler vectorises, its box from the first and last zero. Then the label
        // runs, skipping zeros eight at a time.
        if (add_background_row(record(0), row, nx, y, z) == nx || background) continue;
        while (x < nx) {
          while (x + 8 <= nx && (row[x] | row[x + 1] | row[x + 2] | row[x + 3] | row[x + 4] | row[x + 5] | row[x + 6] |
                                 row[x + 7]) == 0)
            x += 8;
          while (x < nx && row[x] == 0) ++x;
          if (x == nx) break;
          const L l = row[x];
          const std::int64_t x0 = x;
          ++x;
          while (x < nx && row[x] == l) ++x;
          if (check && static_cast<std::uint64_t>(static_cast<Unsigned<L>>(l)) >= limit) {
            bad = true;
            break;
          }
          add_run(record(static_cast<std::size_t>(static_cast<Unsigned<L>>(l))), x0, x - 1, y, z);
        }
      } else {
        while (x < nx) {
          const L l = row[x];
          const std::int64_t x0 = x;
          ++x;
          while (x < nx && row[x] == l) ++x;
          if (background) {
            if (l != 0) continue;
          } else if (check && static_cast<std::uint64_t>(static_cast<Unsigned<L>>(l)) >= limit) {
            bad = true;
            break;
          }
          const auto index = static_cast<std::size_t>(static_cast<Unsigned<L>>(l));
          add_run(record(index), x0, x - 1, y, z);
          I::run(acc(index), values, x0, x - 1);
        }
      }
      if (bad) {
#pragma omp critical(winnow_label_statistics_bad)
        if (bad_row < 0 || r < bad_row) bad_row = r;
        break;
      }
    }
  };
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    const int t = omp_get_thread_num();
    const int nt = omp_get_num_threads();
    if (shared) {
      // The shares are fixed (the windows'), whatever number of threads the region got.
      for (int share = t; share < threads; share += nt) {
        PassTable<Acc>& own = tables[static_cast<std::size_t>(share)];
        own.lo = windows.lo[static_cast<std::size_t>(share)];
        own.owned = owned_from[static_cast<std::size_t>(share)];
        own.result_records = records.data();
        own.result_accs = accs.data();
        own.records.assign(own_size[static_cast<std::size_t>(share)], LabelRecord{});
        own.accs.assign(own_size[static_cast<std::size_t>(share)], Acc{});
        add_rows(std::true_type{}, own, nullptr, nullptr, rows * share / threads, rows * (share + 1) / threads);
      }
    } else {
      PassTable<Acc>& own = tables[static_cast<std::size_t>(t)];
      if (t > 0) {  // thread 0 fills the result's table
        own.records.assign(table, LabelRecord{});
        own.accs.assign(table, Acc{});
      }
      add_rows(std::false_type{}, own, t > 0 ? own.records.data() : records.data(),
               t > 0 ? own.accs.data() : accs.data(), rows * t / nt, rows * (t + 1) / nt);
    }
  }
  if (bad_row >= 0) {
    const L* row = labels.row(bad_row % labels.ny, bad_row / labels.ny);
    for (std::int64_t x = 0; x < labels.nx; ++x)
      if (static_cast<std::uint64_t>(static_cast<Unsigned<L>>(row[x])) >= m) throw_label(row[x], m);
  }
  if (!shared) {
    for (std::size_t t = 1; t < tables.size(); ++t) {
      if (tables[t].records.size() != table) continue;  // a thread the region did not get
      const LabelRecord* other = tables[t].records.data();
      const Acc* other_acc = tables[t].accs.data();
      for (std::uint64_t i = 0; i < table; ++i) {
        add(records[i], other[i]);
        accs[i].add(other_acc[i]);
      }
    }
    return;
  }
  // Shared tables: the backgrounds, and the shares' own tables (labels that earlier shares hold).
  for (const PassTable<Acc>& own : tables) {
    add(records[0], own.background_record);
    accs[0].add(own.background_acc);
    for (std::size_t i = 0; i < own.records.size(); ++i) {
      add(records[own.lo + i], own.records[i]);
      accs[own.lo + i].add(own.accs[i]);
    }
  }
}

template <class L, class I, class V>
void run_statistics(const VolumeView<const L>& labels, const VolumeView<const V>* intensity,
                    const LabelStatisticsOptions& options, std::vector<LabelRecord>& records,
                    std::vector<typename I::Acc>& accs) {
  check_view(labels);
  std::uint64_t m = options.labels;
  const bool given = m > 0;
  const int threads = labels.size() < kSerialVoxels
                          ? 1
                          : static_cast<int>(std::min<std::int64_t>(detail::cpu_threads(), labels.ny * labels.nz));
  ShareWindows windows;  // M found: from the shares' windows, which the pass may use too
  if (options.background_only) {
    m = 1;
  } else if (!given && !labels.empty()) {
    windows = share_windows(labels, threads);
    if (windows.negative) throw InputError("labels: expected non-negative labels");
    const std::uint64_t largest = windows.largest();
    if (largest >= static_cast<std::uint64_t>(labels.size()) + (1u << 20))
      throw InputError("labels: the largest label " + std::to_string(largest) +
                       " exceeds the number of voxels (expected labels 0..N as labelings give them)");
    m = largest + 1;
  } else if (!given) {
    m = 1;
  }
  if (labels.empty()) {
    records.assign(m, LabelRecord{});
    accs.assign(m, typename I::Acc{});
    return;
  }
  accumulate<L, I, V>(labels, intensity, m, given && !options.background_only, options.background_only, threads,
                      std::move(windows), records, accs);
}

}  // namespace

template <class L>
LabelStatistics label_statistics(VolumeView<const L> labels, const LabelStatisticsOptions& options) {
  LabelStatistics out;
  std::vector<NoIntensity::Acc> accs;
  run_statistics<L, NoIntensity, std::uint8_t>(labels, nullptr, options, out.records, accs);
  return out;
}

template <class L, class V>
LabelIntensityStatistics<V> label_statistics(VolumeView<const L> labels, VolumeView<const V> intensity,
                                             const LabelStatisticsOptions& options) {
  check_shape<L, V>(labels, intensity);
  using I = WithIntensity<V>;
  LabelIntensityStatistics<V> out;
  std::vector<typename I::Acc> accs;
  run_statistics<L, I, V>(labels, &intensity, options, out.records, accs);
  const std::vector<LabelRecord>& records = out.records;
  const std::size_t m = records.size();
  out.sum.resize(m);
  out.minimum.resize(m);
  out.maximum.resize(m);
  for (std::size_t i = 0; i < m; ++i) {
    const typename I::Acc& a = accs[i];
    if constexpr (sizeof(V) == 8 && !std::is_floating_point_v<V>) {
      using S = IntensitySum<V>;
      if (a.sum > static_cast<typename I::Wide>(std::numeric_limits<S>::max()) ||
          a.sum < static_cast<typename I::Wide>(std::numeric_limits<S>::lowest()))
        throw InputError("intensity: the sum of label " + std::to_string(i) +
                         "'s values does not fit 64 bits (sum a floating-point copy instead)");
    }
    out.sum[i] = static_cast<IntensitySum<V>>(a.sum);
    if (records[i].voxels == 0) {
      out.minimum[i] = out.maximum[i] = std::is_floating_point_v<V> ? std::numeric_limits<V>::quiet_NaN() : V{0};
    } else if constexpr (std::is_floating_point_v<V>) {
      const bool only_nan = a.minimum > a.maximum;
      out.minimum[i] = only_nan ? std::numeric_limits<V>::quiet_NaN() : a.minimum;
      out.maximum[i] = only_nan ? std::numeric_limits<V>::quiet_NaN() : a.maximum;
    } else {
      out.minimum[i] = a.minimum, out.maximum[i] = a.maximum;
    }
  }
  return out;
}

#define WINNOW_LABEL_STATISTICS(L)                                                                                     \
  template LabelStatistics label_statistics<L>(VolumeView<const L>, const LabelStatisticsOptions&);                    \
  template LabelIntensityStatistics<std::uint8_t> label_statistics<L, std::uint8_t>(                                   \
      VolumeView<const L>, VolumeView<const std::uint8_t>, const LabelStatisticsOptions&);                             \
  template LabelIntensityStatistics<std::int8_t> label_statistics<L, std::int8_t>(                                     \
      VolumeView<const L>, VolumeView<const std::int8_t>, const LabelStatisticsOptions&);                              \
  template LabelIntensityStatistics<std::uint16_t> label_statistics<L, std::uint16_t>(                                 \
      VolumeView<const L>, VolumeView<const std::uint16_t>, const LabelStatisticsOptions&);                            \
  template LabelIntensityStatistics<std::int16_t> label_statistics<L, std::int16_t>(                                   \
      VolumeView<const L>, VolumeView<const std::int16_t>, const LabelStatisticsOptions&);                             \
  template LabelIntensityStatistics<std::uint32_t> label_statistics<L, std::uint32_t>(                                 \
      VolumeView<const L>, VolumeView<const std::uint32_t>, const LabelStatisticsOptions&);                            \
  template LabelIntensityStatistics<std::int32_t> label_statistics<L, std::int32_t>(                                   \
      VolumeView<const L>, VolumeView<const std::int32_t>, const LabelStatisticsOptions&);                             \
  template LabelIntensityStatistics<std::uint64_t> label_statistics<L, std::uint64_t>(                                 \
      VolumeView<const L>, VolumeView<const std::uint64_t>, const LabelStatisticsOptions&);                            \
  template LabelIntensityStatistics<std::int64_t> label_statistics<L, std::int64_t>(                                   \
      VolumeView<const L>, VolumeView<const std::int64_t>, const LabelStatisticsOptions&);                             \
  template LabelIntensityStatistics<float> label_statistics<L, float>(VolumeView<const L>, VolumeView<const float>,    \
                                                                      const LabelStatisticsOptions&);                  \
  template LabelIntensityStatistics<double> label_statistics<L, double>(VolumeView<const L>, VolumeView<const double>, \
                                                                        const LabelStatisticsOptions&);
WINNOW_LABEL_STATISTICS(std::uint8_t)
WINNOW_LABEL_STATISTICS(std::int8_t)
WINNOW_LABEL_STATISTICS(std::uint16_t)
WINNOW_LABEL_STATISTICS(std::int16_t)
WINNOW_LABEL_STATISTICS(std::uint32_t)
WINNOW_LABEL_STATISTICS(std::int32_t)
WINNOW_LABEL_STATISTICS(std::uint64_t)
WINNOW_LABEL_STATISTICS(std::int64_t)
#undef WINNOW_LABEL_STATISTICS

}  // namespace winnow
