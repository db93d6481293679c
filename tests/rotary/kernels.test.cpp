// SPDX-License-Identifier: MIT
// The kernel levels of rotary::apply_inplace (include/posenc/numeric/pair_rotation.hpp: portable
// C++; AVX2 (+ F16C); AVX-512 F/BW/VL; AVX-512 with AVX512_BF16's vcvtneps2bf16 for bfloat16),
// each forced in turn (numeric::detail::kernel_level_scope) on the same inputs. The portable kernel
// is the one the rest of tests/rotary checks against long double references; every vector level
// must give its results bit for bit (the kernels round each product, the sum and the store exactly
// as the portable code does), for both layouts, every head width from 1 to 70 pairs (the vector
// bodies and their tails), wide heads up to 300 pairs, several heads a stride apart, values
// spanning the storage type's range (subnormals, values that overflow when rotated, Inf and NaN),
// and the fused finite check must report exactly what the portable check reports. Against the
// portable kernel a NaN only has to stay a NaN (payloads may differ); between vector levels the
// bits are equal, NaNs included. The same through rotary::apply_inplace and apply_ragged_inplace
// (GQA, odd head widths). A level the processor lacks is skipped with a message.
//
// Where the compiler may contract the portable code's a*c - b*s into a fused multiply-add (FMA
// enabled by the build flags), the portable result may differ from the vector ones by the rounding
// of that one product; the comparison with it then allows one unit in the last place of the
// storage type (the vector levels never contract: they must still agree bit for bit).
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>

namespace {

namespace rd = posenc::numeric::detail;  // the kernels (numeric/pair_rotation.hpp)
namespace pr = posenc::rotary;

template <class T>
using bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>;

template <class T>
bits_t<T> bits(T v) {
  bits_t<T> u;
  std::memcpy(&u, &v, sizeof(u));
  return u;
}

template <class T>
bool is_nan(T v) {
  return std::isnan(static_cast<double>(rd::load<T, double>(v)));
}

/// Equal bits, NaN to NaN; with contraction possible, within one unit in the last place.
template <class T>
bool same(T a, T b) {
  if (is_nan(a) || is_nan(b)) return is_nan(a) && is_nan(b);
#if defined(__FMA__)
  const auto x = static_cast<std::int64_t>(bits(a)), y = static_cast<std::int64_t>(bits(b));
  const bool same_sign = ((x ^ y) >> (8 * sizeof(T) - 1)) == 0;
  return x == y || (same_sign && x - y <= 1 && y - x <= 1);
#else
  return bits(a) == bits(b);
#endif
}

/// The vector levels this processor runs (each forced in turn); the others reported as skipped.
std::vector<rd::kernel_level> vector_levels() {
  static const char* const names[] = {"portable", "AVX2", "AVX-512", "AVX-512 + AVX512_BF16"};
  std::vector<rd::kernel_level> out;
  for (auto l : {rd::kernel_level::avx2, rd::kernel_level::avx512, rd::kernel_level::avx512_bf16}) {
    if (static_cast<int>(l) <= static_cast<int>(rd::detected_kernel_level()))
      out.push_back(l);
    else
      MESSAGE("kernel level ", names[static_cast<int>(l)], " skipped: this processor lacks it");
  }
  return out;
}

template <class T, class W>
void compare_kernels(bool interleaved, std::uint32_t seed, const std::vector<rd::kernel_level>& levels) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), angle(-10.0, 10.0);
  const double big = std::is_same_v<T, Eigen::half> ? 6.0e4 : 3.0e38;  // rotated, may overflow
  const double tiny = std::is_same_v<T, Eigen::half> ? 3.0e-6 : 1.0e-39;  // subnormal
  std::vector<std::size_t> compared(levels.size()), mismatched(levels.size()), bits_mismatched(levels.size()),
      flag_mismatched(levels.size());
  std::vector<std::size_t> halves;
  for (std::size_t half = 1; half <= 70; ++half) halves.push_back(half);
  // wide heads: the 16-bit kernels spread the interleaved coefficients once per call up to 256
  // pairs and per head beyond (263, 264, 300)
  for (std::size_t half : {256, 263, 264, 300}) halves.push_back(half);
  for (std::size_t half : halves) {
    for (int special : {0, 1, 2}) {  // 0: ordinary values; 1: with subnormals and overflow; 2: with a NaN or Inf
      const std::size_t heads = 3, stride = 2 * half + 5;
      std::vector<T> a(heads * stride);
      for (auto& x : a) {
        double v = unit(rng);
        if (special == 1) {
          const auto pick = rng() % 8;
          v = pick == 0 ? v * big : pick == 1 ? v * tiny : v;
        }
        x = rd::store<T, double>(v);
      }
      if (special == 2) {
        const std::size_t at = rng() % a.size();
        a[at] = rd::store<T, double>(rng() % 2 ? std::numeric_limits<double>::infinity()
                                               : std::numeric_limits<double>::quiet_NaN());
      }
      std::vector<W> cs(2 * half);
      for (std::size_t k = 0; k < half; ++k) {
        const double t = angle(rng);
        cs[k] = static_cast<W>(std::cos(t));
        cs[half + k] = static_cast<W>(std::sin(t));
      }
      std::vector<T> p = a, first;
      const bool bad_p = rd::rotate_heads_portable<T, W>(p.data(), static_cast<std::ptrdiff_t>(stride), heads, cs.data(),
                                                         half, interleaved, true);
      for (std::size_t l = 0; l < levels.size(); ++l) {
        const rd::kernel_level_scope force(levels[l]);
        std::vector<T> x = a;
        const bool bad_x = rd::rotate_heads<T, W>(x.data(), static_cast<std::ptrdiff_t>(stride), heads, cs.data(), half,
                                                  interleaved, true);
        flag_mismatched[l] += bad_p != bad_x;
        if (l == 0) first = x;
        for (std::size_t i = 0; i < a.size(); ++i) {
          ++compared[l];
          mismatched[l] += !same(p[i], x[i]);
          bits_mismatched[l] += bits(first[i]) != bits(x[i]);  // against the first vector level
        }
      }
    }
  }
  for (std::size_t l = 0; l < levels.size(); ++l) {
    CAPTURE(static_cast<int>(levels[l]));
    INFO("compared ", compared[l], " values");
    CHECK(mismatched[l] == 0);
    CHECK(bits_mismatched[l] == 0);
    CHECK(flag_mismatched[l] == 0);
  }
}

}  // namespace

TEST_CASE("every kernel level equals the portable kernel bit for bit, with the same finite check") {
  const auto levels = vector_levels();
  for (bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    compare_kernels<float, double>(interleaved, 1, levels);
    compare_kernels<Eigen::half, float>(interleaved, 2, levels);
    compare_kernels<Eigen::bfloat16, float>(interleaved, 3, levels);
  }
}

TEST_CASE("kernel_level_scope forces a level, caps it at the processor's, and restores the previous one") {
  CHECK(rd::active_kernel_level() == rd::detected_kernel_level());
  {
    const rd::kernel_level_scope force(rd::kernel_level::portable);
    CHECK(rd::active_kernel_level() == rd::kernel_level::portable);
    {
      const rd::kernel_level_scope inner(rd::kernel_level::avx512_bf16);
      CHECK(rd::active_kernel_level() == rd::detected_kernel_level());
    }
    CHECK(rd::active_kernel_level() == rd::kernel_level::portable);
  }
  CHECK(rd::active_kernel_level() == rd::detected_kernel_level());
}

TEST_CASE("the fused finite check sees a NaN or Inf in every lane and in the tail") {
  // one non-finite input at each position of a head in turn: the check must report it wherever
  // it falls (the vector lanes of either half of the pair, and the scalar tail)
  std::vector<rd::kernel_level> levels = vector_levels();
  levels.insert(levels.begin(), rd::kernel_level::portable);
  auto run = [&levels](auto tag, bool interleaved) {
    using T = decltype(tag);
    using W = std::conditional_t<std::is_same_v<T, float>, double, float>;
    const std::size_t half = 21;  // a vector body and a tail in every kernel (AVX-512 16-bit: 16 + 5)
    std::vector<W> cs(2 * half);
    for (std::size_t k = 0; k < half; ++k) {
      cs[k] = static_cast<W>(std::cos(0.1 * static_cast<double>(k)));
      cs[half + k] = static_cast<W>(std::sin(0.1 * static_cast<double>(k)));
    }
    std::size_t missed = 0, false_alarms = 0;
    for (auto l : levels) {
      const rd::kernel_level_scope force(l);
      for (std::size_t at = 0; at < 2 * half; ++at) {
        std::vector<T> v(2 * half, rd::store<T, double>(0.5));
        false_alarms += rd::rotate_heads<T, W>(v.data(), 0, 1, cs.data(), half, interleaved, true);
        std::vector<T> w(2 * half, rd::store<T, double>(0.5));
        w[at] = rd::store<T, double>(at % 2 ? std::numeric_limits<double>::infinity()
                                            : -std::numeric_limits<double>::quiet_NaN());
        missed += !rd::rotate_heads<T, W>(w.data(), 0, 1, cs.data(), half, interleaved, true);
      }
    }
    CHECK(missed == 0);
    CHECK(false_alarms == 0);
  };
  for (bool interleaved : {false, true}) {
    CAPTURE(interleaved);
    run(float{}, interleaved);
    run(Eigen::half{}, interleaved);
    run(Eigen::bfloat16{}, interleaved);
  }
}

namespace {

/// q [2, 4, 5, D] and k [2, 2, 5, D] (GQA) rotated by rotary::apply_inplace, and the same values as
/// token-major [10, H, D] by apply_ragged_inplace (two sequences at offsets), at the level in force.
template <class T>
std::vector<T> apply_both(std::size_t D, pr::layout lay, const std::vector<T>& q0, const std::vector<T>& k0) {
  const std::size_t B = 2, Hq = 4, Hk = 2, S = 5;
  const auto f = pr::default_frequencies(D, 10000.0);
  const std::vector<std::int64_t> offsets{3, 4093};
  pr::apply_options o;
  o.layout = lay;
  auto q = q0, k = k0, rq = q0, rk = k0;
  pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {B, Hq, S, D}),
                       pr::dense_view<T>::contiguous(k.data(), {B, Hk, S, D}), f, offsets, o);
  const std::vector<std::int64_t> cu{0, 5, 10};
  pr::apply_ragged_inplace<T, std::int64_t>(pr::ragged_view<T>::contiguous(rq.data(), {B * S, Hq, D}),
                                            pr::ragged_view<T>::contiguous(rk.data(), {B * S, Hk, D}), cu, offsets, f,
                                            o);
  q.insert(q.end(), k.begin(), k.end());
  q.insert(q.end(), rq.begin(), rq.end());
  q.insert(q.end(), rk.begin(), rk.end());
  return q;
}

template <class T>
void apply_at_every_level(const std::vector<rd::kernel_level>& levels) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  for (std::size_t D : {2, 6, 26, 30, 34, 128}) {  // odd and even pair counts, tails of every kernel
    for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
      CAPTURE(D);
      CAPTURE(static_cast<int>(lay));
      std::vector<T> q0(2 * 4 * 5 * D), k0(2 * 2 * 5 * D);
      for (auto& x : q0) x = rd::store<T, double>(unit(rng));
      for (auto& x : k0) x = rd::store<T, double>(unit(rng));
      std::vector<T> ref;
      {
        const rd::kernel_level_scope force(rd::kernel_level::portable);
        ref = apply_both<T>(D, lay, q0, k0);
      }
      for (auto l : levels) {
        const rd::kernel_level_scope force(l);
        CAPTURE(static_cast<int>(l));
        const auto out = apply_both<T>(D, lay, q0, k0);
        std::size_t mismatched = 0;
        for (std::size_t i = 0; i < out.size(); ++i) mismatched += !same(ref[i], out[i]);
        CHECK(mismatched == 0);
        // a NaN or an Inf in k is reported by the check at every level, in both passes
        auto kb = k0;
        kb[kb.size() / 2 + 1] = rd::store<T, double>(std::numeric_limits<double>::infinity());
        auto q = q0;
        pr::apply_options o;
        o.layout = lay;
        o.check_finite = true;
        const auto f = pr::default_frequencies(D, 10000.0);
        CHECK_THROWS(pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {2, 4, 5, D}),
                                          pr::dense_view<T>::contiguous(kb.data(), {2, 2, 5, D}), f, {}, o));
        q = q0;
        kb[kb.size() / 2 + 1] = rd::store<T, double>(std::numeric_limits<double>::quiet_NaN());
        const std::vector<std::int64_t> cu{0, 10};
        CHECK_THROWS(pr::apply_ragged_inplace<T, std::int64_t>(pr::ragged_view<T>::contiguous(q.data(), {10, 4, D}),
                                                               pr::ragged_view<T>::contiguous(kb.data(), {10, 2, D}),
                                                               cu, {}, f, o));
      }
    }
  }
}

}  // namespace

TEST_CASE("apply_inplace and apply_ragged_inplace give the same bits at every kernel level (GQA, odd widths)") {
  std::vector<rd::kernel_level> levels = vector_levels();
  SUBCASE("float") { apply_at_every_level<float>(levels); }
  SUBCASE("half") { apply_at_every_level<Eigen::half>(levels); }
  SUBCASE("bfloat16") { apply_at_every_level<Eigen::bfloat16>(levels); }
}
