// SPDX-License-Identifier: MIT
// Relative-position biases (TUPE-R's b_{j-i}) as Toeplitz operators: per-offset biases, bucketed
// tables (T5-style buckets as a callable), and one product plan per head.
// Part of <posenc/toeplitz/toeplitz.hpp>.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/toeplitz/matrix.hpp>
#include <posenc/toeplitz/product.hpp>

namespace posenc::toeplitz {

/// Per-offset biases: biases[d + rows - 1] = b_d for d = j - i in [-(rows-1), cols-1] (query i,
/// key j). Then (B V)_i = sum_j b_{j-i} V_j, the relative term of linear attention.
template <class Derived>
[[nodiscard]] auto from_relative_bias(std::size_t rows, std::size_t cols, const Eigen::MatrixBase<Derived>& biases) {
  using S = typename Derived::Scalar;
  (void)checked::extent(rows, "toeplitz::from_relative_bias", "rows");
  (void)checked::extent(cols, "toeplitz::from_relative_bias", "cols");
  return toeplitz_matrix<S>(rows, cols, biases);
}

/// A bucketed bias table for one head: b_d = table[bucket(d)], with bucket(d) an integer in
/// [0, table.size()) for every offset d = j - i in [-(rows-1), cols-1] (T5-style buckets plug in
/// as the callable). Throws invalid_argument if a bucket is out of range.
template <class Derived, class Bucket>
[[nodiscard]] auto from_bucketed_bias(std::size_t rows, std::size_t cols, const Eigen::MatrixBase<Derived>& table,
                                      Bucket&& bucket) {
  using S = typename Derived::Scalar;
  static constexpr const char* where = "toeplitz::from_bucketed_bias";
  posenc::detail::require(rows >= 1 && cols >= 1, where, "rows and cols must be >= 1, got ", rows, " and ", cols);
  (void)checked::extent(rows, where, "rows");
  (void)checked::extent(cols, where, "cols");
  posenc::detail::require<shape_error>(table.size() >= 1 && (table.rows() == 1 || table.cols() == 1), where,
                                       "table must be a non-empty vector of per-bucket biases, got shape [",
                                       table.rows(), ", ", table.cols(), "]");
  posenc::detail::require_finite(table.derived(), where, "table");  // named here, not as the matrix's coefficients
  auto b = posenc::detail::allocate_vector<coeff_vector<S>>(rows + cols - 1, where, "rows + cols - 1");
  for (std::ptrdiff_t d = -static_cast<std::ptrdiff_t>(rows - 1); d <= static_cast<std::ptrdiff_t>(cols - 1); ++d) {
    const auto q = bucket(d);
    static_assert(std::is_integral_v<std::remove_cvref_t<decltype(q)>>, "bucket(offset) must return an integer");
    posenc::detail::require(q >= 0 && static_cast<std::int64_t>(q) < static_cast<std::int64_t>(table.size()), where,
                            "bucket(", d, ") must lie in [0, ", table.size(), "), got ", static_cast<std::int64_t>(q));
    b[static_cast<Eigen::Index>(d + static_cast<std::ptrdiff_t>(rows) - 1)] =
        table.derived().coeff(static_cast<Eigen::Index>(q));
  }
  return toeplitz_matrix<S>(rows, cols, b);
}

/// Per-head operators from a bucketed table with one row per head (heads x buckets): plan h
/// applies b^{(h)}_{j-i} = table(h, bucket(j-i)). fft_size as in product_plan.
template <class Derived, class Bucket>
[[nodiscard]] auto head_operators(std::size_t rows, std::size_t cols, const Eigen::MatrixBase<Derived>& table,
                                  Bucket&& bucket, std::size_t fft_size = 0) {
  using S = typename Derived::Scalar;
  posenc::detail::require<shape_error>(table.rows() >= 1 && table.cols() >= 1, "toeplitz::head_operators",
                                       "table must be heads x buckets with both >= 1, got [", table.rows(), ", ",
                                       table.cols(), "]");
  // Every head's plan holds O(rows + cols) coefficients and spectra: bound the total before the
  // first plan (heads * (rows + cols - 1) was formed unchecked, one plan after another).
  (void)checked::extent(rows, "toeplitz::head_operators", "rows");
  (void)checked::extent(cols, "toeplitz::head_operators", "cols");
  (void)checked::elements(static_cast<std::size_t>(table.rows()), rows + cols, "toeplitz::head_operators",
                          "heads * (rows + cols - 1)");
  std::vector<product_plan<S>> plans;
  plans.reserve(static_cast<std::size_t>(table.rows()));
  for (Eigen::Index h = 0; h < table.rows(); ++h) {
    const coeff_vector<S> row = table.row(h).transpose();
    plans.emplace_back(from_bucketed_bias(rows, cols, row, bucket), fft_size);
  }
  return plans;
}

}  // namespace posenc::toeplitz
