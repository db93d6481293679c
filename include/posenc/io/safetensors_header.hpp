// SPDX-License-Identifier: MIT
// What a safetensors header lists (docs/io.md): the dtype names, a tensor's extents and
// description (tensor_info), a tensor to write (tensor_ref) and the "__metadata__" map, as read
// (safetensors_metadata_table) and as written (safetensors_metadata). Shared by the reader
// (posenc/io/safetensors.hpp) and the writers (posenc/io/safetensors_write.hpp). Standard library only.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/io/array.hpp>
#include <posenc/io/detail/bytes.hpp>
#include <posenc/io/json.hpp>

namespace posenc::io {

/// The safetensors name of a dtype ("F32", "BF16", "I64", "BOOL", ...).
[[nodiscard]] constexpr std::string_view safetensors_dtype_name(dtype t) noexcept {
  switch (t) {
    case dtype::boolean: return "BOOL";
    case dtype::u8: return "U8";
    case dtype::i8: return "I8";
    case dtype::u16: return "U16";
    case dtype::i16: return "I16";
    case dtype::u32: return "U32";
    case dtype::i32: return "I32";
    case dtype::u64: return "U64";
    case dtype::i64: return "I64";
    case dtype::f16: return "F16";
    case dtype::bf16: return "BF16";
    case dtype::f32: return "F32";
    case dtype::f64: return "F64";
  }
  return "?";
}

/// A listed tensor's extents: a view of std::size_t that compares equal to any contiguous range of
/// extents with the same values (`t.shape == std::vector<std::size_t>{2, 3}`).
class extents_view : public std::span<const std::size_t> {
 public:
  constexpr extents_view() noexcept = default;
  constexpr extents_view(std::span<const std::size_t> s) noexcept : std::span<const std::size_t>(s) {}  // NOLINT: a view converts
  /// A copy that owns its extents.
  [[nodiscard]] std::vector<std::size_t> to_vector() const { return {begin(), end()}; }
  /// Whether b holds the same number of extents with the same values (either side may be a
  /// std::vector<std::size_t> or any contiguous range of extents).
  [[nodiscard]] bool operator==(std::span<const std::size_t> b) const noexcept { return std::ranges::equal(*this, b); }
  /// As above, for two views.
  [[nodiscard]] bool operator==(const extents_view& b) const noexcept { return std::ranges::equal(*this, b); }
};

/// Where a tensor lives in a safetensors file. `name` and `shape` view storage owned by the
/// safetensors_file that listed the tensor and shared by its copies: they stay valid while that
/// file object, or a copy of it, lives. Copy them (`std::string(t.name)`, `t.shape.to_vector()`)
/// to keep them longer. (One block per file instead of two allocations per tensor: docs/io.md.)
struct tensor_info {
  std::string_view name;
  dtype type = dtype::f32;
  extents_view shape;
  std::uint64_t begin = 0;  ///< data_offsets[0]: first byte, relative to the data section
  std::uint64_t end = 0;    ///< data_offsets[1]: one past the last byte, relative to the data section
  std::uint64_t file_offset = 0;  ///< absolute offset of the first byte (8 + header length + begin)

  /// Number of elements.
  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>((end - begin) / dtype_size(type)); }
  [[nodiscard]] std::uint64_t byte_size() const noexcept { return end - begin; }
};

/// A tensor to write: a name, a shape and float or double data (row-major). It refers to the data,
/// which must outlive the write call.
struct tensor_ref {
  std::string name;
  std::vector<std::size_t> shape;
  dtype type = dtype::f32;
  std::span<const std::byte> bytes;  ///< native-endian elements of `type`
  std::size_t count = 0;             ///< number of elements in bytes

  tensor_ref(std::string n, std::vector<std::size_t> s, std::span<const float> data)
      : name(std::move(n)), shape(std::move(s)), type(dtype::f32), bytes(std::as_bytes(data)), count(data.size()) {}
  tensor_ref(std::string n, std::vector<std::size_t> s, std::span<const double> data)
      : name(std::move(n)), shape(std::move(s)), type(dtype::f64), bytes(std::as_bytes(data)), count(data.size()) {}
  tensor_ref(std::string n, std::vector<std::size_t> s, const std::vector<float>& data)
      : tensor_ref(std::move(n), std::move(s), std::span<const float>(data)) {}
  tensor_ref(std::string n, std::vector<std::size_t> s, const std::vector<double>& data)
      : tensor_ref(std::move(n), std::move(s), std::span<const double>(data)) {}
  template <Element T>
  tensor_ref(std::string n, const array<T>& a) : tensor_ref(std::move(n), a.shape, std::span<const T>(a.data)) {}
};

/// The string-to-string "__metadata__" map, as given to the writers.
using safetensors_metadata = std::map<std::string, std::string>;

namespace detail {

/// FNV-1a of a key, mixed (the metadata index falls back to sorting if hostile keys collide).
[[nodiscard]] inline std::uint64_t metadata_key_hash(std::string_view k) noexcept {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : k) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ (h >> 29);
}

/// The storage of a file's "__metadata__": every key and value in one block of text, in file
/// order, and 12 bytes of index per entry; the lookup index is built at the first lookup.
struct safetensors_metadata_store {
  struct entry {
    std::uint32_t at = 0;     ///< offset of the key in text; the value follows it
    std::uint32_t key = 0;    ///< key length
    std::uint32_t value = 0;  ///< value length
  };
  std::string text;
  std::vector<entry> entries;

  [[nodiscard]] std::string_view key(std::size_t i) const noexcept {
    const entry& e = entries[i];
    return {text.data() + e.at, e.key};
  }
  [[nodiscard]] std::string_view value(std::size_t i) const noexcept {
    const entry& e = entries[i];
    return {text.data() + e.at + e.key, e.value};
  }

  /// The entry whose key is k, or entries.size(). Up to 16 entries: a scan. More: a hash table
  /// of entry indices (load <= 1/2, built once at the first lookup: O(m)); if hostile keys make
  /// the build probe more than 8 m + 64 times, a sorted index instead (O(m log m) once, O(log m)
  /// a lookup). The key counts are probes and comparisons made (for the tests).
  [[nodiscard]] std::size_t find(std::string_view k) const {
    const std::size_t m = entries.size();
    if (m <= 16) {
      for (std::size_t i = 0; i < m; ++i)
        if (key(i) == k) return i;
      return m;
    }
    std::call_once(m_once, [&] { build_index(); });
    if (m_sorted) {
      const auto it = std::lower_bound(m_index.begin(), m_index.end(), k,
                                       [&](std::uint32_t i, std::string_view x) { return key(i) < x; });
      return it != m_index.end() && key(*it) == k ? *it : m;
    }
    const std::size_t mask = m_index.size() - 1;
    for (std::size_t h = static_cast<std::size_t>(metadata_key_hash(k)) & mask;; h = (h + 1) & mask) {
      const std::uint32_t e = m_index[h];
      if (e == 0) return m;
      if (key(e - 1) == k) return e - 1;
    }
  }
  /// Probes made building the index (0 before the first lookup): O(m) for distinct keys.
  [[nodiscard]] std::uint64_t index_probes() const noexcept { return m_probes; }
  [[nodiscard]] bool index_sorted() const noexcept { return m_sorted; }

 private:
  void build_index() const {
    const std::size_t m = entries.size();
    const std::size_t cap = std::bit_ceil(2 * m);
    std::vector<std::uint32_t> slots = checked::allocate("safetensors_file::metadata", "the index of metadata keys", cap,
                                                         sizeof(std::uint32_t), [&] { return std::vector<std::uint32_t>(cap, 0); });
    const std::uint64_t budget = 8 * static_cast<std::uint64_t>(m) + 64;
    std::uint64_t probes = 0;
    bool flooded = false;
    for (std::size_t i = 0; i < m && !flooded; ++i) {
      for (std::size_t h = static_cast<std::size_t>(metadata_key_hash(key(i))) & (cap - 1);; h = (h + 1) & (cap - 1)) {
        if (++probes > budget) {
          flooded = true;
          break;
        }
        if (slots[h] == 0) {
          slots[h] = static_cast<std::uint32_t>(i + 1);  // entry i + 1: 0 is an empty slot
          break;
        }
      }
    }
    m_probes = probes;
    if (!flooded) {
      m_index = std::move(slots);
      return;
    }
    // Hostile keys: a sorted index instead (O(m log m) comparisons whatever the keys).
    slots = std::vector<std::uint32_t>();
    m_index = checked::allocate("safetensors_file::metadata", "the index of metadata keys", m, sizeof(std::uint32_t),
                                [&] { return std::vector<std::uint32_t>(m); });
    for (std::size_t i = 0; i < m; ++i) m_index[i] = static_cast<std::uint32_t>(i);
    std::sort(m_index.begin(), m_index.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
    m_sorted = true;
  }

  mutable std::once_flag m_once;
  mutable std::vector<std::uint32_t> m_index;
  mutable bool m_sorted = false;
  mutable std::uint64_t m_probes = 0;
};

}  // namespace detail

/// The "__metadata__" of a safetensors file as read: its entries in file order, each key and value
/// a std::string_view into one block of text shared by the file object and its copies (12 bytes
/// of index an entry; a std::map node spent about 100). Lookups by key are O(1) expected through a
/// hash index built at the first lookup (docs/io.md). Iterating gives (key, value) pairs of
/// std::string_view; to_map() (or the implicit conversion) makes a safetensors_metadata for the
/// writers, and == compares the entries whatever their order. Made by safetensors_file only.
class safetensors_metadata_table {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;

  /// A read-only iterator over the entries, in file order. It yields (key, value) pairs by value,
  /// so it is a C++20 forward iterator and, to the older traits, an input iterator.
  class iterator {
   public:
    using iterator_concept = std::forward_iterator_tag;
    using iterator_category = std::input_iterator_tag;
    using value_type = safetensors_metadata_table::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = value_type;
    iterator() = default;
    [[nodiscard]] value_type operator*() const noexcept { return {m_s->key(m_i), m_s->value(m_i)}; }
    iterator& operator++() noexcept {
      ++m_i;
      return *this;
    }
    iterator operator++(int) noexcept {
      iterator t = *this;
      ++m_i;
      return t;
    }
    [[nodiscard]] bool operator==(const iterator& b) const noexcept { return m_i == b.m_i; }

   private:
    /// \cond INTERNAL
    friend class safetensors_metadata_table;
    iterator(const detail::safetensors_metadata_store* s, std::size_t i) noexcept : m_s(s), m_i(i) {}
    const detail::safetensors_metadata_store* m_s = nullptr;
    std::size_t m_i = 0;
    /// \endcond
  };

  [[nodiscard]] std::size_t size() const noexcept { return m_store ? m_store->entries.size() : 0; }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }
  [[nodiscard]] iterator begin() const noexcept { return {m_store.get(), 0}; }
  [[nodiscard]] iterator end() const noexcept { return {m_store.get(), size()}; }
  /// The entry with that key, or end().
  [[nodiscard]] iterator find(std::string_view key) const { return {m_store.get(), m_store ? m_store->find(key) : 0}; }
  [[nodiscard]] bool contains(std::string_view key) const { return find(key) != end(); }
  [[nodiscard]] std::size_t count(std::string_view key) const { return contains(key) ? 1 : 0; }
  /// The value of that key; posenc::invalid_argument naming the key if there is none.
  [[nodiscard]] std::string_view at(std::string_view key) const {
    const iterator it = find(key);
    if (it == end()) {
      const std::string_view shown = key.substr(0, 64);
      posenc::detail::fail<invalid_argument>("safetensors_metadata_table::at", "key: expected a key of the metadata (",
                                             size(), " entries), got '", shown, key.size() > 64 ? "...'" : "'");
    }
    return (*it).second;
  }
  /// A copy as a std::map, e.g. to write the metadata again.
  [[nodiscard]] safetensors_metadata to_map() const {
    safetensors_metadata out;
    for (const auto& [k, v] : *this) out.emplace(std::string(k), std::string(v));
    return out;
  }
  operator safetensors_metadata() const { return to_map(); }  // NOLINT: converts for the writers

  /// The same entries (keys are unique, so the same key-value pairs), whatever their order.
  [[nodiscard]] bool operator==(const safetensors_metadata_table& b) const {
    if (size() != b.size()) return false;
    for (const auto& [k, v] : *this) {
      const iterator it = b.find(k);
      if (it == b.end() || (*it).second != v) return false;
    }
    return true;
  }
  [[nodiscard]] bool operator==(const safetensors_metadata& b) const {
    if (size() != b.size()) return false;
    for (const auto& [k, v] : *this) {
      const auto it = b.find(std::string(k));
      if (it == b.end() || it->second != v) return false;
    }
    return true;
  }

  /// Probes the lookup index took to build (0 before the first lookup of a table of more than
  /// 16 entries): O(m) for m distinct keys, the work the tests count.
  [[nodiscard]] std::uint64_t index_probes() const noexcept { return m_store ? m_store->index_probes() : 0; }

 private:
  /// \cond INTERNAL
  friend class safetensors_file;
  safetensors_metadata_table() = default;
  explicit safetensors_metadata_table(std::shared_ptr<const detail::safetensors_metadata_store> s) noexcept
      : m_store(std::move(s)) {}
  std::shared_ptr<const detail::safetensors_metadata_store> m_store;
  /// \endcond
};

}  // namespace posenc::io
