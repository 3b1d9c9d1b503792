#pragma once
// The union-find of every CUDA labeling: images and volumes, forests in global and in shared memory.
//
// A forest holds for every node the key of its parent; a root holds its own key. Keys order like
// raster indices, and a union links the larger root under the smaller (atomicMin), so every set's
// root is its smallest key: the component's raster-first pixel or voxel, which decides its number.
//
// The algorithms are written once, over a forest that says where a key's entry lies and how the
// entries are read and written while other threads work on them:
//   entry(k)      the entry of key k (the key itself as an index, or the node that holds the key);
//   load(e)       its value;
//   lower(e, a)   a find's halving store: the ancestor a over the parent in e;
//   link(e, a)    a union's link: the root a over the root in e, returning the entry's old value.
// find_root halves the paths it walks; find_root_read_only only reads, for passes where every
// thread writes only roots or nobody writes (a halving store there could overwrite a node's freshly
// written root with an older, non-root ancestor); unite links two sets and reports the link it made.
//
// Races. A halving store writes an ancestor (a smaller key) over a parent, so it never creates a
// cycle; racing with an atomicMin link it may replace the new parent by an older ancestor, but the
// linking thread then retries with that old parent (unite), so the sets stay connected. Without
// halving, long chains (giant components) make every find walk O(chain). Where several threads of
// a block read and write entries without a barrier between (shared memory, and a volume's forest
// during its merge), loads are volatile (relaxed) and halving stores atomicMin (lower_to): an
// atomic store never raises an entry that a concurrent link lowered further, and loads racing with
// it are not data races in the CUDA memory model (compute-sanitizer racecheck counts a load against
// a plain or relaxed store of another thread, not against an atomic; bench/results/label.md). An
// image's forest in global memory is read past L1 (__ldcg) and halved by plain stores (__stcg).
#include <cuda_runtime.h>

#include <cstdint>

namespace winnow::detail::cuda {
namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;  // background node
constexpr unsigned kFull = 0xFFFFFFFFu;       // every lane of a warp

// An ancestor (a smaller key or index) stored over a descendant, as an atomicMin (see Races).
template <class T>
__device__ __forceinline__ void lower_to(T* entry, T ancestor) {
  atomicMin(entry, ancestor);
}

/// The node of a key: the key itself (a pixel's or voxel's index in its tile, brick or volume).
struct KeyIsNode {
  template <class Key>
  __device__ __forceinline__ Key operator()(Key k) const {
    return k;
  }
};

/// A forest whose entries several threads read and write at once, without barriers between:
/// volatile loads, halving stores by atomicMin. NodeOf maps a key to its node (its entry's index).
template <class Key, class NodeOf = KeyIsNode>
struct ConcurrentForest {
  using key_type = Key;
  Key* parent;
  __device__ __forceinline__ Key* entry(Key k) const { return parent + NodeOf{}(k); }
  __device__ __forceinline__ static Key load(const Key* e) { return *reinterpret_cast<const volatile Key*>(e); }
  __device__ __forceinline__ static void lower(Key* e, Key ancestor) { lower_to(e, ancestor); }
  __device__ __forceinline__ static Key link(Key* e, Key root) { return atomicMin(e, root); }
};

/// A ConcurrentForest of 32-bit keys in the block's shared memory, its entries addressed by 32-bit
/// shared-window offsets (PTX ld.volatile.shared, atom.shared.min) rather than generic pointers: a
/// generic pointer to shared memory costs an address conversion at each use, which the compiler
/// rebuilds inside the find loops (S2R SR_CgaCtaId and four more instructions per entry on sm_90).
struct SharedForest {
  using key_type = std::uint32_t;
  std::uint32_t base;  // the shared-window offset of node 0
  __device__ explicit SharedForest(const std::uint32_t* parent)
      : base(static_cast<std::uint32_t>(__cvta_generic_to_shared(parent))) {}
  __device__ __forceinline__ std::uint32_t entry(std::uint32_t k) const { return base + 4 * k; }
  __device__ __forceinline__ static std::uint32_t load(std::uint32_t e) {
    std::uint32_t v;
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(e) : "memory");
    return v;
  }
  __device__ __forceinline__ static std::uint32_t link(std::uint32_t e, std::uint32_t root) {
    std::uint32_t old;
    asm volatile("atom.shared.min.u32 %0, [%1], %2;" : "=r"(old) : "r"(e), "r"(root) : "memory");
    return old;
  }
  __device__ __forceinline__ static void lower(std::uint32_t e, std::uint32_t ancestor) { link(e, ancestor); }
};

/// A forest after its last union, indexed by key: nobody stores, so loads take the read-only
/// data cache.
struct FinalForest {
  using key_type = std::uint32_t;
  const std::uint32_t* parent;
  __device__ __forceinline__ const std::uint32_t* entry(std::uint32_t k) const { return parent + k; }
  __device__ __forceinline__ static std::uint32_t load(const std::uint32_t* e) { return __ldg(e); }
};

template <class Forest>
using key_of_forest = typename Forest::key_type;

/// The parent of key k.
template <class Forest>
__device__ __forceinline__ key_of_forest<Forest> parent_of(const Forest& forest, key_of_forest<Forest> k) {
  return forest.load(forest.entry(k));
}

/// A halving step of a find at key k, whose entry e holds its parent p (not k): e is pointed at
/// k's grandparent, and k moves there.
template <class Forest, class Entry>
__device__ __forceinline__ void halve(const Forest& forest, Entry e, key_of_forest<Forest> p,
                                      key_of_forest<Forest>& k) {
  const key_of_forest<Forest> gp = forest.load(forest.entry(p));
  if (gp != p) forest.lower(e, gp);
  k = gp;
}

/// The root of k's set, halving the path: every node passed on the way is pointed at its
/// grandparent.
template <class Forest>
__device__ key_of_forest<Forest> find_root(const Forest& forest, key_of_forest<Forest> k) {
  for (;;) {
    const auto e = forest.entry(k);
    const key_of_forest<Forest> p = forest.load(e);
    if (p == k) return k;
    const key_of_forest<Forest> gp = forest.load(forest.entry(p));
    if (gp != p) forest.lower(e, gp);
    k = gp;
  }
}

/// The root of k's set, without any store.
template <class Forest>
__device__ __forceinline__ key_of_forest<Forest> find_root_read_only(const Forest& forest, key_of_forest<Forest> k) {
  for (;;) {
    const key_of_forest<Forest> p = forest.load(forest.entry(k));
    if (p == k) return k;
    k = p;
  }
}

/// Unites the sets of keys a and b: links the larger root under the smaller by atomicMin. When
/// another thread linked that root first, atomicMin returns its new parent and the union goes on
/// from there: the sets end up joined either way. linked(b, a) is called once for the root b that
/// this union linked under the root a (b stops being a root), not at all when a and b were in one
/// set already.
/// The two finds walk in one loop, a halving step of each per round, and stop as soon as they
/// meet. Lanes of a warp that unite at one call site then run max(len a, len b) rounds of one loop
/// instead of two loops one after the other (each lane waiting in the first for the warp's
/// longest walk), and a pair already in one set, most pairs of a dense component, usually meets
/// below its root. Against two find_root calls: the merge of binary volumes 0.71 -> 0.62 ms
/// (512^3 density 0.5, 6-connected), 1.27 -> 0.90 ms (26), 1.74 -> 1.25 ms (density 0.9, 26);
/// their local pass in shared memory 1.15 -> 1.10 ms at most (bench/results/label.md).
template <class Forest, class Linked>
__device__ void unite(const Forest& forest, key_of_forest<Forest> a, key_of_forest<Forest> b, Linked linked) {
  using Key = key_of_forest<Forest>;
  for (;;) {
    for (;;) {
      if (a == b) return;
      const auto ea = forest.entry(a);
      const auto eb = forest.entry(b);
      const Key pa = forest.load(ea), pb = forest.load(eb);
      if (pa == a && pb == b) break;  // two roots
      if (pa != a) halve(forest, ea, pa, a);
      if (pb != b) halve(forest, eb, pb, b);
    }
    if (a > b) {
      const Key t = a;
      a = b;
      b = t;
    }
    const Key old = forest.link(forest.entry(b), a);
    if (old == b) {
      linked(b, a);
      return;
    }
    b = old;
  }
}
// One iteration of unite's loops, for callers that advance many unions a step at a time in
// lockstep (a warp whose lanes each run unite to its end splits over their different walks): the
// halving step of both finds, or, at two roots, the link. True when the union is done (a and b in
// one set); otherwise a and b hold where the next step starts.
// Its halving steps are unite's (halve): sharing them changed the register allocation of every
// union-find kernel, and no labeling phase by more than noise (H200, calls 58 and 61: volumes and
// images, every test with the GPU required).
// The link's outcome is returned as a value, not taken as a branch: with a branch here (a link
// callback) the 6-connected local pass took 0.405 ms on the tiled MRI, 0.348 without (H200, calls
// 54-55; the previous pass 0.385 in both).
template <class Forest>
__device__ __forceinline__ bool union_step(const Forest& forest, key_of_forest<Forest>& a, key_of_forest<Forest>& b) {
  using Key = key_of_forest<Forest>;
  if (a == b) return true;
  const auto ea = forest.entry(a);
  const auto eb = forest.entry(b);
  const Key pa = forest.load(ea), pb = forest.load(eb);
  if (pa == a && pb == b) {  // two roots: the larger goes under the smaller
    const Key lo = a < b ? a : b, hi = a < b ? b : a;
    const Key old = forest.link(forest.entry(hi), lo);
    a = lo, b = old;  // linked (old == hi: done), or hi was linked meanwhile: go on from its parent
    return old == hi;
  }
  if (pa != a) halve(forest, ea, pa, a);
  if (pb != b) halve(forest, eb, pb, b);
  return false;
}

template <class Forest>
__device__ __forceinline__ void unite(const Forest& forest, key_of_forest<Forest> a, key_of_forest<Forest> b) {
  unite(forest, a, b, [](key_of_forest<Forest>, key_of_forest<Forest>) {});
}

}  // namespace
}  // namespace winnow::detail::cuda
