// SPDX-License-Identifier: MIT
// A small, strict JSON (RFC 8259) parser for file headers (safetensors). Objects keep their
// members in file order and reject duplicate keys; numbers keep their text so integers can be
// read exactly (64-bit, overflow-checked); strings are validated UTF-8 with escapes decoded;
// nesting depth is bounded so hostile input cannot exhaust the stack. Errors are reported
// through a callback that must throw (e.g. posenc::io_error); one that returns is itself reported
// as posenc::io_error. Accessors of a parsed value check their index (item(k) with k >= size()
// throws posenc::invalid_argument): the input is untrusted, so nothing is a precondition.
//
// Resource budget (the input is untrusted, at most 128 MiB): the parsed document is one flat
// array of 8-byte nodes in document order (a container records where its subtree ends) plus one
// buffer holding the decoded text of strings that contain escapes; everything else points into
// the input. A first pass over the bytes counts the nodes (each value, key and container opens
// with a distinct character), so the array is allocated once, at its final size: no growth, no
// copy. Every node consumes at least two input bytes (a value and its separator, or a key's two
// quotes), so nodes <= bytes/2 + 1 and the document holds at most 4 bytes per input byte plus one
// node (and the decoded text, which is never longer than its escaped input: the same first pass
// sums the strings with escapes, so that buffer is reserved once too). The first pass stops where
// containers nest deeper than max_depth, where the parser fails: a text of 16 MB of '[' reserves
// 65 nodes, not 8 million; and the count is bounded by the separators that introduce nodes
// ('{', '[', ',', ':'), so values with none between them (refused at the second) reserve one.
// Duplicate keys are found in
// O(m) expected time per object of m members with a hash table of the keys (4 m to 8 m bytes,
// freed when the object is done; m <= 16: pairwise, nothing allocated);
// if hostile keys make the table probe more than 8 m times, the object's keys are sorted instead
// (O(m log m) worst case). Probes and comparisons are counted in key_comparisons() so tests can
// check the bound.
// Thread safety: a document is an immutable value once parsed (shareable const); a parser is
// used by one thread.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/io/json_document.hpp>

namespace posenc::io::json {

/// Parse `in` as one JSON value surrounded by optional whitespace. `fail(offset, message)` is
/// called on the first error and must throw.
template <class Fail>
class parser {
 public:
  static constexpr int max_depth = 64;

  /// max_array_items bounds every array's length.
  parser(std::string_view in, Fail fail, std::size_t max_array_items = static_cast<std::size_t>(-1))
      : m_s(in), m_fail(std::move(fail)), m_max_items(max_array_items) {}

  /// Longest input accepted: 128 MiB (node lengths and counts fit in 27 bits).
  static constexpr std::size_t max_text = std::size_t{1} << node::n_bits;

  document parse() {
    if (m_s.size() >= max_text) error("JSON text of 128 MiB or more");
    m_doc.m_src = m_s;
    const first_pass counted = count_nodes(m_s);
    m_doc.m_nodes.reserve(std::min(counted.nodes, m_s.size() / 2 + 1));
    if (counted.escaped_bytes) m_doc.m_text.reserve(counted.escaped_bytes);
    skip_ws();
    parse_value(0);
    skip_ws();
    if (m_i != m_s.size()) error("unexpected characters after the JSON value");
    return std::move(m_doc);
  }

 private:
  /// \cond INTERNAL
  [[noreturn]] void error(std::string_view msg) {
    m_fail(m_i, msg);
    // A callback that returns: report that (and the error it was given) instead of going on.
    posenc::detail::fail<io_error>("json::parse", "fail: the error callback returned instead of throwing (error at offset ",
                                   m_i, ": ", msg, ")");
  }
  [[nodiscard]] POSENC_ALWAYS_INLINE bool eof() const noexcept { return m_i >= m_s.size(); }
  [[nodiscard]] POSENC_ALWAYS_INLINE char peek() const noexcept { return eof() ? '\0' : m_s[m_i]; }
  // (the helpers called per byte or per node are forced inline: GCC left them as calls in the
  // recursive parse_value, a third of the time of a deeply nested document)
  POSENC_ALWAYS_INLINE void skip_ws() {
    if (!eof() && static_cast<unsigned char>(m_s[m_i]) > ' ') return;  // the common case: no whitespace
    while (!eof() && (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\n' || m_s[m_i] == '\r')) ++m_i;
  }
  POSENC_ALWAYS_INLINE void expect(char c, std::string_view msg) {
    if (peek() != c || eof()) error(msg);
    ++m_i;
  }
  POSENC_ALWAYS_INLINE std::uint32_t push(kind t) {
    const auto at = static_cast<std::uint32_t>(m_doc.m_nodes.size());
    node x;
    x.set_type(t);
    m_doc.m_nodes.push_back(x);
    return at;
  }

  struct first_pass {
    std::size_t nodes = 0;          ///< nodes of the document
    std::size_t escaped_bytes = 0;  ///< bytes of the strings holding escapes (>= their decoded text)
  };
  /// The number of nodes of a well-formed text, counted in one pass without building anything:
  /// each string (key or value), container, number and literal starts with a character that
  /// nothing else outside a string starts with; and the bytes of the strings with escapes, which
  /// bound the decoded text. The pass stops where containers nest deeper than max_depth: the
  /// parser fails there, so nothing past that point is reserved (16 MB of '[' reserved 64 MB).
  /// The count is also bounded by the separators (below). (On malformed text the count may be
  /// off; the parser then fails, and the node array merely grows past its reservation.)
  static first_pass count_nodes(std::string_view s) noexcept {
    first_pass out;
    std::size_t count = 0;
    // Every node but the root follows a '{', '[', ',' or ':' of its own (a container's first
    // item or key, a later one, a member's value), so links bounds the nodes of a well-formed
    // text: 16 MB of "0 0 0 ..." (no separators) is refused at its second value, and reserves
    // for 1 node instead of 8 million.
    std::size_t links = 1;
    std::size_t i = 0, depth = 0;
    const std::size_t n = s.size();
    while (i < n) {
      const char c = s[i++];
      if (c == '"') {
        ++count;
        const std::size_t start = i;
        bool escapes = false;
        while (i < n && s[i] != '"') {
          if (s[i] == '\\') {
            escapes = true;
            ++i;
          }
          ++i;
        }
        if (escapes) out.escaped_bytes += std::min(i, n) - start;
        ++i;
      } else if (c == '{' || c == '[') {
        ++count;
        ++links;
        if (++depth > static_cast<std::size_t>(max_depth)) break;
      } else if (c == '}' || c == ']') {
        depth -= depth > 0 ? 1 : 0;
      } else if (c == ',' || c == ':') {
        ++links;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        ++count;
        while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' ||
                         s[i] == '-'))
          ++i;
      } else if (c == 't' || c == 'f' || c == 'n') {
        ++count;
        while (i < n && s[i] >= 'a' && s[i] <= 'z') ++i;
      }
    }
    out.nodes = std::min(count, links);
    return out;
  }

  /// FNV-1a of a key (the table below falls back to sorting if hostile keys collide).
  static std::uint64_t key_hash(std::string_view k) noexcept {
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : k) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return h ^ (h >> 29);
  }
  [[nodiscard]] std::uint32_t here() const noexcept { return static_cast<std::uint32_t>(m_i); }

  [[noreturn]] void duplicate(std::string_view key) {
    error("duplicate key \"" + std::string(key) + "\" in a JSON object");
  }
  [[nodiscard]] std::string_view key_text(std::uint32_t j) const noexcept { return m_doc.text_of(m_doc.m_nodes[j]); }

  /// Report the first duplicate among the keys of the object at node `obj` (m members).
  void check_duplicate_keys(std::uint32_t obj, std::uint32_t m) {
    if (m < 2) return;
    std::uint64_t& count = m_doc.m_key_comparisons;
    const auto next_key = [&](std::uint32_t j) { return value(&m_doc, j + 1).next(); };
    if (m <= 16) {  // pairwise, no allocation (the common small object)
      std::array<std::uint32_t, 16> keys{};
      std::uint32_t j = obj + 1;
      for (std::uint32_t k = 0; k < m; ++k, j = next_key(j)) {
        keys[k] = j;
        for (std::uint32_t q = 0; q < k; ++q) {
          ++count;
          const std::string_view a = key_text(keys[q]), b = key_text(j);
          // length and first byte before the full comparison (no library call for the usual
          // distinct keys of a small object, e.g. "dtype" and "shape")
          if (a.size() == b.size() && (a.empty() || a[0] == b[0]) && a == b) duplicate(b);
        }
      }
      return;
    }
    // Open addressing (linear probing), load <= 1/2. A slot holds a key's node index (< 2^27;
    // 0, the root, is never a key: empty) and 5 more bits of its hash, so that a probe compares
    // key texts only when those bits match. Hashes are computed for 16 keys at a time and their
    // slots prefetched, so the table's cache misses overlap.
    const std::size_t cap = std::bit_ceil(2 * static_cast<std::size_t>(m));
    const std::uint64_t budget = count + 8 * static_cast<std::uint64_t>(m) + 64;
    bool flooded = false;
    {
      std::vector<std::uint32_t> slots(cap, 0);
      constexpr std::uint32_t batch = 16;
      std::array<std::uint32_t, batch> js{};
      std::array<std::uint64_t, batch> hs{};
      std::uint32_t j = obj + 1;
      for (std::uint32_t k = 0; k < m && !flooded;) {
        const std::uint32_t nb = std::min(batch, m - k);
        for (std::uint32_t b = 0; b < nb; ++b, j = next_key(j)) {
          js[b] = j;
          hs[b] = key_hash(key_text(j));
#if defined(__GNUC__) || defined(__clang__)
          __builtin_prefetch(&slots[static_cast<std::size_t>(hs[b]) & (cap - 1)]);
#endif
        }
        for (std::uint32_t b = 0; b < nb && !flooded; ++b) {
          const std::string_view key = key_text(js[b]);
          const auto tag = static_cast<std::uint32_t>(hs[b] >> 59);
          std::size_t h = static_cast<std::size_t>(hs[b]) & (cap - 1);
          for (;;) {
            ++count;
            const std::uint32_t e = slots[h];
            if (e == 0) {
              slots[h] = (tag << node::n_bits) | js[b];
              break;
            }
            if ((e >> node::n_bits) == tag && key_text(e & node::n_mask) == key) duplicate(key);
            if (count > budget) {
              flooded = true;
              break;
            }
            h = (h + 1) & (cap - 1);
          }
        }
        k += nb;
      }
    }
    if (!flooded) return;
    // Hostile keys: sort them instead (O(m log m) comparisons whatever the keys).
    std::vector<std::uint32_t> keys;
    keys.reserve(m);
    for (std::uint32_t k = 0, j = obj + 1; k < m; ++k, j = next_key(j)) keys.push_back(j);
    std::sort(keys.begin(), keys.end(), [&](std::uint32_t x, std::uint32_t y) {
      ++count;
      return key_text(x) < key_text(y);
    });
    for (std::size_t k = 1; k < keys.size(); ++k) {
      ++count;
      if (key_text(keys[k - 1]) == key_text(keys[k])) duplicate(key_text(keys[k]));
    }
  }

  void parse_value(int depth) {
    if (depth >= max_depth) error("JSON nested too deeply");
    if (eof()) error("unexpected end of JSON");
    const char c = m_s[m_i];
    if (c == '{') {
      const std::uint32_t at = push(kind::object);
      ++m_i;
      skip_ws();
      std::uint32_t members = 0;
      if (peek() == '}' && !eof()) {
        ++m_i;
      } else {
        for (;;) {
          skip_ws();
          if (peek() != '"' || eof()) error("expected a string key in a JSON object");
          parse_string();
          skip_ws();
          expect(':', "expected ':' after a JSON object key");
          skip_ws();
          parse_value(depth + 1);
          ++members;
          skip_ws();
          if (peek() == ',' && !eof()) {
            ++m_i;
            continue;
          }
          expect('}', "expected ',' or '}' in a JSON object");
          break;
        }
      }
      m_doc.m_nodes[at].a = static_cast<std::uint32_t>(m_doc.m_nodes.size());
      m_doc.m_nodes[at].set_n(members);
      check_duplicate_keys(at, members);
      return;
    }
    if (c == '[') {
      const std::uint32_t at = push(kind::array);
      ++m_i;
      skip_ws();
      std::size_t items = 0;
      if (peek() == ']' && !eof()) {
        ++m_i;
      } else {
        for (;;) {
          skip_ws();
          if (items == m_max_items) error("JSON array longer than the limit of " + std::to_string(m_max_items) + " items");
          parse_value(depth + 1);
          ++items;
          skip_ws();
          if (peek() == ',' && !eof()) {
            ++m_i;
            continue;
          }
          expect(']', "expected ',' or ']' in a JSON array");
          break;
        }
      }
      m_doc.m_nodes[at].a = static_cast<std::uint32_t>(m_doc.m_nodes.size());
      m_doc.m_nodes[at].set_n(static_cast<std::uint32_t>(items));
      return;
    }
    if (c == '"') {
      parse_string();
      return;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const std::uint32_t at = push(kind::number);
      const std::uint32_t start = here();
      parse_number();
      m_doc.m_nodes[at].a = start;
      m_doc.m_nodes[at].set_n(here() - start);
      return;
    }
    if (literal("true")) {
      m_doc.m_nodes[push(kind::boolean)].set_b(true);
      return;
    }
    if (literal("false")) {
      push(kind::boolean);
      return;
    }
    if (literal("null")) {
      push(kind::null);
      return;
    }
    error("invalid JSON value");
  }

  bool literal(std::string_view w) {
    if (m_s.substr(m_i, w.size()) != w) return false;
    m_i += w.size();
    return true;
  }

  void parse_number() {
    auto digits = [&] {
      const std::size_t s = m_i;
      while (!eof() && m_s[m_i] >= '0' && m_s[m_i] <= '9') ++m_i;
      return m_i - s;
    };
    if (peek() == '-') ++m_i;
    if (peek() == '0' && !eof()) ++m_i;
    else if (digits() == 0) error("invalid JSON number");
    if (peek() == '.' && !eof()) {
      ++m_i;
      if (digits() == 0) error("invalid JSON number: no digits after '.'");
    }
    if (!eof() && (peek() == 'e' || peek() == 'E')) {
      ++m_i;
      if (!eof() && (peek() == '+' || peek() == '-')) ++m_i;
      if (digits() == 0) error("invalid JSON number: no digits in the exponent");
    }
  }

  unsigned hex4() {
    if (m_s.size() - m_i < 4) error("truncated \\u escape in a JSON string");
    unsigned v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = m_s[m_i++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<unsigned>(c - 'A' + 10);
      else error("invalid hex digit in a \\u escape");
    }
    return v;
  }

  static void put_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  /// Length of the valid UTF-8 sequence starting at m_i, or 0.
  [[nodiscard]] std::size_t utf8_length() const noexcept {
    const auto b = [&](std::size_t k) { return static_cast<unsigned char>(m_s[m_i + k]); };
    const std::size_t left = m_s.size() - m_i;
    const unsigned c = b(0);
    auto cont = [&](std::size_t k) { return k < left && (b(k) & 0xC0) == 0x80; };
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(1) || !cont(2)) return 0;
      if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
      if (c == 0xED && b(1) >= 0xA0) return 0;  // surrogate
      return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return 0;
      if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
      if (c == 0xF4 && b(1) >= 0x90) return 0;  // > U+10FFFF
      return 4;
    }
    return 0;
  }

  /// Parse a string at m_i (opening quote) into a new string node. A string without escapes
  /// points into the input; one with escapes is decoded into the document's text buffer.
  void parse_string() {
    const std::uint32_t at = push(kind::string);
    ++m_i;  // opening quote
    const std::uint32_t start = here();
    bool escaped = false;
    std::size_t dstart = 0;
    std::string& out = m_doc.m_text;
    for (;;) {
      if (eof()) error("unterminated JSON string");
      const char c = m_s[m_i];
      if (c == '"') {
        node& x = m_doc.m_nodes[at];
        if (escaped) {
          x.set_decoded(true);
          x.a = static_cast<std::uint32_t>(dstart);
          x.set_n(static_cast<std::uint32_t>(out.size() - dstart));
        } else {
          x.a = start;
          x.set_n(here() - start);
        }
        ++m_i;
        return;
      }
      if (!escaped && static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x80 && c != '\\') {
        ++m_i;  // plain ASCII: the common case, one comparison chain per byte
        continue;
      }
      if (static_cast<unsigned char>(c) < 0x20) error("control character inside a JSON string");
      if (c == '\\') {
        if (!escaped) {  // switch to decoding: copy what was read so far
          escaped = true;
          dstart = out.size();
          out.append(m_s.substr(start, m_i - start));
        }
        ++m_i;
        if (eof()) error("unterminated escape in a JSON string");
        const char e = m_s[m_i++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            std::uint32_t cp = hex4();
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              if (m_s.substr(m_i, 2) != "\\u") error("unpaired surrogate in a \\u escape");
              m_i += 2;
              const std::uint32_t lo = hex4();
              if (lo < 0xDC00 || lo > 0xDFFF) error("unpaired surrogate in a \\u escape");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
              error("unpaired surrogate in a \\u escape");
            }
            put_utf8(out, cp);
            break;
          }
          default: error("invalid escape in a JSON string");
        }
        continue;
      }
      const std::size_t n = utf8_length();
      if (n == 0) error("invalid UTF-8 in a JSON string");
      if (escaped) out.append(m_s.substr(m_i, n));
      m_i += n;
    }
  }

  std::string_view m_s;
  std::size_t m_i = 0;
  Fail m_fail;
  std::size_t m_max_items;
  document m_doc;
  /// \endcond
};

/// Parse text (which must outlive the returned document); fail(offset, message) must throw.
template <class Fail>
[[nodiscard]] document parse(std::string_view text, Fail fail, std::size_t max_array_items = static_cast<std::size_t>(-1)) {
  return parser<Fail>(text, std::move(fail), max_array_items).parse();
}

/// True if s is well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF).
[[nodiscard]] inline bool valid_utf8(std::string_view s) noexcept {
  std::size_t i = 0;
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  while (i < s.size()) {
    const std::size_t left = s.size() - i;
    const unsigned c = b(0);
    auto cont = [&](std::size_t k) { return k < left && (b(k) & 0xC0) == 0x80; };
    std::size_t n = 0;
    if (c < 0x80) n = 1;
    else if (c >= 0xC2 && c <= 0xDF) n = cont(1) ? 2 : 0;
    else if (c >= 0xE0 && c <= 0xEF)
      n = (cont(1) && cont(2) && !(c == 0xE0 && b(1) < 0xA0) && !(c == 0xED && b(1) >= 0xA0)) ? 3 : 0;
    else if (c >= 0xF0 && c <= 0xF4)
      n = (cont(1) && cont(2) && cont(3) && !(c == 0xF0 && b(1) < 0x90) && !(c == 0xF4 && b(1) >= 0x90)) ? 4 : 0;
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/// Append s as a JSON string literal (quotes and escapes). invalid_argument if s is not valid
/// UTF-8 (JSON text is UTF-8; nothing is appended then).
inline void write_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
  posenc::detail::require(valid_utf8(s), "io::json::write_string",
                          "s: expected valid UTF-8 (a JSON string), got ", s.size(), " bytes that are not");
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (u < 0x20) {
      out += "\\u00";
      out += hex[u >> 4];
      out += hex[u & 0xF];
    } else out += c;
  }
  out += '"';
}

}  // namespace posenc::io::json
