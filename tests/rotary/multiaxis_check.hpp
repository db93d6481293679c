// SPDX-License-Identifier: MIT
// The check of one multi-axis RoPE case against the reference files of
// scripts/gen_multiaxis_reference.py (tests/rotary/multiaxis/*.inc): positions (FNV-1a of the
// whole [A, tokens] grid and the sampled rows), frequencies, cos / sin in float64, the module's
// float32 cos / sin, q rotated in place in float32 and bf16. The bounds are stated in
// tests/rotary/diffusion.test.cpp.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <posenc/numeric/phase.hpp>
#include <posenc/rotary/axes/axes_apply.hpp>

namespace posenc_test {

namespace rt = posenc::rotary;

struct rope_case {
  std::vector<std::size_t> axes_dim;
  double theta;
  std::size_t tokens, sum_stride;
  std::vector<double> freqs;
  std::uint64_t positions_fnv;
  std::vector<std::size_t> rows;
  std::vector<std::int64_t> row_positions;  // [A, rows]
  std::vector<double> cos, sin;             // [rows, pairs]
  std::vector<double> sums;
  std::vector<float> cos32, sin32;          // the module's float32 output, [rows, pairs]
  std::vector<float> q, q_out;              // [rows, 2 pairs]
};

inline std::uint64_t fnv1a(const std::vector<std::int64_t>& v) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::int64_t x : v) {
    unsigned char b[8];
    const auto u = static_cast<std::uint64_t>(x);
    for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(u >> (8 * i));
    for (const unsigned char c : b) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
  }
  return h;
}

inline double ulp_distance(double a, double b) {
  return std::abs(a - b) / (std::nextafter(std::abs(b), INFINITY) - std::abs(b));
}

/// Exact cos and sin of position p for pair k.
inline void exact_cs(const rt::axis_frequencies& af, std::size_t k, std::int64_t p, double& c, double& s) {
  posenc::numeric::sincos_phase(static_cast<double>(p), 0.0, rt::frequency3_of(af.freqs, k), 1.0, s, c);
}

struct outcome {
  double freq_ulp = 0, f64_err = 0, f32_err = 0, q_err = 0, q_bf16_err = 0;
  std::size_t f32_differ = 0, f32_count = 0;
};

/// positions [A, tokens]; float32_module: the module computes in float32 (bound 2^-21 (1 + |p| w)).
/// How a case's frequencies and q are laid out, and what bounds its reference.
struct case_form {
  bool float32_module = false;  ///< the module's cos / sin come from float32 phases
  bool half = false;            ///< q rotated in the half layout (rotate_half), else interleaved
  double extra_freq_ulp = 0;    ///< ulp the reference's frequency formula adds (e.g. a product with 2 pi / H)
};

/// positions [A, tokens]; see the files' comments for the bounds.
inline outcome check_case(const rope_case& c, const rt::axis_frequencies& af, const std::vector<std::int64_t>& positions,
                          case_form form) {
  const bool float32_module = form.float32_module;
  outcome o;
  const std::size_t pairs = af.freqs.inv_freq.size(), A = af.axes, R = c.rows.size();
  REQUIRE(rt::validate(af, "test") == pairs);
  REQUIRE(c.freqs.size() == pairs);
  REQUIRE(A == c.axes_dim.size());
  std::size_t k0 = 0;
  for (std::size_t a = 0; a < A; ++a)
    for (std::size_t j = 0; j < c.axes_dim[a] / 2; ++j, ++k0) CHECK(af.axis[k0] == a);
  for (std::size_t a = 0, k = 0; a < A; ++a)
    for (std::size_t j = 0; j < c.axes_dim[a] / 2; ++j, ++k) {
      // diffusers' exponent x = 2j / d is rounded (2^-53 relative), which theta^x turns into
      // x ln(theta) 2^-53 relative (x ln(theta) / 2 ulp); pow and the division round once each
      const double x = 2.0 * static_cast<double>(j) / static_cast<double>(c.axes_dim[a]);
      const double bound = 2.5 + 0.5 * x * std::log(c.theta) + form.extra_freq_ulp;  // + 0.5: posenc's rounding
      const double u = ulp_distance(c.freqs[k], rt::frequency3_of(af.freqs, k).hi);
      o.freq_ulp = std::max(o.freq_ulp, u);
      CHECK(u <= bound);
    }
  // positions
  REQUIRE(positions.size() == A * c.tokens);
  CHECK(fnv1a(positions) == c.positions_fnv);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t a = 0; a < A; ++a) CHECK(positions[a * c.tokens + c.rows[r]] == c.row_positions[a * R + r]);
  // sampled rows: float64 and the module's float32
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < pairs; ++k) {
      const std::int64_t p = positions[af.axis[k] * c.tokens + c.rows[r]];
      double cv, sv;
      exact_cs(af, k, p, cv, sv);
      const double phase = std::abs(static_cast<double>(p)) * c.freqs[k];
      const double b64 = 0x1p-50 * (1 + phase);
      const double e = std::max(std::abs(cv - c.cos[r * pairs + k]), std::abs(sv - c.sin[r * pairs + k]));
      o.f64_err = std::max(o.f64_err, e / b64);
      CHECK(e <= b64);
      if (!c.cos32.empty()) {
        const float c32 = c.cos32[r * pairs + k], s32 = c.sin32[r * pairs + k];
        const float cf = static_cast<float>(cv), sf = static_cast<float>(sv);
        o.f32_count += 2;
        o.f32_differ += static_cast<std::size_t>(cf != c32) + static_cast<std::size_t>(sf != s32);
        const double e32 = std::max(std::abs(static_cast<double>(cf) - c32), std::abs(static_cast<double>(sf) - s32));
        const double b32 = float32_module ? 0x1p-21 * (1 + phase) : 0x1p-24;  // 1 ulp of values <= 1
        o.f32_err = std::max(o.f32_err, e32 / b32);
        CHECK(e32 <= b32);
      }
    }
  // every st-th row: the sum of cos + sin
  double xmax = 0;
  for (const auto p : positions) xmax = std::max(xmax, std::abs(static_cast<double>(p)));
  const double sum_bound = static_cast<double>(2 * pairs) * 0x1p-50 * (1 + xmax);
  for (std::size_t i = 0; i < c.sums.size(); ++i) {
    const std::size_t t = i * c.sum_stride;
    double sum = 0;
    for (std::size_t k = 0; k < pairs; ++k) {
      double cv, sv;
      exact_cs(af, k, positions[af.axis[k] * c.tokens + t], cv, sv);
      sum += cv + sv;
    }
    CHECK(std::abs(sum - c.sums[i]) <= sum_bound);
  }
  // q rotated in place: float32 against diffusers, bf16 against the exact rotation of its values
  if (!c.q.empty()) {
    const std::size_t D = 2 * pairs;
    REQUIRE(c.q.size() == R * D);
    std::vector<float> q(c.q.begin(), c.q.end());
    std::vector<Eigen::bfloat16> qb(R * D);
    for (std::size_t i = 0; i < R * D; ++i) qb[i] = Eigen::bfloat16(c.q[i]);
    std::vector<Eigen::bfloat16> qb0 = qb;
    const rt::axis_positions pos(c.row_positions, A);
    rt::apply_options opt;
    opt.layout = form.half ? rt::layout::half : rt::layout::interleaved;
    rt::apply_ragged_inplace<float>(rt::ragged_view<float>::contiguous(q.data(), {R, 1, D}), {}, pos, af, opt);
    rt::apply_ragged_inplace<Eigen::bfloat16>(rt::ragged_view<Eigen::bfloat16>::contiguous(qb.data(), {R, 1, D}), {},
                                              pos, af, opt);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t k = 0; k < pairs; ++k) {
        const std::int64_t p = c.row_positions[af.axis[k] * R + r];
        const double phase = std::abs(static_cast<double>(p)) * c.freqs[k];
        const std::size_t i0 = r * D + (form.half ? k : 2 * k), i1 = form.half ? i0 + pairs : i0 + 1;
        const double mag = std::abs(double{c.q[i0]}) + std::abs(double{c.q[i1]});
        const double b = mag * (4 * 0x1p-24 + (float32_module ? 0x1p-21 * (1 + phase) : 0.0)) + 0x1p-140;
        const double e = std::max(std::abs(double{q[i0]} - c.q_out[i0]), std::abs(double{q[i1]} - c.q_out[i1]));
        o.q_err = std::max(o.q_err, e / b);
        CHECK(e <= b);
        double cv, sv;
        exact_cs(af, k, p, cv, sv);
        const double x0 = static_cast<float>(qb0[i0]), x1 = static_cast<float>(qb0[i1]);
        const double y0 = x0 * cv - x1 * sv, y1 = x0 * sv + x1 * cv;
        const double bb = (std::abs(x0) + std::abs(x1)) * 0x1p-8 + 0x1p-130;
        const double eb = std::max(std::abs(static_cast<float>(qb[i0]) - y0), std::abs(static_cast<float>(qb[i1]) - y1));
        o.q_bf16_err = std::max(o.q_bf16_err, eb / bb);
        CHECK(eb <= bb);
      }
    MESSAGE("q rotated in place: float32 ", o.q_err, " of its bound from diffusers' apply; bf16 ", o.q_bf16_err,
            " of 2^-8 (|x0| + |x1|) from the exact rotation");
  }
  MESSAGE("frequencies: ", o.freq_ulp, " ulp from diffusers' float64; cos/sin: ", o.f64_err,
          " of 2^-50 (1 + |p w|) from float64; the module's float32: ", o.f32_err, " of its bound, ", o.f32_differ,
          " of ", o.f32_count, " entries differ from posenc's float");
  return o;
}

}  // namespace posenc_test
