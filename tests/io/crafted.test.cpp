// SPDX-License-Identifier: MIT
// The readers on 16 MB crafted inputs (issue 37): each input class of bench/io.bench.cpp's
// BM_*_crafted_* is built here in memory, at the benchmark's size, and read by the public reader;
// the memory it holds at once is counted (tests/io/heap_count.hpp) and must stay within 4x the
// input, and the work is counted, never timed: allocations that do not grow with the entry count,
// hash-table probes linear in the keys, nothing reserved past the point where the reader fails.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/io/json.hpp>
#include <posenc/io/npy.hpp>
#include <posenc/io/safetensors.hpp>

#include "io/heap_count.hpp"
#include "io/helpers.hpp"

namespace {

namespace js = posenc::io::json;
namespace pio = posenc::io;
namespace heap = io_test::heap;

constexpr std::size_t crafted = 16'000'000;

js::document parse(std::string_view s) {
  return js::parse(s, [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); });
}

/// __metadata__ of m entries, each padded to about bytes / m.
std::string metadata_keys(std::size_t m, std::size_t bytes) {
  std::string h = "{\"__metadata__\":{";
  const std::size_t each = bytes / m;
  for (std::size_t i = 0; i < m; ++i) {
    const std::size_t at = h.size();
    h += i ? ",\"k" : "\"k";
    h += std::to_string(i);
    h += "\":\"";
    const std::size_t used = h.size() - at + 1;
    h.append(each > used ? each - used : 1, 'v');
    h += '"';
  }
  return h + "}}";
}

/// Checks peak <= limit where the heap is counted; says so where it is not.
void check_peak(std::size_t peak, std::size_t input, double times) {
  if (!heap::counting()) {
    MESSAGE("heap counting is off under the sanitizers");
    return;
  }
  INFO("peak ", peak, " bytes for ", input, " bytes of input: ", static_cast<double>(peak) / static_cast<double>(input), "x");
  CHECK(static_cast<double>(peak) <= times * static_cast<double>(input));
}

}  // namespace

TEST_CASE("crafted safetensors: 10^6 __metadata__ keys in 16 MB, within 4x, allocations independent of the key count") {
  const io_test::bytes img = io_test::safetensors_image(metadata_keys(1'000'000, crafted), {});
  REQUIRE(img.size() >= crafted);
  std::size_t allocations = 0;
  std::optional<pio::safetensors_file> f;
  const std::size_t peak = heap::peak_growth([&] {
    const std::size_t before = heap::allocations();
    f.emplace(pio::safetensors_file::from_bytes(img));
    allocations = heap::allocations() - before;
  });
  REQUIRE(f->metadata().size() == 1'000'000);
  // 2.4x here (the JSON document, then one block of text and 12 bytes an entry); a std::map of
  // std::string spent ~100 bytes an entry plus the strings: 7.5x, and 2 * 10^6 allocations.
  check_peak(peak, img.size(), 4.0);
  if (heap::counting()) {
    INFO("allocations to open: ", allocations);
    CHECK(allocations <= 32);
  }
  // Entries in file order, looked up through an index built in O(m) probes.
  CHECK((*f->metadata().begin()).first == "k0");
  CHECK(f->metadata().index_probes() == 0);  // built at the first lookup
  std::size_t found = 0;
  for (const std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{777'777}, std::size_t{999'999}})
    found += f->metadata().contains("k" + std::to_string(i)) ? 1 : 0;
  CHECK(found == 4);
  CHECK_FALSE(f->metadata().contains("k1000000"));
  CHECK(f->metadata().at("k123").starts_with("vvv"));
  CHECK(f->metadata().index_probes() >= 1'000'000);
  CHECK(f->metadata().index_probes() <= 3'000'000);
  // The parser's duplicate-key check: O(m) probes too.
  CHECK(f->parse_cost().key_comparisons <= 3'000'000);

  // From a file, open() reads the header into a buffer of its own (one more copy): still within 4x.
  const io_test::scratch_dir dir("crafted");
  io_test::write_bytes(dir / "metadata.safetensors", img);
  std::size_t entries = 0;
  const std::size_t file_peak = heap::peak_growth(
      [&] { entries = pio::safetensors_file::open(dir / "metadata.safetensors").metadata().size(); });
  CHECK(entries == 1'000'000);
  check_peak(file_peak, img.size(), 4.0);
}

TEST_CASE("crafted safetensors: 300 000 tensors, one 16 MB metadata value: within 4x") {
  {
    std::string h = "{";
    const std::size_t n = 300'000;
    for (std::size_t i = 0; i < n; ++i)
      h += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[" +
           std::to_string(i) + "," + std::to_string(i + 1) + "]}";
    const io_test::bytes img = io_test::safetensors_image(h + "}", io_test::bytes(n, std::byte{1}));
    std::size_t tensors = 0;
    const std::size_t peak = heap::peak_growth([&] { tensors = pio::safetensors_file::from_bytes(img).tensors().size(); });
    CHECK(tensors == n);
    check_peak(peak, img.size(), 4.0);
  }
  for (const bool utf8 : {false, true}) {
    CAPTURE(utf8);
    std::string h = "{\"__metadata__\":{\"v\":\"";
    if (utf8) {
      while (h.size() < crafted) h += "caf\xC3\xA9";
    } else {
      h.append(crafted, 'x');
    }
    const io_test::bytes img = io_test::safetensors_image(h + "\"}}", {});
    std::size_t value = 0;
    const std::size_t peak = heap::peak_growth([&] { value = pio::safetensors_file::from_bytes(img).metadata().at("v").size(); });
    CHECK(value >= crafted - 32);
    // the value's one copy, and a 3-node document
    check_peak(peak, img.size(), 1.01);
  }
}

TEST_CASE("crafted JSON: 16 MB of keys, deep nesting, escapes and numbers within 4x; a too-deep text reserves nothing") {
  SUBCASE("10^6 keys in one object") {
    std::string s = "{";
    std::size_t m = 0;
    while (s.size() + 16 < crafted) {
      s += m ? ",\"k" : "\"k";
      s += std::to_string(m++);
      s += "\":0";
    }
    s += "}";
    std::uint64_t probes = 0;
    const std::size_t peak = heap::peak_growth([&] { probes = parse(s).key_comparisons(); });
    check_peak(peak, s.size(), 4.0);
    CHECK(probes >= m);
    CHECK(probes <= 3 * m);
  }
  SUBCASE("nests 62 deep, side by side") {
    const std::string nest = std::string(62, '[') + "0" + std::string(62, ']');
    std::string s = "[";
    while (s.size() + nest.size() + 2 < crafted) {
      if (s.size() > 1) s += ',';
      s += nest;
    }
    s += "]";
    std::size_t nodes = 0;
    const std::size_t peak = heap::peak_growth([&] { nodes = parse(s).nodes(); });
    CHECK(nodes == 1 + (s.size() - 2 + 1) / (nest.size() + 1) * 63);
    check_peak(peak, s.size(), 4.0 + 16.0 / static_cast<double>(s.size()));  // 8-byte nodes, 2 bytes each: 4x + 8
  }
  SUBCASE("16 MB of '[': refused at depth 64 having reserved for 64 nodes, not 8 million") {
    const std::string s(crafted, '[');
    const std::size_t peak = heap::peak_growth([&] {
      CHECK_THROWS_WITH_AS((void)parse(s), doctest::Contains("nested too deeply"), posenc::io_error);
    });
    if (heap::counting()) {
      INFO("peak ", peak, " bytes");
      CHECK(peak <= 4096);  // the first pass stops where the nesting passes the limit (it reserved 64 MB)
    }
  }
  SUBCASE("16 MB of values without separators: refused at the second, having reserved for 1 node") {
    for (const char* unit : {"0 ", "\"a\"", "null "}) {
      CAPTURE(unit);
      std::string s;
      while (s.size() < crafted) s += unit;
      const std::size_t peak = heap::peak_growth([&] {
        CHECK_THROWS_WITH_AS((void)parse(s), doctest::Contains("unexpected characters after the JSON value"), posenc::io_error);
      });
      if (heap::counting()) {
        INFO("peak ", peak, " bytes");
        CHECK(peak <= 4096);  // the values were counted alone: 8 bytes for each of 8 million (4x)
      }
    }
  }
  SUBCASE("one 16 MB string of escapes: the decoded text reserved once") {
    const std::string unit = R"(\n\u00e9\"ab\\\/\ud83d\ude00 caf)" "\xC3\xA9";
    std::string s = "[\"";
    std::size_t units = 0;
    for (; s.size() + unit.size() + 2 < crafted; ++units) s += unit;
    s += "\"]";
    std::size_t decoded = 0;
    const std::size_t peak = heap::peak_growth([&] { decoded = parse(s).root().item(0).text().size(); });
    CHECK(decoded == units * parse("[\"" + unit + "\"]").root().item(0).text().size());
    // no growth of the decoded-text buffer (doubling copies made it 1.5x)
    check_peak(peak, s.size(), 1.01);
  }
  SUBCASE("a 16 MB array of numbers") {
    std::string s = "[";
    for (std::size_t i = 0; s.size() + 24 < crafted; ++i) {
      if (i) s += ',';
      s += std::to_string(i % 100000);
      if (i % 3) s += ".5e-3";
    }
    s += "]";
    const std::size_t peak = heap::peak_growth([&] { (void)parse(s).nodes(); });
    check_peak(peak, s.size(), 4.0);
  }
}

TEST_CASE("crafted .npy: 16 MB header fields are read in place, not copied per field") {
  auto image = [](const std::string& dict) {
    return io_test::npy_image(2, dict, io_test::bytes(8, std::byte{0}));
  };
  const std::string big(crafted, 'x');
  struct field {
    const char* what;
    std::string dict;
    const char* error;  // nullptr: accepted
  };
  const field fields[] = {
      {"padding", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }" + std::string(crafted, ' '), nullptr},
      {"descr", "{'descr': '<f4" + big + "', 'fortran_order': False, 'shape': (2,), }", "unsupported dtype descr '<f4xxx"},
      {"key", "{'" + big + "': '<f4', 'fortran_order': False, 'shape': (2,), }", "unexpected key 'xxx"},
      {"shape digits", "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::string(crafted, '0') + "2,), }", nullptr},
  };
  for (const field& f : fields) {
    const std::string what = f.what;
    CAPTURE(what);
    const io_test::bytes img = image(f.dict);
    std::string message;
    std::size_t elements = 0;
    const std::size_t peak = heap::peak_growth([&] {
      try {
        elements = pio::read_npy<float>(std::span<const std::byte>(img)).data.size();
      } catch (const posenc::io_error& e) {
        message = e.what();
      }
    });
    CHECK(elements == (f.error ? 0 : 2));
    if (f.error) {
      CHECK(message.find(f.error) != std::string::npos);
      CHECK(message.size() < 1024);  // the field is shown cut to 64 bytes, not in full
    } else {
      CHECK(message.empty());
    }
    // the header's one copy; the dict parser copied each string (twice for descr) and the message held it again: 6x
    check_peak(peak, img.size(), 1.01);
  }
}
