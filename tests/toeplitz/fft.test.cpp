// SPDX-License-Identifier: MIT
// posenc::fft against a direct O(n^2) DFT evaluated in long double.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <vector>

#include "toeplitz/common.hpp"

namespace {

using tp_test::cld;

// Sizes: every n <= 64 (radices 2,3,4,5, generic 7,11,13, Bluestein for 17, 19, ...), and larger
// mixed, prime and power-of-two sizes.
std::vector<std::size_t> fft_sizes() {
  std::vector<std::size_t> s;
  for (std::size_t n = 1; n <= 64; ++n) s.push_back(n);
  for (std::size_t n : {97u, 100u, 120u, 128u, 243u, 255u, 256u, 625u, 1000u, 1001u, 1024u, 1031u, 2310u, 4096u, 6000u, 12288u})
    s.push_back(n);
  return s;
}

template <class T>
void check_complex(std::size_t n, long double tol) {
  std::vector<std::complex<T>> x(n);
  std::vector<cld> xl(n);
  for (std::size_t j = 0; j < n; ++j) {
    x[j] = tp_test::uniform<std::complex<T>>();
    xl[j] = cld(x[j].real(), x[j].imag());
  }
  posenc::fft::plan<T> p(n);
  const auto y = p.forward(std::span<const std::complex<T>>(x));
  const auto z = p.inverse(std::span<const std::complex<T>>(x));
  if (n <= 300) {
    CHECK_MESSAGE(tp_test::rel_max_error(y, tp_test::direct_dft(xl, -1)) <= tol, "forward n = ", n);
    CHECK_MESSAGE(tp_test::rel_max_error(z, tp_test::direct_dft(xl, +1)) <= tol, "inverse n = ", n);
  } else {
    // Large n: the direct DFT at 64 sampled bins only (O(64 n) instead of O(n^2)).
    const auto bins = tp_test::sample_bins(n, 64);
    CHECK_MESSAGE(tp_test::rel_max_error_at(y, tp_test::direct_dft_at(xl, bins, -1), bins) <= tol, "forward n = ", n);
    CHECK_MESSAGE(tp_test::rel_max_error_at(z, tp_test::direct_dft_at(xl, bins, +1), bins) <= tol, "inverse n = ", n);
  }
}

}  // namespace

TEST_CASE("fft complex plan f64 matches a long double direct DFT") {
  // Tolerance: a stable FFT has max-norm error ~ eps log2(n) relative to max|X|; 1e-13 (f64) and
  // 2e-5 (f32) leave a margin of ~10-50x over eps*log2(n) for n <= 6000 (Bluestein and four-step
  // sizes included).
  for (std::size_t n : fft_sizes()) check_complex<double>(n, 1e-13L);
}

TEST_CASE("fft complex plan f32 matches a long double direct DFT") {
  // Same tolerance reasoning as for f64 with eps = 6e-8.
  for (std::size_t n : fft_sizes())
    if (n <= 256 || n == 1031 || n == 4096) check_complex<float>(n, 2e-5L);
}

TEST_CASE("fft plan decomposition - radices and Bluestein as documented") {
  // Independent check of the factorisation: the product of the radices is n, every radix is a
  // supported one, and a prime factor > 13 switches to Bluestein.
  for (std::size_t n : fft_sizes()) {
    posenc::fft::plan<double> p(n);
    std::size_t prod = 1;
    for (unsigned r : p.factors()) {
      CHECK((r == 2 || r == 3 || r == 4 || r == 5 || r == 7 || r == 8 || r == 11 || r == 13));
      prod *= r;
    }
    std::size_t rest = n;
    for (std::size_t q : {2u, 3u, 5u, 7u, 11u, 13u})
      while (rest % q == 0) rest /= q;
    CHECK(p.uses_bluestein() == (rest != 1));
    std::size_t pow2 = 1;
    while (n % (2 * pow2) == 0) pow2 *= 2;
    // Two-pass: n = (W a)(W b) with a, b >= 2 for the build's lane width W >= 2.
    const std::size_t W = posenc::fft::plan<double>::lane_width();
    bool splits = false;
    if (W >= 2 && rest == 1 && n % (W * W) == 0)
      for (std::size_t a = 2; a * 2 <= n / (W * W); ++a) splits = splits || (n / (W * W)) % a == 0;
    CHECK(p.uses_two_pass() == splits);
    CHECK(p.uses_four_step() == (!splits && rest == 1 && n >= 4096 && pow2 >= 1024));
    if (!p.uses_bluestein() && !p.uses_four_step()) CHECK(prod == n);
  }
}

TEST_CASE("fft real plan r2c and c2r match the direct DFT") {
  // r2c: the first n/2+1 bins of the long double DFT of a real vector (tolerance as above).
  // c2r: inverse(forward(x)) = n x to 1e-13 relative (two transforms' rounding).
  for (std::size_t n : fft_sizes()) {
    std::vector<double> x(n);
    std::vector<cld> xl(n);
    for (std::size_t j = 0; j < n; ++j) {
      x[j] = tp_test::uniform<double>();
      xl[j] = cld(x[j], 0);
    }
    posenc::fft::real_plan<double> p(n);
    REQUIRE(p.bins() == n / 2 + 1);
    std::vector<std::complex<double>> X(p.bins());
    p.forward(x.data(), X.data());
    if (n <= 300) {
      auto ref = tp_test::direct_dft(xl, -1);
      ref.resize(n / 2 + 1);
      CHECK_MESSAGE(tp_test::rel_max_error(X, ref) <= 1e-13L, "r2c n = ", n);
    } else {
      const auto bins = tp_test::sample_bins(n / 2 + 1, 64);
      CHECK_MESSAGE(tp_test::rel_max_error_at(X, tp_test::direct_dft_at(xl, bins, -1), bins) <= 1e-13L, "r2c n = ", n);
    }
    std::vector<double> back(n);
    p.inverse(X.data(), back.data());
    double err = 0, mx = 0;
    for (std::size_t j = 0; j < n; ++j) {
      err = std::max(err, std::abs(back[j] / static_cast<double>(n) - x[j]));
      mx = std::max(mx, std::abs(x[j]));
    }
    CHECK_MESSAGE(err <= 1e-13 * mx, "c2r n = ", n);
  }
}

TEST_CASE("fft interleaved transform allows in == out and rejects bad sizes") {
  const std::size_t n = 60;
  std::vector<std::complex<double>> x(n), y(n);
  for (auto& v : x) v = tp_test::uniform<std::complex<double>>();
  posenc::fft::plan<double> p(n);
  p.forward(x.data(), y.data());
  std::vector<std::complex<double>> z = x;
  p.forward(z.data(), z.data());  // aliasing: identical result, bit for bit (same operations)
  for (std::size_t k = 0; k < n; ++k) CHECK(z[k] == y[k]);
  CHECK_THROWS_AS(posenc::fft::plan<double>(0), posenc::invalid_argument);
  std::vector<std::complex<double>> short_x(n - 1);
  CHECK_THROWS_AS((void)p.forward(std::span<const std::complex<double>>(short_x)), posenc::shape_error);
}

TEST_CASE("fft next_fast_size returns the smallest 5-smooth size") {
  // Reference: a brute-force scan over m >= n.
  auto smooth = [](std::size_t m) {
    for (std::size_t p : {2u, 3u, 5u})
      while (m % p == 0) m /= p;
    return m == 1;
  };
  for (std::size_t n = 1; n < 3000; n += 7) {
    std::size_t m = n;
    while (!smooth(m)) ++m;
    CHECK(posenc::fft::next_fast_size(n) == m);
  }
}
