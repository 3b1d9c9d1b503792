#pragma once
// Transparent huge pages for the large arrays the CPU labeling writes once.
#include <cstddef>

namespace winnow::detail {

/// Asks the kernel for transparent huge pages over the 2 MiB pages inside [data, data + bytes)
/// (Linux; elsewhere nothing): a buffer written once then costs one page fault per 2 MiB instead
/// of one per 4 KiB. Call it before the buffer is first written. NOHUGE in the environment turns
/// it off (for measuring what it buys).
void advise_huge_pages(void* data, std::size_t bytes);

}  // namespace winnow::detail
