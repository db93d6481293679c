// SPDX-License-Identifier: MIT
// libFuzzer harness of the rotary config loader (rotary::load_config, a config.json text): every
// plan of an accepted config must be valid (a plan built again from its context and rule) and give
// finite positive inverse frequencies and a finite positive attention factor at seq_len 0 and
// beyond the trained length, under both longrope rules. The loader bounds every head width by
// rotary::max_config_head_dim (its frequencies are computed at load: a head_dim of 9e8 once asked
// for 14 GB), so every accepted config is cheap to compute here.
#include <cmath>
#include <cstddef>
#include <string_view>

#include <posenc/rotary/config.hpp>

#include "common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace pr = posenc::rotary;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  return posenc_fuzz::guarded(data, size, [&](std::span<const std::byte>) {
    for (auto rule : {pr::longrope_rule::init_function, pr::longrope_rule::phi3_module}) {
      const pr::model_config m = pr::load_config(text, rule);
      for (const auto& l : m.layers) {
        const pr::plan& p = *l.plan;
        (void)pr::plan(p.context(), p.rule());
        posenc_fuzz::expect(p.context().head_dim <= pr::max_config_head_dim, "head_dim bounded by max_config_head_dim");
        const std::size_t trained = p.context().max_position_embeddings;
        for (std::size_t seq : {std::size_t{0}, std::size_t{1}, trained + 1, 4 * trained + 7}) {
          const pr::frequencies f = p.frequencies(seq);
          posenc_fuzz::expect(f.inv_freq.size() == p.rotary_dim() / 2, "rotary_dim / 2 frequencies");
          for (const auto w : f.inv_freq)
            posenc_fuzz::expect(std::isfinite(static_cast<double>(w)) && w >= 0, "finite non-negative inv_freq");
          posenc_fuzz::expect(std::isfinite(f.attention_factor) && f.attention_factor > 0,
                              "finite positive attention_factor");
        }
      }
    }
  });
}
