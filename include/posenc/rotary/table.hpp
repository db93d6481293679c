// SPDX-License-Identifier: MIT
// Exact rotary cos/sin tables: cos(p * inv_freq[k]) * attention_factor and the same for sin, for
// integer positions p in [first, first + count) or arbitrary real positions, in double, long
// double, float, Eigen::half and Eigen::bfloat16.
//
// Accuracy (tests/rotary/table.test.cpp): the reference value of an entry is the sine/cosine of
// the long double phase p * inv_freq[k] (numeric::sincos_angle's phase), times attention_factor.
//  - float: the correctly rounded reference (a rigorous running error bound decides each entry;
//    the few entries it cannot decide are recomputed directly: <= 0.5 ulp + 2^-28 ulp); so never
//    outside [-attention_factor, attention_factor] and exactly 1 at p = 0 with factor 1.
//  - Eigen::half / Eigen::bfloat16: the float value above rounded to the half type (<= 0.5 ulp
//    of the half type + the float rounding); math in double.
//  - double / long double: every entry evaluated directly (a few ulp).
// Integer-position float/half tables run at a few times a memory fill: each run of B rows shares
// one exactly evaluated anchor row, rows a + b = anchor * offset(b) by angle addition in double.
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

#include <posenc/core/error.hpp>
#include <posenc/encoding/table.hpp>
#include <posenc/numeric/phase.hpp>
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

inline std::size_t validate_frequencies(const frequencies& f, std::string_view where) {
  posenc::detail::require(!f.inv_freq.empty(), where, "frequencies.inv_freq: expected at least one frequency, got 0");
  for (std::size_t k = 0; k < f.inv_freq.size(); ++k)
    posenc::detail::require<non_finite_error>(std::isfinite(f.inv_freq[k]) && f.inv_freq[k] >= 0, where,
                                              "frequencies.inv_freq: expected finite values >= 0, got ",
                                              static_cast<double>(f.inv_freq[k]), " at index ", k);
  posenc::detail::require<non_finite_error>(std::isfinite(f.attention_factor), where,
                                            "frequencies.attention_factor: expected a finite value, got ",
                                            f.attention_factor);
  posenc::detail::require(f.attention_factor > 0, where, "frequencies.attention_factor: expected a value > 0, got ",
                          f.attention_factor);
  return f.inv_freq.size();
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

/// The fast narrow-type fill of rows [first, first + count): see the header comment.
template <class T>
void fill_narrow(const frequencies& f, std::uint64_t first, std::size_t count, T* cos, T* sin, std::size_t stride,
                 table_layout lay) {
  using W = numeric::wide;
  const std::size_t m = f.inv_freq.size();
  constexpr std::size_t B = 64;  // rows per anchor
  const double af = f.attention_factor;
  // offsets e^{i b w_k}, b < B, exact (double)
  std::vector<double> os(B * m), oc(B * m);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t k = 0; k < m; ++k)
      numeric::sincos_angle(static_cast<W>(b) * f.inv_freq[k], os[b * m + k], oc[b * m + k]);
  std::vector<double> as(m), ac(m), eph(m), vs(m), vc(m), es(m), ec(m);
  // Error bound of one angle-added entry v = x1 +- x2 (x1, x2 products of exact-phase doubles),
  // against the sine/cosine of the long double phase p * w: the inputs' relative 2^-53 and the
  // products' and sum's roundings (<= 2^-50 (|x1| + |x2|); 2^-48 with margin), the reduction error of
  // the two phases (<= 2^-60 each, with margin 2^-57), and |p w - (a w + b w)| <= 3 * 2^-64 * p w
  // from the long double phase roundings (bounded by 2^-61 (a + B) w).
  constexpr double rel = 0x1p-48, phase_rel = 0x1p-61, floor_abs = 0x1p-57, out_rel = 0x1p-52;
  for (std::size_t r0 = 0; r0 < count; r0 += B) {
    const std::uint64_t a = first + r0;
    for (std::size_t k = 0; k < m; ++k) {
      numeric::sincos_angle(static_cast<W>(a) * f.inv_freq[k], as[k], ac[k]);
      eph[k] = static_cast<double>((static_cast<W>(a) + B) * f.inv_freq[k]) * phase_rel + floor_abs;
    }
    const std::size_t nb = std::min(B, count - r0);
    for (std::size_t b = 0; b < nb; ++b) {
      const double* __restrict sb = &os[b * m];
      const double* __restrict cb = &oc[b * m];
      T* __restrict cr = cos + (r0 + b) * stride;
      T* __restrict sr = sin + (r0 + b) * stride;
      int undecided = 0;
      for (std::size_t k = 0; k < m; ++k) {
        const double s1 = as[k] * cb[k], s2 = ac[k] * sb[k], c1 = ac[k] * cb[k], c2 = as[k] * sb[k];
        const double s = (s1 + s2) * af, c = (c1 - c2) * af;
        const double e_s = ((std::abs(s1) + std::abs(s2)) * rel + eph[k]) * af + std::abs(s) * out_rel;
        const double e_c = ((std::abs(c1) + std::abs(c2)) * rel + eph[k]) * af + std::abs(c) * out_rel;
        const float fs = static_cast<float>(s), fc = static_cast<float>(c);
        undecided += static_cast<int>(static_cast<float>(s - e_s) != static_cast<float>(s + e_s)) +
                     static_cast<int>(static_cast<float>(c - e_c) != static_cast<float>(c + e_c));
        sr[k] = static_cast<T>(fs);
        cr[k] = static_cast<T>(fc);
      }
      if (undecided != 0) {  // rare: the value lies within its error bound of a float rounding boundary
        const W p = static_cast<W>(a + b);
        for (std::size_t k = 0; k < m; ++k) {
          const double s1 = as[k] * cb[k], s2 = ac[k] * sb[k], c1 = ac[k] * cb[k], c2 = as[k] * sb[k];
          const double s = (s1 + s2) * af, c = (c1 - c2) * af;
          const double e_s = ((std::abs(s1) + std::abs(s2)) * rel + eph[k]) * af + std::abs(s) * out_rel;
          const double e_c = ((std::abs(c1) + std::abs(c2)) * rel + eph[k]) * af + std::abs(c) * out_rel;
          if (static_cast<float>(s - e_s) != static_cast<float>(s + e_s) ||
              static_cast<float>(c - e_c) != static_cast<float>(c + e_c))
            direct_entry(p * f.inv_freq[k], static_cast<long double>(af), sr[k], cr[k]);
        }
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
  for (std::size_t i = 0; i < count; ++i) {
    const numeric::wide p = positions.empty() ? first + static_cast<numeric::wide>(i) : positions[i];
    T* cr = cos + i * stride;
    T* sr = sin + i * stride;
    for (std::size_t k = 0; k < m; ++k) direct_entry(p * f.inv_freq[k], af, sr[k], cr[k]);
    duplicate_row(cr, m, lay);
    duplicate_row(sr, m, lay);
  }
}

inline constexpr std::uint64_t max_table_position = std::uint64_t{1} << 53;

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
  detail::validate_frequencies(f, "rotary::table");
  const auto w = static_cast<Eigen::Index>(table_width(f, lay));
  posenc::detail::require(count <= detail::max_table_position, "rotary::table", "count: expected < 2^53, got ", count);
  cos_sin_table<T> t{posenc::table<T>(static_cast<Eigen::Index>(count), w),
                     posenc::table<T>(static_cast<Eigen::Index>(count), w)};
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
  const auto w = static_cast<Eigen::Index>(table_width(f, lay));
  const auto n = static_cast<Eigen::Index>(positions.size());
  cos_sin_table<T> t{posenc::table<T>(n, w), posenc::table<T>(n, w)};
  detail::fill_direct(f, positions.size(), t.cos.data(), t.sin.data(), static_cast<std::size_t>(w), lay, 0, positions);
  return t;
}

}  // namespace posenc::rotary
