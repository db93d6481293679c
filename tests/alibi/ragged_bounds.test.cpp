// SPDX-License-Identifier: MIT
// alibi::add_bias_ragged with the cost bound of issue 37: the ramp is as long as the longest row
// written (not k_max), sequences with no keys or no queries write nothing, and cu_seqlens of any
// integer type (int32, int64, uint64) give the same bits. The refusals (INT64_MIN, 2^63, 2^40
// k_max) are census rows (tests/core/census.test.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <posenc/alibi.hpp>

namespace pa = posenc::alibi;

namespace {
template <class I>
std::vector<float> ragged(const std::vector<float>& s0, std::size_t Tq, std::size_t H, std::size_t Kmax,
                          const std::vector<double>& m, const std::vector<I>& cq, const std::vector<I>& ck) {
  auto s = s0;
  pa::add_bias_ragged<float, I>(pa::ragged_scores_view<float>::contiguous(s.data(), {Tq, H, Kmax}), m, cq, ck);
  return s;
}
}  // namespace

TEST_CASE("ALiBi ragged: k_max far above every sequence's keys, sequences without keys or queries, any offset type") {
  const std::size_t H = 2, Kmax = 40, Tq = 7;
  const auto m = pa::slopes(H);
  // sequences: 3 queries / 5 keys, 2 queries / 0 keys (nothing to write), 0 queries / 9 keys,
  // 2 queries / 6 keys: the longest written row has 6 entries, k_max is 40
  const std::vector<std::int64_t> cq{0, 3, 5, 5, 7}, ck{0, 5, 5, 14, 20};
  std::vector<float> s0(Tq * H * Kmax);
  std::mt19937_64 rng(37);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : s0) x = u(rng);
  const auto s = ragged(s0, Tq, H, Kmax, m, cq, ck);
  for (std::size_t b = 0; b + 1 < cq.size(); ++b) {
    const auto q0 = static_cast<std::size_t>(cq[b]), ql = static_cast<std::size_t>(cq[b + 1] - cq[b]);
    const auto kl = static_cast<std::size_t>(ck[b + 1] - ck[b]);
    // the dense bias of the sequence on a copy: bitwise the same entries, the rest untouched
    auto d = s0;
    if (ql > 0 && kl > 0)
      pa::add_bias<float>(pa::scores_view<float>{d.data() + q0 * H * Kmax,
                                                 {1, H, ql, kl},
                                                 {0, static_cast<std::ptrdiff_t>(Kmax), static_cast<std::ptrdiff_t>(H * Kmax), 1}},
                          m);
    for (std::size_t t = 0; t < ql; ++t)
      for (std::size_t h = 0; h < H; ++h) {
        const std::size_t row = ((q0 + t) * H + h) * Kmax;
        CHECK(std::memcmp(d.data() + row, s.data() + row, Kmax * sizeof(float)) == 0);
      }
  }
  // the sequence with queries but no keys: its rows are exactly the input
  CHECK(std::memcmp(s0.data() + 3 * H * Kmax, s.data() + 3 * H * Kmax, 2 * H * Kmax * sizeof(float)) == 0);
  // the same offsets as int32 and uint64: the same bits
  const std::vector<int> cq32(cq.begin(), cq.end()), ck32(ck.begin(), ck.end());
  const std::vector<std::uint64_t> cqu(cq.begin(), cq.end()), cku(ck.begin(), ck.end());
  CHECK(ragged(s0, Tq, H, Kmax, m, cq32, ck32) == s);
  CHECK(ragged(s0, Tq, H, Kmax, m, cqu, cku) == s);
}
