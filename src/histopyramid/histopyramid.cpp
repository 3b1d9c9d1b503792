// Front end of stream expansion (winnow/histopyramid.hpp): validates the spans, resolves the
// backend (one algorithm, the histopyramid, on each) and dispatches to cpu/ or cuda/.
#include "winnow/histopyramid.hpp"

#include <string>

#include "histopyramid/histopyramid.hpp"
#include "winnow/error.hpp"

namespace winnow {
namespace {

template <class Element>
std::uint64_t run(std::span<const std::uint8_t> counts, std::span<Element> elements, std::span<std::uint8_t> ranks,
                  const ExpandOptions& options) {
  if (!ranks.empty() && ranks.size() != elements.size())
    throw InputError("expand: ranks has " + std::to_string(ranks.size()) + " entries, elements " +
                     std::to_string(elements.size()) + " (ranks must be empty or as long as elements)");
  if (sizeof(Element) == 4 && counts.size() > (std::uint64_t{1} << 32))
    throw InputError("expand: 32-bit elements cannot address " + std::to_string(counts.size()) + " counts");
  detail::ExpandTargets out;
  out.element = elements.data();
  out.element_bytes = sizeof(Element);
  out.rank = ranks.empty() ? nullptr : ranks.data();
  const Backend backend = resolve_backend(options.backend);
#ifdef WINNOW_HAVE_CUDA
  if (backend == Backend::cuda)
    return detail::cuda::histopyramid_expand_host(counts.data(), counts.size(), out, elements.size());
#else
  (void)backend;
#endif
  return detail::cpu::histopyramid_expand(detail::HistoBase::counts8, counts.data(), counts.size(), out,
                                          elements.size());
}

}  // namespace

std::uint64_t expand(std::span<const std::uint8_t> counts, std::span<std::uint64_t> elements,
                     std::span<std::uint8_t> ranks, const ExpandOptions& options) {
  return run(counts, elements, ranks, options);
}
std::uint64_t expand(std::span<const std::uint8_t> counts, std::span<std::uint32_t> elements,
                     std::span<std::uint8_t> ranks, const ExpandOptions& options) {
  return run(counts, elements, ranks, options);
}

}  // namespace winnow
