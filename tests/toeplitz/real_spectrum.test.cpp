// SPDX-License-Identifier: MIT
// posenc/numeric/real_spectrum.hpp (fft::unit_root, fft::split_half_spectrum,
// fft::merge_half_spectrum) against direct O(n^2) DFTs evaluated in long double
// (tests/toeplitz/common.hpp), independent of posenc::fft's plans.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <vector>

#include <posenc/numeric/real_spectrum.hpp>

#include "toeplitz/common.hpp"

namespace {
using tp_test::cld;

std::vector<cld> as_complex(const std::vector<double>& re, const std::vector<double>& im) {
  std::vector<cld> v(re.size());
  for (std::size_t k = 0; k < re.size(); ++k) v[k] = cld(re[k], im[k]);
  return v;
}
}  // namespace

TEST_CASE("fft::unit_root is exp(-2 pi i num/den) rounded once, periodic in num") {
  for (std::uint64_t den : {1u, 2u, 3u, 7u, 12u, 1000u, 1u << 20}) {
    for (std::uint64_t num : {0u, 1u, 2u, 5u, 999u}) {
      double re = 0, im = 0, re2 = 0, im2 = 0;
      posenc::fft::unit_root(num, den, re, im);
      const long double a = -2.0L * std::numbers::pi_v<long double> * static_cast<long double>(num % den) /
                            static_cast<long double>(den);
      // Rounded once from long double: within half an ulp of double plus the long double
      // evaluation error (~1e-19): |error| <= 2^-53 (1.1e-16) for values of magnitude <= 1.
      CHECK(std::abs(static_cast<long double>(re) - std::cos(a)) <= 1.2e-16L);
      CHECK(std::abs(static_cast<long double>(im) - std::sin(a)) <= 1.2e-16L);
      posenc::fft::unit_root(num + 3 * den, den, re2, im2);  // reduced modulo den: bit for bit
      CHECK(re2 == re);
      CHECK(im2 == im);
    }
  }
}

TEST_CASE("fft::split_half_spectrum and merge_half_spectrum against the direct real DFT") {
  for (std::size_t n : {2u, 4u, 6u, 10u, 16u, 30u, 64u}) {
    const std::size_t h = n / 2;
    std::vector<double> x(n);
    for (auto& v : x) v = tp_test::uniform<double>();
    std::vector<cld> xl(n), zl(h);
    for (std::size_t j = 0; j < n; ++j) xl[j] = cld(x[j], 0);
    for (std::size_t j = 0; j < h; ++j) zl[j] = cld(x[2 * j], x[2 * j + 1]);
    // Z = DFT_h(z) in long double, rounded to double: the input of the split.
    const auto Zl = tp_test::direct_dft(zl, -1);
    std::vector<double> zr(h), zi(h), wr(h + 1), wi(h + 1), xr(h + 1), xi(h + 1);
    for (std::size_t k = 0; k < h; ++k) {
      zr[k] = static_cast<double>(Zl[k].real());
      zi[k] = static_cast<double>(Zl[k].imag());
    }
    for (std::size_t k = 0; k <= h; ++k) posenc::fft::unit_root(k, n, wr[k], wi[k]);
    posenc::fft::split_half_spectrum(h, zr.data(), zi.data(), wr.data(), wi.data(), xr.data(), xi.data());
    const auto Xl = tp_test::direct_dft(xl, -1);  // the first h + 1 bins are the reference
    const std::vector<cld> Xh(Xl.begin(), Xl.begin() + static_cast<std::ptrdiff_t>(h + 1));
    // A handful of double roundings of O(1)-relative terms: 1e-14 relative to the largest bin.
    CHECK_MESSAGE(tp_test::rel_max_error(as_complex(xr, xi), Xh) <= 1e-14L, "split n = ", n);

    // merge: the unnormalised length-h inverse of the result is n (x_{2j} + i x_{2j+1}).
    std::vector<double> mr(h), mi(h);
    posenc::fft::merge_half_spectrum(h, xr.data(), xi.data(), wr.data(), wi.data(), mr.data(), mi.data());
    const auto back = tp_test::direct_dft(as_complex(mr, mi), +1);
    std::vector<cld> expect(h);
    for (std::size_t j = 0; j < h; ++j) expect[j] = static_cast<long double>(n) * zl[j];
    CHECK_MESSAGE(tp_test::rel_max_error(back, expect) <= 1e-14L, "merge n = ", n);
  }
}
