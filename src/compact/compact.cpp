// Front end of stream compaction: resolves backend and algorithm through the variant table,
// then hands one CompactRequest to the backend.
//
// Small work runs on the calling thread alone: below kSerialElements elements the CPU backend
// sees one OpenMP thread (the calling thread's thread-count setting, lowered for the call), so
// no parallel region is opened. Measured on the 2-core machine of bench/python_busy.py: a
// parallel region costs 3 us with passive waiting (0.8 us spinning), select of 2^16 float32
// takes 11 us on one thread, so below that the second thread saves less than its region costs;
// and on a machine where another process holds a core, a region waits for a thread that is not
// running (milliseconds), where one thread does not.
#include "winnow/compact.hpp"

#include <omp.h>

#include <algorithm>
#include <string>

#include "compact/backends.hpp"
#include "winnow/error.hpp"

namespace winnow {
namespace {

// The registry: every (algorithm, backend) pair that exists. Explicit, not self-registering.
constexpr CompactVariant kVariants[] = {
    {CompactAlgorithm::group_scan, Backend::cpu},    {CompactAlgorithm::histopyramid, Backend::cpu},
    {CompactAlgorithm::group_scan, Backend::cuda},   {CompactAlgorithm::block_ballot, Backend::cuda},
    {CompactAlgorithm::histopyramid, Backend::cuda}, {CompactAlgorithm::single_pass, Backend::cuda},
};

constexpr std::uint64_t kSerialElements = std::uint64_t{1} << 16;

/// The calling thread's OpenMP thread count set to one for a scope (when `serial`), then restored.
class SerialScope {
 public:
  explicit SerialScope(bool serial) : saved_(serial ? omp_get_max_threads() : 0) {
    if (saved_ > 1) omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved_ > 1) omp_set_num_threads(saved_);
  }
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_;
};

template <class T>
std::uint64_t run(detail::CompactRequest<T> req, const CompactOptions& options) {
  const Backend backend = resolve_backend(options.backend);
  CompactAlgorithm algorithm = options.algorithm;
  if (algorithm == CompactAlgorithm::automatic) {
#ifdef WINNOW_HAVE_CUDA
    algorithm = backend == Backend::cuda ? detail::cuda::automatic_algorithm(req.n, sizeof(T), options.order)
                                         : CompactAlgorithm::group_scan;
#else
    algorithm = CompactAlgorithm::group_scan;
#endif
  }
  const bool exists = std::any_of(std::begin(kVariants), std::end(kVariants), [&](const CompactVariant& v) {
    return v.algorithm == algorithm && v.backend == backend;
  });
  if (!exists) {
    throw BackendError("compaction algorithm '" + std::string(to_string(algorithm)) + "' is not available on the " +
                       std::string(to_string(backend)) + " backend");
  }
  req.algorithm = algorithm;
  req.order = options.order;
#ifdef WINNOW_HAVE_CUDA
  if (backend == Backend::cuda) return detail::cuda::compact(req);
#endif
  const SerialScope serial(req.n < kSerialElements);
  return detail::cpu::compact(req);
}

}  // namespace

std::string_view to_string(CompactAlgorithm a) {
  switch (a) {
    case CompactAlgorithm::automatic: return "auto";
    case CompactAlgorithm::group_scan: return "group_scan";
    case CompactAlgorithm::block_ballot: return "block_ballot";
    case CompactAlgorithm::histopyramid: return "histopyramid";
    case CompactAlgorithm::single_pass: return "single_pass";
  }
  return "?";
}

CompactAlgorithm parse_compact_algorithm(std::string_view name) {
  for (auto a : {CompactAlgorithm::automatic, CompactAlgorithm::group_scan, CompactAlgorithm::block_ballot,
                 CompactAlgorithm::histopyramid, CompactAlgorithm::single_pass})
    if (name == to_string(a)) return a;
  if (name == "automatic") return CompactAlgorithm::automatic;
  throw InputError("unknown compaction algorithm '" + std::string(name) +
                   "' (expected auto, group_scan, block_ballot, histopyramid or single_pass)");
}

std::vector<CompactVariant> compact_variants() {
  std::vector<CompactVariant> out;
  for (const auto& v : kVariants)
    if (v.backend == Backend::cpu || cuda_available()) out.push_back(v);
  return out;
}

namespace detail {

void check_carried_predicate(const Predicate& pred, std::size_t element_size) {
  if (pred.key != KeyKind::nonzero)
    throw InputError("compact: a value, luminance or alpha predicate needs a precompiled element type (this one has " +
                     std::to_string(element_size) + " bytes of its own type); use nonzero(), flags or a callable");
}

template <class T>
std::size_t compact_values(std::span<const T> in, std::span<T> out, const Predicate& pred,
                           const CompactOptions& options) {
  detail::CompactRequest<T> r;
  r.in = in.data();
  r.n = in.size();
  r.pred = pred;
  r.output = detail::OutputKind::values;
  r.out = out.data();
  r.out_capacity = out.size();
  return run(r, options);
}

template <class T>
std::size_t compact_flagged_values(std::span<const T> in, std::span<const std::uint8_t> flags, std::span<T> out,
                                   const CompactOptions& options) {
  if (flags.size() != in.size())
    throw InputError("compact_flagged: " + std::to_string(flags.size()) + " flags for " + std::to_string(in.size()) +
                     " elements");
  detail::CompactRequest<T> r;
  r.in = in.data();
  r.n = in.size();
  r.flags = flags.data();
  r.output = detail::OutputKind::values;
  r.out = out.data();
  r.out_capacity = out.size();
  return run(r, options);
}

template <class T, class Index>
std::size_t compact_index_list(std::span<const T> in, const Predicate& pred, std::span<Index> out_indices,
                               const CompactOptions& options) {
  if constexpr (sizeof(Index) == 4) {
    if (in.size() > (std::uint64_t{1} << 32))
      throw InputError("compact_indices: 32-bit indices cannot address " + std::to_string(in.size()) + " elements");
  }
  detail::CompactRequest<T> r;
  r.in = in.data();
  r.n = in.size();
  r.pred = pred;
  r.output = sizeof(Index) == 4 ? detail::OutputKind::index32 : detail::OutputKind::index64;
  r.out = out_indices.data();
  r.out_capacity = out_indices.size();
  return run(r, options);
}

#define WINNOW_INSTANTIATE(T)                                                                                        \
  template std::size_t compact_values<T>(std::span<const T>, std::span<T>, const Predicate&, const CompactOptions&); \
  template std::size_t compact_flagged_values<T>(std::span<const T>, std::span<const std::uint8_t>, std::span<T>,    \
                                                 const CompactOptions&);                                             \
  template std::size_t compact_index_list<T, std::uint64_t>(std::span<const T>, const Predicate&,                    \
                                                            std::span<std::uint64_t>, const CompactOptions&);        \
  template std::size_t compact_index_list<T, std::uint32_t>(std::span<const T>, const Predicate&,                    \
                                                            std::span<std::uint32_t>, const CompactOptions&);
WINNOW_COMPACT_TYPES(WINNOW_INSTANTIATE)
#undef WINNOW_INSTANTIATE

}  // namespace detail
}  // namespace winnow
