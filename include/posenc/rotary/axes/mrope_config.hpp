// SPDX-License-Identifier: MIT
// The M-RoPE of a vision-language model from its config.json, as transformers 5.23 reads it:
//
//   const rotary::mrope_model m = rotary::load_mrope_config(text);
//   rotary::apply_inplace(q, k, m.freqs, rotary::axis_positions(ids, 3), {.layout = m.layout});
//
// Read: model_type (top level; a text_config's own model_type does not replace it), the language
// model's fields from text_config when present, else the top level: rope_parameters (or the legacy
// rope_scaling with the top-level rope_theta), its mrope_section (transformers' per-model default
// when absent), mrope_interleaved, partial_rotary_factor (rope_parameters, else the text config's
// top level; GLM-4.5V's default 0.5), head_dim (else hidden_size / num_attention_heads); and from
// vision_config spatial_merge_size, temporal_merge_size (ERNIE) and tokens_per_second (Qwen2.5-VL).
//
// Known model types (rotary/mrope.hpp for the layouts): qwen2_vl, qwen2_5_vl (sections, half),
// qwen3_vl, qwen3_vl_moe (interleaved, half), glm4v (sections, interleaved pairs, partial rotary),
// glm4v_moe (sections, half: transformers' rotate_half, partial rotary), ernie4_5_vl_moe (ernie,
// interleaved pairs), hunyuan_vl (xdrope: split-half, 3 or 4 axes from mrope_section or the legacy
// xdrope_section, which it requires; rope_type "xdrope" or "dynamic" with alpha is transformers'
// ntk_alpha: the base theta * alpha^(d / (d - 2)) in double as Python forms it). Refused with a
// config_error naming the key: any other model type, a rope_type other than "default" (or the
// legacy "mrope"; HunYuan-VL's above), mrope_interleaved contradicting the model's
// layout, a section that does not sum to rotary_dim / 2, a missing rope_theta, a key of the rope
// object posenc does not know.
#pragma once

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/io/json.hpp>
#include <posenc/rotary/apply_plan.hpp>
#include <posenc/rotary/axes/axes.hpp>
#include <posenc/rotary/frequencies.hpp>
#include <posenc/rotary/axes/mrope.hpp>
#include <posenc/rotary/rules/rule_params.hpp>

namespace posenc::rotary {

/// What a vision-language config.json says about its M-RoPE.
struct mrope_model {
  std::string model_type;
  axis_frequencies freqs;                 ///< three axes (t, h, w; hunyuan_vl: one per section entry, split-half), the default frequencies of rotary_dim
  rotary::layout layout = layout::half;   ///< pair layout of the model's apply_rotary_pos_emb
  std::size_t head_dim = 0;               ///< columns of a head (rotary_dim = 2 * pairs <= head_dim)
  mrope_style style = mrope_style::sections;
  std::vector<std::size_t> section;       ///< mrope_section as read (or the model's default)
  rope_index_options index;               ///< the get_rope_index constants of the vision config
};

namespace detail {

template <class... Parts>
[[noreturn]] void mrope_config_fail(const Parts&... parts) {
  posenc::detail::fail<config_error>("rotary::load_mrope_config", parts...);
}

inline bool mrope_present(const std::optional<io::json::value>& v) {
  return v.has_value() && v->type() != io::json::kind::null;
}

inline double mrope_number(const io::json::value& v, std::string_view key) {
  if (!v.is_number()) mrope_config_fail(key, ": expected a number, got a JSON value of another type");
  double x = 0;
  const std::string_view t = v.text();
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
  if (ec != std::errc() || p != t.data() + t.size() || !std::isfinite(x))
    mrope_config_fail(key, ": expected a finite number, got ", t);
  return x;
}

inline std::size_t mrope_count(const io::json::value& v, std::string_view key, std::size_t max) {
  const auto u = v.is_number() ? v.as_u64() : std::nullopt;
  if (!u || *u > max)
    mrope_config_fail(key, ": expected an integer in 0 .. ", max, ", got ",
                      v.is_number() ? v.text() : std::string_view("a non-number"));
  return static_cast<std::size_t>(*u);
}

/// The model types read, their layout and transformers' default mrope_section.
struct mrope_model_kind {
  std::string_view type;
  mrope_style style;
  rotary::layout layout;
  std::array<std::size_t, 3> default_section;
  bool split_video_frames;
  double default_partial;  // partial_rotary_factor when absent
};

inline constexpr std::array<mrope_model_kind, 8> mrope_models{{
    {"qwen2_vl", mrope_style::sections, layout::half, {16, 24, 24}, false, 1.0},
    {"qwen2_5_vl", mrope_style::sections, layout::half, {16, 24, 24}, false, 1.0},
    {"qwen3_vl", mrope_style::interleaved, layout::half, {24, 20, 20}, true, 1.0},
    {"qwen3_vl_moe", mrope_style::interleaved, layout::half, {24, 20, 20}, true, 1.0},
    {"glm4v", mrope_style::sections, layout::interleaved, {8, 12, 12}, true, 1.0},
    {"glm4v_moe", mrope_style::sections, layout::half, {8, 12, 12}, true, 0.5},
    {"ernie4_5_vl_moe", mrope_style::ernie, layout::interleaved, {22, 22, 20}, false, 1.0},
    {"hunyuan_vl", mrope_style::xdrope, layout::half, {0, 0, 0}, false, 1.0},  // no default: mrope_section required
}};

}  // namespace detail

/// Read the M-RoPE of a vision-language config.json (see the file comment). Throws
/// rotary::config_error naming the key.
inline mrope_model load_mrope_config(std::string_view json_text) {
  using detail::mrope_config_fail;
  using detail::mrope_present;
  const auto doc = io::json::parse(
      json_text, [](std::size_t off, std::string_view msg) { mrope_config_fail("bad JSON at offset ", off, ": ", msg); },
      std::size_t{1} << 20);
  const io::json::value top = doc.root();
  if (!top.is_object()) mrope_config_fail("config.json: expected a JSON object at the top level");
  mrope_model m;
  const auto mt = top.find("model_type");
  if (!mrope_present(mt) || !mt->is_string()) mrope_config_fail("model_type: expected a string naming the model");
  m.model_type = std::string(mt->text());
  const detail::mrope_model_kind* kind = nullptr;
  for (const auto& k : detail::mrope_models)
    if (k.type == m.model_type) kind = &k;
  if (kind == nullptr)
    mrope_config_fail("model_type: expected a known M-RoPE model (qwen2_vl, qwen2_5_vl, qwen3_vl, qwen3_vl_moe, glm4v, "
                      "glm4v_moe, ernie4_5_vl_moe, hunyuan_vl), got \"", m.model_type, "\"");
  const bool xd = kind->style == mrope_style::xdrope;
  io::json::value text = top;
  std::string prefix;
  if (const auto tc = top.find("text_config"); mrope_present(tc)) {
    if (!tc->is_object()) mrope_config_fail("text_config: expected an object");
    text = *tc;
    prefix = "text_config.";
  }
  // the rope object: rope_parameters, else the legacy rope_scaling
  std::optional<io::json::value> rope;
  std::string rope_name;
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (const auto r = text.find(key); !rope && mrope_present(r)) {
      if (!r->is_object()) mrope_config_fail(prefix, key, ": expected an object");
      rope = r;
      rope_name = prefix + key;
    }
  }
  double theta = 0;
  bool have_theta = false;
  std::optional<bool> interleaved;
  std::optional<double> partial;
  std::optional<double> alpha;
  std::string rope_type = "default";
  std::vector<std::size_t> legacy_section;
  if (rope) {
    rope->for_each_member([&](std::string_view k, io::json::value v) {
      const std::string name = rope_name + "." + std::string(k);
      if (v.type() == io::json::kind::null) return;
      if ((k == "rope_type" || k == "type") && xd) {
        if (!v.is_string() || (v.text() != "default" && v.text() != "xdrope" && v.text() != "dynamic"))
          mrope_config_fail(name, ": expected \"default\", \"xdrope\" or \"dynamic\" (with alpha) for hunyuan_vl, got ",
                            v.is_string() ? v.text() : std::string_view("a non-string"));
        rope_type = std::string(v.text());
      } else if (k == "alpha" && xd) {
        alpha = detail::mrope_number(v, name);
      } else if (k == "factor" && xd) {
        (void)detail::mrope_number(v, name);  // required by transformers' "dynamic" validation, unused by ntk_alpha
      } else if (k == "xdrope_section" && xd) {
        if (!v.is_array() || v.size() == 0 || v.size() > 16) mrope_config_fail(name, ": expected an array of 1 .. 16 counts");
        for (std::size_t i = 0; i < v.size(); ++i)
          legacy_section.push_back(detail::mrope_count(v.item(i), name, 1u << 16));
      } else if (k == "rope_type" || k == "type") {
        if (!v.is_string() || (v.text() != "default" && v.text() != "mrope"))
          mrope_config_fail(name, ": expected \"default\" (the rule of these models; posenc reads no other with "
                                  "M-RoPE), got ", v.is_string() ? v.text() : std::string_view("a non-string"));
      } else if (k == "rope_theta") {
        theta = detail::mrope_number(v, name);
        have_theta = true;
      } else if (k == "mrope_section") {
        if (!v.is_array() || v.size() == 0 || v.size() > 16) mrope_config_fail(name, ": expected an array of 1 .. 16 counts");
        for (std::size_t i = 0; i < v.size(); ++i) m.section.push_back(detail::mrope_count(v.item(i), name, 1u << 16));
      } else if (k == "mrope_interleaved") {
        if (v.type() != io::json::kind::boolean) mrope_config_fail(name, ": expected true or false");
        interleaved = v.boolean();
      } else if (k == "partial_rotary_factor") {
        partial = detail::mrope_number(v, name);
      } else {
        mrope_config_fail(name, ": a key of the rope parameters posenc does not read with M-RoPE (it could change a "
                                "frequency)");
      }
    });
  }
  if (!have_theta)
    if (const auto t = text.find("rope_theta"); mrope_present(t)) {
      theta = detail::mrope_number(*t, prefix + "rope_theta");
      have_theta = true;
    }
  if (!have_theta) mrope_config_fail(rope_name.empty() ? prefix + "rope_parameters" : rope_name, ".rope_theta: expected a number, got none");
  if (!(theta > 1)) mrope_config_fail("rope_theta: expected a value > 1, got ", theta);
  if (!partial)
    if (const auto p = text.find("partial_rotary_factor"); mrope_present(p))
      partial = detail::mrope_number(*p, prefix + "partial_rotary_factor");
  const double prf = partial.value_or(kind->default_partial);
  if (!(prf > 0 && prf <= 1)) mrope_config_fail("partial_rotary_factor: expected a value in (0, 1], got ", prf);
  if (const auto hd = text.find("head_dim"); mrope_present(hd)) {
    m.head_dim = detail::mrope_count(*hd, prefix + "head_dim", std::size_t{1} << 16);
  } else {
    const auto hs = text.find("hidden_size"), nh = text.find("num_attention_heads");
    if (!mrope_present(hs) || !mrope_present(nh))
      mrope_config_fail(prefix, "head_dim: expected head_dim, or hidden_size and num_attention_heads, got neither");
    const std::size_t h = detail::mrope_count(*hs, prefix + "hidden_size", std::size_t{1} << 30);
    const std::size_t n = detail::mrope_count(*nh, prefix + "num_attention_heads", std::size_t{1} << 20);
    if (n == 0) mrope_config_fail(prefix, "num_attention_heads: expected a count >= 1, got 0");
    m.head_dim = h / n;
    if (m.head_dim > (std::size_t{1} << 16)) mrope_config_fail(prefix, "hidden_size / num_attention_heads: expected at most 65536");
  }
  const auto rotary_dim = static_cast<std::size_t>(static_cast<double>(m.head_dim) * prf);  // int(head_dim * factor)
  if (rotary_dim < 2 || rotary_dim % 2 != 0)
    mrope_config_fail(prefix, "head_dim * partial_rotary_factor: expected an even rotary width >= 2, got ", rotary_dim);
  m.style = kind->style;
  m.layout = kind->layout;
  const bool model_interleaves = kind->style == mrope_style::interleaved;
  if (interleaved && *interleaved != model_interleaves && kind->style != mrope_style::ernie)
    mrope_config_fail(rope_name, ".mrope_interleaved: ", *interleaved ? "true" : "false", " contradicts ", m.model_type,
                      ", whose apply ", model_interleaves ? "interleaves" : "does not interleave", " the axes");
  if (xd) {
    if (!legacy_section.empty() && !m.section.empty() && legacy_section != m.section)
      mrope_config_fail(rope_name, ".xdrope_section: expected the same counts as mrope_section when both are given");
    if (m.section.empty()) m.section = legacy_section;
    if (m.section.empty())
      mrope_config_fail(rope_name.empty() ? prefix + "rope_parameters" : rope_name,
                        ".mrope_section: expected the sections of hunyuan_vl, got none");
    if (m.section.size() < 3 || m.section.size() > max_axes)
      mrope_config_fail(rope_name, ".mrope_section: expected 3 or 4 entries for hunyuan_vl, got ", m.section.size());
    if (rope_type != "default") {
      if (!alpha || !(*alpha > 0))
        mrope_config_fail(rope_name, ".alpha: expected a value > 0 with rope_type \"", rope_type,
                          "\" (transformers' ntk_alpha; dynamic NTK without alpha is not read), got ",
                          alpha ? std::to_string(*alpha) : std::string("none"));
      // transformers: base = rope_theta * alpha ** (dim / (dim - 2)) in Python floats, dim = head_dim
      const double d = static_cast<double>(m.head_dim);
      theta = theta * std::pow(*alpha, d / (d - 2));
      if (!(theta > 1) || !std::isfinite(theta))
        mrope_config_fail(rope_name, ".alpha: expected rope_theta * alpha^(d / (d - 2)) finite and > 1, got ", theta);
    } else if (alpha) {
      mrope_config_fail(rope_name, ".alpha: read only with rope_type \"xdrope\" or \"dynamic\"");
    }
  }
  if (m.section.empty()) m.section.assign(kind->default_section.begin(), kind->default_section.end());
  try {
    m.freqs = mrope_axes(default_frequencies(rotary_dim, theta), m.section, m.style);
  } catch (const posenc::invalid_argument& e) {
    mrope_config_fail(rope_name.empty() ? std::string("mrope_section") : rope_name + ".mrope_section", ": ", e.what());
  }
  m.index.split_video_frames = kind->split_video_frames;
  // the vision_config class defaults of transformers 5.23, then the file's values
  if (kind->style == mrope_style::ernie) m.index.temporal_merge_size = 2;
  if (m.model_type == "qwen2_5_vl") m.index.tokens_per_second = 4;
  if (const auto vc = top.find("vision_config"); mrope_present(vc) && vc->is_object()) {
    if (const auto s = vc->find("spatial_merge_size"); mrope_present(s))
      m.index.spatial_merge_size = detail::mrope_count(*s, "vision_config.spatial_merge_size", 1u << 10);
    if (const auto s = vc->find("temporal_merge_size"); mrope_present(s) && kind->style == mrope_style::ernie)
      m.index.temporal_merge_size = detail::mrope_count(*s, "vision_config.temporal_merge_size", 1u << 10);
    if (const auto s = vc->find("tokens_per_second"); mrope_present(s) && m.model_type == "qwen2_5_vl")
      m.index.tokens_per_second = detail::mrope_number(*s, "vision_config.tokens_per_second");
    if (m.index.tokens_per_second < 0) mrope_config_fail("vision_config.tokens_per_second: expected a value >= 0");
  }
  if (m.index.spatial_merge_size == 0 || m.index.temporal_merge_size == 0)
    mrope_config_fail("vision_config.spatial_merge_size/temporal_merge_size: expected >= 1");
  return m;
}

}  // namespace posenc::rotary
