// SPDX-License-Identifier: MIT
// rotary::apply_inplace / apply_ragged_inplace: every rotated entry against a long double
// transcription of the rotation (both layouts, partial rotary, attention factor, positions up to
// 2^24, every storage type, within the bounds stated in posenc/rotary/apply.hpp); ragged equals
// per-sequence dense bitwise, token-by-token (KV cache) equals prefill bitwise, strided views equal
// contiguous ones bitwise; <R(m) q, R(n) k> depends only on n - m (closed form); xPos's decay closed
// form; the bad inputs, each with its message.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>

#include "exact_reference.hpp"
#include "message_of.hpp"

namespace pr = posenc::rotary;
using wide = long double;

namespace {

/// Hand-built frequencies: arbitrary inv_freq in (1e-4, 1.5), attention factor 1.25.
pr::frequencies odd_frequencies(std::size_t half, unsigned seed, double factor = 1.25) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-9.2, 0.4);
  pr::frequencies f;
  for (std::size_t k = 0; k < half; ++k) f.inv_freq.push_back(std::exp(static_cast<wide>(u(rng))));
  f.attention_factor = factor;
  return f;
}

struct xpos_ref {
  bool on = false;
  wide gamma = 0.4L, base = 512, center = 0;
};

/// Long double reference: head vector v at position n, rotated pair by pair (and xPos-scaled with
/// sign +1 for q, -1 for k).
std::vector<wide> ref_rotate(const std::vector<wide>& v, wide n, const pr::frequencies& f, pr::layout lay,
                             xpos_ref xp = {}, int sign = 1, bool exact = false) {
  std::vector<wide> out = v;
  const std::size_t h = f.inv_freq.size();
  for (std::size_t k = 0; k < h; ++k) {
    // double storage: the exact phase n * omega_k (exact_reference.hpp); the others: the long
    // double phase fl(n * inv_freq[k]) their bound is stated against
    wide ck, sk;
    if (exact) {
      posenc_test::exact_cos_sin(f, k, n, ck, sk);
    } else {
      const wide th = n * f.inv_freq[k];
      ck = std::cos(th);
      sk = std::sin(th);
    }
    wide scale = static_cast<wide>(f.attention_factor);
    if (xp.on) {
      const wide zeta = (static_cast<wide>(2 * k) / static_cast<wide>(2 * h) + xp.gamma) / (1 + xp.gamma);
      scale *= std::pow(zeta, sign * (n - xp.center) / xp.base);
    }
    const std::size_t a = lay == pr::layout::interleaved ? 2 * k : k;
    const std::size_t b = lay == pr::layout::interleaved ? 2 * k + 1 : k + h;
    out[a] = scale * (v[a] * ck - v[b] * sk);
    out[b] = scale * (v[a] * sk + v[b] * ck);
  }
  return out;
}

template <class T>
double to_d(T v) {
  return static_cast<double>(static_cast<float>(v));
}
template <>
double to_d<double>(double v) {
  return v;
}

/// Spacing of T's values at |y| (one ulp).
template <class T>
wide ulp(wide y) {
  int e = 0;
  std::frexp(static_cast<double>(std::abs(y)), &e);  // |y| in [2^(e-1), 2^e)
  int mant = 0;
  if constexpr (std::is_same_v<T, double>) mant = 53;
  if constexpr (std::is_same_v<T, float>) mant = 24;
  if constexpr (std::is_same_v<T, Eigen::half>) mant = 11;
  if constexpr (std::is_same_v<T, Eigen::bfloat16>) mant = 8;
  return std::ldexp(1.0L, e - mant);
}

/// The bound of apply.hpp for an output y of the pair (a, b): 0.5 ulp_T(y) + K (|a| + |b|) scale,
/// K = 2^-51 for double storage (against the exact phase), 2^-50 for float storage (double math),
/// 2^-22 for the half types (float math); float and half against the long double phase.
/// With xPos, double: 2^-50 (the scale's two more roundings).
template <class T>
wide bound(wide y, wide a, wide b, wide scale, bool xpos = false) {
  const wide K = std::is_same_v<T, double>  ? std::ldexp(1.0L, xpos ? -50 : -51)
                 : std::is_same_v<T, float> ? std::ldexp(1.0L, -50)
                                            : std::ldexp(1.0L, -22);
  return ulp<T>(y) / 2 + K * (std::abs(a) + std::abs(b)) * scale;
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<T> v(n);
  for (auto& x : v) x = T(static_cast<float>(u(rng)));
  if constexpr (std::is_same_v<T, double>)
    for (auto& x : v) x = u(rng);
  return v;
}

/// Check every rotated head of a dense [B, H, S, D] tensor against the reference.
template <class T>
void check_dense(const std::vector<T>& in, const std::vector<T>& out, std::size_t B, std::size_t H, std::size_t S,
                 std::size_t D, const std::vector<std::int64_t>& offsets, const pr::frequencies& f, pr::layout lay,
                 xpos_ref xp = {}, int sign = 1) {
  const std::size_t h = f.inv_freq.size();
  std::size_t checked = 0, failed = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t hh = 0; hh < H; ++hh)
      for (std::size_t s = 0; s < S; ++s) {
        const std::size_t base = ((b * H + hh) * S + s) * D;
        std::vector<wide> v(D);
        for (std::size_t j = 0; j < D; ++j) v[j] = to_d(in[base + j]);
        const wide n = static_cast<wide>(offsets[b] + static_cast<std::int64_t>(s));
        const auto r = ref_rotate(v, n, f, lay, xp, sign, std::is_same_v<T, double>);
        for (std::size_t j = 0; j < D; ++j) {
          const wide y = to_d(out[base + j]);
          wide tol = 0;
          if (j < 2 * h) {
            const std::size_t k = lay == pr::layout::interleaved ? j / 2 : j % h;
            const std::size_t ia = lay == pr::layout::interleaved ? 2 * k : k;
            const std::size_t ib = lay == pr::layout::interleaved ? 2 * k + 1 : k + h;
            const wide scale = std::abs(r[ia]) + std::abs(r[ib]) > 0
                                   ? std::hypot(r[ia], r[ib]) / std::hypot(v[ia], v[ib])
                                   : static_cast<wide>(f.attention_factor);
            tol = bound<T>(r[j], v[ia], v[ib], scale, xp.on);
          }
          ++checked;
          if (!(std::abs(y - r[j]) <= tol)) {
            if (failed++ < 5)
              FAIL_CHECK("b=" << b << " h=" << hh << " s=" << s << " j=" << j << ": " << static_cast<double>(y)
                              << " vs " << static_cast<double>(r[j]) << " tol " << static_cast<double>(tol));
          }
        }
      }
  CHECK(failed == 0);
  CHECK(checked == B * H * S * D);
}

template <class T>
void dense_against_reference() {
  // Positions up to 2^24 + 40 (offsets), both layouts, partial rotary (12 of 16 columns),
  // attention factor 1.25, GQA (4 q heads, 2 k heads).
  const std::size_t B = 3, Hq = 4, Hk = 2, S = 41, D = 16, half = 6;
  const auto f = odd_frequencies(half, 7);
  const std::vector<std::int64_t> offsets{0, 4093, (std::int64_t{1} << 24)};
  for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
    const auto q0 = random_values<T>(B * Hq * S * D, 1), k0 = random_values<T>(B * Hk * S * D, 2);
    auto q = q0, k = k0;
    pr::apply_options o;
    o.layout = lay;
    pr::apply_inplace<T>(pr::dense_view<T>::contiguous(q.data(), {B, Hq, S, D}),
                         pr::dense_view<T>::contiguous(k.data(), {B, Hk, S, D}), f, offsets, o);
    check_dense(q0, q, B, Hq, S, D, offsets, f, lay);
    check_dense(k0, k, B, Hk, S, D, offsets, f, lay);
  }
}

}  // namespace

TEST_CASE("dense apply: every entry within the stated bound of a long double rotation in f64 f32 f16 and bf16") {
  SUBCASE("double") { dense_against_reference<double>(); }
  SUBCASE("float") { dense_against_reference<float>(); }
  SUBCASE("half") { dense_against_reference<Eigen::half>(); }
  SUBCASE("bfloat16") { dense_against_reference<Eigen::bfloat16>(); }
}

TEST_CASE("default frequencies at positions near 2^24: f32 results within 0.5 ulp + 2^-50 (|a|+|b|) of exact") {
  const std::size_t D = 128, S = 16;
  const auto f = pr::default_frequencies(D, 500000.0);
  const std::vector<std::int64_t> offsets{(std::int64_t{1} << 24) - 8};
  const auto q0 = random_values<float>(S * D, 3);
  auto q = q0;
  pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, S, D}), {}, f, offsets);
  check_dense(q0, q, 1, 1, S, D, offsets, f, pr::layout::interleaved);
}

TEST_CASE("half storage: results equal the f32-math rotation rounded once (vs the f32 path within the bound)") {
  // The half path computes in float; the f32 path in double. Both rounded to bf16/half must agree
  // within 1 ulp of the half type (two roundings of values 2^-22 (|a|+|b|) apart).
  const std::size_t S = 33, D = 64;
  const auto f = pr::default_frequencies(D);
  const std::vector<std::int64_t> offsets{123456};
  const auto h0 = random_values<Eigen::bfloat16>(S * D, 4);
  std::vector<float> x(h0.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(h0[i]);
  auto h = h0;
  pr::apply_inplace<Eigen::bfloat16>(pr::dense_view<Eigen::bfloat16>::contiguous(h.data(), {1, 1, S, D}), {}, f,
                                     offsets, {.layout = pr::layout::half});
  pr::apply_inplace<float>(pr::dense_view<float>::contiguous(x.data(), {1, 1, S, D}), {}, f, offsets,
                           {.layout = pr::layout::half});
  std::size_t bad = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double tol = static_cast<double>(ulp<Eigen::bfloat16>(x[i])) + std::ldexp(4.0, -22);
    if (!(std::abs(static_cast<double>(static_cast<float>(h[i])) - x[i]) <= tol)) ++bad;
  }
  CHECK(bad == 0);
}

TEST_CASE("ragged application equals per-sequence dense application bitwise") {
  const std::size_t Hq = 3, Hk = 1, D = 20, half = 8;  // partial rotary: 16 of 20 columns
  const auto f = odd_frequencies(half, 11, 0.75);
  const std::vector<std::int32_t> cu{0, 5, 5, 22, 23};
  const std::vector<std::int32_t> off{3, 9, 1000, 70000};
  const std::size_t T = 23;
  for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
    const auto q0 = random_values<float>(T * Hq * D, 5), k0 = random_values<float>(T * Hk * D, 6);
    auto q = q0, k = k0;
    pr::apply_ragged_inplace<float, std::int32_t>(pr::ragged_view<float>::contiguous(q.data(), {T, Hq, D}),
                                                  pr::ragged_view<float>::contiguous(k.data(), {T, Hk, D}), cu, off, f,
                                                  {.layout = lay});
    for (std::size_t b = 0; b + 1 < cu.size(); ++b) {
      const auto t0 = static_cast<std::size_t>(cu[b]), L = static_cast<std::size_t>(cu[b + 1] - cu[b]);
      // the dense [1, H, L, D] of the same tokens, through a strided view of the ragged input
      auto qd = q0, kd = k0;
      pr::dense_view<float> qv{qd.data() + t0 * Hq * D, {1, Hq, L, D}, {0, static_cast<std::ptrdiff_t>(D),
                                                                          static_cast<std::ptrdiff_t>(Hq * D), 1}};
      pr::dense_view<float> kv{kd.data() + t0 * Hk * D, {1, Hk, L, D}, {0, static_cast<std::ptrdiff_t>(D),
                                                                          static_cast<std::ptrdiff_t>(Hk * D), 1}};
      const std::vector<std::int64_t> o{off[b]};
      pr::apply_inplace<float>(qv, kv, f, o, {.layout = lay});
      CHECK(std::memcmp(qd.data() + t0 * Hq * D, q.data() + t0 * Hq * D, L * Hq * D * sizeof(float)) == 0);
      CHECK(std::memcmp(kd.data() + t0 * Hk * D, k.data() + t0 * Hk * D, L * Hk * D * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("a KV cache appending token by token equals the prefill of the whole sequence bitwise") {
  const std::size_t H = 2, D = 32, S = 19;
  const auto f = pr::default_frequencies(D, 1e6);
  const auto q0 = random_values<Eigen::half>(S * H * D, 8);
  auto whole = q0, steps = q0;
  const std::vector<std::int64_t> cu_all{0, static_cast<std::int64_t>(S)}, off0{0};
  pr::apply_ragged_inplace<Eigen::half, std::int64_t>(pr::ragged_view<Eigen::half>::contiguous(whole.data(), {S, H, D}),
                                                      {}, cu_all, off0, f);
  for (std::size_t t = 0; t < S; ++t) {
    const std::vector<std::int64_t> cu{0, 1}, off{static_cast<std::int64_t>(t)};
    pr::apply_ragged_inplace<Eigen::half, std::int64_t>(
        pr::ragged_view<Eigen::half>::contiguous(steps.data() + t * H * D, {1, H, D}), {}, cu, off, f);
  }
  CHECK(std::memcmp(whole.data(), steps.data(), whole.size() * sizeof(Eigen::half)) == 0);
}

TEST_CASE("a strided batch-seq-heads-head_dim view gives the contiguous result bitwise") {
  const std::size_t B = 2, S = 7, H = 3, D = 8;
  const auto f = pr::default_frequencies(D);
  const auto x0 = random_values<double>(B * S * H * D, 9);
  // contiguous [B, H, S, D] copy
  std::vector<double> c(x0.size());
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t j = 0; j < D; ++j) c[((b * H + h) * S + s) * D + j] = x0[((b * S + s) * H + h) * D + j];
  auto x = x0;
  const auto sd = static_cast<std::ptrdiff_t>(D);
  pr::dense_view<double> xv{x.data(), {B, H, S, D}, {static_cast<std::ptrdiff_t>(S * H * D), sd, static_cast<std::ptrdiff_t>(H * D), 1}};
  const std::vector<std::int64_t> off{2, 50};
  pr::apply_inplace<double>(xv, {}, f, off, {.layout = pr::layout::half});
  pr::apply_inplace<double>(pr::dense_view<double>::contiguous(c.data(), {B, H, S, D}), {}, f, off,
                            {.layout = pr::layout::half});
  bool same = true;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      for (std::size_t h = 0; h < H; ++h)
        for (std::size_t j = 0; j < D; ++j)
          same = same && c[((b * H + h) * S + s) * D + j] == x[((b * S + s) * H + h) * D + j];
  CHECK(same);
}

TEST_CASE("the score of R(m) q and R(n) k depends only on n - m: the closed form at positions up to 10^6") {
  // score = f^2 sum_k [cos((n-m) w_k)(q_a k_a + q_b k_b) + sin((n-m) w_k)(q_b k_a - q_a k_b)]
  // in long double; tolerance 1e-13 relative to f^2 sum |q||k| (double storage, a few roundings per term).
  const std::size_t D = 64;
  const auto f = odd_frequencies(D / 2, 13, 1.1);
  const auto q0 = random_values<double>(D, 14), k0 = random_values<double>(D, 15);
  for (auto lay : {pr::layout::interleaved, pr::layout::half})
    for (std::int64_t m : {std::int64_t{0}, std::int64_t{77}, std::int64_t{1000003}})
      for (std::int64_t n : {std::int64_t{0}, std::int64_t{5}, std::int64_t{999999}}) {
        auto q = q0, k = k0;
        const std::vector<std::int64_t> om{m}, on{n};
        pr::apply_inplace<double>(pr::dense_view<double>::contiguous(q.data(), {1, 1, 1, D}), {}, f, om, {.layout = lay});
        pr::apply_inplace<double>(pr::dense_view<double>::contiguous(k.data(), {1, 1, 1, D}), {}, f, on, {.layout = lay});
        wide got = 0, expect = 0, mag = 0;
        for (std::size_t j = 0; j < D; ++j) got += static_cast<wide>(q[j]) * k[j];
        for (std::size_t kk = 0; kk < D / 2; ++kk) {
          const std::size_t a = lay == pr::layout::interleaved ? 2 * kk : kk;
          const std::size_t b = lay == pr::layout::interleaved ? 2 * kk + 1 : kk + D / 2;
          const wide phi = static_cast<wide>(n - m) * f.inv_freq[kk];
          expect += std::cos(phi) * (q0[a] * k0[a] + q0[b] * k0[b]) + std::sin(phi) * (q0[b] * k0[a] - q0[a] * k0[b]);
          mag += (std::abs(q0[a]) + std::abs(q0[b])) * (std::abs(k0[a]) + std::abs(k0[b]));
        }
        const wide f2 = static_cast<wide>(f.attention_factor) * f.attention_factor;
        CHECK(static_cast<double>(std::abs(got - f2 * expect)) <= 1e-13 * static_cast<double>(f2 * mag));
      }
}

TEST_CASE("xPos: each entry against a long double transcription and the score closed form with zeta^((m-n)/B)") {
  const std::size_t D = 32, S = 40;
  const auto f = pr::default_frequencies(D);
  pr::apply_options o;
  o.xpos.enabled = true;
  o.xpos.scale_base = 512;
  for (double center : {0.0, 1000.0}) {
    o.xpos.center = center;
    const xpos_ref xr{true, 0.4L, 512, center};
    const std::vector<std::int64_t> off{1990};
    const auto q0 = random_values<double>(S * D, 16), k0 = random_values<double>(S * D, 17);
    auto q = q0, k = k0;
    pr::apply_inplace<double>(pr::dense_view<double>::contiguous(q.data(), {1, 1, S, D}),
                              pr::dense_view<double>::contiguous(k.data(), {1, 1, S, D}), f, off, o);
    check_dense(q0, q, 1, 1, S, D, off, f, pr::layout::interleaved, xr, +1);
    check_dense(k0, k, 1, 1, S, D, off, f, pr::layout::interleaved, xr, -1);
    // score of the query row i (position 1990 + i) with key row j: sum over pairs of
    // zeta_k^((i - j)/B) [cos((j - i) w_k)(qa ka + qb kb) + sin((j - i) w_k)(qb ka - qa kb)]
    // (independent of the center; tolerance 1e-13 relative to sum |q||k| zeta^..)
    for (std::size_t i : {0u, 7u, 39u})
      for (std::size_t j : {0u, 20u, 39u}) {
        wide got = 0, expect = 0, mag = 0;
        for (std::size_t c = 0; c < D; ++c) got += static_cast<wide>(q[i * D + c]) * k[j * D + c];
        for (std::size_t kk = 0; kk < D / 2; ++kk) {
          const wide zeta = (static_cast<wide>(2 * kk) / D + 0.4L) / 1.4L;
          const wide decay = std::pow(zeta, (static_cast<wide>(i) - static_cast<wide>(j)) / 512);
          const wide phi = (static_cast<wide>(j) - static_cast<wide>(i)) * f.inv_freq[kk];
          const double *qa = &q0[i * D + 2 * kk], *ka = &k0[j * D + 2 * kk];
          expect += decay * (std::cos(phi) * (qa[0] * ka[0] + qa[1] * ka[1]) + std::sin(phi) * (qa[1] * ka[0] - qa[0] * ka[1]));
          mag += decay * (std::abs(qa[0]) + std::abs(qa[1])) * (std::abs(ka[0]) + std::abs(ka[1]));
        }
        CHECK(static_cast<double>(std::abs(got - expect)) <= 1e-13 * static_cast<double>(mag));
      }
  }
  CHECK(pr::xpos_zeta(0, 128) == doctest::Approx(0.4 / 1.4).epsilon(1e-15));
  CHECK(pr::xpos_zeta(63, 128) == doctest::Approx((126.0 / 128 + 0.4) / 1.4).epsilon(1e-15));
}

namespace {
using posenc_test::expect_error;
}  // namespace

TEST_CASE("apply bad input: each a named posenc::error with the argument in its message") {
  const std::size_t T = 6, H = 2, D = 8;
  std::vector<float> q(T * H * D, 0.5f), k(T * H * D, 0.25f);
  const auto f = pr::default_frequencies(D);
  auto qv = pr::ragged_view<float>::contiguous(q.data(), {T, H, D});
  auto kv = pr::ragged_view<float>::contiguous(k.data(), {T, H, D});
  const std::vector<int> cu{0, 2, 6}, off{0, 10};
  auto ragged = [&](std::vector<int> c, std::vector<int> o, pr::apply_options opt = {}, pr::ragged_view<float> qq = {},
                    pr::frequencies ff = {}) {
    if (qq.data == nullptr) qq = qv;
    if (ff.inv_freq.empty()) ff = f;
    pr::apply_ragged_inplace<float, int>(qq, kv, c, o, ff, opt);
  };
  expect_error<posenc::invalid_argument>([&] { ragged(cu, off, {.rotary_dim = 7}); }, "rotary_dim: expected an even");
  expect_error<posenc::shape_error>([&] { ragged(cu, off, {.rotary_dim = 6}); }, "2 * freqs.inv_freq.size() = 8");
  expect_error<posenc::shape_error>([&] { ragged(cu, off, {}, {}, pr::default_frequencies(10)); },
                                    "rotary_dim <= head_dim = 8");
  expect_error<posenc::invalid_argument>([&] { ragged({0, 4, 2, 6}, {0, 1, 2}); }, "cu_seqlens: expected non-decreasing");
  expect_error<posenc::shape_error>([&] { ragged({0, 2, 5}, off); }, "token count 6, got 5");
  expect_error<posenc::invalid_argument>([&] { ragged({1, 2, 6}, off); }, "cu_seqlens[0]: expected 0");
  expect_error<posenc::shape_error>([&] { ragged({}, {}); }, "cu_seqlens: expected batch + 1");
  expect_error<posenc::shape_error>([&] { ragged(cu, {0}); }, "offsets: expected one offset per sequence");
  expect_error<posenc::invalid_argument>([&] { ragged(cu, {0, -1}); }, "offsets[1]: expected a position >= 0");
  expect_error<posenc::invalid_argument>([&] { ragged(cu, off, {.max_positions = 13}); },
                                         "offsets[1] + length of sequence 1: expected <= max_positions = 13, got 10 + 4");
  ragged(cu, off, {.max_positions = 14});  // exactly fits
  {
    pr::frequencies bad = f;
    bad.inv_freq[2] = NAN;
    expect_error<posenc::non_finite_error>([&] { ragged(cu, off, {}, {}, bad); }, "freqs.inv_freq");
  }
  {  // one validator of frequencies for tables and apply: a negative attention factor or inv_freq is rejected
    pr::frequencies bad = f;
    bad.attention_factor = -1.0;
    expect_error<posenc::invalid_argument>([&] { ragged(cu, off, {}, {}, bad); },
                                           "freqs.attention_factor: expected a value > 0, got -1");
    CHECK_THROWS_AS((void)pr::table<float>(bad, 0, 4), posenc::invalid_argument);
    bad = f;
    bad.inv_freq[1] = -0.5L;
    expect_error<posenc::invalid_argument>([&] { ragged(cu, off, {}, {}, bad); }, "freqs.inv_freq: expected finite values >= 0");
  }
  {
    pr::apply_options o;
    o.xpos.enabled = true;
    o.xpos.gamma = 0;
    expect_error<posenc::invalid_argument>([&] { ragged(cu, off, o); }, "options.xpos: expected gamma > 0");
  }
  {
    const pr::ragged_view<float> strided{qv.data, {qv.sizes[0], qv.sizes[1], 4}, {qv.strides[0], qv.strides[1], 2}};
    expect_error<posenc::shape_error>([&] { ragged(cu, off, {}, strided, pr::default_frequencies(4)); },
                                      "q.strides[2]: expected 1");
  }
  {
    auto kk = pr::ragged_view<float>::contiguous(k.data(), {T - 1, H, D});
    expect_error<posenc::shape_error>([&] { pr::apply_ragged_inplace<float, int>(qv, kk, cu, off, f); },
                                      "k: expected [tokens, heads, head_dim] = [6, *, 8]");
  }
  {
    std::vector<float> d(2 * H * 3 * D, 1.0f), e(2 * H * 4 * D, 1.0f);
    expect_error<posenc::shape_error>(
        [&] {
          pr::apply_inplace<float>(pr::dense_view<float>::contiguous(d.data(), {2, H, 3, D}),
                                   pr::dense_view<float>::contiguous(e.data(), {2, H, 4, D}), f);
        },
        "k: expected [batch, heads, seq, head_dim] = [2, *, 3, 8]");
    const std::vector<std::int64_t> o{0, 100};
    expect_error<posenc::invalid_argument>(
        [&] { pr::apply_inplace<float>(pr::dense_view<float>::contiguous(d.data(), {2, H, 3, D}), {}, f, o, {.max_positions = 102}); },
        "offsets[1] + seq: expected <= max_positions = 102, got 100 + 3");
  }
  // NaN in q, then in k: non_finite_error naming the first entry of the affected pair
  q[(3 * H + 1) * D + 5] = NAN;
  expect_error<posenc::non_finite_error>([&] { ragged(cu, off); }, "q[3, 1, 4]");
  std::fill(q.begin(), q.end(), 0.5f);
  k[(5 * H + 0) * D + 0] = INFINITY;
  expect_error<posenc::non_finite_error>([&] { ragged(cu, off); }, "k[5, 0, 0]");
  // with the check off, no exception (and the NaN stays in its pair)
  k[0] = 1.0f;
  std::fill(k.begin(), k.end(), 0.25f);
  k[3] = NAN;
  CHECK_NOTHROW(ragged(cu, off, {.check_finite = false}));
  CHECK(std::isnan(k[2]));
  CHECK(std::isnan(k[3]));
  CHECK(std::isfinite(k[4]));
}

// ---- explicit per-token positions (rotary::position_ids) ----

namespace {

/// check_dense with explicit positions: row (b, s) at ids[b * S + s] (or ids[s] when shared).
template <class T>
void check_dense_ids(const std::vector<T>& in, const std::vector<T>& out, std::size_t B, std::size_t H, std::size_t S,
                     std::size_t D, const std::vector<std::int64_t>& ids, const pr::frequencies& f, pr::layout lay) {
  // per sequence, check_dense with one offset 0 on a copy holding that sequence at its positions:
  // written out here as the reference loop, position by position
  const std::size_t h = f.inv_freq.size();
  std::size_t failed = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t hh = 0; hh < H; ++hh)
      for (std::size_t s = 0; s < S; ++s) {
        const std::size_t base = ((b * H + hh) * S + s) * D;
        std::vector<wide> v(D);
        for (std::size_t j = 0; j < D; ++j) v[j] = to_d(in[base + j]);
        const wide n = static_cast<wide>(ids.size() == S ? ids[s] : ids[b * S + s]);
        const auto r = ref_rotate(v, n, f, lay, {}, 1, std::is_same_v<T, double>);
        for (std::size_t j = 0; j < 2 * h; ++j) {
          const std::size_t k = lay == pr::layout::interleaved ? j / 2 : j % h;
          const std::size_t ia = lay == pr::layout::interleaved ? 2 * k : k;
          const std::size_t ib = lay == pr::layout::interleaved ? 2 * k + 1 : k + h;
          const wide tol = bound<T>(r[j], v[ia], v[ib], static_cast<wide>(f.attention_factor));
          if (!(std::abs(to_d(out[base + j]) - r[j]) <= tol) && failed++ < 5)
            FAIL_CHECK("b=" << b << " s=" << s << " j=" << j << " at " << static_cast<double>(n));
        }
        for (std::size_t j = 2 * h; j < D; ++j) CHECK(to_d(out[base + j]) == v[j]);  // not rotated
      }
  CHECK(failed == 0);
}

template <class T>
void position_ids_dense() {
  // S = 300 crosses the 256-position chunk; GQA; partial rotary; attention factor 1.25
  const std::size_t B = 3, Hq = 4, Hk = 2, S = 300, D = 16, half = 6;
  const auto f = odd_frequencies(half, 21);
  const std::vector<std::int64_t> offsets{0, 4093, (std::int64_t{1} << 24)};
  for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
    const auto q0 = random_values<T>(B * Hq * S * D, 31), k0 = random_values<T>(B * Hk * S * D, 32);
    const auto qv = [&](std::vector<T>& x) { return pr::dense_view<T>::contiguous(x.data(), {B, Hq, S, D}); };
    const auto kv = [&](std::vector<T>& x) { return pr::dense_view<T>::contiguous(x.data(), {B, Hk, S, D}); };
    // 1. ids = offsets[b] + s, [batch, seq]: bitwise the offsets path
    std::vector<std::int64_t> ids(B * S);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t s = 0; s < S; ++s) ids[b * S + s] = offsets[b] + static_cast<std::int64_t>(s);
    auto qa = q0, ka = k0, qb = q0, kb = k0;
    pr::apply_inplace<T>(qv(qa), kv(ka), f, offsets, {.layout = lay});
    pr::apply_inplace<T>(qv(qb), kv(kb), f, pr::position_ids(ids), {.layout = lay});
    CHECK(std::memcmp(qa.data(), qb.data(), qa.size() * sizeof(T)) == 0);
    CHECK(std::memcmp(ka.data(), kb.data(), ka.size() * sizeof(T)) == 0);
    // 2. shared [seq] ids = 7 + s: bitwise the offsets path with offsets {7, 7, 7}
    std::vector<std::int64_t> shared(S);
    for (std::size_t s = 0; s < S; ++s) shared[s] = 7 + static_cast<std::int64_t>(s);
    auto qc = q0, qd = q0;
    pr::apply_inplace<T>(qv(qc), {}, f, std::vector<std::int64_t>{7, 7, 7}, {.layout = lay});
    pr::apply_inplace<T>(qv(qd), {}, f, pr::position_ids(shared), {.layout = lay});
    CHECK(std::memcmp(qc.data(), qd.data(), qc.size() * sizeof(T)) == 0);
    // 3. left padding, a jump, repeated and decreasing positions, up to 2^24 + 2^20: against the
    // long double rotation at each token's own position
    std::mt19937_64 rng(41);
    std::uniform_int_distribution<std::int64_t> any(0, (std::int64_t{1} << 24) + (std::int64_t{1} << 20));
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t s = 0; s < S; ++s) {
        const auto si = static_cast<std::int64_t>(s);
        ids[b * S + s] = b == 0 ? std::max<std::int64_t>(0, si - 37)                  // left padding
                         : b == 1 ? (s < 150 ? si : 100000 + si)                         // a jump
                                  : (s % 3 == 0 ? any(rng) : (s % 3 == 1 ? 5 : 300 - si));  // scattered
      }
    auto qe = q0, ke = k0;
    pr::apply_inplace<T>(qv(qe), kv(ke), f, pr::position_ids(ids), {.layout = lay});
    check_dense_ids(q0, qe, B, Hq, S, D, ids, f, lay);
    check_dense_ids(k0, ke, B, Hk, S, D, ids, f, lay);
  }
}

}  // namespace

TEST_CASE("position_ids, dense: bitwise the offsets path where equivalent, else the reference rotation") {
  SUBCASE("double") { position_ids_dense<double>(); }
  SUBCASE("float") { position_ids_dense<float>(); }
  SUBCASE("half") { position_ids_dense<Eigen::half>(); }
  SUBCASE("bfloat16") { position_ids_dense<Eigen::bfloat16>(); }
}

TEST_CASE("position_ids, ragged: packed sequences restarting at 0 equal cu_seqlens bitwise, any positions exact") {
  const std::size_t Hq = 3, Hk = 1, D = 20, half = 8;
  const auto f = odd_frequencies(half, 43, 0.75);
  const std::vector<std::int64_t> cu{0, 5, 75, 76, 160}, zero{0, 0, 0, 0}, off{0, 900, 3, 70000};
  const std::size_t T = 160;
  for (auto lay : {pr::layout::interleaved, pr::layout::half}) {
    const auto q0 = random_values<float>(T * Hq * D, 45), k0 = random_values<float>(T * Hk * D, 46);
    const auto qv = [&](std::vector<float>& x) { return pr::ragged_view<float>::contiguous(x.data(), {T, Hq, D}); };
    const auto kv = [&](std::vector<float>& x) { return pr::ragged_view<float>::contiguous(x.data(), {T, Hk, D}); };
    for (const auto* o : {&zero, &off}) {
      std::vector<std::int64_t> ids(T);
      for (std::size_t b = 0; b + 1 < cu.size(); ++b)
        for (auto t = cu[b]; t < cu[b + 1]; ++t) ids[static_cast<std::size_t>(t)] = (*o)[b] + (t - cu[b]);
      auto qa = q0, ka = k0, qb = q0, kb = k0;
      pr::apply_ragged_inplace<float, std::int64_t>(qv(qa), kv(ka), cu, *o, f, {.layout = lay});
      pr::apply_ragged_inplace<float>(qv(qb), kv(kb), pr::position_ids(ids), f, {.layout = lay});
      CHECK(std::memcmp(qa.data(), qb.data(), qa.size() * sizeof(float)) == 0);
      CHECK(std::memcmp(ka.data(), kb.data(), ka.size() * sizeof(float)) == 0);
    }
    // speculative decoding / scattered positions: each token against the long double rotation
    std::vector<std::int64_t> ids(T);
    std::mt19937_64 rng(47);
    std::uniform_int_distribution<std::int64_t> any(0, std::int64_t{1} << 24);
    for (std::size_t t = 0; t < T; ++t) ids[t] = t % 4 == 0 ? any(rng) : static_cast<std::int64_t>(t / 2);
    auto q = q0;
    pr::apply_ragged_inplace<float>(qv(q), {}, pr::position_ids(ids), f, {.layout = lay});
    // a ragged [T, H, D] is the dense [1, H, T, D] with strides swapped: check token by token
    std::vector<float> in1(D), out1(D);
    for (std::size_t t = 0; t < T; ++t)
      for (std::size_t hh = 0; hh < Hq; ++hh) {
        std::copy_n(q0.begin() + static_cast<std::ptrdiff_t>((t * Hq + hh) * D), D, in1.begin());
        std::copy_n(q.begin() + static_cast<std::ptrdiff_t>((t * Hq + hh) * D), D, out1.begin());
        check_dense_ids(in1, out1, 1, 1, 1, D, {ids[t]}, f, lay);
      }
  }
}

TEST_CASE("position_ids bad input: negative (INT64_MIN too), >= 2^53, >= max_positions, wrong count") {
  const std::size_t B = 2, H = 1, S = 3, D = 8;
  std::vector<float> q(B * H * S * D, 0.5f);
  const auto f = pr::default_frequencies(D);
  const auto qv = pr::dense_view<float>::contiguous(q.data(), {B, H, S, D});
  const auto rv = pr::ragged_view<float>::contiguous(q.data(), {B * S, H, D});
  const auto dense = [&](std::vector<std::int64_t> ids, pr::apply_options o = {}) {
    pr::apply_inplace<float>(qv, {}, f, pr::position_ids(ids), o);
  };
  const auto ragged = [&](std::vector<std::int64_t> ids, pr::apply_options o = {}) {
    pr::apply_ragged_inplace<float>(rv, {}, pr::position_ids(ids), f, o);
  };
  constexpr std::int64_t big = std::int64_t{1} << 53;
  expect_error<posenc::invalid_argument>([&] { dense({0, 1, -1}); }, "position_ids[2]: expected a position >= 0, got -1");
  expect_error<posenc::invalid_argument>([&] { dense({0, INT64_MIN, 2}); }, "position_ids[1]: expected a position >= 0");
  expect_error<posenc::invalid_argument>([&] { dense({0, 1, big}); }, "position_ids[2]: expected a position < 2^53");
  expect_error<posenc::invalid_argument>([&] { dense({0, 1, 2, 3, 4, 9}, {.max_positions = 9}); },
                                         "position_ids[5]: expected a position < max_positions = 9, got 9");
  expect_error<posenc::shape_error>([&] { dense({0, 1, 2, 3}); }, "expected seq = 3 or batch * seq = 6");
  expect_error<posenc::invalid_argument>([&] { ragged({0, 1, 2, 3, INT64_MIN, 5}); }, "position_ids[4]: expected a position >= 0");
  expect_error<posenc::invalid_argument>([&] { ragged({0, 1, 2, 3, 4, big + 5}); }, "position_ids[5]: expected a position < 2^53");
  expect_error<posenc::shape_error>([&] { ragged({0, 1}); }, "position_ids: expected one position per token (6), got 2");
  // in range: seq (3) beyond max_positions (2) is fine when every position is below it
  CHECK_NOTHROW(dense({0, 1, 0}, {.max_positions = 2}));
}
