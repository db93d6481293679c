// SPDX-License-Identifier: MIT
// RoPE frequencies as float64 tensors, exactly, for the rotary and multi-axis ops (rotary.cpp,
// multiaxis.cpp): freqs [pairs] (each pair's frequency, a double) or [pairs, 2, 3] (the long
// double inv_freq and inv_freq_lo of rotary::frequencies, each split into three non-overlapping
// doubles whose sum is exact).
#pragma once

#include "common.hpp"

#include <posenc/rotary.hpp>

namespace posenc_torch {

inline constexpr int kWideParts = 3;

/// Split a long double into kWideParts doubles whose sum (in long double) is exactly x.
inline void split_wide(posenc::numeric::wide x, double* out) {
  for (int i = 0; i < kWideParts; ++i) {
    out[i] = static_cast<double>(x);
    x -= static_cast<posenc::numeric::wide>(out[i]);
  }
}

inline posenc::numeric::wide join_wide(const double* p) {
  posenc::numeric::wide s = 0;
  for (int i = 0; i < kWideParts; ++i) s += static_cast<posenc::numeric::wide>(p[i]);
  return s;
}

/// Frequencies from a float64 tensor freqs: [pairs] (each a double) or [pairs, 2, 3] (the exact
/// long double inv_freq and inv_freq_lo, each as kWideParts doubles, as split_wide writes them).
inline posenc::rotary::frequencies frequencies_of(const Tensor& freqs, double attention_factor, const char* op,
                                           const char* name) {
  check_storage(freqs, op, name);
  TORCH_CHECK_TYPE(freqs.scalar_type() == at::kDouble, "posenc: ", op, ": ", name, ": expected dtype float64, got ",
                   dtype_name(freqs.scalar_type()));
  TORCH_CHECK_VALUE(freqs.dim() == 1 || (freqs.dim() == 3 && freqs.size(1) == 2 && freqs.size(2) == kWideParts),
                    "posenc: ", op, ": ", name, ": expected [pairs] or [pairs, 2, 3] (exact inv_freq and inv_freq_lo "
                    "as sums of doubles), got shape ", shape_str(freqs.sizes()));
  posenc::rotary::frequencies f;
  f.attention_factor = attention_factor;
  const Tensor c = freqs.contiguous();
  const double* w = c.data_ptr<double>();
  bool any_lo = false;
  for (int64_t k = 0; k < c.size(0); ++k) {
    if (c.dim() == 1) {
      f.inv_freq.push_back(w[k]);
    } else {
      f.inv_freq.push_back(join_wide(w + k * 2 * kWideParts));
      f.inv_freq_lo.push_back(join_wide(w + k * 2 * kWideParts + kWideParts));
      any_lo = any_lo || f.inv_freq_lo.back() != 0;
    }
  }
  if (!any_lo) f.inv_freq_lo.clear();
  return f;
}

/// freqs as a float64 tensor [pairs, 2, 3] that frequencies_of reads back exactly.
inline Tensor exact_frequencies_tensor(const posenc::rotary::frequencies& f) {
  const auto n = static_cast<int64_t>(f.inv_freq.size());
  Tensor out = at::zeros({n, 2, kWideParts}, at::TensorOptions().dtype(at::kDouble));
  double* w = out.data_ptr<double>();
  for (int64_t k = 0; k < n; ++k) {
    const auto i = static_cast<std::size_t>(k);
    split_wide(f.inv_freq[i], w + k * 2 * kWideParts);
    split_wide(i < f.inv_freq_lo.size() ? f.inv_freq_lo[i] : 0, w + k * 2 * kWideParts + kWideParts);
  }
  return out;
}

}  // namespace posenc_torch
