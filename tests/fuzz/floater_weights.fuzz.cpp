// SPDX-License-Identifier: MIT
// libFuzzer harness of the FLOATER-weights reader: the bytes are a safetensors image mapped by
// floater::weights_from_tensors (the path load_safetensors takes), with the reference names.
// Accepted weights must be finite and consistent (p0 is N x d, the flow's widths match), build an
// encoder, and survive to_tensors -> weights_from_tensors unchanged.
#include <cmath>
#include <string>

#include <posenc/floater.hpp>
#include <posenc/floater/io.hpp>
#include <posenc/io/safetensors.hpp>

#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return posenc_fuzz::guarded(data, size, [](std::span<const std::byte> bytes) {
    namespace fl = posenc::floater;
    const auto file = posenc::io::safetensors_file::from_bytes(bytes);
    const auto w = fl::weights_from_tensors<double>(
        [&file](const std::string& n) { return file.get<double>(n); });
    posenc_fuzz::expect(w.p0.allFinite() && w.flow.w1.allFinite() && w.flow.w2.allFinite(), "finite weights");
    posenc_fuzz::expect(static_cast<std::size_t>(w.p0.cols()) == w.flow.dim(), "p0 width = the flow's d");
    const auto enc = fl::make_encoder(w);
    posenc_fuzz::expect(enc.dim() == w.flow.dim() && enc.blocks() == static_cast<std::size_t>(w.p0.rows()),
                        "encoder shape");
    const auto tensors = fl::to_tensors(w.flow, w.p0, fl::tensor_names{}, w.p0_shape);
    const auto again = fl::weights_from_tensors<double>([&tensors](const std::string& n) {
      for (const auto& [name, a] : tensors)
        if (name == n) return a;
      posenc::detail::fail<posenc::io_error>("fuzz", "missing tensor ", n);
    });
    posenc_fuzz::expect(again.p0 == w.p0 && again.flow.w1 == w.flow.w1 && again.flow.w2 == w.flow.w2 &&
                            again.flow.b1 == w.flow.b1 && again.flow.b2 == w.flow.b2 && again.flow.w1_t == w.flow.w1_t &&
                            again.flow.w2_t == w.flow.w2_t,
                        "to_tensors -> weights_from_tensors round trip");
  });
}
