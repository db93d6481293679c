// SPDX-License-Identifier: MIT
// O(k P log P) products B X of a Toeplitz matrix B through its circulant embedding of size P:
// `product_plan` owns the spectrum of B and every buffer (apply() does not allocate), `multiply`
// is the one-shot form. Part of <posenc/toeplitz/toeplitz.hpp>.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <complex>
#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/numeric/fft.hpp>
#include <posenc/tensor/table.hpp>
#include <posenc/toeplitz/matrix.hpp>

namespace posenc::toeplitz {

namespace detail {
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

/// One thread's buffers of a product_plan: the transform plan (its own scratch), the column's
/// transform and half spectrum, and the batch plan of the lanes path.
template <class R>
struct product_work {
  explicit product_work(std::size_t fft_size) : fft(fft_size) {}
  fft::plan<R> fft;
  std::vector<R> zr, zi;  // transform buffer
  std::vector<R> xr, xi;  // half spectrum of a column (real path)
  std::optional<fft::batch_plan<R>> batch;  // real path, lane width >= 2: columns in lanes
};
}  // namespace detail

/// B X in O(k P log P) with P the circulant size (default: the smallest even 2,3,5-smooth
/// P >= m+n-1). The plan owns the spectrum of B (scaled by 1/P) and all buffers: apply() does not
/// allocate when Y already has the shape m x k. Real B with even P takes the real-input path
/// (half-length complex FFT; a complex X runs it on its real and imaginary parts); complex B or odd P
/// run a complex FFT of size P (real B and real X with odd P pair two columns into one complex vector).
/// set_threads(n): apply() spreads the columns of X over n threads (the caller and n - 1 workers
/// the plan keeps), each with its own buffers; Y is bitwise the same for every n. Thread safety:
/// one per thread (docs/thread-safety.md); apply, set_threads and set_coefficients entered from a
/// second thread while a call runs in the plan throw concurrent_use_error (posenc::busy_flag)
/// instead of racing on its buffers or waiting on its pool.
template <scalar S>
class product_plan {
 public:
  using scalar_type = S;
  using real = real_of<S>;

  /// fft_size = 0 picks the fast size; otherwise fft_size >= m+n-1 is used as given.
  explicit product_plan(const toeplitz_matrix<S>& B, std::size_t fft_size = 0)
      : m_rows(B.rows()), m_cols(B.cols()), m_p(choose_size(B, fft_size)),
        m_real(!is_complex_v<S> && m_p % 2 == 0) {
    work& w = m_work.emplace_back(m_real ? m_p / 2 : m_p);
    const std::size_t len = w.fft.size();
    w.zr.assign(len, real(0));
    w.zi.assign(len, real(0));
    const std::size_t spec = m_real ? m_p / 2 + 1 : m_p;
    m_sr.assign(spec, real(0));
    m_si.assign(spec, real(0));
    if (m_real) {
      const std::size_t h = m_p / 2;
      m_wr.resize(h + 1);
      m_wi.resize(h + 1);
      for (std::size_t k = 0; k <= h; ++k) fft::unit_root(k, m_p, m_wr[k], m_wi[k]);
      w.xr.assign(h + 1, real(0));
      w.xi.assign(h + 1, real(0));
      for (auto* v : {&m_ar, &m_ai, &m_br, &m_bi}) v->assign(h, real(0));
      if (batch_pays(h)) w.batch.emplace(h);
    }
    set_coefficients(B);
  }

  [[nodiscard]] std::size_t rows() const noexcept { return m_rows; }
  [[nodiscard]] std::size_t cols() const noexcept { return m_cols; }
  /// Size P of the circulant the products run on.
  [[nodiscard]] std::size_t fft_size() const noexcept { return m_p; }
  [[nodiscard]] bool uses_real_path() const noexcept { return m_real; }

  /// Threads apply() uses: 0 = all hardware threads, n >= 1 = exactly n counting the caller
  /// (default 1: no thread is started). The columns of X are split between them at the
  /// boundaries of the serial order's column groups, so Y does not depend on n. Allocates the
  /// workers' buffers (a copy of the transform plan and its buffers each) here, not in apply().
  /// Throws invalid_argument above posenc::max_threads, allocation_error if the buffers cannot be
  /// allocated; on any throw the plan keeps its previous threads and buffers.
  void set_threads(std::size_t threads) {
    static constexpr std::string_view where = "toeplitz::product_plan::set_threads";
    const auto in_use = m_busy.enter(where);  // first: a concurrent call is refused before any read
    const std::size_t n = resolve_threads(threads, where);
    require_usable(where);
    const work& w = m_work.front();  // one thread's buffers, in reals (for the message)
    const std::size_t reals = 2 * w.zr.size() + 2 * w.xr.size() + (w.batch ? 4 * w.batch->size() * w.batch->width() : 0);
    std::vector<work> next = checked::allocate(where, "threads * the plan's buffers", n, reals * sizeof(real),
                                               [&] { return std::vector<work>(n, w); });
    pool_handle pool(n);  // may throw (thread creation): m_work is still the previous set
    m_work.swap(next);
    m_pool = std::move(pool);
  }
  /// The thread count set by set_threads (resolved: 0 was mapped to the hardware's).
  [[nodiscard]] std::size_t threads() const noexcept { return m_pool.size(); }

  /// Recompute the spectrum for new coefficients of the same shape, without allocating.
  void set_coefficients(const toeplitz_matrix<S>& B) {
    const auto in_use = m_busy.enter("toeplitz::product_plan::set_coefficients");
    require_usable("toeplitz::product_plan::set_coefficients");
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
    work& w = m_work.front();
    if (m_real) {
      const std::size_t h = m_p / 2;
      for (std::size_t j = 0; j < h; ++j) {
        w.zr[j] = std::real(col(2 * j));
        w.zi[j] = std::real(col(2 * j + 1));
      }
      w.fft.forward(w.zr.data(), w.zi.data());
      fft::split_half_spectrum(h, w.zr.data(), w.zi.data(), m_wr.data(), m_wi.data(), m_sr.data(),
                                       m_si.data());
    } else {
      for (std::size_t t = 0; t < m_p; ++t) {
        const std::complex<real> c(col(t));
        w.zr[t] = c.real();
        w.zi[t] = c.imag();
      }
      w.fft.forward(w.zr.data(), w.zi.data());
      std::copy(w.zr.begin(), w.zr.end(), m_sr.begin());
      std::copy(w.zi.begin(), w.zi.end(), m_si.begin());
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
    const auto in_use = m_busy.enter(where);  // one call at a time (its buffers are the workspace)
    require_usable(where);
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
        // Full batches of W columns in the SIMD lanes (X and Y with direct access); a remainder
        // of at least W/2 columns runs as one more batch with empty lanes, a smaller one column
        // by column. Parts start on whole batches, so the grouping is the serial one.
        constexpr bool direct = (DX::Flags & Eigen::DirectAccessBit) != 0 && (DY::Flags & Eigen::DirectAccessBit) != 0;
        const auto W = static_cast<Eigen::Index>(fft::batch_plan<real>::width());
        const bool batched = direct && m_work.front().batch.has_value();
        for_parts(k, batched ? W : 1, [&](work& w, Eigen::Index c, Eigen::Index end) {
          if constexpr (direct) {
            if (batched) {
              for (; c + W <= end; c += W) batch_columns(w, x, y, c, W);
              if (2 * (end - c) >= W) {
                batch_columns(w, x, y, c, end - c);
                c = end;
              }
            }
          }
          for (; c < end; ++c)
            real_column(w, [&](Eigen::Index i) { return x.coeff(i, c); },
                        [&](Eigen::Index i, real v) { y.coeffRef(i, c) = v; }, column_pointer(x, c), column_pointer(y, c));
        });
      } else {
        for_parts(k, 2, [&](work& w, Eigen::Index c, Eigen::Index end) {
          for (; c < end; c += 2) paired_columns(w, x, y, c);
        });
      }
    } else if constexpr (!is_complex_v<S>) {
      // Real B, complex X: B (u + i v) = B u + i B v, two real-path products per column.
      if (m_real) {
        for_parts(k, 1, [&](work& w, Eigen::Index c, Eigen::Index end) {
          for (; c < end; ++c) {
            real_column(w, [&](Eigen::Index i) { return std::real(x.coeff(i, c)); },
                        [&](Eigen::Index i, real v) { y.coeffRef(i, c) = YS(v, real(0)); });
            real_column(w, [&](Eigen::Index i) { return std::imag(x.coeff(i, c)); },
                        [&](Eigen::Index i, real v) { y.coeffRef(i, c).imag(v); });
          }
        });
      } else {
        for_parts(k, 1, [&](work& w, Eigen::Index c, Eigen::Index end) {
          for (; c < end; ++c) complex_column(w, x, y, c);
        });
      }
    } else {
      for_parts(k, 1, [&](work& w, Eigen::Index c, Eigen::Index end) {
        for (; c < end; ++c) complex_column(w, x, y, c);
      });
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
  // One thread's buffers (detail::product_work). m_work[0] is the caller's (and
  // set_coefficients'); set_threads adds one copy per worker.
  using work = detail::product_work<real>;

  // A moved-from plan has no buffers (m_work is empty): its use is an error, not a write past them.
  void require_usable(std::string_view where) const {
    posenc::detail::require(!m_work.empty(), where, "the plan was moved from: assign a plan before using it");
  }

  // f(work, begin, end) over the columns [0, k) in one part per thread, the parts' bounds on
  // multiples of `align` (the serial grouping of columns), on the plan's pool.
  template <class F>
  void for_parts(Eigen::Index k, Eigen::Index align, F&& f) {
    if (m_pool.size() == 1 || k <= align) {
      f(m_work.front(), Eigen::Index(0), k);
      return;
    }
    auto job = [&](std::size_t part, std::size_t parts) {
      const auto [b, e] = split_range(k, part, parts, align);
      if (e > b) f(m_work[part], static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(e));
    };
    m_pool.run(job);
  }

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
  void fused_spectral_step(work& w) const {
    detail::fused_spectral_step(static_cast<std::ptrdiff_t>(m_p / 2), w.zr.data(), w.zi.data(), w.xr.data(), w.xi.data(),
                                m_ar.data(), m_ai.data(), m_br.data(), m_bi.data());
  }

  // Real path for columns c .. c+cnt-1 (cnt <= W; X and Y with direct access) in the lanes of
  // the batch plan: pack column c+l as z_j = x_{2j} + i x_{2j+1} into lane l, W forward
  // transforms, the fused spectral step on lane packs, W inverse transforms, unpack. Row- and
  // column-major storage run the same operations (only the element step differs).
  template <class DX, class DY>
  void batch_columns(work& w, const DX& x, DY& y, Eigen::Index c, Eigen::Index cnt) const {
    constexpr std::size_t W = fft::batch_plan<real>::width();
    auto& bp = *w.batch;
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
  void real_column(work& w, Get&& get, Put&& put, const real* src = nullptr, real* dst = nullptr) const {
    const std::size_t h = m_p / 2, n = m_cols;
    if (src) {
      real* __restrict zr = w.zr.data();
      real* __restrict zi = w.zi.data();
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
        w.zr[j] = i0 < n ? static_cast<real>(get(static_cast<Eigen::Index>(i0))) : real(0);
        w.zi[j] = i1 < n ? static_cast<real>(get(static_cast<Eigen::Index>(i1))) : real(0);
      }
    }
    w.fft.forward(w.zr.data(), w.zi.data());
    fused_spectral_step(w);
    w.fft.inverse(w.xr.data(), w.xi.data());
    if (dst) {
      const real* __restrict xr = w.xr.data();
      const real* __restrict xi = w.xi.data();
      const std::size_t full = m_rows / 2;
      for (std::size_t j = 0; j < full; ++j) {
        dst[2 * j] = xr[j];
        dst[2 * j + 1] = xi[j];
      }
      if (m_rows % 2) dst[m_rows - 1] = xr[full];
    } else {
      for (std::size_t i = 0; i < m_rows; ++i)
        put(static_cast<Eigen::Index>(i), (i % 2 == 0) ? w.xr[i / 2] : w.xi[i / 2]);
    }
  }

  void multiply_full(work& w) const {
    for (std::size_t q = 0; q < m_p; ++q) {
      const real ar = w.zr[q], ai = w.zi[q];
      w.zr[q] = ar * m_sr[q] - ai * m_si[q];
      w.zi[q] = ar * m_si[q] + ai * m_sr[q];
    }
  }

  // Real B, real X, odd P: columns c and c+1 as the real and imaginary parts of one vector
  // (B real, so B (x + i x') = B x + i B x').
  template <class DX, class DY>
  void paired_columns(work& w, const DX& x, DY& y, Eigen::Index c) const {
    const bool two = c + 1 < x.cols();
    for (std::size_t t = 0; t < m_p; ++t) {
      const bool in = t < m_cols;
      w.zr[t] = in ? x.coeff(static_cast<Eigen::Index>(t), c) : real(0);
      w.zi[t] = (in && two) ? x.coeff(static_cast<Eigen::Index>(t), c + 1) : real(0);
    }
    w.fft.forward(w.zr.data(), w.zi.data());
    multiply_full(w);
    w.fft.inverse(w.zr.data(), w.zi.data());
    for (std::size_t i = 0; i < m_rows; ++i) {
      y.coeffRef(static_cast<Eigen::Index>(i), c) = w.zr[i];
      if (two) y.coeffRef(static_cast<Eigen::Index>(i), c + 1) = w.zi[i];
    }
  }

  template <class DX, class DY>
  void complex_column(work& w, const DX& x, DY& y, Eigen::Index c) const {
    for (std::size_t t = 0; t < m_p; ++t) {
      if (t < m_cols) {
        const std::complex<real> v(x.coeff(static_cast<Eigen::Index>(t), c));
        w.zr[t] = v.real();
        w.zi[t] = v.imag();
      } else {
        w.zr[t] = real(0);
        w.zi[t] = real(0);
      }
    }
    w.fft.forward(w.zr.data(), w.zi.data());
    multiply_full(w);
    w.fft.inverse(w.zr.data(), w.zi.data());
    for (std::size_t i = 0; i < m_rows; ++i)
      y.coeffRef(static_cast<Eigen::Index>(i), c) = std::complex<real>(w.zr[i], w.zi[i]);
  }

  std::size_t m_rows, m_cols, m_p;
  bool m_real;
  std::vector<work> m_work;      // one per thread (set_threads); [0] always exists
  pool_handle m_pool;            // set_threads - 1 workers (none by default)
  busy_flag m_busy;              // held by apply, set_threads, set_coefficients (concurrent_use_error)
  std::vector<real> m_sr, m_si;  // spectrum / P
  std::vector<real> m_wr, m_wi;  // exp(-2 pi i k / P), k <= P/2 (real path)
  std::vector<real> m_ar, m_ai, m_br, m_bi;  // alpha_k, beta_k of the fused spectral step (real path)
};

/// One-shot B X (builds a plan: allocates; reuse a product_plan for repeated products).
template <scalar S, class DX>
[[nodiscard]] auto multiply(const toeplitz_matrix<S>& B, const Eigen::MatrixBase<DX>& X) {
  product_plan<S> p(B);
  return p.apply(X);
}

}  // namespace posenc::toeplitz
