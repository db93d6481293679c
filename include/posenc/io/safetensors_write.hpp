// SPDX-License-Identifier: MIT
// The safetensors writers (docs/io.md): safetensors_bytes and write_safetensors, float/double
// and integer tensors (tensor_ref) with the "__metadata__" map, little-endian whatever the host.
// Free functions, safe on distinct output files. Standard library only.
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

namespace posenc::io {

namespace detail {

inline std::string safetensors_header(const std::vector<tensor_ref>& tensors, const safetensors_metadata& metadata,
                                      std::string_view where) {
  using posenc::detail::fail;
  std::string h = "{";
  bool first = true;
  if (!metadata.empty()) {
    h += "\"__metadata__\":{";
    for (const auto& [k, v] : metadata) {
      if (!json::valid_utf8(k) || !json::valid_utf8(v))
        fail<invalid_argument>(where, "metadata entry '", k, "' is not valid UTF-8");
      if (!first) h += ',';
      first = false;
      json::write_string(h, k);
      h += ':';
      json::write_string(h, v);
    }
    h += '}';
    first = false;
  }
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const tensor_ref& t = tensors[i];
    if (t.name.empty()) fail<invalid_argument>(where, "tensor ", i, " has an empty name");
    if (t.name == "__metadata__") fail<invalid_argument>(where, "tensor ", i, " may not be named \"__metadata__\"");
    if (!json::valid_utf8(t.name)) fail<invalid_argument>(where, "tensor ", i, ": name is not valid UTF-8");
    for (std::size_t j = 0; j < i; ++j)
      if (tensors[j].name == t.name) fail<invalid_argument>(where, "duplicate tensor name '", t.name, "'");
    const auto count = element_count(t.shape);
    if (!count || *count != t.count)
      fail<shape_error>(where, "tensor '", t.name, "': data has ", t.count, " elements but shape ",
                        shape_string(t.shape), " has ",
                        count ? std::to_string(*count) : std::string("an overflowing number of"));
    // the fields are public: bytes must hold count elements of type (read in full below)
    const std::size_t w = dtype_size(t.type);
    if (w == 0) fail<invalid_argument>(where, "tensor '", t.name, "': type is not a dtype");
    if (t.bytes.size() % w != 0 || t.bytes.size() / w != t.count)
      fail<shape_error>(where, "tensor '", t.name, "': bytes holds ", t.bytes.size(), " bytes, expected count (", t.count,
                        ") elements of ", w, " bytes (", dtype_name(t.type), ")");
    if (!first) h += ',';
    first = false;
    json::write_string(h, t.name);
    h += ":{\"dtype\":\"";
    h += safetensors_dtype_name(t.type);
    h += "\",\"shape\":[";
    for (std::size_t k = 0; k < t.shape.size(); ++k) {
      if (k) h += ',';
      h += std::to_string(t.shape[k]);
    }
    const std::uint64_t end = at + t.bytes.size();
    h += "],\"data_offsets\":[" + std::to_string(at) + "," + std::to_string(end) + "]}";
    at = end;
  }
  h += '}';
  h.append((8 - h.size() % 8) % 8, ' ');  // 8 + N is then a multiple of 8
  return h;
}

inline void append_tensor_le(std::vector<std::byte>& out, const tensor_ref& t) {
  if (t.type == dtype::f32) append_elements_le(out, reinterpret_cast<const float*>(t.bytes.data()), t.count);
  else append_elements_le(out, reinterpret_cast<const double*>(t.bytes.data()), t.count);
}

}  // namespace detail

/// The bytes of a safetensors file holding the tensors (in the given order) and the metadata.
/// Throws posenc::shape_error if a tensor's data does not match its shape, posenc::invalid_argument
/// for an empty, duplicate or reserved name.
[[nodiscard]] inline std::vector<std::byte> safetensors_bytes(const std::vector<tensor_ref>& tensors,
                                                              const safetensors_metadata& metadata = {}) {
  const std::string h = detail::safetensors_header(tensors, metadata, "safetensors_bytes");
  std::vector<std::byte> out;
  std::size_t total = 8 + h.size();
  for (const auto& t : tensors) total += t.bytes.size();
  out.reserve(total);
  detail::append_le(out, static_cast<std::uint64_t>(h.size()));
  detail::append_bytes(out, h);
  for (const auto& t : tensors) detail::append_tensor_le(out, t);
  return out;
}

/// Write the tensors (in the given order) and metadata as a safetensors file.
/// Errors as safetensors_bytes, plus posenc::io_error if the file cannot be written.
inline void write_safetensors(const std::filesystem::path& path, const std::vector<tensor_ref>& tensors,
                              const safetensors_metadata& metadata = {}) {
  const std::string h = detail::safetensors_header(tensors, metadata, "write_safetensors");
  std::vector<std::byte> head;
  head.reserve(8 + h.size());
  detail::append_le(head, static_cast<std::uint64_t>(h.size()));
  detail::append_bytes(head, h);
  if constexpr (std::endian::native == std::endian::little) {
    // The stored bytes are the in-memory bytes: write them from the caller's buffers.
    std::vector<std::span<const std::byte>> parts;
    parts.reserve(tensors.size() + 1);
    parts.emplace_back(head);
    for (const auto& t : tensors) parts.push_back(t.bytes);
    detail::write_file(path, parts, "write_safetensors");
  } else {
    std::size_t body_size = 0;
    for (const auto& t : tensors) body_size += t.bytes.size();
    std::vector<std::byte> body;
    body.reserve(body_size);
    for (const auto& t : tensors) detail::append_tensor_le(body, t);
    detail::write_file(path, head, body, "write_safetensors");
  }
}

}  // namespace posenc::io
