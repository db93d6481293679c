// SPDX-License-Identifier: MIT
// A small, strict JSON (RFC 8259) parser for file headers (safetensors). Objects keep their
// members in file order and reject duplicate keys; numbers keep their text so integers can be
// read exactly (64-bit, overflow-checked); strings are validated UTF-8 with escapes decoded;
// nesting depth is bounded so hostile input cannot exhaust the stack. Errors are reported
// through a callback that must not return (it throws posenc::io_error).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace posenc::io::detail::json {

struct value {
  enum class kind : std::uint8_t { null, boolean, number, string, array, object };
  kind type = kind::null;
  bool b = false;
  std::string text;           ///< string contents (decoded) or the number's literal text
  std::vector<value> items;        ///< array elements, or object member values (in file order)
  std::vector<std::string> keys;   ///< object member names: keys[i] names items[i]

  [[nodiscard]] bool is_object() const noexcept { return type == kind::object; }
  [[nodiscard]] bool is_array() const noexcept { return type == kind::array; }
  [[nodiscard]] bool is_string() const noexcept { return type == kind::string; }
  [[nodiscard]] bool is_number() const noexcept { return type == kind::number; }

  /// The member named key, or nullptr.
  [[nodiscard]] const value* find(std::string_view key) const noexcept;

  /// The number as a non-negative 64-bit integer; nullopt if not a number, not an integer
  /// literal (fraction, exponent, sign) or too large.
  [[nodiscard]] std::optional<std::uint64_t> as_u64() const noexcept {
    if (type != kind::number || text.empty()) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return std::nullopt;
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (v > (UINT64_MAX - d) / 10) return std::nullopt;
      v = v * 10 + d;
    }
    return v;
  }
};

inline const value* value::find(std::string_view key) const noexcept {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &items[i];
  return nullptr;
}

/// Parse `in` as one JSON value surrounded by optional whitespace. `fail(offset, message)` is
/// called on the first error and must throw.
template <class Fail>
class parser {
 public:
  static constexpr int max_depth = 64;

  /// max_array_items bounds every array's length (the DOM costs ~90 bytes per value, so this
  /// caps how much a short text like "[0,0,0,...]" can make the parser allocate).
  parser(std::string_view in, Fail fail, std::size_t max_array_items = static_cast<std::size_t>(-1))
      : m_s(in), m_fail(std::move(fail)), m_max_items(max_array_items) {}

  value parse() {
    skip_ws();
    value v = parse_value(0);
    skip_ws();
    if (m_i != m_s.size()) error("unexpected characters after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void error(std::string_view msg) {
    m_fail(m_i, msg);
    throw;  // unreachable: m_fail throws. (Re-throw keeps [[noreturn]] honest if it does not.)
  }
  [[nodiscard]] bool eof() const noexcept { return m_i >= m_s.size(); }
  [[nodiscard]] char peek() const noexcept { return eof() ? '\0' : m_s[m_i]; }
  void skip_ws() {
    while (!eof() && (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\n' || m_s[m_i] == '\r')) ++m_i;
  }
  void expect(char c, std::string_view msg) {
    if (peek() != c || eof()) error(msg);
    ++m_i;
  }

  value parse_value(int depth) {
    if (depth >= max_depth) error("JSON nested too deeply");
    if (eof()) error("unexpected end of JSON");
    const char c = m_s[m_i];
    value v;
    if (c == '{') {
      v.type = value::kind::object;
      ++m_i;
      skip_ws();
      if (peek() == '}' && !eof()) {
        ++m_i;
        return v;
      }
      for (;;) {
        skip_ws();
        if (peek() != '"' || eof()) error("expected a string key in a JSON object");
        std::string key = parse_string();
        for (const auto& k : v.keys)
          if (k == key) error("duplicate key \"" + key + "\" in a JSON object");
        skip_ws();
        expect(':', "expected ':' after a JSON object key");
        skip_ws();
        value item = parse_value(depth + 1);
        v.keys.push_back(std::move(key));
        v.items.push_back(std::move(item));
        skip_ws();
        if (peek() == ',' && !eof()) {
          ++m_i;
          continue;
        }
        expect('}', "expected ',' or '}' in a JSON object");
        return v;
      }
    }
    if (c == '[') {
      v.type = value::kind::array;
      ++m_i;
      skip_ws();
      if (peek() == ']' && !eof()) {
        ++m_i;
        return v;
      }
      for (;;) {
        skip_ws();
        if (v.items.size() == m_max_items) error("JSON array longer than the limit of " + std::to_string(m_max_items) + " items");
        v.items.push_back(parse_value(depth + 1));
        skip_ws();
        if (peek() == ',' && !eof()) {
          ++m_i;
          continue;
        }
        expect(']', "expected ',' or ']' in a JSON array");
        return v;
      }
    }
    if (c == '"') {
      v.type = value::kind::string;
      v.text = parse_string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = value::kind::number;
      v.text = parse_number();
      return v;
    }
    if (literal("true")) {
      v.type = value::kind::boolean;
      v.b = true;
      return v;
    }
    if (literal("false")) {
      v.type = value::kind::boolean;
      return v;
    }
    if (literal("null")) return v;
    error("invalid JSON value");
  }

  bool literal(std::string_view w) {
    if (m_s.substr(m_i, w.size()) != w) return false;
    m_i += w.size();
    return true;
  }

  std::string parse_number() {
    const std::size_t start = m_i;
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
    return std::string(m_s.substr(start, m_i - start));
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

  std::string parse_string() {
    ++m_i;  // opening quote
    std::string out;
    for (;;) {
      if (eof()) error("unterminated JSON string");
      const char c = m_s[m_i];
      if (c == '"') {
        ++m_i;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20) error("control character inside a JSON string");
      if (c == '\\') {
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
      out.append(m_s.substr(m_i, n));
      m_i += n;
    }
  }

  std::string_view m_s;
  std::size_t m_i = 0;
  Fail m_fail;
  std::size_t m_max_items;
};

/// Parse text; fail(offset, message) must throw.
template <class Fail>
[[nodiscard]] value parse(std::string_view text, Fail fail, std::size_t max_array_items = static_cast<std::size_t>(-1)) {
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

/// Append s as a JSON string literal (quotes and escapes; s is assumed valid UTF-8).
inline void write_string(std::string& out, std::string_view s) {
  static constexpr char hex[] = "0123456789abcdef";
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

}  // namespace posenc::io::detail::json
