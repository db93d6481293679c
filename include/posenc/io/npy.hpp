// SPDX-License-Identifier: MIT
// NumPy .npy files (format versions 1.0, 2.0 and 3.0): read any shape of f2/f4/f8 (and integer)
// data into posenc::io::array<float|double>, write float/double arrays. Standard library only.
//
// Reading: both byte orders ('<' and '>', big-endian data is byte-swapped), C and Fortran order
// (Fortran-order data is transposed into C order in O(elements)), 0-d and zero-size arrays, rank
// at most 64 (NumPy's limit). The header's length,
// shape and the file size are checked against each other before anything is allocated; every
// problem is a posenc::io_error naming the file (or "<memory>") and what is wrong.
// Writing: little-endian '<f4' / '<f8', C order, format 1.0 (2.0 if the header would exceed
// 65535 bytes), header padded with spaces to a multiple of 64 bytes and ended by '\n' as NumPy does.
// Resource budget (docs/io.md): time and memory linear in the file's size.
// Thread safety: free functions with no shared state; concurrent calls are safe on distinct
// output files (reading one file from several threads is safe).
#pragma once

#include <bit>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/io/array.hpp>
#include <posenc/io/detail/bytes.hpp>

namespace posenc::io {

/// What a .npy header says.
struct npy_header {
  int major_version = 1;
  int minor_version = 0;
  dtype type = dtype::f64;
  bool big_endian = false;      ///< data stored most-significant byte first ('>')
  bool fortran_order = false;   ///< data stored column-major
  std::vector<std::size_t> shape;
  std::uint64_t data_offset = 0;  ///< where the data starts (bytes from the start of the file)
  std::uint64_t data_bytes = 0;   ///< element count * dtype_size(type)
};

namespace detail {

/// Largest rank a .npy header may declare: NumPy 2's NPY_MAXDIMS (64; NumPy 1.x allowed 32).
inline constexpr std::size_t npy_max_rank = 64;

inline constexpr unsigned char npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/// Parser of the header's Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class npy_dict_parser {
 public:
  npy_dict_parser(std::string_view text, std::string_view where, std::string_view source)
      : m_s(text), m_where(where), m_source(source) {}

  void parse(npy_header& h) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    expect('{', "the header to start with '{'");
    skip_ws();
    while (!at('}')) {
      const std::string_view key = parse_string("a quoted key");
      skip_ws();
      if (!at(':')) fail("expected ':' after key '", shown(key), "' at header offset ", m_i);
      ++m_i;
      skip_ws();
      if (key == "descr") {
        if (have_descr) fail("duplicate key 'descr'");
        have_descr = true;
        if (at('[')) fail("structured dtypes (a list 'descr') are not supported");
        parse_descr(parse_string("a quoted dtype string for 'descr'"), h);
      } else if (key == "fortran_order") {
        if (have_fortran) fail("duplicate key 'fortran_order'");
        have_fortran = true;
        if (consume_word("True")) h.fortran_order = true;
        else if (consume_word("False")) h.fortran_order = false;
        else fail("'fortran_order' must be True or False");
      } else if (key == "shape") {
        if (have_shape) fail("duplicate key 'shape'");
        have_shape = true;
        h.shape = parse_shape();
      } else {
        fail("unexpected key '", shown(key), "' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_ws();
      if (at(',')) {
        ++m_i;
        skip_ws();
      } else if (!at('}')) {
        fail("expected ',' or '}' at header offset ", m_i);
      }
    }
    ++m_i;  // '}'
    skip_ws();
    if (m_i != m_s.size()) fail("unexpected characters after the header dict at header offset ", m_i);
    if (!have_descr) fail("missing key 'descr'");
    if (!have_fortran) fail("missing key 'fortran_order'");
    if (!have_shape) fail("missing key 'shape'");
  }

 private:
  template <class... P>
  [[noreturn]] void fail(const P&... p) const {
    io_fail(m_where, m_source, "bad .npy header: ", p...);
  }
  [[nodiscard]] bool at(char c) const { return m_i < m_s.size() && m_s[m_i] == c; }
  void skip_ws() {
    while (m_i < m_s.size() && (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\n' || m_s[m_i] == '\r')) ++m_i;
  }
  void expect(char c, const std::string& what) {
    if (!at(c)) fail("expected ", what, " at header offset ", m_i);
    ++m_i;
  }
  bool consume_word(std::string_view w) {
    if (m_s.substr(m_i, w.size()) != w) return false;
    const std::size_t e = m_i + w.size();
    if (e < m_s.size() && (std::isalnum(static_cast<unsigned char>(m_s[e])) || m_s[e] == '_')) return false;
    m_i = e;
    return true;
  }
  /// A string of the header (a view into it: nothing is copied, whatever its length).
  std::string_view parse_string(std::string_view what) {
    if (!(at('\'') || at('"'))) fail("expected ", what, " at header offset ", m_i);
    const char q = m_s[m_i++];
    const std::size_t start = m_i;
    while (m_i < m_s.size() && m_s[m_i] != q) {
      if (m_s[m_i] == '\\' || m_s[m_i] == '\n') fail("unsupported character in a string at header offset ", m_i);
      ++m_i;
    }
    if (m_i >= m_s.size()) fail("unterminated string in the header");
    return m_s.substr(start, m_i++ - start);
  }
  /// A header string as an error message shows it: at most 64 bytes, "..." after a longer one.
  [[nodiscard]] static std::string shown(std::string_view t) {
    return t.size() <= 64 ? std::string(t) : std::string(t.substr(0, 64)) + "...";
  }
  std::vector<std::size_t> parse_shape() {
    expect('(', "a tuple '(...)' for 'shape'");
    std::vector<std::size_t> shape;
    skip_ws();
    while (!at(')')) {
      if (m_i >= m_s.size() || !std::isdigit(static_cast<unsigned char>(m_s[m_i])))
        fail("'shape' must be a tuple of non-negative integers (at header offset ", m_i, ")");
      std::size_t v = 0;
      while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i]))) {
        const std::size_t digit = static_cast<std::size_t>(m_s[m_i] - '0');
        if (v > (static_cast<std::size_t>(-1) - digit) / 10) fail("a 'shape' extent does not fit in size_t");
        v = v * 10 + digit;
        ++m_i;
      }
      if (at('L') || at('l')) ++m_i;  // Python 2 long literal, as old NumPy wrote
      if (shape.size() == npy_max_rank)
        fail("'shape' has more than ", npy_max_rank, " dimensions (the limit of NumPy's NPY_MAXDIMS)");
      shape.push_back(v);
      skip_ws();
      if (at(',')) {
        ++m_i;
        skip_ws();
      } else if (!at(')')) {
        fail("expected ',' or ')' in 'shape' at header offset ", m_i);
      }
    }
    ++m_i;
    return shape;
  }
  void parse_descr(std::string_view d, npy_header& h) {
    if (d.size() < 2) fail("unsupported dtype descr '", d, "'");
    const char order = d[0];
    const std::string_view kind = d.substr(1);
    struct entry {
      std::string_view code;
      dtype t;
    };
    static constexpr entry table[] = {{"b1", dtype::boolean}, {"u1", dtype::u8},  {"i1", dtype::i8},
                                      {"u2", dtype::u16},     {"i2", dtype::i16}, {"u4", dtype::u32},
                                      {"i4", dtype::i32},     {"u8", dtype::u64}, {"i8", dtype::i64},
                                      {"f2", dtype::f16},     {"f4", dtype::f32}, {"f8", dtype::f64}};
    const entry* found = nullptr;
    for (const auto& e : table)
      if (e.code == kind) found = &e;
    if (!found || (order != '<' && order != '>' && order != '|' && order != '=')) {
      if (!kind.empty() && kind[0] == 'O')
        fail("object arrays (pickled Python objects, descr '", shown(d), "') are not supported");
      fail("unsupported dtype descr '", shown(d), "' (supported: f2, f4, f8, i1..i8, u1..u8, b1 in either byte order)");
    }
    if (order == '|' && dtype_size(found->t) != 1)
      fail("dtype descr '", d, "' has no byte order ('|') but elements of ", dtype_size(found->t), " bytes");
    h.type = found->t;
    h.big_endian = order == '>' || (order == '=' && std::endian::native == std::endian::big);
    if (dtype_size(found->t) == 1) h.big_endian = false;
  }

  std::string_view m_s;
  std::size_t m_i = 0;
  std::string_view m_where;
  std::string_view m_source;
};

/// Parse the header given a positioned reader `read(offset, dst, n)` over `total` bytes.
template <class Read>
npy_header parse_npy_header(std::uint64_t total, Read&& read, std::string_view where, std::string_view source) {
  if (total < 10) io_fail(where, source, "not a .npy file: ", total, " bytes is shorter than the 10-byte preamble");
  unsigned char pre[12] = {};
  read(0, pre, 10);
  if (std::memcmp(pre, npy_magic, 6) != 0) io_fail(where, source, "not a .npy file: bad magic (expected \\x93NUMPY)");
  npy_header h;
  h.major_version = pre[6];
  h.minor_version = pre[7];
  if (!((h.major_version == 1 || h.major_version == 2 || h.major_version == 3) && h.minor_version == 0))
    io_fail(where, source, "unsupported .npy format version ", h.major_version, ".", h.minor_version,
            " (supported: 1.0, 2.0, 3.0)");
  std::uint64_t hlen = 0, prefix = 0;
  if (h.major_version == 1) {
    hlen = static_cast<std::uint64_t>(pre[8]) | (static_cast<std::uint64_t>(pre[9]) << 8);
    prefix = 10;
  } else {
    if (total < 12) io_fail(where, source, "truncated .npy preamble: ", total, " bytes, version ", h.major_version,
                            ".0 needs 12");
    read(10, pre + 10, 2);
    hlen = static_cast<std::uint64_t>(pre[8]) | (static_cast<std::uint64_t>(pre[9]) << 8) |
           (static_cast<std::uint64_t>(pre[10]) << 16) | (static_cast<std::uint64_t>(pre[11]) << 24);
    prefix = 12;
  }
  if (hlen > total - prefix)
    io_fail(where, source, "truncated .npy file: header length ", hlen, " exceeds the ", total - prefix,
            " bytes left after the preamble");
  std::string text(static_cast<std::size_t>(hlen), '\0');
  read(prefix, text.data(), static_cast<std::size_t>(hlen));
  if (text.find('\0') != std::string::npos) io_fail(where, source, "bad .npy header: contains a NUL byte");
  npy_dict_parser(text, where, source).parse(h);
  h.data_offset = prefix + hlen;
  const auto count = element_count(h.shape);
  if (!count) io_fail(where, source, "bad .npy header: the element count of shape ", shape_string(h.shape),
                      " overflows");
  const std::size_t w = dtype_size(h.type);
  if (*count > static_cast<std::size_t>(-1) / w)
    io_fail(where, source, "bad .npy header: the byte size of shape ", shape_string(h.shape), " overflows");
  h.data_bytes = static_cast<std::uint64_t>(*count) * w;
  const std::uint64_t have = total - h.data_offset;
  if (have < h.data_bytes)
    io_fail(where, source, "truncated .npy data: shape ", shape_string(h.shape), " of ", dtype_name(h.type), " needs ",
            h.data_bytes, " bytes, the file has ", have, " after the header");
  if (have > h.data_bytes)
    io_fail(where, source, ".npy data has ", have - h.data_bytes, " trailing bytes after the ", h.data_bytes,
            " bytes that shape ", shape_string(h.shape), " of ", dtype_name(h.type), " needs");
  return h;
}

/// Reorder Fortran-order (column-major) elements into C order. Axes of extent 1 do not change
/// the order and are dropped first, so the multi-index carries cost at most 2 steps per element
/// (each remaining axis has extent >= 2): O(elements), whatever the rank. Returns the number of
/// index steps taken (the work, checked by the tests).
template <class T>
std::size_t fortran_to_c(const std::vector<std::size_t>& shape, std::vector<T>& data) {
  std::vector<std::size_t> ext;
  for (std::size_t e : shape)
    if (e != 1) ext.push_back(e);
  if (ext.size() < 2 || data.empty()) return 0;
  const std::size_t r = ext.size();
  std::vector<std::size_t> fstride(r), idx(r, 0);
  std::size_t s = 1;
  for (std::size_t k = 0; k < r; ++k) {
    fstride[k] = s;
    s *= ext[k];
  }
  std::vector<T> out(data.size());
  std::size_t f = 0;      // Fortran offset of the current C-order multi-index
  std::size_t steps = 0;  // axis visits of the index increments
  for (std::size_t c = 0; c < out.size(); ++c) {
    out[c] = data[f];
    for (std::size_t k = r; k-- > 0;) {  // increment the C-order multi-index, last axis fastest
      ++steps;
      if (++idx[k] < ext[k]) {
        f += fstride[k];
        break;
      }
      f -= fstride[k] * (ext[k] - 1);
      idx[k] = 0;
    }
  }
  data.swap(out);
  return steps;
}

template <Element T>
array<T> finish_npy(const npy_header& h, const std::byte* bytes) {
  array<T> a;
  a.shape = h.shape;
  a.data.resize(static_cast<std::size_t>(h.data_bytes / dtype_size(h.type)));
  convert(h.type, h.big_endian, bytes, a.data.size(), a.data.data());
  if (h.fortran_order) fortran_to_c(a.shape, a.data);
  return a;
}

[[nodiscard]] inline std::string npy_shape_repr(std::span<const std::size_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

/// The preamble + padded header of a little-endian C-order array of T.
template <Element T>
std::vector<std::byte> npy_preamble(std::span<const std::size_t> shape) {
  const std::string dict = std::string("{'descr': '<f") + (sizeof(T) == 4 ? "4" : "8") +
                           "', 'fortran_order': False, 'shape': " + npy_shape_repr(shape) + ", }";
  std::size_t prefix = 10;
  std::size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  int major = 1;
  if (total - prefix > 65535) {
    prefix = 12;
    major = 2;
    total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  }
  const std::size_t hlen = total - prefix;
  std::vector<std::byte> out;
  out.reserve(total);
  for (unsigned char c : npy_magic) out.push_back(static_cast<std::byte>(c));
  out.push_back(static_cast<std::byte>(major));
  out.push_back(std::byte{0});
  if (major == 1) append_le(out, static_cast<std::uint16_t>(hlen));
  else append_le(out, static_cast<std::uint32_t>(hlen));
  append_bytes(out, dict);
  out.resize(total - 1, std::byte{' '});
  out.push_back(std::byte{'\n'});
  return out;
}

template <Element T>
void check_write_args(std::span<const T> data, std::span<const std::size_t> shape, std::string_view where) {
  if (shape.size() > npy_max_rank)
    posenc::detail::fail<shape_error>(where, "shape has ", shape.size(), " dimensions, the .npy limit is ", npy_max_rank,
                                      " (NumPy's NPY_MAXDIMS)");
  const auto count = element_count(shape);
  if (!count || *count != data.size())
    posenc::detail::fail<shape_error>(where, "data has ", data.size(), " elements but shape ",
                                      shape_string(shape), " has ",
                                      count ? std::to_string(*count) : std::string("an overflowing number of"));
}

}  // namespace detail

/// Read only the header of a .npy file (validated against the file size).
[[nodiscard]] inline npy_header read_npy_header(const std::filesystem::path& path) {
  detail::input_file f(path, "read_npy_header");
  return detail::parse_npy_header(
      f.size(), [&](std::uint64_t off, void* dst, std::size_t n) { f.read(off, dst, n); }, "read_npy_header", f.name());
}

/// Parse a .npy image held in memory into an array of T (float or double).
template <Element T>
[[nodiscard]] array<T> read_npy(std::span<const std::byte> bytes) {
  const auto read = [&](std::uint64_t off, void* dst, std::size_t n) {
    // parse_npy_header checks every range against bytes.size() before reading it.
    std::memcpy(dst, bytes.data() + off, n);
  };
  const npy_header h = detail::parse_npy_header(bytes.size(), read, "read_npy", detail::memory_source);
  return detail::finish_npy<T>(h, bytes.data() + h.data_offset);
}

/// Read a .npy file into an array of T (float or double); f2/f4/f8 and integer data are converted.
template <Element T>
[[nodiscard]] array<T> read_npy(const std::filesystem::path& path) {
  detail::input_file f(path, "read_npy");
  const npy_header h = detail::parse_npy_header(
      f.size(), [&](std::uint64_t off, void* dst, std::size_t n) { f.read(off, dst, n); }, "read_npy", f.name());
  const bool native = (std::endian::native == std::endian::big) == h.big_endian;
  if (h.type == dtype_of<T>() && native && !h.fortran_order) {
    // Same representation: read straight into the result.
    array<T> a;
    a.shape = h.shape;
    a.data.resize(static_cast<std::size_t>(h.data_bytes / sizeof(T)));
    f.read(h.data_offset, a.data.data(), static_cast<std::size_t>(h.data_bytes));
    return a;
  }
  array<T> a;
  a.shape = h.shape;
  a.data.resize(static_cast<std::size_t>(h.data_bytes / dtype_size(h.type)));
  detail::read_convert(f, h.data_offset, h.type, h.big_endian, a.data.size(), a.data.data());
  if (h.fortran_order) detail::fortran_to_c(a.shape, a.data);
  return a;
}

/// The bytes of a .npy file holding `data` (row-major) with the given shape.
/// Throws posenc::shape_error if data.size() is not the product of shape.
template <Element T>
[[nodiscard]] std::vector<std::byte> npy_bytes(std::span<const T> data, std::span<const std::size_t> shape) {
  detail::check_write_args(data, shape, "npy_bytes");
  std::vector<std::byte> out = detail::npy_preamble<T>(shape);
  out.reserve(out.size() + data.size_bytes());
  detail::append_elements_le(out, data.data(), data.size());
  return out;
}

/// Write `data` (row-major, data.size() == product of shape) as a little-endian .npy file.
/// Throws posenc::shape_error on a size mismatch, posenc::io_error if the file cannot be written.
template <Element T>
void write_npy(const std::filesystem::path& path, std::span<const T> data, std::span<const std::size_t> shape) {
  detail::check_write_args(data, shape, "write_npy");
  const std::vector<std::byte> head = detail::npy_preamble<T>(shape);
  if constexpr (std::endian::native == std::endian::little) {
    detail::write_file(path, head, std::as_bytes(data), "write_npy");
  } else {
    std::vector<std::byte> body;
    detail::append_elements_le(body, data.data(), data.size());
    detail::write_file(path, head, body, "write_npy");
  }
}

/// Write any contiguous range of float or double (e.g. a std::vector) with the given shape:
/// `write_npy("w.npy", v, {rows, cols})`.
template <std::ranges::contiguous_range R>
  requires Element<std::ranges::range_value_t<R>>
void write_npy(const std::filesystem::path& path, const R& data, const std::vector<std::size_t>& shape) {
  using T = std::ranges::range_value_t<R>;
  write_npy<T>(path, std::span<const T>(std::ranges::data(data), std::ranges::size(data)),
               std::span<const std::size_t>(shape));
}

/// Write an array (overload of the above).
template <Element T>
void write_npy(const std::filesystem::path& path, const array<T>& a) {
  write_npy<T>(path, std::span<const T>(a.data), std::span<const std::size_t>(a.shape));
}

}  // namespace posenc::io
