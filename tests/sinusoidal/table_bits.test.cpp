// SPDX-License-Identifier: MIT
// The sinusoidal tables bit for bit: a 64-bit FNV-1a hash of every entry's bit pattern, per size
// and option set, against the value the table had when the float tables' kernel was last changed
// (1 x 2 to 65536 x 64, both layouts, odd d, fractional and large positions, 1 and 2 threads).
// A float table is the correctly rounded exact-phase value wherever its rounding is certified and
// the direct evaluation elsewhere, so a change of the kernel that keeps the certificate sound
// keeps every bit; this test fails on any change of any entry. The hashes assume the x87 64-bit
// long double (the phases' precision); double tables also depend on whether the compiler may
// fuse products into FMAs, so their hashes are checked only where FMA is not enabled (the test
// builds' default x86-64 target). The float table of 4096 x 512 is also checked entry by entry
// against sinl/cosl of the long double phase (<= 0.5 ulp + 2^-20 ulp, as in table.test.cpp).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <posenc/sinusoidal.hpp>

#include "table_hash.hpp"

namespace ps = posenc::sinusoidal;

namespace {

using posenc_test::fnv1a;

struct config {
  std::size_t L, d;
  ps::layout lay;
  double first, step;
  unsigned threads;
  std::uint64_t f32, f64;
};

ps::options options_of(const config& c) {
  ps::options o;
  o.layout = c.lay;
  o.first_position = c.first;
  o.position_step = c.step;
  o.threads = c.threads;
  o.odd = ps::odd_dimension::zero_pad;
  return o;
}

constexpr auto IL = ps::layout::interleaved;
constexpr auto HL = ps::layout::half;

// The hashes of the tables as built before the float kernel's rewrite (the reference algorithm).
// The double tables' hashes were taken again when the frequencies became base^(-2k/d) of
// posenc/numeric/frequencies.hpp (the rotary family's double-word formula, rounded once to long
// double) instead of expl(-ln(base) 2k/d) in long double: a last-bit change of some frequencies,
// which moves some double entries by an ulp; the float tables kept every bit.
const config configs[] = {
    {1, 2, IL, 0.0, 1.0, 1, 0xaa7ae932298bb4c8ULL, 0x85c9d0b95f02e858ULL},
    {7, 6, IL, 0.0, 1.0, 1, 0xa3d6f49444c3175aULL, 0x243688d03c2fae71ULL},
    {7, 6, HL, 3.5, 0.75, 1, 0xf8651b3f8137301aULL, 0x221ec6cedef14b4aULL},
    {33, 11, IL, 1000.5, 0.25, 1, 0xf8c5aa5cfd73321aULL, 0x776f9b7610276559ULL},
    {200, 130, HL, 0.0, 1.0, 2, 0x1f79f6ba7da9451eULL, 0x3a47e647ee74b68dULL},
    {600, 64, IL, 16777216.0 - 600, 1.0, 1, 0xe2be299258ee97f9ULL, 0x9fed553abaefca40ULL},
    {4096, 512, IL, 0.0, 1.0, 1, 0xa18f404c5611749eULL, 0x6faa49bb47a80474ULL},
    {4096, 512, IL, 0.0, 1.0, 2, 0xa18f404c5611749eULL, 0x6faa49bb47a80474ULL},
    {4096, 512, HL, 0.0, 1.0, 1, 0x79604646711dd66aULL, 0x302c5b39e81756b4ULL},
    {5000, 1026, IL, 0.0, 1.0, 2, 0xbb122f66227f0858ULL, 0x4074cdfd3d101a7cULL},
    {65536, 64, IL, 0.0, 1.0, 2, 0x740ed1526da8883aULL, 0x6015e8816d2ade3dULL},
    {65536, 64, HL, 1048576.0, 1.0, 2, 0xe9ba2abebea88390ULL, 0xf222b1efa18127c4ULL},
};

}  // namespace

TEST_CASE("float and double tables keep every bit of the reference algorithm's tables") {
  if (std::numeric_limits<long double>::digits != 64) {
    MESSAGE("skipped: the hashes were taken with the x87 64-bit long double");
    return;
  }
  for (const auto& c : configs) {
    const auto o = options_of(c);
    const std::uint64_t h32 = fnv1a(ps::table<float>(c.L, c.d, o));
    INFO("L = ", c.L, ", d = ", c.d, ", first = ", c.first, ", threads = ", c.threads);
    CHECK(h32 == c.f32);
#if !defined(__FMA__)
    const std::uint64_t h64 = fnv1a(ps::table<double>(c.L, c.d, o));
    CHECK(h64 == c.f64);
#endif
  }
}

TEST_CASE("the float table of 4096 x 512 is correctly rounded entry by entry") {
  // Reference: sinl/cosl of x * w_k in long double (the exact-phase value); each entry within
  // 0.5 ulp + 2^-20 ulp of it (undecided entries are evaluated directly: <= 2^-28 ulp over 0.5).
  const std::size_t L = 4096, d = 512;
  const auto t = ps::table<float>(L, d);
  const auto w = ps::frequencies<long double>(d);
  long double worst = 0;
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t k = 0; k < d / 2; ++k) {
      const long double th = static_cast<long double>(i) * w[static_cast<Eigen::Index>(k)];
      const long double ref[2] = {std::sin(th), std::cos(th)};
      for (int s = 0; s < 2; ++s) {
        int e = 0;
        (void)std::frexp(std::abs(ref[s]), &e);
        const long double ulp = std::ldexp(1.0L, std::max(e, -125) - 24);
        const long double got = t(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(2 * k + static_cast<std::size_t>(s)));
        worst = std::max(worst, std::abs(got - ref[s]) / ulp);
      }
    }
  MESSAGE("4096 x 512 float table: max ", static_cast<double>(worst), " ulp");
  CHECK(worst <= 0.5L + std::ldexp(1.0L, -20));
}
