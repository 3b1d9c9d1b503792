// Run-based CPU labeling in parallel row stripes (the CPU `row_stripes` algorithm, the CPU's
// `automatic` choice).
//
// Algorithm (after He, Chao, Suzuki 2008, "A run-based two-scan labeling algorithm", with a flat
// union-find instead of their representative lists):
//   1. The image is cut into full-width row stripes (several per thread, dynamic schedule). A
//      stripe is scanned row by row: the row's foreground runs are found 64 pixels at a time
//      (SSE2 compares of the mask bytes give a bit row; run starts and ends are its bit
//      transitions, read with count-trailing-zeros). Every run gets an index; indices follow
//      raster order (stripe s owns the index range from y0 * ceil(W/2), an upper bound of the
//      runs above it), so the smallest index of a component is the run holding its first pixel.
//      Runs are connected to the previous row's runs by interval overlap (two pointers;
//      8-connectivity widens the interval by one pixel each side) in a union-find array that
//      links the larger root to the smaller (roots stay the first run of each component), with
//      path halving.
//   2. The seams between stripes are united the same way (one row pair per seam, sequential,
//      no path compression, so every non-root still points into its own stripe); the roots the
//      seams re-parent are recorded.
//   3. Numbering, in parallel: each stripe ranks its remaining roots in index order (the entry
//      becomes a flag plus the rank); a prefix sum over stripes gives each stripe its first
//      label; the recorded roots get their component's label (sequential, at most one per seam
//      run). Labels are then 1..N in raster order of each component's first pixel.
//   4. Each stripe is scanned again (runs re-read from the mask: cheaper than storing them),
//      each run's entry is resolved to its final label (its parent is a smaller index of the same
//      stripe, already resolved, or it carries its label), and the label row is written once,
//      runs and gaps as 16-byte fills. Statistics are accumulated per run (area, coordinate
//      sums in closed form, bounding box): a stripe's own labels first appear in increasing
//      order, so they accumulate straight into the output records; labels from earlier stripes
//      (they all show up in the stripe's first row) go to a side array and are merged at the end.
//
// Complexity: O(W*H) for the two stripe scans (runs, not pixels, do the union-find work), O(runs)
// for numbering, O(W * stripes) for the seams. The mask is read twice (1 byte/pixel) and the
// labels written once (4 bytes/pixel); there is no provisional label image. Run indices are
// 32-bit with one flag bit: images with H * ceil(W/2) >= 2^31 take the pixel-scan path of
// label.cpp instead. The run array is kept between calls (up to 128 MiB), since paging in a fresh
// one costs several milliseconds per 4096² frame.
#include "label/cpu/label_runs.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>

#include "label/cpu/row_runs.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#ifdef WINNOW_LABEL_TIMING
#include <chrono>
#include <cstdio>
#define LT_MARK(name)                                                                                                  \
  do {                                                                                                                 \
    const auto lt_now = std::chrono::steady_clock::now();                                                              \
    std::fprintf(stderr, "  %-8s %8.3f ms\n", name, std::chrono::duration<double, std::milli>(lt_now - lt_t).count()); \
    lt_t = lt_now;                                                                                                     \
  } while (0)
#else
#define LT_MARK(name) \
  do {                \
  } while (0)
#endif

namespace winnow::detail::cpu {
namespace {

using Idx = std::uint32_t;
constexpr Idx kFlag = Idx{1} << 31;  // numbering: marks a run whose entry holds its label offset
constexpr Idx kMask = kFlag - 1;
// Stripes per thread: more than one, so a thread that the OS deschedules on a busy machine
// leaves its later stripes to the others (dynamic schedule); seams are cheap.
constexpr int kStripesPerThread = 8;

/// Unites the runs of row b (indices kb..) with those of the row above, a (indices ka..).
/// Fresh: row b was just found (every run its own root; the stripe scan), with path halving.
/// Otherwise (the seams) only roots are written, each one it re-parents is appended to `moved`.
/// Roots that stop being roots are appended to `moved` when it is given.
template <int Conn, bool Fresh>
inline void connect_rows(Idx* p, const std::uint32_t* as, const std::uint32_t* ae, std::uint32_t na, Idx ka,
                         const std::uint32_t* bs, const std::uint32_t* be, std::uint32_t nb, Idx kb,
                         std::vector<Idx>* moved = nullptr) {
  std::uint32_t j = 0;
  for (std::uint32_t i = 0; i < nb; ++i) {
    const std::uint32_t s = bs[i], e = be[i];
    const Idx self = kb + i;
    Idx root = Fresh ? self : find_root(p, self);
    // 8-connectivity: a run [ps, pe) above touches [s, e) when pe >= s and ps <= e;
    // 4-connectivity: when pe > s and ps < e.
    if constexpr (Conn == 8) {
      while (j < na && ae[j] < s) ++j;
    } else {
      while (j < na && ae[j] <= s) ++j;
    }
    while (j < na && (Conn == 8 ? as[j] <= e : as[j] < e)) {
      Idx r = p[ka + j];  // usually the root already
      if (r != root && p[r] != r) r = Fresh ? find_halving(p, r) : find_root(p, r);
      if (r != root) {
        if (r < root) {
          p[root] = r;
          if (moved) moved->push_back(root);
          root = r;
        } else {
          p[r] = root;
          if (moved) moved->push_back(r);
        }
      }
      if (ae[j] > e) break;  // may touch the next run of b too
      ++j;
    }
    if constexpr (Fresh) p[self] = root;
  }
}

struct Acc {
  std::uint64_t area, sx, sy;
  std::int64_t minx, maxx, miny, maxy;
};

struct FreeDeleter {
  void operator()(void* q) const { std::free(q); }
};

/// The run array of the last labeling, kept for the next one (up to 128 MiB): a fresh array
/// costs a page fault per 1024 runs, several milliseconds per 4096² frame.
class RunArrayCache {
 public:
  std::unique_ptr<Idx[]> take(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (buf_ && size_ >= n) {
      size_ = 0;
      return std::move(buf_);
    }
    return std::unique_ptr<Idx[]>(new Idx[n]);
  }
  void give(std::unique_ptr<Idx[]> b, std::size_t n) {
    if (n > (std::size_t{1} << 25)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!buf_ || size_ < n) {
      buf_ = std::move(b);
      size_ = n;
    }
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Idx[]> buf_;
  std::size_t size_ = 0;
};
RunArrayCache g_run_cache;

}  // namespace

bool label_runs(const LabelRequest& req, std::vector<ComponentStats>* stats, std::uint64_t& count) {
  const auto& mask = req.mask;
  const auto& labels = req.labels;
  const std::int64_t W = mask.width, H = mask.height;
  count = 0;
  if (stats) stats->clear();
  if (W <= 0 || H <= 0) return true;
  const std::int64_t per_row = (W + 1) / 2;  // at most this many runs in a row
  if (W >= (std::int64_t{1} << 31) || static_cast<std::uint64_t>(per_row) * static_cast<std::uint64_t>(H) >= kFlag)
    return false;

#ifdef WINNOW_LABEL_TIMING
  auto lt_t = std::chrono::steady_clock::now();
#endif
  const bool par = W * H >= (std::int64_t{1} << 18);
  const int threads = par ? std::max(1, omp_get_max_threads()) : 1;
  const std::int64_t nstripes = std::min<std::int64_t>(H, par ? threads * kStripesPerThread : 1);
  std::vector<std::int64_t> y0(static_cast<std::size_t>(nstripes) + 1);
  for (std::int64_t s = 0; s <= nstripes; ++s) y0[static_cast<std::size_t>(s)] = H * s / nstripes;
  std::vector<Idx> nruns(static_cast<std::size_t>(nstripes), 0);
  std::vector<Idx> row_first(static_cast<std::size_t>(H));
  // Parents, later final labels; only the touched part of the upper bound is ever paged in.
  const auto cap = static_cast<std::size_t>(per_row * H);
  std::unique_ptr<Idx[]> parent = g_run_cache.take(cap);
  struct GiveBack {
    std::unique_ptr<Idx[]>& b;
    std::size_t n;
    ~GiveBack() { g_run_cache.give(std::move(b), n); }
  } give_back{parent, cap};
  Idx* p = parent.get();
  const int conn = req.connectivity;

  // 1. Stripes.
#pragma omp parallel num_threads(threads) if (par)
  {
    std::vector<std::uint32_t> buf(static_cast<std::size_t>(per_row + 1) * 4);
    std::uint32_t *cs = buf.data(), *ce = cs + per_row + 1, *ps = ce + per_row + 1, *pe = ps + per_row + 1;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < nstripes; ++s) {
      const std::int64_t ya = y0[static_cast<std::size_t>(s)], yb = y0[static_cast<std::size_t>(s) + 1];
      Idx k = static_cast<Idx>(ya * per_row);
      const Idx k0 = k;
      std::uint32_t np = 0;
      Idx kp = k;
      for (std::int64_t y = ya; y < yb; ++y) {
        const std::uint32_t n = row_runs(mask.row(y), W, cs, ce);
        row_first[static_cast<std::size_t>(y)] = k;
        for (std::uint32_t i = 0; i < n; ++i) p[k + i] = k + i;
        if (y > ya && np > 0 && n > 0) {
          if (conn == 8) connect_rows<8, true>(p, ps, pe, np, kp, cs, ce, n, k);
          else connect_rows<4, true>(p, ps, pe, np, kp, cs, ce, n, k);
        }
        std::swap(cs, ps);
        std::swap(ce, pe);
        np = n;
        kp = k;
        k += n;
      }
      nruns[static_cast<std::size_t>(s)] = k - k0;
    }
  }

  LT_MARK("scan");
  // 2. Seams.
  std::vector<Idx> moved;  // roots the seams re-parented (possibly to an earlier stripe)
  if (nstripes > 1) {
    std::vector<std::uint32_t> buf(static_cast<std::size_t>(per_row + 1) * 4);
    std::uint32_t *as = buf.data(), *ae = as + per_row + 1, *bs = ae + per_row + 1, *be = bs + per_row + 1;
    for (std::int64_t s = 1; s < nstripes; ++s) {
      const std::int64_t yb = y0[static_cast<std::size_t>(s)];
      const std::uint32_t na = row_runs(mask.row(yb - 1), W, as, ae);
      const std::uint32_t nb = row_runs(mask.row(yb), W, bs, be);
      if (na == 0 || nb == 0) continue;
      if (conn == 8)
        connect_rows<8, false>(p, as, ae, na, row_first[static_cast<std::size_t>(yb - 1)], bs, be, nb,
                               row_first[static_cast<std::size_t>(yb)], &moved);
      else
        connect_rows<4, false>(p, as, ae, na, row_first[static_cast<std::size_t>(yb - 1)], bs, be, nb,
                               row_first[static_cast<std::size_t>(yb)], &moved);
    }
  }

  LT_MARK("seams");
  // 3. Final numbers in raster order of first runs, in parallel: each stripe ranks its roots
  //    (entry := kFlag | rank); then the roots the seams re-parented get their final label's
  //    offset from their stripe's first label (mod 2^31) the same way. Every other run points
  //    to a smaller run of its own stripe, so the write pass below resolves all runs in order.
  std::vector<std::uint64_t> lab_lo(static_cast<std::size_t>(nstripes) + 1, 0);  // labels of stripe s: (lo[s], lo[s+1]]
  std::vector<Idx> kbase(static_cast<std::size_t>(nstripes));
  for (std::int64_t s = 0; s < nstripes; ++s)
    kbase[static_cast<std::size_t>(s)] = static_cast<Idx>(y0[static_cast<std::size_t>(s)] * per_row);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nstripes; ++s) {
    const Idx k0 = kbase[static_cast<std::size_t>(s)], k1 = k0 + nruns[static_cast<std::size_t>(s)];
    Idx c = 0;
    for (Idx k = k0; k < k1; ++k)
      if (p[k] == k) p[k] = kFlag | c++;
    lab_lo[static_cast<std::size_t>(s) + 1] = c;
  }
  for (std::int64_t s = 0; s < nstripes; ++s)
    lab_lo[static_cast<std::size_t>(s) + 1] += lab_lo[static_cast<std::size_t>(s)];
  count = lab_lo.back();
  {
    auto stripe_of = [&](Idx k) {
      return static_cast<std::size_t>(std::upper_bound(kbase.begin(), kbase.end(), k) - kbase.begin()) - 1;
    };
    std::vector<Idx> label_of(moved.size());
    for (std::size_t i = 0; i < moved.size(); ++i) {
      Idx g = moved[i];
      while (!(p[g] & kFlag)) g = p[g];
      label_of[i] = static_cast<Idx>(lab_lo[stripe_of(g)] + (p[g] & kMask) + 1);
    }
    for (std::size_t i = 0; i < moved.size(); ++i)
      p[moved[i]] = kFlag | ((label_of[i] - static_cast<Idx>(lab_lo[stripe_of(moved[i])]) - 1) & kMask);
  }
  const std::uint64_t n = count;

  LT_MARK("number");
  // 4. Label rows (and statistics).
  // A stripe's own labels (lab_lo[s], lab_lo[s+1]] first appear at their root runs, in increasing
  // order, so their records are accumulated straight into the output (area; left, top; right and
  // bottom in width/height; the 64-bit coordinate sums in cx/cy's bits) and initialised on first
  // sight. Labels from earlier stripes go to a per-stripe array indexed by label (calloc's zero
  // pages: only the few touched pages cost anything) and are merged at the end.
  const bool want = stats != nullptr;
  std::vector<std::unique_ptr<Acc, FreeDeleter>> foreign(want ? static_cast<std::size_t>(nstripes) : 0);
  ComponentStats* cst = nullptr;
  if (want) {
    stats->resize(n);
    cst = stats->data();
    for (std::size_t s = 1; s < foreign.size(); ++s) {
      foreign[s].reset(static_cast<Acc*>(std::calloc(lab_lo[s] + 1, sizeof(Acc))));
      if (!foreign[s]) throw std::bad_alloc();
    }
  }
#pragma omp parallel num_threads(threads) if (par)
  {
    std::vector<std::uint32_t> buf(static_cast<std::size_t>(per_row + 1) * 2);
    std::uint32_t *cs = buf.data(), *ce = cs + per_row + 1;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < nstripes; ++s) {
      const std::int64_t ya = y0[static_cast<std::size_t>(s)], yb = y0[static_cast<std::size_t>(s) + 1];
      Idx k = static_cast<Idx>(ya * per_row);
      Acc* fa = want ? foreign[static_cast<std::size_t>(s)].get() : nullptr;
      const auto lo = static_cast<std::uint32_t>(lab_lo[static_cast<std::size_t>(s)]);
      std::uint32_t next_own = lo + 1;
      const auto w32 = static_cast<std::uint32_t>(W);
      const Idx lo1 = static_cast<Idx>(lab_lo[static_cast<std::size_t>(s)] + 1);
      for (std::int64_t y = ya; y < yb; ++y) {
        const std::uint32_t nr = row_runs(mask.row(y), W, cs, ce);
        for (std::uint32_t i = 0; i < nr; ++i) {  // final labels (parents are smaller, done already)
          const Idx v = p[k + i];
          p[k + i] = (v & kFlag) ? ((lo1 + v) & kMask) : p[v];
        }
        std::uint32_t* out = labels.row(y);
        std::uint32_t x = 0;
        if (!want) {
          for (std::uint32_t i = 0; i < nr; ++i) {
            const std::uint32_t st = cs[i], en = ce[i];
            fill_over(out, x, st, w32, 0);
            fill_over(out, st, en, w32, p[k + i]);
            x = en;
          }
        } else {
          for (std::uint32_t i = 0; i < nr; ++i) {
            const std::uint32_t st = cs[i], en = ce[i];
            const std::uint32_t L = p[k + i];
            fill_over(out, x, st, w32, 0);
            fill_over(out, st, en, w32, L);
            x = en;
            const std::uint64_t len = en - st;
            const std::uint64_t sx = (static_cast<std::uint64_t>(st) + en - 1) * len / 2;
            const std::uint64_t sy = static_cast<std::uint64_t>(y) * len;
            if (L > lo) {
              ComponentStats& r = cst[L - 1];
              if (L == next_own) {
                ++next_own;
                r.area = len;
                r.left = st;
                r.top = y;
                r.width = en - 1;
                r.height = y;
                r.cx = std::bit_cast<double>(sx);
                r.cy = std::bit_cast<double>(sy);
              } else {
                r.area += len;
                r.left = std::min<std::int64_t>(r.left, st);
                r.width = std::max<std::int64_t>(r.width, en - 1);
                r.height = y;
                r.cx = std::bit_cast<double>(std::bit_cast<std::uint64_t>(r.cx) + sx);
                r.cy = std::bit_cast<double>(std::bit_cast<std::uint64_t>(r.cy) + sy);
              }
            } else {
              Acc& r = fa[L];
              if (r.area == 0) {
                r.minx = st;
                r.maxx = en - 1;
                r.miny = y;
              } else {
                r.minx = std::min<std::int64_t>(r.minx, st);
                r.maxx = std::max<std::int64_t>(r.maxx, en - 1);
              }
              r.maxy = y;
              r.area += len;
              r.sx += sx;
              r.sy += sy;
            }
          }
        }
        fill_over(out, x, w32, w32, 0);
        k += nr;
      }
    }
  }
  LT_MARK("write");
  if (!want) return true;

  // Components from earlier stripes appear in a stripe's first row: merge them into their owner.
  {
    std::vector<std::uint32_t> buf(static_cast<std::size_t>(per_row + 1) * 2);
    std::uint32_t *cs = buf.data(), *ce = cs + per_row + 1;
    for (std::int64_t s = 1; s < nstripes; ++s) {
      const std::int64_t ya = y0[static_cast<std::size_t>(s)];
      const std::uint64_t lo = lab_lo[static_cast<std::size_t>(s)];
      const std::uint32_t nr = row_runs(mask.row(ya), W, cs, ce);
      Acc* fa = foreign[static_cast<std::size_t>(s)].get();
      const Idx k = row_first[static_cast<std::size_t>(ya)];
      for (std::uint32_t i = 0; i < nr; ++i) {
        const std::uint32_t L = p[k + i];
        if (L > lo || fa[L].area == 0) continue;
        const Acc& q = fa[L];
        ComponentStats& d = cst[L - 1];
        d.area += q.area;
        d.left = std::min(d.left, q.minx);
        d.top = std::min(d.top, q.miny);
        d.width = std::max(d.width, q.maxx);
        d.height = std::max(d.height, q.maxy);
        d.cx = std::bit_cast<double>(std::bit_cast<std::uint64_t>(d.cx) + q.sx);
        d.cy = std::bit_cast<double>(std::bit_cast<std::uint64_t>(d.cy) + q.sy);
        fa[L].area = 0;
      }
    }
  }
  const auto nn = static_cast<std::int64_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static) if (par)
  for (std::int64_t i = 0; i < nn; ++i) {
    ComponentStats& o = cst[i];
    o.width = o.width - o.left + 1;
    o.height = o.height - o.top + 1;
    o.cx = static_cast<double>(std::bit_cast<std::uint64_t>(o.cx)) / static_cast<double>(o.area);
    o.cy = static_cast<double>(std::bit_cast<std::uint64_t>(o.cy)) / static_cast<double>(o.area);
  }
  LT_MARK("stats");
  return true;
}

}  // namespace winnow::detail::cpu
