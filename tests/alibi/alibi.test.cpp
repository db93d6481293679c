// SPDX-License-Identifier: MIT
// ALiBi: the slopes against the authors' get_slopes (transcribed below), the three bias forms
// against their closed forms, the causal mask, KV-cache offsets, ragged = per-sequence dense
// bitwise, the bias table, half storage, and the bad inputs with their messages.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <posenc/alibi.hpp>

#include "message_of.hpp"

namespace pa = posenc::alibi;

namespace {

/// ofirpress/attention_with_linear_biases, fairseq/models/transformer.py, get_slopes, transcribed:
///   def get_slopes_power_of_2(n):
///       start = (2**(-2**-(math.log2(n)-3))); ratio = start
///       return [start*ratio**i for i in range(n)]
///   if math.log2(n).is_integer(): return get_slopes_power_of_2(n)
///   closest_power_of_2 = 2**math.floor(math.log2(n))
///   return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2*closest_power_of_2)[0::2][:n-closest_power_of_2]
std::vector<double> authors_slopes(int n) {
  auto pow2 = [](int k) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(k)) - 3)));
    std::vector<double> r;
    for (int i = 0; i < k; ++i) r.push_back(start * std::pow(start, i));
    return r;
  };
  const double l = std::log2(static_cast<double>(n));
  if (l == std::floor(l)) return pow2(n);
  const int c = 1 << static_cast<int>(std::floor(l));
  std::vector<double> r = pow2(c);
  const auto more = authors_slopes(2 * c);
  for (std::size_t i = 0; i < more.size() && r.size() < static_cast<std::size_t>(n); i += 2) r.push_back(more[i]);
  return r;
}

using posenc_test::expect_error;

long double exact_bias(pa::bias_form form, long double m, long double i, long double j) {
  switch (form) {
    case pa::bias_form::relative: return -m * (i - j);
    case pa::bias_form::key_position: return m * j;
    case pa::bias_form::symmetric: return -m * std::abs(i - j);
  }
  return 0;
}

}  // namespace

TEST_CASE("ALiBi slopes: 8 heads are 2^-1 .. 2^-8 exactly and other counts match the authors' get_slopes") {
  const auto m8 = pa::slopes(8);
  REQUIRE(m8.size() == 8);
  for (int h = 0; h < 8; ++h) CHECK(m8[static_cast<std::size_t>(h)] == std::ldexp(1.0, -(h + 1)));
  // exp2(-8 (h+1) / n) (within 1 ulp of 2^(-8 (h+1)/n)) vs the authors' start * start**h, whose
  // rounded start carries its 0.5 ulp error (h + 1) times: tolerance (h + 2) 2^-52 relative
  for (int n : {1, 2, 3, 5, 6, 7, 12, 16, 20, 24, 40, 64, 96, 112}) {
    const auto m = pa::slopes(static_cast<std::size_t>(n));
    const auto ref = authors_slopes(n);
    REQUIRE(m.size() == ref.size());
    for (std::size_t h = 0; h < m.size(); ++h) CHECK(std::abs(m[h] - ref[h]) <= std::ldexp(static_cast<double>(h + 2), -52) * ref[h]);
  }
  // 12 heads: the 8 slopes of 8 heads, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5 (odd slopes of 16 heads)
  const auto m12 = pa::slopes(12);
  for (int h = 0; h < 4; ++h)
    CHECK(m12[8 + static_cast<std::size_t>(h)] == doctest::Approx(std::exp2(-0.5 - h)).epsilon(1e-15));
}

TEST_CASE("ALiBi add_bias: the three forms against their closed forms with KV-cache offsets") {
  // float scores: y = round_f32(s + bias) computed via double: |y - exact| <= 0.5 ulp_f32(y) + 2^-50 (|s| + |bias|)
  const std::size_t B = 2, H = 5, Lq = 7, Lk = 30;
  const auto m = pa::slopes(H);
  const std::vector<std::int64_t> off{23, 1000};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  for (auto form : {pa::bias_form::relative, pa::bias_form::key_position, pa::bias_form::symmetric})
    for (bool mask : {false, true}) {
      std::vector<float> s0(B * H * Lq * Lk);
      for (auto& x : s0) x = u(rng);
      auto s = s0;
      pa::add_bias<float>(pa::scores_view<float>::contiguous(s.data(), {B, H, Lq, Lk}), m, off, {form, mask});
      std::size_t bad = 0;
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
          for (std::size_t i = 0; i < Lq; ++i)
            for (std::size_t j = 0; j < Lk; ++j) {
              const std::size_t e = ((b * H + h) * Lq + i) * Lk + j;
              const long double qi = static_cast<long double>(off[b] + static_cast<std::int64_t>(i));
              const long double bias = exact_bias(form, m[h], qi, static_cast<long double>(j));
              if (mask && static_cast<long double>(j) > qi) {
                if (!(std::isinf(s[e]) && s[e] < 0)) ++bad;
                continue;
              }
              const long double exact = s0[e] + bias;
              const long double tol = std::ldexp(std::abs(exact), -24) + std::ldexp(std::abs(s0[e]) + std::abs(bias), -50);
              if (!(std::abs(s[e] - exact) <= tol)) ++bad;
            }
      CHECK(bad == 0);
    }
}

TEST_CASE("ALiBi: relative and key_position differ by m i along each row (same softmax)") {
  const std::size_t H = 4, Lq = 3, Lk = 9;
  const auto m = pa::slopes(H);
  const auto rel = pa::bias_table<double>(m, Lq, Lk, 6, {pa::bias_form::relative});
  const auto key = pa::bias_table<double>(m, Lq, Lk, 6, {pa::bias_form::key_position});
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 0; j < Lk; ++j) {
        const std::size_t e = (h * Lq + i) * Lk + j;
        // integer distances times a power of two (4 heads: slopes 2^-2, 2^-4, ...): exact
        CHECK(key[e] - rel[e] == m[h] * static_cast<double>(6 + i));
      }
}

TEST_CASE("ALiBi: bias_table equals add_bias on zero scores and write_bias and a decode step equals the last prefill row") {
  const std::size_t H = 6, L = 17;
  const auto m = pa::slopes(H);
  for (auto form : {pa::bias_form::relative, pa::bias_form::symmetric}) {
    const auto t = pa::bias_table<float>(m, L, L, 0, {form});
    std::vector<float> z(H * L * L, 0.0f);
    pa::add_bias<float>(pa::scores_view<float>::contiguous(z.data(), {1, H, L, L}), m, {}, {form});
    CHECK(std::memcmp(t.data(), z.data(), z.size() * sizeof(float)) == 0);
    std::vector<float> w(H * L * L, 7.0f);  // write_bias overwrites whatever is there
    pa::write_bias<float>(pa::scores_view<float>::contiguous(w.data(), {1, H, L, L}), m, {}, {form});
    CHECK(std::memcmp(t.data(), w.data(), w.size() * sizeof(float)) == 0);
    // decode: 1 query, L keys, default offset L - 1
    std::vector<float> d(H * L, 0.0f);
    pa::add_bias<float>(pa::scores_view<float>::contiguous(d.data(), {1, H, 1, L}), m, {}, {form});
    for (std::size_t h = 0; h < H; ++h)
      CHECK(std::memcmp(d.data() + h * L, t.data() + (h * L + L - 1) * L, L * sizeof(float)) == 0);
  }
}

TEST_CASE("ALiBi ragged scores equal per-sequence dense scores bitwise and columns past k_len are untouched") {
  const std::size_t H = 3, Kmax = 12;
  const auto m = pa::slopes(H);
  const std::vector<int> cq{0, 4, 5, 5, 9}, ck{0, 10, 22, 25, 29};  // prefill-ish, decode, empty, chunk
  const std::size_t Tq = 9;
  std::vector<float> s(Tq * H * Kmax);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : s) x = u(rng);
  const auto s0 = s;
  const pa::bias_options o{pa::bias_form::relative, true};
  pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(s.data(), {Tq, H, Kmax}), m, cq, ck, o);
  for (std::size_t b = 0; b + 1 < cq.size(); ++b) {
    const auto q0 = static_cast<std::size_t>(cq[b]), ql = static_cast<std::size_t>(cq[b + 1] - cq[b]);
    const auto kl = static_cast<std::size_t>(ck[b + 1] - ck[b]);
    // a dense [1, H, ql, kl] view into a copy of the original ragged scores
    auto d = s0;
    pa::scores_view<float> v{d.data() + q0 * H * Kmax,
                             {1, H, ql, kl},
                             {0, static_cast<std::ptrdiff_t>(Kmax), static_cast<std::ptrdiff_t>(H * Kmax), 1}};
    pa::add_bias<float>(v, m, {}, o);
    for (std::size_t t = 0; t < ql; ++t)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t row = ((q0 + t) * H + h) * Kmax;
        CHECK(std::memcmp(d.data() + row, s.data() + row, kl * sizeof(float)) == 0);
        CHECK(std::memcmp(s0.data() + row + kl, s.data() + row + kl, (Kmax - kl) * sizeof(float)) == 0);
      }
  }
}

TEST_CASE("ALiBi on bf16 and half scores: within 0.5 ulp of the storage type of the exact sum") {
  const std::size_t H = 8, L = 64;
  const auto m = pa::slopes(H);
  std::vector<Eigen::bfloat16> sb(H * L * L, Eigen::bfloat16(0.375f));
  std::vector<Eigen::half> sh(H * L * L, Eigen::half(0.375f));
  pa::add_bias<Eigen::bfloat16>(pa::scores_view<Eigen::bfloat16>::contiguous(sb.data(), {1, H, L, L}), m);
  pa::add_bias<Eigen::half>(pa::scores_view<Eigen::half>::contiguous(sh.data(), {1, H, L, L}), m);
  std::size_t bad = 0;
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < L; ++i)
      for (std::size_t j = 0; j < L; ++j) {
        const std::size_t e = (h * L + i) * L + j;
        const double exact = 0.375 - m[h] * (static_cast<double>(i) - static_cast<double>(j));
        int ex = 0;
        std::frexp(exact, &ex);
        if (!(std::abs(static_cast<float>(sb[e]) - exact) <= std::ldexp(0.5, ex - 8) + 1e-12)) ++bad;
        if (!(std::abs(static_cast<float>(sh[e]) - exact) <= std::ldexp(0.5, ex - 11) + 1e-12)) ++bad;
      }
  CHECK(bad == 0);
}

TEST_CASE("ALiBi bad input: each a named posenc::error with the argument in its message") {
  std::vector<float> s(2 * 4 * 3 * 5, 0.0f);
  auto v = pa::scores_view<float>::contiguous(s.data(), {2, 4, 3, 5});
  const auto m = pa::slopes(4);
  expect_error<posenc::invalid_argument>([] { (void)pa::slopes(0); }, "heads: expected 1 <= heads");
  expect_error<posenc::shape_error>([&] { pa::add_bias<float>(v, pa::slopes(3)); }, "slopes: expected one slope per head (4), got 3");
  {
    auto bad = m;
    bad[1] = NAN;
    expect_error<posenc::non_finite_error>([&] { pa::add_bias<float>(v, bad); }, "slopes[1]: expected a finite slope");
  }
  const std::vector<std::int64_t> one{3};
  expect_error<posenc::shape_error>([&] { pa::add_bias<float>(v, m, one); }, "q_offsets: expected one offset per sequence (batch = 2)");
  {
    const pa::scores_view<float> w{v.data, v.sizes, {v.strides[0], v.strides[1], v.strides[2], 2}};
    expect_error<posenc::shape_error>([&] { pa::add_bias<float>(w, m); }, "scores.strides[3]: expected 1");
  }
  expect_error<posenc::invalid_argument>([&] { pa::add_bias<float>(v, m, {}, {static_cast<pa::bias_form>(9)}); },
                                         "options.form");
  auto r = pa::ragged_scores_view<float>::contiguous(s.data(), {6, 4, 5});
  const std::vector<int> cq{0, 2, 6}, ck{0, 5, 10};
  pa::add_bias_ragged<float, int>(r, m, cq, ck);  // fits
  expect_error<posenc::shape_error>([&] { pa::add_bias_ragged<float, int>(r, m, cq, std::vector<int>{0, 6, 10}); },
                                    "sequence 0 has 6 keys, expected <= k_max = 5");
  expect_error<posenc::invalid_argument>([&] { pa::add_bias_ragged<float, int>(r, m, std::vector<int>{0, 3, 2, 6}, std::vector<int>{0, 1, 2, 3}); },
                                         "cu_seqlens: expected non-decreasing offsets, got a length of -1 for sequence 1 in cu_seqlens_q");
  expect_error<posenc::shape_error>([&] { pa::add_bias_ragged<float, int>(r, m, std::vector<int>{0, 2, 5}, ck); },
                                    "query token count 6, got 5");
  expect_error<posenc::shape_error>([&] { pa::add_bias_ragged<float, int>(r, m, cq, std::vector<int>{0, 5}); },
                                    "cu_seqlens_q/cu_seqlens_k: expected batch + 1");
  expect_error<posenc::invalid_argument>([&] { pa::add_bias_ragged<float, int>(r, m, std::vector<int>{1, 2, 6}, ck); },
                                         "cu_seqlens_q[0], cu_seqlens_k[0]: expected 0");
  expect_error<posenc::invalid_argument>([&] { (void)pa::bias_table<float>(m, 4, 4, std::int64_t{1} << 53); }, "q_offset");
}
