// SPDX-License-Identifier: MIT
// RoPE applied in place to a ragged batch: two sequences packed as [tokens, heads, head_dim],
// one a 5-token prompt (prefill at positions 0..4), one a decode step of a KV cache that already
// holds 1000 tokens (its single new token at position 1000). q has 4 heads, k 2 (GQA).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <posenc/rotary.hpp>

int main() {
  namespace pr = posenc::rotary;
  // [rope-inplace]
  const std::size_t tokens = 6, q_heads = 4, kv_heads = 2, head_dim = 64;
  std::vector<float> q(tokens * q_heads * head_dim, 0.5f), k(tokens * kv_heads * head_dim, 0.25f);
  const std::vector<std::int32_t> cu_seqlens{0, 5, 6};  // sequence b = tokens [cu[b], cu[b+1])
  const std::vector<std::int32_t> offsets{0, 1000};      // position of each sequence's first token
  const pr::frequencies freqs = pr::default_frequencies(head_dim, 500000.0);  // rope_theta 5e5
  pr::apply_ragged_inplace<float, std::int32_t>(pr::ragged_view<float>::contiguous(q.data(), {tokens, q_heads, head_dim}),
                                                pr::ragged_view<float>::contiguous(k.data(), {tokens, kv_heads, head_dim}),
                                                cu_seqlens, offsets, freqs, {.layout = pr::layout::half});
  // [rope-inplace]
  // The decode token (position 1000) against position 0 of an unrotated copy: pair 0 turned by 1000 rad.
  const float c = q[5 * q_heads * head_dim], s = q[5 * q_heads * head_dim + head_dim / 2];
  std::printf("token 5, head 0, pair 0: (%.6f, %.6f); expected (%.6f, %.6f)\n", c, s,
              0.5 * (std::cos(1000.0) - std::sin(1000.0)), 0.5 * (std::sin(1000.0) + std::cos(1000.0)));
  return std::abs(c - 0.5 * (std::cos(1000.0) - std::sin(1000.0))) < 1e-6 ? 0 : 1;
}
