// SPDX-License-Identifier: MIT
// Toeplitz and circulant matrices (TUPE paper, section 3.3, Proposition 1 and Appendix A):
// B_ij = b_{j-i} stored as its coefficients, dense materialisation and exact row/column access,
// circulant embeddings (the paper's eq. 12 of size 2n, the minimal one of size m+n-1, any larger
// size), circulant eigenvalues by FFT, O(k n log n) products B X through a plan that owns the
// spectrum and every buffer, the matrices G and D of Proposition 1, and relative-bias tables
// (per-offset or bucketed, per head) as Toeplitz operators.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <complex>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <numbers>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/numeric/fft.hpp>
#include <posenc/encoding/table.hpp>

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
/// X'_k = alpha_k Z_k + beta_k conj Z_{(h-k) mod h}, k < h (product_plan's fused spectral step on
/// the real path). Outputs must not alias inputs.
template <class T>
inline void fused_spectral_step(std::ptrdiff_t h, const T* __restrict zr, const T* __restrict zi, T* __restrict xr,
                                T* __restrict xi, const T* __restrict ar, const T* __restrict ai, const T* __restrict br,
                                const T* __restrict bi) {
  xr[0] = ar[0] * zr[0] - ai[0] * zi[0] + br[0] * zr[0] + bi[0] * zi[0];
  xi[0] = ar[0] * zi[0] + ai[0] * zr[0] - br[0] * zi[0] + bi[0] * zr[0];
  // conj Z_{h-k} read backwards from the end (signed offsets: GCC vectorises this form).
  const T* __restrict er = zr + h;
  const T* __restrict ei = zi + h;
  for (std::ptrdiff_t k = 1; k < h; ++k) {
    const T ur = zr[k], ui = zi[k];
    const T vr = er[-k], vi = ei[-k];
    xr[k] = ar[k] * ur - ai[k] * ui + br[k] * vr + bi[k] * vi;
    xi[k] = ar[k] * ui + ai[k] * ur - br[k] * vi + bi[k] * vr;
  }
}
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

// ------------------------------------------------------------------------------------------
// Proposition 1: B = G D G*
// ------------------------------------------------------------------------------------------

/// Index convention of G. `proposition` is Proposition 1 as printed, G_jk = w^{(j+1)k} / (2n);
/// `appendix` is the first n rows of Appendix A's Q (Q_kj = w^{(j+1)k}/(2n), row k), i.e.
/// G_jk = w^{j(k+1)} / (2n). Here w = exp(i pi / n), 0 <= j < n, 0 <= k < 2n.
enum class prop1_convention { proposition, appendix };

/// G (n x 2n, complex) of Proposition 1.
template <std::floating_point T>
[[nodiscard]] posenc::matrix<std::complex<T>> proposition1_G(std::size_t n,
                                                             prop1_convention conv = prop1_convention::proposition) {
  posenc::detail::require(n >= 1, "toeplitz::proposition1_G", "n must be >= 1, got ", n);
  (void)checked::extent(n, "toeplitz::proposition1_G", "n");
  const std::uint64_t N = 2 * std::uint64_t(n);
  auto G = posenc::detail::allocate_matrix<posenc::matrix<std::complex<T>>>(n, static_cast<std::size_t>(N),
                                                                            "toeplitz::proposition1_G", "n", "2n");
  const T scale = T(1) / static_cast<T>(N);
  for (std::uint64_t j = 0; j < n; ++j)
    for (std::uint64_t k = 0; k < N; ++k) {
      const std::uint64_t e = conv == prop1_convention::proposition ? ((j + 1) * k) % N : (j * (k + 1)) % N;
      T re, im;
      fft::unit_root(N - e, N, re, im);  // exp(+2 pi i e / N) = w^e
      G(static_cast<Eigen::Index>(j), static_cast<Eigen::Index>(k)) = std::complex<T>(re * scale, im * scale);
    }
  return G;
}

/// The diagonal of D (length 2n) with B = G D G* for the G of `conv`: with lambda the eigenvalues
/// of the eq. (12) circulant (circulant_matrix::eigenvalues, the DFT of its first column),
///   proposition:  D_k = 2n lambda_k,          appendix:  D_k = 2n lambda_{(k+1) mod 2n}.
/// The factor 2n is the normalisation: G's columns carry 1/(2n), not 1/sqrt(2n).
template <scalar S>
[[nodiscard]] coeff_vector<std::complex<real_of<S>>> proposition1_D(const toeplitz_matrix<S>& B,
                                                                  prop1_convention conv = prop1_convention::proposition) {
  using R = real_of<S>;
  posenc::detail::require<shape_error>(B.is_square(), "toeplitz::proposition1_D",
                                       "Proposition 1 is stated for a square n x n matrix, got ", B.rows(), " x ",
                                       B.cols());
  const auto lambda = paper_embedding(B).eigenvalues();
  const Eigen::Index N = lambda.size();
  coeff_vector<std::complex<R>> D(N);
  for (Eigen::Index k = 0; k < N; ++k)
    D[k] = static_cast<R>(N) * lambda[conv == prop1_convention::proposition ? k : (k + 1) % N];
  return D;
}

// ------------------------------------------------------------------------------------------
// Products
// ------------------------------------------------------------------------------------------

/// B X in O(k P log P) with P the circulant size (default: the smallest even 2,3,5-smooth
/// P >= m+n-1). The plan owns the spectrum of B (scaled by 1/P) and all buffers: apply() does not
/// allocate when Y already has the shape m x k. Real B with even P takes the real-input path
/// (half-length complex FFT; a complex X runs it on its real and imaginary parts); complex B or odd P
/// run a complex FFT of size P (real B and real X with odd P pair two columns into one complex vector). Thread safety: one per thread (docs/thread-safety.md).
template <scalar S>
class product_plan {
 public:
  using scalar_type = S;
  using real = real_of<S>;

  /// fft_size = 0 picks the fast size; otherwise fft_size >= m+n-1 is used as given.
  explicit product_plan(const toeplitz_matrix<S>& B, std::size_t fft_size = 0)
      : m_rows(B.rows()), m_cols(B.cols()), m_p(choose_size(B, fft_size)),
        m_real(!is_complex_v<S> && m_p % 2 == 0), m_fft(m_real ? m_p / 2 : m_p) {
    const std::size_t len = m_fft.size();
    m_zr.assign(len, real(0));
    m_zi.assign(len, real(0));
    const std::size_t spec = m_real ? m_p / 2 + 1 : m_p;
    m_sr.assign(spec, real(0));
    m_si.assign(spec, real(0));
    if (m_real) {
      const std::size_t h = m_p / 2;
      m_wr.resize(h + 1);
      m_wi.resize(h + 1);
      for (std::size_t k = 0; k <= h; ++k) fft::unit_root(k, m_p, m_wr[k], m_wi[k]);
      m_xr.assign(h + 1, real(0));
      m_xi.assign(h + 1, real(0));
      for (auto* v : {&m_ar, &m_ai, &m_br, &m_bi}) v->assign(h, real(0));
      if (batch_pays(h)) m_batch.emplace(h);
    }
    set_coefficients(B);
  }

  [[nodiscard]] std::size_t rows() const noexcept { return m_rows; }
  [[nodiscard]] std::size_t cols() const noexcept { return m_cols; }
  /// Size P of the circulant the products run on.
  [[nodiscard]] std::size_t fft_size() const noexcept { return m_p; }
  [[nodiscard]] bool uses_real_path() const noexcept { return m_real; }

  /// Recompute the spectrum for new coefficients of the same shape, without allocating.
  void set_coefficients(const toeplitz_matrix<S>& B) {
    posenc::detail::require<shape_error>(B.rows() == m_rows && B.cols() == m_cols,
                                         "toeplitz::product_plan::set_coefficients", "expected a ", m_rows, " x ",
                                         m_cols, " matrix, got ", B.rows(), " x ", B.cols());
    const auto& b = B.coefficients();
    // First column of the size-P embedding, zero fill: c_t = b_{-t} (t < m), c_{P-d} = b_d (d < n).
    auto col = [&](std::size_t t) -> S {
      if (t < m_rows) return b[static_cast<Eigen::Index>(m_rows - 1 - t)];
      if (t > m_p - m_cols) return b[static_cast<Eigen::Index>(m_rows - 1 + (m_p - t))];
      return S(0);
    };
    const real scale = real(1) / static_cast<real>(m_p);
    if (m_real) {
      const std::size_t h = m_p / 2;
      for (std::size_t j = 0; j < h; ++j) {
        m_zr[j] = std::real(col(2 * j));
        m_zi[j] = std::real(col(2 * j + 1));
      }
      m_fft.forward(m_zr.data(), m_zi.data());
      fft::split_half_spectrum(h, m_zr.data(), m_zi.data(), m_wr.data(), m_wi.data(), m_sr.data(),
                                       m_si.data());
    } else {
      for (std::size_t t = 0; t < m_p; ++t) {
        const std::complex<real> c(col(t));
        m_zr[t] = c.real();
        m_zi[t] = c.imag();
      }
      m_fft.forward(m_zr.data(), m_zi.data());
      std::copy(m_zr.begin(), m_zr.end(), m_sr.begin());
      std::copy(m_zi.begin(), m_zi.end(), m_si.begin());
    }
    for (std::size_t k = 0; k < m_sr.size(); ++k) {
      m_sr[k] *= scale;
      m_si[k] *= scale;
    }
    if (m_real) fused_coefficients();
  }

  /// Spectrum of the size-P embedding (the DFT of its first column, unscaled): P/2+1 bins on the
  /// real path, P otherwise. Allocates; for inspection and tests.
  [[nodiscard]] coeff_vector<std::complex<real>> spectrum() const {
    coeff_vector<std::complex<real>> s(static_cast<Eigen::Index>(m_sr.size()));
    for (std::size_t k = 0; k < m_sr.size(); ++k)
      s[static_cast<Eigen::Index>(k)] = std::complex<real>(m_sr[k], m_si[k]) * static_cast<real>(m_p);
    return s;
  }

  /// Y = B X for X with m_cols rows and k columns (any storage order or Eigen expression with
  /// coefficient access). Y is resized to m x k if its shape differs (the only allocation).
  template <class DX, class DY>
  void apply(const Eigen::MatrixBase<DX>& X, const Eigen::MatrixBase<DY>& Y_) {
    using XS = typename DX::Scalar;
    using YS = typename DY::Scalar;
    static_assert(scalar<XS> && std::is_same_v<real_of<XS>, real>,
                  "toeplitz::product_plan::apply: X must hold the plan's real type or its complex");
    static_assert(std::is_same_v<YS, product_scalar<S, XS>>,
                  "toeplitz::product_plan::apply: Y's scalar must be product_scalar<S, X scalar>");
    static constexpr const char* where = "toeplitz::product_plan::apply";
    const auto& x = X.derived();
    posenc::detail::require<shape_error>(static_cast<std::size_t>(x.rows()) == m_cols, where, "X must have ", m_cols,
                                         " rows (the columns of B), got ", x.rows());
    // Y's size before any pass over X: m * k was resized unchecked (std::bad_alloc)
    const std::size_t y_elements = checked::elements(m_rows, static_cast<std::size_t>(checked::extent(x.cols(), where, "columns of X")), where,
                                                     "Y: rows of B * columns of X");
    posenc::detail::require_finite(x, where, "X");
    auto& y = const_cast<DY&>(Y_.derived());
    if (static_cast<std::size_t>(y.rows()) != m_rows || y.cols() != x.cols())
      checked::allocate(where, "Y", y_elements, sizeof(YS), [&] { y.resize(static_cast<Eigen::Index>(m_rows), x.cols()); });
    const Eigen::Index k = x.cols();
    if constexpr (!is_complex_v<S> && !is_complex_v<XS>) {
      if (m_real) {
        Eigen::Index c = 0;
        // Full batches of W columns in the SIMD lanes (X and Y with direct access); a remainder
        // of at least W/2 columns runs as one more batch with empty lanes, a smaller one column
        // by column.
        if constexpr ((DX::Flags & Eigen::DirectAccessBit) != 0 && (DY::Flags & Eigen::DirectAccessBit) != 0) {
          if (m_batch) {
            const auto W = static_cast<Eigen::Index>(fft::batch_plan<real>::width());
            for (; c + W <= k; c += W) batch_columns(x, y, c, W);
            if (2 * (k - c) >= W) {
              batch_columns(x, y, c, k - c);
              c = k;
            }
          }
        }
        for (; c < k; ++c)
          real_column([&](Eigen::Index i) { return x.coeff(i, c); }, [&](Eigen::Index i, real v) { y.coeffRef(i, c) = v; },
                      column_pointer(x, c), column_pointer(y, c));
      } else {
        for (Eigen::Index c = 0; c < k; c += 2) paired_columns(x, y, c);
      }
    } else if constexpr (!is_complex_v<S>) {
      // Real B, complex X: B (u + i v) = B u + i B v, two real-path products per column.
      if (m_real) {
        for (Eigen::Index c = 0; c < k; ++c) {
          real_column([&](Eigen::Index i) { return std::real(x.coeff(i, c)); },
                      [&](Eigen::Index i, real v) { y.coeffRef(i, c) = YS(v, real(0)); });
          real_column([&](Eigen::Index i) { return std::imag(x.coeff(i, c)); },
                      [&](Eigen::Index i, real v) { y.coeffRef(i, c).imag(v); });
        }
      } else {
        for (Eigen::Index c = 0; c < k; ++c) complex_column(x, y, c);
      }
    } else {
      for (Eigen::Index c = 0; c < k; ++c) complex_column(x, y, c);
    }
  }

  /// Convenience: returns B X (allocates the result; column-major unless X is a row-major matrix).
  template <class DX>
  [[nodiscard]] auto apply(const Eigen::MatrixBase<DX>& X) {
    using YS = product_scalar<S, typename DX::Scalar>;
    constexpr int cols = DX::ColsAtCompileTime == 1 ? 1 : Eigen::Dynamic;
    constexpr int order = (cols != 1 && DX::IsRowMajor) ? Eigen::RowMajor : Eigen::ColMajor;
    Eigen::Matrix<YS, Eigen::Dynamic, cols, order> Y;  // sized by apply(X, Y), after its checks
    apply(X, Y);
    return Y;
  }

 private:
  // Whether columns run W at a time in the lanes of a batch_plan. Measured (bench_toeplitz and
  // a min-of-N timing on AVX-512, 1 MiB L2): the batch wins or ties everywhere with W = 8 (f64:
  // n = 512 0.65-0.78 vs 1.3 FFTW's time, n = 4096 1.00 vs 1.15, n = 16384 0.85-1.07 vs 1.44);
  // with W = 16 (f32) the per-column two-pass transform, whose 16-lane passes amortise best, wins
  // while its working set (4 h reals: data and work) fits a quarter of L2 (n = 4096: 1.11 vs
  // 1.44; n = 16384: 0.96 vs 1.20), unless the batch is small (<= 64 KiB per array: n = 512,
  // 0.71 vs 0.87).
  static bool batch_pays(std::size_t h) {
    constexpr std::size_t W = fft::batch_plan<real>::width();
    if (W < 2 || !fft::batch_plan<real>::supported(h)) return false;
    const bool small_batch = h * W * sizeof(real) <= (std::size_t{64} << 10);
    const bool column_in_cache = 4 * h * sizeof(real) <= (std::size_t{256} << 10);
    return W < 16 || small_batch || !column_in_cache;
  }

  // Column c's storage when it is contiguous (column-major direct access with unit inner
  // stride, scalar = real), else nullptr.
  template <class D>
  static auto column_pointer(D& m, Eigen::Index c) {
    using M = std::remove_cv_t<D>;
    using P = std::conditional_t<std::is_const_v<D>, const real*, real*>;
    if constexpr ((M::Flags & Eigen::DirectAccessBit) != 0 && !M::IsRowMajor && std::is_same_v<typename M::Scalar, real>) {
      if (m.innerStride() == 1) return static_cast<P>(m.data() + c * m.outerStride());
    }
    return static_cast<P>(nullptr);
  }

  static std::size_t choose_size(const toeplitz_matrix<S>& B, std::size_t want) {
    const std::size_t need = B.rows() + B.cols() - 1;
    if (want == 0) return need == 1 ? 2 : 2 * fft::next_fast_size((need + 1) / 2);
    (void)checked::extent(want, "toeplitz::product_plan", "fft_size");
    posenc::detail::require(want >= need, "toeplitz::product_plan", "fft_size must be 0 (automatic) or >= rows+cols-1 = ",
                            need, ", got ", want);
    return want;
  }

  // The real path's spectral step in one pass. With Z the length-h transform of
  // z_j = x_{2j} + i x_{2j+1} (h = P/2), split_half_spectrum gives X_k = a_k Z_k + b_k conj Z_{h-k}
  // (a_k = (1 - i w^k)/2, b_k = (1 + i w^k)/2, w = exp(-2 pi i / P), Z_h = Z_0), the product is
  // Y_k = S_k X_k, and merge_half_spectrum gives
  // Z'_k = (1 + i conj w^k) Y_k + (1 - i conj w^k) conj Y_{h-k}. Composed, Z' is the real-linear map
  //   Z'_k = alpha_k Z_k + beta_k conj Z_{(h-k) mod h},
  //   alpha_k = (1 + i conj w^k) S_k a_k + (1 - i conj w^k) conj(S_{h-k} b_{h-k}),
  //   beta_k  = (1 + i conj w^k) S_k b_k + (1 - i conj w^k) conj(S_{h-k} a_{h-k}),
  // whose inverse length-h transform is P (B x)_{2j} + i P (B x)_{2j+1}; S carries the 1/P.
  void fused_coefficients() {
    using C = std::complex<real>;
    const std::size_t h = m_p / 2;
    const C I(0, 1);
    auto w = [&](std::size_t k) { return C(m_wr[k], m_wi[k]); };
    auto spec = [&](std::size_t k) { return C(m_sr[k], m_si[k]); };
    for (std::size_t k = 0; k < h; ++k) {
      const std::size_t kk = h - k;
      const C ak = real(0.5) * (real(1) - I * w(k)), bk = real(0.5) * (real(1) + I * w(k));
      const C akk = real(0.5) * (real(1) - I * w(kk)), bkk = real(0.5) * (real(1) + I * w(kk));
      const C p = real(1) + I * std::conj(w(k)), q = real(1) - I * std::conj(w(k));
      const C alpha = p * spec(k) * ak + q * std::conj(spec(kk) * bkk);
      const C beta = p * spec(k) * bk + q * std::conj(spec(kk) * akk);
      m_ar[k] = alpha.real();
      m_ai[k] = alpha.imag();
      m_br[k] = beta.real();
      m_bi[k] = beta.imag();
    }
  }

  // (zr, zi) = Z, the forward transform of the packed column -> (xr, xi) = Z' (see above).
  void fused_spectral_step() {
    detail::fused_spectral_step(static_cast<std::ptrdiff_t>(m_p / 2), m_zr.data(), m_zi.data(), m_xr.data(), m_xi.data(),
                                m_ar.data(), m_ai.data(), m_br.data(), m_bi.data());
  }

  // Real path for columns c .. c+cnt-1 (cnt <= W; X and Y with direct access) in the lanes of
  // the batch plan: pack column c+l as z_j = x_{2j} + i x_{2j+1} into lane l, W forward
  // transforms, the fused spectral step on lane packs, W inverse transforms, unpack. Row- and
  // column-major storage run the same operations (only the element step differs).
  template <class DX, class DY>
  void batch_columns(const DX& x, DY& y, Eigen::Index c, Eigen::Index cnt) {
    constexpr std::size_t W = fft::batch_plan<real>::width();
    auto& bp = *m_batch;
    const real* src[W] = {};
    real* dst[W] = {};
    std::size_t sstep[W] = {}, dstep[W] = {};
    const auto used = static_cast<std::size_t>(cnt);
    for (std::size_t l = 0; l < used; ++l) {
      const Eigen::Index col = c + static_cast<Eigen::Index>(l);
      std::tie(src[l], sstep[l]) = strided_column(x, col);
      std::tie(dst[l], dstep[l]) = strided_column(y, col);
    }
    bp.pack_real(src, sstep, used, m_cols);
    bp.forward();
    bp.conj_pair_map(m_ar.data(), m_ai.data(), m_br.data(), m_bi.data());
    bp.inverse();
    bp.unpack_real(dst, dstep, used, m_rows);
  }

  // (pointer to element (0, c), step between rows) for a real matrix with direct access.
  template <class D>
  static auto strided_column(D& m, Eigen::Index c) {
    using M = std::remove_cv_t<D>;
    using P = std::conditional_t<std::is_const_v<D>, const real*, real*>;
    const Eigen::Index row_step = M::IsRowMajor ? m.outerStride() : m.innerStride();
    const Eigen::Index col_step = M::IsRowMajor ? m.innerStride() : m.outerStride();
    return std::pair<P, std::size_t>(m.data() + c * col_step, static_cast<std::size_t>(row_step));
  }

  // Real path for one real column: get(i) reads input row i, put(i, v) stores output row i;
  // src / dst, when not null, are the column's contiguous storage (the loops then vectorise).
  template <class Get, class Put>
  void real_column(Get&& get, Put&& put, const real* src = nullptr, real* dst = nullptr) {
    const std::size_t h = m_p / 2, n = m_cols;
    if (src) {
      real* __restrict zr = m_zr.data();
      real* __restrict zi = m_zi.data();
      const std::size_t full = n / 2;
      for (std::size_t j = 0; j < full; ++j) {
        zr[j] = src[2 * j];
        zi[j] = src[2 * j + 1];
      }
      for (std::size_t j = full; j < h; ++j) {
        zr[j] = 2 * j < n ? src[2 * j] : real(0);
        zi[j] = real(0);
      }
    } else {
      for (std::size_t j = 0; j < h; ++j) {
        const std::size_t i0 = 2 * j, i1 = 2 * j + 1;
        m_zr[j] = i0 < n ? static_cast<real>(get(static_cast<Eigen::Index>(i0))) : real(0);
        m_zi[j] = i1 < n ? static_cast<real>(get(static_cast<Eigen::Index>(i1))) : real(0);
      }
    }
    m_fft.forward(m_zr.data(), m_zi.data());
    fused_spectral_step();
    m_fft.inverse(m_xr.data(), m_xi.data());
    if (dst) {
      const real* __restrict xr = m_xr.data();
      const real* __restrict xi = m_xi.data();
      const std::size_t full = m_rows / 2;
      for (std::size_t j = 0; j < full; ++j) {
        dst[2 * j] = xr[j];
        dst[2 * j + 1] = xi[j];
      }
      if (m_rows % 2) dst[m_rows - 1] = xr[full];
    } else {
      for (std::size_t i = 0; i < m_rows; ++i)
        put(static_cast<Eigen::Index>(i), (i % 2 == 0) ? m_xr[i / 2] : m_xi[i / 2]);
    }
  }

  void multiply_full() {
    for (std::size_t q = 0; q < m_p; ++q) {
      const real ar = m_zr[q], ai = m_zi[q];
      m_zr[q] = ar * m_sr[q] - ai * m_si[q];
      m_zi[q] = ar * m_si[q] + ai * m_sr[q];
    }
  }

  // Real B, real X, odd P: columns c and c+1 as the real and imaginary parts of one vector
  // (B real, so B (x + i x') = B x + i B x').
  template <class DX, class DY>
  void paired_columns(const DX& x, DY& y, Eigen::Index c) {
    const bool two = c + 1 < x.cols();
    for (std::size_t t = 0; t < m_p; ++t) {
      const bool in = t < m_cols;
      m_zr[t] = in ? x.coeff(static_cast<Eigen::Index>(t), c) : real(0);
      m_zi[t] = (in && two) ? x.coeff(static_cast<Eigen::Index>(t), c + 1) : real(0);
    }
    m_fft.forward(m_zr.data(), m_zi.data());
    multiply_full();
    m_fft.inverse(m_zr.data(), m_zi.data());
    for (std::size_t i = 0; i < m_rows; ++i) {
      y.coeffRef(static_cast<Eigen::Index>(i), c) = m_zr[i];
      if (two) y.coeffRef(static_cast<Eigen::Index>(i), c + 1) = m_zi[i];
    }
  }

  template <class DX, class DY>
  void complex_column(const DX& x, DY& y, Eigen::Index c) {
    for (std::size_t t = 0; t < m_p; ++t) {
      if (t < m_cols) {
        const std::complex<real> v(x.coeff(static_cast<Eigen::Index>(t), c));
        m_zr[t] = v.real();
        m_zi[t] = v.imag();
      } else {
        m_zr[t] = real(0);
        m_zi[t] = real(0);
      }
    }
    m_fft.forward(m_zr.data(), m_zi.data());
    multiply_full();
    m_fft.inverse(m_zr.data(), m_zi.data());
    for (std::size_t i = 0; i < m_rows; ++i)
      y.coeffRef(static_cast<Eigen::Index>(i), c) = std::complex<real>(m_zr[i], m_zi[i]);
  }

  std::size_t m_rows, m_cols, m_p;
  bool m_real;
  fft::plan<real> m_fft;
  std::vector<real> m_sr, m_si;  // spectrum / P
  std::vector<real> m_zr, m_zi;  // transform buffer
  std::vector<real> m_wr, m_wi;  // exp(-2 pi i k / P), k <= P/2 (real path)
  std::vector<real> m_xr, m_xi;  // half spectrum of a column (real path)
  std::vector<real> m_ar, m_ai, m_br, m_bi;  // alpha_k, beta_k of the fused spectral step (real path)
  std::optional<fft::batch_plan<real>> m_batch;  // real path, lane width >= 2: columns in lanes
};

/// One-shot B X (builds a plan: allocates; reuse a product_plan for repeated products).
template <scalar S, class DX>
[[nodiscard]] auto multiply(const toeplitz_matrix<S>& B, const Eigen::MatrixBase<DX>& X) {
  product_plan<S> p(B);
  return p.apply(X);
}

// ------------------------------------------------------------------------------------------
// Relative-position biases (TUPE-R's b_{j-i}) as Toeplitz operators
// ------------------------------------------------------------------------------------------

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
