// SPDX-License-Identifier: MIT
// The RoPE scaling rules against long double transcriptions of their formulas, written here from
// the papers / HF's definitions with pow() (the library uses exp(log)); their invariants (dynamic
// NTK = default below the original length, YaRN's ramp endpoints, LongRoPE's switch, llama3's band
// edges, relative-position dependence of <R(m)q, R(n)k>); bad configurations.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <posenc/rotary/scaling.hpp>
#include <posenc/rotary/table.hpp>

namespace pr = posenc::rotary;
using ld = long double;

namespace {
constexpr ld pi_l = 3.141592653589793238462643383279502884L;

// 1 / base^(2k/d): the RoPE frequency as the papers write it.
ld plain(std::size_t k, std::size_t d, ld base) {
  return 1.0L / std::pow(base, static_cast<ld>(2 * k) / static_cast<ld>(d));
}

// Both sides are long double; they differ by the rounding of pow vs exp(log) (a few ulp times
// |ln base| ~ 13 at most): 1e-16 relative is ~1000 long double ulp and still 400x below a double ulp.
constexpr ld tol = 1e-16L;

void check_close(const pr::frequencies& f, const std::vector<ld>& ref) {
  REQUIRE(f.inv_freq.size() == ref.size());
  for (std::size_t k = 0; k < ref.size(); ++k) {
    INFO("k = ", k, " got ", static_cast<double>(f.inv_freq[k]), " expected ", static_cast<double>(ref[k]));
    CHECK(std::abs(f.inv_freq[k] - ref[k]) <= tol * ref[k]);
  }
}

pr::rope_config base_config(pr::rope_type t, std::size_t head_dim = 128, double theta = 10000.0) {
  pr::rope_config c;
  c.type = t;
  c.head_dim = head_dim;
  c.theta = theta;
  c.max_position_embeddings = 4096;
  return c;
}

// <R(m) q, R(n) k> from a double table in the pairs layout (pair k = (x[2k], x[2k+1])).
double rotated_dot(const pr::frequencies& f, double m, double n, const std::vector<double>& q,
                   const std::vector<double>& k) {
  const double pos[2] = {m, n};
  const auto t = pr::table<double>(f, std::span<const double>(pos, 2));
  double dot = 0;
  for (std::size_t j = 0; j < f.inv_freq.size(); ++j) {
    const auto J = static_cast<Eigen::Index>(j);
    const double cm = t.cos(0, J), sm = t.sin(0, J), cn = t.cos(1, J), sn = t.sin(1, J);
    const double q0 = q[2 * j] * cm - q[2 * j + 1] * sm, q1 = q[2 * j] * sm + q[2 * j + 1] * cm;
    const double k0 = k[2 * j] * cn - k[2 * j + 1] * sn, k1 = k[2 * j] * sn + k[2 * j + 1] * cn;
    dot += q0 * k0 + q1 * k1;
  }
  return dot / (f.attention_factor * f.attention_factor);
}
}  // namespace

TEST_CASE("default RoPE: theta, head_dim and partial_rotary_factor") {
  for (double theta : {10000.0, 500000.0, 1e6}) {
    auto c = base_config(pr::rope_type::default_rope, 128, theta);
    std::vector<ld> ref(64);
    for (std::size_t k = 0; k < 64; ++k) ref[k] = plain(k, 128, theta);
    check_close(pr::compute_frequencies(c), ref);
  }
  // Phi-2: head_dim 80, partial_rotary_factor 0.4 -> rotary_dim int(32.000000000000004) = 32.
  auto c = base_config(pr::rope_type::default_rope, 80);
  c.partial_rotary_factor = 0.4;
  CHECK(pr::rotary_dim(c) == 32);
  std::vector<ld> ref(16);
  for (std::size_t k = 0; k < 16; ++k) ref[k] = plain(k, 32, 10000);
  const auto f = pr::compute_frequencies(c);
  check_close(f, ref);
  CHECK(f.attention_factor == 1.0);
  // default_frequencies (the interface other code already uses) agrees.
  const auto g = pr::default_frequencies(32, 10000.0);
  for (std::size_t k = 0; k < 16; ++k) CHECK(g.inv_freq[k] == f.inv_freq[k]);
}

TEST_CASE("linear (position interpolation) and static NTK-aware scaling") {
  for (double s : {0.5, 2.0, 8.0}) {
    auto c = base_config(pr::rope_type::linear);
    c.factor = s;
    std::vector<ld> ref(64), ntk(64);
    const ld base_ntk = 10000.0L * std::pow(static_cast<ld>(s), 128.0L / 126.0L);  // bloc97: base * s^(d/(d-2))
    for (std::size_t k = 0; k < 64; ++k) {
      ref[k] = plain(k, 128, 10000) / s;  // Chen et al.: positions m -> m / s
      ntk[k] = plain(k, 128, base_ntk);
    }
    check_close(pr::compute_frequencies(c), ref);
    c.type = pr::rope_type::ntk;
    const auto f = pr::compute_frequencies(c);
    check_close(f, ntk);
    // NTK-aware: the lowest frequency is interpolated by exactly s, the highest untouched.
    CHECK(std::abs(f.inv_freq[63] * s - plain(63, 128, 10000)) <= tol * plain(63, 128, 10000));
    CHECK(f.inv_freq[0] == 1.0L);
  }
}

TEST_CASE("dynamic NTK equals default up to max_position_embeddings and rescales the base beyond") {
  auto c = base_config(pr::rope_type::dynamic, 128, 1e6);
  c.factor = 2.0;
  c.max_position_embeddings = 32768;
  auto d = c;
  d.type = pr::rope_type::default_rope;
  const auto f0 = pr::compute_frequencies(d);
  for (std::size_t L : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, std::size_t{32768}}) {
    const auto f = pr::compute_frequencies(c, L);
    for (std::size_t k = 0; k < 64; ++k) CHECK(f.inv_freq[k] == f0.inv_freq[k]);  // bitwise: base * 1^x = base
  }
  for (std::size_t L : {std::size_t{32769}, std::size_t{65536}, std::size_t{1} << 20}) {
    const ld alpha = 2.0L * static_cast<ld>(L) / 32768.0L - 1.0L;  // factor L / L_max - (factor - 1)
    const ld b = 1e6L * std::pow(alpha, 128.0L / 126.0L);
    std::vector<ld> ref(64);
    for (std::size_t k = 0; k < 64; ++k) ref[k] = plain(k, 128, b);
    check_close(pr::compute_frequencies(c, L), ref);
  }
}

TEST_CASE("YaRN: the ramp against its transcription, its endpoints, the attention factor") {
  // Qwen2-7B with factor 4 (theta 1e6, d = 128, L = 32768) and a Llama-2-like (theta 1e4, L = 4096).
  struct cs { double theta; std::size_t L; double s; };
  for (const cs& z : {cs{1e6, 32768, 4.0}, cs{1e4, 4096, 16.0}, cs{1e4, 4096, 1.5}}) {
    const double theta = z.theta, s = z.s;
    const std::size_t L = z.L;
    auto c = base_config(pr::rope_type::yarn, 128, theta);
    c.max_position_embeddings = L;
    c.factor = s;
    // Peng et al. eq. (17)-(18): r(d) = L / lambda_d; dims with r < beta_slow interpolate, r > beta_fast
    // extrapolate; HF rounds the boundary dims outward: low = floor(d_fast), high = ceil(d_slow).
    const auto dim_of = [&](ld rot) { return 128.0L * std::log(static_cast<ld>(L) / (rot * 2 * pi_l)) / (2 * std::log(static_cast<ld>(theta))); };
    ld lo = std::max<ld>(std::floor(dim_of(32)), 0), hi = std::min<ld>(std::ceil(dim_of(1)), 127);
    if (lo == hi) hi += 0.001L;
    std::vector<ld> ref(64);
    for (std::size_t k = 0; k < 64; ++k) {
      const ld gamma = std::clamp((static_cast<ld>(k) - lo) / (hi - lo), 0.0L, 1.0L);  // 1: interpolate
      ref[k] = (1 - gamma) * plain(k, 128, theta) + gamma * plain(k, 128, theta) / s;
    }
    const auto f = pr::compute_frequencies(c);
    check_close(f, ref);
    // endpoints: every k <= low keeps the original frequency; every k >= high is divided by s.
    for (std::size_t k = 0; k < 64; ++k) {
      if (static_cast<ld>(k) <= lo) CHECK(f.inv_freq[k] == pr::default_frequencies(128, theta).inv_freq[k]);
      if (static_cast<ld>(k) >= hi) CHECK(std::abs(f.inv_freq[k] * s - plain(k, 128, theta)) <= tol * plain(k, 128, theta));
    }
    CHECK(f.attention_factor == doctest::Approx(0.1 * std::log(s) + 1.0).epsilon(1e-15));
  }
  auto c = base_config(pr::rope_type::yarn);
  c.factor = 40;
  c.attention_factor = 0.7;
  CHECK(pr::compute_frequencies(c).attention_factor == 0.7);
  c.attention_factor.reset();
  c.mscale = 1.0;
  c.mscale_all_dim = 0.707;  // DeepSeek-V2: ratio of two get_mscale values
  CHECK(pr::compute_frequencies(c).attention_factor ==
        doctest::Approx((0.1 * std::log(40.0) + 1) / (0.1 * 0.707 * std::log(40.0) + 1)).epsilon(1e-15));
}

TEST_CASE("LongRoPE switches factors exactly at original_max_position_embeddings") {
  auto c = base_config(pr::rope_type::longrope, 96);
  c.max_position_embeddings = 131072;
  c.original_max_position_embeddings = 4096;
  c.short_factor.assign(48, 1.0);
  c.long_factor.assign(48, 1.0);
  for (std::size_t k = 0; k < 48; ++k) {
    c.short_factor[k] = 1.0 + 0.01 * static_cast<double>(k);
    c.long_factor[k] = 1.0 + 1.3 * static_cast<double>(k);
  }
  const auto expect = [&](const pr::frequencies& f, const std::vector<double>& ext, double att) {
    std::vector<ld> ref(48);
    for (std::size_t k = 0; k < 48; ++k) ref[k] = plain(k, 96, 10000) / ext[k];  // Ding et al.: theta_k / lambda_k
    check_close(f, ref);
    CHECK(f.attention_factor == doctest::Approx(att).epsilon(1e-15));
  };
  const double scaled = std::sqrt(1 + std::log(32.0) / std::log(4096.0));  // s = 131072 / 4096
  // HF's init function: short (and attention 1) below 4096, long from 4096 on; no seq_len: long.
  expect(pr::compute_frequencies(c, 4095), c.short_factor, 1.0);
  expect(pr::compute_frequencies(c, 4096), c.long_factor, scaled);
  expect(pr::compute_frequencies(c, 0), c.long_factor, scaled);
  // Phi-3's module: long only beyond 4096, the scaled attention factor in both regimes.
  c.longrope_switch = pr::longrope_rule::phi3_module;
  expect(pr::compute_frequencies(c, 4096), c.short_factor, scaled);
  expect(pr::compute_frequencies(c, 4097), c.long_factor, scaled);
  // without the top-level original length: factor gives the attention factor, long factors.
  c.longrope_switch = pr::longrope_rule::init_function;
  c.original_max_position_embeddings = 0;
  c.factor = 8;
  expect(pr::compute_frequencies(c, 10), c.long_factor, std::sqrt(1 + std::log(8.0) / std::log(131072.0)));
  c.attention_factor = 1.25;
  expect(pr::compute_frequencies(c), c.long_factor, 1.25);
}

TEST_CASE("llama3: unchanged above the high-frequency wavelength, divided below the low one, smooth between") {
  auto c = base_config(pr::rope_type::llama3, 128, 500000.0);
  c.factor = 8;
  c.low_freq_factor = 1;
  c.high_freq_factor = 4;
  c.original_max_position_embeddings = 8192;
  const auto f = pr::compute_frequencies(c);
  int high = 0, low = 0, mid = 0;
  for (std::size_t k = 0; k < 64; ++k) {
    const ld w = plain(k, 128, 500000), lambda = 2 * pi_l / w;
    ld ref;
    if (lambda < 8192.0L / 4) {
      ref = w, ++high;
    } else if (lambda > 8192.0L / 1) {
      ref = w / 8, ++low;
    } else {
      const ld smooth = (8192.0L / lambda - 1) / (4 - 1);  // 1 at lambda = L/4, 0 at lambda = L
      ref = (1 - smooth) * w / 8 + smooth * w, ++mid;
      // inside the band the scale lies between the two regimes
      CHECK(f.inv_freq[k] <= w * (1 + tol));
      CHECK(f.inv_freq[k] >= w / 8 * (1 - tol));
    }
    INFO("k = ", k);
    CHECK(std::abs(f.inv_freq[k] - ref) <= tol * ref);
  }
  // Llama-3.1's spectrum has all three regimes (wavelengths 2 pi .. 2 pi 500000^(126/128)).
  CHECK(high > 0);
  CHECK(low > 0);
  CHECK(mid > 0);
  // The smooth formula meets both regimes at the band edges (continuity of the rule).
  for (ld lambda : {8192.0L / 4, 8192.0L}) {
    const ld w = 2 * pi_l / lambda, smooth = (8192.0L / lambda - 1) / 3;
    const ld blended = (1 - smooth) * w / 8 + smooth * w;
    CHECK(std::abs(blended - (lambda < 4096 ? w : w / 8)) <= tol * w);
  }
}

TEST_CASE("<R(m) q, R(n) k> depends only on n - m for every rule that only changes frequencies") {
  std::vector<double> q(128), k(128);
  for (std::size_t i = 0; i < 128; ++i) {
    q[i] = std::sin(0.37 * static_cast<double>(i) + 0.1);
    k[i] = std::cos(0.91 * static_cast<double>(i) - 0.3);
  }
  std::vector<pr::rope_config> cs;
  for (auto t : {pr::rope_type::default_rope, pr::rope_type::linear, pr::rope_type::ntk, pr::rope_type::dynamic,
                 pr::rope_type::yarn, pr::rope_type::llama3, pr::rope_type::longrope}) {
    auto c = base_config(t, 128, 500000.0);
    c.factor = 8;
    c.original_max_position_embeddings = 2048;
    c.short_factor.assign(64, 1.5);
    c.long_factor.assign(64, 3.0);
    cs.push_back(c);
  }
  for (const auto& c : cs) {
    const auto f = pr::compute_frequencies(c, 100000);
    INFO("rope_type ", pr::name(c.type));
    for (double delta : {0.0, 7.0, 1000.0}) {
      const double r0 = rotated_dot(f, 0, delta, q, k);
      for (double m : {1.0, 4097.0, 123456.0, 16777215.0 - delta}) {
        // |q||k| = 64; each double entry is within a few ulp of exact and the phases are exact, so the
        // dot products agree to ~1e-13 even at m ~ 2^24 (an f32-phase table would miss by ~1e-1).
        CHECK(std::abs(rotated_dot(f, m, m + delta, q, k) - r0) <= 1e-12);
      }
    }
  }
}

TEST_CASE("bad configurations are named errors") {
  using posenc::invalid_argument;
  auto c = base_config(pr::rope_type::yarn);
  c.factor = 2;
  auto bad = c;
  bad.type = static_cast<pr::rope_type>(99);
  CHECK_THROWS_WITH_AS(pr::compute_frequencies(bad), doctest::Contains("unknown rope_type"), invalid_argument);
  bad = c;
  bad.factor = 0;
  CHECK_THROWS_WITH_AS(pr::compute_frequencies(bad), doctest::Contains("factor: expected a value > 0"), invalid_argument);
  bad.factor = -1;
  bad.type = pr::rope_type::linear;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("factor"), invalid_argument);
  bad = c;
  bad.beta_fast = 1;
  bad.beta_slow = 2;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("beta_fast >= beta_slow"), invalid_argument);
  bad = c;
  bad.head_dim = 90;
  bad.partial_rotary_factor = 0.1;  // int(9.0) = 9: odd
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("even rotary_dim"), invalid_argument);
  bad = c;
  bad.partial_rotary_factor = 1.5;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("partial_rotary_factor"), invalid_argument);
  bad = c;
  bad.theta = 1.0;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("rope_theta > 1"), invalid_argument);
  bad.theta = std::nan("");
  CHECK_THROWS_AS(pr::validate(bad), posenc::non_finite_error);
  bad = c;
  bad.type = pr::rope_type::longrope;
  bad.short_factor.assign(64, 1.0);
  bad.long_factor.assign(63, 1.0);
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("long_factor: expected rotary_dim / 2 = 64 values, got 63"),
                       posenc::shape_error);
  bad.long_factor.assign(64, 1.0);
  bad.short_factor[5] = 0;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("short_factor[5]"), invalid_argument);
  bad = c;
  bad.type = pr::rope_type::llama3;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("original_max_position_embeddings"), invalid_argument);
  bad.original_max_position_embeddings = 8192;
  bad.low_freq_factor = 4;
  bad.high_freq_factor = 2;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("high_freq_factor >= low_freq_factor"), invalid_argument);
  bad = c;
  bad.type = pr::rope_type::dynamic;
  bad.max_position_embeddings = 0;
  CHECK_THROWS_WITH_AS(pr::validate(bad), doctest::Contains("max_position_embeddings"), invalid_argument);
  CHECK(pr::parse_rope_type("su") == pr::rope_type::longrope);
  CHECK(!pr::parse_rope_type("rope"));
}
