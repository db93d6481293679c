// SPDX-License-Identifier: MIT
// rotary::load_config on config.json excerpts of real models: every field lands where it should
// and the frequencies equal those of the same rope_config written by hand; unknown and missing
// keys are named config_errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <posenc/rotary/config.hpp>

#include "rotary/configs.hpp"

namespace pr = posenc::rotary;

TEST_CASE("Llama-3.1 8B: llama3 scaling") {
  const auto m = pr::load_config(rope_test::llama31_8b);
  CHECK(m.rope.type == pr::rope_type::llama3);
  CHECK(m.rope.theta == 500000.0);
  CHECK(m.rope.head_dim == 128);  // 4096 / 32
  CHECK(m.rope.max_position_embeddings == 131072);
  CHECK(m.rope.factor == 8.0);
  CHECK(m.rope.low_freq_factor == 1.0);
  CHECK(m.rope.high_freq_factor == 4.0);
  CHECK(m.rope.original_max_position_embeddings == 8192);
  CHECK(m.num_attention_heads == 32);
  CHECK(m.num_key_value_heads == 8);
  CHECK(!m.alibi);
  const auto f = pr::compute_frequencies(m.rope);
  CHECK(f.inv_freq.size() == 64);
  CHECK(f.inv_freq[0] == 1.0L);
  CHECK(std::abs(f.inv_freq[63] - std::pow(500000.0L, -126.0L / 128) / 8) <= 1e-16L * f.inv_freq[63]);
}

TEST_CASE("Qwen2-7B yarn (legacy \"type\" key)") {
  const auto m = pr::load_config(rope_test::qwen2_7b_yarn);
  CHECK(m.rope.type == pr::rope_type::yarn);
  CHECK(m.rope.head_dim == 128);  // 3584 / 28
  CHECK(m.rope.theta == 1e6);
  CHECK(m.rope.factor == 4.0);
  CHECK(m.rope.original_max_position_embeddings == 32768);
  CHECK(m.rope.beta_fast == 32.0);
  CHECK(m.rope.beta_slow == 1.0);
  CHECK(!m.rope.attention_factor);
  CHECK(pr::compute_frequencies(m.rope).attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1).epsilon(1e-15));
}

TEST_CASE("Phi-3.5-mini longrope: 48 short/long factors, top-level original length") {
  const auto m = pr::load_config(rope_test::phi35_mini);
  CHECK(m.rope.type == pr::rope_type::longrope);
  CHECK(m.rope.head_dim == 96);
  CHECK(m.rope.original_max_position_embeddings == 4096);
  REQUIRE(m.rope.long_factor.size() == 48);
  REQUIRE(m.rope.short_factor.size() == 48);
  for (std::size_t k = 0; k < 48; ++k) {
    CHECK(m.rope.long_factor[k] == rope_test::phi35_long[k]);
    CHECK(m.rope.short_factor[k] == rope_test::phi35_short[k]);
  }
  const auto f = pr::compute_frequencies(m.rope, 8192);
  CHECK(f.attention_factor == doctest::Approx(std::sqrt(1 + std::log(32.0) / std::log(4096.0))).epsilon(1e-15));
  CHECK(std::abs(f.inv_freq[47] - std::pow(10000.0L, -94.0L / 96) / 64.83999633789062L) <= 1e-16L * f.inv_freq[47]);
  // the module's rule is selectable at load time
  CHECK(pr::load_config(rope_test::phi35_mini, pr::longrope_rule::phi3_module).rope.longrope_switch ==
        pr::longrope_rule::phi3_module);
}

TEST_CASE("vicuna-7b-v1.5-16k linear and internlm2.5 dynamic") {
  const auto lin = pr::load_config(rope_test::vicuna_16k_linear);
  CHECK(lin.rope.type == pr::rope_type::linear);
  CHECK(lin.rope.factor == 4.0);
  CHECK(lin.rope.theta == 10000.0);  // absent: HF's default
  CHECK(pr::compute_frequencies(lin.rope).inv_freq[0] == 0.25L);
  const auto dyn = pr::load_config(rope_test::internlm25_dynamic);
  CHECK(dyn.rope.type == pr::rope_type::dynamic);
  CHECK(dyn.rope.factor == 2.0);
  CHECK(dyn.rope.theta == 1e6);
  CHECK(dyn.rope.max_position_embeddings == 32768);
  // static NTK (posenc's extension name "ntk") and LongRoPE's legacy "su"
  const auto ntk = pr::load_config(R"({"head_dim": 128, "rope_scaling": {"rope_type": "ntk", "factor": 4.0}})");
  CHECK(ntk.rope.type == pr::rope_type::ntk);
  CHECK(ntk.rope.factor == 4.0);
  CHECK(pr::load_config(R"({"head_dim": 4, "max_position_embeddings": 64, "rope_scaling": {"type": "su", "factor": 2,
                           "short_factor": [1, 1], "long_factor": [2, 2]}})").rope.type == pr::rope_type::longrope);
}

TEST_CASE("head_dim, partial_rotary_factor, no rope_scaling, ALiBi flags") {
  const auto m = pr::load_config(R"({"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
                                     "rope_theta": 10000.0, "max_position_embeddings": 2048, "rope_scaling": null})");
  CHECK(m.rope.type == pr::rope_type::default_rope);
  CHECK(pr::rotary_dim(m.rope) == 32);
  const auto g = pr::load_config(R"({"head_dim": 256, "hidden_size": 3072, "num_attention_heads": 16})");
  CHECK(g.rope.head_dim == 256);  // head_dim wins over hidden_size / heads (Gemma)
  CHECK(pr::load_config(R"({"head_dim": 64, "alibi": true})").alibi);
  CHECK(pr::load_config(R"({"head_dim": 64, "attn_config": {"alibi": true}})").alibi);
}

TEST_CASE("unknown and missing keys are named config_errors") {
  using E = pr::config_error;
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"num_attention_heads": 32})"), doctest::Contains("hidden_size is missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"hidden_size": 4096})"), doctest::Contains("num_attention_heads is missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"rope_type": "xpos", "factor": 2.0}})"),
                       doctest::Contains("unknown rope_type \"xpos\""), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"factor": 2.0}})"),
                       doctest::Contains("rope_scaling.rope_type: missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"type": "linear"}})"),
                       doctest::Contains("rope_scaling.factor: missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 2, "beta_fast": 3}})"),
                       doctest::Contains("rope_scaling.beta_fast: unknown key for rope_type 'linear'"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"rope_type": "llama3", "factor": 8,
                                          "low_freq_factor": 1, "high_freq_factor": 4}})"),
                       doctest::Contains("original_max_position_embeddings"), posenc::error);  // v5: else max_position_embeddings
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"rope_type": "longrope", "short_factor": [1]}})"),
                       doctest::Contains("rope_scaling.long_factor: missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_theta": "big"})"),
                       doctest::Contains("rope_theta: expected a number"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": -64})"), doctest::Contains("head_dim: expected a non-negative integer"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64,)"), doctest::Contains("bad JSON"), E);
  CHECK_THROWS_AS(pr::load_config("[1, 2]"), E);
  // values in range are checked by validate: an invalid_argument, not a config_error
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 0}})"),
                       doctest::Contains("factor: expected a value > 0"), posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "rope_scaling": {"type": "yarn", "factor": 4, "beta_fast": 1, "beta_slow": 2},
                                         "max_position_embeddings": 4096})"),
                       doctest::Contains("beta_fast > beta_slow"), posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "max_position_embeddings": 4096,
                                         "rope_scaling": {"type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1], "factor": 2}})"),
                       doctest::Contains("short_factor: expected rotary_dim / 2 = 32 values, got 2"), posenc::shape_error);
}
