#pragma once
// SIMD kernels of the CPU backends (Highway, dynamic dispatch: the best instruction set of the
// running CPU is chosen once, at the first call): a predicate evaluated into bits, 64 elements to
// a word, and the emits of stream compaction. Stream compaction (compact/cpu/compact.cpp) and
// marching cubes (isosurface/cpu/marching_cubes.cpp, which classifies voxels with match_bits)
// call them.
//
// The kernels work on one chunk at a time and talk through a bit mask: `bits[w]` bit j is set
// when element 64*w + j of the chunk is kept. Compaction's chunk driver calls match_bits (count
// pass, reads the input once), publishes the chunk's offset, then emits (the chunk's input is
// still in cache).
#include <cstddef>
#include <cstdint>

#include "winnow/compact.hpp"

namespace winnow::detail::cpu::simd {

/// Element types with SIMD predicate evaluation. Rgba8 is evaluated as 32-bit lanes.
enum class Elem : std::uint8_t { u8, u16, i32, u32, f32, i64, u64, f64, rgba8 };

/// Writes ceil(n/64) words of match bits (bits past n are zero) and returns the number set.
/// Agrees exactly with winnow::matches(pred, in[i]).
std::uint64_t match_bits(Elem type, const void* in, std::size_t n, const Predicate& pred, std::uint64_t* bits);

/// Match bits of flags[i] != 0.
std::uint64_t flag_bits(const std::uint8_t* flags, std::size_t n, std::uint64_t* bits);

/// Writes the kept elements of in[0..n) (element size 1, 2, 4 or 8 bytes) to out, stopping after
/// `limit` elements; never writes out[limit] or beyond.
void emit_values(std::size_t elem_size, const void* in, std::size_t n, const std::uint64_t* bits, void* out,
                 std::size_t limit);

/// Writes first + i for each kept i of [0, n), at most `limit` of them.
void emit_index32(std::uint32_t first, std::size_t n, const std::uint64_t* bits, std::uint32_t* out, std::size_t limit);
void emit_index64(std::uint64_t first, std::size_t n, const std::uint64_t* bits, std::uint64_t* out, std::size_t limit);

/// The instruction set the kernels run with (e.g. "AVX3_DL"), for benchmark reports.
const char* target_name();

}  // namespace winnow::detail::cpu::simd
