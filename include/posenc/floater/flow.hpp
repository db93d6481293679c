// SPDX-License-Identifier: MIT
// FLOATER's dynamics h(t, p; theta) = W2 [sigma(W1 [p; t] + b1); t] + b2 (Liu et al., ICML 2020,
// eq. 8; the reference code's `flow_func_linear`), its parameters, and the right-hand side
// `posenc::floater::flow<T>` that runs a batch of N states (N x d, one row per block) through it
// with one matrix-matrix product per layer. The time column of each nn.Linear weight is kept
// apart from the state columns and applied as a rank-1 add after the bias (z = y W^T + b + t w_t,
// in that order for every evaluation), so no [p; t] concatenation is ever built. The parameters
// are an ODE state (posenc::state_traits<mlp<T>>), so the continuous adjoint integrates
// dL/dtheta in the mlp's own layout. Initialisers: posenc/floater/init.hpp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <string_view>
#include <utility>

#include <posenc/core/backend.hpp>
#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/core/state_traits.hpp>
#include <posenc/core/thread_pool.hpp>
#include <posenc/tensor/table.hpp>

namespace posenc::floater {

/// The nonlinearity sigma of h.
enum class activation {
  relu,      ///< max(z, 0) (the reference code)
  tanh,      ///< tanh(z)
  gelu,      ///< z Phi(z) = z (1 + erf(z / sqrt 2)) / 2, the exact form (PyTorch's default)
  softplus,  ///< log(1 + e^z), and z itself for z > 20 (PyTorch's default beta = 1, threshold = 20)
  identity,  ///< z (h is then affine in p)
};

[[nodiscard]] constexpr std::string_view to_string(activation a) noexcept {
  switch (a) {
    case activation::relu: return "relu";
    case activation::tanh: return "tanh";
    case activation::gelu: return "gelu";
    case activation::softplus: return "softplus";
    case activation::identity: return "identity";
  }
  return "?";
}

/// Parse "relu", "tanh", "gelu", "softplus", "identity"; invalid_argument otherwise.
[[nodiscard]] inline activation activation_from_string(std::string_view s) {
  for (activation a : {activation::relu, activation::tanh, activation::gelu, activation::softplus, activation::identity})
    if (to_string(a) == s) return a;
  posenc::detail::fail("floater::activation_from_string", "expected relu, tanh, gelu, softplus or identity, got '",
                       s, "'");
}

/// sigma(z) for one scalar, on the host or in device code (posenc::device::floater): relu, tanh,
/// exact gelu, softplus with PyTorch's threshold 20, identity. The host's batched evaluation
/// applies the same functions to whole blocks with Eigen's vectorised kernels (detail::activate).
/// Total: no throw; a NaN operand gives NaN (relu: 0, as the comparison is false), an Inf gives
/// the function's limit; the encoder checks its table for non-finite values (non_finite_error).
template <class T>
[[nodiscard]] POSENC_HD inline T activate(activation act, T z) {
  switch (act) {
    case activation::relu: return z > T(0) ? z : T(0);
#if POSENC_DEVICE_COMPILER
    case activation::tanh: return ::tanh(z);
    case activation::gelu: return T(0.5) * z * (T(1) + ::erf(z * T(0.70710678118654752440)));
    case activation::softplus: return z > T(20) ? z : ::log1p(::exp(z));
#else
    case activation::tanh: return std::tanh(z);
    case activation::gelu: return T(0.5) * z * (T(1) + std::erf(z * T(0.70710678118654752440)));
    case activation::softplus: return z > T(20) ? z : std::log1p(std::exp(z));
#endif
    case activation::identity: break;
  }
  return z;
}

namespace detail {
/// sigma applied elementwise (in place) to a block of pre-activations.
template <class BlockZ, class BlockO>
void activate(activation act, const BlockZ& z, BlockO&& out) {
  using T = typename BlockZ::Scalar;
  auto za = z.array();
  auto oa = out.array();
  switch (act) {
    case activation::relu: oa = za.max(T(0)); break;
    case activation::tanh: oa = za.tanh(); break;
    case activation::gelu:
      oa = za.unaryExpr([](T x) { return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440))); });
      break;
    case activation::softplus:
      oa = (za > T(20)).select(za, (za.min(T(20)).exp()).log1p());
      break;
    case activation::identity: oa = za; break;
  }
}

/// g = g * sigma'(z) elementwise.
template <class BlockZ, class BlockG>
void multiply_derivative(activation act, const BlockZ& z, BlockG&& g) {
  using T = typename BlockZ::Scalar;
  auto za = z.array();
  auto ga = g.array();
  switch (act) {
    case activation::relu: ga = (za > T(0)).select(ga, T(0)); break;
    case activation::tanh: ga = ga * (T(1) - za.tanh().square()); break;
    case activation::gelu:
      ga = ga * za.unaryExpr([](T x) {
        return T(0.5) * (T(1) + std::erf(x * T(0.70710678118654752440))) +
               x * std::exp(T(-0.5) * x * x) * T(0.39894228040143267794);
      });
      break;
    case activation::softplus:
      ga = (za > T(20)).select(ga, ga / (T(1) + (-za).exp()));
      break;
    case activation::identity: break;
  }
}
}  // namespace detail

/// The parameters theta of h, stored as two nn.Linear layers with the time column split off:
///   layer 1: nn.Linear(d [+1], hidden): weight [hidden, d (+1)] = [w1 | w1_t], bias b1
///   layer 2: nn.Linear(hidden [+1], d): weight [d, hidden (+1)] = [w2 | w2_t], bias b2
/// With `time1` (`time2`) false, layer 1 (2) takes no time input and w1_t (w2_t) is zero.
template <class T>
struct mlp {
  matrix<T> w1;    ///< [hidden, d]: the state columns of layer 1's weight
  vector<T> w1_t;  ///< [hidden]: the time column (last) of layer 1's weight
  vector<T> b1;    ///< [hidden]
  matrix<T> w2;    ///< [d, hidden]
  vector<T> w2_t;  ///< [d]
  vector<T> b2;    ///< [d]
  activation act = activation::relu;
  bool time1 = true;  ///< layer 1 takes t as its last input (reference: yes)
  bool time2 = true;  ///< layer 2 takes t as its last input (reference: yes)

  mlp() = default;
  /// Zero parameters (h == 0) for state width d and hidden width `hidden` (0: hidden = d).
  mlp(std::size_t d, std::size_t hidden = 0, activation a = activation::relu, bool t1 = true, bool t2 = true)
      : act(a), time1(t1), time2(t2) {
    posenc::detail::require(d >= 1, "floater::mlp", "expected d >= 1, got d = ", d);
    if (hidden == 0) hidden = d;
    (void)checked::elements(checked::extent(hidden, "floater::mlp", "hidden"), checked::extent(d, "floater::mlp", "d"),
                            "floater::mlp", "hidden * d");
    const auto D = static_cast<Eigen::Index>(d), Hd = static_cast<Eigen::Index>(hidden);
    w1 = matrix<T>::Zero(Hd, D);
    w1_t = vector<T>::Zero(Hd);
    b1 = vector<T>::Zero(Hd);
    w2 = matrix<T>::Zero(D, Hd);
    w2_t = vector<T>::Zero(D);
    b2 = vector<T>::Zero(D);
  }

  [[nodiscard]] std::size_t dim() const noexcept { return static_cast<std::size_t>(w1.cols()); }
  [[nodiscard]] std::size_t hidden() const noexcept { return static_cast<std::size_t>(w1.rows()); }

  /// Layer 1's weight as nn.Linear stores it: [hidden, d + 1] (time column last) or [hidden, d].
  [[nodiscard]] matrix<T> linear1_weight() const {
    matrix<T> w(w1.rows(), w1.cols() + (time1 ? 1 : 0));
    w.leftCols(w1.cols()) = w1;
    if (time1) w.col(w1.cols()) = w1_t;
    return w;
  }
  /// Layer 2's weight as nn.Linear stores it: [d, hidden + 1] or [d, hidden].
  [[nodiscard]] matrix<T> linear2_weight() const {
    matrix<T> w(w2.rows(), w2.cols() + (time2 ? 1 : 0));
    w.leftCols(w2.cols()) = w2;
    if (time2) w.col(w2.cols()) = w2_t;
    return w;
  }
  /// Set layer 1's weight from the nn.Linear layout ([hidden, d + time1]); shape_error otherwise.
  void set_linear1_weight(const matrix<T>& w) {
    posenc::detail::require_shape(w, w1.rows(), w1.cols() + (time1 ? 1 : 0), "floater::mlp::set_linear1_weight", "weight");
    w1 = w.leftCols(w1.cols());
    if (time1) w1_t = w.col(w1.cols());
    else w1_t.setZero();
  }
  void set_linear2_weight(const matrix<T>& w) {
    posenc::detail::require_shape(w, w2.rows(), w2.cols() + (time2 ? 1 : 0), "floater::mlp::set_linear2_weight", "weight");
    w2 = w.leftCols(w2.cols());
    if (time2) w2_t = w.col(w2.cols());
    else w2_t.setZero();
  }

  /// Number of scalars in theta (time columns counted only when used).
  [[nodiscard]] std::size_t parameter_count() const noexcept {
    return static_cast<std::size_t>(w1.size() + (time1 ? w1_t.size() : 0) + b1.size() + w2.size() +
                                    (time2 ? w2_t.size() : 0) + b2.size());
  }

  /// Check shapes agree with each other and every value is finite (throws shape_error /
  /// non_finite_error / invalid_argument naming `where` and the offending tensor).
  void validate(std::string_view where) const {
    check_shapes(where);
    posenc::detail::require_finite(w1, where, "w1 (layer 1 weight)");
    posenc::detail::require_finite(w1_t, where, "w1_t (layer 1 time column)");
    posenc::detail::require_finite(b1, where, "b1 (layer 1 bias)");
    posenc::detail::require_finite(w2, where, "w2 (layer 2 weight)");
    posenc::detail::require_finite(w2_t, where, "w2_t (layer 2 time column)");
    posenc::detail::require_finite(b2, where, "b2 (layer 2 bias)");
  }

  /// The shape part of validate(): what flatten, unflatten and the initialisers need before
  /// they index the tensors (the members are public, so their shapes may disagree).
  void check_shapes(std::string_view where) const {
    posenc::detail::require(w1.cols() >= 1, where, "expected d >= 1, got d = ", w1.cols());
    posenc::detail::require(w1.rows() >= 1, where, "expected hidden >= 1, got hidden = ", w1.rows());
    posenc::detail::require(act == activation::relu || act == activation::tanh || act == activation::gelu ||
                                act == activation::softplus || act == activation::identity,
                            where, "act: expected relu, tanh, gelu, softplus or identity, got activation(",
                            static_cast<int>(act), ")");
    const auto D = w1.cols(), Hd = w1.rows();
    posenc::detail::require_shape(w1_t, Hd, 1, where, "w1_t (layer 1 time column)");
    posenc::detail::require_shape(b1, Hd, 1, where, "b1 (layer 1 bias)");
    posenc::detail::require_shape(w2, D, Hd, where, "w2 (layer 2 weight)");
    posenc::detail::require_shape(w2_t, D, 1, where, "w2_t (layer 2 time column)");
    posenc::detail::require_shape(b2, D, 1, where, "b2 (layer 2 bias)");
  }

  /// All parameters set to zero (keeps the shapes).
  void set_zero() {
    w1.setZero(); w1_t.setZero(); b1.setZero(); w2.setZero(); w2_t.setZero(); b2.setZero();
  }
  /// this += s * other (same shapes), used to accumulate gradients.
  void add_scaled(const mlp& o, T s) {
    w1 += s * o.w1; w1_t += s * o.w1_t; b1 += s * o.b1; w2 += s * o.w2; w2_t += s * o.w2_t; b2 += s * o.b2;
  }
};

/// theta flattened into one vector, in the order w1 (row-major), w1_t, b1, w2 (row-major), w2_t,
/// b2; the time columns are included only when used (mlp::time1 / time2). This is the `Param`
/// of the generic gradient drivers (posenc/ode/gradient.hpp).
template <class T>
[[nodiscard]] vector<T> flatten(const mlp<T>& m) {
  m.check_shapes("floater::flatten");
  vector<T> v(static_cast<Eigen::Index>(m.parameter_count()));
  Eigen::Index o = 0;
  auto put = [&](const auto& x) {
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) v[o++] = x(i, j);
  };
  put(m.w1);
  if (m.time1) put(m.w1_t);
  put(m.b1);
  put(m.w2);
  if (m.time2) put(m.w2_t);
  put(m.b2);
  return v;
}

/// The inverse of flatten: overwrite m's parameters from v (shape_error if v has the wrong size).
template <class T>
void unflatten(const vector<T>& v, mlp<T>& m) {
  m.check_shapes("floater::unflatten");
  posenc::detail::require<shape_error>(static_cast<std::size_t>(v.size()) == m.parameter_count(), "floater::unflatten",
                                       "expected ", m.parameter_count(), " parameters, got ", v.size());
  Eigen::Index o = 0;
  auto get = [&](auto& x) {
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      for (Eigen::Index j = 0; j < x.cols(); ++j) x(i, j) = v[o++];
  };
  get(m.w1);
  if (m.time1) get(m.w1_t);
  get(m.b1);
  get(m.w2);
  if (m.time2) get(m.w2_t);
  get(m.b2);
}

// ---- the right-hand side --------------------------------------------------------------------------

/// h applied to a batch: dydt = h(t, y) row by row, y and dydt N x d (row n = block n). Usable as
/// the right-hand side of posenc::ode::integrate / explicit_rk with state type posenc::table<T>.
/// Holds a pointer to the parameters (which must outlive it) and its own work buffers; each
/// call is two matrix products (Y W1^T and H W2^T) split across `threads` threads by output
/// columns (rows of W1 and W2), plus rank-1 time adds and the activation.
/// Also provides vjp(...) for the generic gradient drivers (posenc/ode/gradient.hpp): the
/// pullback through h and the weight-gradient accumulation, threaded like the evaluation.
/// Thread safety: one flow per thread (every call writes the work buffers).
template <class T>
class flow {
 public:
  using value_type = T;
  using state_type = table<T>;

  /// threads: 0 = all hardware threads, n >= 1 = n (posenc/core/thread_pool.hpp). theta is
  /// validated (mlp::validate: consistent shapes, finite values; shape_error / non_finite_error /
  /// invalid_argument naming "floater::flow"): the products below index its tensors unchecked.
  explicit flow(const mlp<T>& theta, std::size_t threads = 1)
      : m_theta(&validated(theta)), m_pool(resolve_threads(threads, "floater::flow")) {}

  [[nodiscard]] const mlp<T>& parameters() const noexcept { return *m_theta; }
  void set_parameters(const mlp<T>& theta) noexcept {
    m_theta = &theta;
    m_w2t_ready = false;
  }

  /// Most rows for which pullback takes the fused sparse route (relu, after prepare_pullback):
  /// with one or two rows about half or a quarter of the hidden units are inactive in every row.
  static constexpr Eigen::Index sparse_pullback_rows = 2;

  /// Copy W2 transposed (hidden x d) for the fused pullback; call after the parameters are final
  /// (set_parameters and any change of the parameters' values invalidate it: call it again).
  /// Without it, pullback always takes the two dense products.
  void prepare_pullback() {
    m_w2t = m_theta->w2.transpose();
    m_w2t_ready = true;
  }
  void set_threads(std::size_t threads) { m_pool.reset(resolve_threads(threads, "floater::flow::set_threads")); }
  [[nodiscard]] std::size_t threads() const noexcept { return m_pool.size(); }

  /// dydt = h(t, y). y: N x d (dydt is resized if needed); shape_error for another width.
  void operator()(double t, const table<T>& y, table<T>& dydt) {
    require_width(y, "floater::flow", "y");
    if (dydt.rows() != y.rows() || dydt.cols() != y.cols()) dydt.resize(y.rows(), y.cols());
    ensure(y.rows());
    evaluate(t, y, m_z, m_h, dydt);
  }

  using cref = Eigen::Ref<const matrix<T>>;
  using ref = Eigen::Ref<matrix<T>>;
  using vref = Eigen::Ref<const vector<T>>;

  /// out = h(t, y) keeping the pre-activations z = y W1^T + b1 + t w1_t and h = sigma(z)
  /// (all N rows; z, h: N x hidden; out: N x d). The same arithmetic as evaluate_rows with every
  /// row's time equal to T(t), so the two agree bit for bit on equal rows.
  void evaluate(double t, cref y, ref z, ref h, ref out) {
    if (m_t.size() != y.rows()) m_t.resize(y.rows());
    m_t.setConstant(static_cast<T>(t));
    evaluate_rows(m_t, y, z, h, out);
  }

  /// As evaluate, with one time per row (rows of different intervals evaluated as one batch):
  /// z = (y W1^T + b1) + t w1_t^T, out = (h W2^T + b2) + t w2_t^T. Threaded over output columns.
  void evaluate_rows(const vref& t, cref y, ref z, ref h, ref out) {
    const mlp<T>& th = *m_theta;
    auto job1 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = split_range(th.w1.rows(), p, n);
      if (e <= b) return;
      auto zb = z.middleCols(b, e - b);
      zb.noalias() = y * th.w1.middleRows(b, e - b).transpose();
      add_bias_time(zb, th.b1.segment(b, e - b), th.time1, t, th.w1_t.segment(b, e - b));
      auto hb = h.middleCols(b, e - b);
      detail::activate(th.act, zb, hb);
    };
    m_pool.run(job1);
    auto job2 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = split_range(th.w2.rows(), p, n);
      if (e <= b) return;
      auto ob = out.middleCols(b, e - b);
      ob.noalias() = h * th.w2.middleRows(b, e - b).transpose();
      add_bias_time(ob, th.b2.segment(b, e - b), th.time2, t, th.w2_t.segment(b, e - b));
    };
    m_pool.run(job2);
  }

  /// Pull a cotangent g of h's output (N x d) back through h at a point whose pre-activations
  /// are z: zbar = (g W2) * sigma'(z) (N x hidden), ybar = zbar W1 (N x d). Threaded.
  /// For relu with N <= sparse_pullback_rows rows after prepare_pullback(), one fused pass over the
  /// hidden units j that are active (z_nj > 0) in some row: zbar_nj = <g_n, W2[:, j]> (0 where
  /// z_nj <= 0) and ybar_n += zbar_nj W1[j, :], reading only the active rows of W2^T and W1 (about
  /// half of the weights for one row); each thread sums its share of j into its own partial ybar,
  /// added in thread order. Equal to the dense route up to the order of the sums (same terms).
  void pullback(cref g, cref z, ref zbar, ref ybar) {
    const mlp<T>& th = *m_theta;
    if (m_w2t_ready && th.act == activation::relu && g.rows() <= sparse_pullback_rows) {
      pullback_relu_sparse(g, z, zbar, ybar);
      return;
    }
    auto job1 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = split_range(th.w1.rows(), p, n);
      if (e <= b) return;
      auto zb = zbar.middleCols(b, e - b);
      zb.noalias() = g * th.w2.middleCols(b, e - b);
      detail::multiply_derivative(th.act, z.middleCols(b, e - b), zb);
    };
    m_pool.run(job1);
    auto job2 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = split_range(th.w1.cols(), p, n);
      if (e <= b) return;
      ybar.middleCols(b, e - b).noalias() = zbar * th.w1.middleCols(b, e - b);
    };
    m_pool.run(job2);
  }

  /// Accumulate the parameter gradient of many stacked evaluations at once (R rows: the rows of
  /// all stages of a segment): with g (R x d) the output cotangents, h (R x hidden) the hidden
  /// activations, zbar (R x hidden), y (R x d) the stage inputs and t (R) each row's time,
  ///   dW2 += g^T h, db2 += sum g, dw2_t += g^T t, dW1 += zbar^T y, db1 += sum zbar, dw1_t += zbar^T t.
  /// Two matrix-matrix products in total, threaded over the rows of dW1 and dW2.
  void accumulate(cref g, cref h, cref zbar, cref y, const vref& t, mlp<T>& grad) {
    const mlp<T>& th = *m_theta;
    auto job = [&](std::size_t p, std::size_t n) {
      {
        const auto [b, e] = split_range(th.w2.rows(), p, n);
        if (e > b) {
          grad.w2.middleRows(b, e - b).noalias() += g.middleCols(b, e - b).transpose() * h;
          grad.b2.segment(b, e - b) += g.middleCols(b, e - b).colwise().sum().transpose();
          if (th.time2) grad.w2_t.segment(b, e - b).noalias() += g.middleCols(b, e - b).transpose() * t;
        }
      }
      {
        const auto [b, e] = split_range(th.w1.rows(), p, n);
        if (e > b) {
          grad.w1.middleRows(b, e - b).noalias() += zbar.middleCols(b, e - b).transpose() * y;
          grad.b1.segment(b, e - b) += zbar.middleCols(b, e - b).colwise().sum().transpose();
          if (th.time1) grad.w1_t.segment(b, e - b).noalias() += zbar.middleCols(b, e - b).transpose() * t;
        }
      }
    };
    m_pool.run(job);
  }

  /// Vector-Jacobian products at (t, y) with cotangent a (N x d): a_dfdy = (dh/dy)^T a
  /// (overwritten), g += (dh/dtheta)^T a (accumulated in the mlp layout). This is
  /// evaluate + pullback + accumulate: the same threaded products as the batched gradient.
  void vjp(double t, const table<T>& y, const table<T>& a, table<T>& a_dfdy, mlp<T>& g) {
    constexpr std::string_view where = "floater::flow::vjp";
    require_width(y, where, "y");
    posenc::detail::require_shape(a, y.rows(), y.cols(), where, "a (cotangent)");
    posenc::detail::require<shape_error>(same_shapes(g, *m_theta), where, "g: expected a gradient with the shapes of theta");
    ensure(y.rows());
    if (m_out.rows() != y.rows() || m_out.cols() != y.cols()) m_out.resize(y.rows(), y.cols());
    evaluate(t, y, m_z, m_h, m_out);  // m_t = t on every row
    if (a_dfdy.rows() != y.rows() || a_dfdy.cols() != y.cols()) a_dfdy.resize(y.rows(), y.cols());
    pullback(a, m_z, m_g, a_dfdy);
    accumulate(a, m_h, m_g, y, m_t, g);
  }

  /// The same with g_theta flattened as flatten() (the `Param` of generic code that wants a vector).
  void vjp(double t, const table<T>& y, const table<T>& a, table<T>& a_dfdy, vector<T>& g_theta) {
    mlp<T> g = zero_like(*m_theta);
    vjp(t, y, a, a_dfdy, g);
    vector<T> gf = flatten(g);
    posenc::detail::require<shape_error>(g_theta.size() == gf.size(), "floater::flow::vjp", "expected g_theta of size ",
                                         gf.size(), ", got ", g_theta.size());
    g_theta += gf;
  }

  [[nodiscard]] static mlp<T> zero_like(const mlp<T>& m) {
    mlp<T> g = m;
    g.set_zero();
    return g;
  }

 private:
  static const mlp<T>& validated(const mlp<T>& theta) {
    theta.validate("floater::flow");
    return theta;
  }
  void require_width(const table<T>& y, std::string_view where, std::string_view what) const {
    posenc::detail::require<shape_error>(y.cols() == m_theta->w1.cols(), where, what, ": expected d = ", m_theta->w1.cols(),
                                         " columns (theta's d), got ", y.cols());
  }
  static bool same_shapes(const mlp<T>& a, const mlp<T>& b) {
    return a.w1.rows() == b.w1.rows() && a.w1.cols() == b.w1.cols() && a.w1_t.size() == b.w1_t.size() &&
           a.b1.size() == b.b1.size() && a.w2.rows() == b.w2.rows() && a.w2.cols() == b.w2.cols() &&
           a.w2_t.size() == b.w2_t.size() && a.b2.size() == b.b2.size();
  }
  void pullback_relu_sparse(cref g, cref z, ref zbar, ref ybar) {
    const mlp<T>& th = *m_theta;
    const Eigen::Index N = g.rows(), D = th.w1.cols();
    const std::size_t parts = m_pool.size();
    if (m_part.rows() != static_cast<Eigen::Index>(parts) * N || m_part.cols() != D)
      m_part.resize(static_cast<Eigen::Index>(parts) * N, D);
    auto job = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = split_range(th.w1.rows(), p, n);
      auto yp = m_part.middleRows(static_cast<Eigen::Index>(p) * N, N);
      yp.setZero();
      for (Eigen::Index j = b; j < e; ++j) {
        bool any = false;
        for (Eigen::Index r = 0; r < N; ++r) any = any || z(r, j) > T(0);
        if (!any) {
          zbar.col(j).setZero();
          continue;
        }
        const auto w2 = m_w2t.row(j);
        const auto w1 = th.w1.row(j);
        for (Eigen::Index r = 0; r < N; ++r) {
          if (z(r, j) > T(0)) {
            const T s = g.row(r).dot(w2);
            zbar(r, j) = s;
            yp.row(r) += s * w1;
          } else {
            zbar(r, j) = T(0);
          }
        }
      }
    };
    m_pool.run(job);
    ybar = m_part.topRows(N);
    for (std::size_t p = 1; p < parts; ++p) ybar += m_part.middleRows(static_cast<Eigen::Index>(p) * N, N);
  }

  /// x(i, j) = (x(i, j) + b(j)) + t(i) w(j): the one order of the bias and time terms, one pass per row.
  template <class X, class B, class W>
  static void add_bias_time(X& x, const B& b, bool with_time, const vref& t, const W& w) {
    if (!with_time) {
      x.rowwise() += b.transpose();
      return;
    }
    for (Eigen::Index i = 0; i < x.rows(); ++i) x.row(i) = (x.row(i) + b.transpose()) + t[i] * w.transpose();
  }

  void ensure(Eigen::Index rows) {
    const Eigen::Index hd = m_theta->w1.rows();
    if (m_z.rows() != rows || m_z.cols() != hd) {
      m_z.resize(rows, hd);
      m_h.resize(rows, hd);
      m_g.resize(rows, hd);
    }
  }

  const mlp<T>* m_theta;
  pool_handle m_pool;
  matrix<T> m_z, m_h, m_g;
  matrix<T> m_w2t, m_part;  // W2^T for the fused pullback; per-thread partial ybar
  bool m_w2t_ready = false;
  table<T> m_out;
  vector<T> m_t;
};

namespace detail {
/// The backend of mlp<T> as an ODE state: every operation member by member (Eigen, one pass each).
struct mlp_backend {
  template <class M, class F>
  static void each(M& m, F&& f) {
    f(m.w1); f(m.w1_t); f(m.b1); f(m.w2); f(m.w2_t); f(m.b2);
  }
  template <class T, class C, std::size_t N>
  static void linear_combination(mlp<T>& out, const std::array<C, N>& c, const std::array<const mlp<T>*, N>& x) {
    auto one = [&](auto member) {
      auto& o = out.*member;
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        o.array() = ((static_cast<T>(c[J]) * ((*x[J]).*member).array()) + ...);
      }(std::make_index_sequence<N>{});
    };
    one(&mlp<T>::w1); one(&mlp<T>::w1_t); one(&mlp<T>::b1); one(&mlp<T>::w2); one(&mlp<T>::w2_t); one(&mlp<T>::b2);
  }
  template <class T, class V>
  static void fill(mlp<T>& out, V v) {
    each(out, [&](auto& x) { x.setConstant(static_cast<T>(v)); });
  }
  template <class T>
  static T norm_inf(const mlp<T>& m) {
    T r = 0;
    each(m, [&](const auto& x) {
      if (x.size() > 0) r = posenc::detail::nan_propagating_max(r, x.array().abs().template maxCoeff<Eigen::PropagateNaN>());
    });
    return r;
  }
  template <class T, class V>
  static V scaled_rms(const mlp<T>& e, const mlp<T>& y0, const mlp<T>& y1, V atol, V rtol) {
    double sum = 0;
    std::size_t n = 0;
    auto part = [&](auto member) {
      const auto& ee = e.*member;
      const auto s = static_cast<T>(atol) + static_cast<T>(rtol) * (y0.*member).array().abs().max((y1.*member).array().abs());
      sum += static_cast<double>((ee.array() / s).square().sum());
      n += static_cast<std::size_t>(ee.size());
    };
    part(&mlp<T>::w1); part(&mlp<T>::w1_t); part(&mlp<T>::b1); part(&mlp<T>::w2); part(&mlp<T>::w2_t); part(&mlp<T>::b2);
    return n == 0 ? V(0) : static_cast<V>(std::sqrt(sum / static_cast<double>(n)));
  }
  template <class T>
  static bool all_finite(const mlp<T>& m) {
    bool ok = true;
    each(m, [&](const auto& x) { ok = ok && x.allFinite(); });
    return ok;
  }
};
}  // namespace detail

}  // namespace posenc::floater

namespace posenc {
/// FLOATER's parameters are an ODE state (the adjoint integrates dL/dtheta in this layout).
template <class T>
struct state_traits<floater::mlp<T>> {
  using value_type = T;
  using evaluated_type = floater::mlp<T>;
  using default_backend = floater::detail::mlp_backend;
  static std::size_t size(const floater::mlp<T>& m) noexcept {
    return static_cast<std::size_t>(m.w1.size() + m.w1_t.size() + m.b1.size() + m.w2.size() + m.w2_t.size() + m.b2.size());
  }
  static void resize_like(floater::mlp<T>& y, const floater::mlp<T>& x) {
    if (!same_shape(y, x)) y = floater::flow<T>::zero_like(x);
  }
  static bool same_shape(const floater::mlp<T>& a, const floater::mlp<T>& b) noexcept {
    return a.w1.rows() == b.w1.rows() && a.w1.cols() == b.w1.cols() && a.w2.rows() == b.w2.rows() &&
           a.w1_t.size() == b.w1_t.size() && a.b1.size() == b.b1.size() && a.w2_t.size() == b.w2_t.size() &&
           a.b2.size() == b.b2.size();
  }
};
}  // namespace posenc
