// SPDX-License-Identifier: MIT
// The readers at scale (issue 26): the crafted headers of bench/io.bench.cpp at 1/10 of the
// benchmark's size, with the work counted instead of timed: JSON nodes and the document's bytes
// (exactly 8 per node: the node array is allocated once, at its final size), duplicate-key probes
// (O(m) for m distinct keys, O(m log m) when hostile keys collide), and the number of heap
// allocations of a config whose factor lists have 10^5 items (a constant, not one per item).
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>
#include <variant>
#include <vector>

#include <posenc/io/json.hpp>
#include <posenc/io/safetensors.hpp>
#include <posenc/rotary/config.hpp>

#include "io/helpers.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define POSENC_TEST_NO_NEW_COUNT 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define POSENC_TEST_NO_NEW_COUNT 1
#endif

// Allocation counting (not under the sanitizers, which keep their own operator new).
#ifndef POSENC_TEST_NO_NEW_COUNT
namespace {
std::atomic<std::size_t> g_allocations{0};
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // these delete what this new made with malloc
#endif
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

namespace js = posenc::io::json;
namespace pio = posenc::io;

js::document parse(const std::string& s) {
  return js::parse(s, [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); });
}

std::string keys_object(std::size_t m) {
  std::string s = "{";
  for (std::size_t i = 0; i < m; ++i) s += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  return s + "}";
}

// The parser's key hash (FNV-1a 64 and a final shift), transcribed to build colliding keys.
std::uint64_t fnv(const std::string& k) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : k) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ (h >> 29);
}

}  // namespace

TEST_CASE("json at scale: 10^5 distinct keys take O(m) probes, the document exactly 8 bytes per node") {
  const std::size_t m = 100000;
  const std::string s = keys_object(m);
  const auto d = parse(s);
  CHECK(d.nodes() == 1 + 2 * m);
  CHECK(d.memory_bytes() == 8 * d.nodes());  // one allocation of the final size, no growth slack
  CHECK(d.memory_bytes() <= 4 * s.size());
  // One probe per key plus the collisions of a table at most half full: the expected count is
  // about 1.5 m for a good hash; 3 m bounds it (the former sort made ~m log2 m = 17 m comparisons).
  CHECK(d.key_comparisons() >= m);
  CHECK(d.key_comparisons() <= 3 * m);
  // A duplicate at the far end is found and named.
  const std::string dup = s.substr(0, s.size() - 1) + ",\"k77777\":1}";
  CHECK_THROWS_WITH_AS((void)parse(dup), doctest::Contains("duplicate key \"k77777\""), posenc::io_error);
}

TEST_CASE("json at scale: keys that collide in the hash table fall back to sorting (O(m log m))") {
  // 64 keys whose hashes all land in slot 0 of the 128-slot table (found by search with the
  // parser's hash), plus a duplicate of one of them: linear probing would take 64 * 65 / 2 = 2080
  // probes; past 8 m + 64 = 576 the parser sorts the keys instead.
  std::vector<std::string> keys;
  for (std::size_t i = 0; keys.size() < 64; ++i) {
    const std::string k = "c" + std::to_string(i);
    if ((fnv(k) & 127) == 0) keys.push_back(k);
  }
  std::string s = "{";
  for (const auto& k : keys) s += (s.size() > 1 ? ",\"" : "\"") + k + "\":0";
  const auto d = parse(s + "}");
  const double m = 64;
  CHECK(static_cast<double>(d.key_comparisons()) > 8 * m + 64);  // the fallback ran
  CHECK(static_cast<double>(d.key_comparisons()) <= 8 * m + 64 + 4 * m * std::log2(m) + m);
  CHECK_THROWS_WITH_AS((void)parse(s + ",\"" + keys[17] + "\":1}"), doctest::Contains("duplicate key"), posenc::io_error);
}

TEST_CASE("json at scale: 10^5 empty objects and a 10^5-item number array, <= 4 bytes per input byte (+ 1 node)") {
  std::string e = "[", n = "[";
  for (std::size_t i = 0; i < 100000; ++i) {
    e += i ? ",{}" : "{}";
    n += i ? ",1" : "1";
  }
  e += "]";
  n += "]";
  for (const std::string* s : {&e, &n}) {
    const auto d = parse(*s);
    CHECK(d.nodes() == 100001);
    CHECK(d.memory_bytes() == 8 * d.nodes());
    CHECK(d.memory_bytes() <= 4 * s->size() + 8);  // nodes <= bytes / 2 + 1
    CHECK(d.key_comparisons() == 0);
  }
}

TEST_CASE("safetensors at scale: 20 000 tensor entries, exactly 8 bytes per JSON node, O(m) key probes") {
  const std::size_t count = 20000;
  std::string h = "{";
  for (std::size_t i = 0; i < count; ++i)
    h += (i ? ",\"layers." : "\"layers.") + std::to_string(i) + ".weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[" +
         std::to_string(4 * i) + "," + std::to_string(4 * i + 4) + "]}";
  h += "}";
  const io_test::bytes data(4 * count, std::byte{0});
  const io_test::bytes image = io_test::safetensors_image(h, data);
#ifndef POSENC_TEST_NO_NEW_COUNT
  const std::size_t before = g_allocations.load();
#endif
  const auto f = pio::safetensors_file::from_bytes(image);
#ifndef POSENC_TEST_NO_NEW_COUNT
  // The tensor list keeps names and extents in blocks of at least 64 KiB (here 0.38 MB of names:
  // 6 blocks, 0.16 MB of extents: 3), not two allocations per tensor (40 000 before); with the
  // node array, the key table, the list and the data copy, a few dozen in all.
  const std::size_t used = g_allocations.load() - before;
  INFO("allocations to open 20 000 tensors: ", used);
  CHECK(used <= 64);
#endif
  CHECK(f.tensors().size() == count);
  const auto cost = f.parse_cost();
  CHECK(cost.json_nodes == 1 + count * 11);  // key, entry, 3 keys, "F32", shape + 1, offsets + 2
  CHECK(cost.json_bytes == 8 * cost.json_nodes);
  // the root's 20 000 keys by hashing (<= 3 probes per key), each entry's 3 keys pairwise (3)
  CHECK(cost.key_comparisons <= 3 * count + 3 * count);
}

TEST_CASE("load_config at scale: factor lists of 32768 items cost a constant number of allocations") {
#ifdef POSENC_TEST_NO_NEW_COUNT
  MESSAGE("allocation counting is off under the sanitizers");
#else
  auto config = [](std::size_t m) {
    std::string f = "[";
    for (std::size_t i = 0; i < m; ++i) f += i ? ",1.0299999713897705" : "1.0299999713897705";
    f += "]";
    return "{\"head_dim\": " + std::to_string(2 * m) +
           ", \"max_position_embeddings\": 8192, \"original_max_position_embeddings\": 4096, "
           "\"rope_scaling\": {\"type\": \"longrope\", \"short_factor\": " + f + ", \"long_factor\": " + f + "}}";
  };
  auto allocations = [&](std::size_t m) {
    const std::string text = config(m);
    const std::size_t before = g_allocations.load();
    const auto c = posenc::rotary::load_config(text);
    const std::size_t used = g_allocations.load() - before;
    const auto& r = std::get<posenc::rotary::rules::longrope>(c.main_plan().rule());
    CHECK(r.short_factor.size() == m);
    CHECK(r.long_factor.size() == m);
    CHECK(r.short_factor[m - 1] == 1.0299999713897705);
    return used;
  };
  // the longest lists a config may hold: rotary_dim / 2 items of the widest head load_config
  // accepts (rotary::max_config_head_dim)
  const std::size_t longest = posenc::rotary::max_config_head_dim / 2;
  const std::size_t small = allocations(10), large = allocations(longest);
  // The same allocations whatever the length (the node array, the two lists, a few strings):
  // forming the name "short_factor[k]" per item made 2 * longest more.
  INFO("allocations for 10 items: ", small, ", for ", longest, " items: ", large);
  CHECK(large == small);
#endif
}
