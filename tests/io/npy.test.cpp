// SPDX-License-Identifier: MIT
// posenc/io/npy.hpp against .npy images composed byte by byte in the test from the NumPy format
// specification (numpy.lib.format: magic, version, header length, dict literal, padding, data).
// Values are compared exactly: every conversion tested is exact (f2/f4 -> f4/f8, f8 -> f8,
// integers below 2^24), except f8 -> f4 which must equal static_cast<float> (round to nearest).
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <posenc/io/npy.hpp>

#include "io/helpers.hpp"

namespace pio = posenc::io;
using io_test::bytes;

namespace {

bytes f32_data(const std::vector<float>& v, bool big = false) {
  bytes b;
  for (float x : v) io_test::put_f32(b, x, big);
  return b;
}
bytes f64_data(const std::vector<double>& v, bool big = false) {
  bytes b;
  for (double x : v) io_test::put_f64(b, x, big);
  return b;
}

template <class T>
pio::array<T> read_mem(const bytes& b) {
  return pio::read_npy<T>(std::span<const std::byte>(b));
}

/// binary16 value from its fields (sign, 5-bit exponent, 10-bit mantissa), by the definition.
double half_reference(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v;
  if (e == 0) v = std::ldexp(m, -24);
  else if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

}  // namespace

TEST_CASE("npy reads a version 1.0 little-endian f4 C-order file as float and double") {
  const std::vector<float> v{1.5f, -2.25f, 3.0e-8f, 1e30f, 0.0f, -0.0f};
  const auto img = io_test::npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f32_data(v));
  REQUIRE(img.size() == 128 + 24);  // 10 + 59 + 1 header bytes, padded to a multiple of 64
  const auto a = read_mem<float>(img);
  CHECK(a.shape == std::vector<std::size_t>{2, 3});
  REQUIRE(a.size() == 6);
  for (std::size_t i = 0; i < 6; ++i) CHECK(std::bit_cast<std::uint32_t>(a[i]) == std::bit_cast<std::uint32_t>(v[i]));
  const auto d = read_mem<double>(img);  // f4 -> f8 is exact
  for (std::size_t i = 0; i < 6; ++i) CHECK(d[i] == static_cast<double>(v[i]));
}

TEST_CASE("npy reads f8 data, converting to float by round to nearest") {
  const std::vector<double> v{0.1, -1.0 / 3.0, 1e-300, 6.02214076e23};
  const auto img = io_test::npy_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", f64_data(v));
  const auto d = read_mem<double>(img);
  CHECK(d.shape == std::vector<std::size_t>{4});
  for (std::size_t i = 0; i < 4; ++i) CHECK(d[i] == v[i]);
  const auto f = read_mem<float>(img);
  for (std::size_t i = 0; i < 4; ++i) CHECK(f[i] == static_cast<float>(v[i]));
}

TEST_CASE("npy header versions 2.0 and 3.0, other paddings, key orders and quoting") {
  const std::vector<double> v{1, 2, 3};
  for (int major : {2, 3}) {
    const auto img = io_test::npy_image(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", f64_data(v));
    const auto a = read_mem<double>(img);
    CHECK(a.shape == std::vector<std::size_t>{3});
    CHECK(a.data == v);
  }
  // Old NumPy aligned to 16 bytes; Python 2 wrote long literals (3L); any key order is a dict.
  const auto old = io_test::npy_image(1, "{'shape': (3L,), 'fortran_order': False, 'descr': '<f8'}", f64_data(v), 16);
  CHECK(read_mem<double>(old).data == v);
  const auto dq = io_test::npy_image(1, "{ \"descr\" : \"<f8\" ,\t'fortran_order':False,'shape':( 3 , ) }", f64_data(v), 1);
  CHECK(read_mem<double>(dq).data == v);
}

TEST_CASE("npy reads big-endian data by swapping bytes") {
  const std::vector<double> v{1.25, -7.5e-12};
  const auto img = io_test::npy_image(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", f64_data(v, true));
  CHECK(read_mem<double>(img).data == v);
  const std::vector<float> w{3.5f, -1e-20f, 42.0f};
  const auto img4 = io_test::npy_image(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (3,), }", f32_data(w, true));
  CHECK(read_mem<float>(img4).data == w);
}

TEST_CASE("npy transposes Fortran-order data into C order") {
  // 2 x 3 x 4 array with a[i][j][k] = 100 i + 10 j + k, stored column-major (first index fastest).
  const std::size_t n0 = 2, n1 = 3, n2 = 4;
  std::vector<double> fortran;
  for (std::size_t k = 0; k < n2; ++k)
    for (std::size_t j = 0; j < n1; ++j)
      for (std::size_t i = 0; i < n0; ++i) fortran.push_back(100.0 * i + 10.0 * j + k);
  const auto img =
      io_test::npy_image(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 4), }", f64_data(fortran));
  const auto a = read_mem<double>(img);
  REQUIRE(a.shape == std::vector<std::size_t>{2, 3, 4});
  for (std::size_t i = 0; i < n0; ++i)
    for (std::size_t j = 0; j < n1; ++j)
      for (std::size_t k = 0; k < n2; ++k) CHECK(a[(i * n1 + j) * n2 + k] == 100.0 * i + 10.0 * j + k);
  // The file path (no in-place read for Fortran order) gives the same.
  io_test::scratch_dir dir("npy_fortran");
  io_test::write_bytes(dir / "f.npy", img);
  CHECK(pio::read_npy<double>(dir / "f.npy").data == a.data);
}

TEST_CASE("npy reads 0-d and zero-size arrays") {
  const auto scalar = io_test::npy_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", f64_data({2.5}));
  const auto s = read_mem<double>(scalar);
  CHECK(s.shape.empty());
  REQUIRE(s.size() == 1);
  CHECK(s[0] == 2.5);
  for (const char* shape : {"(0,)", "(3, 0, 2)", "(0, 0)"}) {
    const auto img = io_test::npy_image(
        1, std::string("{'descr': '<f4', 'fortran_order': False, 'shape': ") + shape + ", }", {});
    const auto z = read_mem<float>(img);
    CHECK(z.size() == 0);
    CHECK(z.rank() >= 1);
  }
  // A zero extent makes the element count 0 even when the other extents are huge.
  const auto huge = io_test::npy_image(
      1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 18446744073709551615), }", {});
  CHECK(read_mem<double>(huge).size() == 0);
}

TEST_CASE("npy converts f2 exactly, matching the binary16 definition") {
  // Ones, signs, the largest finite, the smallest normal and subnormal, infinities, NaN.
  const std::vector<std::uint16_t> h{0x3C00, 0xC000, 0x7BFF, 0x0400, 0x0001, 0x03FF, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x3555};
  bytes data;
  for (auto x : h) io_test::put_le(data, x, 2);
  const auto img = io_test::npy_image(1, "{'descr': '<f2', 'fortran_order': False, 'shape': (11,), }", data);
  const auto a = read_mem<double>(img);
  const auto f = read_mem<float>(img);
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double ref = half_reference(h[i]);
    if (std::isnan(ref)) {
      CHECK(std::isnan(a[i]));
      CHECK(std::isnan(f[i]));
    } else {
      CHECK(a[i] == ref);
      CHECK(static_cast<double>(f[i]) == ref);
    }
  }
  CHECK(std::signbit(a[6]));  // -0
}

TEST_CASE("npy converts integer and bool data to floating point") {
  bytes i4, u1, i8, b1;
  const std::vector<std::int32_t> vi{-5, 0, 7, 16777216};
  for (auto x : vi) io_test::put_le(i4, static_cast<std::uint32_t>(x), 4);
  for (unsigned x : {0u, 1u, 255u}) io_test::put_u8(u1, x);
  for (std::int64_t x : {std::int64_t{-1}, std::int64_t{1} << 40}) io_test::put_le(i8, static_cast<std::uint64_t>(x), 8);
  for (unsigned x : {0u, 1u}) io_test::put_u8(b1, x);
  const auto a = read_mem<double>(io_test::npy_image(1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", i4));
  CHECK(a.data == std::vector<double>{-5, 0, 7, 16777216});
  const auto b = read_mem<float>(io_test::npy_image(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }", u1));
  CHECK(b.data == std::vector<float>{0, 1, 255});
  const auto c = read_mem<double>(io_test::npy_image(1, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", i8));
  CHECK(c.data == std::vector<double>{-1, 1099511627776.0});
  const auto d = read_mem<double>(io_test::npy_image(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", b1));
  CHECK(d.data == std::vector<double>{0, 1});
}

TEST_CASE("npy write then read round trips every shape exactly, in the layout NumPy writes") {
  io_test::scratch_dir dir("npy_roundtrip");
  const std::vector<std::vector<std::size_t>> shapes{{}, {1}, {7}, {3, 5}, {2, 3, 4}, {0}, {4, 0, 3}, {1, 1, 1, 1, 2}};
  for (const auto& shape : shapes) {
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    std::vector<double> d(n);
    std::vector<float> f(n);
    for (std::size_t i = 0; i < n; ++i) {
      d[i] = std::sin(1.0 + static_cast<double>(i)) * std::pow(10.0, static_cast<double>(i % 7) - 3);
      f[i] = static_cast<float>(d[i]);
    }
    pio::write_npy<double>(dir / "d.npy", d, shape);
    pio::write_npy<float>(dir / "f.npy", f, shape);
    const auto rd = pio::read_npy<double>(dir / "d.npy");
    const auto rf = pio::read_npy<float>(dir / "f.npy");
    CHECK(rd.shape == shape);
    CHECK(rf.shape == shape);
    CHECK(rd.data == d);
    CHECK(rf.data == f);
    // The layout of numpy.save: version 1.0, header ending in '\n', data offset a multiple of 64,
    // and the data bytes are the little-endian IEEE encodings.
    const bytes raw = io_test::read_bytes(dir / "d.npy");
    REQUIRE(raw.size() >= 10);
    CHECK(raw[6] == std::byte{1});
    CHECK(raw[7] == std::byte{0});
    const std::size_t hlen = std::to_integer<std::size_t>(raw[8]) | (std::to_integer<std::size_t>(raw[9]) << 8);
    CHECK((10 + hlen) % 64 == 0);
    CHECK(raw[10 + hlen - 1] == std::byte{'\n'});
    std::string shape_text = "(";
    for (std::size_t k = 0; k < shape.size(); ++k) shape_text += (k ? ", " : "") + std::to_string(shape[k]);
    shape_text += shape.size() == 1 ? ",)" : ")";
    const std::string header(reinterpret_cast<const char*>(raw.data()) + 10, hlen);
    CHECK(header.rfind("{'descr': '<f8', 'fortran_order': False, 'shape': " + shape_text + ", }", 0) == 0);
    CHECK(bytes(raw.begin() + static_cast<std::ptrdiff_t>(10 + hlen), raw.end()) == f64_data(d));
    // In-memory encoder gives the same bytes; its reader gives the same array.
    CHECK(pio::npy_bytes<double>(d, shape) == raw);
    const auto header_info = pio::read_npy_header(dir / "d.npy");
    CHECK(header_info.shape == shape);
    CHECK(header_info.type == pio::dtype::f64);
    CHECK(header_info.data_offset == 10 + hlen);
  }
  // The converting file path (f4 -> f8, f8 -> f4), with enough data for several read chunks.
  std::vector<float> big(300000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f - 7.0f;
  const std::vector<std::size_t> big_shape{1000, 300};
  pio::write_npy<float>(dir / "big.npy", big, big_shape);
  const auto as_double = pio::read_npy<double>(dir / "big.npy");
  REQUIRE(as_double.size() == big.size());
  bool same = true;
  for (std::size_t i = 0; i < big.size(); ++i) same = same && as_double[i] == static_cast<double>(big[i]);
  CHECK(same);
  std::vector<double> bigd(big.begin(), big.end());
  pio::write_npy<double>(dir / "bigd.npy", bigd, big_shape);
  CHECK(pio::read_npy<float>(dir / "bigd.npy").data == big);  // values are exact in float
  // range overload with a braced shape
  const std::vector<double> r{1, 2, 3, 4, 5, 6};
  pio::write_npy(dir / "r.npy", r, {3, 2});
  CHECK(pio::read_npy<double>(dir / "r.npy").shape == std::vector<std::size_t>{3, 2});
  CHECK(pio::read_npy<double>(dir / "r.npy").data == r);
  // array overload
  pio::array<float> a{{2, 2}, {1, 2, 3, 4}};
  pio::write_npy(dir / "a.npy", a);
  CHECK(pio::read_npy<float>(dir / "a.npy").data == a.data);
}

TEST_CASE("npy writers refuse a rank above NumPy's 64, which the reader would refuse") {
  // (A header above 65535 bytes, format 2.0, needs a shape tuple longer than 64 extents can make.)
  const std::vector<std::size_t> shape(65, 1);
  const std::vector<double> d{3.75};
  io_test::require_error<posenc::shape_error>([&] { (void)pio::npy_bytes<double>(d, shape); },
                                              {"npy_bytes", "65 dimensions", "64"});
  const std::vector<std::size_t> shape64(64, 1);
  const auto b = pio::npy_bytes<double>(d, shape64);
  const auto a = pio::read_npy<double>(std::span<const std::byte>(b));
  CHECK(a.shape == shape64);
  CHECK(a.data == d);
}

TEST_CASE("npy rejects malformed files with an io_error naming the source and the problem") {
  const bytes good_data = f64_data({1, 2, 3});
  auto img = [&](std::string_view dict, const bytes& data) { return io_test::npy_image(1, dict, data); };
  auto mem = [](const bytes& b) { return [b] { (void)pio::read_npy<double>(std::span<const std::byte>(b)); }; };
  const std::string ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";

  io_test::require_error(mem({}), {"<memory>", "shorter than the 10-byte preamble"});
  bytes bad_magic = img(ok, good_data);
  bad_magic[1] = std::byte{'n'};
  io_test::require_error(mem(bad_magic), {"<memory>", "bad magic"});
  for (unsigned ver : {0u, 4u}) {
    bytes b = img(ok, good_data);
    b[6] = static_cast<std::byte>(ver);
    io_test::require_error(mem(b), {"unsupported .npy format version"});
  }
  bytes minor = img(ok, good_data);
  minor[7] = std::byte{1};
  io_test::require_error(mem(minor), {"unsupported .npy format version 1.1"});
  bytes long_header = img(ok, good_data);
  long_header[8] = std::byte{0xFF};
  long_header[9] = std::byte{0xFF};
  io_test::require_error(mem(long_header), {"header length 65535 exceeds"});
  bytes v2 = io_test::npy_image(2, ok, good_data);
  v2[11] = std::byte{0x80};  // 2 GiB header in a 100-byte file: refused before allocating
  io_test::require_error(mem(v2), {"exceeds"});
  bytes v2short(v2.begin(), v2.begin() + 11);
  io_test::require_error(mem(v2short), {"truncated .npy preamble"});

  io_test::require_error(mem(img(ok, f64_data({1, 2}))), {"truncated .npy data", "needs 24 bytes", "has 16"});
  io_test::require_error(mem(img(ok, f64_data({1, 2, 3, 4}))), {"8 trailing bytes"});
  io_test::require_error(mem(img("{'descr': '<f8', 'shape': (3,), }", good_data)), {"missing key 'fortran_order'"});
  io_test::require_error(mem(img("{'fortran_order': False, 'shape': (3,), }", good_data)), {"missing key 'descr'"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False}", good_data)), {"missing key 'shape'"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'x': 1}", good_data)),
                         {"unexpected key 'x'"});
  io_test::require_error(mem(img("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (3,)}", good_data)),
                         {"duplicate key 'descr'"});
  io_test::require_error(mem(img("{'descr': '<c16', 'fortran_order': False, 'shape': (3,), }", good_data)),
                         {"unsupported dtype descr '<c16'"});
  io_test::require_error(mem(img("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", good_data)),
                         {"object arrays"});
  io_test::require_error(mem(img("{'descr': '|f8', 'fortran_order': False, 'shape': (3,), }", good_data)),
                         {"no byte order"});
  io_test::require_error(mem(img("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (3,), }", good_data)),
                         {"structured dtypes"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': 0, 'shape': (3,), }", good_data)),
                         {"'fortran_order' must be True or False"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (a,), }", good_data)),
                         {"non-negative integers"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }", good_data)),
                         {"non-negative integers"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': [3], }", good_data)),
                         {"a tuple"});
  io_test::require_error(
      mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }", good_data)),
      {"does not fit in size_t"});
  io_test::require_error(
      mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", good_data)),
      {"overflows"});
  // Fits size_t as a count but not as bytes: 2^61 elements of 8 bytes.
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", {})),
                         {"byte size", "overflows"});
  // A huge but representable shape: refused by the size check, nothing allocated.
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", {})),
                         {"truncated .npy data"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), } x", good_data)),
                         {"unexpected characters"});
  io_test::require_error(mem(img("{'descr': '<f8, 'fortran_order': False, 'shape': (3,), }", good_data)),
                         {"bad .npy header"});
  io_test::require_error(mem(img("'descr'", good_data)), {"to start with '{'"});
  io_test::require_error(mem(img("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)", good_data)),
                         {"bad .npy header"});
  bytes nul = img(ok, good_data);
  nul[20] = std::byte{0};
  io_test::require_error(mem(nul), {"NUL"});

  io_test::scratch_dir dir("npy_errors");
  io_test::require_error([&] { (void)pio::read_npy<double>(dir / "missing.npy"); }, {"missing.npy", "no such file"});
  io_test::require_error([&] { (void)pio::read_npy<double>(dir.path()); }, {"is a directory"});
  if (std::filesystem::exists("/dev/null"))
    io_test::require_error([&] { (void)pio::read_npy<double>("/dev/null"); }, {"not a regular file"});
  io_test::write_bytes(dir / "short.npy", img(ok, f64_data({1})));
  io_test::require_error([&] { (void)pio::read_npy<float>(dir / "short.npy"); }, {"short.npy", "truncated .npy data"});
}

TEST_CASE("npy write validates its arguments") {
  io_test::scratch_dir dir("npy_write_errors");
  const std::vector<double> d{1, 2, 3};
  const std::vector<std::size_t> wrong{2, 2};
  io_test::require_error<posenc::shape_error>([&] { pio::write_npy<double>(dir / "x.npy", d, wrong); },
                                              {"write_npy", "3 elements", "[2, 2]"});
  const std::vector<std::size_t> overflow{std::size_t{1} << 40, std::size_t{1} << 40};
  io_test::require_error<posenc::shape_error>([&] { (void)pio::npy_bytes<double>(d, overflow); }, {"overflowing"});
  const std::vector<std::size_t> three{3};
  io_test::require_error([&] { pio::write_npy<double>(dir / "no" / "such" / "dir.npy", d, three); },
                         {"cannot open for writing"});
}

TEST_CASE("npy fuzz: single-byte mutations, random multi-byte mutations and every truncation give a valid array or an io_error") {
  // A small valid file (Fortran order, so the transpose runs on accepted mutants too).
  const auto img = io_test::npy_image(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                      f32_data({1, 2, 3, 4, 5, 6}), 16);
  std::size_t ok = 0, rejected = 0;
  auto attempt = [&](const bytes& b) {
    try {
      const auto a = pio::read_npy<double>(std::span<const std::byte>(b));
      // A success must be self-consistent: the element count matches the shape.
      std::size_t n = 1;
      for (auto s : a.shape) n *= s;
      CHECK(n == a.size());
      ++ok;
    } catch (const posenc::io_error&) {
      ++rejected;
    }
  };
  // Each byte takes the structurally interesting values (the length fields all 256), then seeded
  // header-like mutants.
  io_test::mutate_and_parse(img, {0x00, 0x01, 0x7F, 0x80, 0xFF, 0x93, '0', '1', '9', '(', ')', ',', '\'', '{', '}', ':', ' ', 'L', 'T', 'F', '<', '>', '|', '\n'}, 10, 12345, "0123456789(),'{}: TrueFalsL<>|fi\n", attempt);
  // Every truncation is rejected, from memory and from a file.
  io_test::scratch_dir dir("npy_fuzz");
  for (std::size_t len = 0; len < img.size(); ++len) {
    const bytes b(img.begin(), img.begin() + static_cast<std::ptrdiff_t>(len));
    io_test::require_error([&] { (void)pio::read_npy<float>(std::span<const std::byte>(b)); }, {"<memory>"});
    io_test::write_bytes(dir / "t.npy", b);
    io_test::require_error([&] { (void)pio::read_npy<float>(dir / "t.npy"); }, {"t.npy"});
  }
  CHECK(ok > 0);
  CHECK(rejected > 0);
}
