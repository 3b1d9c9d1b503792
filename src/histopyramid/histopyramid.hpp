#pragma once
// Histopyramid on the CPU: a reference implementation of the GPU algorithm, reused by the
// isosurface work (base counts are then triangles per cell, not 0/1).
//
// Algorithm (Ziegler, Tevs, Theobalt, Seidel, "On-the-fly point clouds through histogram
// pyramids", VMV 2006; Dyken et al., "High-speed marching cubes using histopyramids", 2008):
//   1. Reduction: level 0 holds one count per input element; node k of level L+1 holds the sum of
//      nodes 4k..4k+3 of level L (a 4-ary tree: the "vec4 of partial sums" of the GPU texture
//      version is the four children stored side by side). The single node of the top level
//      holds the total.
//   2. Traversal: output element `key` (0 <= key < total) walks from the top down. At each node
//      the four children's counts a, b, c, d split [0, a+b+c+d) into [0,a), [a,a+b), [a+b,a+b+c),
//      [a+b+c, ...); the child whose range holds `key` is taken (chosen without branches from
//      three comparisons) and its range start is subtracted. At level 0 the node is the input
//      element and the remaining key is the rank of the output inside that element's count.
// Gather-only: every output is computed independently, nothing is scattered.
// Cost: O(n) work and 4n/3 counts for the reduction; O(log4 n) per output for the traversal.
// Output order is the input order (stable).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "winnow/compact.hpp"  // detail::cpu_threads()

namespace winnow::detail::cpu {

template <class Base = std::uint8_t>
class HistoPyramid {
 public:
  struct Hit {
    std::uint64_t element;  ///< the input element the output key lands in
    std::uint64_t rank;     ///< 0 .. count(element) - 1
  };

  /// Builds the pyramid from base counts `count(i)` (convertible to Base) for i in [0, n).
  /// `count` is called from several threads at once.
  template <class CountFn>
  void build(std::uint64_t n, CountFn&& count) {
    n_ = n;
    base_.assign(round4(n), Base{0});
    up_.clear();
    const auto sn = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static) num_threads(cpu_threads()) if (n > (1u << 16))
    for (std::int64_t i = 0; i < sn; ++i) base_[i] = static_cast<Base>(count(static_cast<std::uint64_t>(i)));
    if (n <= 1) return;
    // Level 1 from the base, then each level from the one below until a single node is left.
    std::uint64_t size = (n + 3) / 4;
    up_.emplace_back(round4(size), 0);
    reduce(base_.data(), up_.back().data(), size);
    while (size > 1) {
      const std::uint64_t next = (size + 3) / 4;
      std::vector<std::uint64_t> level(round4(next), 0);
      reduce(up_.back().data(), level.data(), next);
      up_.push_back(std::move(level));
      size = next;
    }
  }

  std::uint64_t size() const { return n_; }
  std::uint64_t total() const {
    if (n_ == 0) return 0;
    return up_.empty() ? static_cast<std::uint64_t>(base_[0]) : up_.back()[0];
  }
  /// Number of levels above the base.
  std::size_t height() const { return up_.size(); }

  /// The element and rank of output `key` (requires key < total()).
  Hit find(std::uint64_t key) const {
    std::uint64_t node = 0;
    // up_.back() is the 1-node top; its children are in the level below, and so on.
    for (std::size_t l = up_.size(); l-- > 1;) node = step(up_[l - 1].data(), node, key);
    if (!up_.empty()) node = step(base_.data(), node, key);
    return {node, key};
  }

 private:
  static std::uint64_t round4(std::uint64_t x) { return (x + 3) & ~std::uint64_t{3}; }

  template <class C>
  static void reduce(const C* below, std::uint64_t* level, std::uint64_t size) {
    const auto ss = static_cast<std::int64_t>(size);
#pragma omp parallel for schedule(static) num_threads(cpu_threads()) if (size > (1u << 14))
    for (std::int64_t k = 0; k < ss; ++k) {
      const C* c = below + 4 * k;  // the level below is zero-padded to a multiple of 4
      level[k] = std::uint64_t{c[0]} + std::uint64_t{c[1]} + std::uint64_t{c[2]} + std::uint64_t{c[3]};
    }
  }

  // Picks the child of `node` whose range holds `key`, subtracts the range start.
  template <class C>
  static std::uint64_t step(const C* level, std::uint64_t node, std::uint64_t& key) {
    const C* c = level + 4 * node;
    const std::uint64_t a = c[0], ab = a + c[1], abc = ab + c[2];
    const unsigned ge_a = key >= a, ge_ab = key >= ab, ge_abc = key >= abc;
    const unsigned j = ge_a + ge_ab + ge_abc;
    const std::uint64_t start = (ge_abc ? abc : ge_ab ? ab : ge_a ? a : 0);
    key -= start;
    return 4 * node + j;
  }

  std::uint64_t n_ = 0;
  std::vector<Base> base_;
  std::vector<std::vector<std::uint64_t>> up_;
};

}  // namespace winnow::detail::cpu
