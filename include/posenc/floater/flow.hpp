// SPDX-License-Identifier: MIT
// FLOATER's dynamics h(t, p; theta) = W2 [sigma(W1 [p; t] + b1); t] + b2 (Liu et al., ICML 2020,
// eq. 8; the reference code's `flow_func_linear`), its parameters, initialisers, and the
// right-hand side `posenc::floater::flow<T>` that runs a batch of N states (N x d, one row per
// block) through it with one matrix-matrix product per layer. The time column of each
// nn.Linear weight is kept apart from the state columns and applied as a rank-1 add
// (c = b + t * w_t), so no [p; t] concatenation is ever built.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/encoding/table.hpp>

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
    posenc::detail::require_finite(w1, where, "w1 (layer 1 weight)");
    posenc::detail::require_finite(w1_t, where, "w1_t (layer 1 time column)");
    posenc::detail::require_finite(b1, where, "b1 (layer 1 bias)");
    posenc::detail::require_finite(w2, where, "w2 (layer 2 weight)");
    posenc::detail::require_finite(w2_t, where, "w2_t (layer 2 time column)");
    posenc::detail::require_finite(b2, where, "b2 (layer 2 bias)");
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

// ---- initialisation ------------------------------------------------------------------------------

/// The reference initialisation of h: nn.init.xavier_normal_ on each nn.Linear weight (the time
/// column included: fan_in = in + 1, std = gain sqrt(2 / (fan_in + fan_out))) and zero biases.
template <class T>
void init_xavier_normal(mlp<T>& m, std::mt19937_64& rng, double gain = 1.0) {
  auto fill = [&](matrix<T>& w, vector<T>& wt, bool has_t) {
    const double fan_in = static_cast<double>(w.cols() + (has_t ? 1 : 0)), fan_out = static_cast<double>(w.rows());
    std::normal_distribution<double> nd(0.0, gain * std::sqrt(2.0 / (fan_in + fan_out)));
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
      for (Eigen::Index j = 0; j < w.cols(); ++j) w(i, j) = static_cast<T>(nd(rng));
      wt[i] = has_t ? static_cast<T>(nd(rng)) : T(0);
    }
  };
  fill(m.w1, m.w1_t, m.time1);
  fill(m.w2, m.w2_t, m.time2);
  m.b1.setZero();
  m.b2.setZero();
}

/// Small-scale initialisation (paper section 4.4): Xavier-normal scaled by `scale`, zero biases,
/// so that h starts near 0 and the encoder near its base (bias form) or near p(0).
template <class T>
void init_small(mlp<T>& m, std::mt19937_64& rng, double scale = 1e-2) {
  init_xavier_normal(m, rng, scale);
}

/// nn.init.xavier_uniform_ of a tensor of shape `shape` (PyTorch's fan rule: fan_in = shape[1] *
/// receptive, fan_out = shape[0] * receptive, receptive = product of shape[2:]), returned as rows
/// of the last dimension: prod(shape[:-1]) rows x shape[-1] columns. For the reference bank
/// [3, n_layers, d] row g * n_layers + l is (q/k/v = g, layer l).
template <class T>
[[nodiscard]] table<T> xavier_uniform(const std::vector<std::size_t>& shape, std::mt19937_64& rng, double gain = 1.0) {
  constexpr std::string_view where = "floater::xavier_uniform";
  posenc::detail::require<shape_error>(shape.size() >= 2, where, "expected a shape with at least 2 dimensions, got ",
                                       shape.size());
  for (std::size_t s : shape) posenc::detail::require<shape_error>(s >= 1, where, "shape: expected extents >= 1");
  std::size_t rows = 1, receptive = 1;
  for (std::size_t i = 0; i + 1 < shape.size(); ++i) rows = checked::mul(rows, shape[i], where, "shape: rows = prod(shape[:-1])");
  for (std::size_t i = 2; i < shape.size(); ++i)
    receptive = checked::mul(receptive, shape[i], where, "shape: receptive field = prod(shape[2:])");
  const double fan_in = static_cast<double>(shape[1]) * static_cast<double>(receptive),
               fan_out = static_cast<double>(shape[0]) * static_cast<double>(receptive);
  const double a = gain * std::sqrt(6.0 / (fan_in + fan_out));
  std::uniform_real_distribution<double> ud(-a, a);
  auto p = posenc::detail::allocate_table<T>(rows, shape.back(), where, "shape: rows = prod(shape[:-1])", "shape[-1]");
  for (Eigen::Index i = 0; i < p.rows(); ++i)
    for (Eigen::Index j = 0; j < p.cols(); ++j) p(i, j) = static_cast<T>(ud(rng));
  return p;
}

// ---- a tiny persistent worker pool --------------------------------------------------------------

namespace detail {
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/// threads - 1 persistent workers plus the calling thread. run(f) calls f(part, parts) exactly
/// once for every part in [0, parts) and returns when all are done. Part p is meant for thread p
/// (so each thread keeps touching the same rows of the weights: they stay in its cache), but a
/// part not yet started is taken over by whichever thread is free: on a loaded machine a
/// descheduled worker never holds the caller up, the caller then simply does the work itself.
/// Workers spin briefly between jobs (the encoder posts two per stage), then sleep on an atomic wait.
class worker_pool {
 public:
  explicit worker_pool(std::size_t threads)
      : m_parts(std::max<std::size_t>(threads, 1)), m_claim(std::make_unique<std::atomic<std::uint64_t>[]>(m_parts)) {
    for (std::size_t i = 0; i < m_parts; ++i) m_claim[i].store(0);
    for (std::size_t i = 1; i < m_parts; ++i) m_workers.emplace_back([this, i] { loop(i); });
  }
  worker_pool(const worker_pool&) = delete;
  worker_pool& operator=(const worker_pool&) = delete;
  ~worker_pool() {
    m_stop.store(true);
    m_gen.fetch_add(1);
    m_gen.notify_all();
    for (auto& w : m_workers) w.join();
  }
  [[nodiscard]] std::size_t size() const noexcept { return m_parts; }

  template <class F>
  void run(F& f) {
    if (m_parts == 1) {
      f(std::size_t{0}, std::size_t{1});
      return;
    }
    m_ctx = &f;
    m_fn = [](void* c, std::size_t p, std::size_t n) { (*static_cast<F*>(c))(p, n); };
    m_done.store(0, std::memory_order_relaxed);
    const std::uint64_t g = ++m_job;
    m_gen.store(g);  // publishes m_ctx, m_fn (seq_cst store: release)
    if (m_sleepers.load() > 0) m_gen.notify_all();
    for (std::size_t p = 0; p < m_parts; ++p) try_run(p, g);
    std::uint32_t spins = 0;
    while (m_done.load(std::memory_order_acquire) != m_parts) {
      if (++spins < 2048) cpu_relax();
      else std::this_thread::yield();
    }
  }

 private:
  bool try_run(std::size_t p, std::uint64_t g) {
    std::uint64_t old = m_claim[p].load(std::memory_order_acquire);
    if (old >= g || !m_claim[p].compare_exchange_strong(old, g)) return false;
    m_fn(m_ctx, p, m_parts);
    m_done.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }

  void loop(std::size_t id) {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t g = m_gen.load(std::memory_order_acquire);
      if (g == seen) {
        const auto t0 = std::chrono::steady_clock::now();
        std::uint32_t spins = 0;
        while ((g = m_gen.load(std::memory_order_acquire)) == seen) {
          cpu_relax();
          if ((++spins & 255u) == 0 && std::chrono::steady_clock::now() - t0 > std::chrono::microseconds(200)) {
            m_sleepers.fetch_add(1);
            m_gen.wait(seen);
            m_sleepers.fetch_sub(1);
            spins = 0;
          }
        }
      }
      seen = g;
      if (m_stop.load()) return;
      for (std::size_t k = 0; k < m_parts; ++k) try_run((id + k) % m_parts, g);
    }
  }

  std::size_t m_parts;
  std::unique_ptr<std::atomic<std::uint64_t>[]> m_claim;  // last job that claimed each part
  std::vector<std::thread> m_workers;
  std::atomic<std::uint64_t> m_gen{0};
  std::uint64_t m_job = 0;
  std::atomic<std::size_t> m_done{0};
  std::atomic<int> m_sleepers{0};
  std::atomic<bool> m_stop{false};
  void* m_ctx = nullptr;
  void (*m_fn)(void*, std::size_t, std::size_t) = nullptr;
};

/// [begin, end) of part p of n over `count` items, in chunks aligned to 16 (SIMD-friendly).
inline std::pair<Eigen::Index, Eigen::Index> split(Eigen::Index count, std::size_t p, std::size_t n) {
  const Eigen::Index chunks = (count + 15) / 16;
  const auto P = static_cast<Eigen::Index>(p), N = static_cast<Eigen::Index>(n);
  const Eigen::Index b = std::min(count, (chunks * P / N) * 16), e = std::min(count, (chunks * (P + 1) / N) * 16);
  return {b, e};
}

/// A worker_pool that copies as "a new pool of the same size" (so objects holding one stay copyable).
class pool_handle {
 public:
  explicit pool_handle(std::size_t threads = 1) { reset(threads); }
  pool_handle(const pool_handle& o) { reset(o.size()); }
  pool_handle& operator=(const pool_handle& o) {
    if (this != &o) reset(o.size());
    return *this;
  }
  pool_handle(pool_handle&&) noexcept = default;
  pool_handle& operator=(pool_handle&&) noexcept = default;
  void reset(std::size_t threads) { m_pool = threads > 1 ? std::make_unique<worker_pool>(threads) : nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return m_pool ? m_pool->size() : 1; }
  template <class F>
  void run(F& f) {
    if (m_pool) m_pool->run(f);
    else f(std::size_t{0}, std::size_t{1});
  }

 private:
  std::unique_ptr<worker_pool> m_pool;
};
}  // namespace detail

// ---- the right-hand side --------------------------------------------------------------------------

/// h applied to a batch: dydt = h(t, y) row by row, y and dydt N x d (row n = block n). Usable as
/// the right-hand side of posenc::ode::integrate / explicit_rk with state type posenc::table<T>.
/// Holds a pointer to the parameters (which must outlive it) and its own work buffers; each
/// call is two matrix products (Y W1^T and H W2^T) split across `threads` threads by output
/// columns (rows of W1 and W2), plus rank-1 time adds and the activation.
/// Also provides vjp(...) for the generic gradient drivers (posenc/ode/gradient.hpp).
template <class T>
class flow {
 public:
  using value_type = T;
  using state_type = table<T>;

  explicit flow(const mlp<T>& theta, std::size_t threads = 1) : m_theta(&theta), m_pool(threads) {}

  [[nodiscard]] const mlp<T>& parameters() const noexcept { return *m_theta; }
  void set_parameters(const mlp<T>& theta) noexcept { m_theta = &theta; }
  void set_threads(std::size_t threads) { m_pool.reset(threads); }
  [[nodiscard]] std::size_t threads() const noexcept { return m_pool.size(); }

  /// dydt = h(t, y). y: N x d (dydt is resized if needed).
  void operator()(double t, const table<T>& y, table<T>& dydt) {
    if (dydt.rows() != y.rows() || dydt.cols() != y.cols()) dydt.resize(y.rows(), y.cols());
    ensure(y.rows());
    evaluate(t, y, m_z, m_h, dydt);
  }

  using cref = Eigen::Ref<const matrix<T>>;
  using ref = Eigen::Ref<matrix<T>>;

  /// out = h(t, y) keeping the pre-activations z = y W1^T + b1 + t w1_t and h = sigma(z)
  /// (all N rows; z, h: N x hidden; out: N x d). Threaded over output columns.
  void evaluate(double t, cref y, ref z, ref h, ref out) {
    const mlp<T>& th = *m_theta;
    const T tt = static_cast<T>(t);
    auto job1 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = detail::split(th.w1.rows(), p, n);
      if (e <= b) return;
      auto zb = z.middleCols(b, e - b);
      zb.noalias() = y * th.w1.middleRows(b, e - b).transpose();
      if (th.time1) zb.rowwise() += (th.b1.segment(b, e - b) + tt * th.w1_t.segment(b, e - b)).transpose();
      else zb.rowwise() += th.b1.segment(b, e - b).transpose();
      auto hb = h.middleCols(b, e - b);
      detail::activate(th.act, zb, hb);
    };
    m_pool.run(job1);
    auto job2 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = detail::split(th.w2.rows(), p, n);
      if (e <= b) return;
      auto ob = out.middleCols(b, e - b);
      ob.noalias() = h * th.w2.middleRows(b, e - b).transpose();
      if (th.time2) ob.rowwise() += (th.b2.segment(b, e - b) + tt * th.w2_t.segment(b, e - b)).transpose();
      else ob.rowwise() += th.b2.segment(b, e - b).transpose();
    };
    m_pool.run(job2);
  }

  /// As evaluate, with one time per row (rows of different intervals evaluated as one batch).
  void evaluate_rows(const Eigen::Ref<const vector<T>>& t, cref y, ref z, ref h, ref out) {
    const mlp<T>& th = *m_theta;
    auto job1 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = detail::split(th.w1.rows(), p, n);
      if (e <= b) return;
      auto zb = z.middleCols(b, e - b);
      zb.noalias() = y * th.w1.middleRows(b, e - b).transpose();
      zb.rowwise() += th.b1.segment(b, e - b).transpose();
      if (th.time1) zb.noalias() += t * th.w1_t.segment(b, e - b).transpose();
      auto hb = h.middleCols(b, e - b);
      detail::activate(th.act, zb, hb);
    };
    m_pool.run(job1);
    auto job2 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = detail::split(th.w2.rows(), p, n);
      if (e <= b) return;
      auto ob = out.middleCols(b, e - b);
      ob.noalias() = h * th.w2.middleRows(b, e - b).transpose();
      ob.rowwise() += th.b2.segment(b, e - b).transpose();
      if (th.time2) ob.noalias() += t * th.w2_t.segment(b, e - b).transpose();
    };
    m_pool.run(job2);
  }

  /// Pull a cotangent g of h's output (N x d) back through h at a point whose pre-activations
  /// are z: zbar = (g W2) * sigma'(z) (N x hidden), ybar = zbar W1 (N x d). Threaded.
  void pullback(cref g, cref z, ref zbar, ref ybar) {
    const mlp<T>& th = *m_theta;
    auto job1 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = detail::split(th.w1.rows(), p, n);
      if (e <= b) return;
      auto zb = zbar.middleCols(b, e - b);
      zb.noalias() = g * th.w2.middleCols(b, e - b);
      detail::multiply_derivative(th.act, z.middleCols(b, e - b), zb);
    };
    m_pool.run(job1);
    auto job2 = [&](std::size_t p, std::size_t n) {
      const auto [b, e] = detail::split(th.w1.cols(), p, n);
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
  void accumulate(cref g, cref h, cref zbar, cref y, const Eigen::Ref<const vector<T>>& t, mlp<T>& grad) {
    const mlp<T>& th = *m_theta;
    auto job = [&](std::size_t p, std::size_t n) {
      {
        const auto [b, e] = detail::split(th.w2.rows(), p, n);
        if (e > b) {
          grad.w2.middleRows(b, e - b).noalias() += g.middleCols(b, e - b).transpose() * h;
          grad.b2.segment(b, e - b) += g.middleCols(b, e - b).colwise().sum().transpose();
          if (th.time2) grad.w2_t.segment(b, e - b).noalias() += g.middleCols(b, e - b).transpose() * t;
        }
      }
      {
        const auto [b, e] = detail::split(th.w1.rows(), p, n);
        if (e > b) {
          grad.w1.middleRows(b, e - b).noalias() += zbar.middleCols(b, e - b).transpose() * y;
          grad.b1.segment(b, e - b) += zbar.middleCols(b, e - b).colwise().sum().transpose();
          if (th.time1) grad.w1_t.segment(b, e - b).noalias() += zbar.middleCols(b, e - b).transpose() * t;
        }
      }
    };
    m_pool.run(job);
  }

  /// Vector-Jacobian products at (t, y) with cotangent a (N x d):
  ///   a_dfdy = (dh/dy)^T a   (overwritten),   g_theta += (dh/dtheta)^T a   (flattened as flatten()).
  void vjp(double t, const table<T>& y, const table<T>& a, table<T>& a_dfdy, vector<T>& g_theta) {
    mlp<T> g = zero_like(*m_theta);
    vjp(t, y, a, a_dfdy, g, T(1));
    vector<T> gf = flatten(g);
    posenc::detail::require<shape_error>(g_theta.size() == gf.size(), "floater::flow::vjp", "expected g_theta of size ",
                                         gf.size(), ", got ", g_theta.size());
    g_theta += gf;
  }

  /// Same, accumulating w * (dh/dtheta)^T a into a structured gradient.
  void vjp(double t, const table<T>& y, const table<T>& a, table<T>& a_dfdy, mlp<T>& g, T w) {
    const mlp<T>& th = *m_theta;
    ensure(y.rows());
    const T tt = static_cast<T>(t);
    m_z.noalias() = y * th.w1.transpose();
    m_z.rowwise() += (th.b1 + (th.time1 ? tt : T(0)) * th.w1_t).transpose();
    detail::activate(th.act, m_z, m_h);
    // layer 2: out = H W2^T + c2
    g.w2.noalias() += w * (a.transpose() * m_h);
    const vector<T> sa = a.colwise().sum().transpose();
    g.b2 += w * sa;
    if (th.time2) g.w2_t += (w * tt) * sa;
    m_g.noalias() = a * th.w2;  // dL/dH
    detail::multiply_derivative(th.act, m_z, m_g);
    g.w1.noalias() += w * (m_g.transpose() * y);
    const vector<T> sz = m_g.colwise().sum().transpose();
    g.b1 += w * sz;
    if (th.time1) g.w1_t += (w * tt) * sz;
    a_dfdy.resize(y.rows(), y.cols());
    a_dfdy.noalias() = m_g * th.w1;
  }

  [[nodiscard]] static mlp<T> zero_like(const mlp<T>& m) {
    mlp<T> g = m;
    g.set_zero();
    return g;
  }

 private:
  void ensure(Eigen::Index rows) {
    const Eigen::Index hd = m_theta->w1.rows();
    if (m_z.rows() != rows || m_z.cols() != hd) {
      m_z.resize(rows, hd);
      m_h.resize(rows, hd);
      m_g.resize(rows, hd);
    }
  }

  const mlp<T>* m_theta;
  detail::pool_handle m_pool;
  matrix<T> m_z, m_h, m_g;
};

}  // namespace posenc::floater
