#pragma once
// CPU labeling of volumes, 6/18/26-connectivity, binary or multi-label, in parallel slabs of rows
// (detail::cpu::label_volume): runs in bit rows, united by the pairs of touching runs that the
// bit rows give word by word.
//
// Rows are numbered r = z * ny + y (raster order). A run is a maximal segment of a row whose voxels
// are foreground (binary: non-zero) or, for multi-label input, hold one same non-zero value. Runs
// are the union-find's elements (the run-based two-scan idea of He, Chao, Suzuki 2008, "A run-based
// two-scan labeling algorithm"); they are numbered in raster order, so the smallest index of a
// component is the run that holds its first voxel, and union-find always links the larger root
// under the smaller one. A run is never listed: each row keeps two bit rows, its foreground F and
// its run starts S, plus the number of starts before each 64-bit word, so the run holding voxel x
// is a rank, a load and a popcount (the role of Lacassagne and Zavidovique's per-pixel run indices
// in "Light speed labeling", 2011, at 2 bits a voxel).
//
// Which earlier rows a run of row (y, z) may touch, and whether runs that meet only diagonally in x
// count (w = 1: edge or corner contact in x joins):
//     row            6-connectivity   18-connectivity   26-connectivity
//     (y-1, z)       overlap          w = 1             w = 1
//     (y,   z-1)     overlap          w = 1             w = 1
//     (y-1, z-1)     -                overlap           w = 1
//     (y+1, z-1)     -                overlap           w = 1
// With nz = 1 only the first row exists: 6 is 4-connectivity and 18 = 26 is 8-connectivity.
//
// The pairs of touching runs of a row b and an earlier row a come out of their bit rows, 64 voxels
// at a time, with no loop over runs: C = F_b & F_a (multi-label: and b[x] == a[x], an SSE2
// compare) is where they overlap; one pair starts at every bit of C whose left neighbour is not in
// C or where a run of either row starts, C & (~(C << 1) | S_b | S_a), and these are exactly the
// overlapping pairs, each once. With w = 1, the pairs that meet only at a corner are a b-run ending
// at x with an a-run starting at x + 1, or starting at x with an a-run ending at x - 1 (two more
// masks; multi-label compares the two values). A sparse row pays a few word operations per slot,
// not a rank per run: most runs there touch nothing. Each pair costs two ranks and a union whose
// common case, both runs already under one root, is one compare.
//
// Phases, each a parallel loop over slabs (ranges of consecutive rows, several per thread, dynamic
// schedule; one slab, no parallel region, below 2^18 voxels per thread):
//   A. Bit rows: each slab reads its rows once (SSE2 compares of any voxel type) and writes F, S
//      and the per-word counts into one array for the whole volume (2.06 bits a voxel), and counts
//      its runs. A prefix sum over slabs gives each slab its first run index, so the parent array
//      is allocated once, exactly, in global indices.
//   B. Unions inside each slab: every row with every earlier row of the same slab, path halving.
//   C. Seams: the rows of a slab whose earlier rows lie in earlier slabs (its first ny + 1 rows),
//      in parallel over slabs, with a lock-free union (compare-and-swap of a root to a smaller
//      root) and no path compression, so every non-root still points into its own slab; each root
//      a seam re-parents is recorded.
//   D. Numbering: each slab ranks its roots in index order (entry := flag | rank); a prefix sum over
//      slabs gives each slab its first label; the recorded roots get their component's label, in
//      parallel. Labels are 1..N in raster order of each component's first voxel.
//      A lone slab (one thread, or a small volume) without statistics skips this pass: phase E
//      gives each root the next label as it meets it in index order.
//   E. Each slab resolves its runs' labels in index order (a run's parent is a smaller index of the
//      same slab, already resolved, or it carries its label), writes its label rows once (16-byte
//      fills), and accumulates the statistics per run (count, coordinate sums in closed form,
//      bounding box): labels first seen in the slab go straight to the output records, labels of
//      earlier slabs to a side array merged at the end.
// Large arrays (the bit rows, the parent array, the caller's label volume) are asked for
// transparent huge pages: page faults are otherwise a fifth of the time.
//
// Complexity: O(voxels) to read the input (once; multi-label pairing reads the touching rows again
// where both are foreground), O(voxels / 64) word operations per earlier row, O(pairs * alpha)
// union-find, O(runs) numbering, O(voxels) label writes. Memory: 2.06 bits a voxel, one parent per
// run (32-bit when the volume's rows could hold fewer than 2^31 runs, else 64-bit); no
// provisional label volume. Output contract: labels 1..N in raster order (x fastest), the
// statistics of the same pass (VolumeComponentSums), identical for any number of threads.
//
// This header is the whole algorithm; label_volume_u8.cpp, _u16, _u32 and _u64 each instantiate it for
// one voxel type, so the four compile in parallel.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "common/huge_pages.hpp"
#include "common/threads.hpp"
#include "label/backends.hpp"
#include "label/cpu/row_bits.hpp"
#include "label/cpu/row_runs.hpp"
#include "winnow/error.hpp"

namespace winnow::detail::cpu {

namespace {

// Threads get at least this many voxels each (thread start-up and the seams cost more below).
constexpr std::int64_t kVoxelsPerThread = std::int64_t{1} << 18;
// Slabs per thread: more than one, so a descheduled thread leaves its later slabs to the others.
constexpr std::int64_t kSlabsPerThread = 4;

struct FreeDeleter {
  void operator()(void* q) const { std::free(q); }
};

/// An uninitialised array of trivial values; from 4 MiB on, 2 MiB-aligned and asked for
/// transparent huge pages (first touched by the threads that write it).
template <class U>
class Array {
 public:
  Array() = default;
  explicit Array(std::size_t n) {
    const std::size_t bytes = std::max<std::size_t>(n, 1) * sizeof(U);
    constexpr std::size_t kHuge = std::size_t{2} << 20;
    void* q = nullptr;
    if (bytes >= 2 * kHuge) {
      q = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
      advise_huge_pages(q, bytes);
    } else {
      q = std::malloc(bytes);
    }
    if (!q) throw std::bad_alloc();
    data_.reset(static_cast<U*>(q));
  }
  U* data() { return data_.get(); }
  const U* data() const { return data_.get(); }
  U& operator[](std::size_t i) { return data_.get()[i]; }
  const U& operator[](std::size_t i) const { return data_.get()[i]; }

 private:
  std::unique_ptr<U, FreeDeleter> data_;
};

/// The bit rows of one row and the global index of its first run: the run holding foreground
/// voxel x is first + (starts at or before x) - 1.
template <class Idx>
struct RowBits {
  const std::uint64_t* f;
  const std::uint64_t* s;
  const std::uint32_t* before;
  Idx first;
  std::uint32_t runs;
  [[gnu::always_inline]] Idx run_at(std::uint32_t x) const {
    const std::uint32_t w = x >> 6;
    return first + before[w] +
           static_cast<std::uint32_t>(__builtin_popcountll(s[w] & (~std::uint64_t{0} >> (63 - (x & 63))))) - 1;
  }
};

/// Bit rows of every row of the volume: per row F (nw words), then S (nw words); counts of starts
/// before each word; runs per row and the global index of each row's first run.
template <class Idx>
struct Bits {
  std::int64_t nw = 0;
  Array<std::uint64_t> words;
  Array<std::uint32_t> before;
  Array<Idx> first;  // rows + 1 entries once the slabs' bases are known
  Array<std::uint32_t> runs;
  std::vector<std::uint64_t> zeros;  // the bit rows and counts of an empty row (2 * nw words)
  RowBits<Idx> row(std::int64_t r) const {
    const std::uint64_t* f = words.data() + static_cast<std::size_t>(r * 2 * nw);
    return {f, f + nw, before.data() + static_cast<std::size_t>(r * nw), first[static_cast<std::size_t>(r)],
            runs[static_cast<std::size_t>(r)]};
  }
  RowBits<Idx> empty_row() const {
    return {zeros.data(), zeros.data(), reinterpret_cast<const std::uint32_t*>(zeros.data()), 0, 0};
  }
};

/// The earlier rows of row b, in slot order: 0 = (y-1, z), 1 = (y, z-1), 2 = (y-1, z-1),
/// 3 = (y+1, z-1). A slot without a row (outside the volume) reads an empty row.
template <class V, class Idx>
struct EarlierRows {
  RowBits<Idx> row[4];
  const V* values[4];
};

/// Calls join(run of b, run of a) for the pairs of touching runs of row b and its earlier rows
/// (slots whose bit is set in `use`), word by word: runs that overlap in x (multi-label: at voxels
/// of equal value) and, where the connectivity widens a slot (see the table above), runs of which
/// one ends at x and the other starts at x + 1 (multi-label: of the same value). Each such pair once,
/// except the pairs implied by others, which are left out (the decision-tree idea of Wu, Otoo,
/// Suzuki and of cc3d, on words). Pairs of b with (y, z-1), slot 1, are never left out; a pair of
/// b at x with another slot's run at x' is implied when (y, z-1) holds b's value at x':
///   - 6-connectivity: (y-1, z) at x' = x, when (y-1, z-1) holds it too ((y-1, z) and (y, z-1) are
///     joined through it);
///   - 18 and 26: (y-1, z), (y-1, z-1), (y+1, z-1) at x' (x or x +- 1), each an edge or face
///     neighbour of (y, z-1) at x', itself a neighbour of b at x.
/// By induction on z, every pair left out is joined through pairs that are made (in whichever
/// phase makes them).
template <int Conn, bool Multi, class V, class Idx, class Join>
[[gnu::always_inline]] inline void touching_pairs(const RowBits<Idx>& b, const EarlierRows<V, Idx>& e, unsigned use,
                                                  std::int64_t nw, std::int64_t nx, const V* vb, Join&& join) {
  constexpr int kSlots = Conn == 6 ? 2 : 4;
  constexpr int kOverlaps = Conn == 6 ? 3 : 4;  // slot 2's overlap serves slot 0's rule at 6-connectivity
  constexpr bool kWiden[4] = {Conn != 6, Conn != 6, Conn == 26, Conn == 26};
  std::uint64_t carry_c[4] = {0, 0, 0, 0}, carry_ea[4] = {0, 0, 0, 0}, carry_f1 = 0;
  const auto pair_at = [&](std::uint64_t m, std::uint32_t x0, const RowBits<Idx>& a, int dx) {
    while (m) {
      const auto x = x0 + static_cast<std::uint32_t>(__builtin_ctzll(m));
      join(b.run_at(x), a.run_at(static_cast<std::uint32_t>(static_cast<int>(x) + dx)));
      m &= m - 1;
    }
  };
  for (std::int64_t w = 0; w < nw; ++w) {
    const std::uint64_t fb = b.f[w], sb = b.s[w];
    const auto x0 = static_cast<std::uint32_t>(w * 64);
    const int n = static_cast<int>(std::min<std::int64_t>(64, nx - x0));
    // Overlaps of b with each earlier row (multi-label: of equal values).
    std::uint64_t c[4] = {0, 0, 0, 0};
#pragma GCC unroll 4
    for (int t = 0; t < kOverlaps; ++t) {
      c[t] = fb & e.row[t].f[w];
      if constexpr (Multi)
        if (c[t]) c[t] = keep_equal(c[t], vb, e.values[t], x0, n, nx, 0);
    }
    std::uint64_t pairs[4];
#pragma GCC unroll 4
    for (int t = 0; t < kSlots; ++t) {
      pairs[t] = c[t] & (~((c[t] << 1) | carry_c[t]) | sb | e.row[t].s[w]);
      carry_c[t] = c[t] >> 63;
    }
    if constexpr (Conn == 6) {
      pairs[0] &= ~(c[1] & c[2]);
    } else {
      pairs[0] &= ~c[1], pairs[2] &= ~c[1], pairs[3] &= ~c[1];
    }
    // Slot 1 first: b then mostly shares the root the other slots' runs already have.
    if (use & 2u) pair_at(pairs[1], x0, e.row[1], 0);
    if (use & 1u) pair_at(pairs[0], x0, e.row[0], 0);
    if constexpr (Conn != 6) {
      if (use & 4u) pair_at(pairs[2], x0, e.row[2], 0);
      if (use & 8u) pair_at(pairs[3], x0, e.row[3], 0);
      const bool more = w + 1 < nw;
      const std::uint64_t fb1 = more ? b.f[w + 1] << 63 : 0, sb1 = more ? b.s[w + 1] << 63 : 0;
      // Last voxels of b's runs: foreground, and x + 1 not in the same run.
      const std::uint64_t eb = fb & ~(((fb >> 1) | fb1) & ~((sb >> 1) | sb1));
      // Where (y, z-1) holds b's value at x + 1 and at x - 1 (computed when first needed).
      const std::uint64_t f1 = e.row[1].f[w];
      const std::uint64_t f1_left = (f1 << 1) | carry_f1;
      carry_f1 = f1 >> 63;
      bool have_side = false;
      std::uint64_t side_right = 0, side_left = 0;
      const auto sides = [&] {
        if (have_side) return;
        have_side = true;
        const std::uint64_t f1_right = (f1 >> 1) | (more ? e.row[1].f[w + 1] << 63 : 0);
        side_right = fb & f1_right, side_left = fb & f1_left;
        if constexpr (Multi) {
          if (side_right) side_right = keep_equal(side_right, vb, e.values[1], x0, n, nx, 1);
          if (side_left) side_left = keep_equal(side_left, vb, e.values[1], x0, n, nx, -1);
        }
      };
#pragma GCC unroll 4
      for (int i = 0; i < kSlots; ++i) {
        const int t = i == 0 ? 1 : i == 1 ? 0 : i;  // slot 1 first, as above
        if (!kWiden[t]) continue;
        const RowBits<Idx>& a = e.row[t];
        const std::uint64_t fa = a.f[w], sa = a.s[w];
        const std::uint64_t fa1 = more ? a.f[w + 1] << 63 : 0, sa1 = more ? a.s[w + 1] << 63 : 0;
        const std::uint64_t sa_right = (sa >> 1) | sa1;  // bit x: an a-run starts at x + 1
        const std::uint64_t ea = fa & ~(((fa >> 1) | fa1) & ~sa_right);
        std::uint64_t right = eb & sa_right;                  // b-run ends at x, a-run starts at x + 1
        std::uint64_t left = sb & ((ea << 1) | carry_ea[t]);  // b-run starts at x, a-run ends at x - 1
        carry_ea[t] = ea >> 63;
        if (!(use >> t & 1) || !(right | left)) continue;
        if constexpr (Multi) {
          if (right) right = keep_equal(right, vb, e.values[t], x0, n, nx, 1);
          if (left) left = keep_equal(left, vb, e.values[t], x0, n, nx, -1);
        }
        if (t != 1 && (right | left)) {
          sides();
          right &= ~side_right, left &= ~side_left;
        }
        pair_at(right, x0, a, 1);
        pair_at(left, x0, a, -1);
      }
    }
  }
}

/// Statistics of the labels first seen in an earlier slab, accumulated in a zeroed side array.
struct ForeignSums {
  std::uint64_t voxels, sx, sy, sz;
  std::int64_t min_x, max_x, min_y, max_y, min_z, max_z;
};

/// The runs [st[i], en[i]) of a row from its bit rows; returns their number.
inline std::uint32_t runs_of(const std::uint64_t* f, const std::uint64_t* s, std::int64_t nw, std::uint32_t* st,
                             std::uint32_t* en) {
  std::uint32_t ns = 0, ne = 0;
  for (std::int64_t w = 0; w < nw; ++w) {
    const bool more = w + 1 < nw;
    const std::uint64_t f1 = more ? f[w + 1] << 63 : 0, s1 = more ? s[w + 1] << 63 : 0;
    const std::uint64_t last = f[w] & ~(((f[w] >> 1) | f1) & ~((s[w] >> 1) | s1));
    const auto base = static_cast<std::uint32_t>(w * 64);
    ns = append_bit_positions(s[w], base, st, ns);
    ne = append_bit_positions(last, base + 1, en, ne);
  }
  return ns;
}

/// What the union phases of one volume share. V is the voxel type for multi-label input (its
/// values are compared) and std::uint8_t for binary input (the values are never read).
template <class V, class Idx>
struct Unions {
  const Bits<Idx>* bits;
  Idx* p;
  const V* data;  // multi-label: the volume's voxels
  std::int64_t nx, ny, row_stride, slice_stride;
  int connectivity;
  const V* values(std::int64_t r) const { return data + (r / ny) * slice_stride + (r % ny) * row_stride; }
};

/// The earlier rows of row r (slots as in EarlierRows): which exist (bit t), and their bit rows.
template <bool Multi, class V, class Idx>
[[gnu::always_inline]] inline unsigned earlier_rows(const Unions<V, Idx>& u, std::int64_t r, EarlierRows<V, Idx>& e) {
  const std::int64_t y = r % u.ny, ny = u.ny;
  const bool z = r >= ny;
  const std::int64_t q[4] = {y > 0 ? r - 1 : -1, z ? r - ny : -1, z && y > 0 ? r - ny - 1 : -1,
                             z && y + 1 < ny ? r - ny + 1 : -1};
  unsigned exists = 0;
#pragma GCC unroll 4
  for (int t = 0; t < 4; ++t) {
    if (q[t] >= 0) {
      e.row[t] = u.bits->row(q[t]);
      e.values[t] = Multi ? u.values(q[t]) : nullptr;
      exists |= (e.row[t].runs > 0 ? 1u : 0u) << t;
    } else {
      e.row[t] = u.bits->empty_row();
      e.values[t] = nullptr;
    }
  }
  return exists;
}

/// The slots of row r whose rows lie at or after r0 (inside the slab).
inline unsigned slots_from(std::int64_t r, std::int64_t ny, std::int64_t r0) {
  return (r - 1 >= r0 ? 1u : 0u) | (r - ny >= r0 ? 2u : 0u) | (r - ny - 1 >= r0 ? 4u : 0u) |
         (r - ny + 1 >= r0 ? 8u : 0u);
}

/// Phase B for rows [r0, r1) of one slab: each row's runs numbered, then united with the touching
/// runs of the slab's earlier rows, with path halving.
template <int Conn, bool Multi, class V, class Idx>
[[gnu::always_inline]] inline void unite_slab(const Unions<V, Idx>& u, std::int64_t r0, std::int64_t r1) {
  Idx* p = u.p;
  const auto join = [p](Idx kb, Idx ka) {
    Idx rb = p[kb], ra = p[ka];
    if (ra == rb) return;
    rb = find_halving(p, rb);
    ra = find_halving(p, ra);
    const Idx root = std::min(ra, rb);
    p[std::max(ra, rb)] = root;
    p[kb] = root, p[ka] = root;
  };
  EarlierRows<V, Idx> e;
  for (std::int64_t r = r0; r < r1; ++r) {
    const RowBits<Idx> b = u.bits->row(r);
    for (std::uint32_t i = 0; i < b.runs; ++i) p[b.first + i] = static_cast<Idx>(b.first + i);
    if (b.runs == 0) continue;
    const unsigned use = earlier_rows<Multi>(u, r, e) & slots_from(r, u.ny, r0);  // the others: phase C
    if (use == 0) continue;
    touching_pairs<Conn, Multi>(b, e, use, u.bits->nw, u.nx, Multi ? u.values(r) : nullptr, join);
  }
}

/// Phase C for one slab: its rows whose earlier rows lie before r0, united with those rows with a
/// lock-free union and no path compression; every root re-parented goes to `moved`.
template <int Conn, bool Multi, class V, class Idx>
[[gnu::always_inline]] inline void unite_seam(const Unions<V, Idx>& u, std::int64_t r0, std::int64_t r1,
                                              std::vector<Idx>& moved) {
  Idx* p = u.p;
  const auto root = [p](Idx a) {
    for (;;) {
      const Idx q = std::atomic_ref<Idx>(p[a]).load(std::memory_order_relaxed);
      if (q == a) return a;
      a = q;
    }
  };
  const auto join = [&](Idx kb, Idx ka) {
    for (;;) {
      Idx rb = root(kb), ra = root(ka);
      if (ra == rb) return;
      if (ra < rb) std::swap(ra, rb);  // ra: the larger root, linked under rb
      Idx expected = ra;
      if (std::atomic_ref<Idx>(p[ra]).compare_exchange_strong(expected, rb, std::memory_order_relaxed)) {
        moved.push_back(ra);
        return;
      }
    }
  };
  EarlierRows<V, Idx> e;
  for (std::int64_t r = r0; r < std::min(r1, r0 + u.ny + 1); ++r) {
    const RowBits<Idx> b = u.bits->row(r);
    if (b.runs == 0) continue;
    const unsigned use = earlier_rows<Multi>(u, r, e) & ~slots_from(r, u.ny, r0);  // the others: phase B
    if (use == 0) continue;
    touching_pairs<Conn, Multi>(b, e, use, u.bits->nw, u.nx, Multi ? u.values(r) : nullptr, join);
  }
}

/// Phase B (moved == nullptr) or C for one slab, any connectivity.
template <bool Multi, class V, class Idx>
[[gnu::always_inline]] inline void unite_any(const Unions<V, Idx>& u, std::int64_t r0, std::int64_t r1,
                                             std::vector<Idx>* moved) {
  if (!moved) {
    if (u.connectivity == 6) unite_slab<6, Multi>(u, r0, r1);
    else if (u.connectivity == 18) unite_slab<18, Multi>(u, r0, r1);
    else unite_slab<26, Multi>(u, r0, r1);
  } else {
    if (u.connectivity == 6) unite_seam<6, Multi>(u, r0, r1, *moved);
    else if (u.connectivity == 18) unite_seam<18, Multi>(u, r0, r1, *moved);
    else unite_seam<26, Multi>(u, r0, r1, *moved);
  }
}

/// Phase A for rows [r0, r1): bit rows and runs per row; returns the slab's runs.
template <class T, bool Multi, class Idx>
[[gnu::always_inline]] inline std::uint64_t bit_rows(const VolumeView<const T>& vol, Bits<Idx>& bits, std::int64_t r0,
                                                     std::int64_t r1) {
  const std::int64_t nw = bits.nw, ny = vol.ny;
  std::uint64_t count = 0;
  for (std::int64_t r = r0; r < r1; ++r) {
    std::uint64_t* f = bits.words.data() + static_cast<std::size_t>(r * 2 * nw);
    const std::uint32_t n = row_bits<T, Multi>(vol.row(r % ny, r / ny), vol.nx, f, f + nw,
                                               bits.before.data() + static_cast<std::size_t>(r * nw));
    bits.runs[static_cast<std::size_t>(r)] = n;
    count += n;
  }
  return count;
}

// The ranks and counts are popcounts. The library is built for the x86-64 baseline, where
// __builtin_popcountll is a libgcc call; every x86-64 CPU since 2008 has the POPCNT instruction, so
// phases A to C are compiled a second time for it (flattened: the lambdas they call are inlined
// and compiled with the instruction too) and chosen at run time.
#if defined(__x86_64__) && !defined(__POPCNT__) && defined(__GNUC__) && !defined(__clang__)
#define WINNOW_POPCNT_DISPATCH 1
inline bool cpu_has_popcnt() {
  static const bool has = __builtin_cpu_supports("popcnt");
  return has;
}
template <bool Multi, class V, class Idx>
[[gnu::target("popcnt"), gnu::flatten]] void unite_popcnt(const Unions<V, Idx>& u, std::int64_t r0, std::int64_t r1,
                                                          std::vector<Idx>* moved) {
  unite_any<Multi>(u, r0, r1, moved);
}
template <class T, bool Multi, class Idx>
[[gnu::target("popcnt"), gnu::flatten]] std::uint64_t bit_rows_popcnt(const VolumeView<const T>& vol, Bits<Idx>& bits,
                                                                      std::int64_t r0, std::int64_t r1) {
  return bit_rows<T, Multi>(vol, bits, r0, r1);
}
#else
inline bool cpu_has_popcnt() { return false; }  // the build already has the instruction, or none exists
#endif
template <bool Multi, class V, class Idx>
[[gnu::flatten]] void unite_plain(const Unions<V, Idx>& u, std::int64_t r0, std::int64_t r1, std::vector<Idx>* moved) {
  unite_any<Multi>(u, r0, r1, moved);
}
template <class T, bool Multi, class Idx>
[[gnu::flatten]] std::uint64_t bit_rows_plain(const VolumeView<const T>& vol, Bits<Idx>& bits, std::int64_t r0,
                                              std::int64_t r1) {
  return bit_rows<T, Multi>(vol, bits, r0, r1);
}
template <bool Multi, class V, class Idx>
void unite_phase(const Unions<V, Idx>& u, std::int64_t r0, std::int64_t r1, std::vector<Idx>* moved) {
#ifdef WINNOW_POPCNT_DISPATCH
  if (cpu_has_popcnt()) return unite_popcnt<Multi>(u, r0, r1, moved);
#endif
  unite_plain<Multi>(u, r0, r1, moved);
}
template <class T, bool Multi, class Idx>
std::uint64_t bit_rows_phase(const VolumeView<const T>& vol, Bits<Idx>& bits, std::int64_t r0, std::int64_t r1) {
#ifdef WINNOW_POPCNT_DISPATCH
  if (cpu_has_popcnt()) return bit_rows_popcnt<T, Multi>(vol, bits, r0, r1);
#endif
  return bit_rows_plain<T, Multi>(vol, bits, r0, r1);
}

/// What phase E of one volume shares. V: the voxel type for multi-label input (the statistics
/// record each component's value), std::uint8_t for binary input.
template <class V, class Idx, class Label>
struct Writes {
  const Bits<Idx>* bits;
  Idx* p;
  VolumeView<const V> vol;  // multi-label: the volume
  VolumeView<Label> labels;
  const std::vector<std::uint64_t>* lab_lo;
  bool labels_zero;          // the labels hold zeros: only runs are written
  VolumeComponentSums* own;  // statistics, or null
  std::vector<std::unique_ptr<ForeignSums, FreeDeleter>>* foreign;
  std::vector<std::vector<Idx>>* foreign_seen;
};

/// Phase E for one slab (rows [r0, r1)): its runs' labels resolved in index order, its label rows
/// written, its statistics accumulated. Numbered (the volume's only slab, no statistics): phase D
/// is left out and the roots take labels 1, 2, ... as they are met in index order here, into
/// *numbered (the count).
template <bool Multi, bool Numbered = false, class V, class Idx, class Label>
void write_slab(const Writes<V, Idx, Label>& wr, std::int64_t s, std::int64_t r0, std::int64_t r1,
                std::uint64_t* numbered = nullptr) {
  constexpr Idx kFlag = Idx{1} << (sizeof(Idx) * 8 - 1);
  constexpr Idx kMask = kFlag - 1;
  Idx* p = wr.p;
  const std::int64_t nx = wr.labels.nx, ny = wr.labels.ny, nw = wr.bits->nw;
  const bool want = wr.own != nullptr;
  const std::uint64_t lo = (*wr.lab_lo)[static_cast<std::size_t>(s)];
  const auto lo1 = static_cast<Idx>(lo + 1);
  ForeignSums* fa = want ? (*wr.foreign)[static_cast<std::size_t>(s)].get() : nullptr;
  std::vector<Idx>* seen = want ? &(*wr.foreign_seen)[static_cast<std::size_t>(s)] : nullptr;
  VolumeComponentSums* own = wr.own;
  const auto nx32 = static_cast<std::uint32_t>(nx);
  const std::size_t room = static_cast<std::size_t>(Multi ? nx + 1 : nx / 2 + 2);
  std::unique_ptr<std::uint32_t[]> st(new std::uint32_t[room]), en(new std::uint32_t[room]);
  for (std::int64_t r = r0; r < r1; ++r) {
    const RowBits<Idx> rb = wr.bits->row(r);
    const std::int64_t y = r % ny, z = r / ny;
    Label* out = wr.labels.row(y, z);
    if (rb.runs == 0) {
      if (wr.labels_zero) continue;
      if constexpr (std::is_same_v<Label, std::uint32_t>) fill_over(out, 0, nx32, nx32, 0);
      else std::fill(out, out + nx, Label{0});
      continue;
    }
    runs_of(rb.f, rb.s, nw, st.get(), en.get());
    const V* in = Multi && want ? wr.vol.row(y, z) : nullptr;
    // Labels that hold zeros already get their runs only. Otherwise rows of short runs (4 voxels
    // or fewer on average) are zeroed first, then each run is one 16-byte store and the zeros
    // after it another (no loop whose exit mispredicts); rows of longer runs write each gap and
    // each run with 16-byte fills.
    bool scatter = wr.labels_zero;
    if constexpr (std::is_same_v<Label, std::uint32_t>) {
      if (!scatter) {
        std::uint32_t covered = 0;
        for (std::uint32_t i = 0; i < rb.runs; ++i) covered += en[i] - st[i];
        scatter = covered <= 4 * rb.runs;
        if (scatter) std::memset(out, 0, static_cast<std::size_t>(nx) * sizeof(Label));
      }
    }
    std::uint32_t x = 0;
    for (std::uint32_t i = 0; i < rb.runs; ++i) {
      const Idx k = rb.first + i;
      const Idx v = p[k];
      Idx L;
      if constexpr (Numbered) L = v == k ? static_cast<Idx>(++*numbered) : p[v];  // p[v], v < k: a label now
      else L = (v & kFlag) ? static_cast<Idx>((lo1 + v) & kMask) : p[v];          // p[v]: resolved already
      p[k] = L;
      const std::uint32_t a = st[i], b = en[i];
      if constexpr (std::is_same_v<Label, std::uint32_t>) {
        if (scatter) {
          put_run(out, a, b, nx32, static_cast<std::uint32_t>(L));
        } else {
          fill_over(out, x, a, nx32, 0);  // 16-byte stores that may run past b, never past the row
          fill_over(out, a, b, nx32, static_cast<std::uint32_t>(L));
        }
      } else {
        if (!wr.labels_zero) std::fill(out + x, out + a, Label{0});
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
        o.value = Multi ? static_cast<std::uint64_t>(in[a]) : 1;
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
    if constexpr (std::is_same_v<Label, std::uint32_t>) {
      if (!scatter) fill_over(out, x, nx32, nx32, 0);
    } else if (!wr.labels_zero) {
      std::fill(out + x, out + nx, Label{0});
    }
  }
}

/// Phase D. Labels 1..N in index (= raster) order: each slab ranks its roots (entry := kFlag |
/// rank); the roots the seams re-parented get their component's label as an offset from their own
/// slab's first label (mod 2^(bits-1)), so every run resolves inside its slab in phase E. Returns
/// the first label of each slab (lab_lo[s] + 1; lab_lo[nslabs] = N).
template <class Idx>
std::vector<std::uint64_t> number(Idx* p, const std::vector<std::uint64_t>& slab_runs,
                                  const std::vector<std::vector<Idx>>& moved_by_slab, int threads) {
  constexpr Idx kFlag = Idx{1} << (sizeof(Idx) * 8 - 1);
  constexpr Idx kMask = kFlag - 1;
  const auto nslabs = static_cast<std::int64_t>(slab_runs.size()) - 1;
  const bool par = threads > 1;
  std::vector<std::uint64_t> lab_lo(static_cast<std::size_t>(nslabs) + 1, 0);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    const auto k0 = static_cast<Idx>(slab_runs[static_cast<std::size_t>(s)]);
    const auto k1 = static_cast<Idx>(slab_runs[static_cast<std::size_t>(s) + 1]);
    Idx c = 0;
    for (Idx k = k0; k < k1; ++k)
      if (p[k] == k) p[k] = kFlag | c++;
    lab_lo[static_cast<std::size_t>(s) + 1] = c;
  }
  for (std::size_t s = 0; s < static_cast<std::size_t>(nslabs); ++s) lab_lo[s + 1] += lab_lo[s];
  std::vector<Idx> moved;
  for (const auto& m : moved_by_slab) moved.insert(moved.end(), m.begin(), m.end());
  if (moved.empty()) return lab_lo;
  const auto slab_of_run = [&](Idx k) {
    return static_cast<std::size_t>(
        std::upper_bound(slab_runs.begin(), slab_runs.end() - 1, static_cast<std::uint64_t>(k)) - slab_runs.begin() -
        1);
  };
  const auto nm = static_cast<std::int64_t>(moved.size());
  std::vector<Idx> offset(moved.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (par && nm > 4096)
  for (std::int64_t i = 0; i < nm; ++i) {
    Idx g = moved[static_cast<std::size_t>(i)];
    while (!(p[g] & kFlag)) g = p[g];
    const std::uint64_t label = lab_lo[slab_of_run(g)] + (p[g] & kMask) + 1;
    offset[static_cast<std::size_t>(i)] =
        static_cast<Idx>((label - lab_lo[slab_of_run(moved[static_cast<std::size_t>(i)])] - 1) & kMask);
  }
#pragma omp parallel for num_threads(threads) schedule(static) if (par && nm > 4096)
  for (std::int64_t i = 0; i < nm; ++i)
    p[moved[static_cast<std::size_t>(i)]] = kFlag | offset[static_cast<std::size_t>(i)];
  return lab_lo;
}

/// The whole labeling. V: T for multi-label input, std::uint8_t for binary input (see Unions).
template <class T, bool Multi, class Idx, class Label>
std::uint64_t label_runs(const VolumeLabelRequest<T>& req, VolumeView<Label> labels,
                         std::vector<VolumeComponentSums>* sums) {
  using V = std::conditional_t<Multi, T, std::uint8_t>;
  const VolumeView<const T>& vol = req.volume;
  const std::int64_t nx = vol.nx, ny = vol.ny, rows = vol.ny * vol.nz;
  // Threads by size; slabs of at least two slices where the volume allows (the seams then stay a
  // small part of the work).
  const int threads =
      static_cast<int>(std::clamp<std::int64_t>(vol.size() / kVoxelsPerThread, 1, std::max(1, cpu_threads())));
  const bool par = threads > 1;
  std::int64_t nslabs = 1;
  if (req.slab_rows > 0) {
    nslabs = (rows + req.slab_rows - 1) / req.slab_rows;
  } else if (par) {
    const std::int64_t min_rows = vol.nz > 1 ? 2 * ny : 16;
    nslabs = std::clamp<std::int64_t>(rows / min_rows, threads, threads * kSlabsPerThread);
  }
  nslabs = std::clamp<std::int64_t>(nslabs, 1, rows);
  std::vector<std::int64_t> row0(static_cast<std::size_t>(nslabs) + 1);
  for (std::int64_t s = 0; s <= nslabs; ++s) row0[static_cast<std::size_t>(s)] = rows * s / nslabs;
  std::atomic<std::uint64_t> passes_done{0};
  const auto passes = static_cast<std::uint64_t>(2 * nslabs);
  const auto pass_done = [&] {
    if (req.progress) (*req.progress)(passes_done.fetch_add(1) + 1, passes);
  };

  // A. Bit rows; then each row's first run index and one parent array for all runs.
  Bits<Idx> bits;
  bits.nw = (nx + 63) / 64;
  bits.words = Array<std::uint64_t>(static_cast<std::size_t>(rows * 2 * bits.nw));
  bits.before = Array<std::uint32_t>(static_cast<std::size_t>(rows * bits.nw));
  bits.runs = Array<std::uint32_t>(static_cast<std::size_t>(rows));
  bits.first = Array<Idx>(static_cast<std::size_t>(rows) + 1);
  bits.zeros.assign(static_cast<std::size_t>(2 * bits.nw + 1), 0);
  std::vector<std::uint64_t> slab_runs(static_cast<std::size_t>(nslabs) + 1, 0);
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s)
    slab_runs[static_cast<std::size_t>(s) + 1] =
        bit_rows_phase<T, Multi>(vol, bits, row0[static_cast<std::size_t>(s)], row0[static_cast<std::size_t>(s) + 1]);
  for (std::size_t s = 0; s < static_cast<std::size_t>(nslabs); ++s) slab_runs[s + 1] += slab_runs[s];
  auto k = Idx{0};
  for (std::int64_t r = 0; r < rows; ++r) {
    bits.first[static_cast<std::size_t>(r)] = k;
    k = static_cast<Idx>(k + bits.runs[static_cast<std::size_t>(r)]);
  }
  bits.first[static_cast<std::size_t>(rows)] = k;
  Array<Idx> parent(static_cast<std::size_t>(slab_runs.back()));

  // B. Unions inside each slab. C. Seams.
  const Unions<V, Idx> u{
      &bits,           parent.data(), reinterpret_cast<const V*>(vol.data), nx, ny, vol.row_stride, vol.slice_stride,
      req.connectivity};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    unite_phase<Multi>(u, row0[static_cast<std::size_t>(s)], row0[static_cast<std::size_t>(s) + 1],
                       static_cast<std::vector<Idx>*>(nullptr));
    pass_done();
  }
  std::vector<std::vector<Idx>> moved(static_cast<std::size_t>(nslabs));
  if (nslabs > 1) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
    for (std::int64_t s = 1; s < nslabs; ++s)
      unite_phase<Multi>(u, row0[static_cast<std::size_t>(s)], row0[static_cast<std::size_t>(s) + 1],
                         &moved[static_cast<std::size_t>(s)]);
  }

  // D. Numbering (left to phase E for a lone slab without statistics: no pass of its own).
  const bool numbered_in_e = nslabs == 1 && sums == nullptr;
  const std::vector<std::uint64_t> lab_lo =
      numbered_in_e ? std::vector<std::uint64_t>(2, 0) : number(parent.data(), slab_runs, moved, threads);
  std::uint64_t count = lab_lo.back();

  // E. Label rows and statistics.
  std::vector<std::unique_ptr<ForeignSums, FreeDeleter>> foreign(sums ? static_cast<std::size_t>(nslabs) : 0);
  std::vector<std::vector<Idx>> foreign_seen(foreign.size());
  if (sums) {
    sums->assign(count, VolumeComponentSums{});
    for (std::size_t s = 1; s < foreign.size(); ++s) {
      foreign[s].reset(static_cast<ForeignSums*>(std::calloc(lab_lo[s] + 1, sizeof(ForeignSums))));
      if (!foreign[s]) throw std::bad_alloc();
    }
  }
  const VolumeView<const V> values(reinterpret_cast<const V*>(vol.data), nx, ny, vol.nz, vol.row_stride,
                                   vol.slice_stride);
  const Writes<V, Idx, Label> wr{
      &bits,    parent.data(), values, labels, &lab_lo, req.labels_zero, sums ? sums->data() : nullptr,
      &foreign, &foreign_seen};
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (par)
  for (std::int64_t s = 0; s < nslabs; ++s) {
    if (numbered_in_e) write_slab<Multi, true>(wr, s, row0[0], row0[1], &count);
    else write_slab<Multi>(wr, s, row0[static_cast<std::size_t>(s)], row0[static_cast<std::size_t>(s) + 1]);
    pass_done();
  }
  if (sums) {
    VolumeComponentSums* own = sums->data();
    for (std::size_t s = 1; s < foreign.size(); ++s)
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
  const double bound =
      static_cast<double>(per_row) * static_cast<double>(req.volume.ny) * static_cast<double>(req.volume.nz);
  if (bound < req.narrow_run_index_limit) return label_runs<T, Multi, std::uint32_t>(req, labels, sums);
  return label_runs<T, Multi, std::uint64_t>(req, labels, sums);
}

}  // namespace

template <class T>
std::uint64_t label_volume(const VolumeLabelRequest<T>& req, std::vector<VolumeComponentSums>* sums) {
  if (sums) sums->clear();
  if (req.volume.empty()) return 0;
  if (req.volume.nx >= (std::int64_t{1} << 31))
    throw Error("label: rows of 2^31 voxels and more are not supported (nx = " + std::to_string(req.volume.nx) + ")");
  const bool wide = req.labels64.data != nullptr;
  if (req.multilabel) {
    if (wide) return dispatch_index<T, true>(req, req.labels64, sums);
    return dispatch_index<T, true>(req, req.labels32, sums);
  }
  if (wide) return dispatch_index<T, false>(req, req.labels64, sums);
  return dispatch_index<T, false>(req, req.labels32, sums);
}

}  // namespace winnow::detail::cpu
