// SPDX-License-Identifier: MIT
// FLUX.1's 3-axis RoPE for a 1024 x 1024 image and 512 T5 tokens (docs/diffusion-vision-rope.md):
// the ids FluxPipeline builds (text at (0, 0, 0), then the 64 x 64 patches at (0, row, column)),
// the frequencies of axes_dim (16, 56, 56) and theta 10000, and q, k [1, 24, 4608, 128] rotated in
// place, interleaved pairs, as diffusers' apply_rotary_emb does in FluxAttnProcessor.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <posenc/rotary.hpp>
#include <posenc/rotary/axes/axes_apply.hpp>

int main() {
  namespace rt = posenc::rotary;
  const std::size_t text = 512, side = rt::flux_patches(1024);  // 1024 px / 16 = 64 patches
  const std::size_t seq = text + side * side, heads = 24, head_dim = 128;
  const std::vector<std::int64_t> ids = rt::flux_positions(text, side, side);  // [3, 4608]
  const rt::axis_frequencies freqs = rt::flux_frequencies();                   // 8 + 28 + 28 pairs
  std::vector<float> q(seq * heads * head_dim, 1.0f), k(seq * heads * head_dim, 1.0f);
  rt::apply_inplace<float>(rt::dense_view<float>::contiguous(q.data(), {1, heads, seq, head_dim}),
                           rt::dense_view<float>::contiguous(k.data(), {1, heads, seq, head_dim}), freqs,
                           rt::axis_positions(ids, 3), {.layout = rt::layout::interleaved});
  // The last patch (row 63, column 63): pair 8 is the first of the row axis, omega = 1.
  const std::size_t t = seq - 1;
  const float x0 = q[t * head_dim + 16], x1 = q[t * head_dim + 17];
  const double c = std::cos(63.0), s = std::sin(63.0);
  std::printf("token %zu at (%lld, %lld, %lld), pair 8: (%.6f, %.6f); expected (%.6f, %.6f)\n", t,
              static_cast<long long>(ids[t]), static_cast<long long>(ids[seq + t]),
              static_cast<long long>(ids[2 * seq + t]), x0, x1, c - s, s + c);
  return std::abs(x0 - (c - s)) < 1e-6 && std::abs(x1 - (s + c)) < 1e-6 ? 0 : 1;
}
