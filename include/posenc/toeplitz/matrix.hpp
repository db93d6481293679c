// SPDX-License-Identifier: MIT
// Toeplitz and circulant matrices (TUPE paper, section 3.3): B_ij = b_{j-i} stored as its
// coefficients, dense materialisation and exact row/column access; the circulant C_jk =
// c_{(j-k) mod N} with its eigenvalues by FFT; circulant embeddings of B (the paper's eq. 12 of
// size 2n, the minimal one of size m+n-1, any larger size); the coefficient types (`scalar`).
// Part of <posenc/toeplitz/toeplitz.hpp>.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/fft/plan.hpp>
#include <posenc/tensor/table.hpp>

namespace posenc::toeplitz {

namespace detail {
template <class S>
struct scalar_info {
  static constexpr bool ok = std::is_floating_point_v<S>;
  static constexpr bool is_complex = false;
  using real = S;
};
template <class T>
struct scalar_info<std::complex<T>> {
  static constexpr bool ok = std::is_floating_point_v<T>;
  static constexpr bool is_complex = true;
  using real = T;
};
}  // namespace detail

/// A coefficient type: float, double, long double or std::complex of one of them.
template <class S>
concept scalar = detail::scalar_info<S>::ok;

template <scalar S>
using real_of = typename detail::scalar_info<S>::real;

template <scalar S>
inline constexpr bool is_complex_v = detail::scalar_info<S>::is_complex;

/// Scalar type of a product of an S matrix and a U matrix (complex if either is).
template <scalar S, scalar U>
using product_scalar =
    std::conditional_t<is_complex_v<S> || is_complex_v<U>, std::complex<real_of<S>>, real_of<S>>;

/// Column vector of coefficients.
template <scalar S>
using coeff_vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// An m x n Toeplitz matrix B with B_ij = b_{j-i} (0-based i < m, j < n), stored as the m+n-1
/// coefficients ordered by offset: coefficients()[d + (m-1)] = b_d for d = -(m-1) .. n-1, i.e.
/// [b_{-(m-1)}, ..., b_{-1}, b_0, b_1, ..., b_{n-1}]. Row i is the contiguous slice starting at
/// m-1-i; the first column is (b_0, b_{-1}, ..., b_{-(m-1)}), the first row (b_0, ..., b_{n-1}).
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
template <scalar S>
class toeplitz_matrix {
 public:
  using scalar_type = S;

  /// m x n matrix from its m+n-1 coefficients (layout above). Throws invalid_argument for m or n = 0,
  /// shape_error for a wrong length, non_finite_error for NaN/Inf.
  template <class Derived>
  toeplitz_matrix(std::size_t rows, std::size_t cols, const Eigen::MatrixBase<Derived>& coefficients)
      : m_rows(rows), m_cols(cols) {
    static constexpr const char* where = "toeplitz::toeplitz_matrix";
    posenc::detail::require(rows >= 1, where, "rows must be >= 1, got ", rows);
    posenc::detail::require(cols >= 1, where, "cols must be >= 1, got ", cols);
    (void)checked::extent(rows, where, "rows");  // so rows + cols - 1 cannot wrap
    (void)checked::extent(cols, where, "cols");
    posenc::detail::require<shape_error>(coefficients.cols() == 1 || coefficients.rows() == 1, where,
                                         "coefficients must be a vector, got shape [", coefficients.rows(), ", ",
                                         coefficients.cols(), "]");
    const auto len = static_cast<std::size_t>(coefficients.size());
    posenc::detail::require<shape_error>(len == rows + cols - 1, where, "coefficients must have rows+cols-1 = ",
                                         rows + cols - 1, " entries (offsets -", rows - 1, " .. ", cols - 1,
                                         "), got ", len);
    m_b.resize(static_cast<Eigen::Index>(len));
    for (Eigen::Index t = 0; t < m_b.size(); ++t) m_b[t] = static_cast<S>(coefficients.derived().coeff(t));
    posenc::detail::require_finite(m_b, where, "coefficients");
  }

  /// Square n x n matrix from its 2n-1 coefficients [b_{-(n-1)}, ..., b_{n-1}].
  template <class Derived>
  static toeplitz_matrix square(std::size_t n, const Eigen::MatrixBase<Derived>& coefficients) {
    return toeplitz_matrix(n, n, coefficients);
  }

  /// From the first column c (c_i = b_{-i}, length m) and the first row r (r_j = b_j, length n),
  /// scipy.linalg.toeplitz(c, r) order. c[0] and r[0] must agree (both are b_0).
  template <class DC, class DR>
  static toeplitz_matrix from_column_row(const Eigen::MatrixBase<DC>& c, const Eigen::MatrixBase<DR>& r) {
    static constexpr const char* where = "toeplitz::toeplitz_matrix::from_column_row";
    posenc::detail::require(c.size() >= 1 && r.size() >= 1, where, "first column and first row must be non-empty, got ",
                            c.size(), " and ", r.size(), " entries");
    posenc::detail::require(c.derived().coeff(0) == r.derived().coeff(0), where,
                            "first column and first row must share b_0: c[0] != r[0]");
    const std::size_t m = static_cast<std::size_t>(c.size()), n = static_cast<std::size_t>(r.size());
    coeff_vector<S> b(static_cast<Eigen::Index>(m + n - 1));
    for (std::size_t i = 0; i < m; ++i) b[static_cast<Eigen::Index>(m - 1 - i)] = static_cast<S>(c.derived().coeff(i));
    for (std::size_t j = 1; j < n; ++j) b[static_cast<Eigen::Index>(m - 1 + j)] = static_cast<S>(r.derived().coeff(j));
    return toeplitz_matrix(m, n, b);
  }

  [[nodiscard]] std::size_t rows() const noexcept { return m_rows; }
  [[nodiscard]] std::size_t cols() const noexcept { return m_cols; }
  [[nodiscard]] bool is_square() const noexcept { return m_rows == m_cols; }
  /// All m+n-1 coefficients, ordered by offset (see the class comment).
  [[nodiscard]] const coeff_vector<S>& coefficients() const noexcept { return m_b; }

  /// b_d for d in [-(m-1), n-1]; throws invalid_argument outside.
  [[nodiscard]] S coefficient(std::ptrdiff_t d) const {
    posenc::detail::require(d >= -static_cast<std::ptrdiff_t>(m_rows - 1) && d <= static_cast<std::ptrdiff_t>(m_cols - 1),
                            "toeplitz::toeplitz_matrix::coefficient", "offset d must lie in [-", m_rows - 1, ", ",
                            m_cols - 1, "], got ", d);
    return m_b[static_cast<Eigen::Index>(d + static_cast<std::ptrdiff_t>(m_rows) - 1)];
  }

  /// B_ij (bounds-checked).
  [[nodiscard]] S operator()(std::size_t i, std::size_t j) const {
    check_index(i, m_rows, "i");
    check_index(j, m_cols, "j");
    return m_b[static_cast<Eigen::Index>(j + m_rows - 1 - i)];
  }

  /// Row i (length n): a copy of coefficients()[m-1-i .. m-1-i+n).
  [[nodiscard]] coeff_vector<S> row(std::size_t i) const {
    check_index(i, m_rows, "i");
    return m_b.segment(static_cast<Eigen::Index>(m_rows - 1 - i), static_cast<Eigen::Index>(m_cols));
  }
  /// Column j (length m): B_ij = b_{j-i}, i = 0..m-1.
  [[nodiscard]] coeff_vector<S> col(std::size_t j) const {
    check_index(j, m_cols, "j");
    return m_b.segment(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(m_rows)).reverse();
  }

  /// The dense m x n matrix (row-major), O(m n) memory.
  [[nodiscard]] posenc::matrix<S> dense() const {
    auto d = posenc::detail::allocate_matrix<posenc::matrix<S>>(m_rows, m_cols, "toeplitz::toeplitz_matrix::dense",
                                                                "rows", "cols");
    for (std::size_t i = 0; i < m_rows; ++i) d.row(static_cast<Eigen::Index>(i)) = row(i).transpose();
    return d;
  }

 private:
  static void check_index(std::size_t i, std::size_t n, const char* what) {
    posenc::detail::require(i < n, "toeplitz::toeplitz_matrix", "index ", what, " must be < ", n, ", got ", i);
  }
  std::size_t m_rows, m_cols;
  coeff_vector<S> m_b;
};

/// An N x N circulant C_jk = c_{(j-k) mod N}, stored as its first column c. Eigenvector k is
/// f_k = (exp(+2 pi i j k / N))_j with eigenvalue lambda_k = sum_j c_j exp(-2 pi i j k / N)
/// (the forward DFT of the first column), so C = F diag(lambda) F^{-1}, F_jk = exp(2 pi i j k / N).
/// Thread safety: shareable const (a value type; docs/thread-safety.md).
template <scalar S>
class circulant_matrix {
 public:
  template <class Derived>
  explicit circulant_matrix(const Eigen::MatrixBase<Derived>& first_column) {
    static constexpr const char* where = "toeplitz::circulant_matrix";
    posenc::detail::require(first_column.size() >= 1, where, "first column must be non-empty");
    // the length through the checked door: a column beyond max_extent is a size_error, a failed
    // allocation an allocation_error (never std::bad_alloc)
    m_c = posenc::detail::allocate_vector<coeff_vector<S>>(static_cast<std::size_t>(first_column.size()), where,
                                                           "first column");
    for (Eigen::Index t = 0; t < m_c.size(); ++t) m_c[t] = static_cast<S>(first_column.derived().coeff(t));
    posenc::detail::require_finite(m_c, where, "first column");
  }

  [[nodiscard]] std::size_t size() const noexcept { return static_cast<std::size_t>(m_c.size()); }
  [[nodiscard]] const coeff_vector<S>& first_column() const noexcept { return m_c; }
  /// First row: r_k = C_0k = c_{(-k) mod N}.
  [[nodiscard]] coeff_vector<S> first_row() const {
    const Eigen::Index n = m_c.size();
    coeff_vector<S> r(n);
    for (Eigen::Index k = 0; k < n; ++k) r[k] = m_c[(n - k) % n];
    return r;
  }
  [[nodiscard]] posenc::matrix<S> dense() const {
    const Eigen::Index n = m_c.size();
    auto d = posenc::detail::allocate_matrix<posenc::matrix<S>>(size(), size(), "toeplitz::circulant_matrix::dense", "size",
                                                                "size");
    for (Eigen::Index j = 0; j < n; ++j)
      for (Eigen::Index k = 0; k < n; ++k) d(j, k) = m_c[((j - k) % n + n) % n];
    return d;
  }
  /// lambda_k = forward DFT of the first column (see the class comment), by FFT.
  [[nodiscard]] coeff_vector<std::complex<real_of<S>>> eigenvalues() const {
    using R = real_of<S>;
    const std::size_t n = size();
    std::vector<R> re(n), im(n);
    for (std::size_t j = 0; j < n; ++j) {
      const std::complex<R> c(m_c[static_cast<Eigen::Index>(j)]);
      re[j] = c.real();
      im[j] = c.imag();
    }
    fft::plan<R> p(n);
    p.forward(re.data(), im.data());
    coeff_vector<std::complex<R>> out(static_cast<Eigen::Index>(n));
    for (std::size_t k = 0; k < n; ++k) out[static_cast<Eigen::Index>(k)] = std::complex<R>(re[k], im[k]);
    return out;
  }

 private:
  coeff_vector<S> m_c;
};

/// Circulant embedding of size N >= m+n-1 whose top-left m x n block is B: first column
/// c_0 = b_0, c_i = b_{-i} (1 <= i <= m-1), c_{N-d} = b_d (1 <= d <= n-1); the N-(m+n-1) slots
/// in between (indices m .. N-n) hold `fill`. Throws invalid_argument if N < m+n-1.
template <scalar S>
[[nodiscard]] circulant_matrix<S> circulant_embedding(const toeplitz_matrix<S>& B, std::size_t size, S fill = S(0)) {
  const std::size_t m = B.rows(), n = B.cols();
  (void)checked::extent(size, "toeplitz::circulant_embedding", "size");
  posenc::detail::require(size >= m + n - 1, "toeplitz::circulant_embedding", "size must be >= rows+cols-1 = ",
                          m + n - 1, ", got ", size);
  posenc::detail::require<non_finite_error>(std::isfinite(std::abs(fill)), "toeplitz::circulant_embedding",
                                            "fill must be finite");
  auto c = posenc::detail::allocate_vector<coeff_vector<S>>(size, "toeplitz::circulant_embedding", "size");
  c.setConstant(fill);
  for (std::size_t i = 0; i < m; ++i) c[static_cast<Eigen::Index>(i)] = B.coefficient(-static_cast<std::ptrdiff_t>(i));
  for (std::size_t d = 1; d < n; ++d) c[static_cast<Eigen::Index>(size - d)] = B.coefficient(static_cast<std::ptrdiff_t>(d));
  return circulant_matrix<S>(c);
}

/// The paper's eq. (12): the 2n x 2n circulant of a square B with the wrap-around convention
/// b_{-n} = b_n = b_0 (slot n of the first column holds b_0). Throws shape_error if B is not square.
template <scalar S>
[[nodiscard]] circulant_matrix<S> paper_embedding(const toeplitz_matrix<S>& B) {
  posenc::detail::require<shape_error>(B.is_square(), "toeplitz::paper_embedding",
                                       "eq. (12) embeds a square n x n matrix, got ", B.rows(), " x ", B.cols());
  return circulant_embedding(B, 2 * B.rows(), B.coefficient(0));
}

/// The smallest embedding, size m+n-1 (2n-1 for square B): scipy.linalg.matmul_toeplitz's.
template <scalar S>
[[nodiscard]] circulant_matrix<S> minimal_embedding(const toeplitz_matrix<S>& B) {
  return circulant_embedding(B, B.rows() + B.cols() - 1);
}

}  // namespace posenc::toeplitz
