// SPDX-License-Identifier: MIT
// rotary::RopeRule: every rule of the rule table satisfies it, and a type that misses any one
// part of the interface (name, keys, aliases, depends_on_seq_len, parse, validate, rotary_dim,
// compute with its result type, equality) does not, so rule_types refuses it where it is named.
#include <doctest/doctest.h>

#include <cstddef>
#include <string_view>
#include <type_traits>

#include <posenc/rotary.hpp>

namespace pr = posenc::rotary;

namespace rule_concept_test {

// A well-formed rule, then one variant per missing or malformed part.
struct good : pr::rules::rule_base {
  bool operator==(const good&) const = default;
  static constexpr std::string_view name = "good";
  static constexpr std::array<std::string_view, 1> keys{"factor"};
  static good parse(const pr::param_reader&) { return {}; }
  void validate(const pr::rope_context&, std::string_view) const {}
  [[nodiscard]] pr::exact_frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};
struct no_name : pr::rules::rule_base {
  bool operator==(const no_name&) const = default;
  static constexpr std::array<std::string_view, 0> keys{};
  static no_name parse(const pr::param_reader&) { return {}; }
  void validate(const pr::rope_context&, std::string_view) const {}
  [[nodiscard]] pr::exact_frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};
struct no_keys : pr::rules::rule_base {
  bool operator==(const no_keys&) const = default;
  static constexpr std::string_view name = "no_keys";
  static no_keys parse(const pr::param_reader&) { return {}; }
  void validate(const pr::rope_context&, std::string_view) const {}
  [[nodiscard]] pr::exact_frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};
struct no_parse : pr::rules::rule_base {
  bool operator==(const no_parse&) const = default;
  static constexpr std::string_view name = "no_parse";
  static constexpr std::array<std::string_view, 0> keys{};
  void validate(const pr::rope_context&, std::string_view) const {}
  [[nodiscard]] pr::exact_frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};
struct no_validate : pr::rules::rule_base {
  bool operator==(const no_validate&) const = default;
  static constexpr std::string_view name = "no_validate";
  static constexpr std::array<std::string_view, 0> keys{};
  static no_validate parse(const pr::param_reader&) { return {}; }
  [[nodiscard]] pr::exact_frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};
struct compute_returns_frequencies : pr::rules::rule_base {  // the rounded type, not the exact one
  bool operator==(const compute_returns_frequencies&) const = default;
  static constexpr std::string_view name = "wrong_result";
  static constexpr std::array<std::string_view, 0> keys{};
  static compute_returns_frequencies parse(const pr::param_reader&) { return {}; }
  void validate(const pr::rope_context&, std::string_view) const {}
  [[nodiscard]] pr::frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};
struct parse_of_base : good {};  // inherits good::parse, which makes a good, not a parse_of_base
struct no_equality {
  static constexpr std::string_view name = "no_equality";
  static constexpr std::array<std::string_view, 0> keys{}, aliases{};
  static constexpr bool depends_on_seq_len = false;
  static std::size_t rotary_dim(const pr::rope_context&) { return 2; }
  static no_equality parse(const pr::param_reader&) { return {}; }
  void validate(const pr::rope_context&, std::string_view) const {}
  [[nodiscard]] pr::exact_frequencies compute(const pr::rope_context&, std::size_t) const { return {}; }
};

}  // namespace rule_concept_test

using namespace rule_concept_test;

TEST_CASE("rotary::RopeRule: every rule of rule_list satisfies it") {
  std::size_t n = 0;
  (void)pr::rule_list::any([&]<class R>(std::type_identity<R>) {
    static_assert(pr::RopeRule<R>);
    ++n;
    return false;
  });
  CHECK(n == pr::rule_names().size());
  CHECK(n == 8);  // default, linear, ntk, dynamic, yarn, longrope, llama3, proportional
}

TEST_CASE("rotary::RopeRule: a type missing one part of the interface is refused") {
  static_assert(pr::RopeRule<good>);
  static_assert(!pr::RopeRule<parse_of_base>);
  static_assert(!pr::RopeRule<no_name>);
  static_assert(!pr::RopeRule<no_keys>);
  static_assert(!pr::RopeRule<no_parse>);
  static_assert(!pr::RopeRule<no_validate>);
  static_assert(!pr::RopeRule<compute_returns_frequencies>);
  static_assert(!pr::RopeRule<no_equality>);
  CHECK(pr::RopeRule<good>);
  CHECK_FALSE(pr::RopeRule<no_parse>);
}
