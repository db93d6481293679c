// SPDX-License-Identifier: MIT
// posenc/io/safetensors.hpp against files composed in the test from the safetensors format
// description (8-byte little-endian header length, JSON header, data section addressed by
// data_offsets). Values are compared exactly: F16/BF16/F32 -> F32/F64 and F64 -> F64 are exact,
// F64 -> F32 must equal static_cast<float>.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <ranges>
#include <string>
#include <vector>

#include <posenc/io/safetensors.hpp>

#include "io/helpers.hpp"

namespace pio = posenc::io;
using io_test::bytes;

namespace {

pio::safetensors_file open_mem(const bytes& b) { return pio::safetensors_file::from_bytes(std::span<const std::byte>(b)); }

/// The two-tensor file used by several cases: "w" F32 [2, 2] at [0, 16), "b" F64 [3] at [16, 40).
bytes two_tensor_file(std::string_view padding = "    ") {
  bytes data;
  for (float x : {1.0f, -2.0f, 0.5f, 3.25f}) io_test::put_f32(data, x);
  for (double x : {0.1, -1e300, 7.0}) io_test::put_f64(data, x);
  const std::string json = std::string(R"({"__metadata__":{"format":"pt","note":"caf\u00e9 \ud83d\ude00"},)") +
                           R"("w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},)" +
                           R"( "b" : { "shape" : [ 3 ] , "data_offsets" : [16, 40], "dtype" : "F64" } })" +
                           std::string(padding);
  return io_test::safetensors_image(json, data);
}

/// bfloat16 / binary16 values by their definitions (sign, exponent, mantissa fields).
double bf16_reference(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 7) & 0xFF, m = h & 0x7F;
  double v;
  if (e == 0) v = std::ldexp(m, -133);
  else if (e == 255) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(128 + m, e - 134);
  return s ? -v : v;
}
double half_reference(std::uint16_t h) {
  const int s = h >> 15, e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double v;
  if (e == 0) v = std::ldexp(m, -24);
  else if (e == 31) v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1024 + m, e - 25);
  return s ? -v : v;
}

std::string entry(std::string_view name, std::string_view dtype, std::string_view shape, std::uint64_t b,
                  std::uint64_t e) {
  return "\"" + std::string(name) + "\":{\"dtype\":\"" + std::string(dtype) + "\",\"shape\":" + std::string(shape) +
         ",\"data_offsets\":[" + std::to_string(b) + "," + std::to_string(e) + "]}";
}

}  // namespace

TEST_CASE("safetensors reads a hand-built file: names, info, metadata and converted tensors") {
  const bytes img = two_tensor_file();
  const auto f = open_mem(img);
  CHECK(f.source() == "<memory>");
  CHECK(f.names() == std::vector<std::string>{"w", "b"});
  CHECK(f.contains("w"));
  CHECK_FALSE(f.contains("W"));
  const auto& w = f.info("w");
  CHECK(w.type == pio::dtype::f32);
  CHECK(w.shape == std::vector<std::size_t>{2, 2});
  CHECK(w.begin == 0);
  CHECK(w.end == 16);
  CHECK(w.file_offset == 8 + f.header_size());
  CHECK(f.data_offset() + 40 == img.size());
  CHECK(f.metadata().at("format") == "pt");
  CHECK(f.metadata().at("note") == "caf\xC3\xA9 \xF0\x9F\x98\x80");  // \u escapes and a surrogate pair -> UTF-8
  CHECK(f.get<float>("w").data == std::vector<float>{1.0f, -2.0f, 0.5f, 3.25f});
  CHECK(f.get<double>("w").data == std::vector<double>{1.0, -2.0, 0.5, 3.25});
  CHECK(f.get<double>("b").data == std::vector<double>{0.1, -1e300, 7.0});
  const auto bf = f.get<float>("b");
  CHECK(bf.data[0] == static_cast<float>(0.1));
  CHECK(std::isinf(bf.data[1]));  // -1e300 rounds to -inf in float, as static_cast does
  CHECK(bf.data[1] < 0);
  CHECK(f.get<double>("w", {2, 2}).size() == 4);
  std::vector<double> into(3);
  f.read_into<double>("b", into);
  CHECK(into == std::vector<double>{0.1, -1e300, 7.0});
  const auto raw = f.raw("w");
  CHECK(raw == bytes(img.begin() + static_cast<std::ptrdiff_t>(f.data_offset()),
                     img.begin() + static_cast<std::ptrdiff_t>(f.data_offset() + 16)));
}

TEST_CASE("safetensors converts F16 and BF16 exactly, and integer and bool tensors") {
  const std::vector<std::uint16_t> h{0x3C00, 0xC000, 0x7BFF, 0x0001, 0x0400, 0x7C00, 0xFE00, 0x8000};
  const std::vector<std::uint16_t> bf{0x3F80, 0xC040, 0x7F7F, 0x0001, 0x0080, 0xFF80, 0x7FC0, 0x3EAA};
  bytes data;
  for (auto x : h) io_test::put_le(data, x, 2);
  for (auto x : bf) io_test::put_le(data, x, 2);
  for (std::int32_t x : {-3, 2000000}) io_test::put_le(data, static_cast<std::uint32_t>(x), 4);
  for (std::int64_t x : {std::int64_t{-7}, std::int64_t{1} << 50}) io_test::put_le(data, static_cast<std::uint64_t>(x), 8);
  for (unsigned x : {200u, 1u}) io_test::put_u8(data, x);
  io_test::put_u8(data, 1);
  io_test::put_u8(data, 0);
  const std::string json = "{" + entry("h", "F16", "[8]", 0, 16) + "," + entry("bf", "BF16", "[2,4]", 16, 32) + "," +
                           entry("i", "I32", "[2]", 32, 40) + "," + entry("l", "I64", "[2]", 40, 56) + "," +
                           entry("u", "U8", "[2]", 56, 58) + "," + entry("t", "BOOL", "[2]", 58, 60) + "}";
  const auto f = open_mem(io_test::safetensors_image(json, data));
  const auto hd = f.get<double>("h");
  const auto hf = f.get<float>("h");
  for (std::size_t i = 0; i < h.size(); ++i) {
    const double r = half_reference(h[i]);
    if (std::isnan(r)) {
      CHECK(std::isnan(hd[i]));
    } else {
      CHECK(hd[i] == r);
      CHECK(static_cast<double>(hf[i]) == r);
    }
  }
  const auto b = f.get<double>("bf");
  CHECK(b.shape == std::vector<std::size_t>{2, 4});
  for (std::size_t i = 0; i < bf.size(); ++i) {
    const double r = bf16_reference(bf[i]);
    if (std::isnan(r)) CHECK(std::isnan(b[i]));
    else CHECK(b[i] == r);
  }
  CHECK(f.get<double>("i").data == std::vector<double>{-3, 2000000});
  CHECK(f.get<double>("l").data == std::vector<double>{-7, 1125899906842624.0});
  CHECK(f.get<float>("u").data == std::vector<float>{200, 1});
  CHECK(f.get<double>("t").data == std::vector<double>{1, 0});
}

TEST_CASE("safetensors handles 0-d and zero-size tensors and an empty file") {
  bytes data;
  io_test::put_f32(data, 9.5f);
  const std::string json =
      "{" + entry("s", "F32", "[]", 0, 4) + "," + entry("z", "F64", "[0,5]", 4, 4) + "," + entry("e", "BF16", "[0]", 4, 4) + "}";
  const auto f = open_mem(io_test::safetensors_image(json, data));
  const auto s = f.get<double>("s");
  CHECK(s.shape.empty());
  CHECK(s.data == std::vector<double>{9.5});
  CHECK(f.get<float>("z").size() == 0);
  CHECK(f.get<float>("z").shape == std::vector<std::size_t>{0, 5});
  CHECK(f.get<float>("e").size() == 0);
  // Members of a tensor entry other than dtype, shape and data_offsets are ignored (as the reference does).
  const auto extra = open_mem(io_test::safetensors_image(
      R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4],"note":{"x":[1,2]}}})", data));
  CHECK(extra.get<float>("s").data == std::vector<float>{9.5f});
  const auto empty = open_mem(io_test::safetensors_image("{}", {}));
  CHECK(empty.names().empty());
  CHECK(empty.metadata().empty());
}

TEST_CASE("safetensors write then read round trips, with the reference layout") {
  io_test::scratch_dir dir("st_roundtrip");
  std::vector<float> w1(6 * 5);
  std::vector<double> b1(6);
  std::vector<float> p0(3 * 4);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = static_cast<float>(std::cos(0.3 * static_cast<double>(i)));
  for (std::size_t i = 0; i < b1.size(); ++i) b1[i] = std::exp(-static_cast<double>(i)) - 0.5;
  for (std::size_t i = 0; i < p0.size(); ++i) p0[i] = static_cast<float>(i) * 0.25f - 1.0f;
  const pio::array<float> p0a{{3, 4}, p0};
  const std::string tricky = "layer.0/\"q\"\\k\tv \xC3\xA9";  // quotes, backslash, control char, UTF-8
  pio::write_safetensors(dir / "m.safetensors",
                         {{"flow.W1", {6, 5}, std::span<const float>(w1)},
                          {"flow.b1", {6}, std::span<const double>(b1)},
                          {tricky, p0a}},
                         {{"format", "pt"}, {"model", "floater \"test\""}});
  const auto f = pio::safetensors_file::open(dir / "m.safetensors");
  CHECK(f.source() == (dir / "m.safetensors").string());
  CHECK(f.names() == std::vector<std::string>{"flow.W1", "flow.b1", tricky});
  CHECK(f.get<float>("flow.W1").data == w1);
  CHECK(f.get<double>("flow.b1").data == b1);
  CHECK(f.info("flow.b1").type == pio::dtype::f64);
  CHECK(f.get<float>(tricky).data == p0);
  // Converting reads from the file (f32 -> f64, f64 -> f32).
  CHECK(f.get<double>("flow.W1").data == std::vector<double>(w1.begin(), w1.end()));
  const auto b1f = f.get<float>("flow.b1").data;
  for (std::size_t i = 0; i < b1.size(); ++i) CHECK(b1f[i] == static_cast<float>(b1[i]));
  CHECK(f.get<float>(tricky).shape == std::vector<std::size_t>{3, 4});
  CHECK(f.metadata().at("model") == "floater \"test\"");
  // Layout: 8 + N a multiple of 8, header starting with '{' and padded with spaces, tensors in the
  // given order and contiguous, data = little-endian IEEE encodings.
  const bytes raw = io_test::read_bytes(dir / "m.safetensors");
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(raw[static_cast<std::size_t>(i)]);
  CHECK((8 + n) % 8 == 0);
  CHECK(raw[8] == std::byte{'{'});
  std::string header(reinterpret_cast<const char*>(raw.data()) + 8, n);
  const auto last = header.find_last_not_of(' ');
  CHECK(header[last] == '}');
  bytes expect;
  for (float x : w1) io_test::put_f32(expect, x);
  for (double x : b1) io_test::put_f64(expect, x);
  for (float x : p0) io_test::put_f32(expect, x);
  CHECK(bytes(raw.begin() + static_cast<std::ptrdiff_t>(8 + n), raw.end()) == expect);
  CHECK(f.info("flow.W1").begin == 0);
  CHECK(f.info("flow.b1").begin == 120);
  CHECK(f.info(tricky).begin == 168);
  // The in-memory encoder produces the same bytes.
  CHECK(pio::safetensors_bytes({{"flow.W1", {6, 5}, std::span<const float>(w1)},
                                {"flow.b1", {6}, std::span<const double>(b1)},
                                {tricky, p0a}},
                               {{"format", "pt"}, {"model", "floater \"test\""}}) == raw);
  // Header padding of any length is accepted on read.
  for (std::string_view pad : {"", " ", "       ", "\n\t "}) CHECK(open_mem(two_tensor_file(pad)).names().size() == 2);
}

TEST_CASE("safetensors converting reads from a file span several read chunks") {
  io_test::scratch_dir dir("st_big");
  std::vector<float> big(200000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1000) * 0.25f;
  pio::write_safetensors(dir / "big.safetensors", {{"a", {200, 1000}, std::span<const float>(big)}});
  const auto f = pio::safetensors_file::open(dir / "big.safetensors");
  const auto d = f.get<double>("a");
  bool same = d.size() == big.size();
  for (std::size_t i = 0; same && i < big.size(); ++i) same = d[i] == static_cast<double>(big[i]);
  CHECK(same);
}

TEST_CASE("safetensors tensor_ref accepts vectors, spans and arrays") {
  const std::vector<float> a{1, 2};
  const std::vector<double> b{3, 4, 5};
  const pio::array<double> c{{1, 1}, {6}};
  const auto f = open_mem(pio::safetensors_bytes({{"a", {2}, a}, {"b", {3, 1}, b}, {"c", c}}));
  CHECK(f.get<float>("a").data == a);
  CHECK(f.get<double>("b", {3, 1}).data == b);
  CHECK(f.get<double>("c", {1, 1}).data == c.data);
}

TEST_CASE("safetensors metadata: file order, lookups small and hashed, an unknown key named, == and to_map for the writers") {
  for (const std::size_t m : {std::size_t{3}, std::size_t{40}}) {  // a scan up to 16 entries, the hash index above
    CAPTURE(m);
    std::string json = "{\"__metadata__\":{";
    pio::safetensors_metadata expect;
    for (std::size_t i = 0; i < m; ++i) {  // written in descending key order: file order is not key order
      const std::string k = "key" + std::to_string(m - i), v = i % 2 ? "" : "v\\u00e9" + std::to_string(i);
      json += (i ? ",\"" : "\"") + k + "\":\"" + v + "\"";
      expect[k] = i % 2 ? "" : "v\xC3\xA9" + std::to_string(i);
    }
    const auto f = open_mem(io_test::safetensors_image(json + "}}", {}));
    const auto& md = f.metadata();
    REQUIRE(md.size() == m);
    std::size_t i = 0;
    for (const auto& [k, v] : md) {  // file order
      CHECK(k == "key" + std::to_string(m - i));
      CHECK(v == expect.at(std::string(k)));
      ++i;
    }
    for (const auto& [k, v] : expect) {
      CHECK(md.at(k) == v);
      CHECK(md.contains(k));
      CHECK(md.count(k) == 1);
      CHECK((*md.find(k)).second == v);
    }
    CHECK_FALSE(md.contains("key0"));
    CHECK(md.find("key0") == md.end());
    io_test::require_error<posenc::invalid_argument>([&] { (void)md.at("no such key"); }, {"key: expected a key of the metadata", "'no such key'"});
    CHECK_THROWS_AS((void)md.at(std::string(100, 'k')), posenc::invalid_argument);
    CHECK(md == expect);
    CHECK(md.to_map() == expect);
    static_assert(std::forward_iterator<pio::safetensors_metadata_table::iterator>);
    static_assert(std::ranges::forward_range<const pio::safetensors_metadata_table>);
    CHECK(static_cast<std::size_t>(std::ranges::distance(md)) == m);
    // the implicit conversion writes it again; the copy compares equal whatever its order
    const auto back = open_mem(pio::safetensors_bytes({}, md));
    CHECK(back.metadata() == md);
    CHECK(back.metadata().begin() != back.metadata().end());
    pio::safetensors_metadata other = expect;
    other.begin()->second += "x";
    CHECK_FALSE(md == other);
    const auto copy = f;  // copies share the table
    CHECK(copy.metadata() == md);
  }
  CHECK(open_mem(io_test::safetensors_image("{}", {})).metadata().empty());
}

TEST_CASE("safetensors lookups name the tensor and the problem") {
  const auto f = open_mem(two_tensor_file());
  io_test::require_error([&] { (void)f.info("missing"); }, {"<memory>", "no tensor named 'missing'", "'w', 'b'"});
  io_test::require_error([&] { (void)f.get<float>("w", {4}); }, {"tensor 'w'", "expected shape [4]", "[2, 2]"});
  std::vector<float> small(3);
  io_test::require_error([&] { f.read_into<float>("w", small); }, {"tensor 'w'", "4 elements", "destination has 3"});
}

TEST_CASE("safetensors rejects malformed files with an io_error naming the source, tensor and problem") {
  auto mem = [](const bytes& b) { return [b] { (void)pio::safetensors_file::from_bytes(std::span<const std::byte>(b)); }; };
  auto json_file = [](const std::string& json, std::size_t data_bytes) {
    return io_test::safetensors_image(json, bytes(data_bytes, std::byte{0}));
  };
  const bytes good = two_tensor_file();

  io_test::require_error(mem({}), {"<memory>", "shorter than the 8-byte header length"});
  io_test::require_error(mem(bytes(good.begin(), good.begin() + 7)), {"shorter than the 8-byte"});
  bytes big = good;
  big[7] = std::byte{0x7F};  // 2^62-ish header length in a ~300-byte file: refused before allocating
  io_test::require_error(mem(big), {"truncated safetensors file", "exceeds"});
  bytes cut(good.begin(), good.begin() + 40);
  io_test::require_error(mem(cut), {"truncated safetensors file"});
  io_test::require_error(mem(io_test::safetensors_image("{", {})), {"cannot hold a JSON object"});
  io_test::require_error(mem(io_test::safetensors_image("[1, 2]", {})), {"must start with '{'"});
  io_test::require_error(mem(io_test::safetensors_image(" {}", {})), {"must start with '{'"});
  io_test::require_error(mem(io_test::safetensors_image("{\"a\":1,}", {})), {"bad JSON", "offset"});
  io_test::require_error(mem(io_test::safetensors_image("{\"a\":\"x}", {})), {"unterminated JSON string"});
  io_test::require_error(mem(io_test::safetensors_image("{\"a\xFF\":1}", {})), {"invalid UTF-8"});
  io_test::require_error(mem(io_test::safetensors_image("{\"a\":\"\\ud800\"}", {})), {"unpaired surrogate"});
  io_test::require_error(mem(io_test::safetensors_image("{\"a\":01}", {})), {"bad JSON"});
  io_test::require_error(mem(io_test::safetensors_image("{} x", {})), {"unexpected characters"});
  io_test::require_error(mem(io_test::safetensors_image("{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}", {})),
                         {"nested too deeply"});
  std::string long_shape = "[1";
  for (int i = 0; i < 5000; ++i) long_shape += ",1";
  io_test::require_error(mem(json_file("{" + entry("w", "F32", long_shape + "]", 0, 4) + "}", 4)),
                         {"JSON array longer than the limit of 4096"});
  io_test::require_error(mem(io_test::safetensors_image("{\"w\":[]}", {})), {"tensor 'w'", "not an object"});
  io_test::require_error(mem(json_file("{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4)),
                         {"tensor 'w'", "missing or non-string \"dtype\""});
  io_test::require_error(mem(json_file("{" + entry("w", "C64", "[1]", 0, 8) + "}", 8)),
                         {"tensor 'w'", "unsupported dtype \"C64\""});
  io_test::require_error(mem(json_file("{" + entry("w", "F8_E4M3", "[1]", 0, 1) + "}", 1)), {"unsupported dtype"});
  io_test::require_error(mem(json_file("{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4)),
                         {"tensor 'w'", "missing \"shape\""});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[\"1\"]", 0, 4) + "}", 4)),
                         {"tensor 'w'", "non-negative integers"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[-1]", 0, 4) + "}", 4)), {"non-negative integers, got -1"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[1.0]", 0, 4) + "}", 4)), {"non-negative integers, got 1.0"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[1e0]", 0, 4) + "}", 4)), {"non-negative integers"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[18446744073709551616]", 0, 4) + "}", 4)),
                         {"non-negative integers"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[4294967296,4294967296,4]", 0, 4) + "}", 4)),
                         {"tensor 'w'", "overflows"});
  io_test::require_error(mem(json_file("{" + entry("w", "F64", "[2305843009213693952]", 0, 4) + "}", 4)),
                         {"tensor 'w'", "overflows"});
  io_test::require_error(mem(json_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4)),
                         {"tensor 'w'", "two integers"});
  io_test::require_error(mem(json_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,-4]}}", 4)),
                         {"tensor 'w'", "non-negative"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[1]", 4, 0) + "}", 4)), {"tensor 'w'", "begin > end"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[1]", 0, 8) + "}", 4)),
                         {"tensor 'w'", "extends past the data section (4 bytes)"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[1]", 0, 18446744073709551615ull) + "}", 4)),
                         {"tensor 'w'", "extends past"});
  io_test::require_error(mem(json_file("{" + entry("w", "F32", "[3]", 0, 8) + "}", 8)),
                         {"tensor 'w'", "needs 12 bytes", "span 8"});
  io_test::require_error(mem(json_file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}", 12)),
                         {"tensor 'b'", "overlaps tensor 'a'"});
  io_test::require_error(mem(json_file("{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 0, 8) + "}", 8)),
                         {"overlaps"});
  io_test::require_error(mem(json_file("{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[1]", 8, 12) + "}", 12)),
                         {"tensor 'b'", "4 unused bytes"});
  io_test::require_error(mem(json_file("{" + entry("a", "F32", "[1]", 4, 8) + "}", 8)), {"tensor 'a'", "unused bytes"});
  io_test::require_error(mem(json_file("{" + entry("a", "F32", "[1]", 0, 4) + "}", 6)),
                         {"2 bytes at the end of the data section belong to no tensor"});
  io_test::require_error(mem(json_file("{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("a", "F32", "[1]", 4, 8) + "}", 8)),
                         {"duplicate key \"a\""});
  io_test::require_error(mem(json_file("{\"__metadata__\":[1]}", 0)), {"\"__metadata__\" must be an object"});
  io_test::require_error(mem(json_file("{\"__metadata__\":{\"k\":1}}", 0)), {"entry 'k' is not a string"});

  io_test::scratch_dir dir("st_errors");
  io_test::require_error([&] { (void)pio::safetensors_file::open(dir / "none.safetensors"); },
                         {"none.safetensors", "no such file"});
  io_test::write_bytes(dir / "cut.safetensors", cut);
  io_test::require_error([&] { (void)pio::safetensors_file::open(dir / "cut.safetensors"); },
                         {"cut.safetensors", "truncated"});
  // A file that shrinks after open: get() notices instead of reading garbage.
  io_test::write_bytes(dir / "shrinks.safetensors", good);
  const auto f = pio::safetensors_file::open(dir / "shrinks.safetensors");
  io_test::write_bytes(dir / "shrinks.safetensors", cut);
  io_test::require_error([&] { (void)f.get<float>("b"); }, {"shrinks.safetensors", "changed size"});
}

TEST_CASE("safetensors write validates names, shapes and metadata") {
  const std::vector<float> d{1, 2, 3, 4};
  const std::span<const float> s(d);
  io_test::require_error<posenc::shape_error>([&] { (void)pio::safetensors_bytes({{"w", {3}, s}}); },
                                              {"safetensors_bytes", "tensor 'w'", "4 elements", "[3]"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::safetensors_bytes({{"w", {4}, s}, {"w", {2, 2}, s}}); },
                                                   {"duplicate tensor name 'w'"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::safetensors_bytes({{"", {4}, s}}); }, {"empty name"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::safetensors_bytes({{"__metadata__", {4}, s}}); },
                                                   {"__metadata__"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::safetensors_bytes({{"bad\xFF", {4}, s}}); },
                                                   {"not valid UTF-8"});
  io_test::require_error<posenc::invalid_argument>([&] { (void)pio::safetensors_bytes({{"w", {4}, s}}, {{"k", "\xC0\x80"}}); },
                                                   {"metadata entry 'k'"});
  io_test::scratch_dir dir("st_write_errors");
  io_test::require_error([&] { pio::write_safetensors(dir / "no" / "dir" / "x.safetensors", {{"w", {4}, s}}); },
                         {"cannot open for writing"});
}

TEST_CASE("safetensors fuzz: single-byte mutations, random multi-byte mutations and every truncation give a valid file or an io_error") {
  // Small valid file: metadata, an F16 [1,2] and an F32 [2] tensor.
  bytes data;
  for (unsigned x : {0x3C00u, 0xC000u}) io_test::put_le(data, x, 2);
  for (float x : {1.0f, 2.0f}) io_test::put_f32(data, x);
  const std::string json = R"({"__metadata__":{"a":"b"},)" + entry("h", "F16", "[1,2]", 0, 4) + "," +
                           entry("x", "F32", "[2]", 4, 12) + "}";
  const bytes img = io_test::safetensors_image(json, data);
  std::size_t ok = 0, rejected = 0;
  auto attempt = [&](const bytes& b) {
    try {
      const auto f = pio::safetensors_file::from_bytes(std::span<const std::byte>(b));
      for (const auto& name : f.names()) {
        const auto a = f.get<double>(name);
        std::size_t n = 1;
        for (auto s : a.shape) n *= s;
        CHECK(n == a.size());
        CHECK(f.raw(name).size() == f.info(name).byte_size());
      }
      ++ok;
    } catch (const posenc::io_error&) {
      ++rejected;
    }
  };
  // Each byte takes the structurally interesting values (the length fields all 256), then seeded
  // JSON-like mutants.
  io_test::mutate_and_parse(img, {0x00, 0x01, 0x7F, 0x80, 0xC3, 0xFF, '0', '1', '9', '-', '.', 'e', '[', ']', '{', '}', '"', ',', ':', ' ', '\\', 'F', 'B', 'u'}, 8, 2024, "0123456789[]{}\",: -.eEFBUI\\u\x7f", attempt);
  // Every truncation is rejected, from memory and from a file.
  io_test::scratch_dir dir("st_fuzz");
  for (std::size_t len = 0; len < img.size(); ++len) {
    const bytes b(img.begin(), img.begin() + static_cast<std::ptrdiff_t>(len));
    io_test::require_error([&] { (void)open_mem(b); }, {"<memory>"});
    io_test::write_bytes(dir / "t.safetensors", b);
    io_test::require_error([&] { (void)pio::safetensors_file::open(dir / "t.safetensors"); }, {"t.safetensors"});
  }
  CHECK(ok > 0);
  CHECK(rejected > 0);
}

TEST_CASE("safetensors: names and shapes view storage shared by copies; from_bytes keeps its own data") {
  bytes img = two_tensor_file();
  std::optional<pio::safetensors_file> copy;
  {
    const auto f = open_mem(img);
    copy = f;  // the copy shares the tensor list's storage and the data
  }
  // the original is gone and the caller's bytes are overwritten: the copy still reads both
  std::fill(img.begin(), img.end(), std::byte{0xAB});
  img.clear();
  img.shrink_to_fit();
  const auto& w = copy->info("w");
  CHECK(w.name == "w");
  CHECK(w.shape == std::vector<std::size_t>{2, 2});
  CHECK(std::vector<std::size_t>{2, 2} == w.shape);
  CHECK(w.shape != std::vector<std::size_t>{2});
  CHECK(w.shape != std::vector<std::size_t>{2, 3});
  CHECK(w.shape == copy->info("w").shape);
  CHECK(w.shape != copy->info("b").shape);
  CHECK(w.shape.to_vector() == std::vector<std::size_t>{2, 2});
  CHECK(copy->get<float>("w").data == std::vector<float>{1.0f, -2.0f, 0.5f, 3.25f});
  CHECK(copy->get<double>("b").data == std::vector<double>{0.1, -1e300, 7.0});
  CHECK(copy->raw("b").size() == 24);
  // a moved-from file lists nothing (and says so), it does not dangle
  pio::safetensors_file moved = std::move(*copy);
  CHECK(moved.names() == std::vector<std::string>{"w", "b"});
  CHECK(copy->tensors().empty());  // NOLINT(bugprone-use-after-move): the documented moved-from state
  CHECK_FALSE(copy->contains("w"));
  io_test::require_error([&] { (void)copy->info("w"); }, {"no tensor named 'w'", "the file has 0 tensors"});
}

TEST_CASE("safetensors: lookups by name in lists of more than 16 tensors agree with a linear search") {
  // 300 tensors whose names exercise the sorted index and the name storage: prefixes of one
  // another, bytes >= 0x80, a name longer than the storage's chunks (9000 bytes) and enough
  // bytes (> 64 KiB) to span several chunks; listed in neither sorted nor reverse order.
  std::vector<std::string> names;
  for (std::size_t i = 0; i < 290; ++i) names.push_back("model.layers." + std::to_string((i * 37) % 290) + std::string(220, 'x'));
  for (std::string s : {"a", "ab", "abc", "a\xC3\xA9", "\xC3\xA9", "Z", "model", "model.layers.1", "~"}) names.push_back(s);
  names.push_back(std::string(9000, 'q'));
  std::string json = "{";
  bytes data;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) json += ',';
    json += entry(names[i], "F32", "[1]", 4 * i, 4 * i + 4);
    io_test::put_f32(data, static_cast<float>(i));
  }
  json += "}";
  const auto f = open_mem(io_test::safetensors_image(json, data));
  REQUIRE(f.tensors().size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    CHECK(f.tensors()[i].name == names[i]);  // file order, names intact across chunks
    const auto& t = f.info(names[i]);
    CHECK(t.begin == 4 * i);
    CHECK(f.get<float>(names[i]).data == std::vector<float>{static_cast<float>(i)});
  }
  // absent: the empty name, a proper prefix, an extension, a name between two present ones
  for (std::string_view absent : {std::string_view(""), std::string_view("model.layers"), std::string_view("abcd"),
                                  std::string_view("aa"), std::string_view("\xC3"), std::string_view("~~")}) {
    CHECK_FALSE(f.contains(absent));
    CHECK_THROWS_AS((void)f.info(absent), posenc::io_error);
  }
}
