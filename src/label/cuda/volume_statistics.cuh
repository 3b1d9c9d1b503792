#pragma once
// Pass 5 of the volume labeling, statistics (when asked for), after the labels: each label's voxel
// count, coordinate sums, bounding box and value, in records of RawVolumeComponentStats for the
// labels up to the caller's capacity. First the records' starting values (init_records_kernel); then
// a warp per brick adds up the brick's runs per label in shared memory and flushes each label once
// per brick, with a per-warp carry of its dominant label across bricks (brick_stats_kernel); a
// component that one brick holds whole (its root unmarked) is written by plain stores. A volume of
// many labels a brick takes its bricks in passes of a table's worth of labels, and its records of
// whole components are never filled before (at 512^3 density 0.1, 6-connectivity, 9.4 M records,
// 144 a brick: 1.53 -> 0.88 ms); a volume of fewer takes a brick in one pass, whose labels that
// find no room in the table are flushed alone, by atomics (fewer instructions: the passes' cost
// 0.48 -> 0.54 ms at density 0.5, 18 labels a brick).
#include <cuda_runtime.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "label/cuda/volume_plan.cuh"
#include "label/cuda/volume_rows.cuh"

namespace winnow::detail::cuda {
namespace {

// Whether the statistics take their bricks in passes (brick_stats_kernel): when the volume has
// more than kStatsPassesLabels labels a brick on average, so that the bricks' tables would be
// crowded. The same answer in both kernels, from the count that the numbering left on the device
// (and on the host, from the capacity, whether the count could ask for passes at all).
__host__ __device__ __forceinline__ bool stats_in_passes(std::uint64_t records, const VolGeo& g) {
  return records > std::uint64_t{g.nbricks} * VolumeTuning::kStatsPassesLabels;
}

// The starting values of the records (sums 0, minima all ones, maxima 0, the value: 1 in a binary
// volume, the root's in a multi-label one). Taken in one pass, every record is filled: a binary
// volume's as consecutive 8-byte words (coalesced stores; a record written whole later is simply
// overwritten), a multi-label one's by a thread per row word over its roots, with the root's value.
// Taken in passes, only the records that several bricks add to are filled, those of the roots that
// the merge (or a layer tile's local pass) linked others under (marked in RowMarks; the roots' bits
// are columns, or runs in the run forest, whose marks' upper half never meets a root bit); of the
// rest, a multi-label volume's take only their value here, all else comes from plain stores.
template <class T>
__global__ void __launch_bounds__(kThreads)
    init_records_kernel(const T* vol, const RowWord* rows, const RowMarks* marks, const std::uint32_t* offsets,
                        VolGeo g, RawVolumeComponentStats* st, std::uint64_t cap, const std::uint32_t* d_count,
                        bool multilabel) {
  grid_dependency_wait();  // launched by launch_dependent
  static_assert(sizeof(RawVolumeComponentStats) == 64 && offsetof(RawVolumeComponentStats, min_x) == 32 &&
                    offsetof(RawVolumeComponentStats, value) == 56,
                "the record's words below");
  const std::uint64_t words = std::uint64_t{g.nbx} * g.ny * g.nz;
  const std::uint64_t records = min(cap, std::uint64_t{*d_count});
  const bool passes = stats_in_passes(records, g);
  if (!multilabel && !passes) {
    auto* record_words = reinterpret_cast<unsigned long long*>(st);
    for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x; i < records * 8;
         i += static_cast<std::uint64_t>(gridDim.x) * kThreads) {
      const unsigned word = static_cast<unsigned>(i % 8);
      // word 4: min_x, min_y; 5: min_z, max_x; 6: max_y, max_z; 7: value (little-endian halves)
      record_words[i] = word == 4 ? ~0ull : word == 5 ? 0xFFFFFFFFull : word == 7 ? 1ull : 0ull;
    }
    return;
  }
  for (std::uint64_t w = blockIdx.x * static_cast<std::uint64_t>(kThreads) + threadIdx.x; w < words;
       w += static_cast<std::uint64_t>(gridDim.x) * kThreads) {
    const unsigned roots = rows[w].roots, spans = marks[w].spans;
    if (!roots || (!multilabel && !(roots & spans))) continue;
    std::uint32_t number = offsets[w] + 1;
    const std::uint32_t row_key =
        static_cast<std::uint32_t>(w / g.nbx) * g.nx + static_cast<std::uint32_t>(w % g.nbx) * kBX;
    for (unsigned bits = roots; bits && number <= cap; bits &= bits - 1, ++number) {
      const int k = __ffs(bits) - 1;
      // A multi-label volume has no run forest: bit k is column k.
      const std::uint64_t value =
          multilabel ? static_cast<std::uint64_t>(vol[row_key + static_cast<std::uint32_t>(k)]) : 1u;
      auto* q = reinterpret_cast<ulonglong2*>(st + (number - 1));
      if (!passes || (spans >> k & 1u)) {
        q[0] = ulonglong2{0, 0};
        q[1] = ulonglong2{0, 0};
        q[2] = ulonglong2{~0ull, 0xFFFFFFFFull};  // min_x, min_y; min_z, max_x
        q[3] = ulonglong2{0, value};              // max_y, max_z; value
      } else {
        st[number - 1].value = value;  // multi-label: the rest from the plain stores
      }
    }
  }
}

// Sums of part of a component (exact integers).
struct Acc {
  std::uint64_t voxels = 0, sx = 0, sy = 0, sz = 0;
  std::uint32_t mnx = 0xFFFFFFFFu, mny = 0xFFFFFFFFu, mnz = 0xFFFFFFFFu, mxx = 0, mxy = 0, mxz = 0;
};

__device__ void add_to_record(RawVolumeComponentStats& s, const Acc& a) {
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.voxels), static_cast<unsigned long long>(a.voxels));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_x), static_cast<unsigned long long>(a.sx));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_y), static_cast<unsigned long long>(a.sy));
  atomicAdd(reinterpret_cast<unsigned long long*>(&s.sum_z), static_cast<unsigned long long>(a.sz));
  atomicMin(&s.min_x, a.mnx);
  atomicMin(&s.min_y, a.mny);
  atomicMin(&s.min_z, a.mnz);
  atomicMax(&s.max_x, a.mxx);
  atomicMax(&s.max_y, a.mxy);
  atomicMax(&s.max_z, a.mxz);
}

__device__ __forceinline__ void merge_acc(Acc& c, const Acc& a) {
  c.voxels += a.voxels, c.sx += a.sx, c.sy += a.sy, c.sz += a.sz;
  c.mnx = min(c.mnx, a.mnx), c.mny = min(c.mny, a.mny), c.mnz = min(c.mnz, a.mnz);
  c.mxx = max(c.mxx, a.mxx), c.mxy = max(c.mxy, a.mxy), c.mxz = max(c.mxz, a.mxz);
}

// Writes a whole record with plain 16-byte stores (the record is 16-byte aligned): all of it in a
// binary volume (value 1), all but its value in a multi-label one (init_records_kernel's).
__device__ __forceinline__ void write_record(RawVolumeComponentStats& s, const Acc& a, bool multilabel) {
  auto* q = reinterpret_cast<ulonglong2*>(&s);
  q[0] = ulonglong2{a.voxels, a.sx};
  q[1] = ulonglong2{a.sy, a.sz};
  q[2] = ulonglong2{a.mnx | static_cast<unsigned long long>(a.mny) << 32, a.mnz | static_cast<unsigned long long>(a.mxx)
                                                                                      << 32};
  const unsigned long long max_yz = a.mxy | static_cast<unsigned long long>(a.mxz) << 32;
  if (multilabel) reinterpret_cast<unsigned long long*>(q + 3)[0] = max_yz;
  else q[3] = ulonglong2{max_yz, 1};
}

// Statistics, after the labels: a warp per brick adds up its runs per label in a table in shared
// memory and flushes each label once per brick, so a component costs a flush per brick it touches
// (a voxel-by-voxel pass over a volume of many small components spends most of its time in the
// flushes of single voxels). The runs: in a binary volume of several layers, the stretches of
// foreground of the row words; otherwise the stretches of one label, from the labels themselves,
// read a row at a time by the warp (in a multi-label volume two touching voxels of different
// values are different components, so a stretch of foreground may hold several runs). A run's
// label is read at its first voxel, but for a root run of the row words in passes: its label is its
// number, from its word's offset and root bits. At 512^3 density 0.1, 6-connectivity, most runs
// are roots, and the read back of their labels (a lane a row, so a sector a load) was the kernel's
// largest stall (H200, call 68); without it the statistics took 0.735 -> 0.694 ms (call 70).
// A table slot: the label, the run sums packed in two 32-bit words (voxel count and the sum of x;
// the sums of y and z -- relative to the brick's origin, fields wide enough for a whole brick: no
// carries across them), and the columns, rows and layers it covers as bit masks in two more; a lane
// adds a run with two 32-bit atomic adds and two 32-bit atomic ors, each one instruction (a 64-bit
// add or or in shared memory is a loop of compare-and-swap). These memory operations bound the
// pass, so the packing cuts them. A component that the brick holds whole (its root is in the brick
// and no merge united it with another brick's) sets the top bit of the second sums word, added once
// (by its root run's insert), and is written with four plain stores instead of ten atomics.
// A run that finds no free slot within kProbes (a brick of more labels than the table holds) is
// flushed alone, by atomics, when the brick goes in one pass, or left for the next pass when it goes
// in passes (stats_in_passes). A component that spans many bricks would still take a flush per
// brick, all onto one record: the warp keeps a carry label (the largest spanning one of a brick
// where the carry is absent) whose records it adds up in registers, in the lane of its slot, and
// flushes when the carry changes and at the end.
constexpr int kStatsWarps = VolumeTuning::kStatsWarps, kStatsSlots = VolumeTuning::kStatsSlots;
constexpr int kProbes = VolumeTuning::kStatsProbes;
struct BrickRecords {
  unsigned long long sums[kStatsSlots];   // RunSums<B>, each half its own 32-bit word
  unsigned long long cover[kStatsSlots];  // bit x - x0; bit 32 + y - y0 and 32 + kY + z - z0
  std::uint32_t label[kStatsSlots];
};
// In passes: the table and its occupied slots, listed for the flush.
struct ListedBrickRecords : BrickRecords {
  std::uint8_t listed[kStatsSlots];
};
static_assert(kStatsSlots <= 256, "a slot's number fits a byte");
template <bool kPasses>
using BrickTable = std::conditional_t<kPasses, ListedBrickRecords, BrickRecords>;

// The fields of a brick's packed run sums, each as wide as its largest sum over a whole brick: the
// voxel count and the sum of x in the low word, the sums of y and z in the high one, whose top bit
// (kWhole) marks a component that the brick holds whole.
template <class B>
struct RunSums {
  static constexpr int kN = std::bit_width(static_cast<unsigned>(B::kVoxels));
  static constexpr int kX = std::bit_width(static_cast<unsigned>(B::kRows * (kBX - 1) * kBX / 2));
  static constexpr int kY = std::bit_width(static_cast<unsigned>(B::kVoxels * (B::kY - 1)));
  static constexpr int kZ = std::bit_width(static_cast<unsigned>(B::kVoxels * (B::kZ - 1)));
  static_assert(kN + kX <= 32 && kY + kZ <= 31, "a brick's sums fit two words and the whole bit");
  static constexpr unsigned long long kWhole = 1ull << 63;
  __device__ static unsigned long long pack(std::uint32_t n, std::uint32_t sx, std::uint32_t sy, std::uint32_t sz) {
    return (n | sx << kN) | static_cast<unsigned long long>(sy | sz << kY) << 32;
  }
  __device__ static std::uint32_t field(unsigned long long w, int shift, int bits) {
    return static_cast<std::uint32_t>(w >> shift) & ((1u << bits) - 1u);
  }
  __device__ static std::uint32_t n(unsigned long long w) { return field(w, 0, kN); }
  __device__ static std::uint32_t x(unsigned long long w) { return field(w, kN, kX); }
  __device__ static std::uint32_t y(unsigned long long w) { return kY ? field(w, 32, kY) : 0u; }
  __device__ static std::uint32_t z(unsigned long long w) { return kZ ? field(w, 32 + kY, kZ) : 0u; }
  __device__ static bool whole(unsigned long long w) { return (w & kWhole) != 0; }
};

// A slot (packed sums relative to the brick's origin, coverage masks) as global sums and ranges.
template <class B>
__device__ __forceinline__ Acc brick_acc(unsigned long long sums, unsigned long long cover, std::uint32_t x0,
                                         std::uint32_t y0, std::uint32_t z0) {
  static_assert(B::kY + (B::kZ > 1 ? B::kZ : 0) <= 32, "rows and layers share the cover's upper word");
  using S = RunSums<B>;
  constexpr unsigned kRowBits = B::kY == 32 ? kFull : (1u << B::kY) - 1;
  const auto columns = static_cast<unsigned>(cover), rows_layers = static_cast<unsigned>(cover >> 32);
  const std::uint32_t n = S::n(sums);
  Acc a;
  a.voxels = n;
  a.sx = S::x(sums) + std::uint64_t{n} * x0, a.sy = S::y(sums) + std::uint64_t{n} * y0;
  a.sz = S::z(sums) + std::uint64_t{n} * z0;
  a.mnx = x0 + __ffs(columns) - 1, a.mxx = x0 + 31 - __clz(columns);
  a.mny = y0 + __ffs(rows_layers & kRowBits) - 1, a.mxy = y0 + 31 - __clz(rows_layers & kRowBits);
  if constexpr (B::kZ > 1) a.mnz = z0 + __ffs(rows_layers >> B::kY) - 1, a.mxz = z0 + 31 - __clz(rows_layers >> B::kY);
  else a.mnz = a.mxz = z0;
  return a;
}

// The bricks of a warp, each in one pass (kPasses false) or in passes; t: the warp's table.
// kRowWords: the runs from the row words (binary volumes of several layers), else from the labels.
template <class B, bool kRowWords, bool kPasses>
__device__ __forceinline__ void stats_of_bricks(BrickTable<kPasses>& t, const RowWord* rows, const RowMarks* marks,
                                                const std::uint32_t* labels, const std::uint32_t* offsets,
                                                const VolGeo& g, RawVolumeComponentStats* st, std::uint64_t cap,
                                                bool multilabel) {
  static_assert(B::kRows % 32 == 0, "a lane takes whole rows");
  constexpr int kLaneRows = B::kRows / 32;
  using S = RunSums<B>;
  const int lane = static_cast<int>(threadIdx.x & 31u);
  for (int i = lane; i < kStatsSlots; i += 32) t.label[i] = 0, t.sums[i] = 0, t.cover[i] = 0;
  std::uint32_t carry_label = 0;  // the warp's
  Acc carry;                      // this lane's part of the carry's record
  for_each_brick_of_warp<B, kStatsWarps * 32>(g, [&](std::uint32_t x0, std::uint32_t y0, std::uint32_t z0) {
    __syncwarp();  // the table is empty (the previous brick's flush cleared it)
    // Lane l holds rows l + 32 j: m (foreground), starts (first voxels of runs), stops (bit b:
    // the run holding b - 1 ends there, at a new run or a gap) and whole (roots of components
    // that the brick holds whole; bit k: run k with the row words, whose roots are runs, else
    // column k).
    unsigned m[kLaneRows], starts[kLaneRows], stops[kLaneRows], whole[kLaneRows];
    // With the row words, in passes, a root run's label is its number (number_in_word: the word's
    // first number and the roots before it, which are the root runs starting before it), so only
    // the other runs' labels are read from the label volume: root_starts (bit b: a root run
    // starts at b) and first_label (the word's first number). Not in one pass (bricks of fewer
    // labels, fewer of their runs roots), where it took 72 registers instead of 56 (7 blocks an SM
    // instead of 9); not measured there.
    constexpr bool kRootNumbers = kRowWords && kPasses;
    unsigned root_starts[kLaneRows] = {};
    std::uint32_t first_label[kLaneRows] = {};
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) {
      const int r = lane + 32 * j;
      const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
      const bool in = y < g.ny && z < g.nz;
      const std::size_t w = in ? word_index(x0 / kBX, y, z, g) : 0;
      const RowWord row = in ? rows[w] : RowWord{0u, 0u};
      whole[j] = in ? row.roots & ~marks[w].spans : 0u;
      if constexpr (kRowWords) m[j] = row.fg, starts[j] = run_starts(row.fg);
      if constexpr (kRootNumbers) {
        first_label[j] = row.roots ? __ldg(offsets + w) + 1 : 0u;
        root_starts[j] = 0;
        int k = 0;
        for (unsigned left = starts[j]; left; left &= left - 1, ++k)
          if (row.roots >> k & 1u) root_starts[j] |= left & (0u - left);
      }
    }
    if constexpr (!kRowWords) {
      // The warp reads each row's labels (coalesced) and ballots its foreground and run starts;
      // lane r % 32 keeps row r's.
      const std::uint32_t x = x0 + static_cast<std::uint32_t>(lane);
#pragma unroll 8
      for (int r = 0; r < B::kRows; ++r) {
        const std::uint32_t y = y0 + r % B::kY, z = z0 + r / B::kY;
        const std::uint32_t label = x < g.nx && y < g.ny && z < g.nz ? __ldg(labels + key_of(x, y, z, g)) : 0u;
        const std::uint32_t left = __shfl_up_sync(kFull, label, 1);
        const unsigned fg = __ballot_sync(kFull, label != 0);
        const unsigned first = __ballot_sync(kFull, label != 0 && (lane == 0 || label != left));
#pragma unroll
        for (int j = 0; j < kLaneRows; ++j)
          if (r == lane + 32 * j) m[j] = fg, starts[j] = first;
      }
    }
    // A brick of background only adds nothing: it leaves before the table's sweeps, and the carry
    // goes on to the warp's next brick.
    if (!warp_has_foreground(m)) return;
    // A run goes into the table by 32-bit adds of the packed sums' halves and ors of the cover's.
    // When the table is crowded (no free slot within kProbes): in one pass the run goes out alone,
    // by atomics; in passes, false (the run waits for the next pass).
    auto insert = [&](std::uint32_t label, unsigned long long sums, unsigned long long cover, bool is_whole) {
      int slot = static_cast<int>((label * 0x9E3779B9u) >> 24) % kStatsSlots, probe = 0;
      for (; probe < kProbes; ++probe, slot = (slot + 1) % kStatsSlots) {
        const std::uint32_t held = atomicCAS(&t.label[slot], 0u, label);
        if (held == 0u || held == label) break;
      }
      if (probe == kProbes) {
        if constexpr (kPasses) return false;
        add_to_record(st[label - 1], brick_acc<B>(sums, cover, x0, y0, z0));
        return true;
      }
      // Four 32-bit atomics, each one instruction (the sums' halves carry nothing into each other).
      auto* sums_words = reinterpret_cast<unsigned*>(&t.sums[slot]);
      auto* cover_words = reinterpret_cast<unsigned*>(&t.cover[slot]);
      if (is_whole) sums |= S::kWhole;  // else a reduction may have set it
      atomicAdd(sums_words, static_cast<unsigned>(sums));
      atomicAdd(sums_words + 1, static_cast<unsigned>(sums >> 32));
      atomicOr(cover_words, static_cast<unsigned>(cover));
      atomicOr(cover_words + 1, static_cast<unsigned>(cover >> 32));
      return true;
    };
    // In passes, each a table's worth: the runs whose labels found no slot go to the next pass. No
    // slot is freed within a pass, so all runs of one label find the same slot or none -- a
    // label's runs (with its root's, which makes a whole record) always share one pass, and a
    // record that no merge mark announced is still written once, whole (init_records_kernel fills
    // only the marked ones then).
    unsigned pending[kLaneRows];  // first bits of the runs left for this pass
#pragma unroll
    for (int j = 0; j < kLaneRows; ++j) pending[j] = starts[j], stops[j] = starts[j] | ~m[j];
    for (;;) {
      unsigned retry[kLaneRows], group[kLaneRows];  // group: the runs added up in acc
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) retry[j] = 0, group[j] = 0;
      // Each lane walks its own runs and adds up consecutive runs of one label in registers (a
      // dense component's rows: one label), inserting when the label changes; at the end the lanes
      // that share their last label add it up (__match_any_sync and reductions) and insert it once,
      // so the lanes of one component do not meet on its slot's atomics.
      std::uint32_t acc_label = 0;
      unsigned long long acc_sums = 0, acc_cover = 0;
      bool acc_whole = false;
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) {
        const int r = lane + 32 * j, ly = r % B::kY, lz = r / B::kY;
        const std::uint32_t row_key = key_of(x0, y0 + ly, z0 + lz, g);
        // The labels of kAhead runs are loaded together (independent loads in flight at once).
        constexpr int kAhead = VolumeTuning::kStatsLabelsAhead;
        std::uint32_t ahead[kAhead];
        unsigned fetched = pending[j] & ~root_starts[j];  // the runs whose labels are read
#pragma unroll
        for (int k = 0; k < kAhead; ++k) {
          ahead[k] = fetched ? __ldg(labels + row_key + static_cast<std::uint32_t>(__ffs(fetched) - 1)) : 0u;
          fetched &= fetched - 1;
        }
        int k = 0;  // one pass: the register of this run's label
        for (unsigned left = pending[j]; left; left &= left - 1, k = (k + 1) % kAhead) {
          const int first = __ffs(left) - 1;
          const unsigned after = first < 31 ? stops[j] & (kFull << (first + 1)) : 0u;
          const int last = after ? __ffs(after) - 2 : 31;  // the run's last column
          std::uint32_t label = 0;
          if (kRootNumbers && (root_starts[j] >> first & 1u)) {
            label = number_in_word(first_label[j], root_starts[j], first);
          } else if constexpr (kPasses) {
            // The loads move down a register each run, fewer instructions than the rotating index
            // below; but a move waits for its load, so fewer loads are in flight -- in one pass
            // (denser bricks, more runs a row) 512^3 density 0.5, 26-connectivity, 0.34 -> 0.60 ms.
            label = ahead[0];
#pragma unroll
            for (int q = 0; q + 1 < kAhead; ++q) ahead[q] = ahead[q + 1];
            ahead[kAhead - 1] = fetched ? __ldg(labels + row_key + static_cast<std::uint32_t>(__ffs(fetched) - 1)) : 0u;
          } else {
#pragma unroll
            for (int q = 0; q < kAhead; ++q)
              if (q == k) {  // registers, not a local array: a constant index after unrolling
                label = ahead[q];
                ahead[q] = fetched ? __ldg(labels + row_key + static_cast<std::uint32_t>(__ffs(fetched) - 1)) : 0u;
              }
          }
          if (!(root_starts[j] >> first & 1u)) fetched &= fetched - 1;
          if (label > cap) continue;  // no record
          if (label != acc_label) {
            if (acc_label && !insert(acc_label, acc_sums, acc_cover, acc_whole))
#pragma unroll
              for (int q = 0; q < kLaneRows; ++q) retry[q] |= group[q];
            if constexpr (kPasses)
#pragma unroll
              for (int q = 0; q < kLaneRows; ++q) group[q] = 0;
            acc_label = label, acc_sums = 0, acc_cover = 0, acc_whole = false;
          }
          if constexpr (kPasses) group[j] |= 1u << first;
          const auto n = static_cast<std::uint32_t>(last - first + 1);
          acc_sums += S::pack(n, n * static_cast<std::uint32_t>(first) + n * (n - 1) / 2,
                              n * static_cast<std::uint32_t>(ly), n * static_cast<std::uint32_t>(lz));
          const unsigned columns = (kFull >> (31 - last)) & (kFull << first);
          const unsigned rows_layers = 1u << ly | (B::kZ > 1 ? 1u << (B::kY + lz) : 0u);
          acc_cover |= columns | static_cast<unsigned long long>(rows_layers) << 32;
          // The component's root run (with the row words, bit k of whole is the row's k-th run).
          const int root_bit = kRowWords ? __popc(starts[j] & ~(kFull << first)) : first;
          acc_whole = acc_whole || (whole[j] >> root_bit & 1u);
        }
      }
      {
        const unsigned peers = __match_any_sync(kFull, acc_label);
        const int leader = __ffs(peers) - 1;
        bool inserted = true;
        if constexpr (kPasses) {
          // Many labels a brick, most lanes' last labels their own: only the lanes of a shared
          // label reduce (a reduction over a mask that differs between lanes loops over the warp's
          // distinct masks), over the packed words: the sums' halves (no field carries over a whole
          // brick; the root's whole bit is added once) and the cover's.
          if (acc_label && peers != 1u << lane) {
            if (acc_whole) acc_sums |= S::kWhole;
            acc_whole = false;
            const unsigned lo = __reduce_add_sync(peers, static_cast<unsigned>(acc_sums)),
                           hi = __reduce_add_sync(peers, static_cast<unsigned>(acc_sums >> 32)),
                           columns = __reduce_or_sync(peers, static_cast<unsigned>(acc_cover)),
                           rows_layers = __reduce_or_sync(peers, static_cast<unsigned>(acc_cover >> 32));
            acc_sums = lo | static_cast<unsigned long long>(hi) << 32;
            acc_cover = columns | static_cast<unsigned long long>(rows_layers) << 32;
          }
          if (acc_label && lane == leader) inserted = insert(acc_label, acc_sums, acc_cover, acc_whole);
        } else {
          // Few labels a brick, often one for the whole warp: every lane takes part.
          const std::uint32_t n = __reduce_add_sync(peers, S::n(acc_sums)),
                              sx = __reduce_add_sync(peers, S::x(acc_sums)),
                              sy = __reduce_add_sync(peers, S::y(acc_sums)),
                              sz = __reduce_add_sync(peers, S::z(acc_sums));
          const unsigned columns = __reduce_or_sync(peers, static_cast<unsigned>(acc_cover)),
                         rows_layers = __reduce_or_sync(peers, static_cast<unsigned>(acc_cover >> 32));
          const bool is_whole = __reduce_or_sync(peers, acc_whole ? 1u : 0u) != 0;
          if (acc_label && lane == leader)
            inserted = insert(acc_label, S::pack(n, sx, sy, sz),
                              columns | static_cast<unsigned long long>(rows_layers) << 32, is_whole);
        }
        if constexpr (kPasses) {
          const bool leader_inserted = __shfl_sync(kFull, inserted, leader);  // every lane takes part
          if (acc_label && !leader_inserted)
#pragma unroll
            for (int q = 0; q < kLaneRows; ++q) retry[q] |= group[q];
        }
      }
      __syncwarp();
      // A new carry when the carry is absent from this brick: the brick's largest spanning label.
      // In passes the same sweep lists the occupied slots, so the flush visits those alone (512^3
      // density 0.1, 6-connectivity: 144 labels a brick in 256 slots); one pass keeps its sweep
      // free of ballots and flushes every slot's lane.
      bool present = false;
      unsigned best = 0;  // voxels << 8 | slot
      int occupied = 0;   // slots listed
      for (int i = lane; i < kStatsSlots; i += 32) {
        const std::uint32_t label = t.label[i];
        present = present || (carry_label && label == carry_label);
        if (label && !S::whole(t.sums[i])) best = max(best, S::n(t.sums[i]) << 8 | static_cast<unsigned>(i));
        if constexpr (kPasses) {
          const unsigned held = __ballot_sync(kFull, label != 0);
          if (label) t.listed[occupied + __popc(held & ~(kFull << lane))] = static_cast<std::uint8_t>(i);
          occupied += __popc(held);
        }
      }
      if (!__any_sync(kFull, present)) {
        if (carry_label && carry.voxels) add_to_record(st[carry_label - 1], carry);
        carry = Acc{};
        best = __reduce_max_sync(kFull, best);
        carry_label = best ? t.label[best & 0xFFu] : 0u;
      }
      __syncwarp();  // every lane has read the carry's slot before its owner clears it
      // One flush per label of the brick (the carry's into registers, a whole component's by plain
      // stores); the slots are cleared for the next brick.
      auto flush = [&](int i, std::uint32_t label) {
        const Acc a = brick_acc<B>(t.sums[i], t.cover[i], x0, y0, z0);
        if (S::whole(t.sums[i])) write_record(st[label - 1], a, multilabel);
        else if (label == carry_label) merge_acc(carry, a);
        else add_to_record(st[label - 1], a);
        t.label[i] = 0, t.sums[i] = 0, t.cover[i] = 0;
      };
      if constexpr (kPasses) {
        for (int q = lane; q < occupied; q += 32) {
          const int i = t.listed[q];
          flush(i, t.label[i]);
        }
      } else {
        for (int i = lane; i < kStatsSlots; i += 32) {
          const std::uint32_t label = t.label[i];
          if (!label) continue;
          flush(i, label);
        }
      }
      if constexpr (!kPasses) break;
      unsigned any = 0;
#pragma unroll
      for (int j = 0; j < kLaneRows; ++j) pending[j] = retry[j], any |= retry[j];
      __syncwarp();  // the table is empty for the next pass
      if (!__any_sync(kFull, any != 0)) break;
    }
  });
  if (carry_label && carry.voxels) add_to_record(st[carry_label - 1], carry);
}

// One kernel for each way, both launched (unless the capacity rules passes out): the one whose way
// the count does not ask for returns at once (3 us; one kernel of both ways took more registers
// than either, 72-80 against 56-64).
template <class B, bool kRowWords, bool kPasses>
__global__ void __launch_bounds__(kStatsWarps * 32)
    brick_stats_kernel(const RowWord* rows, const RowMarks* marks, const std::uint32_t* labels,
                       const std::uint32_t* offsets, VolGeo g, RawVolumeComponentStats* st, std::uint64_t cap,
                       const std::uint32_t* d_count, bool multilabel) {
  grid_dependency_wait();  // launched by launch_dependent
  if (stats_in_passes(min(cap, std::uint64_t{*d_count}), g) != kPasses) return;
  __shared__ BrickTable<kPasses> tables[kStatsWarps];
  stats_of_bricks<B, kRowWords, kPasses>(tables[threadIdx.x / 32], rows, marks, labels, offsets, g, st, cap,
                                         multilabel);
}

}  // namespace
}  // namespace winnow::detail::cuda
