// SPDX-License-Identifier: MIT
// The cos/sin coefficients of a chunk of positions for the rotary application
// (posenc/rotary/apply.hpp): every pair's f cos, f sin (f = attention_factor, times the xPos
// scales of q and k), for positions set one by one (exact phases) or as a run of consecutive
// integers (an exact anchor times exact offsets: numeric/phase_fill.hpp). The precision of each
// storage type is stated in apply.hpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include <posenc/numeric/phase.hpp>
#include <posenc/numeric/phase_fill.hpp>
#include <posenc/rotary/apply_plan.hpp>
#include <posenc/rotary/frequencies.hpp>

namespace posenc::rotary::detail {

/// Per-position coefficients for a chunk of positions: for row r, cq/sq (for q) and ck/sk (for k;
/// the same as q's unless xPos) of every pair. Rows are either set one by one (set: the exact
/// phase of each position) or as a run of consecutive integer positions x0, x0 + 1, ...
/// (set_run): with `exact` every row is an exact phase; otherwise (float and half storage) the
/// run's first row is an exact phase e^{i x0 w} and row r is its product with the exact offset
/// phase e^{i r w} (tabulated once), in double: within ~2^-52 of the exact cos/sin, far below
/// the rounding to float that follows, and 64 times fewer sin/cos evaluations.
template <class W>
class coefficients {
 public:
  coefficients(const frequencies& f, const apply_options& opt, std::size_t rows, bool exact, bool f64 = false)
      : m_half(f.inv_freq.size()),
        m_w(f.inv_freq),
        m_factor(f.attention_factor),
        m_xpos(opt.xpos.enabled),
        m_exact(exact || opt.xpos.enabled || f64),
        m_f64(f64),
        m_c(rows * m_half * (m_xpos ? 4 : 2)) {
    if (m_f64) {
      m_w3.resize(m_half);
      for (std::size_t k = 0; k < m_half; ++k) m_w3[k] = frequency3_of(f, k);
    }
    if (m_xpos) {
      m_logzeta.resize(m_half);
      for (std::size_t k = 0; k < m_half; ++k)
        m_logzeta[k] = std::log(detail::xpos_zeta_wide(k, 2 * m_half, opt.xpos.gamma)) /
                       static_cast<wide>(opt.xpos.scale_base);
      m_center = opt.xpos.center;
    }
    if (!m_exact) {
      m_offset.exact(rows, 0, 1, m_w);
      m_as.resize(m_half);
      m_ac.resize(m_half);
    }
  }
  /// Fill row r for position x (exact phase).
  void set(std::size_t r, wide x) {
    W* cq = row(r);
    W* sq = cq + m_half;
    if (m_f64 && !m_xpos) {  // double storage: the exact phase, the attention factor in one rounding
      const double xh = static_cast<double>(x), xl = static_cast<double>(x - static_cast<wide>(xh));
      for (std::size_t k = 0; k < m_half; ++k) {
        double s, c;
        numeric::sincos_phase(xh, xl, m_w3[k], m_factor, s, c);
        cq[k] = static_cast<W>(c);
        sq[k] = static_cast<W>(s);
      }
      return;
    }
    for (std::size_t k = 0; k < m_half; ++k) {
      double s, c;
      if (m_f64) {
        const double xh = static_cast<double>(x), xl = static_cast<double>(x - static_cast<wide>(xh));
        numeric::sincos_phase(xh, xl, m_w3[k], 1.0, s, c);
      } else {
        numeric::sincos_angle(x * m_w[k], s, c);
      }
      if (!m_xpos) {
        cq[k] = static_cast<W>(c * m_factor);
        sq[k] = static_cast<W>(s * m_factor);
      } else {
        const wide e = (x - m_center) * m_logzeta[k];
        const double up = static_cast<double>(std::exp(e)), down = static_cast<double>(std::exp(-e));
        W* ck = sq + m_half;
        W* sk = ck + m_half;
        cq[k] = static_cast<W>(c * m_factor * up);
        sq[k] = static_cast<W>(s * m_factor * up);
        ck[k] = static_cast<W>(c * m_factor * down);
        sk[k] = static_cast<W>(s * m_factor * down);
      }
    }
  }
  /// Fill rows r0 .. r0 + n - 1 for the positions x0, x0 + 1, ..., x0 + n - 1 (r0 + n <= rows).
  void set_run(std::size_t n, wide x0, std::size_t r0 = 0) {
    if (m_exact) {
      for (std::size_t r = 0; r < n; ++r) set(r0 + r, x0 + static_cast<wide>(r));
      return;
    }
    numeric::detail::phase_row(x0, m_w, m_as.data(), m_ac.data());
    for (std::size_t r = 0; r < n; ++r) {
      W* cq = row(r0 + r);
      W* sq = cq + m_half;
      const double* os = m_offset.sin_row(r);
      const double* oc = m_offset.cos_row(r);
      for (std::size_t k = 0; k < m_half; ++k) {
        double s, c;
        numeric::detail::angle_sum(m_as[k], m_ac[k], os[k], oc[k], s, c);
        cq[k] = static_cast<W>(c * m_factor);
        sq[k] = static_cast<W>(s * m_factor);
      }
    }
  }
  [[nodiscard]] const W* q(std::size_t r) const { return m_c.data() + r * m_half * (m_xpos ? 4 : 2); }
  [[nodiscard]] const W* k(std::size_t r) const { return q(r) + (m_xpos ? 2 * m_half : 0); }
  [[nodiscard]] std::size_t half() const { return m_half; }

 private:
  W* row(std::size_t r) { return m_c.data() + r * m_half * (m_xpos ? 4 : 2); }
  std::size_t m_half;
  const std::vector<wide>& m_w;
  double m_factor;
  bool m_xpos, m_exact, m_f64;
  std::vector<W> m_c;
  std::vector<numeric::frequency3> m_w3;  // double storage: the exact frequencies
  std::vector<wide> m_logzeta;
  wide m_center = 0;
  numeric::detail::phase_rows<double> m_offset;  // the offset phases e^{i r w} (rows x half)
  std::vector<double> m_as, m_ac;                 // the run's anchor phase e^{i x0 w}
};

}  // namespace posenc::rotary::detail
