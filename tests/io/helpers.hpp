// SPDX-License-Identifier: MIT
// Test helpers of the io area: byte composition written independently of posenc/io (from the
// format specifications), scratch files, and error-message checks.
#pragma once

#include <doctest/doctest.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <posenc/core/error.hpp>

namespace io_test {

using bytes = std::vector<std::byte>;

inline void put(bytes& b, std::string_view s) {
  for (char c : s) b.push_back(static_cast<std::byte>(static_cast<unsigned char>(c)));
}
inline void put_u8(bytes& b, unsigned v) { b.push_back(static_cast<std::byte>(v & 0xFF)); }
/// Little-endian unsigned integer of `width` bytes.
inline void put_le(bytes& b, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) put_u8(b, static_cast<unsigned>((v >> (8 * i)) & 0xFF));
}
/// Big-endian unsigned integer of `width` bytes.
inline void put_be(bytes& b, std::uint64_t v, int width) {
  for (int i = width - 1; i >= 0; --i) put_u8(b, static_cast<unsigned>((v >> (8 * i)) & 0xFF));
}
inline void put_f32(bytes& b, float x, bool big = false) {
  big ? put_be(b, std::bit_cast<std::uint32_t>(x), 4) : put_le(b, std::bit_cast<std::uint32_t>(x), 4);
}
inline void put_f64(bytes& b, double x, bool big = false) {
  big ? put_be(b, std::bit_cast<std::uint64_t>(x), 8) : put_le(b, std::bit_cast<std::uint64_t>(x), 8);
}

/// A .npy image per the NumPy format specification: "\x93NUMPY", major, minor, header length
/// (2 bytes LE for 1.0, 4 bytes LE for 2.0/3.0), the dict text, spaces up to `align`, '\n', data.
inline bytes npy_image(int major, std::string_view dict, const bytes& data, std::size_t align = 64) {
  bytes b;
  put_u8(b, 0x93);
  put(b, "NUMPY");
  put_u8(b, static_cast<unsigned>(major));
  put_u8(b, 0);
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::size_t total = prefix + dict.size() + 1;
  if (align > 1) total = (total + align - 1) / align * align;
  put_le(b, total - prefix, major == 1 ? 2 : 4);
  put(b, dict);
  while (b.size() < total - 1) put(b, " ");
  put(b, "\n");
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

/// A safetensors image: 8-byte LE length of the JSON text, the text, the data section.
inline bytes safetensors_image(std::string_view json, const bytes& data) {
  bytes b;
  put_le(b, json.size(), 8);
  put(b, json);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

/// A fresh scratch directory under the system temp directory, removed on destruction.
class scratch_dir {
 public:
  explicit scratch_dir(std::string_view tag) {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    m_path = std::filesystem::temp_directory_path() /
             ("posenc_io_" + std::string(tag) + "_" + std::to_string(rd()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(m_path);
  }
  ~scratch_dir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  [[nodiscard]] std::filesystem::path operator/(std::string_view name) const { return m_path / name; }
  [[nodiscard]] const std::filesystem::path& path() const { return m_path; }

 private:
  std::filesystem::path m_path;
};

inline void write_bytes(const std::filesystem::path& p, const bytes& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  REQUIRE(out.good());
}

inline bytes read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

/// Run f; require that it throws E whose message contains every one of `parts`.
template <class E = posenc::io_error, class F>
void require_error(F&& f, std::initializer_list<std::string_view> parts) {
  bool thrown = false;
  try {
    f();
  } catch (const E& e) {
    thrown = true;
    const std::string msg = e.what();
    for (auto p : parts) {
      INFO("message: ", msg);
      CHECK_MESSAGE(msg.find(p) != std::string::npos, "missing '", std::string(p), "'");
    }
  }
  CHECK_MESSAGE(thrown, "expected an exception");
}

/// Mutation fuzzing of a valid file image: every byte position takes each of `values` (the
/// length-field bytes [0, length_field_end) take all 256 values), then 2000 seeded mutants with
/// 1-4 bytes replaced by `alphabet` characters or random bytes, some truncated or extended.
/// `attempt(bytes)` parses one mutant and checks what it got.
template <class F>
void mutate_and_parse(const bytes& img, std::initializer_list<unsigned char> values, std::size_t length_field_end,
                      unsigned seed, std::string_view alphabet, F&& attempt) {
  for (std::size_t pos = 0; pos < img.size(); ++pos) {
    if (pos < length_field_end) {
      for (unsigned v = 0; v < 256; ++v) {
        bytes b = img;
        b[pos] = static_cast<std::byte>(v);
        attempt(b);
      }
      continue;
    }
    for (unsigned char v : values) {
      bytes b = img;
      b[pos] = static_cast<std::byte>(v);
      attempt(b);
    }
  }
  std::mt19937 rng(seed);
  for (int it = 0; it < 2000; ++it) {
    bytes b = img;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t pos = rng() % b.size();
      b[pos] = (rng() % 2) ? static_cast<std::byte>(alphabet[rng() % alphabet.size()]) : static_cast<std::byte>(rng() & 0xFF);
    }
    if (rng() % 4 == 0) b.resize(rng() % b.size());
    else if (rng() % 4 == 0) b.resize(b.size() + rng() % 16, std::byte{0});
    attempt(b);
  }
}

}  // namespace io_test
