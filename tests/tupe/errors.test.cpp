// SPDX-License-Identifier: MIT
// Bad input gives a typed posenc::error whose message names the function, the argument, what
// was expected and what was given; never UB, a silent NaN or a hang.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "tupe/naive_reference.hpp"

using namespace posenc::tupe;

namespace {

template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("wrong exception type: " << e.what());
  }
  FAIL("no exception");
  return {};
}

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

config small() {
  config c;
  c.d = 12;
  c.heads = 3;
  return c;
}

}  // namespace

TEST_CASE("tupe rejects d not divisible by H") {
  config c = small();
  c.heads = 5;
  const auto msg = message_of<posenc::invalid_argument>([&] { (void)make_parameters<double>(c, 4); });
  CHECK(has(msg, "tupe::make_parameters"));
  CHECK(has(msg, "config.d"));
  CHECK(has(msg, "multiple of config.heads = 5"));
  CHECK(has(msg, "12"));
  c.heads = 0;
  CHECK_THROWS_AS((void)make_parameters<double>(c, 4), posenc::invalid_argument);
  c = small();
  c.ln_eps = 0;
  CHECK_THROWS_AS((void)make_parameters<double>(c, 4), posenc::invalid_argument);
  c.ln_eps = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)make_parameters<double>(c, 4), posenc::invalid_argument);
  c = small();
  c.threads = posenc::max_threads + 1;
  const auto mt = message_of<posenc::invalid_argument>([&] { (void)make_parameters<double>(c, 4); });
  CHECK(has(mt, "config.threads"));
  CHECK(has(mt, "1025"));
}

TEST_CASE("tupe rejects a negative workspace tile size") {
  const config c = small();
  const auto p = make_parameters<double>(c, 4);
  head_stack<double> out;
  workspace<double> ws;
  ws.tile_rows = -3;
  const auto msg = message_of<posenc::invalid_argument>([&] { positional_bias(c, p, p.pos, 4, out, ws); });
  CHECK(has(msg, "tupe::positional_bias"));
  CHECK(has(msg, "workspace.tile_rows"));
  CHECK(has(msg, "-3"));
  ws.tile_rows = 2;  // a valid explicit tile size is accepted
  positional_bias(c, p, p.pos, 4, out, ws);
  CHECK(out.size() > 0);
}

TEST_CASE("tupe rejects mismatched table widths and parameter shapes") {
  const config c = small();
  const auto p = make_parameters<double>(c, 8);
  const posenc::table<double> narrow = posenc::table<double>::Zero(9, 10);
  auto msg = message_of<posenc::shape_error>([&] { (void)positional_bias(c, p, narrow, 8); });
  CHECK(has(msg, "tupe::positional_bias"));
  CHECK(has(msg, "position table"));
  CHECK(has(msg, "expected 12 columns"));
  CHECK(has(msg, "got 10"));
  auto q = p;
  q.pos_q_weight.resize(12, 11);
  msg = message_of<posenc::shape_error>([&] { (void)positional_bias(c, q, 8); });
  CHECK(has(msg, "pos_q_weight"));
  q = p;
  q.pos_ln_weight.resize(11);
  CHECK_THROWS_AS((void)positional_bias(c, q, 8), posenc::shape_error);
  q = p;
  q.pos_k_bias.resize(5);
  CHECK_THROWS_AS((void)positional_bias(c, q, 8), posenc::shape_error);
  q = p;
  q.relative_attention_bias.resize(32, 3);  // needs num_buckets + 1 = 33 rows
  msg = message_of<posenc::shape_error>([&] { (void)positional_bias(c, q, 8); });
  CHECK(has(msg, "relative_attention_bias"));
  CHECK(has(msg, "[33, 3]"));
  config f = c;
  f.cls = cls_reset::free;
  auto pf = make_parameters<double>(f, 8);
  pf.theta1.resize(2);
  CHECK_THROWS_AS((void)positional_bias(f, pf, 8), posenc::shape_error);
}

TEST_CASE("tupe rejects n larger than the table and n < 1") {
  const config c = small();
  const auto p = make_parameters<double>(c, 8);  // 9 rows: the reference reset reads n + 1
  CHECK_NOTHROW((void)positional_bias(c, p, 8));
  const auto msg = message_of<posenc::shape_error>([&] { (void)positional_bias(c, p, 9); });
  CHECK(has(msg, "n = 9"));
  CHECK(has(msg, "9 rows"));
  CHECK(has(msg, "needs 10"));
  CHECK_THROWS_AS((void)positional_bias(c, p, 0), posenc::invalid_argument);
  CHECK_THROWS_AS((void)positional_bias(c, p, -3), posenc::invalid_argument);
  positional_bias_cache<double> cache(c, p);
  CHECK_THROWS_AS((void)cache.get(9), posenc::invalid_argument);
  CHECK_THROWS_AS((void)cache.get(0), posenc::invalid_argument);
}

TEST_CASE("tupe rejects odd or too few buckets and max_distance within the exact range") {
  config c = small();
  c.buckets = bucket_spec{31, 128, true};
  auto msg = message_of<posenc::invalid_argument>([&] { (void)make_parameters<double>(c, 4); });
  CHECK(has(msg, "num_buckets"));
  CHECK(has(msg, "even"));
  c.buckets = bucket_spec{2, 128, true};
  CHECK_THROWS_AS((void)make_parameters<double>(c, 4), posenc::invalid_argument);
  c.buckets = bucket_spec{0, 128, true};
  CHECK_THROWS_AS((void)make_parameters<double>(c, 4), posenc::invalid_argument);
  c.buckets = bucket_spec{32, 8, true};
  msg = message_of<posenc::invalid_argument>([&] { (void)make_parameters<double>(c, 4); });
  CHECK(has(msg, "max_distance"));
  CHECK(has(msg, "max_exact = 8"));
  // TUPE-A ignores the bucket spec
  c.relative = false;
  CHECK_NOTHROW((void)make_parameters<double>(c, 4));
}

TEST_CASE("tupe rejects NaN in the rows it reads and in the upstream gradient") {
  const config c = small();
  auto p = make_parameters<double>(c, 8);
  p.pos(8, 3) = std::numeric_limits<double>::quiet_NaN();  // row 8 = token 7
  CHECK_NOTHROW((void)positional_bias(c, p, 7));            // reads rows 0..7 only
  CHECK_THROWS_AS((void)positional_bias(c, p, 8), posenc::non_finite_error);
  CHECK_THROWS_AS(positional_bias_cache<double>(c, p), posenc::non_finite_error);
  p = make_parameters<double>(c, 8);
  p.pos_k_weight(1, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS((void)positional_bias(c, p, 4), posenc::non_finite_error);
  p = make_parameters<double>(c, 8);
  head_stack<double> G(3, 4);
  G.flat().setZero();
  G(1, 2, 3) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)positional_bias_backward(c, p, G), posenc::non_finite_error);
  head_stack<double> G2(2, 4);
  G2.flat().setZero();
  CHECK_THROWS_AS((void)positional_bias_backward(c, p, G2), posenc::shape_error);
}

TEST_CASE("tupe attention rejects mismatched shapes") {
  const config c = small();
  const auto p = make_parameters<double>(c, 8);
  const auto bias = positional_bias(c, p, 5);
  const auto w = make_attention_parameters<double>(12);
  CHECK_THROWS_AS((void)attention_forward(c, w, posenc::matrix<double>::Zero(4, 12), bias), posenc::shape_error);
  CHECK_THROWS_AS((void)attention_forward(c, w, posenc::matrix<double>::Zero(5, 11), bias), posenc::shape_error);
  auto w2 = w;
  w2.in_proj_weight.resize(36, 11);
  CHECK_THROWS_AS((void)attention_forward(c, w2, posenc::matrix<double>::Zero(5, 12), bias), posenc::shape_error);
  posenc::matrix<double> x = posenc::matrix<double>::Zero(5, 12);
  x(0, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)attention_forward(c, w, x, bias), posenc::non_finite_error);
  posenc::matrix<double> fused(23, 12);
  auto pp = p;
  CHECK_THROWS_AS(set_fused_projection(pp, fused, posenc::vector<double>()),
                  posenc::shape_error);
}

// Regression tests of issue 11, item 5: sizes whose arithmetic was signed overflow (UB).
TEST_CASE("tupe sizes near INT64_MAX throw size_error naming the argument (issue 11, item 5)") {
  const config c = small();
  constexpr Index big = std::numeric_limits<Index>::max();
  // rows_needed(max_len) = max_len + 1
  auto m1 = message_of<posenc::size_error>([&] { (void)make_parameters<double>(c, big); });
  CHECK(has(m1, "tupe::make_parameters: max_len: expected 0 <= max_len <= posenc::max_extent"));
  const auto p = make_parameters<double>(c, 4);
  auto m2 = message_of<posenc::size_error>([&] { (void)positional_bias(c, p, big); });
  CHECK(has(m2, "tupe::positional_bias: n: expected 0 <= n <= posenc::max_extent"));
  // within max_extent, but H n^2 above max_elements
  auto m3 = message_of<posenc::size_error>([&] { (void)positional_bias(c, p, Index{1} << 20); });
  CHECK(has(m3, "config.heads * n * n"));
  // heads * n * n = 2^96
  auto m4 = message_of<posenc::size_error>([] { head_stack<double> h(Index{1} << 32, Index{1} << 32); });
  CHECK(has(m4, "tupe::head_stack::resize: heads * n * n: 4294967296 * 4294967296 overflows std::size_t"));
  CHECK_THROWS_AS(head_stack<double>(big, 1), posenc::size_error);
  head_stack<double> ok(2, 3);
  CHECK_THROWS_AS(ok.resize(1, big), posenc::size_error);
  CHECK(ok.heads() == 2);  // unchanged after the failed resize
  CHECK(ok.size() == 3);
  // 2n - 1 for n = 2^62 + 1
  auto m5 = message_of<posenc::size_error>([] { (void)relative_bucket_offsets((Index{1} << 62) + 1); });
  CHECK(has(m5, "tupe::relative_bucket_offsets: n"));
  // configuration sizes
  config wide = small();
  wide.d = big - big % 3;
  CHECK(has(message_of<posenc::size_error>([&] { (void)make_parameters<double>(wide, 4); }), "config.d"));
  config many = small();
  many.buckets.num_buckets = std::numeric_limits<int>::max() - 1;
  CHECK(has(message_of<posenc::invalid_argument>([&] { (void)make_parameters<double>(many, 4); }),
            "bucket_spec.num_buckets: expected <= 1048576"));
}
