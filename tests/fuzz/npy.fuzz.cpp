// SPDX-License-Identifier: MIT
// libFuzzer harness of the .npy reader: read_npy<double> and read_npy<float> on arbitrary bytes.
// An accepted file must hold product(shape) elements, a rank <= 64, and survive a round trip
// through the writer bit for bit (as double: every stored dtype converts to double exactly).
#include <bit>
#include <cstring>
#include <vector>

#include <posenc/io/npy.hpp>

#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return posenc_fuzz::guarded(data, size, [](std::span<const std::byte> bytes) {
    const auto a = posenc::io::read_npy<double>(bytes);
    posenc_fuzz::expect(a.shape.size() <= 64, "rank <= 64");
    std::size_t count = 1;
    for (std::size_t e : a.shape) count *= e;  // cannot overflow: the reader checked it
    posenc_fuzz::expect(a.data.size() == count, "element count = product of the shape");
    const auto f = posenc::io::read_npy<float>(bytes);
    posenc_fuzz::expect(f.shape == a.shape && f.data.size() == a.data.size(), "float and double reads agree on shape");
    const auto again = posenc::io::read_npy<double>(std::span<const std::byte>(
        posenc::io::npy_bytes<double>(std::span<const double>(a.data), std::span<const std::size_t>(a.shape))));
    posenc_fuzz::expect(again.shape == a.shape, "round trip keeps the shape");
    posenc_fuzz::expect(again.data.empty() ||
                            std::memcmp(again.data.data(), a.data.data(), a.data.size() * sizeof(double)) == 0,
                        "round trip keeps the bits");
  });
}
