// SPDX-License-Identifier: MIT
// How far an f32-phase rotary table (inv_freq rounded to float, position * inv_freq rounded to
// float, then cos/sin of that float angle, as HF transformers computes it) is from the exact
// values, at 4K, 32K, 128K and 1M positions, for each scaling rule; beside the error of posenc's
// float table. Prints the markdown table quoted in docs/extrapolation.md (run this test case with
// -s to see it). Error = max |value - exact| over the last 4096 positions before N and all pairs,
// of cos and sin before the attention factor; exact = cosl/sinl of the long double phase.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <posenc/rotary/config.hpp>
#include <posenc/rotary/scaling.hpp>
#include <posenc/rotary/table.hpp>

#include "rotary/configs.hpp"

namespace pr = posenc::rotary;
using ld = long double;

namespace {
struct row {
  std::string name;
  pr::plan plan;
};

std::vector<row> rules() {
  std::vector<row> r;
  pr::rope_config base;
  base.head_dim = 128;
  base.max_position_embeddings = 4096;
  r.push_back({"default (theta 1e4)", pr::to_plan(base)});
  auto c = base;
  c.type = pr::rope_type::linear, c.factor = 4;
  r.push_back({"linear x4", pr::to_plan(c)});
  c.type = pr::rope_type::ntk;
  r.push_back({"NTK-aware x4", pr::to_plan(c)});
  c.type = pr::rope_type::dynamic;
  r.push_back({"dynamic x4 (seq_len = N)", pr::to_plan(c)});
  // the loaded plans (LongRoPE under transformers 4.46's init-function rule, as the table always had)
  const pr::load_options t446{pr::semantics::transformers_4_46};
  r.push_back({"yarn (Qwen2-7B, x4)", pr::load_config(rope_test::qwen2_7b_yarn).main_plan()});
  r.push_back({"longrope (Phi-3.5-mini)", pr::load_config(rope_test::phi35_mini, t446).main_plan()});
  r.push_back({"llama3 (Llama-3.1-8B)", pr::load_config(rope_test::llama31_8b).main_plan()});
  return r;
}
}  // namespace

TEST_CASE("f32-phase error table (docs/extrapolation.md)") {
  const std::uint64_t ns[4] = {4096, 32768, 131072, 1048576};
  constexpr std::size_t window = 4096;
  std::string out = "| rule | 4K | 32K | 128K | 1M | posenc f32, all N |\n|---|---|---|---|---|---|\n";
  for (const auto& rule : rules()) {
    const std::string name = rule.name;
    const pr::plan& plan = rule.plan;
    out += "| " + name + " |";
    ld posenc_worst = 0;
    ld f32_at[4] = {};
    for (int j = 0; j < 4; ++j) {
      const std::uint64_t n = ns[j];
      const auto f = plan.frequencies(n);
      std::vector<float> inv32(f.inv_freq.size());
      for (std::size_t k = 0; k < inv32.size(); ++k) inv32[k] = static_cast<float>(f.inv_freq[k]);
      pr::frequencies unit = f;
      unit.attention_factor = 1;
      const auto t = pr::table<float>(unit, n - window, window);
      ld worst = 0;
      for (std::size_t i = 0; i < window; ++i) {
        const std::uint64_t p = n - window + i;
        for (std::size_t k = 0; k < inv32.size(); ++k) {
          const ld th = static_cast<ld>(p) * f.inv_freq[k];
          const ld ec = std::cos(th), es = std::sin(th);
          const float a32 = static_cast<float>(p) * inv32[k];  // the f32 phase
          const auto c32 = static_cast<float>(std::cos(static_cast<double>(a32)));
          const auto s32 = static_cast<float>(std::sin(static_cast<double>(a32)));
          worst = std::max({worst, std::abs(c32 - ec), std::abs(s32 - es)});
          const auto I = static_cast<Eigen::Index>(i), K = static_cast<Eigen::Index>(k);
          posenc_worst = std::max({posenc_worst, std::abs(t.cos(I, K) - ec), std::abs(t.sin(I, K) - es)});
        }
      }
      f32_at[j] = worst;
      char buf[32];
      std::snprintf(buf, sizeof buf, " %.1e |", static_cast<double>(worst));
      out += buf;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.1e |\n", static_cast<double>(posenc_worst));
    out += buf;
    INFO(name);
    // posenc's float table: correctly rounded, so within half a float ulp of 1 (2^-25 ~ 3e-8).
    CHECK(posenc_worst <= std::ldexp(1.0L, -25));
    // the f32 phase: its error grows with the position (the phase's own rounding ~ p w 2^-24)
    CHECK(f32_at[3] > 16 * f32_at[0]);
    CHECK(f32_at[3] > 1e-3L);
  }
  MESSAGE("\n" << out);
}
