// SPDX-License-Identifier: MIT
// What a RoPE rule reads (posenc/rotary/rules/rules.hpp): the model's context (rope_context: theta,
// head_dim, partial_rotary_factor, the position lengths, whose transformers semantics), the error
// of a configuration (config_error), and param_reader, which reads one rope_parameters (or legacy
// rope_scaling) object of a config.json key by key, each wrong value a config_error naming the key.
#pragma once

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <posenc/core/error.hpp>
#include <posenc/io/json.hpp>

namespace posenc::rotary {

/// A config.json that is not valid JSON, lacks a required key, has a key that could change a
/// frequency and is not understood, or a value of the wrong type. The message names the key.
class config_error : public io_error {
 public:
  using io_error::io_error;
};

/// Whose rules a configuration follows: transformers 5.x (default) or transformers 4.46.
enum class semantics { transformers_5, transformers_4_46 };

/// "transformers_5" or "transformers_4_46".
constexpr std::string_view name(semantics s) noexcept {
  return s == semantics::transformers_4_46 ? "transformers_4_46" : "transformers_5";
}

/// The semantics of a name: "transformers_5" (or "v5"), "transformers_4_46" (or "t4.46"); nullopt otherwise.
constexpr std::optional<semantics> parse_semantics(std::string_view s) noexcept {
  if (s == "transformers_5" || s == "v5") return semantics::transformers_5;
  if (s == "transformers_4_46" || s == "t4.46") return semantics::transformers_4_46;
  return std::nullopt;
}

/// Where transformers 4.46 and 5 compute the rules differently: each difference is one member
/// here, the one place the rules consult the semantics (docs/extrapolation.md has the table).
struct semantics_differences {
  rotary::semantics version = semantics::transformers_5;
  /// yarn's correction range: 5 reads original_max_position_embeddings (the model's, then
  /// rope_parameters', then max_position_embeddings); 4.46 takes max_position_embeddings.
  [[nodiscard]] constexpr bool yarn_length_from_original() const noexcept { return v5(); }
  /// yarn's beta_fast / beta_slow given as 0: 5 takes the defaults (32, 1); 4.46 takes the 0.
  [[nodiscard]] constexpr bool yarn_zero_beta_is_default() const noexcept { return v5(); }
  /// yarn without factor: 5 derives max_position_embeddings / L0; 4.46 needs a factor.
  [[nodiscard]] constexpr bool yarn_factor_may_be_absent() const noexcept { return v5(); }
  /// yarn's truncate, mscale and mscale_all_dim: 5 reads them; 4.46 does not know them.
  [[nodiscard]] constexpr bool yarn_reads_truncate_and_mscale() const noexcept { return v5(); }
  /// yarn's attention factor when attention_factor is absent: 5's get_mscale (with the mscale /
  /// mscale_all_dim ratio); 4.46's 0.1 ln(factor) + 1.
  [[nodiscard]] constexpr bool yarn_attention_by_get_mscale() const noexcept { return v5(); }
  /// longrope: 5 falls back to max_position_embeddings for L0, takes the regime seq_len > L0 and
  /// the factor's attention factor; 4.46 has the init_function / phi3_module rules.
  [[nodiscard]] constexpr bool longrope_by_factor() const noexcept { return v5(); }
  /// llama3's L0: 5 the model's original_max_position_embeddings first and max_position_embeddings
  /// last; 4.46 rope_parameters' own only.
  [[nodiscard]] constexpr bool llama3_length_model_level() const noexcept { return v5(); }
  /// the proportional rule: in 5 only.
  [[nodiscard]] constexpr bool has_proportional() const noexcept { return v5(); }

 private:
  [[nodiscard]] constexpr bool v5() const noexcept { return version == semantics::transformers_5; }
};

/// How LongRoPE picks its factors and attention factor from the sequence length L0 =
/// original_max_position_embeddings under transformers 4.46 (transformers 5 has one rule, the
/// second):
///  - init_function (4.46's _compute_longrope_parameters): short factors and attention factor 1
///    when seq_len < L0, long factors and the scaled attention factor otherwise;
///  - phi3_module (the Phi-3 modelling code's LongRoPE rotary module, and transformers 5): long
///    factors only when seq_len > L0; the attention factor of the long regime always.
enum class longrope_rule { init_function, phi3_module };

/// The model's fields every rule reads (besides its own parameters).
struct rope_context {
  double theta = 10000.0;                         ///< rope_theta (> 1)
  std::size_t head_dim = 0;                       ///< head_dim (>= 2)
  double partial_rotary_factor = 1.0;             ///< in (0, 1]
  std::size_t max_position_embeddings = 0;        ///< 0: absent
  /// The model-level original_max_position_embeddings (Phi-3's top-level field; transformers 5
  /// lets it override rope_parameters' own for llama3, yarn and longrope). 0: absent.
  std::size_t original_max_position_embeddings = 0;
  rotary::semantics semantics = semantics::transformers_5;
  bool operator==(const rope_context&) const = default;
  /// What the semantics change (the one place; semantics_differences).
  [[nodiscard]] constexpr semantics_differences differences() const noexcept { return {semantics}; }
};

namespace detail {

template <class... Parts>
[[noreturn]] void config_fail(const Parts&... parts) {
  posenc::detail::fail<config_error>("rotary::load_config", parts...);
}

inline double json_number(const io::json::value& v, std::string_view key) {
  if (!v.is_number()) config_fail(key, ": expected a number, got a JSON value of another type");
  double x = 0;
  const std::string_view t = v.text();
  const char* b = t.data();
  const auto [p, ec] = std::from_chars(b, b + t.size(), x);
  if (ec != std::errc() || p != b + t.size() || !std::isfinite(x)) config_fail(key, ": expected a finite number, got ", t);
  return x;
}

inline std::size_t json_count(const io::json::value& v, std::string_view key) {
  const auto u = v.is_number() ? v.as_u64() : std::nullopt;
  if (!u || *u > (std::uint64_t{1} << 53))
    config_fail(key, ": expected a non-negative integer, got ", v.is_number() ? v.text() : std::string_view("a non-number"));
  return static_cast<std::size_t>(*u);
}

}  // namespace detail

/// Reads one rope_parameters (or rope_scaling) object for a rule; `prefix` names the object in
/// messages ("rope_parameters", "rope_parameters.full_attention", "rope_scaling"). A JSON null is
/// "absent"; a value of the wrong type is a config_error naming prefix.key.
class param_reader {
 public:
  /// obj: the object, or nullopt for "no object" (every key absent).
  param_reader(std::optional<io::json::value> obj, std::string prefix, std::string_view rope_type)
      : m_obj(obj), m_prefix(std::move(prefix)), m_type(rope_type) {}

  [[nodiscard]] std::string key_name(std::string_view key) const { return m_prefix + "." + std::string(key); }
  [[nodiscard]] bool has(std::string_view key) const {
    const auto v = m_obj ? m_obj->find(key) : std::nullopt;
    return v && v->type() != io::json::kind::null;
  }
  [[nodiscard]] std::optional<double> number(std::string_view key) const {
    const auto v = m_obj ? m_obj->find(key) : std::nullopt;
    if (!v || v->type() == io::json::kind::null) return std::nullopt;
    return detail::json_number(*v, key_name(key));
  }
  [[nodiscard]] std::optional<std::size_t> count(std::string_view key) const {
    const auto v = m_obj ? m_obj->find(key) : std::nullopt;
    if (!v || v->type() == io::json::kind::null) return std::nullopt;
    return detail::json_count(*v, key_name(key));
  }
  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const {
    const auto v = m_obj ? m_obj->find(key) : std::nullopt;
    if (!v || v->type() == io::json::kind::null) return std::nullopt;
    if (v->type() != io::json::kind::boolean) detail::config_fail(key_name(key), ": expected true or false");
    return v->boolean();
  }
  [[nodiscard]] std::optional<std::vector<double>> numbers(std::string_view key) const {
    const auto v = m_obj ? m_obj->find(key) : std::nullopt;
    if (!v || v->type() == io::json::kind::null) return std::nullopt;
    if (!v->is_array()) detail::config_fail(key_name(key), ": expected an array of numbers");
    std::vector<double> out;
    out.reserve(v->size());
    v->for_each_item([&](const io::json::value& item) {
      // The item's name ("short_factor[3]") is formed only for the error message: 10^6-item lists
      // stay linear with a small constant (docs/reliability.md, readers at scale).
      double x = 0;
      const std::string_view t = item.is_number() ? item.text() : std::string_view();
      const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), x);
      if (t.empty() || ec != std::errc() || p != t.data() + t.size() || !std::isfinite(x))
        x = detail::json_number(item, key_name(key) + "[" + std::to_string(out.size()) + "]");  // throws
      out.push_back(x);
    });
    return out;
  }
  /// The value of a key the rule requires.
  [[nodiscard]] double required_number(std::string_view key) const {
    const auto v = number(key);
    if (!v) detail::config_fail(key_name(key), ": missing (required by rope_type '", m_type, "')");
    return *v;
  }
  [[nodiscard]] std::vector<double> required_numbers(std::string_view key) const {
    auto v = numbers(key);
    if (!v) detail::config_fail(key_name(key), ": missing (required by rope_type '", m_type, "')");
    return std::move(*v);
  }

 private:
  std::optional<io::json::value> m_obj;
  std::string m_prefix;
  std::string_view m_type;
};

}  // namespace posenc::rotary
