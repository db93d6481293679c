// SPDX-License-Identifier: MIT
// Regression tests of the malformed calls of issue 26, one per call: each must end in a typed
// posenc::error whose message names the argument (never a crash, a hang, signed overflow, a
// silent NaN/Inf, std::bad_alloc or std::length_error). They run in the release and the
// ASan+UBSan builds; nothing here allocates more than a few kilobytes, so every size below must
// be rejected before any work or allocation (a call that tried would fail or time out).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/alibi.hpp>
#include <posenc/tensor/tensor_view.hpp>
#include <posenc/io/json.hpp>
#include <posenc/numeric/fft.hpp>
#include <posenc/rotary.hpp>
#include <posenc/tupe.hpp>

#include "tupe/naive_reference.hpp"

namespace {

constexpr std::size_t p2(int e) { return std::size_t{1} << e; }
constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

/// Runs f; passes when it throws E (derived from posenc::error) whose message contains needle.
template <class E, class F>
void expect_error(F&& f, std::string_view needle) {
  std::string got = "no exception";
  bool typed = false, named = false;
  try {
    f();
  } catch (const posenc::error& e) {
    got = e.what();
    typed = dynamic_cast<const E*>(&e) != nullptr;
    named = got.find(needle) != std::string::npos;
  } catch (const std::exception& e) {
    got = std::string("not a posenc::error: ") + e.what();
  }
  INFO("expected a typed error naming '", needle, "', got: ", got);
  CHECK(typed);
  CHECK(named);
}

namespace pr = posenc::rotary;
namespace pa = posenc::alibi;

pr::frequencies freqs(std::size_t dim = 2) { return pr::default_frequencies(dim); }

}  // namespace

TEST_CASE("safety: a tensor_view whose element count or span overflows cannot be made") {
  using V4 = posenc::tensor_view<float, 4>;
  // contiguous(): the row-major strides of {2^32, 2^32, 2, 2} overflow std::ptrdiff_t (2^66)
  expect_error<posenc::size_error>([] { (void)V4::contiguous(nullptr, {p2(32), p2(32), 2, 2}); }, "sizes");
  // sizes whose product wraps to 0 in std::size_t (2^32 * 2^32 = 2^64)
  expect_error<posenc::size_error>([] { (void)V4{nullptr, {p2(32), p2(32), 1, 2}, {0, 0, 0, 1}}; }, "sizes");
  // a single size beyond posenc::max_extent, even with another size 0 (no elements)
  expect_error<posenc::size_error>([] { (void)V4::contiguous(nullptr, {1, 1, p2(63), 0}); }, "sizes[2]");
  // strides whose span overflows: (2^40 - 1) * 2^40
  float x = 0;
  expect_error<posenc::size_error>(
      [&] { (void)V4{&x, {2, 1, 1, 1}, {static_cast<std::ptrdiff_t>(p2(62)), 0, 0, 1}}; }, "strides");
  // element count above max_elements without overflowing: 2^21 * 2^21 = 2^42
  expect_error<posenc::size_error>([] { (void)V4::contiguous(nullptr, {p2(21), p2(21), 1, 1}); }, "max_elements");
  // a valid view still works and reports its checked element count
  std::vector<float> buf(24);
  const auto v = V4::contiguous(buf.data(), {2, 3, 2, 2});
  CHECK(v.elements() == 24);
  CHECK(v.strides[0] == 12);
  CHECK(v.strides[3] == 1);
  const V4 empty{};
  CHECK(empty.elements() == 0);
}

TEST_CASE("safety: rotary::apply_inplace / apply_ragged_inplace and alibi::add_bias with huge sizes and null data") {
  const auto f = freqs();
  // q {nullptr, {2^32, 2^32, 1, 2}}: the product wraps to 0 and used to pass the null check
  expect_error<posenc::size_error>(
      [&] { pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {p2(32), p2(32), 1, 2}), {}, f); },
      "sizes");
  // ragged {2^33, 2^31, 2} with cu_seqlens {0, 2^33}
  expect_error<posenc::size_error>(
      [&] {
        const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(p2(33))};
        pr::apply_ragged_inplace<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {p2(33), p2(31), 2}),
                                                      {}, cu, {}, f);
      },
      "sizes");
  // scores {2^62, 2, 2, 2}
  expect_error<posenc::size_error>(
      [] {
        const std::vector<double> m{0.5, 0.25};
        pa::add_bias<float>(pa::scores_view<float>::contiguous(nullptr, {p2(62), 2, 2, 2}), m);
      },
      "sizes");
  // a null pointer with a non-empty valid shape is a shape_error naming the view
  expect_error<posenc::shape_error>(
      [&] { pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, 2, 2}), {}, f); }, "q");
}

TEST_CASE("safety: 2^53 - seq cannot overflow (seq = 2^63 in apply_inplace and add_bias)") {
  const auto f = freqs();
  const std::vector<std::int64_t> off{0};
  expect_error<posenc::size_error>(
      [&] { pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, p2(63), 0}), {}, f, off); },
      "sizes[2]");
  expect_error<posenc::size_error>(
      [] {
        const std::vector<double> m{0.5};
        pa::add_bias<float>(pa::scores_view<float>::contiguous(nullptr, {1, 1, p2(63), 0}), m, std::vector<std::int64_t>{0});
      },
      "sizes[2]");
}

TEST_CASE("safety: rotary::validate(head_dim = SIZE_MAX) and huge head_dim through compute_frequencies / load_config") {
  pr::rope_config c;
  c.head_dim = size_max;
  expect_error<posenc::size_error>([&] { pr::validate(c); }, "head_dim");
  c.head_dim = p2(40) + 2;
  expect_error<posenc::size_error>([&] { (void)pr::compute_frequencies(c); }, "head_dim");
  c.head_dim = p2(53);
  expect_error<posenc::size_error>([&] { (void)pr::compute_frequencies(c); }, "head_dim");
  // load_config bounds a config's head width by max_config_head_dim (a config_error naming the key)
  expect_error<pr::config_error>(
      [] { (void)pr::load_config(R"({"head_dim": 9007199254740992, "rope_theta": 10000.0})"); }, "head_dim");
  // rotary_dim (documented as not validated) does not convert an out-of-range double
  c.head_dim = size_max;
  CHECK(pr::rotary_dim(c) == 0);
}

TEST_CASE("safety: |offset| checks without std::abs of INT64_MIN") {
  const std::vector<double> m{0.5};
  std::vector<float> s(4);
  const std::vector<std::int64_t> off{std::numeric_limits<std::int64_t>::min()};
  expect_error<posenc::invalid_argument>(
      [&] { pa::add_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 1, 2, 2}), m, off); }, "q_offsets[0]");
  expect_error<posenc::invalid_argument>(
      [&] { (void)pa::bias_table<float>(m, 2, 2, std::numeric_limits<std::int64_t>::min()); }, "q_offset");
  std::vector<float> q(4);
  expect_error<posenc::invalid_argument>(
      [&] { pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 2}), {}, freqs(), off); },
      "offsets[0]");
}

TEST_CASE("safety: fft::batch_plan of 2^41 and 2^62 is rejected before any work") {
  expect_error<posenc::size_error>([] { posenc::fft::batch_plan<double> p(p2(41)); }, "size n");
  expect_error<posenc::size_error>([] { posenc::fft::batch_plan<double> p(p2(62)); }, "size n");
}

TEST_CASE("safety: huge frequency and table sizes are size_error / allocation_error, never bad_alloc") {
  expect_error<posenc::size_error>([] { (void)pr::default_frequencies(p2(41)); }, "rotary_dim");
  expect_error<posenc::size_error>([] { (void)pr::default_frequencies(size_max - 1); }, "rotary_dim");
  const auto f = freqs(4);
  expect_error<posenc::size_error>([&] { (void)pr::table<float>(f, 0, p2(53)); }, "count");
  expect_error<posenc::size_error>([&] { (void)pr::table<float>(f, 0, p2(40) + 1); }, "count");
  const std::vector<double> m{0.5};
  expect_error<posenc::size_error>([&] { (void)pa::bias_table<float>(m, p2(21), p2(21)); }, "k_len");
  // write_bias with k_len = 2^53 and q_len = 0: rejected (the view's k_len exceeds max_extent)
  expect_error<posenc::size_error>(
      [&] { pa::write_bias<float>(pa::scores_view<float>::contiguous(nullptr, {1, 1, 0, p2(53)}), m); }, "sizes[3]");
}

TEST_CASE("safety: silent wrong values become errors (heads = 0, xpos_zeta(0, 0), Inf in half tables and biases)") {
  std::vector<float> s(4);
  expect_error<posenc::invalid_argument>(
      [&] { pa::add_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 0, 2, 2}), {}); }, "heads");
  expect_error<posenc::invalid_argument>([] { (void)pr::xpos_zeta(0, 0); }, "rotary_dim");
  expect_error<posenc::invalid_argument>([] { (void)pr::xpos_zeta(1, 2); }, "k");
  expect_error<posenc::non_finite_error>([] { (void)pr::xpos_zeta(0, 4, std::nan("")); }, "gamma");
  // cos * attention_factor = 1e6 does not fit in Eigen::half (max 65504)
  auto f = freqs(4);
  f.attention_factor = 1e6;
  expect_error<posenc::invalid_argument>([&] { (void)pr::table<Eigen::half>(f, 0, 4); }, "attention_factor");
  CHECK_NOTHROW((void)pr::table<float>(f, 0, 4));
  // a bfloat16 bias with slope 1e300 is Inf
  const std::vector<double> big{1e300};
  std::vector<Eigen::bfloat16> b(4);
  expect_error<posenc::invalid_argument>(
      [&] { pa::add_bias<Eigen::bfloat16>(pa::scores_view<Eigen::bfloat16>::contiguous(b.data(), {1, 1, 2, 2}), big); },
      "slopes[0]");
  expect_error<posenc::invalid_argument>([&] { (void)pa::bias_table<Eigen::bfloat16>(big, 2, 2); }, "slopes[0]");
  // the same slope fits in double: no error there
  CHECK_NOTHROW((void)pa::bias_table<double>(big, 2, 2));
  // a half bias of m * distance = 1 * 70000 overflows too, 1 * 60000 does not
  const std::vector<double> one{1.0};
  expect_error<posenc::invalid_argument>([&] { (void)pa::bias_table<Eigen::half>(one, 1, 70001, 0); }, "slopes[0]");
}

TEST_CASE("safety: json accessors check their index; a fail callback that returns is an error") {
  namespace js = posenc::io::json;
  const std::string text = "[1,2]";
  const auto doc = js::parse(text, [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); });
  const js::value root = doc.root();
  CHECK(root.item(1).text() == "2");
  expect_error<posenc::invalid_argument>([&] { (void)root.item(5); }, "k");
  expect_error<posenc::invalid_argument>([&] { (void)root.item(2); }, "k");
  expect_error<posenc::invalid_argument>([&] { (void)root.item(0).item(0); }, "k");
  // a callback that returns instead of throwing
  expect_error<posenc::io_error>([] { (void)js::parse("[1,", [](std::size_t, std::string_view) {}); }, "fail");
}

TEST_CASE("safety: positional_bias_cache::get hands out a snapshot that outlives set_parameters") {
  using namespace posenc::tupe;
  config cfg;
  cfg.d = 12;
  cfg.heads = 3;
  cfg.cls = cls_reset::reference;
  cfg.relative = true;
  const auto p1 = tupe_test::random_parameters<double>(cfg, 24, 7);
  const auto p2p = tupe_test::random_parameters<double>(cfg, 32, 8);
  positional_bias_cache<double> cache(cfg, p1);
  const std::shared_ptr<const head_stack<double>> held = cache.get(20);
  const auto params = cache.params();
  cache.set_parameters(p2p);  // drops the cache's own reference, not the caller's
  const auto expect = positional_bias(cfg, p1, 20);
  CHECK((held->flat().array() == expect.flat().array()).all());
  CHECK(params->pos.rows() == p1.pos.rows());
  CHECK(cache.params()->pos.rows() == p2p.pos.rows());
  CHECK(cache.get(20) != held);
}
