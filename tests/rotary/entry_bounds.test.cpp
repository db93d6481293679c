// SPDX-License-Identifier: MIT
// The entry points' bounds of issue 37: validation in the precision of use (a frequency or a
// factor finite in long double but not in the table's or the rotation's type is refused, naming
// the argument, instead of a NaN table or a "non-finite q"), and the cost bound's edge: a view
// with zero heads in q but heads in k still rotates k, exactly as q would be rotated. The
// refusals themselves are census rows (tests/core/census.test.cpp, add_issue37); here the
// accepted side of each limit is checked to give finite, correct values.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <posenc/rotary.hpp>

#include "message_of.hpp"

namespace pr = posenc::rotary;
using posenc_test::message_of;
using wide = posenc::numeric::wide;

namespace {
pr::rope_context ctx() {
  pr::rope_context c;
  c.head_dim = 8;
  c.max_position_embeddings = 64;
  c.original_max_position_embeddings = 16;
  return c;
}
}  // namespace

TEST_CASE("rotary precision of use: factors and frequencies beyond double are refused by name, up to the limit accepted") {
  // 1e-320 is subnormal in double: the linear rule's frequencies omega / factor reach ~1e320,
  // finite in long double only. Refused at plan construction, naming the factor.
  CHECK_THROWS_WITH_AS(pr::plan(ctx(), pr::rules::linear{{}, 1e-320}),
                       doctest::Contains("factor: expected a normal double"), posenc::invalid_argument);
  // ... and through the transformers-5 loader (rope_parameters), the same error.
  CHECK_THROWS_WITH_AS((void)pr::load_config(R"({"head_dim": 8, "rope_parameters": {"rope_type": "linear", "factor": 1e-320}})"),
                       doctest::Contains("factor"), posenc::invalid_argument);
  // A small but normal factor whose frequencies stay finite in double is accepted: with factor
  // 1e-300 the largest frequency is 1e300, and its tables are finite and within [-1, 1] at the
  // last positions below 2^53 (the double path's huge phases reduce in long double).
  const pr::plan big(ctx(), pr::rules::linear{{}, 1e-300});
  const std::uint64_t last = (std::uint64_t{1} << 53) - 4;
  const auto td = pr::table<double>(big.frequencies(), last, 4);
  const auto tf = pr::table<float>(big.frequencies(), last, 4);
  CHECK(td.cos.allFinite());
  CHECK(td.sin.allFinite());
  CHECK(tf.cos.allFinite());
  CHECK(tf.sin.allFinite());
  CHECK(td.cos.cwiseAbs().maxCoeff() <= 1.0);
  CHECK(tf.sin.cwiseAbs().maxCoeff() <= 1.0f);
  // Hand-made frequencies finite in long double only: the double table was NaN, the float one
  // garbage; now refused at the table's entry, naming the frequency and its index.
  pr::frequencies f;
  f.inv_freq = {1.0L, static_cast<wide>(1e300) * static_cast<wide>(1e20)};
  const std::string m = message_of([&] { (void)pr::table<double>(f, 0, 2); });
  CHECK(m.find("inv_freq[1]") != std::string::npos);
  CHECK(m.find("finite in double") != std::string::npos);
  CHECK_THROWS_AS((void)pr::table<float>(f, 0, 2), posenc::non_finite_error);
  CHECK_THROWS_AS((void)pr::table<long double>(f, 0, 2), posenc::non_finite_error);
  // LongRoPE: a short_factor entry of 1e-320, named with its index.
  pr::rules::longrope l;
  l.short_factor = {1.0, 1.0, 1e-320, 1.0};
  l.long_factor = {1.0, 1.0, 1.0, 1.0};
  CHECK_THROWS_WITH_AS(pr::plan(ctx(), l), doctest::Contains("short_factor[2]"), posenc::invalid_argument);
  l.short_factor[2] = 1.0;
  l.long_factor[3] = 1e-320;
  CHECK_THROWS_WITH_AS(pr::plan(ctx(), l), doctest::Contains("long_factor[3]"), posenc::invalid_argument);
  // The attention factor: a normal double (a subnormal one kept no precision in the tables).
  f.inv_freq = {1.0L};
  f.attention_factor = 1e-310;
  CHECK_THROWS_WITH_AS((void)pr::table<double>(f, 0, 2), doctest::Contains("attention_factor"), posenc::invalid_argument);
}

TEST_CASE("rotary apply: an attention factor beyond the work type is named, not reported as a non-finite q") {
  using bf16 = Eigen::bfloat16;
  using half = Eigen::half;
  auto f = pr::default_frequencies(2);
  std::vector<bf16> qb(4, bf16(1.0f));
  std::vector<half> qh(4, half(1.0f));
  const std::vector<int> cu{0, 2};
  for (double factor : {1e39, 1e-39}) {  // Inf and subnormal in float, the half types' work type
    CAPTURE(factor);
    f.attention_factor = factor;
    const std::string dense = message_of([&] {
      pr::apply_inplace<bf16>(pr::dense_view<bf16>::contiguous(qb.data(), {1, 1, 2, 2}), {}, f);
    });
    CHECK(dense.find("attention_factor") != std::string::npos);
    CHECK(dense.find("q/k") == std::string::npos);
    const std::string ragged = message_of([&] {
      pr::apply_ragged_inplace<half, int>(pr::ragged_view<half>::contiguous(qh.data(), {2, 1, 2}), {}, cu, {}, f);
    });
    CHECK(ragged.find("attention_factor") != std::string::npos);
    CHECK(ragged.find("q/k") == std::string::npos);
  }
  // refused before any write: q unchanged
  CHECK(qb[0] == bf16(1.0f));
  CHECK(qh[0] == half(1.0f));
  // float storage works in double: 1e39 is a double like any other there (the stored results
  // overflow float only where |q| * 1e39 does).
  f.attention_factor = 1e-30;
  std::vector<float> q(4, 1.0f);
  pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 2}), {}, f);
  CHECK(q[0] == doctest::Approx(1e-30f).epsilon(1e-6));  // position 0: cos 0 = 1, times the factor
}

TEST_CASE("rotary apply: zero heads in q with heads in k rotates k exactly as q") {
  const auto f = pr::default_frequencies(4);
  std::vector<double> k(2 * 3 * 4), as_q;
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = std::sin(0.37 * static_cast<double>(i + 1));
  as_q = k;
  const std::vector<std::int64_t> off{5, 11};
  // q: [2, 0 heads, 3, 4] (no elements, null data); k: [2, 1, 3, 4]
  pr::apply_inplace<double>(pr::dense_view<double>::contiguous(nullptr, {2, 0, 3, 4}),
                            pr::dense_view<double>::contiguous(k.data(), {2, 1, 3, 4}), f, off);
  pr::apply_inplace<double>(pr::dense_view<double>::contiguous(as_q.data(), {2, 1, 3, 4}), {}, f, off);
  CHECK(k == as_q);  // bitwise: the same coefficients, the same kernel
  CHECK(k[0] != std::sin(0.37));  // and it was rotated (position 5)
  // ragged: the same
  std::vector<double> kr(3 * 4), qr;
  for (std::size_t i = 0; i < kr.size(); ++i) kr[i] = std::cos(0.21 * static_cast<double>(i + 1));
  qr = kr;
  const std::vector<std::int64_t> cu{0, 1, 3}, roff{7, 2};
  pr::apply_ragged_inplace<double, std::int64_t>(pr::ragged_view<double>::contiguous(nullptr, {3, 0, 4}),
                                                 pr::ragged_view<double>::contiguous(kr.data(), {3, 1, 4}),
                                                 cu, roff, f);
  pr::apply_ragged_inplace<double, std::int64_t>(pr::ragged_view<double>::contiguous(qr.data(), {3, 1, 4}), {}, cu, roff, f);
  CHECK(kr == qr);
}
