// SPDX-License-Identifier: MIT
// numeric/phase_fill.hpp, the phase fill the sinusoidal and rotary tables share, against an
// independent reference: std::sin / std::cos in long double (64-bit significand on x86-64) of the
// long double phase, at the tolerances the header states (exact rows: a double evaluation of a
// reduced angle, ~1 ulp; doubling rows: below 2^-48 for <= 64 rows; an anchor: one more rounded
// product). Also numeric::work_precision (the one choice of working types) and the float
// rounding certificate (round_certified, certified_as) on values placed around a float midpoint.
#include <doctest/doctest.h>

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include <posenc/numeric/phase_fill.hpp>

namespace nu = posenc::numeric;
namespace pf = posenc::numeric::detail;
using wide = nu::wide;

namespace {

/// Frequencies 10000^(-k / m) in long double (the sinusoidal/RoPE spacing), k < m.
std::vector<wide> spaced_frequencies(std::size_t m) {
  std::vector<wide> w(m);
  for (std::size_t k = 0; k < m; ++k)
    w[k] = std::pow(static_cast<wide>(10000), -static_cast<wide>(k) / static_cast<wide>(m));
  return w;
}

/// max |table - reference| over rows x m of e^{i (x0 + r dx) w}, the reference in long double:
/// of the phase (x0 + r dx) w (`split` false: the exact rows' phase), or e^{i x0 w} e^{i (r dx) w}
/// by angle addition (`split` true: the doubling rows' phases; (x0 + r dx) w rounded in long
/// double would differ from x0 w + r dx w by up to 2^-64 |x0 w|, 5e-14 at x0 = 1e6).
template <class W>
double max_error(const pf::phase_rows<W>& t, std::size_t rows, wide x0, wide dx, const std::vector<wide>& w,
                 bool split = false) {
  double worst = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < w.size(); ++k) {
      const wide th = (x0 + static_cast<wide>(r) * dx) * w[k];
      const wide a = x0 * w[k], b = static_cast<wide>(r) * dx * w[k];
      const wide rs = split ? std::sin(a) * std::cos(b) + std::cos(a) * std::sin(b) : std::sin(th);
      const wide rc = split ? std::cos(a) * std::cos(b) - std::sin(a) * std::sin(b) : std::cos(th);
      worst = std::max(worst, static_cast<double>(std::abs(static_cast<wide>(t.sin_row(r)[k]) - rs)));
      worst = std::max(worst, static_cast<double>(std::abs(static_cast<wide>(t.cos_row(r)[k]) - rc)));
    }
  return worst;
}

}  // namespace

TEST_CASE("phase_fill: work_precision chooses the phase and rotation types of every storage type") {
  static_assert(std::is_same_v<nu::phase_work_t<float>, double>);
  static_assert(std::is_same_v<nu::phase_work_t<double>, double>);
  static_assert(std::is_same_v<nu::phase_work_t<long double>, long double>);
  static_assert(std::is_same_v<nu::phase_work_t<Eigen::half>, double>);
  static_assert(std::is_same_v<nu::phase_work_t<Eigen::bfloat16>, double>);
  static_assert(std::is_same_v<nu::rotation_work_t<float>, double>);
  static_assert(std::is_same_v<nu::rotation_work_t<double>, double>);
  static_assert(std::is_same_v<nu::rotation_work_t<long double>, long double>);
  static_assert(std::is_same_v<nu::rotation_work_t<Eigen::half>, float>);
  static_assert(std::is_same_v<nu::rotation_work_t<Eigen::bfloat16>, float>);
  CHECK(sizeof(nu::rotation_work_t<Eigen::half>) == sizeof(float));
}

TEST_CASE("phase_fill: angle_sum is sin/cos of the sum to a few ulp") {
  for (const wide a : {0.0L, 0.3L, 1.7L, -2.9L, 1000.25L})
    for (const wide b : {0.0L, 0.01L, -0.7L, 3.1L}) {
      double s, c;
      pf::angle_sum(static_cast<double>(std::sin(a)), static_cast<double>(std::cos(a)),
                    static_cast<double>(std::sin(b)), static_cast<double>(std::cos(b)), s, c);
      // four inputs rounded (2^-53 each), two products and a sum: below 2^-50 absolute
      CHECK(std::abs(static_cast<wide>(s) - std::sin(a + b)) < 0x1p-50L);
      CHECK(std::abs(static_cast<wide>(c) - std::cos(a + b)) < 0x1p-50L);
    }
}

TEST_CASE("phase_fill: exact and doubling phase rows against long double sin/cos") {
  const auto w = spaced_frequencies(24);
  for (const wide x0 : {0.0L, 3.0L, 1.0e6L, -12.5L})
    for (const wide dx : {1.0L, 0.37L, 64.0L}) {
      pf::phase_rows<double> exact, doubled;
      exact.exact(64, x0, dx, w);
      doubled.doubling(64, x0, dx, w);
      CHECK(exact.m == w.size());
      CHECK(doubled.s.size() == 64 * w.size());
      // exact rows: sincos_angle in double (~1 ulp) plus the long double phase's own rounding
      // relative to the reference's (the same long double expression: none)
      CHECK(max_error(exact, 64, x0, dx, w) < 0x1p-51);
      // doubling: at most log2(64) = 6 rounded products from exact rows (the header: < 2^-48)
      CHECK(max_error(doubled, 64, x0, dx, w, true) < 0x1p-48);
    }
  // row 0 of a table from 0 is exactly (0, 1), and build() picks the method
  pf::phase_rows<double> t;
  t.build(false, 5, 0, 1, w);
  for (std::size_t k = 0; k < w.size(); ++k) {
    CHECK(t.sin_row(0)[k] == 0.0);
    CHECK(t.cos_row(0)[k] == 1.0);
  }
  pf::phase_rows<long double> ld;
  ld.build(true, 9, 2.5L, 0.5L, w);
  CHECK(max_error(ld, 9, 2.5L, 0.5L, w) < 0x1p-60);  // long double sin/cos of the same phase
}

TEST_CASE("phase_fill: anchor_phases T2[q / C] * T1[q % C] is the anchor's phase") {
  const auto w = spaced_frequencies(16);
  for (const bool exact : {true, false})
    for (const std::size_t C : {std::size_t{1}, std::size_t{7}, std::size_t{34}}) {
      const std::size_t count = 300, block = 64;
      const wide x0 = 1.0e6L + 32 * 0.37L, step = 0.37L;
      const pf::anchor_phases<double> a(count, C, x0, step, block, w, exact, true);
      CHECK(a.t2.s.size() == ((count + C - 1) / C) * w.size());
      std::vector<double> s(w.size()), c(w.size());
      double worst = 0;
      for (std::size_t q = 0; q < count; ++q) {
        a.get(q, s.data(), c.data());
        // the reference phase: x0 + (q / C) (block C) step + (q % C) block step, as the tables form it
        const wide x = x0 + static_cast<wide>(q / C) * (step * static_cast<wide>(block * C)) +
                       static_cast<wide>(q % C) * (step * static_cast<wide>(block));
        for (std::size_t k = 0; k < w.size(); ++k) {
          const wide th2 = (x0 + static_cast<wide>(q / C) * (step * static_cast<wide>(block * C))) * w[k];
          const wide th1 = static_cast<wide>(q % C) * (step * static_cast<wide>(block)) * w[k];
          // sin/cos(th2 + th1) by angle addition in long double (th2 + th1 itself would be rounded
          // at |x w| ~ 1e6: 2^-45)
          const wide rs = std::sin(th2) * std::cos(th1) + std::cos(th2) * std::sin(th1);
          const wide rc = std::cos(th2) * std::cos(th1) - std::sin(th2) * std::sin(th1);
          worst = std::max(worst, static_cast<double>(std::abs(static_cast<wide>(s[k]) - rs)));
          worst = std::max(worst, static_cast<double>(std::abs(static_cast<wide>(c[k]) - rc)));
          // the anchor's phase x w and th2 + th1 differ by long double roundings only (2^-62 |x w|)
          CHECK(std::abs(x * w[k] - (th2 + th1)) <= 0x1p-62L * std::abs(x * w[k]) + 0x1p-70L);
        }
      }
      // two exact rows and one product (2^-51), or a doubling row (2^-48) and one product
      CHECK(worst < (exact ? 0x1p-50 : 0x1p-47));
    }
}

TEST_CASE("phase_fill: round_certified decides a float rounding only when the bound allows it") {
  const float f = 1.0f + 0x1p-20f;
  const float next = std::nextafter(f, 2.0f);
  const double mid = (static_cast<double>(f) + static_cast<double>(next)) / 2;  // exact in double
  float out = 0;
  // v above the midpoint by 2^-40, bound 2^-42: every value in [v - e, v + e] rounds up
  CHECK(pf::round_certified(mid + 0x1p-40, 0x1p-42, out) == 0);
  CHECK(out == next);
  // bound 2^-39 reaches below the midpoint: undecided, out is the lower end's rounding
  CHECK(pf::round_certified(mid + 0x1p-40, 0x1p-39, out) == 1);
  CHECK(out == f);
  // certified_as: decided and equal to the stored value; not when the stored value differs, nor
  // when the recomputed value is undecided
  CHECK(pf::certified_as(mid + 0x1p-40, 0x1p-42, next));
  CHECK_FALSE(pf::certified_as(mid + 0x1p-40, 0x1p-42, f));
  CHECK_FALSE(pf::certified_as(mid + 0x1p-40, 0x1p-39, f));
  // in a half type the comparison is made after rounding the float to that type
  CHECK(pf::certified_as(mid + 0x1p-40, 0x1p-42, Eigen::half(static_cast<float>(next))));
}

TEST_CASE("phase_fill: certified_angle_sum stores the correctly rounded sum wherever it decides, in every loop") {
  // Anchors and offsets are unit complex numbers (random angles); the reference of each entry is
  // the exact sum of the two double products, formed in long double (each product of two doubles
  // has 106 bits; their long double sum is within 2^-63 of the exact one). Bound E = 2^-44. An
  // entry whose reference is farther than 2^-43 from every float rounding boundary must be
  // decided (the loop's interval [v - E, v + E] lies within 2^-44 + 2^-51 of the reference) and
  // be the float rounding of the reference; any entry of a row the loop does not flag must be
  // too. In every trial, one sine of each 16 pairs is moved within ~2^-50 of a float midpoint, so
  // every row must be flagged (the undecided path). Checked: the portable loop, the dispatching
  // one, and (x86-64 with AVX2 and FMA) the vector loop, interleaved and split, m % 4 != 0 (the
  // vector loop's remainder).
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> ang(-3.2, 3.2);
  const std::size_t m = 67;
  std::vector<double> as(m), ac(m), bs(m), bc(m), pe(m, 0x1p-44);
  using run = int (*)(std::size_t, const double*, const double*, const double*, const double*, const double*, float*,
                      float*, float*, float*);
  struct loop {
    const char* name;
    bool inter;
    run f;
  };
  std::vector<loop> loops = {{"portable", true, &pf::certified_angle_sum_portable<true, true>},
                             {"portable", false, &pf::certified_angle_sum_portable<false, true>},
                             {"dispatch", true, &pf::certified_angle_sum<true, true>},
                             {"dispatch", false, &pf::certified_angle_sum<false, true>}};
#if defined(POSENC_PHASE_FILL_X86)
  if (pf::certified_x86_available()) {
    loops.push_back({"x86", true, &pf::certified_angle_sum_x86<true, true>});
    loops.push_back({"x86", false, &pf::certified_angle_sum_x86<false, true>});
  }
#endif
  const auto clear = [](long double v) {  // the float rounding is the same over [v - 2^-43, v + 2^-43]
    return static_cast<float>(v - 0x1p-43L) == static_cast<float>(v + 0x1p-43L);
  };
  std::size_t checked = 0;
  for (int trial = 0; trial < 200; ++trial) {
    for (std::size_t k = 0; k < m; ++k) {
      const double a = ang(rng), b = ang(rng);
      as[k] = std::sin(a);
      ac[k] = std::cos(a);
      bs[k] = std::sin(b);
      bc[k] = std::cos(b);
      if (k % 16 == 3) {  // move sa so that sa cb + ca sb lies next to a float midpoint
        const long double v = static_cast<long double>(as[k]) * bc[k] + static_cast<long double>(ac[k]) * bs[k];
        const float f = static_cast<float>(v);
        const float g = v > static_cast<long double>(f) ? std::nextafter(f, 2.0f) : std::nextafter(f, -2.0f);
        const double mid = (static_cast<double>(f) + static_cast<double>(g)) / 2;  // exact
        as[k] += static_cast<double>((static_cast<long double>(mid) - v) / bc[k]);
      }
    }
    for (const auto& l : loops) {
      std::vector<float> plus(2 * m, -9.0f), minus(2 * m, -9.0f);
      const int u = l.inter ? l.f(m, as.data(), ac.data(), bs.data(), bc.data(), pe.data(), plus.data(), nullptr,
                                  minus.data(), nullptr)
                            : l.f(m, as.data(), ac.data(), bs.data(), bc.data(), pe.data(), plus.data(),
                                  plus.data() + m, minus.data(), minus.data() + m);
      INFO(l.name, l.inter ? " interleaved" : " split", ", trial ", trial);
      CHECK(u != 0);
      for (std::size_t k = 0; k < m; ++k) {
        const long double p1 = static_cast<long double>(as[k]) * bc[k], p2 = static_cast<long double>(ac[k]) * bs[k];
        const long double p3 = static_cast<long double>(ac[k]) * bc[k], p4 = static_cast<long double>(as[k]) * bs[k];
        const long double ref[4] = {p1 + p2, p3 - p4, p1 - p2, p3 + p4};
        const float got[4] = {l.inter ? plus[2 * k] : plus[k], l.inter ? plus[2 * k + 1] : plus[m + k],
                              l.inter ? minus[2 * k] : minus[k], l.inter ? minus[2 * k + 1] : minus[m + k]};
        for (int i = 0; i < 4; ++i)
          if (clear(ref[i])) {
            CHECK(got[i] == static_cast<float>(ref[i]));
            ++checked;
          }
      }
    }
  }
  MESSAGE("certified_angle_sum: ", checked, " entries checked");
  CHECK(checked > 200 * 4 * m * 2);
}
