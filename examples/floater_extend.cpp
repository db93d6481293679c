// SPDX-License-Identifier: MIT
// Deploy FLOATER weights trained in PyTorch: this example first writes a safetensors file in the
// reference layout (what `safetensors.torch.save_file(model.state_dict(), ...)` produces for the
// reference FlowTransformerEncoder: encoder.proj_flow.layers.{0,2}.linear.{weight,bias} with
// nn.Linear weights [out, in + 1], time column last, and encoder.proj_bias [3, n_layers, d]),
// then loads it and extends the encodings from the trained length (255) to L = 4096 positions,
// integrating only the new intervals.
//
// Usage: floater_extend [d] [n_layers]   (defaults: 16 and 2)
#include <cstdio>
#include <cstdlib>
#include <random>

#include <posenc/floater.hpp>

int main(int argc, char** argv) {
  namespace fl = posenc::floater;
  const std::size_t d = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 16;
  const std::size_t layers = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 2;
  try {
    {  // stand-in for the PyTorch export: random weights in the reference layout (small scale, as
       // a warm-started model: Xavier-scale random dynamics grow like e^(4t) up to t = 41)
      std::mt19937_64 rng(1);
      fl::mlp<float> h(d);
      fl::init_small(h, rng, 0.1);
      const auto p0 = fl::xavier_uniform<float>({3, layers, d}, rng);
      fl::save_safetensors("floater_encoder.safetensors", h, p0, fl::tensor_names::reference_encoder(), {3, layers, d});
    }
    // [floater-extend]
    const auto w = fl::load_safetensors<float>("floater_encoder.safetensors", fl::tensor_names::reference_encoder());
    fl::encoder<float> enc = fl::make_encoder(w);  // N = 3 * n_layers blocks, Delta = 0.01, RK 3/8
    enc.extend(255);                               // the reference's max_seq_len
    enc.extend(4096);                              // integrates positions 255..4095 only
    // block (q/k/v = g, layer l) is row g * n_layers + l of proj_bias: the key bias of layer 0
    const posenc::table<float> bias_k0 = enc.block_table(1 * layers + 0, 4096);
    // [floater-extend]

    // sanity: the extension equals a fresh computation (same steps: bitwise) on its first rows,
    // and everything is finite
    fl::encoder<float> fresh = fl::make_encoder(w);
    const auto ref = fresh.block_table(1 * layers + 0, 300);
    const bool ok = bias_k0.allFinite() && bias_k0.topRows(300) == ref && enc.size() == 4096;
    std::printf("floater_extend: %zu blocks (3 x %zu layers), d = %zu, extended to %zu positions; |b_k| max %.4f; %s\n",
                enc.blocks(), layers, d, enc.size(), static_cast<double>(bias_k0.cwiseAbs().maxCoeff()), ok ? "ok" : "MISMATCH");
    return ok ? 0 : 1;
  } catch (const posenc::error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
