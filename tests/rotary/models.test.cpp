// SPDX-License-Identifier: MIT
// The per-model rules of rotary::load_config (posenc/rotary/model_rules.hpp) against transformers
// 5.23's own output for configs shaped like the real ones (tests/rotary/hf/models/*.json, written
// by scripts/gen_rope_model_reference.py): per layer type the inv_freq (within 4 float32 ulp of
// transformers' float32 values, which carry their own float32 rounding; posenc's are the exact
// formula) and the attention scaling (bitwise); per layer index whether RoPE applies (NoPE
// layers); the pair layout; and the per-position query scale, which transformers evaluates in
// float32 (log1p, a product and a sum: within 2 float32 ulp of posenc's double). Also: the model
// type table in docs/extrapolation.md is the table of the code, row for row.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <posenc/rotary/config.hpp>

#include "rotary/hf_json.hpp"

namespace pr = posenc::rotary;
namespace fs = std::filesystem;
using rope_test::jnode;

namespace {

double ulp_f32(double x) {
  const float f = std::abs(static_cast<float>(x));
  return static_cast<double>(std::nextafter(f, std::numeric_limits<float>::infinity()) - f);
}

std::vector<fs::path> model_files() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(POSENC_HF_REFERENCE_DIR) / "models"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("per-model rules: transformers 5.23's inv_freq, attention scaling, NoPE layers and query scales") {
  const auto files = model_files();
  REQUIRE(files.size() >= 15);
  std::size_t freqs = 0, att = 0, layers = 0, scales = 0;
  double worst_w = 0, worst_q = 0;
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    const jnode file = rope_test::parse_file(path);
    const pr::model_config m = pr::load_config(file.find("config")->str());
    for (const auto& member : file.find("layers")->members) {
      const std::string& lt = member.first;  // not a structured binding: clang 14's CAPTURE lambda cannot name one
      const auto& layer = member.second;
      CAPTURE(lt);
      const pr::plan& p = lt == "default" ? m.main_plan() : m.plan_for(lt);
      const std::string hf_type = layer.find("rope_type")->text;
      CHECK(p.rope_type() == (hf_type == "ntk_alpha" ? "ntk" : hf_type));  // Hunyuan's ntk_alpha is static NTK
      CHECK(p.rotary_dim() == static_cast<std::size_t>(layer.find("rotary_dim")->as_double()));
      const auto& f = p.frequencies();
      const auto& hw = layer.find("inv_freq")->items;
      REQUIRE(hw.size() == f.inv_freq.size());
      for (std::size_t k = 0; k < hw.size(); ++k) {
        const double h = hw[k].as_double(), u = std::abs(static_cast<double>(f.inv_freq[k]) - h) / ulp_f32(h);
        worst_w = std::max(worst_w, u);
        CHECK_MESSAGE(u <= 4.0, "inv_freq[", k, "] = ", static_cast<double>(f.inv_freq[k]), ", HF ", h);
        ++freqs;
      }
      CHECK(f.attention_factor == layer.find("attention_scaling")->as_double());  // bitwise
      ++att;
    }
    // NoPE layers: the attention's use_rope per layer index
    const jnode* rl = file.find("rope_layers");
    const std::size_t n = m.num_hidden_layers;
    REQUIRE(n > 0);
    for (std::size_t i = 0; i < n; ++i) {
      const bool expected = rl->is_null() || rl->items[i].b;
      CHECK_MESSAGE(m.uses_rope(i) == expected, "layer ", i);
      ++layers;
    }
    CHECK_THROWS_AS((void)m.uses_rope(n), posenc::invalid_argument);
    CHECK(m.rope_interleave.value_or(false) == file.find("interleaved")->b);
    // the query scale per position (on the NoPE layers only for Llama 4)
    const jnode* qs = file.find("query_scale");
    if (qs->is_null()) {
      CHECK(m.query_scale.rule == pr::query_scale_rule::none);
      CHECK(m.query_scale_at(0, 1u << 30) == 1.0);
      continue;
    }
    const bool nope_only = qs->find("nope_layers_only")->b;
    CHECK(m.query_scale_nope_only == nope_only);
    std::size_t nope = 0, roped = 0;
    while (nope < n && m.uses_rope(nope)) ++nope;
    while (roped < n && !m.uses_rope(roped)) ++roped;
    REQUIRE(roped < n);
    const auto& pos = qs->find("positions")->items;
    const auto& val = qs->find("values")->items;
    REQUIRE(pos.size() == val.size());
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const auto x = static_cast<std::uint64_t>(pos[i].as_double());
      const double h = val[i].as_double();
      const std::size_t layer = nope_only ? nope : roped;
      REQUIRE(layer < n);
      const double q = m.query_scale_at(layer, x), u = std::abs(q - h) / ulp_f32(h);
      worst_q = std::max(worst_q, u);
      CHECK_MESSAGE(u <= 2.0, "position ", x, ": ", q, ", HF ", h);
      if (nope_only) CHECK(m.query_scale_at(roped, x) == 1.0);  // RoPE layers: no temperature
      ++scales;
    }
  }
  MESSAGE(files.size(), " model files: ", freqs, " inv_freq (worst ", worst_w, " f32 ulp), ", att,
          " attention scalings bitwise, ", layers, " layer RoPE flags, ", scales, " query scales (worst ", worst_q,
          " f32 ulp)");
}

TEST_CASE("per-model rules: what transformers rejects or posenc cannot vouch for is a named config_error") {
  using E = pr::config_error;
  const std::string l4 = R"("model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, )";
  // Llama 4's NoPE layers need the layer count; no_rope_layers entries are 0 or 1, at least one per layer
  CHECK_THROWS_WITH_AS(pr::load_config("{" + l4 + "\"no_rope_layer_interval\": 4}"),
                       doctest::Contains("num_hidden_layers: missing or 0"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{" + l4 + "\"num_hidden_layers\": 4, \"no_rope_layers\": [1, 1, 2, 0]}"),
                       doctest::Contains("no_rope_layers: expected entries 0 or 1, got 2"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{" + l4 + "\"num_hidden_layers\": 4, \"no_rope_layers\": [1, 0]}"),
                       doctest::Contains("no_rope_layers: expected at least num_hidden_layers = 4 entries, got 2"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{" + l4 + "\"num_hidden_layers\": 4, \"no_rope_layer_interval\": 0}"),
                       doctest::Contains("no_rope_layer_interval: expected a positive integer, got 0"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{" + l4 + "\"num_hidden_layers\": 4, \"floor_scale\": 0}"),
                       doctest::Contains("floor_scale: expected a positive integer, got 0"), E);
  CHECK_THROWS_WITH_AS(pr::load_config("{" + l4 + "\"num_hidden_layers\": 4, \"rope_interleave\": false}"),
                       doctest::Contains("rope_interleave: false, which model_type \"llama4_text\" does not read"), E);
  // SmolLM3: an empty no_rope_layers is used as given by transformers (and fails there): refused
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "smollm3", "hidden_size": 2048, "num_attention_heads": 16,
                                         "num_hidden_layers": 4, "no_rope_layers": []})"),
                       doctest::Contains("no_rope_layers: expected at least num_hidden_layers = 4 entries, got 0"), E);
  // NoPE keys of a model type without NoPE layers are not understood
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "llama", "head_dim": 64, "no_rope_layer_interval": 4})"),
                       doctest::Contains("no_rope_layer_interval: not understood"), E);
  // Ministral 3: llama_4_scaling_beta is required by its attention; max_position_embeddings in the dict must agree
  const std::string m3 = R"({"model_type": "ministral3", "max_position_embeddings": 262144, "rope_parameters":
      {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 16384, "rope_theta": 1e6)";
  CHECK_THROWS_WITH_AS(pr::load_config(m3 + "}}"), doctest::Contains("rope_parameters.llama_4_scaling_beta: missing"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(m3 + R"(, "llama_4_scaling_beta": 0.1, "max_position_embeddings": 4096}})"),
                       doctest::Contains("rope_parameters.max_position_embeddings: expected the model's"), E);
  // llama_4_scaling_beta is a Ministral 3 key only
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "mistral", "head_dim": 128, "rope_parameters":
      {"rope_type": "default", "llama_4_scaling_beta": 0.1}})"),
                       doctest::Contains("rope_parameters.llama_4_scaling_beta: unknown key"), E);
  // Hunyuan: alpha turns dynamic into ntk_alpha, which reads config.head_dim (no fallback)
  const std::string hy = R"({"model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_attention_heads": 32,
      "max_position_embeddings": 32768, "rope_scaling": {"type": "dynamic", "factor": 1.0, "alpha": )";
  CHECK_THROWS_WITH_AS(pr::load_config(hy + "1000.0}}"), doctest::Contains("head_dim: missing, which Hunyuan's ntk_alpha"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(hy + "0}}"), doctest::Contains("rope_scaling.alpha: expected a value > 0"), E);
  // alpha and the keys ntk_alpha leaves unused are Hunyuan's only
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "llama", "head_dim": 128, "max_position_embeddings": 4096,
      "rope_scaling": {"type": "dynamic", "factor": 2.0, "alpha": 1000.0}})"),
                       doctest::Contains("rope_scaling.alpha: unknown key for rope_type 'dynamic'"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "hunyuan_v1_dense", "head_dim": 128,
      "max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2.0, "beta_fast": 32}})"),
                       doctest::Contains("rope_scaling.beta_fast: unknown key for rope_type 'dynamic'"), E);
  // DeepSeek V3.2 always rotates halves
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "deepseek_v32", "qk_rope_head_dim": 64, "rope_interleave": true})"),
                       doctest::Contains("rope_interleave: true, which model_type \"deepseek_v32\" does not read"), E);
  // OLMo 3's config class applies a legacy rope_scaling and rope_theta to its full-attention layers only
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "olmo3", "hidden_size": 4096, "num_attention_heads": 32,
      "rope_theta": 123456.0})"),
                       doctest::Contains("rope_theta: model_type \"olmo3\" applies it to its full-attention layers only"), E);
  CHECK(pr::load_config(R"({"model_type": "olmo3", "hidden_size": 4096, "num_attention_heads": 32})").main_plan().context().theta ==
        500000.0);
  // GLM-MoE-DSA: the class rejects a null qk_rope_head_dim (and replaces head_dim by it: models/glm-moe-dsa-head-dim.json)
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "glm_moe_dsa", "qk_rope_head_dim": null, "head_dim": 64})"),
                       doctest::Contains("qk_rope_head_dim: expected an integer, got null"), E);
  // OLMo Hybrid: layer_types given are used as given (the class default applies only when absent)
  {
    const auto m = pr::load_config(R"({"model_type": "olmo_hybrid", "hidden_size": 2048, "num_attention_heads": 16,
        "num_hidden_layers": 2, "layer_types": ["full_attention", "linear_attention"]})");
    CHECK(m.uses_rope(0));
    CHECK_FALSE(m.uses_rope(1));
  }
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "olmo_hybrid", "hidden_size": 2048, "num_attention_heads": 16})"),
                       doctest::Contains("num_hidden_layers: missing or 0 (and layer_types absent)"), E);
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "olmo_hybrid", "hidden_size": 2048, "num_attention_heads": 16,
      "num_hidden_layers": 2, "layer_types": ["full_attention", "full_attention"]})"),
                       doctest::Contains("layer_types: expected both linear_attention and attention layers"), E);
  // a model type without a row: rope_theta and head_dim must be given, partial under the default rule refused
  CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "newnet", "head_dim": 64})"), doctest::Contains("rope_theta: missing"), E);
  CHECK(pr::load_config(R"({"model_type": "newnet", "head_dim": 64, "rope_theta": 1e4})").main_plan().rotary_dim() == 64);
}

namespace {

std::string fmt_theta(double t) {
  if (t == 0) return "required";
  std::ostringstream o;
  o << t;
  return o.str();
}

/// The docs table of the model types, as the code's table gives it.
std::string model_table() {
  std::string out =
      "| model_type | default rope_theta | head_dim when absent | partial_rotary_factor under the default rule | NoPE "
      "layers | query scale | pairs | transformers 5.23 |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : pr::model_rules) {
    std::string hd = r.head_dim == pr::head_dim_source::required  ? "required"
                     : r.head_dim == pr::head_dim_source::derived ? "hidden_size / num_attention_heads"
                                                                   : std::to_string(r.default_head_dim) + " (null: derived)";
    std::string partial = r.default_rule_applies_partial ? "applied" : "ignored (whole head)";
    if (r.default_partial > 0) {
      std::ostringstream o;
      o << partial << ", default " << r.default_partial;
      partial = o.str();
    }
    const char* nope = r.nope == pr::nope_rule::llama4    ? "no_rope_layers, else every no_rope_layer_interval-th"
                       : r.nope == pr::nope_rule::smollm3 ? "no_rope_layers (null: every no_rope_layer_interval-th)"
                                                          : "—";
    const char* q = r.query_scale == pr::query_scale_rule::llama4_temperature
                        ? "temperature tuning on NoPE layers"
                    : r.query_scale == pr::query_scale_rule::llama4_scaling_beta ? "llama_4_scaling_beta"
                                                                                 : "—";
    const char* pairs = r.pairs == pr::pair_layout::interleaved              ? "interleaved"
                        : r.pairs == pr::pair_layout::interleaved_by_default ? "rope_interleave (default true)"
                        : r.pairs == pr::pair_layout::halves_always          ? "halves (always)"
                                                                             : "halves";
    out += "| `" + std::string(r.model_type) + "` | " + fmt_theta(r.default_theta) + " | " + hd + " | " + partial +
           " | " + nope + " | " + q + " | " + pairs + " | " + std::string(r.source) + " |\n";
  }
  return out;
}

}  // namespace

TEST_CASE("docs/extrapolation.md lists the model types of the code's table, row for row") {
  std::ifstream in(fs::path(POSENC_HF_REFERENCE_DIR) / ".." / ".." / ".." / "docs" / "extrapolation.md");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str(), table = model_table();
  INFO("expected table:\n", table);
  CHECK(doc.find(table) != std::string::npos);
}

TEST_CASE("census: every text model type of transformers 5.23 with RoPE is in posenc's table or refused by name") {
  // tests/rotary/hf/model_types.txt: scripts/gen_rope_model_reference.py --census, from the
  // transformers 5.23 of the pinned venv (model_type, configuration class, models/ dir, category)
  std::ifstream in(fs::path(POSENC_HF_REFERENCE_DIR) / "model_types.txt");
  REQUIRE(in.good());
  std::size_t text = 0, ruled = 0, refused = 0, other = 0;
  std::vector<std::string> census_types;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream ls(line);
    std::string mt, cls, dir, cat;
    REQUIRE((ls >> mt >> cls >> dir >> cat));
    CAPTURE(mt);
    census_types.push_back(mt);
    if (cat != "text") {
      CHECK((cat == "multi-axis" || cat == "non-text"));
      ++other;
      continue;
    }
    ++text;
    const pr::model_rule* r = pr::find_model_rule(mt);
    const pr::refused_model_type* x = pr::find_refused_model_type(mt);
    CHECK_MESSAGE((r != nullptr) != (x != nullptr), "a text model type needs exactly one of a rule row or a refusal");
    if (r != nullptr) ++ruled;
    if (x == nullptr) continue;
    ++refused;
    // the refusal names the class transformers decides it in, and load_config refuses it naming model_type,
    // whether flat or as a multimodal config's text_config
    CHECK(x->source.find(cls + " (models/" + dir + ":") == 0);
    const std::string cfg = R"({"model_type": ")" + mt + R"(", "head_dim": 64, "rope_theta": 10000.0})";
    const std::string flat = "model_type: \"" + mt + "\" is a transformers 5.23 model type",
                      nested = "text_config.model_type: \"" + mt + "\"";
    CHECK_THROWS_WITH_AS(pr::load_config(cfg), doctest::Contains(doctest::String(flat.c_str())), pr::config_error);
    CHECK_THROWS_WITH_AS(pr::load_config(R"({"model_type": "wrapper", "text_config": )" + cfg + "}"),
                         doctest::Contains(doctest::String(nested.c_str())), pr::config_error);
  }
  // every refusal is a census text type (none refuses a model type transformers does not list)
  for (const auto& x : pr::refused_model_types) {
    CAPTURE(x.model_type);
    CHECK(std::find(census_types.begin(), census_types.end(), std::string(x.model_type)) != census_types.end());
  }
  CHECK(refused == pr::refused_model_types.size());
  MESSAGE("census: ", text, " text model types (", ruled, " with a rule row, ", refused, " refused), ", other,
          " multi-axis or non-text");
  CHECK(text > 100);
}
