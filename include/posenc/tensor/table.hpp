// SPDX-License-Identifier: MIT
// Vocabulary of the encodings: a position table is row-major and position-major (row i is
// position i, d columns), as every Transformer codebase stores it.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

#include <posenc/core/checked.hpp>
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

/// The storage types of the in-place attention operations (rotary::apply_inplace, alibi::add_bias
/// and their tables): float, double, Eigen::half, Eigen::bfloat16. Written once, here.
template <class T>
inline constexpr bool is_storage_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                     std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

/// An uninitialised rows x cols Eigen matrix M: rows and cols checked against max_extent, the
/// element count against max_elements (size_error naming `rows_name` / `cols_name`), allocation
/// failure reported as allocation_error instead of std::bad_alloc.
template <class M>
[[nodiscard]] M allocate_matrix(std::size_t rows, std::size_t cols, std::string_view where, std::string_view rows_name,
                                std::string_view cols_name) {
  (void)checked::extent(rows, where, rows_name);
  (void)checked::extent(cols, where, cols_name);
  const std::string what = concat(rows_name, " * ", cols_name);
  const std::size_t n = checked::elements(rows, cols, where, what);
  return checked::allocate(where, what, n, sizeof(typename M::Scalar),
                           [&] { return M(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols)); });
}
/// A position table (row-major) of rows x cols, as allocate_matrix.
template <class T>
[[nodiscard]] table<T> allocate_table(std::size_t rows, std::size_t cols, std::string_view where,
                                      std::string_view rows_name, std::string_view cols_name) {
  return allocate_matrix<table<T>>(rows, cols, where, rows_name, cols_name);
}
/// An uninitialised Eigen vector V of n elements, as allocate_matrix.
template <class V>
[[nodiscard]] V allocate_vector(std::size_t n, std::string_view where, std::string_view what) {
  const std::size_t count = checked::elements(checked::extent(n, where, what), 1, where, what);
  return checked::allocate(where, what, count, sizeof(typename V::Scalar), [&] { return V(static_cast<Eigen::Index>(n)); });
}
/// Throw non_finite_error naming `what` if x has a NaN or Inf. For float and double one
/// vectorised pass: every finite x * 0 is +-0 and a sum of zeros is 0, while a NaN or an Inf
/// makes the sum NaN (Eigen's allFinite() is a non-vectorised short-circuit loop, several times
/// slower on the d^2 weights TUPE validates per call). Other scalars use allFinite(). Like
/// allFinite(), it relies on IEEE semantics (not valid under -ffast-math).
template <class Derived>
void require_finite(const Eigen::DenseBase<Derived>& x, std::string_view where, std::string_view what) {
  using S = typename Derived::Scalar;
  bool finite = true;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    finite = x.size() == 0 || (x.derived().array() * S(0)).sum() == S(0);
  } else {
    finite = x.derived().allFinite();
  }
  if (!finite) fail<non_finite_error>(where, what, " contains NaN or Inf");
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
