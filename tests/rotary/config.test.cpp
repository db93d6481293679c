// SPDX-License-Identifier: MIT
// rotary::load_config on config.json excerpts of real models: every field lands where it should
// and the frequencies equal those of the same rope_config written by hand; unknown and missing
// keys are named config_errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <variant>

#include <posenc/rotary/config.hpp>

#include "rotary/configs.hpp"

namespace pr = posenc::rotary;

TEST_CASE("Llama-3.1 8B: llama3 scaling") {
  const auto m = pr::load_config(rope_test::llama31_8b);
  const pr::plan& p = m.main_plan();
  REQUIRE(p.rope_type() == "llama3");
  const auto& r = std::get<pr::rules::llama3>(p.rule());
  CHECK(p.context().theta == 500000.0);
  CHECK(p.context().head_dim == 128);  // 4096 / 32
  CHECK(p.context().max_position_embeddings == 131072);
  CHECK(r.factor == 8.0);
  CHECK(r.low_freq_factor == 1.0);
  CHECK(r.high_freq_factor == 4.0);
  CHECK(r.original_max_position_embeddings == 8192);
  CHECK(m.num_attention_heads == 32);
  CHECK(m.num_key_value_heads == 8);
  CHECK(!m.alibi);
  const auto& f = p.frequencies();
  CHECK(f.inv_freq.size() == 64);
  CHECK(f.inv_freq[0] == 1.0L);
  CHECK(std::abs(f.inv_freq[63] - std::pow(500000.0L, -126.0L / 128) / 8) <= 1e-16L * f.inv_freq[63]);
}

TEST_CASE("Qwen2-7B yarn (legacy \"type\" key)") {
  const auto m = pr::load_config(rope_test::qwen2_7b_yarn);
  const pr::plan& p = m.main_plan();
  REQUIRE(p.rope_type() == "yarn");
  const auto& r = std::get<pr::rules::yarn>(p.rule());
  CHECK(p.context().head_dim == 128);  // 3584 / 28
  CHECK(p.context().theta == 1e6);
  CHECK(r.factor == 4.0);
  CHECK(r.original_max_position_embeddings == 32768);
  CHECK(r.fast(p.context()) == 32.0);
  CHECK(r.slow(p.context()) == 1.0);
  CHECK(!r.attention_factor);
  CHECK(p.frequencies().attention_factor == doctest::Approx(0.1 * std::log(4.0) + 1).epsilon(1e-15));
}

TEST_CASE("Phi-3.5-mini longrope: 48 short/long factors, top-level original length") {
  const auto m = pr::load_config(rope_test::phi35_mini);
  const pr::plan& p = m.main_plan();
  REQUIRE(p.rope_type() == "longrope");
  const auto& r = std::get<pr::rules::longrope>(p.rule());
  CHECK(p.context().head_dim == 96);
  CHECK(r.length(p.context()) == 4096);
  REQUIRE(r.long_factor.size() == 48);
  REQUIRE(r.short_factor.size() == 48);
  for (std::size_t k = 0; k < 48; ++k) {
    CHECK(r.long_factor[k] == rope_test::phi35_long[k]);
    CHECK(r.short_factor[k] == rope_test::phi35_short[k]);
  }
  const auto f = p.frequencies(8192);
  CHECK(f.attention_factor == doctest::Approx(std::sqrt(1 + std::log(32.0) / std::log(4096.0))).epsilon(1e-15));
  CHECK(std::abs(f.inv_freq[47] - std::pow(10000.0L, -94.0L / 96) / 64.83999633789062L) <= 1e-16L * f.inv_freq[47]);
  // the module's rule is selectable at load time
  CHECK(std::get<pr::rules::longrope>(pr::load_config(rope_test::phi35_mini, pr::longrope_rule::phi3_module)
                                          .main_plan()
                                          .rule())
            .regime == pr::longrope_rule::phi3_module);
}

TEST_CASE("vicuna-7b-v1.5-16k linear and internlm2.5 dynamic") {
  const auto lin = pr::load_config(rope_test::vicuna_16k_linear);
  REQUIRE(lin.main_plan().rope_type() == "linear");
  CHECK(std::get<pr::rules::linear>(lin.main_plan().rule()).factor == 4.0);
  CHECK(lin.main_plan().context().theta == 10000.0);  // absent: HF's default
  CHECK(lin.main_plan().frequencies().inv_freq[0] == 0.25L);
  const auto dyn = pr::load_config(rope_test::internlm25_dynamic);
  REQUIRE(dyn.main_plan().rope_type() == "dynamic");
  CHECK(std::get<pr::rules::dynamic>(dyn.main_plan().rule()).factor == 2.0);
  CHECK(dyn.main_plan().context().theta == 1e6);
  CHECK(dyn.main_plan().context().max_position_embeddings == 32768);
  // static NTK (posenc's extension name "ntk") and LongRoPE's legacy "su"
  const auto ntk = pr::load_config(R"({"head_dim": 128, "rope_scaling": {"rope_type": "ntk", "factor": 4.0}})");
  REQUIRE(ntk.main_plan().rope_type() == "ntk");
  CHECK(std::get<pr::rules::ntk>(ntk.main_plan().rule()).factor == 4.0);
  CHECK(pr::load_config(R"({"head_dim": 4, "max_position_embeddings": 64, "rope_scaling": {"type": "su", "factor": 2,
                           "short_factor": [1, 1], "long_factor": [2, 2]}})").main_plan().rope_type() == "longrope");
}

TEST_CASE("head_dim, partial_rotary_factor, no rope_scaling, ALiBi flags") {
  const auto m = pr::load_config(R"({"hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
                                     "rope_theta": 10000.0, "max_position_embeddings": 2048, "rope_scaling": null})");
  CHECK(m.main_plan().rope_type() == "default");
  CHECK(m.main_plan().rotary_dim() == 32);
  const auto g = pr::load_config(R"({"head_dim": 256, "hidden_size": 3072, "num_attention_heads": 16})");
  CHECK(g.main_plan().context().head_dim == 256);  // head_dim wins over hidden_size / heads (Gemma)
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
                       doctest::Contains("beta_fast >= beta_slow"), posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"head_dim": 64, "max_position_embeddings": 4096,
                                         "rope_scaling": {"type": "longrope", "short_factor": [1, 1], "long_factor": [1, 1], "factor": 2}})"),
                       doctest::Contains("short_factor: expected rotary_dim / 2 = 32 values, got 2"), posenc::shape_error);
}

TEST_CASE("transformers 5 loader: errors for what it does not understand, each naming the key") {
  using E = pr::config_error;
  const std::string head = R"("model_type": "llama", "head_dim": 64, "max_position_embeddings": 4096, )";
  const auto load = [&](const std::string& rest, pr::load_options o = {}) { return pr::load_config("{" + head + rest + "}", o); };
  // both forms at once; a RoPE-named top-level key it does not read; an unknown key in a rope dict
  CHECK_THROWS_WITH_AS(load(R"("rope_parameters": {"rope_type": "default"}, "rope_scaling": {"type": "linear", "factor": 2})"),
                       doctest::Contains("rope_scaling: given together with rope_parameters"), E);
  CHECK_THROWS_WITH_AS(load(R"("rotary_pct": 0.25)"), doctest::Contains("rotary_pct: not understood"), E);
  CHECK_THROWS_WITH_AS(load(R"("rope_parameters": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1,
                                "high_freq_factor": 4, "beta_fast": 32})"),
                       doctest::Contains("rope_parameters.beta_fast: unknown key for rope_type 'llama3'"), E);
  // truncate inside a per-layer dict (transformers 5.23 reads it only from a flat dict)
  CHECK_THROWS_WITH_AS(load(R"("layer_types": ["full_attention"], "rope_parameters": {"full_attention":
                                {"rope_type": "yarn", "factor": 4, "truncate": false}})"),
                       doctest::Contains("rope_parameters.full_attention.truncate"), E);
  // a keyed dict with a stray flat key; a per-layer override of a RoPE field
  CHECK_THROWS_WITH_AS(load(R"("layer_types": ["full_attention"], "rope_parameters": {"full_attention":
                                {"rope_type": "default"}, "rope_theta": 5e5})"),
                       doctest::Contains("rope_parameters.rope_theta: not a layer type of the model"), E);
  CHECK_THROWS_WITH_AS(load(R"("layer_types": ["full_attention"], "per_layer_config": {"0": {"rope_theta": 1}})"),
                       doctest::Contains("per_layer_config.0.rope_theta"), E);
  // model types whose transformers defaults posenc does not know
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "somenet", "head_dim": 64})"),
                       doctest::Contains("rope_theta: missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "qwen3", "hidden_size": 4096, "num_attention_heads": 32})"),
                       doctest::Contains("head_dim: missing, and model_type \"qwen3\""), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "somenet", "head_dim": 64, "rope_theta": 1e4,
                                         "partial_rotary_factor": 0.5})"),
                       doctest::Contains("partial_rotary_factor: whether model_type \"somenet\""), E);
  // proportional and truncate are transformers 5 only
  CHECK_THROWS_WITH_AS(load(R"("rope_parameters": {"rope_type": "proportional", "partial_rotary_factor": 0.25})",
                            {.semantics = pr::semantics::transformers_4_46}),
                       doctest::Contains("'proportional' is a transformers 5 rule"), posenc::invalid_argument);
  CHECK_THROWS_WITH_AS(load(R"("rope_scaling": {"type": "yarn", "factor": 4, "truncate": false})",
                            {.semantics = pr::semantics::transformers_4_46}),
                       doctest::Contains("not transformers 4.46 yarn parameters"), posenc::invalid_argument);
  // a null head_dim: transformers 5's dynamic / yarn / longrope cannot use it (the default rule can)
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32,
      "head_dim": null, "max_position_embeddings": 2048,
      "rope_parameters": {"rope_type": "dynamic", "factor": 2.0, "rope_theta": 1e4}})"),
                       doctest::Contains("head_dim: null, which transformers 5 cannot use for rope_type 'dynamic'"), E);
  CHECK(pr::load_config(R"({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "head_dim": null,
      "rope_parameters": {"rope_type": "default", "rope_theta": 1e4}})").main_plan().rotary_dim() == 40);
  // a layer type the config does not have
  CHECK_THROWS_WITH_AS((void)load("\"rope_theta\": 1e4").plan_for("sliding_attention"),
                       doctest::Contains("expected one of default"), posenc::invalid_argument);
}

TEST_CASE("transformers 5 loader: per layer type, text_config, width fields, model defaults") {
  // Gemma 3 legacy in text_config: class defaults theta 1e6 / 1e4 and head_dim 256; linear x8 on full only
  const auto g = pr::load_config(R"({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text",
      "hidden_size": 2560, "rope_scaling": {"rope_type": "linear", "factor": 8.0}}})");
  REQUIRE(g.layers.size() == 2);
  CHECK(g.plan_for("full_attention").rope_type() == "linear");
  CHECK(g.plan_for("full_attention").context().theta == 1e6);
  CHECK(g.plan_for("sliding_attention").rope_type() == "default");
  CHECK(g.plan_for("sliding_attention").context().theta == 1e4);
  CHECK(g.main_plan().rotary_dim() == 256);
  // DeepSeek: qk_rope_head_dim is the rotated width (not hidden / heads = 56); rope_interleave reported
  const auto d = pr::load_config(R"({"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
      "qk_rope_head_dim": 64, "rope_interleave": true, "max_position_embeddings": 163840,
      "rope_parameters": {"rope_type": "yarn", "factor": 40, "original_max_position_embeddings": 4096,
                          "mscale": 1.0, "mscale_all_dim": 1.0, "rope_theta": 10000}})");
  CHECK(d.main_plan().rotary_dim() == 64);
  CHECK(d.main_plan().frequencies().attention_factor == 1.0);  // the mscale ratio 1/1
  CHECK(d.rope_interleave == true);
  // Phi-2: partial_rotary_factor inside rope_parameters (40 pairs would be wrong: 80 * 0.4 = 32)
  const auto p = pr::load_config(R"({"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32,
      "partial_rotary_factor": null, "head_dim": null,
      "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.4}})");
  CHECK(p.main_plan().rotary_dim() == 32);
  // the default rule of Llama ignores partial_rotary_factor in transformers 5, not in 4.46
  const std::string llama = R"({"model_type": "llama", "head_dim": 128, "partial_rotary_factor": 0.5})";
  CHECK(pr::load_config(llama).main_plan().rotary_dim() == 128);
  CHECK(pr::load_config(llama, {.semantics = pr::semantics::transformers_4_46}).main_plan().rotary_dim() == 64);
  // semantics by name
  CHECK(pr::parse_semantics("v5") == pr::semantics::transformers_5);
  CHECK(pr::parse_semantics("transformers_4_46") == pr::semantics::transformers_4_46);
  CHECK(!pr::parse_semantics("4.46"));
  CHECK(pr::name(pr::semantics::transformers_4_46) == "transformers_4_46");
}

TEST_CASE("a config's head width is bounded: a few bytes never allocate gigabytes of frequencies") {
  // the plan's frequencies are computed at load: before the bound, {"head_dim": 900000000} asked for
  // 14 GB (found by tests/fuzz/rotary_config.fuzz.cpp). Every width key is bounded and named.
  using E = pr::config_error;
  const std::size_t top = pr::max_config_head_dim;
  const std::string over = std::to_string(top + 2);
  CHECK(pr::load_config("{\"model_type\": \"llama\", \"head_dim\": " + std::to_string(top) + "}").main_plan().rotary_dim() == top);
  CHECK_THROWS_WITH_AS(pr::load_config("{\"model_type\": \"llama\", \"head_dim\": " + over + "}"),
                       doctest::Contains(("head_dim: expected a head width of at most 65536 (rotary::max_config_head_dim), got " + over).c_str()), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{\"model_type\": \"deepseek_v3\", \"qk_rope_head_dim\": " + over + "}"),
                       doctest::Contains("qk_rope_head_dim: expected a head width of at most 65536"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{\"model_type\": \"gemma4_text\", \"global_head_dim\": " + over +
                                       ", \"layer_types\": [\"full_attention\"], "
                                       "\"rope_parameters\": {\"full_attention\": {\"rope_theta\": 1e6}}}"),
                       doctest::Contains("global_head_dim: expected a head width of at most 65536"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{\"model_type\": \"gemma4_text\", \"layer_types\": [\"full_attention\"], "
                                       "\"per_layer_config\": {\"0\": {\"head_dim\": " + over + "}}}"),
                       doctest::Contains("per_layer_config.0.head_dim: expected a head width of at most 65536"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{\"model_type\": \"llama\", \"num_attention_heads\": 1, \"hidden_size\": " + over + "}"),
                       doctest::Contains(("hidden_size / num_attention_heads: expected a head width of at most 65536 "
                                          "(rotary::max_config_head_dim), got " + over + " / 1 = " + over).c_str()), E);
}

TEST_CASE("the rule table: names, aliases, keys and a plan built by hand") {
  CHECK(pr::rule_names().size() == 8);
  CHECK(pr::rule_names()[0] == "default");
  CHECK(pr::rule_names().back() == "proportional");
  bool known = false;
  CHECK(pr::rule_accepts_key("su", "long_factor", &known));
  CHECK(known);
  CHECK(!pr::rule_accepts_key("linear", "beta_fast", &known));
  CHECK(!pr::rule_accepts_key("xpos", "factor", &known));
  CHECK(!known);
  // proportional: head_dim 16, partial 0.25 -> floor(0.25 * 16 / 2) = 2 rotated pairs of 8, the
  // exponent over the whole head, divided by factor; the others 0
  const pr::plan p({1e6, 16, 0.25, 0, 0, pr::semantics::transformers_5}, pr::rules::proportional{{}, 2.0});
  REQUIRE(p.rotary_dim() == 16);
  CHECK(p.frequencies().inv_freq[0] == 0.5L);
  CHECK(std::abs(p.frequencies().inv_freq[1] - std::pow(1e6L, -2.0L / 16) / 2) <= 1e-18L);
  for (std::size_t k = 2; k < 8; ++k) CHECK(p.frequencies().inv_freq[k] == 0.0L);
  CHECK(!p.depends_on_seq_len());
  CHECK_THROWS_WITH_AS(pr::plan({1e4, 64, 1.0, 0, 0, pr::semantics::transformers_5}, pr::rules::dynamic{{}, 2.0}),
                       doctest::Contains("max_position_embeddings"), posenc::invalid_argument);
}

template <class M>
constexpr bool has_rope_field = requires(const M& m) { m.rope; };

TEST_CASE("never silent: a zero pretrained length, a partial factor outside 0 < p <= 1, no public legacy field") {
  using E = pr::config_error;
  // original_max_position_embeddings 0 is not "absent" (transformers divides by it): named, top level or inside
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "phi3", "head_dim": 96, "max_position_embeddings": 131072,
      "original_max_position_embeddings": 0, "rope_scaling": {"type": "longrope", "short_factor": [1], "long_factor": [1]}})"),
                       doctest::Contains("original_max_position_embeddings: expected a positive integer, got 0"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "qwen3", "head_dim": 128, "max_position_embeddings": 131072,
      "rope_parameters": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 0, "rope_theta": 1e6}})"),
                       doctest::Contains("rope_parameters.original_max_position_embeddings: expected a positive integer, got 0"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "llama", "head_dim": 128, "rope_parameters": {"rope_type": "llama3",
      "factor": 8, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 0}})"),
                       doctest::Contains("original_max_position_embeddings: expected a positive integer, got 0"), E);
  // partial_rotary_factor outside (0, 1] is refused even where the model's default rule ignores it
  for (const char* bad : {"1.5", "0", "-0.5"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(pr::load_config(std::string(R"({"model_type": "llama", "head_dim": 128, "partial_rotary_factor": )") +
                                         bad + "}"),
                         doctest::Contains("partial_rotary_factor: expected a fraction of the head in (0, 1]"), E);
    CHECK_THROWS_WITH_AS(pr::load_config(std::string(R"({"model_type": "llama", "head_dim": 128, "rope_parameters":
                                         {"rope_type": "default", "partial_rotary_factor": )") + bad + "}}"),
                         doctest::Contains("rope_parameters.partial_rotary_factor: expected a fraction"), E);
  }
  // the legacy rope_config view that could disagree with the plans is gone: the plans are the only answer
  static_assert(!has_rope_field<pr::model_config>);
}

TEST_CASE("loader cost bounded by the model: layer types from layer_types, shared plans, linear per_layer_config") {
  using E = pr::config_error;
  // an "*_attention" key that is not a layer type of the model is an error naming it (it was a layer type with its own plan)
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "gemma4_text", "layer_types": ["full_attention", "sliding_attention"],
      "rope_parameters": {"full_attention": {"rope_theta": 1e6}, "x1_attention": {"rope_theta": 1e4}}})"),
                       doctest::Contains("rope_parameters.x1_attention: not a layer type of the model"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "gemma4_text", "rope_parameters": {"full_attention":
      {"rope_theta": 1e6}, "chunked_attention": null}})"),
                       doctest::Contains("rope_parameters.chunked_attention: not a layer type of the model"), E);
  // layer_types holds transformers' attention layer types only, as many as num_hidden_layers, at most max_config_layers
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "llama", "head_dim": 64, "layer_types": ["x1_attention"]})"),
                       doctest::Contains("layer_types: expected layer types among full_attention"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "llama", "head_dim": 64, "num_hidden_layers": 3,
      "layer_types": ["full_attention"]})"),
                       doctest::Contains("layer_types: expected num_hidden_layers = 3 entries, got 1"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "llama", "head_dim": 64, "num_hidden_layers": 65537})"),
                       doctest::Contains("num_hidden_layers: expected at most 65536"), E);
  {
    std::string many = R"({"model_type": "llama", "head_dim": 64, "layer_types": [)";
    for (std::size_t i = 0; i <= pr::max_config_layers; ++i) many += i ? ", \"full_attention\"" : "\"full_attention\"";
    CHECK_THROWS_WITH_AS(pr::load_config(many + "]}"), doctest::Contains("layer_types: expected at most 65536 entries"), E);
  }
  // every allowed layer type with the same rule (null: the default rule) shares one plan; legacy names are mapped
  std::string types, params;
  const char* names[] = {"full_attention", "sliding_attention", "chunked_attention", "window_attention",
                         "indexed_attention", "linear_attention", "hybrid"};
  for (const char* n : names) {
    types += std::string(types.empty() ? "" : ", ") + "\"" + n + "\"";
    params += std::string(params.empty() ? "" : ", ") + "\"" + n + "\": null";
  }
  const auto shared = pr::load_config(R"({"model_type": "llama", "head_dim": 65536, "layer_types": [)" + types +
                                      R"(, "mamba", "attention"], "rope_parameters": {)" + params + "}}");
  REQUIRE(shared.layers.size() == std::size(names));
  for (const auto& l : shared.layers) CHECK(l.plan == shared.layers.front().plan);  // one plan object
  CHECK(shared.layer_types[std::size(names)] == "linear_attention");
  CHECK(shared.layer_types[std::size(names) + 1] == "full_attention");
  // distinct rules share a bound on their frequencies together (two of the widest head fit, a third does not)
  const std::string wide = R"({"model_type": "llama", "head_dim": 65536, "layer_types": ["full_attention",
      "sliding_attention", "chunked_attention"], "rope_parameters": {"full_attention": {"rope_theta": 1e6},
      "sliding_attention": {"rope_theta": 1e4})";
  CHECK(pr::load_config(wide + "}}").layers.size() == 2);
  CHECK_THROWS_WITH_AS(pr::load_config(wide + R"(, "chunked_attention": {"rope_theta": 5e5}}})"),
                       doctest::Contains("rope_parameters.chunked_attention: the distinct rules of this config need "
                                         "more than 65536 frequencies together"), E);
  // per_layer_config with an entry per layer of the largest model: read in one pass (was quadratic),
  // and a disagreement is still found at the layer that disagrees
  std::string lt, plc;
  const std::size_t n = pr::max_config_layers;
  for (std::size_t i = 0; i < n; ++i) {
    lt += std::string(i ? ", " : "") + (i % 2 ? "\"sliding_attention\"" : "\"full_attention\"");
    if (i + 1 < n)
      plc += std::string(i ? ", " : "") + "\"" + std::to_string(i) + "\": {\"head_dim\": " + (i % 2 ? "256" : "512") + "}";
  }
  const std::string big = R"({"model_type": "gemma4_text", "num_hidden_layers": )" + std::to_string(n) +
                          R"(, "layer_types": [)" + lt + R"(], "rope_parameters": {"full_attention": {"rope_theta": 1e6},
      "sliding_attention": {"rope_theta": 1e4}}, "per_layer_config": {)";
  const auto g = pr::load_config(big + plc + R"(, "65535": {"head_dim": 256}}})");
  CHECK(g.plan_for("full_attention").context().head_dim == 512);
  CHECK(g.plan_for("sliding_attention").context().head_dim == 256);
  CHECK_THROWS_WITH_AS(pr::load_config(big + plc + R"(, "65535": {"head_dim": 128}}})"),
                       doctest::Contains("per_layer_config.65535.head_dim: layers of type sliding_attention disagree"), E);
}
