// SPDX-License-Identifier: MIT
// libFuzzer harness of the JSON API (io/json.hpp) on arbitrary bytes: parse with a throwing
// callback and walk the whole document through the public accessors (item(k) for every k and
// one past the end, which must throw, find, for_each_member, text, as_u64), checking the
// resource bounds the header states; then parse again with a callback that returns, which must
// end in posenc::io_error on every rejected input (never `throw;` with no active exception).
#include <cmath>
#include <string>
#include <string_view>

#include <posenc/io/json.hpp>

#include "common.hpp"

namespace {

namespace js = posenc::io::json;

// Visits every value below v (depth is bounded by the parser's max_depth).
void walk(const js::value& v, std::size_t& visited) {
  ++visited;
  (void)v.text();
  (void)v.as_u64();
  (void)v.boolean();
  if (v.is_array()) {
    std::size_t n = 0;
    v.for_each_item([&](const js::value& x) {
      posenc_fuzz::expect(x.type() == v.item(n).type(), "item(k) is the k-th item of for_each_item");
      walk(x, visited);
      ++n;
    });
    posenc_fuzz::expect(n == v.size(), "for_each_item visits size() items");
    bool threw = false;
    try {
      (void)v.item(n);
    } catch (const posenc::invalid_argument&) {
      threw = true;
    }
    posenc_fuzz::expect(threw, "item(size()) throws invalid_argument");
  } else if (v.is_object()) {
    std::size_t n = 0;
    v.for_each_member([&](std::string_view key, const js::value& x) {
      const auto found = v.find(key);
      posenc_fuzz::expect(found.has_value() && found->type() == x.type(), "find(key) finds each member");
      walk(x, visited);
      ++n;
    });
    posenc_fuzz::expect(n == v.size(), "for_each_member visits size() members");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  posenc_fuzz::guarded(data, size, [&](std::span<const std::byte>) {
    const auto doc = js::parse(text, [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); },
                               std::size_t{1} << 16);
    posenc_fuzz::expect(doc.nodes() <= size / 2 + 1, "JSON nodes <= bytes / 2 + 1");
    posenc_fuzz::expect(doc.memory_bytes() <= 12 * size + 64, "document <= 12 bytes per input byte");
    const double m = static_cast<double>(doc.nodes());
    posenc_fuzz::expect(static_cast<double>(doc.key_comparisons()) <= 2 * m * std::log2(m + 2) + 16,
                        "key comparisons O(m log m)");
    std::size_t visited = 0;
    walk(doc.root(), visited);
    posenc_fuzz::expect(visited <= doc.nodes(), "every value is a node");
  });
  // The same bytes with a callback that returns: either accepted as above or an io_error.
  posenc_fuzz::guarded(data, size, [&](std::span<const std::byte>) {
    (void)js::parse(text, [](std::size_t, std::string_view) {}, std::size_t{1} << 16);
  });
  return 0;
}
