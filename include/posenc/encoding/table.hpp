// SPDX-License-Identifier: MIT
// Vocabulary of the encodings: a position table is row-major and position-major (row i is
// position i, d columns), as every Transformer codebase stores it.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <string_view>

#include <posenc/core/error.hpp>

namespace posenc {

/// A position table: rows = positions, columns = features (row-major).
template <class T>
using table = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// A row-major matrix of any role (weights stored as nn.Linear stores them: [out, in]).
template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

template <class T>
using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

namespace detail {
/// Throw non_finite_error naming `what` if x has a NaN or Inf.
template <class Derived>
void require_finite(const Eigen::DenseBase<Derived>& x, std::string_view where, std::string_view what) {
  if (!x.derived().allFinite()) fail<non_finite_error>(where, what, " contains NaN or Inf");
}
/// Throw shape_error unless x is rows x cols.
template <class Derived>
void require_shape(const Eigen::EigenBase<Derived>& x, Eigen::Index rows, Eigen::Index cols, std::string_view where,
                   std::string_view what) {
  if (x.rows() != rows || x.cols() != cols)
    fail<shape_error>(where, what, ": expected shape [", rows, ", ", cols, "], got [", x.rows(), ", ", x.cols(), "]");
}
}  // namespace detail
}  // namespace posenc
