// SPDX-License-Identifier: MIT
// Element conversions of posenc::io against the definitions of the formats, exhaustively for the
// 16-bit types: every binary16 and bfloat16 encoding decodes to the value its sign, exponent and
// mantissa fields define (compared exactly; NaNs compared as NaN with the sign kept).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <posenc/io/detail/bytes.hpp>
#include <posenc/numeric/half.hpp>

namespace {

double half_reference(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v;
  if (e == 0) v = std::ldexp(m, -24);
  else if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

double bf16_reference(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 7) & 0xFF, m = h & 0x7F;
  double v;
  if (e == 0) v = std::ldexp(m, -133);
  else if (e == 255) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(128 + m, e - 134);
  return s ? -v : v;
}

bool same_value(double got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) && std::signbit(got) == std::signbit(ref);
  return got == ref && std::signbit(got) == std::signbit(ref);
}

}  // namespace

TEST_CASE("every binary16 encoding converts exactly") {
  std::size_t bad = 0;
  std::vector<std::byte> le(2 * 65536), be(2 * 65536);
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<std::uint16_t>(h);
    bad += !same_value(posenc::numeric::half_bits_to_float(x), half_reference(x));
    le[2 * h] = static_cast<std::byte>(h & 0xFF);
    le[2 * h + 1] = static_cast<std::byte>(h >> 8);
    be[2 * h] = static_cast<std::byte>(h >> 8);
    be[2 * h + 1] = static_cast<std::byte>(h & 0xFF);
  }
  CHECK(bad == 0);
  // Through the array conversion, both byte orders, to float and double.
  std::vector<float> f(65536);
  std::vector<double> d(65536);
  posenc::io::detail::convert(posenc::io::dtype::f16, false, le.data(), 65536, f.data());
  posenc::io::detail::convert(posenc::io::dtype::f16, true, be.data(), 65536, d.data());
  std::size_t bad_arrays = 0;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const double ref = half_reference(static_cast<std::uint16_t>(h));
    bad_arrays += !same_value(f[h], ref) + !same_value(d[h], ref);
  }
  CHECK(bad_arrays == 0);
}

TEST_CASE("every bfloat16 encoding converts exactly") {
  std::size_t bad = 0;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto x = static_cast<std::uint16_t>(h);
    bad += !same_value(posenc::numeric::bf16_bits_to_float(x), bf16_reference(x));
  }
  CHECK(bad == 0);
}

TEST_CASE("integer conversions keep sign and value, in both byte orders") {
  // Little- and big-endian encodings of the same values, composed here byte by byte.
  const std::vector<std::int64_t> v{0, 1, -1, 127, -128, 32767, -32768, 2147483647, -2147483648LL, 1LL << 40};
  for (int width : {1, 2, 4, 8}) {
    std::vector<std::byte> le, be;
    std::vector<double> expect_signed, expect_unsigned;
    for (auto x : v) {
      const auto u = static_cast<std::uint64_t>(x);
      const unsigned bits = 8u * static_cast<unsigned>(width);
      const std::uint64_t mask = width == 8 ? ~std::uint64_t{0} : ((std::uint64_t{1} << bits) - 1);
      const std::uint64_t t = u & mask;
      for (int k = 0; k < width; ++k) le.push_back(static_cast<std::byte>((t >> (8 * k)) & 0xFF));
      for (int k = width - 1; k >= 0; --k) be.push_back(static_cast<std::byte>((t >> (8 * k)) & 0xFF));
      // two's complement reinterpretation of the low `width` bytes
      const bool neg = width < 8 && (t >> (bits - 1)) & 1;
      expect_signed.push_back(width == 8 ? static_cast<double>(x)
                                         : (neg ? static_cast<double>(t) - std::ldexp(1.0, static_cast<int>(bits))
                                                : static_cast<double>(t)));
      expect_unsigned.push_back(static_cast<double>(t));
    }
    using posenc::io::dtype;
    const dtype s = width == 1 ? dtype::i8 : width == 2 ? dtype::i16 : width == 4 ? dtype::i32 : dtype::i64;
    const dtype u = width == 1 ? dtype::u8 : width == 2 ? dtype::u16 : width == 4 ? dtype::u32 : dtype::u64;
    std::vector<double> out(v.size());
    posenc::io::detail::convert(s, false, le.data(), v.size(), out.data());
    CHECK(out == expect_signed);
    posenc::io::detail::convert(s, width > 1, width > 1 ? be.data() : le.data(), v.size(), out.data());
    CHECK(out == expect_signed);
    posenc::io::detail::convert(u, false, le.data(), v.size(), out.data());
    CHECK(out == expect_unsigned);
  }
}
