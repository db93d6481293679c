// SPDX-License-Identifier: MIT
// The tensor type shared by the file formats of posenc::io: a shape and a row-major (C order)
// buffer, plus the element types ("dtypes") the formats can name. Standard library only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <posenc/core/error.hpp>

namespace posenc::io {

/// An n-dimensional array: `shape` (outermost first) and `data` in row-major (C) order, so the
/// element at multi-index (i0, ..., i{n-1}) is data[((i0 * s1 + i1) * s2 + ...) + i{n-1}].
/// A 0-d array (empty shape) holds exactly one element; a shape with a zero extent holds none.
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
template <class T>
struct array {
  std::vector<std::size_t> shape;
  std::vector<T> data;

  /// Number of elements (= data.size() for a well-formed array).
  [[nodiscard]] std::size_t size() const noexcept { return data.size(); }
  /// Number of dimensions.
  [[nodiscard]] std::size_t rank() const noexcept { return shape.size(); }
  [[nodiscard]] const T* begin() const noexcept { return data.data(); }
  [[nodiscard]] const T* end() const noexcept { return data.data() + data.size(); }
  [[nodiscard]] T& operator[](std::size_t i) noexcept { return data[i]; }
  [[nodiscard]] const T& operator[](std::size_t i) const noexcept { return data[i]; }
};

/// Element types the formats can name. Reading converts the floating types (and the integer
/// types, exactly where representable) to float or double; writing produces f32 or f64.
enum class dtype : std::uint8_t {
  boolean,  ///< one byte, 0 or 1       (npy '|b1', safetensors BOOL)
  u8,       ///< (npy '|u1', safetensors U8)
  i8,       ///< (npy '|i1', safetensors I8)
  u16,      ///< (npy '<u2', safetensors U16)
  i16,      ///< (npy '<i2', safetensors I16)
  u32,      ///< (npy '<u4', safetensors U32)
  i32,      ///< (npy '<i4', safetensors I32)
  u64,      ///< (npy '<u8', safetensors U64)
  i64,      ///< (npy '<i8', safetensors I64)
  f16,      ///< IEEE binary16            (npy '<f2', safetensors F16)
  bf16,     ///< bfloat16                 (safetensors BF16; NumPy has no bfloat16)
  f32,      ///< IEEE binary32            (npy '<f4', safetensors F32)
  f64,      ///< IEEE binary64            (npy '<f8', safetensors F64)
};

/// Bytes per element.
[[nodiscard]] constexpr std::size_t dtype_size(dtype t) noexcept {
  switch (t) {
    case dtype::boolean:
    case dtype::u8:
    case dtype::i8: return 1;
    case dtype::u16:
    case dtype::i16:
    case dtype::f16:
    case dtype::bf16: return 2;
    case dtype::u32:
    case dtype::i32:
    case dtype::f32: return 4;
    case dtype::u64:
    case dtype::i64:
    case dtype::f64: return 8;
  }
  return 0;
}

/// A short lower-case name ("f32", "bf16", "bool", ...).
[[nodiscard]] constexpr std::string_view dtype_name(dtype t) noexcept {
  switch (t) {
    case dtype::boolean: return "bool";
    case dtype::u8: return "u8";
    case dtype::i8: return "i8";
    case dtype::u16: return "u16";
    case dtype::i16: return "i16";
    case dtype::u32: return "u32";
    case dtype::i32: return "i32";
    case dtype::u64: return "u64";
    case dtype::i64: return "i64";
    case dtype::f16: return "f16";
    case dtype::bf16: return "bf16";
    case dtype::f32: return "f32";
    case dtype::f64: return "f64";
  }
  return "?";
}

/// True for f16, bf16, f32, f64.
[[nodiscard]] constexpr bool is_floating(dtype t) noexcept {
  return t == dtype::f16 || t == dtype::bf16 || t == dtype::f32 || t == dtype::f64;
}

/// The dtype of a C++ element type (float -> f32, double -> f64, std::int32_t -> i32, ...).
template <class T>
[[nodiscard]] constexpr dtype dtype_of() noexcept {
  static_assert(std::is_arithmetic_v<T>, "posenc::io::dtype_of<T>: T must be arithmetic");
  if constexpr (std::is_same_v<T, bool>) return dtype::boolean;
  else if constexpr (std::is_floating_point_v<T>) {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "posenc::io: only float and double are floating dtypes");
    return sizeof(T) == 4 ? dtype::f32 : dtype::f64;
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1 ? dtype::i8 : sizeof(T) == 2 ? dtype::i16 : sizeof(T) == 4 ? dtype::i32 : dtype::i64;
  } else {
    return sizeof(T) == 1 ? dtype::u8 : sizeof(T) == 2 ? dtype::u16 : sizeof(T) == 4 ? dtype::u32 : dtype::u64;
  }
}

/// Element types that read_npy / safetensors_file::get can produce.
template <class T>
concept Element = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// "[2, 3, 4]" for error messages and printing.
[[nodiscard]] inline std::string shape_string(std::span<const std::size_t> shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

/// Number of elements of a shape, or std::nullopt if the product overflows std::size_t.
/// (A shape with a zero extent has 0 elements whatever the other extents.)
[[nodiscard]] inline std::optional<std::size_t> element_count(std::span<const std::size_t> shape) noexcept {
  for (std::size_t s : shape)
    if (s == 0) return std::size_t{0};
  std::size_t n = 1;
  for (std::size_t s : shape) {
    if (n > static_cast<std::size_t>(-1) / s) return std::nullopt;
    n *= s;
  }
  return n;
}

}  // namespace posenc::io
