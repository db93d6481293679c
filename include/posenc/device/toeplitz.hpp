// SPDX-License-Identifier: MIT
// Toeplitz materialisation on the Thrust device system: the dense m x n matrix B_ij = b_{j-i}
// from its m + n - 1 coefficients, ordered by offset as posenc::toeplitz::toeplitz_matrix stores
// them (coefficient t = b_{t - (m-1)}: row i is the contiguous slice starting at m - 1 - i).
//
//   posenc::device::toeplitz::dense(const posenc::toeplitz::toeplitz_matrix<T>& B)  (host coefficients,
//                                                        validated by toeplitz_matrix's constructor)
//   posenc::device::toeplitz::dense(m, n, const thrust::device_vector<T>& coefficients)
//                                                       (device coefficients, e.g. a relative-bias
//                                                        vector computed on the device)
// One pass over the m n outputs (the table's bytes). Real scalars (float, double).
#pragma once

#include <thrust/device_vector.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <concepts>
#include <cstddef>
#include <string_view>

#include <posenc/adapters/thrust.hpp>
#include <posenc/device/table.hpp>
#include <posenc/core/error.hpp>
#include <posenc/toeplitz/toeplitz.hpp>

namespace posenc::device {

namespace detail {
template <class T>
struct toeplitz_dense_fn {
  const T* b;
  T* out;
  std::size_t m, n;
  POSENC_HD void operator()(std::size_t e) const {
    const std::size_t i = e / n, j = e % n;
    out[e] = b[j + (m - 1 - i)];
  }
};

template <class T>
device_table<T> toeplitz_dense_unchecked(std::size_t m, std::size_t n, const T* b) {
  device_table<T> out(m, n);
  ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::size_t>(0),
                     ::thrust::counting_iterator<std::size_t>(m * n), toeplitz_dense_fn<T>{b, out.data(), m, n});
  return out;
}
}  // namespace detail

namespace toeplitz {

/// The dense matrix of B on the device (its coefficients are uploaded once).
template <std::floating_point T>
[[nodiscard]] device_table<T> dense(const posenc::toeplitz::toeplitz_matrix<T>& B) {
  constexpr std::string_view where = "device::toeplitz::dense";
  const auto& c = B.coefficients();
  const auto b = posenc::detail::upload<T>(c.data(), static_cast<std::size_t>(c.size()), where);
  return detail::toeplitz_dense_unchecked(B.rows(), B.cols(), posenc::detail::raw_data(b));
}

/// The dense m x n matrix from m + n - 1 device coefficients [b_{-(m-1)}, ..., b_{n-1}].
/// Throws invalid_argument (m or n = 0), shape_error (wrong length), non_finite_error (NaN/Inf),
/// as posenc::toeplitz::toeplitz_matrix does.
template <std::floating_point T>
[[nodiscard]] device_table<T> dense(std::size_t m, std::size_t n, const ::thrust::device_vector<T>& coefficients) {
  constexpr std::string_view where = "device::toeplitz::dense";
  posenc::detail::require(m >= 1, where, "rows must be >= 1, got ", m);
  posenc::detail::require(n >= 1, where, "cols must be >= 1, got ", n);
  posenc::detail::require<shape_error>(coefficients.size() == m + n - 1, where, "coefficients must have rows+cols-1 = ",
                                       m + n - 1, " entries (offsets -", m - 1, " .. ", n - 1, "), got ",
                                       coefficients.size());
  posenc::detail::require<non_finite_error>(posenc::backend::thrust::all_finite(coefficients), where,
                                            "coefficients contains NaN or Inf");
  return detail::toeplitz_dense_unchecked(m, n, posenc::detail::raw_data(coefficients));
}

}  // namespace toeplitz
}  // namespace posenc::device
