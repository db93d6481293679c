// SPDX-License-Identifier: MIT
// The lane-pack kernels of posenc::fft (detail::two_pass, detail::stockham on W-lane arrays)
// against a direct O(n^2) DFT in long double, for the build's native lane pack and for the
// portable fallback pack at every width 2, 4, 8, 16 (so the fallback is exercised whatever the
// target ISA), f32 and f64, power-of-two and mixed-radix sizes (radices 2, 3, 4, 5, 7, 8), and
// the Stockham pass sequence on explicit radix lists so every butterfly runs as the first pass
// (no twiddles) and as a later pass (twiddled) on every pack.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "toeplitz/common.hpp"

namespace {

using tp_test::cld;
namespace fd = posenc::fft::detail;

// Tolerance: max_k |X_k - X_k^ref| <= 10 eps log2(n) max_k |X_k^ref|. A Stockham/two-pass FFT
// adds one rounded butterfly per radix-r pass (<= log2 n passes) and one rounded twiddle
// product per pass; 10 leaves a margin for the twiddles' own rounding (each within eps).
template <class T>
long double tolerance(std::size_t n) {
  return 10.0L * static_cast<long double>(std::numeric_limits<T>::epsilon()) * std::log2(static_cast<long double>(n));
}

template <class T, class V, std::size_t W>
void check_two_pass(std::size_t n) {
  const auto [n1, n2] = fd::two_pass<T, V, W>::split(n);
  REQUIRE_MESSAGE(n1 * n2 == n, "n = ", n, " W = ", W);
  CHECK(n1 % W == 0);
  CHECK(n2 % W == 0);
  fd::two_pass<T, V, W> tp(n1, n2);
  std::vector<T> re(n), im(n), wr(n), wi(n);
  std::vector<cld> xl(n);
  for (std::size_t j = 0; j < n; ++j) {
    re[j] = tp_test::uniform<T>();
    im[j] = tp_test::uniform<T>();
    xl[j] = cld(re[j], im[j]);
  }
  std::vector<T> re2 = re, im2 = im;
  tp.forward(re.data(), im.data(), wr.data(), wi.data());
  tp.forward(im2.data(), re2.data(), wr.data(), wi.data());  // inverse: re and im swapped
  std::vector<std::complex<T>> y(n), z(n);
  for (std::size_t k = 0; k < n; ++k) {
    y[k] = {re[k], im[k]};
    z[k] = {re2[k], im2[k]};
  }
  const auto bins = n <= 512 ? std::vector<std::size_t>{} : tp_test::sample_bins(n, 64);
  if (n <= 512) {
    CHECK_MESSAGE(tp_test::rel_max_error(y, tp_test::direct_dft(xl, -1)) <= tolerance<T>(n), "forward n = ", n, " W = ", W);
    CHECK_MESSAGE(tp_test::rel_max_error(z, tp_test::direct_dft(xl, +1)) <= tolerance<T>(n), "inverse n = ", n, " W = ", W);
  } else {
    CHECK_MESSAGE(tp_test::rel_max_error_at(y, tp_test::direct_dft_at(xl, bins, -1), bins) <= tolerance<T>(n),
                  "forward n = ", n, " W = ", W);
    CHECK_MESSAGE(tp_test::rel_max_error_at(z, tp_test::direct_dft_at(xl, bins, +1), bins) <= tolerance<T>(n),
                  "inverse n = ", n, " W = ", W);
  }
}

// Sizes W^2 * m with m composite (so n1, n2 >= 2W): powers of two and factors 3, 5, 7. The
// block counts n1 / W, n2 / W include ones below and not a multiple of two_pass's gather group
// (e.g. 3, 5, 10 blocks), so full and partial groups both run.
template <class T, class V, std::size_t W>
void check_width() {
  for (std::size_t m : {4u, 6u, 8u, 15u, 16u, 14u, 64u, 100u, 256u, 1024u})
    if (W * W * m <= (std::size_t{1} << 16)) check_two_pass<T, V, W>(W * W * m);
}

template <class T>
void check_all_widths() {
  check_width<T, fd::portable_pack<T, 2>, 2>();
  check_width<T, fd::portable_pack<T, 4>, 4>();
  check_width<T, fd::portable_pack<T, 8>, 8>();
  check_width<T, fd::portable_pack<T, 16>, 16>();
  using L = fd::native_lanes<T>;
  if constexpr (L::width >= 2) check_width<T, typename L::type, L::width>();
}

// One Stockham pass sequence with the given radices on a W-lane array, every lane against the
// long double direct DFT (n <= 512: all bins), forward and inverse (re and im swapped). Same
// tolerance as the two-pass kernel: each pass adds one rounded butterfly and twiddle product.
template <class T, class V, std::size_t W>
void check_stockham(const std::vector<unsigned>& radices) {
  std::size_t n = 1;
  for (unsigned r : radices) n *= r;
  const fd::stockham<T> st(n, radices);
  std::vector<T> re(n * W), im(n * W), wr(n * W), wi(n * W);
  std::vector<std::vector<cld>> x(W, std::vector<cld>(n));
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t l = 0; l < W; ++l) {
      re[j * W + l] = tp_test::uniform<T>();
      im[j * W + l] = tp_test::uniform<T>();
      x[l][j] = cld(re[j * W + l], im[j * W + l]);
    }
  std::vector<T> re2 = re, im2 = im, wr2(n * W), wi2(n * W);
  const bool fw = st.template run<V, W>(re.data(), im.data(), wr.data(), wi.data());
  const bool bw = st.template run<V, W>(im2.data(), re2.data(), wi2.data(), wr2.data());
  CHECK(fw == (radices.size() % 2 == 1));  // the result alternates between the buffers
  CHECK(bw == fw);
  const std::vector<T>& yr = fw ? wr : re;
  const std::vector<T>& yi = fw ? wi : im;
  const std::vector<T>& zr = bw ? wr2 : re2;
  const std::vector<T>& zi = bw ? wi2 : im2;
  for (std::size_t l = 0; l < W; ++l) {
    std::vector<std::complex<T>> y(n), z(n);
    for (std::size_t k = 0; k < n; ++k) {
      y[k] = {yr[k * W + l], yi[k * W + l]};
      z[k] = {zr[k * W + l], zi[k * W + l]};
    }
    CHECK_MESSAGE(tp_test::rel_max_error(y, tp_test::direct_dft(x[l], -1)) <= tolerance<T>(std::max<std::size_t>(n, 2)),
                  "forward n = ", n, " W = ", W, " lane ", l, " first radix ", radices.front());
    CHECK_MESSAGE(tp_test::rel_max_error(z, tp_test::direct_dft(x[l], +1)) <= tolerance<T>(std::max<std::size_t>(n, 2)),
                  "inverse n = ", n, " W = ", W, " lane ", l, " first radix ", radices.front());
  }
}

// Every radix first (ns = 1) and after others (ns > 1).
const std::vector<std::vector<unsigned>> radix_lists = {
    {2}, {8}, {8, 8}, {2, 8}, {8, 2}, {4, 8, 2}, {8, 8, 8}, {3, 8}, {8, 5}, {5, 4, 3}, {8, 7}, {13, 8}, {7, 11}, {4, 4, 4, 4}};

template <class T>
void check_stockham_all_packs() {
  for (const auto& r : radix_lists) {
    check_stockham<T, T, 1>(r);
    check_stockham<T, fd::portable_pack<T, 2>, 2>(r);
    check_stockham<T, fd::portable_pack<T, 4>, 4>(r);
    check_stockham<T, fd::portable_pack<T, 8>, 8>(r);
    check_stockham<T, fd::portable_pack<T, 16>, 16>(r);
    using L = fd::native_lanes<T>;
    if constexpr (L::width >= 2) check_stockham<T, typename L::type, L::width>(r);
  }
}

std::vector<unsigned> radices_of(std::size_t n) {
  std::vector<unsigned> r;
  fd::stockham_radices(n, r);
  return r;
}

}  // namespace

TEST_CASE("fft Stockham passes f64 - radices 2 to 13 first and later, every pack, against the direct DFT") {
  check_stockham_all_packs<double>();
}

TEST_CASE("fft Stockham passes f32 - radices 2 to 13 first and later, every pack, against the direct DFT") {
  check_stockham_all_packs<float>();
}

TEST_CASE("fft Stockham radices - powers of two in radix 8 first, a leftover 2 as 4 x 4") {
  using v = std::vector<unsigned>;
  CHECK(radices_of(2) == v{2});
  CHECK(radices_of(8) == v{8});
  CHECK(radices_of(16) == v{4, 4});
  CHECK(radices_of(32) == v{8, 4});
  CHECK(radices_of(512) == v{8, 8, 8});
  CHECK(radices_of(65536) == v{8, 8, 8, 8, 4, 4});
  CHECK(radices_of(16 * 9 * 5) == v{4, 4, 3, 3, 5});
  CHECK(radices_of(17 * 4).back() == 4u);  // incomplete: the factor 17 is left out
}

TEST_CASE("fft two-pass lanes f64 - native and portable packs of width 2 to 16 against the direct DFT") {
  check_all_widths<double>();
}

TEST_CASE("fft two-pass lanes f32 - native and portable packs of width 2 to 16 against the direct DFT") {
  check_all_widths<float>();
}

TEST_CASE("fft two-pass split - n1 n2 = n, both multiples of W and >= 2W, none when impossible") {
  using P = fd::two_pass<double, fd::portable_pack<double, 4>, 4>;
  CHECK(P::split(64) == std::pair<std::size_t, std::size_t>{8, 8});
  CHECK(P::split(4096) == std::pair<std::size_t, std::size_t>{64, 64});
  CHECK(P::split(8192) == std::pair<std::size_t, std::size_t>{64, 128});
  CHECK(P::split(16 * 15) == std::pair<std::size_t, std::size_t>{12, 20});
  CHECK(P::split(32) == std::pair<std::size_t, std::size_t>{0, 0});       // 32 / 16 = 2 is prime
  CHECK(P::split(16 * 17 * 3) == std::pair<std::size_t, std::size_t>{0, 0});  // factor 17
  CHECK(P::split(100) == std::pair<std::size_t, std::size_t>{0, 0});      // not a multiple of 16
  using P16 = fd::two_pass<float, fd::portable_pack<float, 16>, 16>;
  CHECK(P16::split(1024) == std::pair<std::size_t, std::size_t>{32, 32});
  CHECK(P16::split(512) == std::pair<std::size_t, std::size_t>{0, 0});  // 512 / 256 = 2: no split >= 2W
  using P8 = fd::two_pass<double, fd::portable_pack<double, 8>, 8>;
  CHECK(P8::split(65536) == std::pair<std::size_t, std::size_t>{256, 256});
}
