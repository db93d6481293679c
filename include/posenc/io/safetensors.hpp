// SPDX-License-Identifier: MIT
// safetensors files (the format of safetensors.torch.save_file / Hugging Face): read named
// tensors of F16, BF16, F32, F64 (and integer/bool) data into posenc::io::array<float|double>,
// write float/double tensors. Standard library only.
//
// Layout: an 8-byte little-endian header length N, N bytes of UTF-8 JSON
//   {"__metadata__": {"key": "value", ...}, "name": {"dtype": "F32", "shape": [2, 3],
//    "data_offsets": [begin, end]}, ...}
// (padded with spaces), then the data section; [begin, end) are byte offsets into the data
// section. Opening validates the whole header against the file size (the checks of the reference
// implementation: offsets in range, tensors tiling the data section with no overlap, gap or
// trailing bytes, byte length = element count * dtype size) before any tensor is read; every
// problem is a posenc::io_error naming the file (or "<memory>"), the tensor and the problem.
// Resource budget (docs/io.md): header parse linear in its size (n log n for duplicate keys);
// the metadata is kept as one block of text with 12 bytes of index an entry.
// Thread safety: safetensors_file is shareable const; the writers are free functions, safe on
// distinct output files.
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
#include <posenc/io/safetensors_header.hpp>
#include <posenc/io/safetensors_write.hpp>  // IWYU pragma: export

namespace posenc::io {

namespace detail {

inline constexpr std::uint64_t safetensors_max_header = 100'000'000;  // as the reference implementation
inline constexpr std::size_t safetensors_max_array = 4096;  // longest JSON array accepted (shapes: rank <= 4096)

[[nodiscard]] inline bool safetensors_dtype_from_name(std::string_view s, dtype& out) noexcept {
  // the floating types first: a model's header names one of them for almost every tensor
  for (dtype t : {dtype::f32, dtype::bf16, dtype::f16, dtype::f64, dtype::boolean, dtype::u8, dtype::i8, dtype::u16,
                  dtype::i16, dtype::u32, dtype::i32, dtype::u64, dtype::i64})
    if (safetensors_dtype_name(t) == s) {
      out = t;
      return true;
    }
  return false;
}

/// Storage that never moves what it has handed out: T values in chunks of at least 64 KiB, each
/// allocated once. A request of more than an eighth of a chunk gets a chunk of its own, so at
/// most an eighth of the storage is left unused at the chunk ends (plus one partly used chunk).
template <class T>
class chunked_store {
 public:
  [[nodiscard]] std::span<T> take(std::size_t n, std::string_view where) {
    if (n == 0) return {};
    if (n > m_left) {
      const std::size_t c = n > chunk / 8 ? n : chunk;
      m_chunks.push_back(checked::allocate(where, "the tensor list", c, sizeof(T),
                                           [&] { return std::make_unique_for_overwrite<T[]>(c); }));
      if (c == n) return {m_chunks.back().get(), n};  // a chunk of its own; the current one goes on
      m_at = m_chunks.back().get();
      m_left = c;
    }
    const std::span<T> out(m_at, n);
    m_at += n;
    m_left -= n;
    return out;
  }

 private:
  static constexpr std::size_t chunk = std::size_t{65536} / sizeof(T) > 0 ? std::size_t{65536} / sizeof(T) : 1;
  std::vector<std::unique_ptr<T[]>> m_chunks;
  T* m_at = nullptr;
  std::size_t m_left = 0;
};

/// A safetensors file's tensor list: the entries and the names and extents they view, and an
/// index of the entries by name, sorted on the first lookup in a list of more than 16 (a lookup is
/// then O(log n), so reading every tensor by name costs O(n log n), not O(n^2)).
struct safetensors_listing {
  std::vector<tensor_info> tensors;
  chunked_store<char> names;
  chunked_store<std::size_t> extents;

  [[nodiscard]] const tensor_info* find(std::string_view name) const {
    if (tensors.size() <= 16) {
      for (const auto& t : tensors)
        if (t.name == name) return &t;
      return nullptr;
    }
    std::call_once(m_index_once, [&] {
      std::vector<std::uint32_t> index = checked::allocate(
          "safetensors_file::info", "the index of tensor names", tensors.size(), sizeof(std::uint32_t),
          [&] { return std::vector<std::uint32_t>(tensors.size()); });
      for (std::size_t i = 0; i < index.size(); ++i) index[i] = static_cast<std::uint32_t>(i);
      std::sort(index.begin(), index.end(), [&](std::uint32_t a, std::uint32_t b) { return tensors[a].name < tensors[b].name; });
      m_by_name = std::move(index);
    });
    const auto it = std::lower_bound(m_by_name.begin(), m_by_name.end(), name,
                                     [&](std::uint32_t i, std::string_view key) { return tensors[i].name < key; });
    return it != m_by_name.end() && tensors[*it].name == name ? &tensors[*it] : nullptr;
  }

 private:
  mutable std::once_flag m_index_once;
  mutable std::vector<std::uint32_t> m_by_name;  ///< entry indices (< 2^27: one JSON node each) sorted by name
};

}  // namespace detail

/// A safetensors file opened for reading: the header is parsed and validated on open; tensors are
/// read (from the file, or from the in-memory copy) and converted on get().
/// Thread safety: shareable const (get() on a file reopens it per call; docs/thread-safety.md).
class safetensors_file {
 public:
  /// Open and validate a file. Tensor data is read later, by get().
  [[nodiscard]] static safetensors_file open(const std::filesystem::path& path) {
    detail::input_file f(path, "safetensors_file::open");
    safetensors_file s;
    s.m_source = f.name();
    s.m_path = path;
    s.m_file_size = f.size();
    s.parse([&](std::uint64_t off, void* dst, std::size_t n) { f.read(off, dst, n); }, "safetensors_file::open");
    return s;
  }

  /// Parse a safetensors image held in memory (the bytes are copied).
  [[nodiscard]] static safetensors_file from_bytes(std::span<const std::byte> bytes) {
    safetensors_file s;
    s.m_source = std::string(detail::memory_source);
    s.m_file_size = bytes.size();
    const std::byte* base = bytes.data();
    // The header is parsed in place in the caller's bytes; only the data section is kept.
    s.parse([&](std::uint64_t off, void* dst, std::size_t n) { std::memcpy(dst, base + off, n); },
            "safetensors_file::from_bytes", base);
    s.m_memory = std::make_shared<const std::vector<std::byte>>(
        bytes.begin() + static_cast<std::ptrdiff_t>(s.data_offset()), bytes.end());
    return s;
  }

  /// The file name, or "<memory>".
  [[nodiscard]] const std::string& source() const noexcept { return m_source; }
  /// Tensor names in header order.
  [[nodiscard]] std::vector<std::string> names() const {
    std::vector<std::string> n;
    n.reserve(tensors().size());
    for (const auto& t : tensors()) n.emplace_back(t.name);
    return n;
  }
  /// All tensors, in header order.
  [[nodiscard]] const std::vector<tensor_info>& tensors() const noexcept {
    static const std::vector<tensor_info> none;
    return m_list ? m_list->tensors : none;
  }
  /// Whether the file has a tensor of that name (O(log n) after the first lookup; see info).
  [[nodiscard]] bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// The "__metadata__" entries, in file order (empty if the file has none).
  [[nodiscard]] const safetensors_metadata_table& metadata() const noexcept { return m_metadata; }
  /// Length of the JSON header (N) and the absolute offset of the data section (8 + N).
  [[nodiscard]] std::uint64_t header_size() const noexcept { return m_header_size; }
  [[nodiscard]] std::uint64_t data_offset() const noexcept { return 8 + m_header_size; }

  /// The work the header cost to parse (the reader's resource budget, see docs/io.md): JSON
  /// nodes (values and keys), bytes the parsed JSON document held, and key comparisons made by
  /// the duplicate-key checks. The document is released once the header is validated.
  struct header_cost {
    std::size_t json_nodes = 0;
    std::size_t json_bytes = 0;
    std::uint64_t key_comparisons = 0;
  };
  [[nodiscard]] header_cost parse_cost() const noexcept { return {m_json_nodes, m_json_bytes, m_json_key_comparisons}; }

  /// A tensor's dtype, shape and byte range; io_error if there is no tensor of that name. The first
  /// lookup in a file of more than 16 tensors sorts an index of the names (O(n log n), 4 bytes a
  /// tensor); every lookup is then O(log n).
  [[nodiscard]] const tensor_info& info(std::string_view name) const {
    const tensor_info* t = find(name);
    if (!t) {
      std::string have;
      const auto& ts = tensors();
      for (std::size_t i = 0; i < ts.size() && i < 8; ++i) (have += i ? ", '" : "'").append(ts[i].name) += "'";
      if (ts.size() > 8) have += ", ...";
      detail::io_fail("safetensors_file", m_source, "no tensor named '", name, "' (the file has ", ts.size(),
                      " tensors", ts.empty() ? "" : ": ", have, ")");
    }
    return *t;
  }

  /// The tensor converted to T (F16/BF16/F32/F64 exactly; integers by static_cast).
  template <Element T>
  [[nodiscard]] array<T> get(std::string_view name) const {
    const tensor_info& t = info(name);
    array<T> a;
    a.shape = t.shape.to_vector();
    a.data.resize(t.size());
    read_into_unchecked(t, a.data.data());
    return a;
  }

  /// As get(name), and throws io_error unless the tensor's shape is `expected`.
  template <Element T>
  [[nodiscard]] array<T> get(std::string_view name, const std::vector<std::size_t>& expected) const {
    require_shape(name, expected);
    return get<T>(name);
  }

  /// Throws io_error naming the tensor unless it exists and has shape `expected`.
  void require_shape(std::string_view name, const std::vector<std::size_t>& expected) const {
    const tensor_info& t = info(name);
    if (t.shape != expected)
      detail::io_fail("safetensors_file", m_source, "tensor '", name, "': expected shape ", shape_string(expected),
                      ", the file has ", shape_string(t.shape));
  }

  /// Convert the tensor into out (out.size() must equal its element count, else io_error).
  template <Element T>
  void read_into(std::string_view name, std::span<T> out) const {
    const tensor_info& t = info(name);
    if (out.size() != t.size())
      detail::io_fail("safetensors_file", m_source, "tensor '", name, "' has ", t.size(), " elements (shape ",
                      shape_string(t.shape), "), the destination has ", out.size());
    read_into_unchecked(t, out.data());
  }

  /// The tensor's stored bytes (little-endian elements of info(name).type).
  [[nodiscard]] std::vector<std::byte> raw(std::string_view name) const {
    const tensor_info& t = info(name);
    std::vector<std::byte> out(static_cast<std::size_t>(t.byte_size()));
    fetch(t, out.data());
    return out;
  }

 private:
  safetensors_file() = default;

  [[nodiscard]] const tensor_info* find(std::string_view name) const { return m_list ? m_list->find(name) : nullptr; }

  void fetch(const tensor_info& t, std::byte* dst) const {
    const auto n = static_cast<std::size_t>(t.byte_size());
    if (m_memory) {
      if (n) std::memcpy(dst, m_memory->data() + t.begin, n);
      return;
    }
    detail::input_file f = open_again();
    f.read(t.file_offset, dst, n);
  }

  /// Reopen the file for a read, checking that it still has the size the header was validated against.
  [[nodiscard]] detail::input_file open_again() const {
    detail::input_file f(m_path, "safetensors_file::get");
    if (f.size() != m_file_size)
      detail::io_fail("safetensors_file::get", m_source, "the file changed size since it was opened (", m_file_size,
                      " -> ", f.size(), " bytes)");
    return f;
  }

  template <class T>
  void read_into_unchecked(const tensor_info& t, T* dst) const {
    if (m_memory) {
      detail::convert(t.type, false, m_memory->data() + t.begin, t.size(), dst);
      return;
    }
    if (t.type == dtype_of<T>() && std::endian::native == std::endian::little) {
      fetch(t, reinterpret_cast<std::byte*>(dst));
      return;
    }
    detail::input_file f = open_again();
    detail::read_convert(f, t.file_offset, t.type, false, t.size(), dst);
  }


  /// Parses and validates the header; `image` is the whole file when it is in memory (the header
  /// text is then read in place), null when `read` fetches from a file.
  template <class Read>
  void parse(Read&& read, std::string_view where, const std::byte* image = nullptr) {
    const std::string& src = m_source;
    const std::uint64_t total = m_file_size;
    if (total < 8)
      detail::io_fail(where, src, "not a safetensors file: ", total, " bytes is shorter than the 8-byte header length");
    std::byte len8[8];
    read(0, len8, 8);
    const std::uint64_t n = detail::load_le<std::uint64_t>(len8);
    if (n > total - 8)
      detail::io_fail(where, src, "truncated safetensors file: header length ", n, " exceeds the ", total - 8,
                      " bytes after the length field");
    if (n > detail::safetensors_max_header)
      detail::io_fail(where, src, "safetensors header length ", n, " exceeds the limit of ",
                      detail::safetensors_max_header, " bytes");
    if (n < 2) detail::io_fail(where, src, "safetensors header of ", n, " bytes cannot hold a JSON object");
    m_header_size = n;
    // The header's text: read from the file, or (from_bytes) used in place in the held copy.
    std::string copy;
    std::string_view text;
    if (image) {
      text = std::string_view(reinterpret_cast<const char*>(image) + 8, static_cast<std::size_t>(n));
    } else {
      copy.assign(static_cast<std::size_t>(n), '\0');
      read(8, copy.data(), copy.size());
      text = copy;
    }
    if (text[0] != '{')
      detail::io_fail(where, src, "bad safetensors header: the JSON header must start with '{'");
    const json::document doc = json::parse(text, [&](std::size_t off, std::string_view msg) {
      detail::io_fail(where, src, "bad JSON in the safetensors header at offset ", off, ": ", msg);
    }, detail::safetensors_max_array);
    const json::value root = doc.root();
    if (!root.is_object()) detail::io_fail(where, src, "bad safetensors header: the JSON header is not an object");
    const std::uint64_t data_size = total - 8 - n;
    auto list = checked::allocate(where, "the tensor list", 1, sizeof(detail::safetensors_listing),
                                  [] { return std::make_shared<detail::safetensors_listing>(); });
    std::vector<tensor_info>& ts = list->tensors;
    ts.reserve(root.size());
    root.for_each_member([&](std::string_view name, const json::value& v) {
      if (name == "__metadata__") {
        if (!v.is_object()) detail::io_fail(where, src, "\"__metadata__\" must be an object of strings");
        // One block of text, its size counted first (no growth; keys are unique: the parser checked).
        std::size_t bytes = 0;
        v.for_each_member([&](std::string_view key, const json::value& item) {
          if (!item.is_string()) detail::io_fail(where, src, "\"__metadata__\" entry '", key.substr(0, 64),
                                                 key.size() > 64 ? "...'" : "'", " is not a string");
          bytes += key.size() + item.text().size();
        });
        auto store = checked::allocate(where, "the metadata", 1, sizeof(detail::safetensors_metadata_store),
                                       [] { return std::make_shared<detail::safetensors_metadata_store>(); });
        checked::allocate(where, "the metadata", bytes, 1, [&] { store->text.reserve(bytes); });
        checked::allocate(where, "the metadata", v.size(), sizeof(detail::safetensors_metadata_store::entry),
                          [&] { store->entries.reserve(v.size()); });
        v.for_each_member([&](std::string_view key, const json::value& item) {
          const std::string_view val = item.text();
          store->entries.push_back({static_cast<std::uint32_t>(store->text.size()), static_cast<std::uint32_t>(key.size()),
                                    static_cast<std::uint32_t>(val.size())});
          store->text.append(key).append(val);
        });
        m_metadata = safetensors_metadata_table(std::move(store));
        return;
      }
      auto bad = [&](const auto&... parts) { detail::io_fail(where, src, "tensor '", name, "': ", parts...); };
      if (!v.is_object()) bad("the header entry is not an object");
      tensor_info t;
      // One pass over the entry's members (the parser has rejected duplicate keys).
      std::optional<json::value> dt, sh, off;
      v.for_each_member([&](std::string_view k, const json::value& x) {
        // by first byte, then the whole key (no library call for the keys of other letters)
        const char c0 = k.empty() ? '\0' : k[0];
        if (c0 == 'd' && k == "dtype") dt = x;
        else if (c0 == 's' && k == "shape") sh = x;
        else if (c0 == 'd' && k == "data_offsets") off = x;
      });
      if (!dt || !dt->is_string()) bad("missing or non-string \"dtype\"");
      if (!detail::safetensors_dtype_from_name(dt->text(), t.type))
        bad("unsupported dtype \"", dt->text(), "\" (supported: F16, BF16, F32, F64, I8..I64, U8..U64, BOOL)");
      if (!sh || !sh->is_array()) bad("missing \"shape\" array");
      const std::span<std::size_t> shape = list->extents.take(sh->size(), where);
      std::size_t r = 0;
      sh->for_each_item([&](const json::value& e) {
        const auto x = e.as_u64();
        if (!x) bad("\"shape\" must hold non-negative integers, got ", e.is_number() ? e.text() : std::string_view("a non-number"));
        if (*x > static_cast<std::uint64_t>(static_cast<std::size_t>(-1))) bad("\"shape\" extent ", *x, " too large");
        shape[r++] = static_cast<std::size_t>(*x);
      });
      t.shape = std::span<const std::size_t>(shape);
      if (!off || !off->is_array() || off->size() != 2)
        bad("\"data_offsets\" must be an array of two integers");
      const auto b = off->item(0).as_u64(), e = off->item(1).as_u64();
      if (!b || !e) bad("\"data_offsets\" must be non-negative integers");
      if (*b > *e) bad("\"data_offsets\" [", *b, ", ", *e, "] has begin > end");
      if (*e > data_size)
        bad("\"data_offsets\" [", *b, ", ", *e, "] extends past the data section (", data_size, " bytes)");
      t.begin = *b;
      t.end = *e;
      t.file_offset = 8 + n + *b;
      const auto count = element_count(t.shape);
      const std::size_t w = dtype_size(t.type);
      if (!count || *count > static_cast<std::size_t>(-1) / w)
        bad("the element count of shape ", shape_string(t.shape), " overflows");
      if (static_cast<std::uint64_t>(*count) * w != t.end - t.begin)
        bad("shape ", shape_string(t.shape), " of ", safetensors_dtype_name(t.type), " needs ", *count * w,
            " bytes, \"data_offsets\" [", t.begin, ", ", t.end, "] span ", t.end - t.begin);
      const std::span<char> stored = list->names.take(name.size(), where);
      if (!name.empty()) std::memcpy(stored.data(), name.data(), name.size());
      t.name = std::string_view(stored.data(), stored.size());
      ts.push_back(t);
    });
    m_json_nodes = doc.nodes();
    m_json_bytes = doc.memory_bytes();
    m_json_key_comparisons = doc.key_comparisons();
    // The tensors must tile the data section: sorted by offset, each starts where the previous ended.
    // (Files are usually written in offset order: then no order is built.)
    const auto before = [](const tensor_info* a, const tensor_info* b) {
      return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    };
    std::uint64_t at = 0;
    const tensor_info* prev = nullptr;
    const auto next = [&](const tensor_info* t) {
      if (t->begin < at)
        detail::io_fail(where, src, "tensor '", t->name, "': data [", t->begin, ", ", t->end, ") overlaps tensor '",
                        prev->name, "' [", prev->begin, ", ", prev->end, ")");
      if (t->begin > at)
        detail::io_fail(where, src, "tensor '", t->name, "': ", t->begin - at, " unused bytes before its data [",
                        t->begin, ", ", t->end, ")");
      at = t->end;
      prev = t;
    };
    bool sorted = true;
    for (std::size_t i = 1; i < ts.size() && sorted; ++i) sorted = !before(&ts[i], &ts[i - 1]);
    if (sorted) {
      for (const tensor_info& t : ts) next(&t);
    } else {
      std::vector<const tensor_info*> order;
      order.reserve(ts.size());
      for (const auto& t : ts) order.push_back(&t);
      std::sort(order.begin(), order.end(), before);
      for (const tensor_info* t : order) next(t);
    }
    if (at != data_size)
      detail::io_fail(where, src, data_size - at, " bytes at the end of the data section belong to no tensor");
    m_list = std::move(list);
  }

  std::string m_source;
  std::filesystem::path m_path;
  std::shared_ptr<const std::vector<std::byte>> m_memory;
  std::uint64_t m_file_size = 0;
  std::uint64_t m_header_size = 0;
  std::shared_ptr<const detail::safetensors_listing> m_list;  ///< null only in a moved-from object
  safetensors_metadata_table m_metadata;
  std::size_t m_json_nodes = 0;
  std::size_t m_json_bytes = 0;
  std::uint64_t m_json_key_comparisons = 0;
};

}  // namespace posenc::io
