// SPDX-License-Identifier: MIT
// M-RoPE of Qwen2.5-VL: the position ids of a text + image prompt (transformers' get_rope_index)
// and q, k rotated in place with them. Prompt: 4 text tokens, an image of 4 x 6 patches (2 x 3
// tokens after the 2 x 2 merge), 3 text tokens. head_dim 128, rope_theta 1e6, mrope_section
// [16, 24, 24]: pairs 0-15 turn with the temporal position, 16-39 the height, 40-63 the width.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <posenc/rotary.hpp>

int main() {
  namespace pr = posenc::rotary;
  // [rope-mrope]
  const std::size_t seq = 13, q_heads = 4, kv_heads = 2, head_dim = 128;
  const std::vector<std::int64_t> types{0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0};  // mm_token_type_ids
  const std::vector<pr::vision_grid> images{{1, 4, 6}};                        // image_grid_thw
  const pr::rope_index idx = pr::get_rope_index(types, 1, seq, images, {});    // [3, 1, seq], deltas
  const pr::axis_frequencies af = pr::mrope(head_dim, 1e6, std::vector<std::size_t>{16, 24, 24});
  std::vector<float> q(q_heads * seq * head_dim, 0.5f), k(kv_heads * seq * head_dim, 0.25f);
  pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, q_heads, seq, head_dim}),
                           pr::dense_view<float>::contiguous(k.data(), {1, kv_heads, seq, head_dim}), af,
                           pr::axis_positions(idx.position_ids, 3), {.layout = pr::layout::half});
  // [rope-mrope]
  for (std::size_t a = 0; a < 3; ++a) {
    std::printf("%s:", a == 0 ? "t" : a == 1 ? "h" : "w");
    for (std::size_t s = 0; s < seq; ++s) std::printf(" %lld", static_cast<long long>(idx.position_ids[a * seq + s]));
    std::printf("\n");
  }
  std::printf("rope delta: %lld\n", static_cast<long long>(idx.deltas[0]));
  // token 9 (image row 1, column 2): pair 16 turns by its height position 5 times omega_16
  const double w = std::pow(1e6, -32.0 / 128.0), h = static_cast<double>(idx.position_ids[seq + 9]);
  const float y = q[9 * head_dim + 16];
  std::printf("q[token 9, pair 16] = %.6f, expected %.6f\n", y, 0.5 * (std::cos(h * w) - std::sin(h * w)));
  return std::abs(y - 0.5 * (std::cos(h * w) - std::sin(h * w))) < 1e-6 ? 0 : 1;
}
