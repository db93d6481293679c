// SPDX-License-Identifier: MIT
// Exact rotary cos/sin tables: cos(p * inv_freq[k]) * attention_factor and the same for sin, for
// integer positions p in [first, first + count) or arbitrary real positions, in double, long
// double, float, Eigen::half and Eigen::bfloat16.
//
// Accuracy (tests/rotary/table.test.cpp, tests/rotary/exact_phase.test.cpp): the reference value
// of a float, half or long double entry is the sine/cosine of the long double phase
// p * inv_freq[k] (numeric::sincos_angle's phase), times attention_factor; that of a double entry
// is attention_factor times the sine/cosine of the exact phase p * omega_k (omega_k =
// inv_freq[k] + inv_freq_lo[k], the rule's exact frequency; numeric::sincos_phase).
//  - float: the correctly rounded reference (a rigorous running error bound decides each entry;
//    the few entries it cannot decide are recomputed directly: <= 0.5 ulp + 2^-28 ulp); so never
//    outside [-attention_factor, attention_factor] and exactly 1 at p = 0 with factor 1.
//  - Eigen::half / Eigen::bfloat16: the float value above rounded to the half type (<= 0.5 ulp
//    of the half type + the float rounding); math in double.
//  - double: every entry evaluated directly, within 0.5 ulp + 2^-9 ulp of the exact value
//    wherever |sin|, |cos| >= 2^-60 p omega_k (so within 1 ulp at every position up to 2^24 of
//    the tested rules: the smallest |sin|, |cos| found there is 2^-28.5);
//  - long double: every entry evaluated directly (~1e-17 absolute from the long double phase).
// Integer-position float/half tables come from small exact phase tables by angle addition in
// double, each entry's float rounding certified by a rigorous error bound (bench/rotary_table).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/numeric/phase.hpp>
#include <posenc/numeric/phase_fill.hpp>
#include <posenc/rotary/frequencies.hpp>

namespace posenc::rotary {

/// The column layout of a cos/sin table of rotary_dim = 2m:
///  - pairs: m columns, column k = pair k (the natural [positions x rotary_dim/2] table);
///  - duplicated: 2m columns, [cos | cos] and [sin | sin] (HF's emb = cat(freqs, freqs), what
///    rotate_half consumes).
enum class table_layout { pairs, duplicated };

/// cos and sin tables (rows = positions), both scaled by the attention factor.
template <class T>
struct cos_sin_table {
  posenc::table<T> cos, sin;
};

namespace detail {

template <class T>
inline constexpr bool narrow_v = std::is_same_v<T, float> || std::is_same_v<T, Eigen::half> ||
                                 std::is_same_v<T, Eigen::bfloat16>;

template <class T>
inline constexpr bool table_type_v = narrow_v<T> || std::is_same_v<T, double> || std::is_same_v<T, long double>;

using numeric::detail::anchor_phases;  // the phase fill (posenc/numeric/phase_fill.hpp)
using numeric::detail::angle_sum;
using numeric::detail::phase_rows;
using numeric::detail::round_certified;

/// The frequencies' validator (rotary::validate in frequencies.hpp), under the name tables use.
inline std::size_t validate_frequencies(const frequencies& f, std::string_view where) {
  return rotary::validate(f, where, "frequencies");
}

/// One entry evaluated directly: (sin, cos) of the long double phase, times af, rounded to T.
template <class T>
inline void direct_entry(numeric::wide theta, long double af, T& s, T& c) {
  if constexpr (std::is_same_v<T, long double>) {
    numeric::sincos_angle(theta, s, c);
    s *= af;
    c *= af;
  } else {
    double sd, cd;
    numeric::sincos_angle(theta, sd, cd);
    const double a = static_cast<double>(af);
    if constexpr (std::is_same_v<T, double>) {
      s = sd * a;
      c = cd * a;
    } else {
      s = static_cast<T>(static_cast<float>(sd * a));
      c = static_cast<T>(static_cast<float>(cd * a));
    }
  }
}

/// Write cos/sin row values (m of them) into the layout.
template <class T>
inline void duplicate_row(T* row, std::size_t m, table_layout lay) {
  if (lay == table_layout::duplicated) std::copy(row, row + m, row + m);
}

/// The fast narrow-type fill of rows [first, first + count). Rows come in runs of B = 64 from an
/// anchor a: entry (a + b, k) = anchor(a) * offset(b) by angle addition in double, where
/// offset(b) = e^{i b w} (doubling table, B rows), anchor(a) = T2[e] * T1[c] with T1 the doubling
/// table of steps B (C rows) and T2 exact at first + e B C (numeric/phase_fill.hpp). Every such
/// value is within a rigorous absolute bound E of the sine/cosine of the long double phase (p * w): the products' and
/// tables' roundings (< 2^-46, taken as 2^-44), the phase roundings |p w - sum of the parts' long
/// double phases| <= 8 * 2^-64 p w (taken as 2^-58 (a + B) w), and the reductions' 2^-62 each.
/// The float rounding of v is taken when float(v - E) == float(v + E), which proves it is the
/// rounding of the reference; otherwise (rare) the entry is evaluated directly.
template <class T>
void fill_narrow(const frequencies& f, std::uint64_t first, std::size_t count, T* cos, T* sin, std::size_t stride,
                 table_layout lay) {
  using W = numeric::wide;
  const std::size_t m = f.inv_freq.size();
  if (count == 0) return;
  constexpr std::size_t B = 64;
  const std::size_t anchors = (count + B - 1) / B;
  std::size_t C = 1;
  while (C < 64 && C * C < anchors) ++C;  // T1 rows ~ sqrt(anchors), at most 64 (doubling error bound)
  phase_rows<double> offset;
  offset.doubling(B, 0, 1, f.inv_freq);
  const anchor_phases<double> anchor(anchors, C, static_cast<W>(first), 1, B, f.inv_freq, false, true);
  const double af = f.attention_factor;
  constexpr double abs_err = 0x1p-44, phase_rel = 0x1p-58, out_rel = 0x1p-52;
  std::vector<double> as(m), ac(m), err(m);
  std::vector<float> sf(std::is_same_v<T, float> ? 0 : m), cf(std::is_same_v<T, float> ? 0 : m);  // half types
  for (std::size_t q = 0; q < anchors; ++q) {
    const std::uint64_t a = first + q * B;
    anchor.get(q, as.data(), ac.data());
    for (std::size_t k = 0; k < m; ++k) {
      as[k] *= af;
      ac[k] *= af;
      err[k] = (abs_err + static_cast<double>(static_cast<W>(a + B) * f.inv_freq[k]) * phase_rel) * af + af * out_rel;
    }
    const std::size_t nb = std::min(B, count - q * B);
    for (std::size_t b = 0; b < nb; ++b) {
      const double* __restrict sb = offset.sin_row(b);
      const double* __restrict cb = offset.cos_row(b);
      T* __restrict cr = cos + (q * B + b) * stride;
      T* __restrict sr = sin + (q * B + b) * stride;
      float* fs = sf.data();
      float* fc = cf.data();
      if constexpr (std::is_same_v<T, float>) {
        fs = sr;
        fc = cr;
      }
      const int undecided = numeric::detail::certified_angle_sum<false, false>(m, as.data(), ac.data(), sb, cb,
                                                                               err.data(), fs, fc, nullptr, nullptr);
      if (undecided != 0) {  // rare: a value lies within its error bound of a float rounding boundary
        const W p = static_cast<W>(a + b);
        for (std::size_t k = 0; k < m; ++k) {
          double s, c;
          angle_sum(as[k], ac[k], sb[k], cb[k], s, c);
          float rs, rc;  // both decided: their roundings; else both evaluated directly
          if ((round_certified(s, err[k], rs) | round_certified(c, err[k], rc)) == 0) {
            fs[k] = rs;
            fc[k] = rc;
          } else {
            direct_entry(p * f.inv_freq[k], static_cast<long double>(af), fs[k], fc[k]);
          }
        }
      }
      if constexpr (!std::is_same_v<T, float>)
        for (std::size_t k = 0; k < m; ++k) {
          sr[k] = static_cast<T>(fs[k]);
          cr[k] = static_cast<T>(fc[k]);
        }
      duplicate_row(cr, m, lay);
      duplicate_row(sr, m, lay);
    }
  }
}

template <class T>
void fill_direct(const frequencies& f, std::size_t count, T* cos, T* sin, std::size_t stride, table_layout lay,
                 numeric::wide first, std::span<const double> positions) {
  const std::size_t m = f.inv_freq.size();
  const long double af = f.attention_factor;
  std::vector<numeric::frequency3> w3;  // double: the exact frequencies (numeric::sincos_phase)
  if constexpr (std::is_same_v<T, double>) {
    w3.resize(m);
    for (std::size_t k = 0; k < m; ++k) w3[k] = frequency3_of(f, k);
  }
  for (std::size_t i = 0; i < count; ++i) {
    const numeric::wide p = positions.empty() ? first + static_cast<numeric::wide>(i) : positions[i];
    T* cr = cos + i * stride;
    T* sr = sin + i * stride;
    if constexpr (std::is_same_v<T, double>) {
      const double ph = static_cast<double>(p), pl = static_cast<double>(p - static_cast<numeric::wide>(ph));
      for (std::size_t k = 0; k < m; ++k) numeric::sincos_phase(ph, pl, w3[k], f.attention_factor, sr[k], cr[k]);
    } else {
      for (std::size_t k = 0; k < m; ++k) direct_entry(p * f.inv_freq[k], af, sr[k], cr[k]);
    }
    duplicate_row(cr, m, lay);
    duplicate_row(sr, m, lay);
  }
}

inline constexpr std::uint64_t max_table_position = std::uint64_t{1} << 53;

/// Every entry is cos or sin times attention_factor, so attention_factor itself (the entry at
/// phase 0) must round to a finite, normal T (Eigen::half: 6.1e-5 .. 65504): invalid_argument
/// otherwise, instead of a table of Inf, or of zeros and subnormals (a factor below the type's
/// normal range keeps no precision there). Double: rotary::validate's check.
template <class T>
void check_factor_fits(const frequencies& f, std::string_view where) {
  bool fits = true;
  if constexpr (std::is_same_v<T, float>)
    fits = std::isnormal(static_cast<float>(f.attention_factor));
  else if constexpr (!std::is_same_v<T, double> && !std::is_same_v<T, long double>)
    fits = std::isnormal(static_cast<float>(T(static_cast<float>(f.attention_factor))));
  posenc::detail::require(fits, where, "frequencies.attention_factor: ", f.attention_factor,
                          " does not fit in the table's element type as a normal number (its entries would round "
                          "to Inf, or lose their precision below the type's normal range)");
}

}  // namespace detail

/// Columns of a table of f in a layout: m (pairs) or 2m (duplicated).
inline std::size_t table_width(const frequencies& f, table_layout lay) {
  return lay == table_layout::duplicated ? 2 * f.inv_freq.size() : f.inv_freq.size();
}

/// Fill caller-owned cos and sin tables: row i (at cos + i * row_stride, sin + i * row_stride)
/// holds position first + i, table_width(f, lay) columns. Positions must stay below 2^53.
template <class T>
  requires detail::table_type_v<T>
void fill_table(const frequencies& f, std::uint64_t first, std::size_t count, T* cos, T* sin, std::size_t row_stride,
                table_layout lay = table_layout::pairs) {
  constexpr std::string_view where = "rotary::fill_table";
  detail::validate_frequencies(f, where);
  posenc::detail::require(lay == table_layout::pairs || lay == table_layout::duplicated, where,
                          "layout: expected table_layout::pairs or table_layout::duplicated");
  posenc::detail::require(first <= detail::max_table_position && count <= detail::max_table_position - first, where,
                          "first + count: expected positions below 2^53, got first = ", first, " and count = ", count);
  posenc::detail::require((cos != nullptr && sin != nullptr) || count == 0, where,
                          "cos/sin: expected non-null buffers for ", count, " rows");
  posenc::detail::require(row_stride >= table_width(f, lay) || count <= 1, where, "row_stride: expected >= ",
                          table_width(f, lay), ", got ", row_stride);
  if (count > 0)  // the span the rows address, (count - 1) row_stride + width, within max_elements
    (void)checked::elements(checked::add(checked::mul(count - 1, row_stride, where, "(count - 1) * row_stride"),
                                         table_width(f, lay), where, "(count - 1) * row_stride + width"),
                            1, where, "(count - 1) * row_stride + width");
  detail::check_factor_fits<T>(f, where);
  if constexpr (detail::narrow_v<T>)
    detail::fill_narrow(f, first, count, cos, sin, row_stride, lay);
  else
    detail::fill_direct(f, count, cos, sin, row_stride, lay, static_cast<numeric::wide>(first), {});
}

/// The cos/sin tables of positions first .. first + count - 1.
template <class T>
  requires detail::table_type_v<T>
cos_sin_table<T> table(const frequencies& f, std::uint64_t first, std::size_t count,
                       table_layout lay = table_layout::pairs) {
  constexpr std::string_view where = "rotary::table";
  detail::validate_frequencies(f, where);
  posenc::detail::require(lay == table_layout::pairs || lay == table_layout::duplicated, where,
                          "layout: expected table_layout::pairs or table_layout::duplicated");
  detail::check_factor_fits<T>(f, where);
  const auto w = static_cast<Eigen::Index>(table_width(f, lay));
  const auto width = static_cast<std::size_t>(w);
  cos_sin_table<T> t{posenc::detail::allocate_table<T>(count, width, where, "count", "table width"),
                     posenc::detail::allocate_table<T>(count, width, where, "count", "table width")};
  fill_table<T>(f, first, count, t.cos.data(), t.sin.data(), static_cast<std::size_t>(w), lay);
  return t;
}

/// The cos/sin tables of arbitrary finite real positions (every entry evaluated directly).
template <class T>
  requires detail::table_type_v<T>
cos_sin_table<T> table(const frequencies& f, std::span<const double> positions, table_layout lay = table_layout::pairs) {
  constexpr std::string_view where = "rotary::table";
  detail::validate_frequencies(f, where);
  posenc::detail::require(lay == table_layout::pairs || lay == table_layout::duplicated, where,
                          "layout: expected table_layout::pairs or table_layout::duplicated");
  for (std::size_t i = 0; i < positions.size(); ++i)
    posenc::detail::require<non_finite_error>(std::isfinite(positions[i]), where,
                                              "positions: expected finite positions, got ", positions[i], " at index ",
                                              i);
  detail::check_factor_fits<T>(f, where);
  const std::size_t w = table_width(f, lay);
  cos_sin_table<T> t{posenc::detail::allocate_table<T>(positions.size(), w, where, "positions", "table width"),
                     posenc::detail::allocate_table<T>(positions.size(), w, where, "positions", "table width")};
  detail::fill_direct(f, positions.size(), t.cos.data(), t.sin.data(), static_cast<std::size_t>(w), lay, 0, positions);
  return t;
}

}  // namespace posenc::rotary
