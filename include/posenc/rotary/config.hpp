// SPDX-License-Identifier: MIT
// The rotary (and ALiBi) configuration of a model from its Hugging Face config.json: rope_theta,
// the rope_scaling dict (rope_type, or the legacy `type` key), head_dim or hidden_size /
// num_attention_heads, partial_rotary_factor, max_position_embeddings and Phi-3's top-level
// original_max_position_embeddings. Unknown keys inside rope_scaling, unknown rope types,
// missing required keys and values of the wrong JSON type are each a rotary::config_error
// naming the key; the resulting rope_config is then validated (rotary::validate).
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/io/json.hpp>
#include <posenc/rotary/scaling.hpp>

namespace posenc::rotary {

/// A config.json that is not valid JSON, lacks a required key, has an unknown key in rope_scaling
/// or a value of the wrong type. The message names the key.
class config_error : public io_error {
 public:
  using io_error::io_error;
};

/// What a config.json says about positions.
struct model_config {
  rope_config rope;                       ///< validated; rope.type == default_rope without rope_scaling
  std::size_t num_attention_heads = 0;    ///< 0 if absent
  std::size_t num_key_value_heads = 0;    ///< 0 if absent (then equal to num_attention_heads in HF)
  bool alibi = false;                     ///< "alibi": true (BLOOM-style) or attn_config.alibi (MPT)
};

namespace detail {

using json_value = posenc::io::json::value;
using json_kind = posenc::io::json::kind;
using json_found = std::optional<json_value>;

template <class... Parts>
[[noreturn]] void config_fail(const Parts&... parts) {
  posenc::detail::fail<config_error>("rotary::load_config", parts...);
}

inline bool present(const json_found& v) { return v.has_value() && v->type() != json_kind::null; }

inline double json_number(const json_value& v, std::string_view key) {
  if (!v.is_number()) config_fail(key, ": expected a number, got a JSON value of another type");
  double x = 0;
  const std::string_view t = v.text();
  const char* b = t.data();
  const auto [p, ec] = std::from_chars(b, b + t.size(), x);
  if (ec != std::errc() || p != b + t.size() || !std::isfinite(x))
    config_fail(key, ": expected a finite number, got ", t);
  return x;
}

inline std::size_t json_count(const json_value& v, std::string_view key) {
  const auto u = v.is_number() ? v.as_u64() : std::nullopt;
  if (!u || *u > (std::uint64_t{1} << 53)) config_fail(key, ": expected a non-negative integer, got ", v.is_number() ? v.text() : std::string_view("a non-number"));
  return static_cast<std::size_t>(*u);
}

inline std::vector<double> json_numbers(const json_value& v, std::string_view key) {
  if (!v.is_array()) config_fail(key, ": expected an array of numbers");
  std::vector<double> out;
  out.reserve(v.size());
  std::size_t i = 0;
  v.for_each_item([&](const json_value& item) {
    // The item's name ("short_factor[3]") is formed only for the error message.
    double x = 0;
    const std::string_view t = item.is_number() ? item.text() : std::string_view();
    const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size() || !std::isfinite(x))
      x = json_number(item, std::string(key) + "[" + std::to_string(i) + "]");  // throws
    out.push_back(x);
    ++i;
  });
  return out;
}

/// The rope_scaling keys each rule accepts (besides rope_type / type).
inline bool known_scaling_key(rope_type t, std::string_view k) {
  const auto in = [&](std::initializer_list<std::string_view> ks) {
    for (auto s : ks)
      if (k == s) return true;
    return false;
  };
  switch (t) {
    case rope_type::default_rope: return false;
    case rope_type::linear:
    case rope_type::ntk: return in({"factor"});
    case rope_type::dynamic: return in({"factor", "original_max_position_embeddings"});
    case rope_type::yarn:
      return in({"factor", "attention_factor", "beta_fast", "beta_slow", "original_max_position_embeddings", "mscale",
                 "mscale_all_dim"});
    case rope_type::longrope:
      return in({"short_factor", "long_factor", "factor", "attention_factor", "original_max_position_embeddings"});
    case rope_type::llama3:
      return in({"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"});
  }
  return false;
}

}  // namespace detail

/// The positional configuration of a config.json text. head_dim comes from "head_dim" when
/// present (and not null), else hidden_size / num_attention_heads. rope_theta defaults to 10000
/// when absent (as HF's LlamaConfig). Throws config_error (bad JSON, missing/unknown key, wrong
/// type) or the invalid_argument of rotary::validate (a value out of range).
inline model_config load_config(std::string_view json_text, longrope_rule rule = longrope_rule::init_function) {
  using detail::config_fail;
  using detail::present;
  const auto doc = posenc::io::json::parse(
      json_text, [](std::size_t off, std::string_view msg) { config_fail("bad JSON at offset ", off, ": ", msg); },
      std::size_t{1} << 20);
  const detail::json_value root = doc.root();
  if (!root.is_object()) config_fail("config.json: expected a JSON object at the top level");
  model_config m;
  rope_config& c = m.rope;
  c.longrope_switch = rule;
  const auto heads = root.find("num_attention_heads");
  if (present(heads)) m.num_attention_heads = detail::json_count(*heads, "num_attention_heads");
  if (const auto kv = root.find("num_key_value_heads"); present(kv))
    m.num_key_value_heads = detail::json_count(*kv, "num_key_value_heads");
  if (const auto a = root.find("alibi"); a && a->type() == detail::json_kind::boolean) m.alibi = a->boolean();
  if (const auto ac = root.find("attn_config"); ac && ac->is_object())
    if (const auto a = ac->find("alibi"); a && a->type() == detail::json_kind::boolean) m.alibi = a->boolean();

  if (const auto hd = root.find("head_dim"); present(hd)) {
    c.head_dim = detail::json_count(*hd, "head_dim");
  } else {
    const auto hidden = root.find("hidden_size");
    if (!present(hidden)) config_fail("head_dim: missing (and hidden_size is missing too, so it cannot be derived)");
    if (!present(heads)) config_fail("head_dim: missing (and num_attention_heads is missing too, so it cannot be derived)");
    const std::size_t hs = detail::json_count(*hidden, "hidden_size");
    if (m.num_attention_heads == 0) config_fail("num_attention_heads: expected a positive integer, got 0");
    c.head_dim = hs / m.num_attention_heads;  // HF: hidden_size // num_attention_heads
  }
  if (const auto t = root.find("rope_theta"); present(t)) c.theta = detail::json_number(*t, "rope_theta");
  if (const auto p = root.find("partial_rotary_factor"); present(p))
    c.partial_rotary_factor = detail::json_number(*p, "partial_rotary_factor");
  if (const auto mp = root.find("max_position_embeddings"); present(mp))
    c.max_position_embeddings = detail::json_count(*mp, "max_position_embeddings");
  std::size_t top_original = 0;
  if (const auto o = root.find("original_max_position_embeddings"); present(o))
    top_original = detail::json_count(*o, "original_max_position_embeddings");

  const auto rs = root.find("rope_scaling");
  if (!present(rs)) {
    validate(c);
    return m;
  }
  if (!rs->is_object()) config_fail("rope_scaling: expected an object or null");
  auto rt = rs->find("rope_type");
  if (!present(rt)) rt = rs->find("type");  // legacy key
  if (!present(rt)) config_fail("rope_scaling.rope_type: missing (neither \"rope_type\" nor the legacy \"type\" is given)");
  if (!rt->is_string()) config_fail("rope_scaling.rope_type: expected a string");
  const auto type = parse_rope_type(rt->text());
  if (!type)
    config_fail("rope_scaling.rope_type: unknown rope_type \"", rt->text(),
                "\" (expected default, linear, ntk, dynamic, yarn, longrope (or su), llama3)");
  c.type = *type;
  rs->for_each_member([&](std::string_view k, const detail::json_value&) {
    if (k == "rope_type" || k == "type") return;
    if (!detail::known_scaling_key(c.type, k))
      config_fail("rope_scaling.", k, ": unknown key for rope_type '", name(c.type), "'");
  });
  const auto number = [&](std::string_view key, bool required) -> std::optional<double> {
    const auto v = rs->find(key);
    if (!present(v)) {
      if (required) config_fail("rope_scaling.", key, ": missing (required by rope_type '", name(c.type), "')");
      return std::nullopt;
    }
    return detail::json_number(*v, std::string("rope_scaling.") + std::string(key));
  };
  const auto count = [&](std::string_view key, bool required) -> std::size_t {
    const auto v = rs->find(key);
    if (!present(v)) {
      if (required) config_fail("rope_scaling.", key, ": missing (required by rope_type '", name(c.type), "')");
      return 0;
    }
    return detail::json_count(*v, std::string("rope_scaling.") + std::string(key));
  };
  switch (c.type) {
    case rope_type::default_rope: break;
    case rope_type::linear:
    case rope_type::ntk:
    case rope_type::dynamic:
      c.factor = *number("factor", true);
      break;  // dynamic: original_max_position_embeddings is accepted and not used (as HF 4.46)
    case rope_type::yarn:
      c.factor = *number("factor", true);
      c.attention_factor = number("attention_factor", false);
      c.beta_fast = number("beta_fast", false).value_or(32.0);
      c.beta_slow = number("beta_slow", false).value_or(1.0);
      c.mscale = number("mscale", false);
      c.mscale_all_dim = number("mscale_all_dim", false);
      c.original_max_position_embeddings = count("original_max_position_embeddings", false);
      break;
    case rope_type::longrope: {
      for (std::string_view key : {"short_factor", "long_factor"})
        if (!present(rs->find(key))) config_fail("rope_scaling.", key, ": missing (required by rope_type 'longrope')");
      c.short_factor = detail::json_numbers(*rs->find("short_factor"), "rope_scaling.short_factor");
      c.long_factor = detail::json_numbers(*rs->find("long_factor"), "rope_scaling.long_factor");
      c.attention_factor = number("attention_factor", false);
      c.original_max_position_embeddings =
          top_original > 0 ? top_original : count("original_max_position_embeddings", false);
      c.factor = number("factor", c.original_max_position_embeddings == 0).value_or(1.0);
      break;
    }
    case rope_type::llama3:
      c.factor = *number("factor", true);
      c.low_freq_factor = *number("low_freq_factor", true);
      c.high_freq_factor = *number("high_freq_factor", true);
      c.original_max_position_embeddings = count("original_max_position_embeddings", true);
      break;
  }
  validate(c);
  return m;
}

}  // namespace posenc::rotary
