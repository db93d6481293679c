// SPDX-License-Identifier: MIT
// Length extrapolation as a model ships it: read the rotary configuration from a config.json
// (here Llama-3.1-8B's legacy rope_scaling: the llama3 rule), take its plan's frequencies,
// and build exact cos/sin tables far beyond the pretrained 8192 tokens, in float and bfloat16.
#include <cstdio>
#include <string>

#include <posenc/rotary.hpp>

int main() {
  namespace pr = posenc::rotary;
  // [rope-scaling]
  const pr::model_config m = pr::load_config(R"({
    "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
    "rope_theta": 500000.0,
    "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"}})");
  const pr::frequencies& f = m.main_plan().frequencies();  // 64 inv_freq (long double)
  // positions 100000 .. 100003, [cos | cos] and [sin | sin] as rotate_half consumes them
  const auto t = pr::table<float>(f, 100000, 4, pr::table_layout::duplicated);
  const auto h = pr::table<Eigen::bfloat16>(f, 100000, 4);
  // [rope-scaling]
  std::printf("rope_type %s, head_dim %zu, attention factor %.3f\n", std::string(m.main_plan().rope_type()).c_str(),
              m.main_plan().context().head_dim, f.attention_factor);
  for (Eigen::Index k : {0, 20, 63})
    std::printf("pair %2ld: inv_freq %.6Le  cos(100000 w) = %+.8f  sin = %+.8f  (bf16 cos %+.4f)\n",
                static_cast<long>(k), f.inv_freq[static_cast<std::size_t>(k)], t.cos(0, k), t.sin(0, k),
                static_cast<float>(h.cos(0, k)));
  const bool ok = t.cos.cols() == 128 && t.cos(0, 0) == t.cos(0, 64) && f.inv_freq.size() == 64;
  return ok ? 0 : 1;
}
