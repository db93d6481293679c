// SPDX-License-Identifier: MIT
// libFuzzer harness of the safetensors reader: from_bytes on arbitrary bytes, then every tensor
// read as double and float and the metadata walked. An accepted file must have tensors whose
// element counts match their byte ranges, and survive a round trip through the writer (tensors
// written as F64, which holds every stored dtype exactly) with names, shapes, metadata and bits.
#include <cstring>
#include <string>
#include <vector>

#include <posenc/io/safetensors.hpp>

#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return posenc_fuzz::guarded(data, size, [](std::span<const std::byte> bytes) {
    namespace pio = posenc::io;
    const auto file = pio::safetensors_file::from_bytes(bytes);
    const auto cost = file.parse_cost();
    posenc_fuzz::expect(cost.json_nodes <= file.header_size() / 2 + 1, "JSON nodes <= header bytes / 2 + 1");
    posenc_fuzz::expect(cost.json_bytes <= 12 * file.header_size() + 64, "JSON document <= 12 bytes per header byte");
    std::vector<pio::array<double>> values;
    std::vector<pio::tensor_ref> refs;
    bool writable = true;
    for (const auto& t : file.tensors()) {
      values.push_back(file.get<double>(t.name));
      posenc_fuzz::expect(values.back().data.size() == t.size(), "element count matches the byte range");
      posenc_fuzz::expect(file.get<float>(t.name).data.size() == t.size(), "float read has the same count");
      if (t.name.empty()) writable = false;  // the writer refuses empty names
    }
    std::size_t meta = 0;
    for (const auto& [k, v] : file.metadata()) meta += k.size() + v.size();
    posenc_fuzz::expect(meta <= file.header_size(), "metadata fits in the header");
    if (!writable) return;
    const auto& ts = file.tensors();
    for (std::size_t i = 0; i < ts.size(); ++i) refs.emplace_back(std::string(ts[i].name), ts[i].shape.to_vector(), values[i].data);
    const auto back = pio::safetensors_file::from_bytes(pio::safetensors_bytes(refs, file.metadata()));
    posenc_fuzz::expect(back.metadata() == file.metadata(), "round trip keeps the metadata");
    posenc_fuzz::expect(back.tensors().size() == ts.size(), "round trip keeps the tensors");
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const auto v = back.get<double>(ts[i].name);
      posenc_fuzz::expect(v.shape == ts[i].shape, "round trip keeps the shape");
      posenc_fuzz::expect(v.data.empty() ||
                              std::memcmp(v.data.data(), values[i].data.data(), v.data.size() * sizeof(double)) == 0,
                          "round trip keeps the bits");
    }
  });
}
