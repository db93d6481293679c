// SPDX-License-Identifier: MIT
// rotary::apply_decode_inplace / apply_decode_ragged_inplace and rotary::decode_cache: a decode
// step from the table is bitwise the exact path (apply_inplace / apply_ragged_inplace with the
// same positions: the second method) in double, float, Eigen::half and Eigen::bfloat16, both
// layouts, partial rotary, GQA head counts, positions up to 2^17 - 1 and past the table's cap;
// the cache's policy (made on the second sighting, rows a power of two >= 256 above the largest
// position, max_positions / max_bytes / max_tables, clear), threads growing one table at once
// against the exact path, and the bad inputs with their messages.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <posenc/rotary.hpp>

#include "message_of.hpp"

namespace pr = posenc::rotary;

namespace {

/// Frequencies of a rule (llama3 scaling of base 500000: inv_freq and inv_freq_lo), head_dim 2 * half.
pr::frequencies rule_frequencies(std::size_t half, double factor = 1.0) {
  pr::frequencies f;
  std::mt19937_64 rng(half * 7 + 1);
  std::uniform_real_distribution<double> u(-13.1, 0.0);
  for (std::size_t k = 0; k < half; ++k) {
    const long double w = std::exp(static_cast<long double>(u(rng)));
    f.inv_freq.push_back(w);
    f.inv_freq_lo.push_back(w * 0x1p-66L);  // a low part, as the rules carry one
  }
  f.attention_factor = factor;
  return f;
}

template <class T>
std::vector<T> random_values(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.f, 2.f);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

/// Dense decode step of B sequences (q: Hq heads, k: Hk heads, head_dim D, rotary 2 * half) at
/// `pos`: the table's result (second call: the first only registers the frequencies) against
/// apply_inplace with position_ids. Returns true when bitwise equal.
template <class T>
bool dense_matches(pr::decode_cache& cache, const pr::frequencies& f, std::size_t D, std::size_t Hq, std::size_t Hk,
                   const std::vector<std::int64_t>& pos, pr::layout lay, unsigned seed) {
  const std::size_t B = pos.size();
  auto q0 = random_values<T>(B * Hq * D, seed), k0 = random_values<T>(B * Hk * D, seed + 1);
  pr::apply_options opt;
  opt.layout = lay;
  auto qe = q0, ke = k0;
  pr::apply_inplace<T>(pr::dense_view<T>::contiguous(qe.data(), {B, Hq, 1, D}),
                       pr::dense_view<T>::contiguous(ke.data(), {B, Hk, 1, D}), f, pr::position_ids(pos), opt);
  bool ok = true;
  for (int round = 0; round < 2; ++round) {
    auto qd = q0, kd = k0;
    pr::apply_decode_inplace<T>(pr::dense_view<T>::contiguous(qd.data(), {B, Hq, 1, D}),
                                pr::dense_view<T>::contiguous(kd.data(), {B, Hk, 1, D}), f, pos, opt, cache);
    ok = ok && same_bits(qd, qe) && same_bits(kd, ke);
  }
  return ok;
}

/// The same for ragged tokens [T, H, D] at `pos` against apply_ragged_inplace with position_ids.
template <class T>
bool ragged_matches(pr::decode_cache& cache, const pr::frequencies& f, std::size_t D, std::size_t Hq, std::size_t Hk,
                    const std::vector<std::int64_t>& pos, pr::layout lay, unsigned seed) {
  const std::size_t n = pos.size();
  auto q0 = random_values<T>(n * Hq * D, seed), k0 = random_values<T>(n * Hk * D, seed + 1);
  pr::apply_options opt;
  opt.layout = lay;
  auto qe = q0, ke = k0;
  pr::apply_ragged_inplace<T>(pr::ragged_view<T>::contiguous(qe.data(), {n, Hq, D}),
                              pr::ragged_view<T>::contiguous(ke.data(), {n, Hk, D}), pr::position_ids(pos), f, opt);
  bool ok = true;
  for (int round = 0; round < 2; ++round) {
    auto qd = q0, kd = k0;
    pr::apply_decode_ragged_inplace<T>(pr::ragged_view<T>::contiguous(qd.data(), {n, Hq, D}),
                                       pr::ragged_view<T>::contiguous(kd.data(), {n, Hk, D}), pos, f, opt, cache);
    ok = ok && same_bits(qd, qe) && same_bits(kd, ke);
  }
  return ok;
}

std::vector<std::int64_t> decode_positions(std::size_t n, std::int64_t top, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> u(0, top);
  std::vector<std::int64_t> p(n);
  for (auto& x : p) x = u(rng);
  p[0] = 0;
  if (n > 1) p[1] = top;
  return p;
}

template <class T>
void check_storage_type() {
  pr::decode_cache cache;
  for (const auto lay : {pr::layout::half, pr::layout::interleaved}) {
    for (const std::size_t D : {64u, 80u}) {  // 80: partial rotary (rotary_dim 64)
      const auto f = rule_frequencies(32, 1.25);
      for (const std::int64_t top : {std::int64_t{5000}, std::int64_t{1} << 16, (std::int64_t{1} << 17) - 1}) {
        const auto pos = decode_positions(9, top, static_cast<unsigned>(top + D));
        CHECK(dense_matches<T>(cache, f, D, 4, 2, pos, lay, 11));
        CHECK(ragged_matches<T>(cache, f, D, 4, 2, pos, lay, 12));
      }
    }
  }
  CHECK(cache.stats().tables == 1);  // one set of frequencies, one table for both layouts and sizes
  CHECK(cache.stats().bytes == (std::size_t{1} << 17) * 64 * sizeof(posenc::numeric::rotation_work_t<T>));
}

}  // namespace

TEST_CASE("decode from the table: bitwise the exact path in f64 f32 f16 and bf16, both layouts, partial rotary, GQA") {
  check_storage_type<double>();
  check_storage_type<float>();
  check_storage_type<Eigen::half>();
  check_storage_type<Eigen::bfloat16>();
}

TEST_CASE("decode_cache::cos_sin: rows bitwise rotary::table at the same positions, in every element type") {
  pr::decode_cache cache;
  const auto f = rule_frequencies(24, 1.25);
  const std::vector<double> pos{0, 1, 255, 256, 4097, 70000, 131071};
  auto check_type = [&](auto tag) {
    using T = decltype(tag);
    CHECK(cache.cos_sin<T>(f, 131071) == nullptr);  // first sighting
    const auto rows = cache.cos_sin<T>(f, 131071);
    REQUIRE(rows != nullptr);
    CHECK(rows->rows() == 131072);
    const auto ref = pr::table<T>(f, pos, pr::table_layout::pairs);
    bool same = true;
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const T* r = rows->row(static_cast<std::size_t>(pos[i]));
      same = same && std::memcmp(r, ref.cos.data() + i * 24, 24 * sizeof(T)) == 0 &&
             std::memcmp(r + 24, ref.sin.data() + i * 24, 24 * sizeof(T)) == 0;
    }
    CHECK(same);
  };
  check_type(double{});
  check_type(float{});
  check_type(Eigen::half{});
  check_type(Eigen::bfloat16{});
  CHECK(cache.stats().tables == 4);  // one per element type
  // rotary::table's own checks reach the caller (not a worker thread): a factor past Eigen::half's range
  const auto big = rule_frequencies(24, 1e6);
  (void)cache.cos_sin<Eigen::half>(big, 10, 2);
  posenc_test::expect_error<posenc::invalid_argument>([&] { (void)cache.cos_sin<Eigen::half>(big, 10, 2); },
                                                      "attention_factor");
}

TEST_CASE("decode: one position shared by the batch, positions past the cap, runs of ragged positions: still exact") {
  pr::decode_cache cache({.max_positions = 1024, .max_bytes = std::size_t{1} << 30, .max_tables = 8});
  const auto f = rule_frequencies(16);
  // one position for every sequence ([seq] = [1] position_ids)
  CHECK(dense_matches<float>(cache, f, 32, 3, 1, {700}, pr::layout::half, 3));
  // beyond max_positions: the exact path serves the call (no table past the cap)
  CHECK(dense_matches<float>(cache, f, 32, 3, 1, {5, 1024, 90000}, pr::layout::half, 4));
  CHECK(ragged_matches<float>(cache, f, 32, 3, 1, {5, 1u << 20}, pr::layout::half, 5));
  CHECK(cache.stats().bytes <= 1024 * 32 * sizeof(double));
  // ragged runs (3, 4, 5): the exact path's angle addition, served by the exact path
  CHECK(ragged_matches<float>(cache, f, 32, 2, 2, {3, 4, 5, 9, 100, 101}, pr::layout::interleaved, 6));
  CHECK(ragged_matches<Eigen::bfloat16>(cache, f, 32, 2, 2, {3, 4, 5, 9}, pr::layout::half, 7));
  CHECK(ragged_matches<double>(cache, f, 32, 2, 2, {3, 4, 5, 9}, pr::layout::half, 8));
}

TEST_CASE("decode_cache: the second sighting makes the table, doubling growth, max_bytes, max_tables, clear") {
  pr::decode_cache cache;
  const auto f = rule_frequencies(8);
  CHECK(cache.table<float>(f, 10) == nullptr);  // first sighting: remembered, no table
  CHECK(cache.stats().keys == 1);
  CHECK(cache.stats().tables == 0);
  auto t = cache.table<float>(f, 10);
  REQUIRE(t != nullptr);
  CHECK(t->rows() == 256);  // at least 256 rows
  CHECK(cache.table<float>(f, 255).get() == t.get());  // covered: the same snapshot
  auto t2 = cache.table<float>(f, 256);
  REQUIRE(t2 != nullptr);
  CHECK(t2->rows() == 512);  // doubled
  CHECK(t->rows() == 256);   // the old snapshot is intact for whoever holds it
  CHECK(std::memcmp(t->row(0), t2->row(0), 256 * 16 * sizeof(double)) == 0);
  CHECK(cache.table<float>(f, 5000)->rows() == 8192);
  CHECK(cache.stats().builds == 3);
  CHECK(cache.stats().bytes == 8192 * 16 * sizeof(double));
  // the half types share float coefficients, a table of their own (another work type)
  CHECK(cache.table<Eigen::half>(f, 3) == nullptr);
  CHECK(cache.table<Eigen::bfloat16>(f, 3) != nullptr);
  CHECK(cache.stats().tables == 2);
  // max_bytes: a table that would pass it is not made (the exact path serves the call)
  pr::decode_cache small({.max_positions = std::uint64_t{1} << 17, .max_bytes = 300 * 16 * sizeof(double), .max_tables = 2});
  (void)small.table<float>(f, 0);
  CHECK(small.table<float>(f, 200) != nullptr);   // 256 rows fit
  CHECK(small.table<float>(f, 300) == nullptr);   // 512 rows would not
  // max_tables: the least recently used set of frequencies is forgotten
  const auto g = rule_frequencies(8, 2.0), h = rule_frequencies(8, 3.0);
  (void)small.table<float>(g, 0);
  CHECK(small.stats().keys == 2);
  (void)small.table<float>(h, 0);  // forgets f (used before g)
  CHECK(small.stats().keys == 2);
  CHECK(small.stats().bytes == 0);
  cache.clear();
  CHECK(cache.stats().keys == 0);
  CHECK(cache.stats().bytes == 0);
  CHECK(t2->rows() == 512);  // held snapshots outlive clear()
}

TEST_CASE("decode_cache: threads growing one table at once give the exact path's result") {
  pr::decode_cache cache;
  const auto f = rule_frequencies(32);
  constexpr std::size_t threads = 6, steps = 12, B = 4, H = 3, D = 64;
  std::vector<char> ok(threads, 1);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::size_t s = 0; s < steps; ++s) {
        // positions that grow the table step after step (256 .. 2^17) from every thread
        const std::int64_t top = std::int64_t{200} << std::min<std::size_t>(s + t % 3, 9);
        auto pos = decode_positions(B, top, static_cast<unsigned>(t * 100 + s));
        auto q0 = random_values<float>(B * H * D, static_cast<unsigned>(t + s));
        auto qe = q0, qd = q0;
        pr::apply_inplace<float>(pr::dense_view<float>::contiguous(qe.data(), {B, H, 1, D}), {}, f, pr::position_ids(pos));
        pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(qd.data(), {B, H, 1, D}), {}, f, pos, {}, cache);
        if (!same_bits(qd, qe)) ok[t] = 0;
      }
    });
  for (auto& th : pool) th.join();
  for (std::size_t t = 0; t < threads; ++t) CHECK(ok[t] == 1);
  CHECK(cache.stats().tables == 1);
  CHECK(cache.stats().bytes == (std::size_t{1} << 17) * 64 * sizeof(double));  // 200 * 2^9 + 1 rows -> 2^17
}

TEST_CASE("decode bad input: each a named posenc::error") {
  pr::decode_cache cache;
  const auto f = rule_frequencies(2);
  std::vector<float> q(2 * 4);
  const auto view = pr::dense_view<float>::contiguous(q.data(), {2, 1, 1, 4});
  using posenc_test::expect_error;
  expect_error<posenc::invalid_argument>(
      [&] { pr::apply_decode_inplace<float>(view, {}, f, std::vector<std::int64_t>{0, -1}, {}, cache); }, "position_ids[1]");
  expect_error<posenc::shape_error>(
      [&] { pr::apply_decode_inplace<float>(view, {}, f, std::vector<std::int64_t>{0, 1, 2}, {}, cache); }, "position_ids");
  q[1] = std::numeric_limits<float>::quiet_NaN();
  (void)cache.table<float>(f, 0);  // the table path checks too
  expect_error<posenc::non_finite_error>(
      [&] { pr::apply_decode_inplace<float>(view, {}, f, std::vector<std::int64_t>{3, 4}, {}, cache); }, "non-finite");
  expect_error<posenc::invalid_argument>([&] { (void)cache.table<float>(f, -1); }, "max_position");
  pr::frequencies bad = f;
  bad.inv_freq[1] = std::numeric_limits<long double>::quiet_NaN();
  expect_error<posenc::non_finite_error>([&] { (void)cache.table<float>(bad, 0); }, "inv_freq");
  expect_error<posenc::invalid_argument>([&] { cache.set_limits({.max_positions = 16, .max_bytes = 0, .max_tables = 0}); },
                                         "max_tables");
  expect_error<posenc::invalid_argument>(
      [&] { cache.set_limits({.max_positions = std::uint64_t{1} << 60, .max_bytes = 0, .max_tables = 1}); }, "max_positions");
  std::vector<float> r(4);
  expect_error<posenc::invalid_argument>(
      [&] {
        pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(r.data(), {1, 1, 4}), {},
                                               std::vector<std::int64_t>{-3}, f, {}, cache);
      },
      "position_ids[0]");
}
