// SPDX-License-Identifier: MIT
// rotary::apply_options::threads: the rotation on 2, 3 and all hardware threads is bitwise the
// rotation on one (each thread rotates whole chunks of positions with its own coefficients, as one
// thread would), for the dense layout (offsets, shared and per-sequence position_ids, including
// the last short chunk and runs broken mid-chunk), the ragged layout (cu_seqlens with empty and
// long sequences, and position_ids with runs and isolated positions), every storage type, and
// both layouts; a NaN is found whichever thread meets it; a thread count above posenc::max_threads
// is an invalid_argument naming `threads`. The single-thread results themselves are checked
// against long double references by tests/rotary/apply.test.cpp.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <posenc/rotary.hpp>

#include "message_of.hpp"

namespace {

namespace pr = posenc::rotary;

template <class T>
std::vector<T> random_values(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<T> v(n);
  for (auto& x : v) x = T(u(rng));
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

template <class T>
void dense_case(pr::layout layout) {
  const std::size_t B = 3, Hq = 4, Hk = 2, S = 600, D = 32;  // 3 chunks of 256 positions, the last short
  const auto f = pr::default_frequencies(D, 10000.0);
  const auto q0 = random_values<T>(B * Hq * S * D, 1), k0 = random_values<T>(B * Hk * S * D, 2);
  const std::vector<std::int64_t> offsets{0, 1000, 1000};
  std::vector<std::int64_t> ids(B * S);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < S; ++s)
      ids[b * S + s] = static_cast<std::int64_t>(s < 300 ? 7 * b + s : 5000 + 3 * s);  // a run, then strided
  for (int mode = 0; mode < 3; ++mode) {  // offsets, shared ids, per-sequence ids
    CAPTURE(mode);
    std::vector<T> q1 = q0, k1 = k0;
    for (std::size_t threads : {1u, 2u, 3u, 0u, 7u}) {
      CAPTURE(threads);
      pr::apply_options o;
      o.layout = layout;
      o.threads = threads;
      std::vector<T> q = q0, k = k0;
      const auto qv = pr::dense_view<T>::contiguous(q.data(), {B, Hq, S, D});
      const auto kv = pr::dense_view<T>::contiguous(k.data(), {B, Hk, S, D});
      if (mode == 0)
        pr::apply_inplace<T>(qv, kv, f, offsets, o);
      else
        pr::apply_inplace<T>(qv, kv, f, pr::position_ids(std::span<const std::int64_t>(ids).first(mode == 1 ? S : B * S)), o);
      if (threads == 1) {
        q1 = q;
        k1 = k;
        CHECK(!same_bits(q, q0));  // it rotated
      } else {
        CHECK(same_bits(q, q1));
        CHECK(same_bits(k, k1));
      }
    }
  }
}

template <class T>
void ragged_case(pr::layout layout) {
  const std::size_t H = 3, D = 16;
  const std::vector<std::int64_t> cu{0, 0, 130, 131, 131, 500};  // empty, 130, 1, empty, 369 tokens
  const std::size_t tokens = 500;
  const std::vector<std::int64_t> offsets{0, 10, 4000, 0, 77};
  std::vector<std::int64_t> ids(tokens);
  std::mt19937 rng(5);
  for (std::size_t t = 0; t < tokens; ++t)  // runs of random length, isolated positions between
    ids[t] = t % 97 < 60 ? static_cast<std::int64_t>(t) : static_cast<std::int64_t>(rng() % 100000);
  const auto f = pr::default_frequencies(D, 500000.0);
  const auto q0 = random_values<T>(tokens * H * D, 3), k0 = random_values<T>(tokens * H * D, 4);
  for (int mode = 0; mode < 2; ++mode) {  // cu_seqlens + offsets, position_ids
    CAPTURE(mode);
    std::vector<T> q1, k1;
    for (std::size_t threads : {1u, 2u, 3u, 0u, 64u}) {
      CAPTURE(threads);
      pr::apply_options o;
      o.layout = layout;
      o.threads = threads;
      std::vector<T> q = q0, k = k0;
      const auto qv = pr::ragged_view<T>::contiguous(q.data(), {tokens, H, D});
      const auto kv = pr::ragged_view<T>::contiguous(k.data(), {tokens, H, D});
      if (mode == 0)
        pr::apply_ragged_inplace<T, std::int64_t>(qv, kv, cu, offsets, f, o);
      else
        pr::apply_ragged_inplace<T>(qv, kv, pr::position_ids(ids), f, o);
      if (threads == 1) {
        q1 = q;
        k1 = k;
        CHECK(!same_bits(q, q0));
      } else {
        CHECK(same_bits(q, q1));
        CHECK(same_bits(k, k1));
      }
    }
  }
}

}  // namespace

TEST_CASE("apply_options::threads: every thread count gives bitwise the one-thread rotation") {
  for (auto layout : {pr::layout::half, pr::layout::interleaved}) {
    dense_case<float>(layout);
    dense_case<double>(layout);
    dense_case<Eigen::half>(layout);
    dense_case<Eigen::bfloat16>(layout);
    ragged_case<float>(layout);
    ragged_case<double>(layout);
    ragged_case<Eigen::bfloat16>(layout);
  }
}

TEST_CASE("apply_options::threads: a NaN in any thread's part is found; too many threads is an error") {
  const std::size_t B = 4, H = 2, S = 300, D = 8;
  const auto f = pr::default_frequencies(D, 10000.0);
  for (std::size_t at : {std::size_t{0}, B * H * S * D / 2 + 3, B * H * S * D - 1}) {
    std::vector<float> q(B * H * S * D, 0.25f);
    q[at] = std::numeric_limits<float>::quiet_NaN();
    pr::apply_options o;
    o.threads = 3;
    CHECK_THROWS_AS(pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {B, H, S, D}), {}, f, {}, o),
                    posenc::non_finite_error);
  }
  std::vector<float> q(B * H * S * D, 0.25f);
  pr::apply_options o;
  o.threads = posenc::max_threads + 1;
  CHECK(posenc_test::message_of<posenc::invalid_argument>([&] {
          pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {B, H, S, D}), {}, f, {}, o);
        }).find("threads") != std::string::npos);
  const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(B * S)};
  CHECK(posenc_test::message_of<posenc::invalid_argument>([&] {
          pr::apply_ragged_inplace<float, std::int64_t>(pr::ragged_view<float>::contiguous(q.data(), {B * S, H, D}), {},
                                                        cu, {}, f, o);
        }).find("threads") != std::string::npos);
}
