// Stream compaction: every (algorithm, backend) variant x element type against std::copy_if.
//
// Test names: Variants/CompactTest.<Body>/<backend>_<algorithm>_<order>_<type>. The list of
// variants is fixed (every pair the library knows), so CUDA variants appear everywhere and show as
// skipped where no device answers; a separate test checks that compact_variants() is covered.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/compact_oracle.hpp"
#include "common/gpu_guard.hpp"
#include "common/large_tests.hpp"
#include "winnow/compact.hpp"
#include "winnow/error.hpp"

namespace {

using winnow::Backend;
using winnow::CompactAlgorithm;
using winnow::CompactOptions;
using winnow::CompactVariant;
using winnow::CompareOp;
using winnow::Order;
using winnow::Predicate;
using winnow::Rgba8;
using winnow::RgbaF32;
using winnow::test::compare_ref;
using winnow::test::float_luma_ref;
using winnow::test::luma_milli_ref;

// ------------------------------------------------------------------------------------------------
// Byte-wise helpers: outputs are compared as bytes, so a float -0.0 or NaN is checked exactly.

template <class T>
bool bytes_equal(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}
constexpr unsigned char kPoison = 0xA5;
template <class T>
std::vector<T> poisoned(std::size_t n) {
  std::vector<T> v(n);
  if (n) std::memset(static_cast<void*>(v.data()), kPoison, n * sizeof(T));
  return v;
}
template <class T>
bool is_poison(const T& x) {
  const auto* p = reinterpret_cast<const unsigned char*>(&x);
  return std::all_of(p, p + sizeof(T), [](unsigned char c) { return c == kPoison; });
}

// Sort keys for multiset comparisons: the element's bytes as one or two integers.
template <class T>
auto sort_key(const T& x) {
  if constexpr (sizeof(T) == 16) {
    std::array<std::uint64_t, 2> k;
    std::memcpy(k.data(), &x, 16);
    return k;
  } else if constexpr (sizeof(T) != 1 && sizeof(T) != 2 && sizeof(T) != 4 && sizeof(T) != 8) {
    std::array<unsigned char, sizeof(T)> k;
    std::memcpy(k.data(), &x, sizeof(T));
    return k;
  } else {
    using U = std::conditional_t<sizeof(T) == 8, std::uint64_t,
                                 std::conditional_t<sizeof(T) == 4, std::uint32_t,
                                                    std::conditional_t<sizeof(T) == 2, std::uint16_t, std::uint8_t>>>;
    static_assert(sizeof(T) == sizeof(U));
    U k;
    std::memcpy(&k, &x, sizeof(T));
    return k;
  }
}
template <class T>
auto sorted_keys(const T* first, std::size_t count) {
  std::vector<decltype(sort_key(*first))> k(count);
  for (std::size_t i = 0; i < count; ++i) k[i] = sort_key(first[i]);
  std::sort(k.begin(), k.end());
  return k;
}

/// Checks got[0..written) against expected (exact order when stable, sub-multiset when not)
/// and that got[written..] is untouched.
template <class T>
::testing::AssertionResult check_output(const std::vector<T>& got, std::size_t written, const std::vector<T>& expected,
                                        bool stable) {
  if (written > expected.size()) return ::testing::AssertionFailure() << "written " << written << " > kept";
  if (written > got.size()) return ::testing::AssertionFailure() << "written " << written << " > capacity";
  if (stable) {
    for (std::size_t i = 0; i < written; ++i)
      if (!bytes_equal(got[i], expected[i]))
        return ::testing::AssertionFailure() << "first mismatch at output " << i << " of " << written;
  } else {
    const auto a = sorted_keys(got.data(), written);
    const auto b = sorted_keys(expected.data(), expected.size());
    if (written == expected.size() ? a != b : !std::includes(b.begin(), b.end(), a.begin(), a.end()))
      return ::testing::AssertionFailure() << "written elements are not a sub-multiset of the kept ones";
  }
  for (std::size_t i = written; i < got.size(); ++i)
    if (!is_poison(got[i]))
      return ::testing::AssertionFailure() << "output " << i << " written past the count " << written;
  return ::testing::AssertionSuccess();
}

// ------------------------------------------------------------------------------------------------
// Generators: make(keep, rng) returns an element that matches pred() exactly when `keep`. The
// classification is the test's own (plain comparisons, integer luminance), not winnow::matches.

using Rng = std::mt19937_64;

template <class T>
struct Gen {
  static_assert(std::is_arithmetic_v<T>);
  static constexpr T t = T(100);
  static Predicate pred() { return winnow::where(CompareOp::greater, t); }
  static T make(bool keep, Rng& rng) {
    if constexpr (std::is_floating_point_v<T>) {
      if (rng() % 16 == 0) return keep ? std::nextafter(t, T(1e30)) : t;  // boundary
      std::uniform_real_distribution<double> d(keep ? 100.001 : -1e6, keep ? 1e6 : 100.0);
      return static_cast<T>(d(rng));
    } else {
      using W = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
      if (rng() % 16 == 0) return keep ? T(t + 1) : t;  // boundary
      const W lo = keep ? W(t) + 1 : W(std::numeric_limits<T>::min());
      const W hi = keep ? W(std::numeric_limits<T>::max()) : W(t);
      std::uniform_int_distribution<W> d(lo, hi);
      return static_cast<T>(d(rng));
    }
  }
  static bool independent_match(const T& x) { return x > t; }
};

template <>
struct Gen<Rgba8> {
  static Predicate pred() { return winnow::where_luminance(CompareOp::greater, 100.0); }
  static bool independent_match(const Rgba8& p) { return luma_milli_ref(p) > 100000u; }
  static Rgba8 make(bool keep, Rng& rng) {
    for (;;) {
      const std::uint64_t v = rng();
      const Rgba8 p{std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
      if (independent_match(p) == keep) return p;
    }
  }
};

template <>
struct Gen<RgbaF32> {
  static Predicate pred() { return winnow::where_luminance(CompareOp::greater, 100.0); }
  static double luma(const RgbaF32& p) { return 0.299 * p.r + 0.587 * p.g + 0.114 * p.b; }
  static bool independent_match(const RgbaF32& p) { return luma(p) > 100.0; }
  static RgbaF32 make(bool keep, Rng& rng) {
    std::uniform_real_distribution<float> d(0.0f, 255.0f);
    for (;;) {
      const RgbaF32 p{d(rng), d(rng), d(rng), d(rng)};
      const double l = luma(p);
      if (std::abs(l - 100.0) < 1e-3) continue;  // too close to call in float vs double
      if ((l > 100.0) == keep) return p;
    }
  }
};

// Keep patterns: a fixed fraction, random per-element probability, or random runs.
struct Pattern {
  const char* name;
  double p;  // probability of keep; < 0: runs
};
constexpr Pattern kPatterns[] = {{"0%", 0.0},   {"1%", 0.01},    {"50%", 0.5},  {"99%", 0.99},
                                 {"100%", 1.0}, {"random", 2.0}, {"runs", -1.0}};

std::vector<std::uint8_t> make_keep(std::size_t n, const Pattern& pat, Rng& rng) {
  std::vector<std::uint8_t> keep(n);
  if (pat.p < 0) {
    bool state = rng() & 1;
    for (std::size_t i = 0; i < n;) {
      const std::size_t len = 1 + rng() % 300;
      for (std::size_t j = 0; j < len && i < n; ++j, ++i) keep[i] = state;
      state = !state;
    }
    return keep;
  }
  const double p = pat.p > 1.0 ? std::uniform_real_distribution<double>(0.0, 1.0)(rng) : pat.p;
  if (p <= 0.0 || p >= 1.0) {
    std::fill(keep.begin(), keep.end(), p >= 1.0);
    return keep;
  }
  std::bernoulli_distribution b(p);
  for (auto& k : keep) k = b(rng);
  return keep;
}

std::string order_name(Order o) { return o == Order::stable ? "stable" : "any"; }

// ------------------------------------------------------------------------------------------------
// The test body shared by every variant and type.

template <class T>
void check_case(const CompactOptions& opt, std::size_t n, const Pattern& pat, Rng& rng, bool all_forms) {
  SCOPED_TRACE("n=" + std::to_string(n) + " pattern=" + pat.name);
  const bool stable = opt.order == Order::stable;
  const auto keep = make_keep(n, pat, rng);
  std::vector<T> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = Gen<T>::make(keep[i] != 0, rng);
  const Predicate pred = Gen<T>::pred();

  // Oracle: std::copy_if on the keep flags (and a check that they are what the generator meant).
  std::vector<T> expected;
  std::vector<std::size_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) positions[i] = i;
  std::vector<std::size_t> kept_pos;
  std::copy_if(positions.begin(), positions.end(), std::back_inserter(kept_pos),
               [&](std::size_t i) { return Gen<T>::independent_match(in[i]); });
  for (std::size_t i : kept_pos) expected.push_back(in[i]);
  const std::size_t k = expected.size();
  {
    std::size_t k_flags = 0;
    for (auto f : keep) k_flags += f;
    ASSERT_EQ(k_flags, k) << "generator broken";
  }

  // Values, full capacity.
  {
    auto out = poisoned<T>(n + 8);
    const std::size_t got = winnow::compact<T>(std::span<const T>(in), std::span<T>(out.data(), n), pred, opt);
    ASSERT_EQ(got, k) << "values";
    ASSERT_TRUE(check_output(out, k, expected, stable)) << "values";
  }
  // Values, capacity below the kept count: returns kept, writes exactly the capacity.
  if (k >= 2) {
    const std::size_t cap = std::min(k - 1, k / 2 + (n % 3));
    auto out = poisoned<T>(cap + 8);
    const std::size_t got = winnow::compact<T>(std::span<const T>(in), std::span<T>(out.data(), cap), pred, opt);
    ASSERT_EQ(got, k) << "values, capacity " << cap;
    std::vector<T> exp_prefix = stable ? std::vector<T>(expected.begin(), expected.begin() + cap) : expected;
    ASSERT_TRUE(check_output(out, cap, exp_prefix, stable)) << "values, capacity " << cap;
  }
  if (!all_forms) return;
  // Indices, 64 and 32 bits.
  {
    std::vector<std::uint64_t> exp64(kept_pos.begin(), kept_pos.end());
    auto out = poisoned<std::uint64_t>(n + 8);
    const std::size_t got =
        winnow::compact_indices<T>(std::span<const T>(in), pred, std::span<std::uint64_t>(out.data(), n), opt);
    ASSERT_EQ(got, k) << "index64";
    ASSERT_TRUE(check_output(out, k, exp64, stable)) << "index64";
  }
  {
    std::vector<std::uint32_t> exp32(kept_pos.begin(), kept_pos.end());
    auto out = poisoned<std::uint32_t>(n + 8);
    const std::size_t got =
        winnow::compact_indices<T>(std::span<const T>(in), pred, std::span<std::uint32_t>(out.data(), n), opt);
    ASSERT_EQ(got, k) << "index32";
    ASSERT_TRUE(check_output(out, k, exp32, stable)) << "index32";
    if (k >= 3) {
      const std::size_t cap = k / 3;
      auto small = poisoned<std::uint32_t>(cap + 8);
      ASSERT_EQ(
          winnow::compact_indices<T>(std::span<const T>(in), pred, std::span<std::uint32_t>(small.data(), cap), opt),
          k);
      std::vector<std::uint32_t> exp_prefix =
          stable ? std::vector<std::uint32_t>(exp32.begin(), exp32.begin() + cap) : exp32;
      ASSERT_TRUE(check_output(small, cap, exp_prefix, stable)) << "index32, capacity " << cap;
    }
  }
  // Flagged form: flags are arbitrary non-zero bytes where kept; the elements do not matter.
  {
    std::vector<std::uint8_t> flags(n);
    for (std::size_t i = 0; i < n; ++i) flags[i] = keep[i] ? static_cast<std::uint8_t>(1 + rng() % 255) : 0;
    std::vector<T> flagged_in(n);
    for (std::size_t i = 0; i < n; ++i) flagged_in[i] = Gen<T>::make((rng() & 1) != 0, rng);
    std::vector<T> exp;
    for (std::size_t i = 0; i < n; ++i)
      if (flags[i]) exp.push_back(flagged_in[i]);
    auto out = poisoned<T>(n + 8);
    const std::size_t got = winnow::compact_flagged<T>(
        std::span<const T>(flagged_in), std::span<const std::uint8_t>(flags), std::span<T>(out.data(), n), opt);
    ASSERT_EQ(got, exp.size()) << "flagged";
    ASSERT_TRUE(check_output(out, got, exp, stable)) << "flagged";
  }
}

// Predicate semantics: every op and key against the test's own comparisons, with the awkward
// values (NaN, -0.0, infinities, extremes, the threshold itself).
template <class T>
std::vector<T> special_values() {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr T inf = std::numeric_limits<T>::infinity();
    return {T(0),
            T(-0.0),
            T(100),
            std::nextafter(T(100), T(0)),
            std::nextafter(T(100), T(1000)),
            -inf,
            inf,
            std::numeric_limits<T>::quiet_NaN(),
            std::numeric_limits<T>::denorm_min(),
            T(-100)};
  } else if constexpr (std::is_arithmetic_v<T>) {
    return {T(0),
            T(1),
            T(99),
            T(100),
            T(101),
            std::numeric_limits<T>::min(),
            std::numeric_limits<T>::max(),
            T(std::numeric_limits<T>::max() - 1)};
  } else if constexpr (std::is_same_v<T, Rgba8>) {
    return {Rgba8{0, 0, 0, 0}, Rgba8{255, 255, 255, 255}, Rgba8{100, 100, 100, 100},
            Rgba8{0, 0, 0, 1}, Rgba8{101, 100, 100, 99},  Rgba8{0, 0, 0, 100}};
  } else {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    return {RgbaF32{},
            RgbaF32{100, 100, 100, 100},
            RgbaF32{nan, 0, 0, nan},
            RgbaF32{-0.0f, 0, 0, -0.0f},
            RgbaF32{255, 255, 255, 255},
            RgbaF32{0, 0, 0, 100}};
  }
}

template <class T>
T random_element(Rng& rng) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (rng() % 2) return Gen<T>::make(rng() & 1, rng);
    const auto specials = special_values<T>();
    return specials[rng() % specials.size()];
  } else {
    if (rng() % 4 == 0) {
      const auto specials = special_values<T>();
      return specials[rng() % specials.size()];
    }
    return Gen<T>::make(rng() & 1, rng);
  }
}

// Each predicate with the test's own reading of it (common/compact_oracle.hpp: plain comparisons,
// the luminance formula written out), not winnow::matches.
template <class T>
bool any_byte_set(const T& x) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &x, sizeof(T));
  return std::any_of(b, b + sizeof(T), [](unsigned char c) { return c != 0; });
}
template <class T>
struct PredicateCase {
  Predicate pred;
  std::function<bool(const T&)> want;
};

template <class T>
std::vector<PredicateCase<T>> predicates_for() {
  std::vector<PredicateCase<T>> ps{{winnow::nonzero(), [](const T& x) { return any_byte_set(x); }}};
  constexpr CompareOp ops[] = {CompareOp::greater,    CompareOp::greater_equal, CompareOp::less,
                               CompareOp::less_equal, CompareOp::equal,         CompareOp::not_equal};
  for (CompareOp op : ops) {
    if constexpr (std::is_arithmetic_v<T>) {
      std::vector<T> thresholds{T(100), T(0)};
      if constexpr (std::is_floating_point_v<T>) thresholds.push_back(std::numeric_limits<T>::quiet_NaN());
      for (T t : thresholds)
        ps.push_back({winnow::where(op, t), [op, t](const T& x) { return compare_ref(op, x, t); }});
    } else if constexpr (std::is_same_v<T, Rgba8>) {
      for (std::uint32_t milli : {100000u, 0u})
        ps.push_back({winnow::where_luminance(op, milli / 1000.0),
                      [op, milli](const Rgba8& p) { return compare_ref(op, luma_milli_ref(p), milli); }});
      ps.push_back(
          {winnow::where_alpha(op, 100.0), [op](const Rgba8& p) { return compare_ref(op, unsigned{p.a}, 100u); }});
    } else {
      for (float t : {100.0f, 0.0f})
        ps.push_back({winnow::where_luminance(op, t),
                      [op, t](const RgbaF32& p) { return compare_ref(op, float_luma_ref(p), t); }});
      ps.push_back({winnow::where_alpha(op, 100.0), [op](const RgbaF32& p) { return compare_ref(op, p.a, 100.0f); }});
    }
  }
  return ps;
}

template <class T>
void check_predicates(const CompactOptions& opt, Rng& rng) {
  const bool stable = opt.order == Order::stable;
  for (std::size_t n : {std::size_t{7}, std::size_t{1000}, std::size_t{4097}}) {
    std::vector<T> in(n);
    for (auto& x : in) x = random_element<T>(rng);
    const auto preds = predicates_for<T>();
    for (std::size_t pi = 0; pi < preds.size(); ++pi) {
      SCOPED_TRACE("n=" + std::to_string(n) + " predicate #" + std::to_string(pi));
      std::vector<T> expected;
      std::copy_if(in.begin(), in.end(), std::back_inserter(expected), preds[pi].want);
      auto out = poisoned<T>(n + 4);
      const std::size_t got =
          winnow::compact<T>(std::span<const T>(in), std::span<T>(out.data(), n), preds[pi].pred, opt);
      ASSERT_EQ(got, expected.size());
      ASSERT_TRUE(check_output(out, got, expected, stable));
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Parameters: variant x order x element type.

struct TypeCase {
  const char* name;
  void (*sizes)(const CompactOptions&);
  void (*predicates)(const CompactOptions&);
  void (*huge)(const CompactOptions&);
  bool has_huge;
};

std::vector<std::size_t> sizes_for(std::size_t elem_size) {
  std::vector<std::size_t> s{0,   1,   2,   31,   32,   33,   63,   64,   65,   127,   128,   129,
                             255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537};
  // The CPU chunk (256 KiB of input) and its neighbours.
  const std::size_t chunk = std::max<std::size_t>(4096, (std::size_t{1} << 18) / elem_size) & ~std::size_t{63};
  for (std::size_t c : {chunk - 1, chunk, chunk + 1, 2 * chunk + 63}) s.push_back(c);
  s.push_back((std::size_t{1} << 20) + 7);
  return s;
}

template <class T>
void run_sizes(const CompactOptions& opt) {
  Rng rng(0x5eed0000u + sizeof(T));
  for (std::size_t n : sizes_for(sizeof(T))) {
    for (const Pattern& pat : kPatterns) {
      check_case<T>(opt, n, pat, rng, /*all_forms=*/true);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

template <class T>
void run_predicates(const CompactOptions& opt) {
  Rng rng(0xabcdefu + sizeof(T));
  check_predicates<T>(opt, rng);
}

template <class T>
void run_huge(const CompactOptions& opt) {
  Rng rng(0x2424u);
  const std::size_t n = std::size_t{1} << 24;
  check_case<T>(opt, n, kPatterns[5], rng, /*all_forms=*/false);  // random selectivity
}

#define TYPE_CASE(T, name, huge) \
  TypeCase { name, &run_sizes<T>, &run_predicates<T>, &run_huge<T>, huge }
const TypeCase kTypes[] = {
    TYPE_CASE(std::uint8_t, "u8", false),   TYPE_CASE(std::uint16_t, "u16", false),
    TYPE_CASE(std::int32_t, "i32", true),   TYPE_CASE(std::uint32_t, "u32", false),
    TYPE_CASE(float, "f32", false),         TYPE_CASE(std::int64_t, "i64", false),
    TYPE_CASE(std::uint64_t, "u64", false), TYPE_CASE(double, "f64", false),
    TYPE_CASE(Rgba8, "rgba8", true),        TYPE_CASE(RgbaF32, "rgbaf32", false),
};
#undef TYPE_CASE

// Every pair the library knows, whether or not this machine can run it.
const CompactVariant kAllVariants[] = {
    {CompactAlgorithm::group_scan, Backend::cpu},    {CompactAlgorithm::histopyramid, Backend::cpu},
    {CompactAlgorithm::group_scan, Backend::cuda},   {CompactAlgorithm::block_ballot, Backend::cuda},
    {CompactAlgorithm::histopyramid, Backend::cuda}, {CompactAlgorithm::single_pass, Backend::cuda},
};

struct Param {
  CompactVariant variant;
  Order order;
  TypeCase type;
};
void PrintTo(const Param& p, std::ostream* os) {
  *os << winnow::to_string(p.variant.backend) << "/" << winnow::to_string(p.variant.algorithm) << "/"
      << order_name(p.order) << "/" << p.type.name;
}

std::vector<Param> make_params(bool huge_only) {
  std::vector<Param> ps;
  for (const auto& v : kAllVariants)
    for (Order o : {Order::stable, Order::any}) {
      // The CPU has one code path for both orders; "any" is checked once, on group_scan.
      if (v.backend == Backend::cpu && o == Order::any && v.algorithm != CompactAlgorithm::group_scan) continue;
      for (const auto& t : kTypes)
        if (!huge_only || t.has_huge) ps.push_back({v, o, t});
    }
  return ps;
}

std::string param_name(const ::testing::TestParamInfo<Param>& info) {
  const Param& p = info.param;
  return std::string(winnow::to_string(p.variant.backend)) + "_" + std::string(winnow::to_string(p.variant.algorithm)) +
         "_" + order_name(p.order) + "_" + p.type.name;
}

class CompactTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    if (GetParam().variant.backend == Backend::cuda) WINNOW_REQUIRE_CUDA_OR_SKIP();
  }
  CompactOptions options() const {
    return CompactOptions{GetParam().order, GetParam().variant.algorithm, GetParam().variant.backend};
  }
};
using CompactHugeTest = CompactTest;

TEST_P(CompactTest, SizesAndSelectivities) { GetParam().type.sizes(options()); }
TEST_P(CompactTest, PredicateOps) { GetParam().type.predicates(options()); }
TEST_P(CompactHugeTest, TwoToThe24) { GetParam().type.huge(options()); }

INSTANTIATE_TEST_SUITE_P(Variants, CompactTest, ::testing::ValuesIn(make_params(false)), param_name);
INSTANTIATE_TEST_SUITE_P(Variants, CompactHugeTest, ::testing::ValuesIn(make_params(true)), param_name);

// ------------------------------------------------------------------------------------------------
// Registry, names, errors, automatic choice, the generic callable.

TEST(CompactRegistry, EveryAvailableVariantIsTested) {
  const auto avail = winnow::compact_variants();
  ASSERT_FALSE(avail.empty());
  for (const auto& v : avail) {
    const bool listed = std::any_of(std::begin(kAllVariants), std::end(kAllVariants), [&](const CompactVariant& k) {
      return k.algorithm == v.algorithm && k.backend == v.backend;
    });
    EXPECT_TRUE(listed) << "variant " << winnow::to_string(v.algorithm) << "/" << winnow::to_string(v.backend)
                        << " has no test";
    EXPECT_NE(v.algorithm, CompactAlgorithm::automatic);
  }
  for (const auto& k : kAllVariants) {
    if (k.backend != Backend::cpu && !winnow::cuda_available()) continue;
    const bool present = std::any_of(avail.begin(), avail.end(), [&](const CompactVariant& v) {
      return k.algorithm == v.algorithm && k.backend == v.backend;
    });
    EXPECT_TRUE(present) << winnow::to_string(k.algorithm) << "/" << winnow::to_string(k.backend);
  }
}

TEST(CompactRegistry, VariantsPerBackend) {
  std::size_t cpu = 0, cuda = 0;
  for (const auto& v : winnow::compact_variants()) (v.backend == Backend::cpu ? cpu : cuda) += 1;
  EXPECT_EQ(cpu, 2u);  // group_scan, histopyramid
  EXPECT_EQ(cuda, winnow::cuda_available() ? 4u : 0u);
}

TEST(CompactRegistry, UnknownPairsThrowBackendError) {
  const std::vector<std::int32_t> in{1, 200, 3, 400};
  std::vector<std::int32_t> out(4);
  const auto pred = winnow::where(CompareOp::greater, 100);
  for (CompactAlgorithm a : {CompactAlgorithm::block_ballot, CompactAlgorithm::single_pass}) {
    CompactOptions o{Order::stable, a, Backend::cpu};
    EXPECT_THROW(winnow::compact<std::int32_t>(in, out, pred, o), winnow::BackendError) << winnow::to_string(a);
  }
  if (!winnow::cuda_available()) {
    CompactOptions o{Order::stable, CompactAlgorithm::group_scan, Backend::cuda};
    EXPECT_THROW(winnow::compact<std::int32_t>(in, out, pred, o), winnow::BackendError);
  }
}

TEST(CompactRegistry, NamesRoundTrip) {
  for (CompactAlgorithm a : {CompactAlgorithm::automatic, CompactAlgorithm::group_scan, CompactAlgorithm::block_ballot,
                             CompactAlgorithm::histopyramid, CompactAlgorithm::single_pass})
    EXPECT_EQ(winnow::parse_compact_algorithm(winnow::to_string(a)), a);
  EXPECT_EQ(winnow::parse_compact_algorithm("automatic"), CompactAlgorithm::automatic);
  EXPECT_THROW(winnow::parse_compact_algorithm("bogus"), winnow::InputError);
  EXPECT_THROW(winnow::parse_compact_algorithm(""), winnow::InputError);
  for (Backend b : {Backend::automatic, Backend::cpu, Backend::cuda})
    EXPECT_EQ(winnow::parse_backend(winnow::to_string(b)), b);
}

TEST(CompactApi, AutomaticAndConvenienceForms) {
  Rng rng(7);
  std::vector<float> in(100000);
  for (auto& x : in) x = Gen<float>::make(rng() % 3 == 0, rng);
  std::vector<float> expected;
  std::copy_if(in.begin(), in.end(), std::back_inserter(expected), [](float x) { return x > 100.0f; });
  const auto got = winnow::compact<float>(std::span<const float>(in), winnow::where(CompareOp::greater, 100.0f));
  EXPECT_EQ(got, expected);
  const auto got_cpu = winnow::compact<float>(std::span<const float>(in), winnow::where(CompareOp::greater, 100.0f),
                                              CompactOptions{Order::stable, CompactAlgorithm::automatic, Backend::cpu});
  EXPECT_EQ(got_cpu, expected);
}

TEST(CompactApi, FlagsSizeMismatchIsInputError) {
  const std::vector<std::int32_t> in(10, 1);
  const std::vector<std::uint8_t> flags(9, 1);
  std::vector<std::int32_t> out(10);
  EXPECT_THROW(winnow::compact_flagged<std::int32_t>(in, flags, out), winnow::InputError);
}

// A 12-byte element type and a lambda: the header's generic CPU template.
struct Point3 {
  float x, y, z;
};

TEST(CompactGeneric, CallableOnCustomType) {
  Rng rng(11);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{65535}, std::size_t{65536}, std::size_t{65537},
                        std::size_t{300001}}) {
    SCOPED_TRACE(n);
    std::vector<Point3> in(n);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (auto& p : in) p = {d(rng), d(rng), d(rng)};
    auto inside = [](const Point3& p) { return p.x * p.x + p.y * p.y + p.z * p.z < 0.5f; };
    std::vector<Point3> expected;
    std::copy_if(in.begin(), in.end(), std::back_inserter(expected), inside);
    auto out = poisoned<Point3>(n + 4);
    const std::size_t got = winnow::compact(std::span<const Point3>(in), std::span<Point3>(out.data(), n), inside);
    ASSERT_EQ(got, expected.size());
    ASSERT_TRUE(check_output(out, got, expected, true));
    // Capacity below the kept count.
    if (got >= 2) {
      const std::size_t cap = got / 2;
      auto small = poisoned<Point3>(cap + 4);
      ASSERT_EQ(winnow::compact(std::span<const Point3>(in), std::span<Point3>(small.data(), cap), inside), got);
      ASSERT_TRUE(check_output(small, cap, std::vector<Point3>(expected.begin(), expected.begin() + cap), true));
    }
  }
}

TEST(CompactGeneric, CallableOnOtherBackendIsBackendError) {
  const std::vector<int> in{1, 2, 3};
  std::vector<int> out(3);
  CompactOptions o;
  o.backend = Backend::cuda;
  EXPECT_THROW(winnow::compact(
                   std::span<const int>(in), std::span<int>(out), [](int x) { return x > 1; }, o),
               winnow::BackendError);
}

TEST(CompactGeneric, CallableAgreesWithPredicate) {
  Rng rng(3);
  std::vector<std::int32_t> in(200000);
  for (auto& x : in) x = Gen<std::int32_t>::make(rng() % 2 == 0, rng);
  std::vector<std::int32_t> a(in.size()), b(in.size());
  const std::size_t ka = winnow::compact(std::span<const std::int32_t>(in), std::span<std::int32_t>(a),
                                         [](std::int32_t x) { return x > 100; });
  const std::size_t kb = winnow::compact<std::int32_t>(in, b, winnow::where(CompareOp::greater, 100));
  ASSERT_EQ(ka, kb);
  a.resize(ka);
  b.resize(kb);
  EXPECT_EQ(a, b);
}

// ------------------------------------------------------------------------------------------------
// Element types without a precompiled path: their bytes travel as a precompiled type of the
// same size, on every variant, for the flagged form and for nonzero() in the other forms.

struct Particle {  // 8 bytes, alignment 4 (its carrier, std::uint64_t, wants 8)
  float x;
  std::int32_t id;
};
struct Bgra {  // 4 bytes, alignment 1
  std::uint8_t b, g, r, a;
};
struct Sample16 {  // 16 bytes, alignment 8
  double t;
  std::int64_t tag;
};
enum class Mark : std::uint8_t { none = 0, weak = 1, strong = 7 };

template <class T>
void check_carried_type(const std::vector<T>& in, std::size_t byte_offset, const CompactOptions& opt) {
  const bool stable = opt.order == Order::stable;
  const std::size_t n = in.size();
  // `in` copied to a buffer at `byte_offset`, so the spans may be misaligned for the carrier.
  std::vector<unsigned char> raw(n * sizeof(T) + 64);
  unsigned char* base = raw.data() + (16 - reinterpret_cast<std::uintptr_t>(raw.data()) % 16) % 16 + byte_offset;
  if (n) std::memcpy(base, in.data(), n * sizeof(T));
  const std::span<const T> view(reinterpret_cast<const T*>(base), n);

  Rng rng(n * 31 + byte_offset);
  std::vector<std::uint8_t> flags(n);
  for (auto& f : flags) f = static_cast<std::uint8_t>(rng() % 3 == 0 ? 0 : rng() % 256);
  std::vector<T> want_flagged, want_nonzero;
  std::vector<std::uint64_t> want_idx;
  for (std::size_t i = 0; i < n; ++i) {
    if (flags[i]) want_flagged.push_back(in[i]);
    if (any_byte_set(in[i])) want_nonzero.push_back(in[i]), want_idx.push_back(i);
  }

  std::vector<unsigned char> out_raw((n + 4) * sizeof(T) + 64, kPoison);
  unsigned char* out_base =
      out_raw.data() + (16 - reinterpret_cast<std::uintptr_t>(out_raw.data()) % 16) % 16 + byte_offset;
  const std::span<T> out(reinterpret_cast<T*>(out_base), n);
  auto written = [&] {  // the output buffer, n + 4 elements, as a vector
    std::vector<T> v(n + 4);
    std::memcpy(static_cast<void*>(v.data()), out_base, (n + 4) * sizeof(T));
    return v;
  };

  std::size_t k = winnow::compact_flagged<T>(view, flags, out, opt);
  ASSERT_EQ(k, want_flagged.size());
  ASSERT_TRUE(check_output(written(), k, want_flagged, stable)) << "flagged";

  std::memset(out_base, kPoison, (n + 4) * sizeof(T));
  k = winnow::compact<T>(view, out, winnow::nonzero(), opt);
  ASSERT_EQ(k, want_nonzero.size());
  ASSERT_TRUE(check_output(written(), k, want_nonzero, stable)) << "nonzero";

  std::vector<std::uint64_t> idx(n + 4, ~std::uint64_t{0});
  k = winnow::compact_indices<T>(view, winnow::nonzero(), std::span<std::uint64_t>(idx.data(), n), opt);
  ASSERT_EQ(k, want_idx.size());
  idx.resize(k);
  if (!stable) std::sort(idx.begin(), idx.end());
  EXPECT_EQ(idx, want_idx) << "indices";
}

// Byte offsets at which a T may live (multiples of its alignment), including ones misaligned for
// the carrier of T's size where T's own alignment is smaller (Particle at 4, Bgra at 1).
template <class T>
std::vector<std::size_t> carried_offsets() {
  std::vector<std::size_t> offsets{0};
  for (std::size_t o : {alignof(T), std::size_t{4}})
    if (o % alignof(T) == 0 && std::find(offsets.begin(), offsets.end(), o) == offsets.end()) offsets.push_back(o);
  return offsets;
}

// Every variant of one backend, both orders, every offset T may live at.
template <class T>
void check_carried_on(Backend backend, const std::vector<T>& in) {
  for (const CompactVariant& v : winnow::compact_variants()) {
    if (v.backend != backend) continue;
    for (Order o : {Order::stable, Order::any})
      for (std::size_t offset : carried_offsets<T>()) {
        SCOPED_TRACE(std::string(winnow::to_string(v.backend)) + "/" + std::string(winnow::to_string(v.algorithm)) +
                     "/" + order_name(o) + " offset " + std::to_string(offset) + " n " + std::to_string(in.size()));
        check_carried_type(in, offset, CompactOptions{o, v.algorithm, v.backend});
        if (::testing::Test::HasFatalFailure()) return;
      }
  }
}

// Structs, a short and an enum, each with zero elements among random ones.
void check_carried_types_on(Backend backend) {
  const auto variants = winnow::compact_variants();
  ASSERT_TRUE(
      std::any_of(variants.begin(), variants.end(), [&](const CompactVariant& v) { return v.backend == backend; }))
      << "no " << winnow::to_string(backend) << " variant to run";
  Rng rng(99);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{33}, std::size_t{70001}}) {
    std::vector<Particle> particles(n);
    for (auto& p : particles)
      p = rng() % 4 ? Particle{float(rng() % 1000) - 500.0f, std::int32_t(rng())} : Particle{0, 0};
    check_carried_on(backend, particles);
    std::vector<Bgra> pixels(n);
    for (auto& p : pixels) {
      const auto v = rng() % 3 ? rng() : 0;
      p = Bgra{std::uint8_t(v), std::uint8_t(v >> 8), std::uint8_t(v >> 16), std::uint8_t(v >> 24)};
    }
    check_carried_on(backend, pixels);
    std::vector<Sample16> samples(n);
    for (auto& s16 : samples)
      s16 = rng() % 3 ? Sample16{double(rng() % 100) * 0.5, std::int64_t(rng())} : Sample16{0.0, 0};
    check_carried_on(backend, samples);
    std::vector<std::int16_t> shorts(n);
    for (auto& x : shorts) x = rng() % 3 ? std::int16_t(rng()) : 0;
    check_carried_on(backend, shorts);
    std::vector<Mark> marks(n);
    for (auto& m : marks) m = std::array{Mark::none, Mark::weak, Mark::strong}[rng() % 3];
    check_carried_on(backend, marks);
  }
}

// One test per backend, so that the CUDA half shows as skipped (not passed) without a device.
TEST(CompactGeneric, TypesWithoutPrecompiledPathCpu) { check_carried_types_on(Backend::cpu); }
TEST(CompactGeneric, TypesWithoutPrecompiledPathCuda) {
  WINNOW_REQUIRE_CUDA_OR_SKIP();
  check_carried_types_on(Backend::cuda);
}

TEST(CompactGeneric, ValuePredicateOnCarriedTypeIsInputError) {
  const std::vector<std::int16_t> in{1, -2, 300};
  std::vector<std::int16_t> out(3);
  std::vector<std::uint32_t> idx(3);
  const auto pred = winnow::where(CompareOp::greater, std::int16_t{0});
  EXPECT_THROW(winnow::compact<std::int16_t>(in, out, pred), winnow::InputError);
  EXPECT_THROW(winnow::compact_indices<std::int16_t>(in, pred, idx), winnow::InputError);
  const std::vector<Particle> ps{{1.0f, 2}};
  std::vector<Particle> pout(1);
  EXPECT_THROW(winnow::compact<Particle>(ps, pout, winnow::where_luminance(CompareOp::greater, 1.0)),
               winnow::InputError);
}

// The documented limit of 32-bit indices (compact.hpp): more than 2^32 elements is an
// InputError, before any element is read. The input is a reserved, never-touched mapping of
// 2^32 + 1 bytes, so the check costs no memory.
TEST(CompactLimits, ThirtyTwoBitIndicesRefuseMoreThan2Pow32Elements) {
  const std::size_t n = (std::size_t{1} << 32) + 1;
  void* mapping = mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(mapping, MAP_FAILED);
  std::vector<std::uint32_t> indices(16);
  EXPECT_THROW(winnow::compact_indices<std::uint8_t>(
                   std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(mapping), n),
                   winnow::where(CompareOp::greater, std::uint8_t{0}), std::span<std::uint32_t>(indices)),
               winnow::InputError);
  munmap(mapping, n);
}

// Beyond 2^32 elements on the CPU (64-bit sizes throughout): opt-in, ~9 GB of memory.
TEST(CompactLarge, MoreThan2Pow32ElementsCpu) {
  WINNOW_REQUIRE_LARGE_TESTS_OR_SKIP("needs ~9 GB RAM");
  const std::uint64_t n = (std::uint64_t{1} << 32) + 1000;
  std::vector<std::uint8_t> in(n);
  for (std::uint64_t i = 0; i < n; ++i) in[i] = static_cast<std::uint8_t>(i % 251);
  std::uint64_t want = (n / 251) * 50;  // 201..250 of every 251
  for (std::uint64_t r = (n / 251) * 251; r < n; ++r) want += r % 251 > 200;
  std::vector<std::uint8_t> out(n);
  for (CompactAlgorithm a : {CompactAlgorithm::group_scan, CompactAlgorithm::histopyramid}) {
    SCOPED_TRACE(winnow::to_string(a));
    std::fill(out.begin(), out.end(), std::uint8_t{0});
    const std::size_t k = winnow::compact<std::uint8_t>(in, out, winnow::where(CompareOp::greater, std::uint8_t{200}),
                                                        CompactOptions{Order::stable, a, Backend::cpu});
    ASSERT_EQ(k, want);
    // Stable: the kept values run 201..250 over and over.
    for (std::uint64_t i = 0; i < k; ++i) ASSERT_EQ(out[i], 201 + i % 50) << "output " << i;
    ASSERT_EQ(out[k], 0);
  }
}

}  // namespace
