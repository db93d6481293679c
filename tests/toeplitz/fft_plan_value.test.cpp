// SPDX-License-Identifier: MIT
// fft::plan as a value: each of its four strategies (Stockham, two-pass, four-step, Bluestein)
// against a long double direct DFT, and copies, copy-assignments and moves giving the same bits
// as the plan they came from, a copy outliving its original (the sub-plans of the four-step and
// Bluestein strategies are owned, not shared), and a moved-from plan being an empty plan of size 0.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "toeplitz/common.hpp"

namespace {

using tp_test::cld;
namespace fft = posenc::fft;

static_assert(std::is_nothrow_move_constructible_v<fft::plan<double>> && std::is_nothrow_move_assignable_v<fft::plan<double>>);
static_assert(std::is_copy_constructible_v<fft::plan<float>> && std::is_copy_assignable_v<fft::plan<float>>);

enum class strategy { stockham, two_pass, four_step, bluestein };

template <class T>
strategy strategy_of(const fft::plan<T>& p) {
  const int flags = int(p.uses_two_pass()) + int(p.uses_four_step()) + int(p.uses_bluestein());
  REQUIRE(flags <= 1);  // one strategy at a time
  if (p.uses_two_pass()) return strategy::two_pass;
  if (p.uses_four_step()) return strategy::four_step;
  if (p.uses_bluestein()) return strategy::bluestein;
  return strategy::stockham;
}

// Tolerance: max_k |X_k - X_k^ref| <= c eps log2(n) max_k |X_k^ref|, c = 10 for one transform
// (one rounded butterfly and twiddle product per pass, as tests/toeplitz/fft_lanes.test.cpp), and
// c = 40 for Bluestein: a forward and an inverse transform of size m < 4n (log2 m < log2 n + 2)
// and three pointwise chirp products, 3 x 10 (log2 n + 2) <= 40 log2 n for n >= 64.
template <class T>
long double tolerance(std::size_t n, strategy s) {
  const long double c = s == strategy::bluestein ? 40.0L : 10.0L;
  return c * static_cast<long double>(std::numeric_limits<T>::epsilon()) * std::log2(static_cast<long double>(n));
}

template <class T>
struct split {
  std::vector<T> re, im;
  bool operator==(const split&) const = default;  // bit for bit (no NaN in these data)
};

template <class T>
split<T> forward_of(fft::plan<T>& p, split<T> x) {
  p.forward(x.re.data(), x.im.data());
  return x;
}

template <class T>
void check_plan(std::size_t n, strategy want) {
  INFO("n = ", n, ", lane width ", fft::plan<T>::lane_width());
  split<T> x{std::vector<T>(n), std::vector<T>(n)};
  std::vector<cld> xl(n);
  for (std::size_t j = 0; j < n; ++j) {
    x.re[j] = tp_test::uniform<T>();
    x.im[j] = tp_test::uniform<T>();
    xl[j] = cld(x.re[j], x.im[j]);
  }
  fft::plan<T> p(n);
  REQUIRE(strategy_of(p) == want);

  // The strategy's transform against the direct DFT (64 sampled bins beyond 512).
  const split<T> y = forward_of(p, x);
  split<T> z = x;
  p.inverse(z.re.data(), z.im.data());
  std::vector<std::complex<T>> yc(n), zc(n);
  for (std::size_t k = 0; k < n; ++k) {
    yc[k] = {y.re[k], y.im[k]};
    zc[k] = {z.re[k], z.im[k]};
  }
  if (n <= 512) {
    CHECK(tp_test::rel_max_error(yc, tp_test::direct_dft(xl, -1)) <= tolerance<T>(n, want));
    CHECK(tp_test::rel_max_error(zc, tp_test::direct_dft(xl, +1)) <= tolerance<T>(n, want));
  } else {
    const auto bins = tp_test::sample_bins(n, 64);
    CHECK(tp_test::rel_max_error_at(yc, tp_test::direct_dft_at(xl, bins, -1), bins) <= tolerance<T>(n, want));
    CHECK(tp_test::rel_max_error_at(zc, tp_test::direct_dft_at(xl, bins, +1), bins) <= tolerance<T>(n, want));
  }
  // The radices: those of the passes (their product is n), none for four-step and Bluestein.
  std::size_t prod = 1;
  for (unsigned r : p.factors()) prod *= r;
  if (want == strategy::stockham || want == strategy::two_pass) CHECK(prod == n);
  else CHECK(p.factors().empty());

  // A copy, a copy-assigned plan (of another size before) and a moved plan: the same bits.
  fft::plan<T> copy(p);
  CHECK(strategy_of(copy) == want);
  CHECK(forward_of(copy, x) == y);
  fft::plan<T> assigned(n + 1);
  assigned = p;
  CHECK(assigned.size() == n);
  CHECK(strategy_of(assigned) == want);
  CHECK(forward_of(assigned, x) == y);
  CHECK(assigned.factors() == p.factors());

  // A copy outlives its original: it owns its sub-plans and buffers.
  std::optional<fft::plan<T>> original(std::in_place, n);
  fft::plan<T> survivor(*original);
  original.reset();
  CHECK(forward_of(survivor, x) == y);

  fft::plan<T> moved(std::move(copy));
  CHECK(moved.size() == n);
  CHECK(strategy_of(moved) == want);
  CHECK(forward_of(moved, x) == y);
  fft::plan<T> move_assigned(3);
  move_assigned = std::move(moved);
  CHECK(forward_of(move_assigned, x) == y);

  // Moved-from plans are plans of size 0: no strategy beyond an empty Stockham sequence, no
  // radices, and transforms that touch no element (the arrays stay as they were).
  for (fft::plan<T>* gone : {&copy, &moved}) {
    CHECK(gone->size() == 0);
    CHECK(gone->factors().empty());
    CHECK(strategy_of(*gone) == strategy::stockham);
    split<T> untouched = x;
    gone->forward(untouched.re.data(), untouched.im.data());
    gone->inverse(untouched.re.data(), untouched.im.data());
    CHECK(untouched == x);
    std::vector<std::complex<T>> c(n, std::complex<T>(1, 2)), d(n, std::complex<T>(3, 4));
    gone->forward(c.data(), d.data());
    CHECK(d == std::vector<std::complex<T>>(n, std::complex<T>(3, 4)));
    CHECK(gone->forward(std::span<const std::complex<T>>(c.data(), 0)).empty());
    // ... and may be assigned a plan again.
    *gone = fft::plan<T>(n);
    CHECK(forward_of(*gone, x) == y);
  }
}

}  // namespace

TEST_CASE("fft plan value - the Stockham strategy (odd sizes, no lane split)") {
  for (std::size_t n : {45u, 1001u}) {
    check_plan<double>(n, strategy::stockham);
    check_plan<float>(n, strategy::stockham);
  }
}

TEST_CASE("fft plan value - the two-pass strategy, or four-step without SIMD lanes") {
  // 4096 = 2^12 splits into two multiples of W >= 2 with n1, n2 >= 2W for every lane width up to
  // AVX-512's 8 doubles / 16 floats; with W = 1 the power-of-two factor >= 1024 picks four-step.
  check_plan<double>(4096, fft::plan<double>::lane_width() >= 2 ? strategy::two_pass : strategy::four_step);
  check_plan<float>(1024, fft::plan<float>::lane_width() >= 2 ? strategy::two_pass : strategy::stockham);
}

TEST_CASE("fft plan value - the four-step strategy (long double: no lanes)") {
  static_assert(fft::plan<long double>::lane_width() == 1);
  check_plan<long double>(4096, strategy::four_step);
  check_plan<long double>(3 * 4096, strategy::four_step);
}

TEST_CASE("fft plan value - the Bluestein strategy (a prime factor > 13)") {
  for (std::size_t n : {97u, 1031u, 17u * 64u}) check_plan<double>(n, strategy::bluestein);
  check_plan<long double>(1031, strategy::bluestein);
}
