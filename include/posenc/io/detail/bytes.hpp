// SPDX-License-Identifier: MIT
// Byte-level helpers of posenc::io: little-endian loads/stores, binary16/bfloat16 decoding,
// element conversion from a stored dtype to float/double, bounded file reads, and the io_error
// message format "posenc: <function>: <source>: <tensor>: <problem>".
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/io/array.hpp>
#include <posenc/numeric/half.hpp>

namespace posenc::io::detail {

static_assert(std::endian::native == std::endian::little || std::endian::native == std::endian::big,
              "posenc::io: mixed-endian platforms are not supported");

/// Where bytes came from, for messages: the path, or "<memory>".
[[nodiscard]] inline std::string source_name(const std::filesystem::path& p) { return p.string(); }
inline constexpr std::string_view memory_source = "<memory>";

/// Throw io_error "posenc: <where>: <source>: <parts...>".
template <class... Parts>
[[noreturn]] void io_fail(std::string_view where, std::string_view source, const Parts&... parts) {
  posenc::detail::fail<io_error>(where, source, ": ", parts...);
}

// ---- little-endian scalar access -----------------------------------------------------------

template <class U>
[[nodiscard]] inline U load_le(const std::byte* p) noexcept {
  static_assert(std::is_unsigned_v<U>);
  U v = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i) v |= static_cast<U>(static_cast<U>(std::to_integer<std::uint8_t>(p[i])) << (8 * i));
  return v;
}

template <class U>
inline void store_le(std::byte* p, U v) noexcept {
  static_assert(std::is_unsigned_v<U>);
  for (std::size_t i = 0; i < sizeof(U); ++i) p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFFu);
}

template <class U>
inline void append_le(std::vector<std::byte>& out, U v) {
  const std::size_t at = out.size();
  out.resize(at + sizeof(U));
  store_le(out.data() + at, v);
}

inline void append_bytes(std::vector<std::byte>& out, std::string_view s) {
  for (char c : s) out.push_back(static_cast<std::byte>(static_cast<unsigned char>(c)));
}

// ---- conversion of stored elements ------------------------------------------------------------

/// Reverse the byte order of an unsigned integer.
template <class U>
[[nodiscard]] constexpr U byteswap(U v) noexcept {
  U r = 0;
  for (std::size_t k = 0; k < sizeof(U); ++k) {
    r = static_cast<U>((r << 8) | (v & U{0xFF}));
    v = static_cast<U>(v >> 8);
  }
  return r;
}

/// dst[i] = T(decode(load<U>(src + i * sizeof(U)))) with the stored byte order `swap`ped if needed.
template <class U, class T, class Decode>
void convert_loop(const std::byte* src, std::size_t n, T* dst, bool swap, Decode decode) noexcept {
  if (swap) {
    for (std::size_t i = 0; i < n; ++i) {
      U u;
      std::memcpy(&u, src + i * sizeof(U), sizeof(U));
      dst[i] = static_cast<T>(decode(byteswap(u)));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      U u;
      std::memcpy(&u, src + i * sizeof(U), sizeof(U));
      dst[i] = static_cast<T>(decode(u));
    }
  }
}

/// Convert n stored elements of type `from` (little-endian if !big, else big-endian) at src to T.
/// Integers convert with static_cast (exact up to 2^24 for float, 2^53 for double).
template <class T>
void convert(dtype from, bool big, const std::byte* src, std::size_t n, T* dst) noexcept {
  const bool swap = (std::endian::native == std::endian::big) != big;
  // Same representation: a plain copy.
  if (from == dtype_of<T>() && !swap) {
    if (n) std::memcpy(dst, src, n * sizeof(T));
    return;
  }
  const auto same = [](auto u) { return u; };
  switch (from) {
    case dtype::boolean: convert_loop<std::uint8_t>(src, n, dst, false, [](std::uint8_t u) { return u != 0 ? 1 : 0; }); break;
    case dtype::u8: convert_loop<std::uint8_t>(src, n, dst, false, same); break;
    case dtype::i8: convert_loop<std::uint8_t>(src, n, dst, false, [](std::uint8_t u) { return static_cast<std::int8_t>(u); }); break;
    case dtype::u16: convert_loop<std::uint16_t>(src, n, dst, swap, same); break;
    case dtype::i16: convert_loop<std::uint16_t>(src, n, dst, swap, [](std::uint16_t u) { return static_cast<std::int16_t>(u); }); break;
    case dtype::u32: convert_loop<std::uint32_t>(src, n, dst, swap, same); break;
    case dtype::i32: convert_loop<std::uint32_t>(src, n, dst, swap, [](std::uint32_t u) { return static_cast<std::int32_t>(u); }); break;
    case dtype::u64: convert_loop<std::uint64_t>(src, n, dst, swap, same); break;
    case dtype::i64: convert_loop<std::uint64_t>(src, n, dst, swap, [](std::uint64_t u) { return static_cast<std::int64_t>(u); }); break;
    case dtype::f16: convert_loop<std::uint16_t>(src, n, dst, swap, numeric::half_bits_to_float); break;
    case dtype::bf16: convert_loop<std::uint16_t>(src, n, dst, swap, numeric::bf16_bits_to_float); break;
    case dtype::f32: convert_loop<std::uint32_t>(src, n, dst, swap, [](std::uint32_t u) { return std::bit_cast<float>(u); }); break;
    case dtype::f64: convert_loop<std::uint64_t>(src, n, dst, swap, [](std::uint64_t u) { return std::bit_cast<double>(u); }); break;
  }
}

/// Read n stored elements of `from` at `offset` of file f and convert them into dst, through a
/// bounded buffer (no full-size intermediate copy).
template <class T, class File>
void read_convert(File& f, std::uint64_t offset, dtype from, bool big, std::size_t n, T* dst) {
  const std::size_t w = dtype_size(from);
  const std::size_t per_chunk = (std::size_t{1} << 18) / w;  // 256 KiB of stored bytes per read
  std::vector<std::byte> buf(std::min(n, per_chunk) * w);
  for (std::size_t done = 0; done < n;) {
    const std::size_t k = std::min(per_chunk, n - done);
    f.read(offset + static_cast<std::uint64_t>(done) * w, buf.data(), k * w);
    convert(from, big, buf.data(), k, dst + done);
    done += k;
  }
}

/// Append n elements of T as little-endian bytes.
template <class T>
void append_elements_le(std::vector<std::byte>& out, const T* src, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n * sizeof(T));
  if constexpr (std::endian::native == std::endian::little) {
    if (n) std::memcpy(out.data() + at, src, n * sizeof(T));
  } else {
    using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    for (std::size_t i = 0; i < n; ++i) store_le(out.data() + at + i * sizeof(T), std::bit_cast<U>(src[i]));
  }
}

// ---- files -------------------------------------------------------------------------------------

/// An open input file of known size with bounded positioned reads; every failure is an io_error.
class input_file {
 public:
  input_file(const std::filesystem::path& path, std::string_view where) : m_where(where), m_name(path.string()) {
    std::error_code ec;
    const auto st = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(st)) io_fail(m_where, m_name, "cannot open: no such file");
    if (std::filesystem::is_directory(st)) io_fail(m_where, m_name, "cannot open: is a directory");
    // FIFOs, sockets and devices have no size to check headers against (and a FIFO would block).
    if (!std::filesystem::is_regular_file(st)) io_fail(m_where, m_name, "cannot open: not a regular file");
    m_in.open(path, std::ios::binary);
    if (!m_in) io_fail(m_where, m_name, "cannot open for reading");
    m_in.seekg(0, std::ios::end);
    const auto end = m_in.tellg();
    if (!m_in || end < 0) io_fail(m_where, m_name, "cannot determine the file size");
    m_size = static_cast<std::uint64_t>(end);
    m_in.seekg(0, std::ios::beg);
  }

  [[nodiscard]] std::uint64_t size() const noexcept { return m_size; }
  [[nodiscard]] const std::string& name() const noexcept { return m_name; }

  /// Read exactly n bytes at offset into dst (the caller has checked offset + n <= size()).
  void read(std::uint64_t offset, void* dst, std::size_t n) {
    if (n == 0) return;
    if (offset > m_size || n > m_size - offset)
      io_fail(m_where, m_name, "read of ", n, " bytes at offset ", offset, " is past the end of the file (", m_size,
              " bytes)");
    m_in.clear();
    m_in.seekg(static_cast<std::streamoff>(offset), std::ios::beg);
    std::size_t done = 0;
    // Read in chunks that fit std::streamsize.
    while (m_in && done < n) {
      const std::size_t chunk = std::min<std::size_t>(n - done, std::size_t{1} << 30);
      m_in.read(static_cast<char*>(dst) + done, static_cast<std::streamsize>(chunk));
      done += static_cast<std::size_t>(m_in.gcount());
      if (static_cast<std::size_t>(m_in.gcount()) != chunk) break;
    }
    if (done != n) io_fail(m_where, m_name, "short read: got ", done, " of ", n, " bytes at offset ", offset,
                           " (was the file truncated while open?)");
  }

 private:
  std::string_view m_where;
  std::string m_name;
  std::ifstream m_in;
  std::uint64_t m_size = 0;
};

/// Write the concatenation of `parts` to path (creating or truncating it); io_error on failure.
inline void write_file(const std::filesystem::path& path, std::span<const std::span<const std::byte>> parts,
                       std::string_view where) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) io_fail(where, path.string(), "cannot open for writing");
  for (auto part : parts) {
    std::size_t done = 0;
    while (out && done < part.size()) {
      const std::size_t chunk = std::min<std::size_t>(part.size() - done, std::size_t{1} << 30);
      out.write(reinterpret_cast<const char*>(part.data() + done), static_cast<std::streamsize>(chunk));
      done += chunk;
    }
  }
  out.flush();
  if (!out) io_fail(where, path.string(), "write failed (disk full or permission denied?)");
  out.close();
  if (!out) io_fail(where, path.string(), "closing the file failed");
}

/// Write a then b to path.
inline void write_file(const std::filesystem::path& path, std::span<const std::byte> a, std::span<const std::byte> b,
                       std::string_view where) {
  const std::span<const std::byte> parts[2] = {a, b};
  write_file(path, std::span<const std::span<const std::byte>>(parts), where);
}

}  // namespace posenc::io::detail
