// SPDX-License-Identifier: MIT
// The parsed JSON document of posenc/io/json.hpp: one flat array of 8-byte nodes in document
// order (json::node), the read-only accessors of a value (json::value: kind, text, items,
// members, exact integers) and the document that owns the nodes and the decoded strings. The
// resource budget and the parser are described in posenc/io/json.hpp. Standard library only.
// Thread safety: a document is an immutable value once parsed (shareable const).
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

namespace posenc::io::json {

enum class kind : std::uint8_t { null, boolean, number, string, array, object };

/// One node of a parsed document, 8 bytes. Scalars: [a, a + n()) is their text (in the input, or
/// in the document's decoded-text buffer when decoded()). Containers: a is one past the last node
/// of the subtree and n() the number of items (arrays) or members (objects; each member is a key
/// node, a string, followed by its value's subtree). n, the kind and the two flags share one
/// 32-bit word: n < 2^27, which the 128 MiB input limit guarantees.
struct node {
  static constexpr std::uint32_t n_bits = 27;
  static constexpr std::uint32_t n_mask = (std::uint32_t{1} << n_bits) - 1;
  std::uint32_t a = 0;
  std::uint32_t bits = 0;  ///< n | kind << 27 | boolean value << 30 | decoded << 31

  [[nodiscard]] std::uint32_t n() const noexcept { return bits & n_mask; }
  [[nodiscard]] kind type() const noexcept { return static_cast<kind>((bits >> n_bits) & 7u); }
  [[nodiscard]] bool b() const noexcept { return ((bits >> 30) & 1u) != 0; }  ///< a boolean's value
  [[nodiscard]] bool decoded() const noexcept { return (bits >> 31) != 0; }   ///< text in the decoded buffer
  void set_n(std::uint32_t v) noexcept { bits = (bits & ~n_mask) | (v & n_mask); }
  void set_type(kind t) noexcept { bits = (bits & ~(7u << n_bits)) | (static_cast<std::uint32_t>(t) << n_bits); }
  void set_b(bool v) noexcept { bits = (bits & ~(1u << 30)) | (static_cast<std::uint32_t>(v) << 30); }
  void set_decoded(bool v) noexcept { bits = (bits & ~(1u << 31)) | (static_cast<std::uint32_t>(v) << 31); }
};
static_assert(sizeof(node) == 8);

class document;

/// A read-only handle to one value of a document (valid while the document and its input live).
class value {
 public:
  [[nodiscard]] kind type() const noexcept;
  [[nodiscard]] bool is_object() const noexcept { return type() == kind::object; }
  [[nodiscard]] bool is_array() const noexcept { return type() == kind::array; }
  [[nodiscard]] bool is_string() const noexcept { return type() == kind::string; }
  [[nodiscard]] bool is_number() const noexcept { return type() == kind::number; }
  [[nodiscard]] bool boolean() const noexcept;
  /// A string's decoded contents or a number's literal text (empty for other kinds).
  [[nodiscard]] std::string_view text() const noexcept;
  /// Items of an array, members of an object, 0 otherwise.
  [[nodiscard]] std::size_t size() const noexcept;

  /// Calls f(item) for each array item, in order.
  template <class F>
  void for_each_item(F&& f) const {
    if (!is_array()) return;
    std::uint32_t j = m_i + 1;
    for (std::size_t k = 0; k < size(); ++k) {
      const value v(m_doc, j);
      f(v);
      j = v.next();
    }
  }
  /// Calls f(key, value) for each object member, in file order.
  template <class F>
  void for_each_member(F&& f) const {
    if (!is_object()) return;
    std::uint32_t j = m_i + 1;
    for (std::size_t k = 0; k < size(); ++k) {
      const value key(m_doc, j), v(m_doc, j + 1);
      f(key.text(), v);
      j = v.next();
    }
  }
  /// The k-th array item; throws posenc::invalid_argument naming k unless this is an array and
  /// k < size().
  [[nodiscard]] value item(std::size_t k) const {
    posenc::detail::require(is_array(), "json::value::item", "k: expected an array, got a JSON value of another type");
    posenc::detail::require(k < size(), "json::value::item", "k: expected k < size() = ", size(), ", got ", k);
    std::uint32_t j = m_i + 1;
    for (std::size_t q = 0; q < k; ++q) j = value(m_doc, j).next();
    return {m_doc, j};
  }
  /// The member named key, or nullopt.
  [[nodiscard]] std::optional<value> find(std::string_view key) const {
    std::optional<value> out;
    for_each_member([&](std::string_view k, value v) {
      if (!out && k == key) out = v;
    });
    return out;
  }

  /// The number as a non-negative 64-bit integer; nullopt if not a number, not an integer
  /// literal (fraction, exponent, sign) or too large.
  [[nodiscard]] std::optional<std::uint64_t> as_u64() const noexcept {
    const std::string_view t = text();
    if (type() != kind::number || t.empty()) return std::nullopt;
    std::uint64_t v = 0;
    const bool may_overflow = t.size() > 19;  // 19 digits are below 10^19 < 2^64
    for (char c : t) {
      if (c < '0' || c > '9') return std::nullopt;
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (may_overflow && v > (UINT64_MAX - d) / 10) return std::nullopt;
      v = v * 10 + d;
    }
    return v;
  }

  /// Index of the node after this value's subtree (where the next sibling starts).
  [[nodiscard]] std::uint32_t next() const noexcept;

 private:
  /// \cond INTERNAL
  // Only a document makes values (of its own nodes), so every value's index is valid.
  friend class document;
  template <class Fail>
  friend class parser;
  value(const document* d, std::uint32_t i) noexcept : m_doc(d), m_i(i) {}
  const document* m_doc;
  std::uint32_t m_i;
  /// \endcond
};

/// A parsed JSON text: flat nodes pointing into the input (which must outlive the document).
class document {
 public:
  [[nodiscard]] value root() const noexcept { return {this, 0}; }
  /// Number of nodes (values and object keys).
  [[nodiscard]] std::size_t nodes() const noexcept { return m_nodes.size(); }
  /// Bytes the document holds (node array and decoded-text buffer, by capacity).
  [[nodiscard]] std::size_t memory_bytes() const noexcept {
    return m_nodes.capacity() * sizeof(node) + (m_text.capacity() > std::string().capacity() ? m_text.capacity() : 0);
  }
  /// Key comparisons made by the duplicate-key checks (O(m log m) per object of m members).
  [[nodiscard]] std::uint64_t key_comparisons() const noexcept { return m_key_comparisons; }

 private:
  /// \cond INTERNAL
  friend class value;
  template <class Fail>
  friend class parser;
  document() = default;  // only a parser makes documents (each has a root node)

  [[nodiscard]] std::string_view text_of(const node& x) const noexcept {
    // [a, a + n) lies in its buffer: the parser made the node so
    return x.decoded() ? std::string_view(m_text.data() + x.a, x.n()) : std::string_view(m_src.data() + x.a, x.n());
  }

  /// The node array: allocated once, uninitialised, at the size the parser's first pass counts
  /// (it grows, doubling, only on malformed text, which the parser then rejects). Appending is
  /// one compare and one store (std::vector's push_back was not inlined in the recursive parser).
  class node_array {
   public:
    [[nodiscard]] std::size_t size() const noexcept { return m_n; }
    [[nodiscard]] std::size_t capacity() const noexcept { return m_cap; }
    [[nodiscard]] node& operator[](std::size_t i) noexcept { return m_p[i]; }
    [[nodiscard]] const node& operator[](std::size_t i) const noexcept { return m_p[i]; }
    void reserve(std::size_t k) {
      if (k <= m_cap) return;
      std::unique_ptr<node[]> q = std::make_unique_for_overwrite<node[]>(k);
      if (m_n) std::copy(m_p.get(), m_p.get() + m_n, q.get());
      m_p = std::move(q);
      m_cap = k;
    }
    POSENC_ALWAYS_INLINE void push_back(node x) {
      if (m_n == m_cap) [[unlikely]]
        grow();
      m_p[m_n++] = x;
    }

   private:
    POSENC_COLD void grow() { reserve(m_cap ? 2 * m_cap : 16); }
    std::unique_ptr<node[]> m_p;
    std::size_t m_n = 0, m_cap = 0;
  };

  std::string_view m_src;
  node_array m_nodes;
  std::string m_text;
  std::uint64_t m_key_comparisons = 0;
  /// \endcond
};

inline kind value::type() const noexcept { return m_doc->m_nodes[m_i].type(); }
inline bool value::boolean() const noexcept { return m_doc->m_nodes[m_i].b(); }
inline std::string_view value::text() const noexcept {
  const node& x = m_doc->m_nodes[m_i];
  return (x.type() == kind::string || x.type() == kind::number) ? m_doc->text_of(x) : std::string_view();
}
inline std::size_t value::size() const noexcept {
  const node& x = m_doc->m_nodes[m_i];
  return (x.type() == kind::array || x.type() == kind::object) ? x.n() : 0;
}
inline std::uint32_t value::next() const noexcept {
  const node& x = m_doc->m_nodes[m_i];
  return (x.type() == kind::array || x.type() == kind::object) ? x.a : m_i + 1;
}

}  // namespace posenc::io::json
