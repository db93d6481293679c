// SPDX-License-Identifier: MIT
// The double tables and rotations against cos/sin of the exact phase p * omega_k, omega_k each
// rule's exact frequency, from mpmath at 50 digits (tests/rotary/data/exact_phase.inc, generated
// by tests/rotary/data/exact_phase.py): default, linear, yarn, llama3, longrope, ntk, dynamic,
// yarn as transformers 5 with truncate false and proportional frequencies, positions 0, 2^20, 2^24 - 1, 2^24, random ones below 2^24 and, per pair, those below 2^24 where
// |cos| or |sin| is smallest. Checked:
//  - the frequencies the rules produce (inv_freq + inv_freq_lo) are the exact omega to 2^-110,
//    and every rule of rotary::rule_list produces inv_freq_lo (one per frequency);
//  - every double table entry (integer positions, real positions) and every double rotation
//    coefficient is within 1 ulp of attention_factor * cos/sin(p omega) (the stated bound,
//    numeric::sincos_phase: 0.5 ulp + 2^-9 ulp);
//  - the long double reference of exact_reference.hpp (used by the wider tests) agrees with
//    mpmath within 2^-9 ulp of a double;
//  - the double rotation bound of docs/attention-bias.md, 0.5 ulp(y) + 2^-51 (|a| + |b|) f,
//    holds entry by entry against the exact rotation, where the former long double angle
//    exceeded the former 2^-50 (|a| + |b|) f statement (measured and printed).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <posenc/numeric/extended.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/apply.hpp>
#include <posenc/rotary/rules.hpp>
#include <posenc/rotary/scaling.hpp>
#include <posenc/rotary/table.hpp>

#include "exact_reference.hpp"

namespace {

namespace pr = posenc::rotary;
namespace nu = posenc::numeric;
using posenc_test::exact_cos_sin;
using posenc_test::ld;
using posenc_test::ulp_double;

struct exact_rule {
  int rule;
  int k;
  double hi, mid, lo;
};
struct exact_entry {
  int rule;
  int k;
  std::int64_t position;
  double cos_hi, cos_lo, sin_hi, sin_lo;
  [[nodiscard]] ld omega_hi_ld() const;
};

#include "data/exact_phase.inc"

ld exact_entry::omega_hi_ld() const {
  for (const auto& r : exact_rules)
    if (r.rule == rule && r.k == k) return static_cast<ld>(r.hi) + r.mid;
  return 0;
}

constexpr int rule_count = 9;

/// The rules after the first five (data/exact_phase.py's order), as rule-table plans at seq_len 2^20.
pr::frequencies plan_frequencies(int r) {
  pr::rope_context c;
  c.head_dim = 64;
  switch (r) {
    case 5: return pr::plan(c, pr::rules::ntk{{}, 4.0}).frequencies(std::size_t{1} << 20);
    case 6:
      c.max_position_embeddings = 4096;
      return pr::plan(c, pr::rules::dynamic{{}, 2.0}).frequencies(std::size_t{1} << 20);
    case 7: {
      c.theta = 150000.0;
      c.max_position_embeddings = 131072;
      pr::rules::yarn y;
      y.factor = 32;
      y.beta_fast = 32;
      y.beta_slow = 1;
      y.original_max_position_embeddings = 4096;
      y.truncate = false;
      y.mscale = 1.0;
      y.mscale_all_dim = 0.5;
      return pr::plan(c, y).frequencies(std::size_t{1} << 20);
    }
    default:
      c.head_dim = 128;
      c.theta = 1000000.0;
      c.partial_rotary_factor = 0.25;
      return pr::plan(c, pr::rules::proportional{{}, 8.0}).frequencies(std::size_t{1} << 20);
  }
}

/// The configurations of data/exact_phase.py, in its order.
pr::frequencies rule_frequencies(int r) {
  if (r >= 5) return plan_frequencies(r);
  pr::rope_config c;
  c.head_dim = 128;
  switch (r) {
    case 0: c.theta = 500000.0; break;
    case 1:
      c.type = pr::rope_type::linear;
      c.factor = 8;
      break;
    case 2:
      c.type = pr::rope_type::yarn;
      c.theta = 1000000.0;
      c.factor = 4;
      c.max_position_embeddings = 131072;
      c.original_max_position_embeddings = 32768;
      break;
    case 3:
      c.type = pr::rope_type::llama3;
      c.theta = 500000.0;
      c.factor = 8;
      c.original_max_position_embeddings = 8192;
      break;
    default:
      c.type = pr::rope_type::longrope;
      c.head_dim = 96;
      c.max_position_embeddings = 131072;
      c.original_max_position_embeddings = 4096;
      c.short_factor.assign(48, 1.0);
      for (int k = 0; k < 48; ++k) c.long_factor.push_back(1.0 + 0.375 * k);  // exact: no rounding to differ
      break;
  }
  return pr::compute_frequencies(c, std::size_t{1} << 20);
}

std::vector<pr::frequencies> all_rules() {
  std::vector<pr::frequencies> fs;
  for (int r = 0; r < rule_count; ++r) fs.push_back(rule_frequencies(r));
  return fs;
}

/// |got - a (hi + lo)| in ulps of the reference.
ld ulps(double got, double hi, double lo, double a) {
  const ld ref = static_cast<ld>(a) * (static_cast<ld>(hi) + static_cast<ld>(lo));
  return std::abs(static_cast<ld>(got) - ref) / ulp_double(ref);
}

}  // namespace

TEST_CASE("exact phase: each rule's inv_freq + inv_freq_lo is its exact frequency to 2^-110") {
  // Double-word long double exp/log (~2^-120); with a long double of double's precision the
  // pair carries ~2^-100.
  const ld bound = std::ldexp(1.0L, std::numeric_limits<ld>::digits >= 64 ? -110 : -98);
  const auto fs = all_rules();
  ld worst = 0, worst_ld = 0;
  for (const auto& e : exact_rules) {
    const auto& f = fs[static_cast<std::size_t>(e.rule)];
    const auto k = static_cast<std::size_t>(e.k);
    REQUIRE(f.inv_freq_lo.size() == f.inv_freq.size());
    const nu::ff<ld> ref = nu::from_doubles<ld>(e.hi, e.mid, e.lo);
    const nu::ff<ld> got = nu::two_sum(f.inv_freq[k], f.inv_freq_lo[k]);
    INFO("rule ", e.rule, " k ", e.k);
    if (ref.hi == 0) {  // proportional's pairs that are not rotated: exact zeros
      CHECK(f.inv_freq[k] == 0);
      CHECK(f.inv_freq_lo[k] == 0);
      continue;
    }
    const nu::ff<ld> d = got - ref;
    const ld rel = std::abs(d.hi + d.lo) / ref.hi;
    CHECK(rel <= bound);
    worst = std::max(worst, rel);
    const nu::ff<ld> d_ld = nu::ff<ld>{f.inv_freq[k], 0} - ref;  // the long double frequency alone
    worst_ld = std::max(worst_ld, std::abs(d_ld.hi + d_ld.lo) / ref.hi);
  }
  MESSAGE("exact frequencies: max relative error 2^", static_cast<double>(std::log2(worst)),
          "; the long double inv_freq alone: 2^", static_cast<double>(std::log2(worst_ld)));
  // inv_freq is omega rounded to long double: within half an ulp, 2^-digits relative (plus the
  // pair's own ~2^-120). docs/extrapolation.md and docs/attention-bias.md state 2^-63 (x86-64).
  CHECK(worst_ld <= std::ldexp(1.0L, 1 - std::numeric_limits<ld>::digits));
}

TEST_CASE("exact phase: double tables and rotation coefficients within 1 ulp of mpmath's cos/sin") {
  const auto fs = all_rules();
  const ld one_ulp = 1, stated = 0.5L + std::ldexp(1.0L, -9);
  ld worst = 0, smallest = 1, former_2_20 = 0;
  std::size_t n = 0;
  for (const auto& e : exact_entries) {
    const auto& f = fs[static_cast<std::size_t>(e.rule)];
    const auto k = static_cast<Eigen::Index>(e.k);
    const auto p = static_cast<std::uint64_t>(e.position);
    const double a = f.attention_factor;
    INFO("rule ", e.rule, " k ", e.k, " position ", e.position);
    // integer positions (fill_table), real positions (table(positions))
    const auto t = pr::table<double>(f, p, 1);
    const double pd = static_cast<double>(p);
    const auto tp = pr::table<double>(f, std::span<const double>(&pd, 1));
    // a rotation of the unit pairs (1, 0) returns (cos, sin) * f exactly: the coefficients
    const std::size_t h = f.inv_freq.size();
    std::vector<double> q(2 * h);
    for (std::size_t j = 0; j < h; ++j) q[2 * j] = 1, q[2 * j + 1] = 0;
    const std::vector<std::int64_t> off{e.position};
    pr::apply_inplace<double>(pr::dense_view<double>::contiguous(q.data(), {1, 1, 1, 2 * h}), {}, f, off);
    const double got_c[3] = {t.cos(0, k), tp.cos(0, k), q[2 * static_cast<std::size_t>(k)]};
    const double got_s[3] = {t.sin(0, k), tp.sin(0, k), q[2 * static_cast<std::size_t>(k) + 1]};
    for (int i = 0; i < 3; ++i) {
      const ld uc = ulps(got_c[i], e.cos_hi, e.cos_lo, a), us = ulps(got_s[i], e.sin_hi, e.sin_lo, a);
      CHECK(uc <= one_ulp);
      CHECK(us <= one_ulp);
      CHECK(uc <= stated);
      CHECK(us <= stated);
      worst = std::max({worst, uc, us});
    }
    // the stated bound's condition: |cos|, |sin| >= 2^-60 p omega (true of every entry here)
    const ld rc = static_cast<ld>(e.cos_hi) + e.cos_lo, rs = static_cast<ld>(e.sin_hi) + e.sin_lo;
    const ld phase = static_cast<ld>(e.position) * e.omega_hi_ld();
    if (e.position > 0 && phase > 0) {
      CHECK(std::min(std::abs(rc), std::abs(rs)) >= std::ldexp(phase, -60));
      smallest = std::min({smallest, std::abs(rc), std::abs(rs)});
    }
    // the former double path (the long double phase from inv_freq), at 2^20: printed
    if (e.position == (1 << 20)) {
      double sd, cd;
      nu::sincos_angle(static_cast<ld>(e.position) * f.inv_freq[static_cast<std::size_t>(e.k)], sd, cd);
      former_2_20 = std::max({former_2_20, std::abs(cd * a - a * rc), std::abs(sd * a - a * rs)});
    }
    ++n;
  }
  MESSAGE("double tables/rotations vs mpmath: max ", static_cast<double>(worst), " ulp over ", n,
          " (rule, pair, position) entries x 3 paths; smallest |cos|, |sin| 2^",
          static_cast<double>(std::log2(smallest)), "; the former long double phase at 2^20: max error ",
          static_cast<double>(former_2_20));
}

TEST_CASE("exact phase: the long double test reference agrees with mpmath within 2^-9 ulp of a double") {
  const auto fs = all_rules();
  ld worst = 0;
  for (const auto& e : exact_entries) {
    const auto& f = fs[static_cast<std::size_t>(e.rule)];
    ld c, s;
    exact_cos_sin(f, static_cast<std::size_t>(e.k), static_cast<ld>(e.position), c, s);
    const ld rc = static_cast<ld>(e.cos_hi) + e.cos_lo, rs = static_cast<ld>(e.sin_hi) + e.sin_lo;
    const ld u = std::max(std::abs(c - rc) / ulp_double(rc), std::abs(s - rs) / ulp_double(rs));
    INFO("rule ", e.rule, " k ", e.k, " position ", e.position);
    CHECK(u <= std::ldexp(1.0L, -9));
    worst = std::max(worst, u);
  }
  MESSAGE("long double reference vs mpmath: max ", static_cast<double>(worst), " ulp of a double");
}

TEST_CASE("exact phase: double rotations within 0.5 ulp(y) + 2^-51 (|a| + |b|) f of the exact rotation") {
  // y = fl(fl(a c) - fl(b s)) with c, s within (0.5 + 2^-9) ulp of f cos, f sin: |y - y_exact| <=
  // 0.5 ulp(y) + 2^-53 (|a c| + |b s|) + (0.5 + 2^-9) 2^-52 (|a| |c| + |b| |s|) < 0.5 ulp(y) +
  // 2^-51 (|a| + |b|) f. The former path (the long double angle fl(n inv_freq), its sin/cos in
  // double) is measured against the former statement 2^-50 (|a| + |b|) f and printed.
  const std::size_t H = 2, S = 48, D = 128;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  ld worst_new = 0, worst_old = 0;
  std::size_t bad = 0, checked = 0;
  for (int r : {0, 2, 3}) {  // default, yarn (attention factor 1.139), llama3
    const auto f = rule_frequencies(r);
    const std::size_t h = f.inv_freq.size();
    const ld fa = f.attention_factor;
    for (std::int64_t first : {std::int64_t{0}, (std::int64_t{1} << 20) - 7, (std::int64_t{1} << 24) - static_cast<std::int64_t>(S) + 1}) {
      std::vector<double> q0(H * S * D);
      for (auto& v : q0) v = u(rng);
      auto q = q0;
      const std::vector<std::int64_t> off{first};
      pr::apply_inplace<double>(pr::dense_view<double>::contiguous(q.data(), {1, H, S, D}), {}, f, off,
                                {.layout = pr::layout::half});
      for (std::size_t hh = 0; hh < H; ++hh)
        for (std::size_t s = 0; s < S; ++s) {
          const ld n = static_cast<ld>(first + static_cast<std::int64_t>(s));
          const double* in = &q0[(hh * S + s) * D];
          const double* out = &q[(hh * S + s) * D];
          for (std::size_t k = 0; k < h; ++k) {
            ld c, sn;
            exact_cos_sin(f, k, n, c, sn);
            const ld a = in[k], b = in[k + h];
            const ld ya = fa * (a * c - b * sn), yb = fa * (a * sn + b * c);
            const ld scale = (std::abs(a) + std::abs(b)) * fa;
            const ld tol_a = ulp_double(ya) / 2 + std::ldexp(scale, -51);
            const ld tol_b = ulp_double(yb) / 2 + std::ldexp(scale, -51);
            const ld ea = std::abs(out[k] - ya), eb = std::abs(out[k + h] - yb);
            bad += static_cast<std::size_t>(!(ea <= tol_a)) + static_cast<std::size_t>(!(eb <= tol_b));
            checked += 2;
            worst_new = std::max({worst_new, ea / tol_a, eb / tol_b});
            // the former path: sincos_angle of the long double angle, times f, products in double
            double sd, cd;
            nu::sincos_angle(n * f.inv_freq[k], sd, cd);
            const double co = cd * f.attention_factor, so = sd * f.attention_factor;
            const double oa = in[k] * co - in[k + h] * so, ob = in[k] * so + in[k + h] * co;
            worst_old = std::max({worst_old, std::abs(oa - ya) / std::ldexp(scale, -50),
                                  std::abs(ob - yb) / std::ldexp(scale, -50)});
          }
        }
    }
  }
  CHECK(bad == 0);
  CHECK(checked > 0);
  CHECK(worst_new <= 1);
  MESSAGE("double rotation: max error / (0.5 ulp(y) + 2^-51 (|a|+|b|) f) = ", static_cast<double>(worst_new),
          " over ", checked, " outputs; the long double angle's rotation: max error / (2^-50 (|a|+|b|) f) = ",
          static_cast<double>(worst_old));
}

TEST_CASE("exact phase: a malformed inv_freq_lo is rejected by the tables and the rotations, naming it") {
  pr::frequencies f = pr::default_frequencies(8);
  f.inv_freq_lo.resize(3);  // 4 pairs
  std::vector<double> q(8, 1.0);
  const auto view = pr::dense_view<double>::contiguous(q.data(), {1, 1, 1, 8});
  CHECK_THROWS_WITH_AS(pr::table<double>(f, 0, 2), doctest::Contains("inv_freq_lo: expected none or one per frequency (4), got 3"),
                       posenc::shape_error);
  CHECK_THROWS_WITH_AS(pr::apply_inplace<double>(view, {}, f), doctest::Contains("inv_freq_lo"), posenc::shape_error);
  f.inv_freq_lo.assign(4, 0);
  f.inv_freq_lo[2] = std::numeric_limits<ld>::quiet_NaN();
  CHECK_THROWS_WITH_AS(pr::table<float>(f, 0, 2), doctest::Contains("inv_freq_lo: expected finite values, got nan at index 2"),
                       posenc::non_finite_error);
  CHECK_THROWS_WITH_AS(pr::apply_inplace<double>(view, {}, f), doctest::Contains("at index 2"), posenc::non_finite_error);
  // empty: inv_freq is taken as exact (hand-built frequencies)
  f.inv_freq_lo.clear();
  CHECK_NOTHROW(pr::table<double>(f, 0, 2));
}

namespace {
/// A valid instance of each rule type for the list test: the default-constructed one, except
/// where a rule needs parameters (longrope's factor lists, yarn's and llama3's under 4.46). A new rule whose default does not
/// validate makes the test fail until it is given a sample here.
template <class R>
R sample_rule(std::size_t pairs) {
  if constexpr (std::is_same_v<R, pr::rules::longrope>) {
    R r;
    r.short_factor.assign(pairs, 1.0);
    r.long_factor.assign(pairs, 4.0);
    return r;
  } else if constexpr (std::is_same_v<R, pr::rules::yarn>) {
    (void)pairs;
    R r;
    r.factor = 4.0;  // transformers 4.46 requires it
    return r;
  } else if constexpr (std::is_same_v<R, pr::rules::llama3>) {
    (void)pairs;
    R r;
    r.factor = 8.0;
    r.original_max_position_embeddings = 4096;  // transformers 4.46 reads only rope_scaling's
    return r;
  } else {
    (void)pairs;
    return R{};
  }
}
}  // namespace

TEST_CASE("exact phase: every rule of rotary::rule_list produces its exact frequency (inv_freq_lo)") {
  // Iterates the rule table itself, so a rule added to the list without an exact form fails here
  // (a rule's compute returns rotary::exact_frequencies; this checks what the plan makes of it).
  std::size_t rules = 0;
  for (auto sem : {pr::semantics::transformers_5, pr::semantics::transformers_4_46}) {
    pr::rule_list::any([&]<class R>(std::type_identity<R>) {
      pr::rope_context c;
      c.head_dim = 64;
      c.max_position_embeddings = 8192;
      c.original_max_position_embeddings = 4096;
      c.semantics = sem;
      if (std::is_same_v<R, pr::rules::proportional> && sem != pr::semantics::transformers_5) return false;
      INFO("rule ", std::string(R::name), " semantics ", std::string(pr::name(sem)));
      const pr::plan p(c, sample_rule<R>(32));
      for (std::size_t seq_len : {std::size_t{0}, std::size_t{100}, std::size_t{1} << 20}) {
        const pr::frequencies f = p.frequencies(seq_len);
        REQUIRE(!f.inv_freq.empty());
        CHECK(f.inv_freq_lo.size() == f.inv_freq.size());
        for (std::size_t k = 0; k < f.inv_freq.size(); ++k) {
          // inv_freq is the exact frequency rounded to long double: the rest below half its ulp
          CHECK(std::abs(f.inv_freq_lo[k]) <= std::ldexp(f.inv_freq[k], -std::numeric_limits<ld>::digits));
        }
      }
      ++rules;
      return false;  // on to the next type
    });
  }
  CHECK(rules == 2 * pr::rule_list::names.size() - 1);  // every rule, proportional under 5.x only
}
