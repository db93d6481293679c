// SPDX-License-Identifier: MIT
// ALiBi: the authors' slopes for 12 heads (not a power of two), and the bias added in place to the
// attention scores of a decode step (1 query against a KV cache of 8 keys).
#include <cstdio>
#include <vector>

#include <posenc/alibi.hpp>

int main() {
  namespace pa = posenc::alibi;
  // [alibi-bias]
  const std::size_t heads = 12, q_len = 1, k_len = 8;
  const std::vector<double> m = pa::slopes(heads);  // 2^-1 .. 2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
  std::vector<float> scores(heads * q_len * k_len, 0.0f);  // [batch 1, heads, q_len, k_len]
  // the query is the last of the k_len positions (q_offsets empty: k_len - q_len)
  pa::add_bias<float>(pa::scores_view<float>::contiguous(scores.data(), {1, heads, q_len, k_len}), m);
  // [alibi-bias]
  for (std::size_t h = 0; h < heads; h += 11) {
    std::printf("head %2zu, slope %.6f:", h, m[h]);
    for (std::size_t j = 0; j < k_len; ++j) std::printf(" %8.4f", scores[h * k_len + j]);
    std::printf("\n");
  }
  // key 0 is 7 positions behind the query: -7 m
  return scores[0] == static_cast<float>(-7 * m[0]) && scores[11 * k_len + 7] == 0.0f ? 0 : 1;
}
