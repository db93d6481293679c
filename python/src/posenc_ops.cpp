// SPDX-License-Identifier: MIT
// posenc's encodings as PyTorch operators: one translation unit registered with TORCH_LIBRARY
// (namespace `posenc`): the schemas once, CPU kernels (CompositeExplicitAutograd for the tables,
// which have no tensor input), and Autograd kernels (torch::autograd::Function, whose backward is
// again a dispatcher op), so Python, TorchScript and C++ callers get gradients and AOTAutograd
// traces them. The fake kernels for torch.compile are Python (posenc/_fake.py). The Python package
// (python/posenc) wraps the ops in functions and modules.
//
// Conventions of every op:
//   * tensors must be CPU and strided; float32 or float64 (the rope and alibi ops also take
//     bfloat16 and float16, computing in float32 or better); contiguous where stated (the
//     out-of-place rope/alibi ops take any strides; the in-place ones need head_dim / key columns
//     contiguous); anything else raises ValueError (shape, device, layout, contiguity) or
//     TypeError (dtype) with a message "posenc: <op>: <argument>: expected ..., got ...";
//   * posenc's own exceptions are translated: posenc::invalid_argument and its subclasses
//     (shape_error, grid_error, non_finite_error) and rotary::config_error -> ValueError, any other
//     posenc::error -> RuntimeError, the message unchanged.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/autograd.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/ode.hpp>
#include <posenc/sinusoidal.hpp>  // today it also brings posenc::rotary
#if __has_include(<posenc/rotary.hpp>)
#include <posenc/rotary.hpp>  // the 0.2 layout gives rotary its own umbrella header
#endif
#include <posenc/toeplitz.hpp>
#include <posenc/tupe.hpp>
#include <posenc/alibi.hpp>  // after floater.hpp: see posenc/core/state_traits.hpp

namespace {

using at::Tensor;

// ---- argument checks and error translation ---------------------------------------------------

std::string shape_str(at::IntArrayRef s) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << ']';
  return os.str();
}

const char* dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return "float32";
    case at::kDouble: return "float64";
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kLong: return "int64";
    case at::kInt: return "int32";
    case at::kBool: return "bool";
    default: return c10::toString(t);
  }
}

/// Device, layout and contiguity of any tensor argument.
void check_storage(const Tensor& t, const char* op, const char* name) {
  TORCH_CHECK_VALUE(t.defined(), "posenc: ", op, ": ", name, ": expected a tensor, got an undefined tensor");
  TORCH_CHECK_VALUE(t.device().is_cpu(), "posenc: ", op, ": ", name, ": expected a CPU tensor, got device '",
                    t.device().str(), "' (this build of posenc's ops is CPU-only)");
  TORCH_CHECK_VALUE(t.layout() == at::kStrided, "posenc: ", op, ": ", name, ": expected a dense (strided) tensor, got layout ",
                    t.layout());
  TORCH_CHECK_VALUE(t.is_contiguous(), "posenc: ", op, ": ", name,
                    ": expected a contiguous tensor (call .contiguous()), got shape ", shape_str(t.sizes()), " with strides ",
                    shape_str(t.strides()));
}

/// A floating-point argument: float32/float64 and, if `like` is given, the same dtype as it.
void check_real(const Tensor& t, const char* op, const char* name, const Tensor* like = nullptr,
                const char* like_name = nullptr) {
  check_storage(t, op, name);
  TORCH_CHECK_TYPE(t.scalar_type() == at::kFloat || t.scalar_type() == at::kDouble, "posenc: ", op, ": ", name,
                   ": expected dtype float32 or float64, got ", dtype_name(t.scalar_type()));
  if (like)
    TORCH_CHECK_TYPE(t.scalar_type() == like->scalar_type(), "posenc: ", op, ": ", name, ": expected dtype ",
                     dtype_name(like->scalar_type()), " (the dtype of ", like_name, "), got ",
                     dtype_name(t.scalar_type()));
}

void check_shape(const Tensor& t, std::vector<int64_t> want, const char* op, const char* name, const char* meaning) {
  TORCH_CHECK_VALUE(t.sizes().vec() == want, "posenc: ", op, ": ", name, ": expected shape ", shape_str(want), " (", meaning,
                    "), got ", shape_str(t.sizes()));
}

void check_dim(const Tensor& t, int64_t dim, const char* op, const char* name, const char* meaning) {
  TORCH_CHECK_VALUE(t.dim() == dim, "posenc: ", op, ": ", name, ": expected a ", dim, "-D tensor ", meaning, ", got shape ",
                    shape_str(t.sizes()));
}

/// Run f, translating posenc's exceptions into the matching Python ones.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const posenc::invalid_argument& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const posenc::rotary::config_error& e) {
    TORCH_CHECK_VALUE(false, e.what());
  } catch (const posenc::error& e) {
    TORCH_CHECK(false, e.what());
  }
}

/// threads > 0: as given. 0: torch's intra-op thread count for weights of at least 128 x 128
/// (below that, a product is too small to share between threads), else 1.
std::size_t threads_or_default(int64_t threads, int64_t weight_size) {
  if (threads > 0) return static_cast<std::size_t>(threads);
  return weight_size >= 128 * 128 ? static_cast<std::size_t>(std::max(1, at::get_num_threads())) : 1;
}

template <class T>
using cmap = Eigen::Map<const posenc::matrix<T>>;
template <class T>
using vmap = Eigen::Map<const posenc::vector<T>>;

template <class T>
posenc::matrix<T> to_matrix(const Tensor& t) {
  return cmap<T>(t.data_ptr<T>(), t.size(0), t.numel() / std::max<int64_t>(t.size(0), 1));
}
template <class T>
posenc::vector<T> to_vector(const Tensor& t) {
  return vmap<T>(t.data_ptr<T>(), t.numel());
}
template <class T, class Derived>
Tensor from_matrix(const Eigen::MatrixBase<Derived>& m, std::vector<int64_t> shape, at::ScalarType dt) {
  Tensor out = at::empty(shape, at::TensorOptions().dtype(dt));
  Eigen::Map<posenc::matrix<T>>(out.data_ptr<T>(), m.rows(), m.cols()) = m;
  return out;
}

// ---- FLOATER ----------------------------------------------------------------------------------

enum class scheme_id { rk4, euler, midpoint, rk4_classic };

scheme_id parse_scheme(const std::string& s, const char* op) {
  if (s == "rk4" || s == "rk4_38") return scheme_id::rk4;
  if (s == "euler") return scheme_id::euler;
  if (s == "midpoint") return scheme_id::midpoint;
  if (s == "rk4_classic") return scheme_id::rk4_classic;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": scheme: expected 'rk4' (Kutta's 3/8 rule, torchdiffeq's rk4), ",
                    "'rk4_classic', 'euler' or 'midpoint', got '", s, "'");
}

/// The state kept between forward and backward (and by the module's eval-mode cache): the
/// encoder with its cached table, which backward and extend reuse.
struct floater_state_base {
  virtual ~floater_state_base() = default;
  virtual Tensor table(int64_t L) = 0;
  virtual std::vector<Tensor> backward(const Tensor& grad, bool adjoint, int64_t adjoint_substeps) = 0;
  virtual int64_t cached() const = 0;
};

template <class T, class Scheme>
struct floater_state final : floater_state_base {
  posenc::floater::encoder<T, Scheme> enc;
  int64_t N, D;
  bool time1, time2;
  floater_state(posenc::floater::mlp<T> m, posenc::table<T> p0, posenc::floater::options o)
      : enc(std::move(m), std::move(p0), std::move(o)) {
    N = static_cast<int64_t>(enc.blocks());
    D = static_cast<int64_t>(enc.dim());
    time1 = enc.parameters().time1;
    time2 = enc.parameters().time2;
  }
  at::ScalarType dtype() const { return std::is_same_v<T, float> ? at::kFloat : at::kDouble; }

  Tensor table(int64_t L) override {
    enc.extend(static_cast<std::size_t>(L));
    const auto traj = enc.trajectory();
    Tensor out = at::empty({L, N, D}, at::TensorOptions().dtype(dtype()));
    std::memcpy(out.data_ptr<T>(), traj.data(), sizeof(T) * static_cast<std::size_t>(L * N * D));
    return out;
  }
  int64_t cached() const override { return static_cast<int64_t>(enc.size()); }

  std::vector<Tensor> backward(const Tensor& grad, bool adjoint, int64_t adjoint_substeps) override {
    constexpr const char* op = "floater_backward";
    check_real(grad, op, "grad");
    TORCH_CHECK_TYPE(grad.scalar_type() == dtype(), "posenc: ", op, ": grad: expected dtype ", dtype_name(dtype()),
                     " (the dtype of the table), got ", dtype_name(grad.scalar_type()));
    TORCH_CHECK_VALUE(grad.dim() == 3 && grad.size(0) >= 1 && grad.size(1) == N && grad.size(2) == D, "posenc: ", op,
                      ": grad: expected shape [L, ", N, ", ", D, "] with L >= 1 (dL/dtable), got ", shape_str(grad.sizes()));
    TORCH_CHECK_VALUE(adjoint_substeps >= 0, "posenc: ", op, ": adjoint_substeps: expected >= 0 (0: the forward substeps), got ",
                      adjoint_substeps);
    const int64_t L = grad.size(0);
    const T* g = grad.data_ptr<T>();
    std::vector<posenc::table<T>> up(static_cast<std::size_t>(N), posenc::table<T>(L, D));
    for (int64_t i = 0; i < L; ++i)
      for (int64_t n = 0; n < N; ++n) std::memcpy(up[n].row(i).data(), g + (i * N + n) * D, sizeof(T) * D);
    const auto gr = adjoint ? enc.adjoint(up, static_cast<std::size_t>(adjoint_substeps)) : enc.backprop(up);
    const auto dt = dtype();
    const auto& f = gr.flow;
    Tensor dw1 = from_matrix<T>(f.linear1_weight(), {f.w1.rows(), f.w1.cols() + (time1 ? 1 : 0)}, dt);
    Tensor db1 = from_matrix<T>(f.b1, {f.b1.size()}, dt);
    Tensor dw2 = from_matrix<T>(f.linear2_weight(), {f.w2.rows(), f.w2.cols() + (time2 ? 1 : 0)}, dt);
    Tensor db2 = from_matrix<T>(f.b2, {f.b2.size()}, dt);
    Tensor dp0 = from_matrix<T>(gr.p0, {N, D}, dt);
    return {dw1, db1, dw2, db2, dp0};
  }
};

}  // namespace

/// The TorchScript-visible holder of a FLOATER encoder (torch.classes.posenc.FloaterState).
struct FloaterState : torch::CustomClassHolder {
  std::unique_ptr<floater_state_base> impl;
  int64_t cached() const { return impl->cached(); }
};

namespace {

template <class T, class Scheme>
std::unique_ptr<floater_state_base> make_floater(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                                                 const Tensor& p0, posenc::floater::activation act, bool time1, bool time2,
                                                 double delta, int64_t substeps, int64_t threads) {
  const int64_t D = p0.size(1), H = w1.size(0);
  posenc::floater::mlp<T> m(static_cast<std::size_t>(D), static_cast<std::size_t>(H), act, time1, time2);
  m.set_linear1_weight(to_matrix<T>(w1));
  m.b1 = to_vector<T>(b1);
  m.set_linear2_weight(to_matrix<T>(w2));
  m.b2 = to_vector<T>(b2);
  posenc::floater::options o;
  o.delta = delta;
  o.substeps = static_cast<std::size_t>(substeps);
  o.threads = threads_or_default(threads, D * H);
  return std::make_unique<floater_state<T, Scheme>>(std::move(m), posenc::table<T>(to_matrix<T>(p0)), std::move(o));
}

template <class T>
std::unique_ptr<floater_state_base> make_floater_scheme(scheme_id s, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                                                        const Tensor& b2, const Tensor& p0, posenc::floater::activation act,
                                                        bool t1, bool t2, double delta, int64_t substeps, int64_t threads) {
  namespace sc = posenc::ode::schemes;
  switch (s) {
    case scheme_id::rk4: return make_floater<T, sc::rk4_38>(w1, b1, w2, b2, p0, act, t1, t2, delta, substeps, threads);
    case scheme_id::euler: return make_floater<T, sc::euler>(w1, b1, w2, b2, p0, act, t1, t2, delta, substeps, threads);
    case scheme_id::midpoint: return make_floater<T, sc::midpoint>(w1, b1, w2, b2, p0, act, t1, t2, delta, substeps, threads);
    case scheme_id::rk4_classic: return make_floater<T, sc::rk4>(w1, b1, w2, b2, p0, act, t1, t2, delta, substeps, threads);
  }
  TORCH_CHECK(false, "posenc: floater_forward: unknown scheme");
}

/// Validate the FLOATER arguments of `op` and build the encoder (no table computed yet).
c10::intrusive_ptr<FloaterState> floater_build(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2,
                                               const Tensor& p0, double delta, int64_t substeps,
                                               const std::string& activation, bool time1, bool time2,
                                               const std::string& scheme, int64_t threads, const char* op) {
  check_real(p0, op, "p0");
  check_real(w1, op, "w1", &p0, "p0");
  check_real(b1, op, "b1", &p0, "p0");
  check_real(w2, op, "w2", &p0, "p0");
  check_real(b2, op, "b2", &p0, "p0");
  check_dim(p0, 2, op, "p0", "[N, d] (initial states, one row per block)");
  TORCH_CHECK_VALUE(p0.size(0) >= 1 && p0.size(1) >= 1, "posenc: ", op, ": p0: expected shape [N, d] with N, d >= 1, got ",
                    shape_str(p0.sizes()));
  const int64_t D = p0.size(1);
  check_dim(w1, 2, op, "w1", "[hidden, d + 1] (layer 1 nn.Linear weight, time column last)");
  const int64_t H = w1.size(0);
  TORCH_CHECK_VALUE(H >= 1, "posenc: ", op, ": w1: expected hidden >= 1 rows, got shape ", shape_str(w1.sizes()));
  check_shape(w1, {H, D + (time1 ? 1 : 0)}, op, "w1", time1 ? "layer 1 weight [hidden, d + 1], time column last" : "layer 1 weight [hidden, d], no time input");
  check_shape(b1, {H}, op, "b1", "layer 1 bias [hidden]");
  check_shape(w2, {D, H + (time2 ? 1 : 0)}, op, "w2", time2 ? "layer 2 weight [d, hidden + 1], time column last" : "layer 2 weight [d, hidden], no time input");
  check_shape(b2, {D}, op, "b2", "layer 2 bias [d]");
  TORCH_CHECK_VALUE(substeps >= 1, "posenc: ", op, ": substeps: expected >= 1 steps per interval, got ", substeps);
  TORCH_CHECK_VALUE(std::isfinite(delta) && delta > 0, "posenc: ", op, ": delta: expected a finite delta > 0, got ", delta);
  const scheme_id sid = parse_scheme(scheme, op);
  return guarded([&] {
    const auto act = posenc::floater::activation_from_string(activation);
    auto st = c10::make_intrusive<FloaterState>();
    st->impl = p0.scalar_type() == at::kFloat
                   ? make_floater_scheme<float>(sid, w1, b1, w2, b2, p0, act, time1, time2, delta, substeps, threads)
                   : make_floater_scheme<double>(sid, w1, b1, w2, b2, p0, act, time1, time2, delta, substeps, threads);
    return st;
  });
}

void check_positions_count(int64_t L, const char* op) {
  TORCH_CHECK_VALUE(L >= 1, "posenc: ", op, ": L: expected a number of positions >= 1, got ", L);
}

/// Build the encoder and compute the L-row table: returns (table [L, N, d], state).
std::tuple<Tensor, c10::intrusive_ptr<FloaterState>> floater_forward(
    const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2, const Tensor& p0, int64_t L, double delta,
    int64_t substeps, const std::string& activation, bool time1, bool time2, const std::string& scheme, int64_t threads) {
  constexpr const char* op = "floater_forward";
  check_positions_count(L, op);
  auto st = floater_build(w1, b1, w2, b2, p0, delta, substeps, activation, time1, time2, scheme, threads, op);
  Tensor out = guarded([&] { return st->impl->table(L); });
  return std::make_tuple(out, st);
}

bool parse_gradient(const std::string& g, const char* op) {
  TORCH_CHECK_VALUE(g == "backprop" || g == "adjoint", "posenc: ", op,
                    ": gradient: expected 'backprop' (exact discrete gradient) or 'adjoint' (continuous adjoint), got '", g,
                    "'");
  return g == "adjoint";
}

/// The FLOATER table [L, N, d] as a pure function of its tensors (the differentiable op).
Tensor floater_table(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2, const Tensor& p0, int64_t L,
                     double delta, int64_t substeps, const std::string& activation, bool time1, bool time2,
                     const std::string& scheme, int64_t threads, const std::string& gradient, int64_t adjoint_substeps) {
  constexpr const char* op = "floater_table";
  check_positions_count(L, op);
  parse_gradient(gradient, op);
  TORCH_CHECK_VALUE(adjoint_substeps >= 0, "posenc: ", op, ": adjoint_substeps: expected >= 0 (0: the forward substeps), got ",
                    adjoint_substeps);
  auto st = floater_build(w1, b1, w2, b2, p0, delta, substeps, activation, time1, time2, scheme, threads, op);
  return guarded([&] { return st->impl->table(L); });
}

/// dL/d(w1, b1, w2, b2, p0) of floater_table for grad = dL/dtable [L, N, d]: rebuilds the encoder
/// and integrates the forward again (the traced route; eager autograd keeps the forward's encoder).
std::vector<Tensor> floater_table_backward(const Tensor& grad, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                                           const Tensor& b2, const Tensor& p0, double delta, int64_t substeps,
                                           const std::string& activation, bool time1, bool time2,
                                           const std::string& scheme, int64_t threads, const std::string& gradient,
                                           int64_t adjoint_substeps) {
  constexpr const char* op = "floater_table_backward";
  const bool adjoint = parse_gradient(gradient, op);
  auto st = floater_build(w1, b1, w2, b2, p0, delta, substeps, activation, time1, time2, scheme, threads, op);
  check_real(grad, op, "grad", &p0, "p0");
  TORCH_CHECK_VALUE(grad.dim() == 3 && grad.size(0) >= 1, "posenc: ", op, ": grad: expected shape [L, N, d] with L >= 1, got ",
                    shape_str(grad.sizes()));
  return guarded([&] {
    st->impl->table(grad.size(0));
    return st->impl->backward(grad, adjoint, adjoint_substeps);
  });
}

/// The table for L positions from an existing state (integrates only the intervals not cached).
Tensor floater_extend(const c10::intrusive_ptr<FloaterState>& st, int64_t L) {
  TORCH_CHECK_VALUE(st && st->impl, "posenc: floater_extend: state: expected a state made by floater_forward");
  TORCH_CHECK_VALUE(L >= 1, "posenc: floater_extend: L: expected a number of positions >= 1, got ", L);
  return guarded([&] { return st->impl->table(L); });
}

/// dL/d(w1, b1, w2, b2, p0) for an upstream dL/dtable [L, N, d]: exact discrete backprop, or the
/// continuous adjoint with `adjoint_substeps` steps per interval (0: the forward substeps).
std::vector<Tensor> floater_backward(const c10::intrusive_ptr<FloaterState>& st, const Tensor& grad, bool adjoint,
                                     int64_t adjoint_substeps) {
  TORCH_CHECK_VALUE(st && st->impl, "posenc: floater_backward: state: expected a state made by floater_forward");
  return guarded([&] { return st->impl->backward(grad, adjoint, adjoint_substeps); });
}

// ---- sinusoidal and rotary ---------------------------------------------------------------------

posenc::sinusoidal::layout parse_layout(const std::string& s, const char* op) {
  if (s == "interleaved") return posenc::sinusoidal::layout::interleaved;
  if (s == "half") return posenc::sinusoidal::layout::half;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": layout: expected 'interleaved' or 'half', got '", s, "'");
}

at::ScalarType check_out_dtype(at::ScalarType dt, const char* op) {
  TORCH_CHECK_TYPE(dt == at::kFloat || dt == at::kDouble, "posenc: ", op, ": dtype: expected float32 or float64, got ",
                   dtype_name(dt));
  return dt;
}

std::vector<double> positions_of(const c10::optional<Tensor>& positions, int64_t rows, const char* op) {
  if (!positions) return {};
  const Tensor& p = *positions;
  check_storage(p, op, "positions");
  TORCH_CHECK_TYPE(p.scalar_type() == at::kDouble || p.scalar_type() == at::kFloat || p.scalar_type() == at::kLong, "posenc: ",
                   op, ": positions: expected dtype float64, float32 or int64, got ", dtype_name(p.scalar_type()));
  TORCH_CHECK_VALUE(p.dim() == 1 && (rows < 0 || p.size(0) == rows), "posenc: ", op, ": positions: expected shape [",
                    rows < 0 ? std::string("L") : std::to_string(rows), "] (one position per row), got ", shape_str(p.sizes()));
  Tensor q = p.to(at::kDouble).contiguous();
  return std::vector<double>(q.data_ptr<double>(), q.data_ptr<double>() + q.numel());
}

/// The L x d sinusoidal table (row i = position first_position + i * position_step, or positions[i]).
Tensor sinusoidal_table(int64_t L, int64_t d, const std::string& layout, const std::string& spacing, double base,
                        double first_position, double position_step, bool zero_pad_odd, const c10::optional<Tensor>& positions,
                        at::ScalarType dtype) {
  constexpr const char* op = "sinusoidal_table";
  check_out_dtype(dtype, op);
  TORCH_CHECK_VALUE(L >= 0, "posenc: ", op, ": L: expected >= 0, got ", L);
  TORCH_CHECK_VALUE(d >= 1, "posenc: ", op, ": d: expected >= 1, got ", d);
  posenc::sinusoidal::options o;
  o.layout = parse_layout(layout, op);
  if (spacing == "two_k_over_d") o.spacing = posenc::sinusoidal::spacing::two_k_over_d;
  else if (spacing == "k_over_half_minus_one") o.spacing = posenc::sinusoidal::spacing::k_over_half_minus_one;
  else TORCH_CHECK_VALUE(false, "posenc: ", op, ": spacing: expected 'two_k_over_d' or 'k_over_half_minus_one', got '", spacing, "'");
  o.base = base;
  o.first_position = first_position;
  o.position_step = position_step;
  o.odd = zero_pad_odd ? posenc::sinusoidal::odd_dimension::zero_pad : posenc::sinusoidal::odd_dimension::reject;
  const auto pos = positions_of(positions, positions ? -1 : L, op);
  const int64_t rows = positions ? static_cast<int64_t>(pos.size()) : L;
  Tensor out = at::empty({rows, d}, at::TensorOptions().dtype(dtype));
  guarded([&] {
    auto run = [&](auto* data) {
      if (positions) posenc::sinusoidal::fill_at(std::span<const double>(pos), data, static_cast<std::size_t>(d), static_cast<std::size_t>(d), o);
      else posenc::sinusoidal::fill(data, static_cast<std::size_t>(rows), static_cast<std::size_t>(d), static_cast<std::size_t>(d), o);
    };
    if (dtype == at::kFloat) run(out.data_ptr<float>());
    else run(out.data_ptr<double>());
    return 0;
  });
  return out;
}

posenc::rotary::options rope_options(int64_t head_dim, int64_t rotary_dim, const std::string& layout, double base,
                                     double first_position, double position_step, const char* op) {
  TORCH_CHECK_VALUE(head_dim >= 0, "posenc: ", op, ": head_dim: expected >= 0 (0: the whole row), got ", head_dim);
  TORCH_CHECK_VALUE(rotary_dim >= 0, "posenc: ", op, ": rotary_dim: expected >= 0 (0: head_dim), got ", rotary_dim);
  posenc::rotary::options o;
  o.layout = parse_layout(layout, op);
  o.base = base;
  o.head_dim = static_cast<std::size_t>(head_dim);
  o.rotary_dim = static_cast<std::size_t>(rotary_dim);
  o.first_position = first_position;
  o.position_step = position_step;
  return o;
}

/// Rotate x [..., L, C] in place, row i of every leading index at position i (or positions[i]).
void rope_rotate_(Tensor x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
                    const std::string& layout, double base, double first_position, double position_step) {
  constexpr const char* op = "rope_rotate_";
  check_real(x, op, "x");
  TORCH_CHECK_VALUE(x.dim() >= 2, "posenc: ", op, ": x: expected a tensor [..., L, heads * head_dim] with at least 2 dimensions, got shape ",
                    shape_str(x.sizes()));
  const auto o = rope_options(head_dim, rotary_dim, layout, base, first_position, position_step, op);
  const int64_t L = x.size(-2), C = x.size(-1);
  const auto pos = positions_of(positions, L, op);
  const int64_t batch = L * C == 0 ? 0 : x.numel() / (L * C);
  guarded([&] {
    auto run = [&](auto* data) {
      using T = std::remove_pointer_t<decltype(data)>;
      for (int64_t b = 0; b < batch; ++b) {
        Eigen::Map<posenc::table<T>> m(data + b * L * C, L, C);
        if (positions) posenc::rotary::apply_rotary_inplace(m, std::span<const double>(pos), o);
        else posenc::rotary::apply_rotary_inplace(m, o);
      }
    };
    if (x.scalar_type() == at::kFloat) run(x.data_ptr<float>());
    else run(x.data_ptr<double>());
    return 0;
  });
}

/// The rotated copy of x (see rope_rotate_).
Tensor rope_rotate(const Tensor& x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
                   const std::string& layout, double base, double first_position, double position_step) {
  TORCH_CHECK_VALUE(x.defined() && x.device().is_cpu() && x.layout() == at::kStrided, "posenc: rope_rotate: x: expected a ",
                    "dense CPU tensor");
  Tensor y = x.clone(at::MemoryFormat::Contiguous);  // any strides in: the copy is contiguous
  rope_rotate_(y, positions, head_dim, rotary_dim, layout, base, first_position, position_step);
  return y;
}

/// (cos, sin), each [L, rotary_dim / 2]: column k = cos/sin(x_i * base^(-2k / rotary_dim)).
std::tuple<Tensor, Tensor> rope_tables(int64_t L, int64_t rotary_dim, double base, double first_position, double position_step,
                                       const c10::optional<Tensor>& positions, at::ScalarType dtype) {
  constexpr const char* op = "rope_tables";
  TORCH_CHECK_VALUE(rotary_dim >= 2 && rotary_dim % 2 == 0, "posenc: ", op, ": rotary_dim: expected an even value >= 2, got ",
                    rotary_dim);
  Tensor sc = sinusoidal_table(L, rotary_dim, "half", "two_k_over_d", base, first_position, position_step, false, positions, dtype);
  const int64_t h = rotary_dim / 2;
  return {sc.narrow(1, h, h).contiguous(), sc.narrow(1, 0, h).contiguous()};
}

// ---- TUPE --------------------------------------------------------------------------------------

struct tupe_args {
  posenc::tupe::config cfg;
  int64_t n;
};

posenc::tupe::cls_reset parse_cls(const std::string& s, const char* op) {
  if (s == "reference") return posenc::tupe::cls_reset::reference;
  if (s == "off") return posenc::tupe::cls_reset::off;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": cls: expected 'reference' (the released code's [CLS] reset) or 'off', got '", s, "'");
}

template <class T>
posenc::tupe::parameters<T> tupe_params(const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w,
                                        const c10::optional<Tensor>& q_b, const Tensor& k_w,
                                        const c10::optional<Tensor>& k_b, const c10::optional<Tensor>& rel) {
  posenc::tupe::parameters<T> p;
  p.pos_ln_weight = to_vector<T>(ln_w);
  p.pos_ln_bias = to_vector<T>(ln_b);
  p.pos_q_weight = to_matrix<T>(q_w);
  if (q_b) p.pos_q_bias = to_vector<T>(*q_b);
  p.pos_k_weight = to_matrix<T>(k_w);
  if (k_b) p.pos_k_bias = to_vector<T>(*k_b);
  if (rel) p.relative_attention_bias = to_matrix<T>(*rel);
  return p;
}

posenc::tupe::config tupe_config(const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w,
                                 const c10::optional<Tensor>& q_b, const Tensor& k_w, const c10::optional<Tensor>& k_b,
                                 const c10::optional<Tensor>& rel, int64_t heads, const std::string& cls,
                                 const std::string& scale, int64_t num_buckets, int64_t max_distance, double ln_eps,
                                 const char* op) {
  check_real(pos, op, "pos");
  check_dim(pos, 2, op, "pos", "[rows, d] (position table)");
  check_real(ln_w, op, "ln_weight", &pos, "pos");
  check_real(ln_b, op, "ln_bias", &pos, "pos");
  check_real(q_w, op, "q_weight", &pos, "pos");
  check_real(k_w, op, "k_weight", &pos, "pos");
  if (q_b) check_real(*q_b, op, "q_bias", &pos, "pos");
  if (k_b) check_real(*k_b, op, "k_bias", &pos, "pos");
  if (rel) check_real(*rel, op, "relative_attention_bias", &pos, "pos");
  const int64_t d = pos.size(1);
  check_dim(ln_w, 1, op, "ln_weight", "[d]");
  check_dim(ln_b, 1, op, "ln_bias", "[d]");
  check_dim(q_w, 2, op, "q_weight", "[d, d]");
  check_dim(k_w, 2, op, "k_weight", "[d, d]");
  if (q_b) check_dim(*q_b, 1, op, "q_bias", "[d]");
  if (k_b) check_dim(*k_b, 1, op, "k_bias", "[d]");
  if (rel) check_dim(*rel, 2, op, "relative_attention_bias", "[num_buckets + 1, heads]");
  TORCH_CHECK_VALUE(scale == "reference" || scale == "paper", "posenc: ", op,
                    ": scale: expected 'reference' (1/sqrt(2 d/H)) or 'paper' (1/sqrt(2 d)), got '", scale, "'");
  posenc::tupe::config cfg;
  cfg.d = d;
  cfg.heads = heads;
  cfg.scale = scale == "reference" ? posenc::tupe::scale_convention::reference : posenc::tupe::scale_convention::paper;
  cfg.ln_eps = ln_eps;
  cfg.relative = rel.has_value();
  cfg.buckets.num_buckets = static_cast<int>(num_buckets);
  cfg.buckets.max_distance = static_cast<int>(max_distance);
  cfg.cls = parse_cls(cls, op);
  return cfg;
}

Tensor tupe_bias(const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w, const c10::optional<Tensor>& q_b,
                 const Tensor& k_w, const c10::optional<Tensor>& k_b, const c10::optional<Tensor>& rel, int64_t n,
                 int64_t heads, const std::string& cls, const std::string& scale, int64_t num_buckets,
                 int64_t max_distance, double ln_eps) {
  constexpr const char* op = "tupe_bias";
  const auto cfg = tupe_config(pos, ln_w, ln_b, q_w, q_b, k_w, k_b, rel, heads, cls, scale, num_buckets, max_distance, ln_eps, op);
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const auto p = tupe_params<T>(ln_w, ln_b, q_w, q_b, k_w, k_b, rel);
      posenc::tupe::head_stack<T> out;
      posenc::tupe::workspace<T> ws;
      posenc::tupe::positional_bias<T>(cfg, p, cmap<T>(pos.data_ptr<T>(), pos.size(0), pos.size(1)), n, out, ws);
      Tensor t = at::empty({cfg.heads, n, n}, pos.options());
      std::memcpy(t.data_ptr<T>(), out.data(), sizeof(T) * static_cast<std::size_t>(cfg.heads * n * n));
      return t;
    };
    return pos.scalar_type() == at::kFloat ? run(float{}) : run(double{});
  });
}

/// Gradients (pos, ln_weight, ln_bias, q_weight, q_bias, k_weight, k_bias, relative_attention_bias)
/// of L given grad = dL/dbias [H, n, n]; absent parameters get empty [0] tensors (None in autograd).
std::vector<Tensor> tupe_bias_backward(const Tensor& grad, const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b,
                                       const Tensor& q_w, const c10::optional<Tensor>& q_b, const Tensor& k_w,
                                       const c10::optional<Tensor>& k_b, const c10::optional<Tensor>& rel, int64_t heads,
                                       const std::string& cls, const std::string& scale, int64_t num_buckets,
                                       int64_t max_distance, double ln_eps) {
  constexpr const char* op = "tupe_bias_backward";
  const auto cfg = tupe_config(pos, ln_w, ln_b, q_w, q_b, k_w, k_b, rel, heads, cls, scale, num_buckets, max_distance, ln_eps, op);
  check_real(grad, op, "grad", &pos, "pos");
  TORCH_CHECK_VALUE(grad.dim() == 3 && grad.size(0) == heads && grad.size(1) == grad.size(2) && grad.size(1) >= 1, "posenc: ",
                    op, ": grad: expected shape [", heads, ", n, n] (dL/dbias), got ", shape_str(grad.sizes()));
  const int64_t n = grad.size(1);
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      const auto p = tupe_params<T>(ln_w, ln_b, q_w, q_b, k_w, k_b, rel);
      posenc::tupe::head_stack<T> up(heads, n);
      std::memcpy(up.data(), grad.data_ptr<T>(), sizeof(T) * static_cast<std::size_t>(heads * n * n));
      const auto g = posenc::tupe::positional_bias_backward<T>(cfg, p, cmap<T>(pos.data_ptr<T>(), pos.size(0), pos.size(1)), up);
      const auto dt = pos.scalar_type();
      Tensor dpos = at::zeros(pos.sizes(), pos.options());
      Eigen::Map<posenc::matrix<T>>(dpos.data_ptr<T>(), pos.size(0), pos.size(1)).topRows(g.pos.rows()) = g.pos;
      std::vector<Tensor> out{dpos,
                              from_matrix<T>(g.pos_ln_weight, {cfg.d}, dt),
                              from_matrix<T>(g.pos_ln_bias, {cfg.d}, dt),
                              from_matrix<T>(g.pos_q_weight, {cfg.d, cfg.d}, dt),
                              q_b ? from_matrix<T>(g.pos_q_bias, {cfg.d}, dt) : at::empty({0}, pos.options()),
                              from_matrix<T>(g.pos_k_weight, {cfg.d, cfg.d}, dt),
                              k_b ? from_matrix<T>(g.pos_k_bias, {cfg.d}, dt) : at::empty({0}, pos.options()),
                              rel ? from_matrix<T>(g.relative_attention_bias, {rel->size(0), rel->size(1)}, dt) : at::empty({0}, pos.options())};
      return out;
    };
    return pos.scalar_type() == at::kFloat ? run(float{}) : run(double{});
  });
}

// ---- T5 relative buckets -----------------------------------------------------------------------

posenc::tupe::bucket_spec bucket_spec_of(int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  posenc::tupe::bucket_spec s;
  s.num_buckets = static_cast<int>(num_buckets);
  s.max_distance = static_cast<int>(max_distance);
  s.bidirectional = bidirectional;
  return s;
}

/// [n, n] int64: element (i, j) = bucket of j - i.
Tensor relative_position_bucket(int64_t n, int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  TORCH_CHECK_VALUE(n >= 1, "posenc: relative_position_bucket: n: expected a sequence length >= 1, got ", n);
  const auto off = guarded([&] { return posenc::tupe::relative_bucket_offsets(n, bucket_spec_of(num_buckets, max_distance, bidirectional)); });
  Tensor out = at::empty({n, n}, at::TensorOptions().dtype(at::kLong));
  int64_t* o = out.data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) o[i * n + j] = off[static_cast<std::size_t>(j - i + n - 1)];
  return out;
}

/// bias[h, i, j] = table[bucket(j - i), h] for table [rows, H] (rows >= num_buckets).
Tensor t5_bias(const Tensor& table, int64_t n, int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  constexpr const char* op = "t5_bias";
  check_real(table, op, "table");
  check_dim(table, 2, op, "table", "[num_buckets, heads]");
  TORCH_CHECK_VALUE(table.size(0) >= num_buckets && table.size(1) >= 1, "posenc: ", op, ": table: expected shape [rows >= ",
                    num_buckets, " (num_buckets), heads >= 1], got ", shape_str(table.sizes()));
  TORCH_CHECK_VALUE(n >= 1, "posenc: ", op, ": n: expected a sequence length >= 1, got ", n);
  const auto off = guarded([&] { return posenc::tupe::relative_bucket_offsets(n, bucket_spec_of(num_buckets, max_distance, bidirectional)); });
  const int64_t H = table.size(1);
  Tensor out = at::empty({H, n, n}, table.options());
  auto run = [&](auto* t, auto* o) {
    std::vector<std::remove_pointer_t<decltype(o)>> diag(static_cast<std::size_t>(2 * n - 1));
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t k = 0; k < 2 * n - 1; ++k) diag[k] = t[off[k] * H + h];
      for (int64_t i = 0; i < n; ++i) std::memcpy(o + (h * n + i) * n, diag.data() + (n - 1 - i), sizeof(diag[0]) * n);
    }
  };
  if (table.scalar_type() == at::kFloat) run(table.data_ptr<float>(), out.data_ptr<float>());
  else run(table.data_ptr<double>(), out.data_ptr<double>());
  return out;
}

/// dL/dtable [rows, H] from grad = dL/dbias [H, n, n]: the sum of grad over each bucket.
Tensor t5_bias_backward(const Tensor& grad, int64_t rows, int64_t num_buckets, int64_t max_distance, bool bidirectional) {
  constexpr const char* op = "t5_bias_backward";
  check_real(grad, op, "grad");
  TORCH_CHECK_VALUE(grad.dim() == 3 && grad.size(1) == grad.size(2) && grad.size(1) >= 1, "posenc: ", op,
                    ": grad: expected shape [heads, n, n], got ", shape_str(grad.sizes()));
  TORCH_CHECK_VALUE(rows >= num_buckets, "posenc: ", op, ": rows: expected >= num_buckets = ", num_buckets, ", got ", rows);
  const int64_t H = grad.size(0), n = grad.size(1);
  const auto off = guarded([&] { return posenc::tupe::relative_bucket_offsets(n, bucket_spec_of(num_buckets, max_distance, bidirectional)); });
  Tensor out = at::zeros({rows, H}, grad.options());
  auto run = [&](auto* g, auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    std::vector<T> diag(static_cast<std::size_t>(2 * n - 1));
    for (int64_t h = 0; h < H; ++h) {
      std::fill(diag.begin(), diag.end(), T(0));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) diag[j - i + n - 1] += g[(h * n + i) * n + j];
      for (int64_t k = 0; k < 2 * n - 1; ++k) o[off[k] * H + h] += diag[k];
    }
  };
  if (grad.scalar_type() == at::kFloat) run(grad.data_ptr<float>(), out.data_ptr<float>());
  else run(grad.data_ptr<double>(), out.data_ptr<double>());
  return out;
}

// ---- Toeplitz ----------------------------------------------------------------------------------

/// Y = B X for the m x n Toeplitz B_ij = b_{j-i}, b = [b_{-(m-1)}, ..., b_{n-1}] (m + n - 1 values),
/// X [n, k]; by FFT in O(k P log P).
Tensor toeplitz_matmul(const Tensor& b, const Tensor& x, int64_t m) {
  constexpr const char* op = "toeplitz_matmul";
  check_real(x, op, "x");
  check_real(b, op, "b", &x, "x");
  check_dim(x, 2, op, "x", "[n, k]");
  check_dim(b, 1, op, "b", "[m + n - 1] (coefficients b_{-(m-1)} .. b_{n-1})");
  TORCH_CHECK_VALUE(m >= 1, "posenc: ", op, ": m: expected rows >= 1, got ", m);
  const int64_t n = x.size(0), k = x.size(1);
  TORCH_CHECK_VALUE(n >= 1, "posenc: ", op, ": x: expected n >= 1 rows, got shape ", shape_str(x.sizes()));
  TORCH_CHECK_VALUE(b.size(0) == m + n - 1, "posenc: ", op, ": b: expected shape [", m + n - 1, "] (m + n - 1 with m = ", m,
                    ", n = ", n, "), got ", shape_str(b.sizes()));
  Tensor y = at::empty({m, k}, x.options());
  if (k == 0) return y;
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      posenc::toeplitz::toeplitz_matrix<T> B(static_cast<std::size_t>(m), static_cast<std::size_t>(n),
                                             vmap<T>(b.data_ptr<T>(), b.numel()));
      posenc::toeplitz::product_plan<T> plan(B);
      Eigen::Map<posenc::matrix<T>> Y(y.data_ptr<T>(), m, k);
      plan.apply(cmap<T>(x.data_ptr<T>(), n, k), Y);
    };
    if (x.scalar_type() == at::kFloat) run(float{});
    else run(double{});
    return y;
  });
}

/// c_d = sum_c sum_i g[i, c] x[i + d, c] for d = -(m-1) .. n-1 (g [m, k], x [n, k]): the gradient
/// of sum(g * (B x)) with respect to b. Per column, a Toeplitz product by FFT: c = T rev(g[:, c])
/// with T ((m+n-1) x m) T_{r,i} = x_{r-i}.
Tensor toeplitz_correlate(const Tensor& g, const Tensor& x) {
  constexpr const char* op = "toeplitz_correlate";
  check_real(x, op, "x");
  check_real(g, op, "g", &x, "x");
  check_dim(x, 2, op, "x", "[n, k]");
  check_dim(g, 2, op, "g", "[m, k]");
  TORCH_CHECK_VALUE(g.size(1) == x.size(1), "posenc: ", op, ": g: expected ", x.size(1), " columns (as x), got shape ",
                    shape_str(g.sizes()));
  const int64_t m = g.size(0), n = x.size(0), k = x.size(1);
  TORCH_CHECK_VALUE(m >= 1 && n >= 1, "posenc: ", op, ": expected g and x with at least one row, got ", shape_str(g.sizes()),
                    " and ", shape_str(x.sizes()));
  const int64_t P = m + n - 1;
  Tensor out = at::zeros({P}, x.options());
  return guarded([&] {
    auto run = [&](auto tag) {
      using T = decltype(tag);
      cmap<T> X(x.data_ptr<T>(), n, k), G(g.data_ptr<T>(), m, k);
      Eigen::Map<posenc::vector<T>> C(out.data_ptr<T>(), P);
      posenc::vector<T> coef(P + m - 1), rg(m), col(P);
      for (int64_t c = 0; c < k; ++c) {
        // coefficients of T by offset o = i - r in [-(P-1), m-1]: index t = o + P - 1, value x_{-o}
        coef.setZero();
        for (int64_t j = 0; j < n; ++j) coef[P - 1 - j] = X(j, c);
        posenc::toeplitz::toeplitz_matrix<T> Tm(static_cast<std::size_t>(P), static_cast<std::size_t>(m), coef);
        for (int64_t i = 0; i < m; ++i) rg[i] = G(m - 1 - i, c);
        posenc::toeplitz::product_plan<T> plan(Tm);
        plan.apply(rg, col);
        C += col;
      }
    };
    if (x.scalar_type() == at::kFloat) run(float{});
    else run(double{});
    return out;
  });
}

int64_t floater_state_cached(const c10::intrusive_ptr<FloaterState>& st) {
  TORCH_CHECK_VALUE(st && st->impl, "posenc: floater_state_cached: state: expected a state made by floater_forward");
  return st->cached();
}

// ---- rotary from a model config ----------------------------------------------------------------
// Every call into posenc::rotary's config and apply API of the new ops sits in this section:
// rotary_load (config.json text -> inv_freq, attention factor, head_dim, rotary_dim) and
// rotary_apply (one strided [B, H, S, D] or [T, H, D] tensor, rotated in place).

posenc::rotary::longrope_rule parse_longrope(const std::string& s, const char* op) {
  if (s == "init_function") return posenc::rotary::longrope_rule::init_function;
  if (s == "phi3_module") return posenc::rotary::longrope_rule::phi3_module;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": longrope_rule: expected 'init_function' or 'phi3_module', got '", s, "'");
}

posenc::rotary::semantics parse_semantics(const std::string& s, const char* op) {
  if (s == "transformers_5") return posenc::rotary::semantics::transformers_5;
  if (s == "transformers_4_46") return posenc::rotary::semantics::transformers_4_46;
  TORCH_CHECK_VALUE(false, "posenc: ", op, ": semantics: expected 'transformers_5' or 'transformers_4_46', got '", s, "'");
}

constexpr int kWideParts = 3;

/// Split a long double into kWideParts doubles whose sum (in long double) is exactly x.
void split_wide(posenc::numeric::wide x, double* out) {
  for (int i = 0; i < kWideParts; ++i) {
    out[i] = static_cast<double>(x);
    x -= static_cast<posenc::numeric::wide>(out[i]);
  }
}

posenc::numeric::wide join_wide(const double* p) {
  posenc::numeric::wide s = 0;
  for (int i = 0; i < kWideParts; ++i) s += static_cast<posenc::numeric::wide>(p[i]);
  return s;
}

/// Frequencies from a float64 tensor freqs: [pairs] (each a double) or [pairs, 2, 3] (the exact
/// long double inv_freq and inv_freq_lo, each as kWideParts doubles, as split_wide writes them).
posenc::rotary::frequencies frequencies_of(const Tensor& freqs, double attention_factor, const char* op,
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
Tensor exact_frequencies_tensor(const posenc::rotary::frequencies& f) {
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

struct rotary_loaded {
  posenc::rotary::frequencies freqs;
  std::vector<double> inv_freq;
  double attention_factor;
  int64_t head_dim, rotary_dim;
  bool depends_on_seq_len;
};

/// The frequencies of one layer type's plan (layer_type None: the config's single plan, or its
/// full_attention plan) for a sequence of seq_len tokens (0: not given).
rotary_loaded rotary_load(const std::string& json, int64_t seq_len, const c10::optional<std::string>& layer_type,
                          posenc::rotary::semantics sem, posenc::rotary::longrope_rule rule) {
  return guarded([&] {
    posenc::rotary::load_options o;
    o.semantics = sem;
    o.longrope = rule;
    const auto mc = posenc::rotary::load_config(json, o);
    const auto& plan = layer_type ? mc.plan_for(*layer_type) : mc.main_plan();
    const auto f = plan.frequencies(static_cast<std::size_t>(seq_len));
    rotary_loaded r;
    r.freqs = f;
    for (auto w : f.inv_freq) r.inv_freq.push_back(static_cast<double>(w));
    r.attention_factor = f.attention_factor;
    r.head_dim = static_cast<int64_t>(plan.context().head_dim);
    r.rotary_dim = static_cast<int64_t>(plan.rotary_dim());
    r.depends_on_seq_len = plan.depends_on_seq_len();
    return r;
  });
}

/// The layer types of a config's plans, in file order (["default"] when not per layer type).
std::vector<std::string> rotary_layer_types(const std::string& json, posenc::rotary::semantics sem) {
  return guarded([&] {
    posenc::rotary::load_options o;
    o.semantics = sem;
    const auto mc = posenc::rotary::load_config(json, o);
    std::vector<std::string> out;
    for (const auto& l : mc.layers) out.push_back(l.layer_type);
    return out;
  });
}

/// Exact cos/sin (HF's duplicated layout [c | c], [s | s]) of arbitrary positions, rounded once to T.
template <class T>
void rotary_cos_sin(const posenc::rotary::frequencies& f, std::span<const double> positions, T* cos, T* sin) {
  const auto t = posenc::rotary::table<T>(f, positions, posenc::rotary::table_layout::duplicated);
  std::memcpy(cos, t.cos.data(), sizeof(T) * static_cast<std::size_t>(t.cos.size()));
  std::memcpy(sin, t.sin.data(), sizeof(T) * static_cast<std::size_t>(t.sin.size()));
}

struct rotary_call {
  posenc::rotary::frequencies freqs;
  posenc::rotary::apply_options opt;
  bool key = false;  // rotate as k (xPos: the inverse scale)
};

/// Rotate x in place. Dense: x [B, H, S, D] (any strides, D contiguous), positions offsets[b] + s,
/// or position_ids [B, S] (per token). Ragged: x [T, H, D] with cu_seqlens [B + 1] (positions
/// offsets[b] + t - cu_seqlens[b]) or position_ids [T].
template <class T>
void rotary_apply(T* data, const Tensor& x, const rotary_call& c, const std::vector<int64_t>& cu,
                  const std::vector<int64_t>& offsets, const std::vector<int64_t>& pos_ids) {
  namespace rt = posenc::rotary;
  const auto sz = [&](int i) { return static_cast<std::size_t>(x.size(i)); };
  if (x.dim() == 4) {
    rt::dense_view<T> v{data, {sz(0), sz(1), sz(2), sz(3)}, {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}};
    rt::dense_view<T> none{data, {sz(0), 0, sz(2), sz(3)}, {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}};
    if (pos_ids.empty()) {
      if (c.key) rt::apply_inplace<T>(none, v, c.freqs, offsets, c.opt);
      else rt::apply_inplace<T>(v, rt::dense_view<T>{}, c.freqs, offsets, c.opt);
      return;
    }
    // per-token positions: sequence b as S one-token sequences [S, H, D] at offsets position_ids[b]
    const int64_t S = x.size(2);
    std::vector<int64_t> unit(static_cast<std::size_t>(S) + 1);
    for (int64_t s = 0; s <= S; ++s) unit[static_cast<std::size_t>(s)] = s;
    for (int64_t b = 0; b < x.size(0); ++b) {
      T* base = data + b * x.stride(0);
      rt::ragged_view<T> r{base, {sz(2), sz(1), sz(3)}, {x.stride(2), x.stride(1), x.stride(3)}};
      rt::ragged_view<T> r0{base, {sz(2), 0, sz(3)}, {x.stride(2), x.stride(1), x.stride(3)}};
      std::span<const int64_t> off(pos_ids.data() + b * S, static_cast<std::size_t>(S));
      if (c.key) rt::apply_ragged_inplace<T, int64_t>(r0, r, unit, off, c.freqs, c.opt);
      else rt::apply_ragged_inplace<T, int64_t>(r, rt::ragged_view<T>{}, unit, off, c.freqs, c.opt);
    }
    return;
  }
  rt::ragged_view<T> v{data, {sz(0), sz(1), sz(2)}, {x.stride(0), x.stride(1), x.stride(2)}};
  rt::ragged_view<T> none{data, {sz(0), 0, sz(2)}, {x.stride(0), x.stride(1), x.stride(2)}};
  std::vector<int64_t> unit;
  const std::vector<int64_t>* cs = &cu;
  const std::vector<int64_t>* os = &offsets;
  if (!pos_ids.empty() || cu.empty()) {  // per token (position_ids), or one sequence from 0
    unit.resize(static_cast<std::size_t>(x.size(0)) + 1);
    for (std::size_t t = 0; t < unit.size(); ++t) unit[t] = static_cast<int64_t>(t);
    if (pos_ids.empty()) unit = {0, x.size(0)};
    cs = &unit;
    os = &pos_ids;
  }
  if (c.key) rt::apply_ragged_inplace<T, int64_t>(none, v, *cs, *os, c.freqs, c.opt);
  else rt::apply_ragged_inplace<T, int64_t>(v, rt::ragged_view<T>{}, *cs, *os, c.freqs, c.opt);
}

// ---- rotary ops ----------------------------------------------------------------------------------

std::tuple<Tensor, double, int64_t, int64_t, bool> rope_frequencies(const std::string& config_json, int64_t seq_len,
                                                                    const c10::optional<std::string>& layer_type,
                                                                    const std::string& semantics,
                                                                    const std::string& longrope_rule, bool exact) {
  constexpr const char* op = "rope_frequencies";
  TORCH_CHECK_VALUE(seq_len >= 0, "posenc: ", op, ": seq_len: expected >= 0 (0: not given), got ", seq_len);
  const auto r = rotary_load(config_json, seq_len, layer_type, parse_semantics(semantics, op),
                             parse_longrope(longrope_rule, op));
  Tensor inv;
  if (exact) {
    inv = exact_frequencies_tensor(r.freqs);
  } else {
    inv = at::empty({static_cast<int64_t>(r.inv_freq.size())}, at::TensorOptions().dtype(at::kDouble));
    std::memcpy(inv.data_ptr<double>(), r.inv_freq.data(), sizeof(double) * r.inv_freq.size());
  }
  return std::make_tuple(inv, r.attention_factor, r.head_dim, r.rotary_dim, r.depends_on_seq_len);
}

/// The exact frequencies [pairs, 2, 3] of a config's plan for seq_len = max(positions) + 1 (0, not
/// given, when positions is empty): the sequence length is read from the tensor here, so that a
/// caller (a compiled graph) never turns it into a Python number. pairs: the expected count.
Tensor rope_frequencies_at(const Tensor& positions, const std::string& config_json, int64_t pairs,
                           const c10::optional<std::string>& layer_type, const std::string& semantics,
                           const std::string& longrope_rule) {
  constexpr const char* op = "rope_frequencies_at";
  TORCH_CHECK_VALUE(positions.device().is_cpu() && positions.layout() == at::kStrided, "posenc: ", op,
                    ": positions: expected a dense CPU tensor, got device '", positions.device().str(), "' and layout ",
                    positions.layout());
  TORCH_CHECK_TYPE(positions.scalar_type() == at::kLong || positions.scalar_type() == at::kInt, "posenc: ", op,
                   ": positions: expected dtype int64 or int32, got ", dtype_name(positions.scalar_type()));
  int64_t seq_len = 0;
  if (positions.numel() > 0) {
    const int64_t mx = positions.max().item<int64_t>();
    TORCH_CHECK_VALUE(mx >= 0 && mx < (int64_t{1} << 53), "posenc: ", op,
                      ": positions: expected a largest position in 0 .. 2^53 - 1, got ", mx);
    seq_len = mx + 1;
  }
  const auto r = rotary_load(config_json, seq_len, layer_type, parse_semantics(semantics, op),
                             parse_longrope(longrope_rule, op));
  TORCH_CHECK_VALUE(static_cast<int64_t>(r.inv_freq.size()) == pairs, "posenc: ", op, ": pairs: expected ",
                    r.inv_freq.size(), " (the config's rotary_dim / 2), got ", pairs);
  return exact_frequencies_tensor(r.freqs);
}

std::vector<std::string> rope_layer_types(const std::string& config_json, const std::string& semantics) {
  return rotary_layer_types(config_json, parse_semantics(semantics, "rope_layer_types"));
}

/// (cos, sin), each [*position_ids.shape, 2 * inv_freq.numel()] in dtype: the exact
/// cos/sin(position * inv_freq[k]) * attention_factor in HF's duplicated layout.
std::tuple<Tensor, Tensor> rope_cos_sin(const Tensor& position_ids, const Tensor& inv_freq, double attention_factor,
                                        at::ScalarType dtype) {
  constexpr const char* op = "rope_cos_sin";
  const auto w = frequencies_of(inv_freq, attention_factor, op, "inv_freq");
  TORCH_CHECK_VALUE(position_ids.device().is_cpu(), "posenc: ", op, ": position_ids: expected a CPU tensor, got device '",
                    position_ids.device().str(), "'");
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf || dtype == at::kBFloat16, "posenc: ",
                   op, ": dtype: expected bfloat16, float16, float32 or float64, got ", dtype_name(dtype));
  Tensor p = position_ids.to(at::kDouble).contiguous();
  auto shape = position_ids.sizes().vec();
  shape.push_back(2 * inv_freq.size(0));
  Tensor c = at::empty(shape, at::TensorOptions().dtype(dtype)), s = at::empty(shape, at::TensorOptions().dtype(dtype));
  std::span<const double> pos(p.data_ptr<double>(), static_cast<std::size_t>(p.numel()));
  guarded([&] {
    switch (dtype) {
      case at::kFloat: rotary_cos_sin<float>(w, pos, c.data_ptr<float>(), s.data_ptr<float>()); break;
      case at::kDouble: rotary_cos_sin<double>(w, pos, c.data_ptr<double>(), s.data_ptr<double>()); break;
      case at::kHalf:
        rotary_cos_sin<Eigen::half>(w, pos, reinterpret_cast<Eigen::half*>(c.data_ptr()),
                                    reinterpret_cast<Eigen::half*>(s.data_ptr()));
        break;
      default:
        rotary_cos_sin<Eigen::bfloat16>(w, pos, reinterpret_cast<Eigen::bfloat16*>(c.data_ptr()),
                                        reinterpret_cast<Eigen::bfloat16*>(s.data_ptr()));
    }
    return 0;
  });
  return {c, s};
}

std::vector<int64_t> index_vector(const c10::optional<Tensor>& t, const char* op, const char* name) {
  if (!t) return {};
  check_storage(*t, op, name);
  TORCH_CHECK_TYPE(t->scalar_type() == at::kLong || t->scalar_type() == at::kInt, "posenc: ", op, ": ", name,
                   ": expected dtype int64 or int32, got ", dtype_name(t->scalar_type()));
  Tensor q = t->to(at::kLong).contiguous();
  return std::vector<int64_t>(q.data_ptr<int64_t>(), q.data_ptr<int64_t>() + q.numel());
}

bool is_half_type(at::ScalarType t) { return t == at::kHalf || t == at::kBFloat16; }

void check_rope_x(const Tensor& x, const char* op, const char* name = "x") {
  TORCH_CHECK_VALUE(x.defined(), "posenc: ", op, ": ", name, ": expected a tensor, got an undefined tensor");
  TORCH_CHECK_VALUE(x.device().is_cpu(), "posenc: ", op, ": ", name, ": expected a CPU tensor, got device '", x.device().str(),
                    "' (this build of posenc's ops is CPU-only)");
  TORCH_CHECK_VALUE(x.layout() == at::kStrided, "posenc: ", op, ": ", name, ": expected a dense (strided) tensor, got layout ",
                    x.layout());
  const auto t = x.scalar_type();
  TORCH_CHECK_TYPE(t == at::kFloat || t == at::kDouble || is_half_type(t), "posenc: ", op, ": ", name, ": expected dtype ",
                   "bfloat16, float16, float32 or float64, got ", dtype_name(t));
  TORCH_CHECK_VALUE(x.dim() == 4 || x.dim() == 3 || std::string(name) != "x", "posenc: ", op,
                    ": ", name, ": expected [batch, heads, seq, head_dim] or ragged [tokens, heads, head_dim], got shape ",
                    shape_str(x.sizes()));
  TORCH_CHECK_VALUE(x.stride(-1) == 1 || x.size(-1) <= 1, "posenc: ", op,
                    ": ", name, ": expected head_dim contiguous (stride 1 in the last dimension), got strides ",
                    shape_str(x.strides()));
}

/// Rotate x in place by RoPE with frequencies inv_freq (float64 [rotary_dim / 2]); transpose:
/// the inverse rotation R^T = J R J (J negates the second element of each pair), the backward.
void rope_(Tensor x, const Tensor& inv_freq, double attention_factor, const c10::optional<Tensor>& position_ids,
           const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets, const std::string& layout,
           bool key, bool transpose, bool xpos, double xpos_gamma, double xpos_scale_base, double xpos_center) {
  constexpr const char* op = "rope_";
  check_rope_x(x, op);
  const auto freqs = frequencies_of(inv_freq, attention_factor, op, "inv_freq");
  const bool ragged = x.dim() == 3;
  if (position_ids) {
    const auto want = ragged ? std::vector<int64_t>{x.size(0)} : std::vector<int64_t>{x.size(0), x.size(2)};
    TORCH_CHECK_VALUE(position_ids->sizes().vec() == want, "posenc: ", op, ": position_ids: expected shape ",
                      shape_str(want), ragged ? " (one position per token)" : " ([batch, seq], one position per token)",
                      ", got ", shape_str(position_ids->sizes()));
    TORCH_CHECK_VALUE(!cu_seqlens && !offsets, "posenc: ", op,
                      ": position_ids: expected alone (cu_seqlens and offsets must be None with per-token positions)");
  }
  TORCH_CHECK_VALUE(!cu_seqlens || ragged, "posenc: ", op, ": cu_seqlens: expected only with ragged x [tokens, heads, head_dim], got x of shape ",
                    shape_str(x.sizes()));
  const auto pos = index_vector(position_ids, op, "position_ids");
  const auto cu = index_vector(cu_seqlens, op, "cu_seqlens");
  const auto off = index_vector(offsets, op, "offsets");
  TORCH_CHECK_VALUE(!ragged || off.empty() || !cu.empty(), "posenc: ", op,
                    ": offsets: expected cu_seqlens with offsets for ragged x (one offset per sequence)");
  for (std::size_t t = 0; t < pos.size(); ++t) {
    TORCH_CHECK_VALUE(pos[t] >= 0, "posenc: ", op, ": position_ids: expected positions >= 0, got ", pos[t], " at index ", t);
    TORCH_CHECK_VALUE(pos[t] < (int64_t{1} << 53), "posenc: ", op,
                      ": position_ids: expected positions <= 2^53 - 1 (exact in a double), got ", pos[t], " at index ", t);
  }
  rotary_call c;
  c.freqs = freqs;
  c.opt.layout = parse_layout(layout, op);
  c.opt.xpos.enabled = xpos;
  c.opt.xpos.gamma = xpos_gamma;
  c.opt.xpos.scale_base = xpos_scale_base;
  c.opt.xpos.center = xpos_center;
  c.key = key;
  const int64_t D = x.size(-1), half = inv_freq.size(0);
  // J: negate the second element of every rotated pair
  auto flip = [&] {
    if (!transpose || half == 0 || half * 2 > D) return;
    if (c.opt.layout == posenc::sinusoidal::layout::half) x.narrow(-1, half, half).neg_();
    else x.slice(-1, 1, 2 * half, 2).neg_();  // columns 1, 3, ..., 2 half - 1
  };
  flip();
  guarded([&] {
    switch (x.scalar_type()) {
      case at::kFloat: rotary_apply<float>(x.data_ptr<float>(), x, c, cu, off, pos); break;
      case at::kDouble: rotary_apply<double>(x.data_ptr<double>(), x, c, cu, off, pos); break;
      case at::kHalf: rotary_apply<Eigen::half>(reinterpret_cast<Eigen::half*>(x.data_ptr<at::Half>()), x, c, cu, off, pos); break;
      default:
        rotary_apply<Eigen::bfloat16>(reinterpret_cast<Eigen::bfloat16*>(x.data_ptr<at::BFloat16>()), x, c, cu, off, pos);
    }
    return 0;
  });
  flip();
}

Tensor rope(const Tensor& x, const Tensor& inv_freq, double attention_factor, const c10::optional<Tensor>& position_ids,
            const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets, const std::string& layout,
            bool key, bool transpose, bool xpos, double xpos_gamma, double xpos_scale_base, double xpos_center) {
  TORCH_CHECK_VALUE(x.defined() && x.device().is_cpu() && x.layout() == at::kStrided, "posenc: rope: x: expected a ",
                    "dense CPU tensor");
  Tensor y = x.clone(at::MemoryFormat::Contiguous);  // any strides in: the copy is contiguous
  rope_(y, inv_freq, attention_factor, position_ids, cu_seqlens, offsets, layout, key, transpose, xpos, xpos_gamma,
        xpos_scale_base, xpos_center);
  return y;
}

// ---- multi-axis RoPE (M-RoPE of vision-language models) ------------------------------------------
//
// Frequencies travel as float64 tensors without rounding: freqs [pairs] (each pair's frequency, a
// double) or [pairs, 2, 3] (the long double inv_freq and inv_freq_lo of rotary::frequencies, each
// split into three non-overlapping doubles whose sum is exact), axis int64 [pairs] (the position
// axis turning pair k) or [2, pairs] (split-half, HunYuan-VL's xdrope: the axes of each pair's
// first and second column), position_ids int64 [A, ...].

posenc::rotary::axis_frequencies axis_freqs_of(const Tensor& freqs, const Tensor& axis, int64_t axes,
                                               double attention_factor, const char* op) {
  posenc::rotary::axis_frequencies f;
  f.freqs = frequencies_of(freqs, attention_factor, op, "freqs");
  check_storage(axis, op, "axis");
  TORCH_CHECK_TYPE(axis.scalar_type() == at::kLong, "posenc: ", op, ": axis: expected dtype int64, got ",
                   dtype_name(axis.scalar_type()));
  // [2, pairs]: split-half (HunYuan-VL's xdrope): row 0 the axis of each pair's first column, row 1 of its second
  const bool split = axis.dim() == 2;
  TORCH_CHECK_VALUE((axis.dim() == 1 && axis.size(0) == freqs.size(0)) ||
                        (split && axis.size(0) == 2 && axis.size(1) == freqs.size(0)),
                    "posenc: ", op, ": axis: expected [pairs] = [", freqs.size(0),
                    "] (one position axis per pair) or [2, pairs] = [2, ", freqs.size(0),
                    "] (split-half: first and second column), got shape ", shape_str(axis.sizes()));
  TORCH_CHECK_VALUE(axes >= 1 && axes <= static_cast<int64_t>(posenc::rotary::max_axes), "posenc: ", op,
                    ": position_ids: expected 1 .. ", posenc::rotary::max_axes, " axes in dimension 0, got ", axes);
  f.axes = static_cast<std::size_t>(axes);
  const Tensor ac = axis.contiguous();
  const int64_t* a = ac.data_ptr<int64_t>();
  for (int64_t k = 0; k < freqs.size(0); ++k) {
    TORCH_CHECK_VALUE(a[k] >= 0 && a[k] < axes, "posenc: ", op, ": axis[", k, "]: expected an axis in 0 .. ",
                      axes - 1, " (position_ids has ", axes, " axes), got ", a[k]);
    f.axis.push_back(static_cast<std::uint8_t>(a[k]));
  }
  for (int64_t k = 0; split && k < freqs.size(0); ++k) {
    const int64_t v = a[freqs.size(0) + k];
    TORCH_CHECK_VALUE(v >= 0 && v < axes, "posenc: ", op, ": axis[1, ", k, "]: expected an axis in 0 .. ", axes - 1,
                      " (position_ids has ", axes, " axes), got ", v);
    f.axis_second.push_back(static_cast<std::uint8_t>(v));
  }
  return f;
}

Tensor axis_positions_of(const Tensor& position_ids, const char* op) {
  TORCH_CHECK_VALUE(position_ids.defined(), "posenc: ", op, ": position_ids: expected a tensor, got an undefined tensor");
  TORCH_CHECK_VALUE(position_ids.device().is_cpu(), "posenc: ", op, ": position_ids: expected a CPU tensor, got device '",
                    position_ids.device().str(), "' (this build of posenc's ops is CPU-only)");
  TORCH_CHECK_VALUE(position_ids.layout() == at::kStrided, "posenc: ", op,
                    ": position_ids: expected a dense (strided) tensor, got layout ", position_ids.layout());
  TORCH_CHECK_TYPE(position_ids.scalar_type() == at::kLong || position_ids.scalar_type() == at::kInt, "posenc: ", op,
                   ": position_ids: expected dtype int64 or int32, got ", dtype_name(position_ids.scalar_type()));
  TORCH_CHECK_VALUE(position_ids.dim() >= 1, "posenc: ", op,
                    ": position_ids: expected [axes, ...] (axes first), got a scalar");
  return position_ids.to(at::kLong).contiguous();
}

/// The exact frequencies of a vision-language config.json's M-RoPE and its get_rope_index constants:
/// (freqs, axis ([pairs], or [2, pairs] for xdrope), attention_factor, head_dim, interleaved pair
/// layout, mrope_section, style (0 sections, 1 interleaved, 2 ernie, 3 xdrope), spatial_merge_size, temporal_merge_size, split_video_frames,
/// tokens_per_second). No string outputs: AOT dispatch traces only tensors and numbers.
std::tuple<Tensor, Tensor, double, int64_t, bool, std::vector<int64_t>, int64_t, int64_t, int64_t, bool, double>
mrope_config(const std::string& config_json) {
  const auto m = guarded([&] { return posenc::rotary::load_mrope_config(config_json); });
  const auto pairs = static_cast<int64_t>(m.freqs.freqs.inv_freq.size());
  Tensor freqs = at::zeros({pairs, 2, kWideParts}, at::TensorOptions().dtype(at::kDouble));
  const bool split = !m.freqs.axis_second.empty();
  Tensor axis = split ? at::empty({2, pairs}, at::TensorOptions().dtype(at::kLong))
                      : at::empty({pairs}, at::TensorOptions().dtype(at::kLong));
  double* w = freqs.data_ptr<double>();
  for (int64_t k = 0; k < pairs; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    split_wide(m.freqs.freqs.inv_freq[ku], w + k * 2 * kWideParts);
    if (!m.freqs.freqs.inv_freq_lo.empty()) split_wide(m.freqs.freqs.inv_freq_lo[ku], w + k * 2 * kWideParts + kWideParts);
    axis.data_ptr<int64_t>()[k] = m.freqs.axis[ku];
    if (split) axis.data_ptr<int64_t>()[pairs + k] = m.freqs.axis_second[ku];
  }
  std::vector<int64_t> section(m.section.begin(), m.section.end());
  const int64_t style = m.style == posenc::rotary::mrope_style::sections      ? 0
                        : m.style == posenc::rotary::mrope_style::interleaved ? 1
                        : m.style == posenc::rotary::mrope_style::ernie       ? 2
                                                                              : 3;
  return std::make_tuple(freqs, axis, m.freqs.freqs.attention_factor, static_cast<int64_t>(m.head_dim),
                         m.layout == posenc::rotary::layout::interleaved, section, style,
                         static_cast<int64_t>(m.index.spatial_merge_size),
                         static_cast<int64_t>(m.index.temporal_merge_size), m.index.split_video_frames,
                         m.index.tokens_per_second);
}

/// (cos, sin), each [*position_ids.shape[1:], width]: attention_factor * cos/sin of
/// position_ids[axis[k]] * omega_k, width 2 * pairs ([c | c], duplicated) or pairs.
std::tuple<Tensor, Tensor> axes_cos_sin(const Tensor& position_ids, const Tensor& freqs, const Tensor& axis,
                                        double attention_factor, at::ScalarType dtype, bool duplicated) {
  constexpr const char* op = "axes_cos_sin";
  const Tensor p = axis_positions_of(position_ids, op);
  const auto f = axis_freqs_of(freqs, axis, p.size(0), attention_factor, op);
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kDouble || dtype == at::kHalf || dtype == at::kBFloat16, "posenc: ",
                   op, ": dtype: expected bfloat16, float16, float32 or float64, got ", dtype_name(dtype));
  auto shape = p.sizes().vec();
  shape.erase(shape.begin());
  const int64_t width = freqs.size(0) * (duplicated ? 2 : 1);
  shape.push_back(width);
  Tensor c = at::empty(shape, at::TensorOptions().dtype(dtype)), s = at::empty(shape, at::TensorOptions().dtype(dtype));
  const posenc::rotary::axis_positions pos(
      std::span<const int64_t>(p.data_ptr<int64_t>(), static_cast<std::size_t>(p.numel())), f.axes);
  const auto lay = duplicated ? posenc::rotary::table_layout::duplicated : posenc::rotary::table_layout::pairs;
  auto fill = [&](auto tag, void* cp, void* sp) {
    using T = decltype(tag);
    const auto t = posenc::rotary::table<T>(f, pos, lay);
    std::memcpy(cp, t.cos.data(), sizeof(T) * static_cast<std::size_t>(t.cos.size()));
    std::memcpy(sp, t.sin.data(), sizeof(T) * static_cast<std::size_t>(t.sin.size()));
  };
  guarded([&] {
    switch (dtype) {
      case at::kFloat: fill(float{}, c.data_ptr(), s.data_ptr()); break;
      case at::kDouble: fill(double{}, c.data_ptr(), s.data_ptr()); break;
      case at::kHalf: fill(Eigen::half{}, c.data_ptr(), s.data_ptr()); break;
      default: fill(Eigen::bfloat16{}, c.data_ptr(), s.data_ptr());
    }
    return 0;
  });
  return {c, s};
}

/// Rotate x in place by multi-axis RoPE: x [B, H, S, D] with position_ids [A, B, S] or [A, S], or
/// ragged x [T, H, D] with position_ids [A, T]. transpose: the inverse rotation (the positions
/// negated, exactly: the backward).
void axes_rope_(Tensor x, const Tensor& position_ids, const Tensor& freqs, const Tensor& axis, double attention_factor,
                const std::string& layout, bool transpose) {
  constexpr const char* op = "axes_rope_";
  check_rope_x(x, op);
  Tensor p = axis_positions_of(position_ids, op);
  TORCH_CHECK_VALUE(p.device() == x.device(), "posenc: ", op, ": position_ids: expected the device of x");
  const bool ragged = x.dim() == 3;
  if (ragged) {
    TORCH_CHECK_VALUE(p.dim() == 2 && p.size(1) == x.size(0), "posenc: ", op,
                      ": position_ids: expected [axes, tokens] = [A, ", x.size(0), "] for ragged x, got shape ",
                      shape_str(p.sizes()));
  } else {
    TORCH_CHECK_VALUE((p.dim() == 3 && p.size(1) == x.size(0) && p.size(2) == x.size(2)) ||
                          (p.dim() == 2 && p.size(1) == x.size(2)),
                      "posenc: ", op, ": position_ids: expected [axes, batch, seq] = [A, ", x.size(0), ", ", x.size(2),
                      "] or [axes, seq] = [A, ", x.size(2), "] for x [batch, heads, seq, head_dim], got shape ",
                      shape_str(p.sizes()));
  }
  const auto f = axis_freqs_of(freqs, axis, p.size(0), attention_factor, op);
  posenc::rotary::apply_options o;
  o.layout = parse_layout(layout, op);
  if (transpose && !f.axis_second.empty()) {
    // split-half: the transpose of [[cos A, -sin A], [sin B, cos B]] is no map of negated positions;
    // a = a' cos A + b' sin B, b = b' cos B - a' sin A from the double tables, in float64
    const auto t = guarded([&] {
      return posenc::rotary::table<double>(
          f, posenc::rotary::axis_positions(std::span<const int64_t>(p.data_ptr<int64_t>(), static_cast<std::size_t>(p.numel())), f.axes),
          posenc::rotary::table_layout::duplicated);
    });
    const int64_t m = freqs.size(0);
    auto shape = p.sizes().vec();
    shape.erase(shape.begin());
    shape.push_back(2 * m);
    Tensor C = at::from_blob(const_cast<double*>(t.cos.data()), shape, at::TensorOptions().dtype(at::kDouble)).clone();
    Tensor S = at::from_blob(const_cast<double*>(t.sin.data()), shape, at::TensorOptions().dtype(at::kDouble)).clone();
    C = C.unsqueeze(ragged ? 1 : -3);  // [T, 1, 2m] or [(B,) 1, S, 2m]
    S = S.unsqueeze(ragged ? 1 : -3);
    const bool il = o.layout == posenc::rotary::layout::interleaved;
    Tensor a = il ? x.narrow(-1, 0, 2 * m).slice(-1, 0, 2 * m, 2) : x.narrow(-1, 0, m);
    Tensor b = il ? x.narrow(-1, 0, 2 * m).slice(-1, 1, 2 * m, 2) : x.narrow(-1, m, m);
    const Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
    const Tensor ca = C.narrow(-1, 0, m), cb = C.narrow(-1, m, m), sa = S.narrow(-1, 0, m), sb = S.narrow(-1, m, m);
    const Tensor na = ad * ca + bd * sb, nb = bd * cb - ad * sa;
    a.copy_(na);
    b.copy_(nb);
    return;
  }
  if (transpose) p = p.neg();  // R(-theta) = R(theta)^T; |p| < 2^53, so exact
  const posenc::rotary::axis_positions pos(
      std::span<const int64_t>(p.data_ptr<int64_t>(), static_cast<std::size_t>(p.numel())), f.axes);
  const auto sz = [&](int i) { return static_cast<std::size_t>(x.size(i)); };
  auto run = [&](auto* data) {
    using T = std::remove_pointer_t<decltype(data)>;
    namespace rt = posenc::rotary;
    if (ragged) {
      rt::ragged_view<T> v{data, {sz(0), sz(1), sz(2)}, {x.stride(0), x.stride(1), x.stride(2)}};
      rt::apply_ragged_inplace<T>(v, rt::ragged_view<T>{}, pos, f, o);
    } else {
      rt::dense_view<T> v{data, {sz(0), sz(1), sz(2), sz(3)}, {x.stride(0), x.stride(1), x.stride(2), x.stride(3)}};
      rt::apply_inplace<T>(v, rt::dense_view<T>{}, f, pos, o);
    }
  };
  guarded([&] {
    switch (x.scalar_type()) {
      case at::kFloat: run(x.data_ptr<float>()); break;
      case at::kDouble: run(x.data_ptr<double>()); break;
      case at::kHalf: run(reinterpret_cast<Eigen::half*>(x.data_ptr<at::Half>())); break;
      default: run(reinterpret_cast<Eigen::bfloat16*>(x.data_ptr<at::BFloat16>()));
    }
    return 0;
  });
}

Tensor axes_rope(const Tensor& x, const Tensor& position_ids, const Tensor& freqs, const Tensor& axis,
                 double attention_factor, const std::string& layout, bool transpose) {
  TORCH_CHECK_VALUE(x.defined() && x.device().is_cpu() && x.layout() == at::kStrided, "posenc: axes_rope: x: expected a ",
                    "dense CPU tensor");
  Tensor y = x.clone(at::MemoryFormat::Contiguous);
  axes_rope_(y, position_ids, freqs, axis, attention_factor, layout, transpose);
  return y;
}

std::vector<posenc::rotary::vision_grid> grids_of(const c10::optional<Tensor>& t, const char* op, const char* name) {
  std::vector<posenc::rotary::vision_grid> out;
  if (!t) return out;
  TORCH_CHECK_VALUE(t->dim() == 2 && t->size(1) == 3, "posenc: ", op, ": ", name,
                    ": expected [grids, 3] (t, h, w), got shape ", shape_str(t->sizes()));
  const auto v = index_vector(t, op, name);
  for (std::size_t i = 0; i + 2 < v.size(); i += 3) out.push_back({v[i], v[i + 1], v[i + 2]});
  return out;
}

/// transformers' get_rope_index of the M-RoPE models: (position_ids int64 [3, B, S], rope_deltas [B, 1]).
std::tuple<Tensor, Tensor> get_rope_index(const Tensor& mm_token_type_ids, const c10::optional<Tensor>& image_grid_thw,
                                          const c10::optional<Tensor>& video_grid_thw,
                                          const c10::optional<Tensor>& attention_mask,
                                          const c10::optional<Tensor>& second_per_grid_ts, int64_t spatial_merge_size,
                                          int64_t temporal_merge_size, bool split_video_frames,
                                          double tokens_per_second) {
  constexpr const char* op = "get_rope_index";
  check_dim(mm_token_type_ids, 2, op, "mm_token_type_ids", "[batch, seq]");
  const auto types = index_vector(mm_token_type_ids, op, "mm_token_type_ids");
  const auto images = grids_of(image_grid_thw, op, "image_grid_thw");
  const auto videos = grids_of(video_grid_thw, op, "video_grid_thw");
  std::vector<int64_t> mask;
  if (attention_mask) {
    TORCH_CHECK_VALUE(attention_mask->sizes() == mm_token_type_ids.sizes(), "posenc: ", op,
                      ": attention_mask: expected the shape of mm_token_type_ids ", shape_str(mm_token_type_ids.sizes()),
                      ", got ", shape_str(attention_mask->sizes()));
    check_storage(*attention_mask, op, "attention_mask");
    Tensor mk = attention_mask->to(at::kLong).contiguous();
    mask.assign(mk.data_ptr<int64_t>(), mk.data_ptr<int64_t>() + mk.numel());
  }
  std::vector<float> seconds;
  if (second_per_grid_ts) {
    check_storage(*second_per_grid_ts, op, "second_per_grid_ts");
    Tensor s = second_per_grid_ts->to(at::kFloat).contiguous().view(-1);
    seconds.assign(s.data_ptr<float>(), s.data_ptr<float>() + s.numel());
  }
  TORCH_CHECK_VALUE(spatial_merge_size >= 1 && temporal_merge_size >= 1, "posenc: ", op,
                    ": spatial_merge_size/temporal_merge_size: expected >= 1, got ", spatial_merge_size, " and ",
                    temporal_merge_size);
  posenc::rotary::rope_index_options o;
  o.spatial_merge_size = static_cast<std::size_t>(spatial_merge_size);
  o.temporal_merge_size = static_cast<std::size_t>(temporal_merge_size);
  o.split_video_frames = split_video_frames;
  o.tokens_per_second = tokens_per_second;
  const int64_t B = mm_token_type_ids.size(0), S = mm_token_type_ids.size(1);
  const auto r = guarded([&] {
    return posenc::rotary::get_rope_index(types, static_cast<std::size_t>(B), static_cast<std::size_t>(S), images, videos,
                                          mask, seconds, o);
  });
  Tensor pos = at::empty({3, B, S}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(pos.data_ptr<int64_t>(), r.position_ids.data(), sizeof(int64_t) * r.position_ids.size());
  Tensor d = at::empty({B, 1}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(d.data_ptr<int64_t>(), r.deltas.data(), sizeof(int64_t) * r.deltas.size());
  return {pos, d};
}

/// HunYuan-VL's get_rope_index (rotary::hunyuan_rope_index): (position_ids int64 [axes, B, S],
/// rope_deltas [B, 1]); image runs are mm_token_type_ids == 1, axes = len(mrope_section).
std::tuple<Tensor, Tensor> hunyuan_rope_index(const Tensor& mm_token_type_ids, const c10::optional<Tensor>& image_grid_thw,
                                              const c10::optional<Tensor>& attention_mask, int64_t axes,
                                              int64_t spatial_merge_size) {
  constexpr const char* op = "hunyuan_rope_index";
  check_dim(mm_token_type_ids, 2, op, "mm_token_type_ids", "[batch, seq]");
  const auto types = index_vector(mm_token_type_ids, op, "mm_token_type_ids");
  const auto images = grids_of(image_grid_thw, op, "image_grid_thw");
  std::vector<int64_t> mask;
  if (attention_mask) {
    TORCH_CHECK_VALUE(attention_mask->sizes() == mm_token_type_ids.sizes(), "posenc: ", op,
                      ": attention_mask: expected the shape of mm_token_type_ids ", shape_str(mm_token_type_ids.sizes()),
                      ", got ", shape_str(attention_mask->sizes()));
    check_storage(*attention_mask, op, "attention_mask");
    Tensor mk = attention_mask->to(at::kLong).contiguous();
    mask.assign(mk.data_ptr<int64_t>(), mk.data_ptr<int64_t>() + mk.numel());
  }
  TORCH_CHECK_VALUE(axes >= 3 && axes <= static_cast<int64_t>(posenc::rotary::max_axes), "posenc: ", op,
                    ": axes: expected 3 .. ", posenc::rotary::max_axes, " (len(mrope_section)), got ", axes);
  TORCH_CHECK_VALUE(spatial_merge_size >= 1, "posenc: ", op, ": spatial_merge_size: expected >= 1, got ",
                    spatial_merge_size);
  const int64_t B = mm_token_type_ids.size(0), S = mm_token_type_ids.size(1);
  const auto r = guarded([&] {
    return posenc::rotary::hunyuan_rope_index(types, static_cast<std::size_t>(B), static_cast<std::size_t>(S), images,
                                              mask, static_cast<std::size_t>(axes),
                                              static_cast<std::size_t>(spatial_merge_size));
  });
  Tensor pos = at::empty({axes, B, S}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(pos.data_ptr<int64_t>(), r.position_ids.data(), sizeof(int64_t) * r.position_ids.size());
  Tensor d = at::empty({B, 1}, at::TensorOptions().dtype(at::kLong));
  std::memcpy(d.data_ptr<int64_t>(), r.deltas.data(), sizeof(int64_t) * r.deltas.size());
  return {pos, d};
}

// ---- ALiBi ------------------------------------------------------------------------------------------

posenc::alibi::bias_options alibi_options(const std::string& form, bool causal_mask, const char* op) {
  posenc::alibi::bias_options o;
  if (form == "relative") o.form = posenc::alibi::bias_form::relative;
  else if (form == "key_position") o.form = posenc::alibi::bias_form::key_position;
  else if (form == "symmetric") o.form = posenc::alibi::bias_form::symmetric;
  else TORCH_CHECK_VALUE(false, "posenc: ", op, ": form: expected 'relative', 'key_position' or 'symmetric', got '", form, "'");
  o.causal_mask = causal_mask;
  return o;
}

std::vector<double> slopes_of(const Tensor& slopes, const char* op) {
  check_storage(slopes, op, "slopes");
  TORCH_CHECK_TYPE(slopes.scalar_type() == at::kDouble || slopes.scalar_type() == at::kFloat, "posenc: ", op,
                   ": slopes: expected dtype float64 or float32, got ", dtype_name(slopes.scalar_type()));
  check_dim(slopes, 1, op, "slopes", "[heads]");
  Tensor q = slopes.to(at::kDouble).contiguous();
  return std::vector<double>(q.data_ptr<double>(), q.data_ptr<double>() + q.numel());
}

/// The authors' slopes for `heads` heads, float64 [heads].
Tensor alibi_slopes(int64_t heads) {
  TORCH_CHECK_VALUE(heads >= 1, "posenc: alibi_slopes: heads: expected >= 1, got ", heads);
  const auto m = guarded([&] { return posenc::alibi::slopes(static_cast<std::size_t>(heads)); });
  Tensor out = at::empty({heads}, at::TensorOptions().dtype(at::kDouble));
  std::memcpy(out.data_ptr<double>(), m.data(), sizeof(double) * m.size());
  return out;
}

template <class F>
void dispatch_storage(at::ScalarType t, F&& f) {
  switch (t) {
    case at::kFloat: f(float{}); break;
    case at::kDouble: f(double{}); break;
    case at::kHalf: f(Eigen::half{}); break;
    default: f(Eigen::bfloat16{});
  }
}

template <class T>
T* storage_ptr(Tensor& t) {
  return reinterpret_cast<T*>(t.data_ptr());
}

/// Add the ALiBi bias in place to scores [batch, heads, q_len, k_len]: query row r of sequence b
/// at position q_offsets[b] + r (None: k_len - q_len), key column j at j.
void alibi_add_(Tensor scores, const Tensor& slopes, const c10::optional<Tensor>& q_offsets, const std::string& form,
                bool causal_mask) {
  constexpr const char* op = "alibi_add_";
  check_rope_x(scores, op, "scores");
  TORCH_CHECK_VALUE(scores.dim() == 4, "posenc: ", op, ": scores: expected [batch, heads, q_len, k_len], got shape ",
                    shape_str(scores.sizes()));
  const auto m = slopes_of(slopes, op);
  const auto off = index_vector(q_offsets, op, "q_offsets");
  const auto o = alibi_options(form, causal_mask, op);
  guarded([&] {
    dispatch_storage(scores.scalar_type(), [&](auto tag) {
      using T = decltype(tag);
      const auto sz = [&](int i) { return static_cast<std::size_t>(scores.size(i)); };
      posenc::alibi::scores_view<T> v{storage_ptr<T>(scores), {sz(0), sz(1), sz(2), sz(3)},
                                      {scores.stride(0), scores.stride(1), scores.stride(2), scores.stride(3)}};
      posenc::alibi::add_bias<T>(v, m, off, o);
    });
    return 0;
  });
}

Tensor alibi_add(const Tensor& scores, const Tensor& slopes, const c10::optional<Tensor>& q_offsets, const std::string& form,
                 bool causal_mask) {
  TORCH_CHECK_VALUE(scores.defined() && scores.device().is_cpu() && scores.layout() == at::kStrided,
                    "posenc: alibi_add: scores: expected a dense CPU tensor");
  Tensor y = scores.clone(at::MemoryFormat::Contiguous);
  alibi_add_(y, slopes, q_offsets, form, causal_mask);
  return y;
}

/// The bias [heads, q_len, k_len]: row i at query position q_offset + i.
Tensor alibi_bias(const Tensor& slopes, int64_t q_len, int64_t k_len, int64_t q_offset, const std::string& form,
                  bool causal_mask, at::ScalarType dtype) {
  constexpr const char* op = "alibi_bias";
  const auto m = slopes_of(slopes, op);
  TORCH_CHECK_VALUE(q_len >= 0 && k_len >= 0, "posenc: ", op, ": q_len, k_len: expected >= 0, got ", q_len, " and ", k_len);
  TORCH_CHECK_TYPE(dtype == at::kFloat || dtype == at::kDouble || is_half_type(dtype), "posenc: ", op,
                   ": dtype: expected bfloat16, float16, float32 or float64, got ", dtype_name(dtype));
  const auto o = alibi_options(form, causal_mask, op);
  Tensor out = at::empty({static_cast<int64_t>(m.size()), q_len, k_len}, at::TensorOptions().dtype(dtype));
  guarded([&] {
    dispatch_storage(dtype, [&](auto tag) {
      using T = decltype(tag);
      const auto b = posenc::alibi::bias_table<T>(m, static_cast<std::size_t>(q_len), static_cast<std::size_t>(k_len), q_offset, o);
      std::memcpy(out.data_ptr(), b.data(), sizeof(T) * b.size());
    });
    return 0;
  });
  return out;
}

std::string build_torch_version() { return POSENC_TORCH_BUILD_VERSION; }

// ---- autograd (the Autograd dispatch key: every caller -- Python, TorchScript, C++ -- gets
// gradients; each backward is itself a dispatcher op, so AOTAutograd traces it) ----------------

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

template <class Sig>
c10::TypedOperatorHandle<Sig> op_handle(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").template typed<Sig>();
}

/// Non-differentiable optional tensors, passed to an autograd::Function as one non-tensor argument
/// (an undefined tensor cannot be an input of one, and older torch does not take optionals).
struct optional_tensors {
  c10::optional<Tensor> a, b, c;
};
/// A differentiable optional tensor: absent -> a [0] placeholder (no real argument is empty).
Tensor or_placeholder(const c10::optional<Tensor>& t, const Tensor& like) { return t ? *t : at::empty({0}, like.options()); }
c10::optional<Tensor> from_placeholder(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0 ? c10::nullopt : c10::optional<Tensor>(t);
}

/// A real, eager CPU tensor (not fake, functional, batched or under a Python dispatch mode).
bool plain_eager(std::initializer_list<const Tensor*> ts) {
  if (c10::impl::tls_is_dispatch_key_included(c10::DispatchKey::Python)) return false;
  for (const Tensor* t : ts) {
    const auto ks = t->key_set();
    if (!t->device().is_cpu() || ks.has(c10::DispatchKey::Python) || ks.has(c10::DispatchKey::Functionalize) ||
        ks.has(c10::DispatchKey::FuncTorchBatched) || ks.has(c10::DispatchKey::PythonTLSSnapshot))
      return false;
  }
  return true;
}

struct FloaterFn : torch::autograd::Function<FloaterFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& w1, const Tensor& b1, const Tensor& w2,
                               const Tensor& b2, const Tensor& p0, int64_t L, double delta, int64_t substeps,
                               const std::string& activation, bool time1, bool time2, const std::string& scheme,
                               int64_t threads, const std::string& gradient, int64_t adjoint_substeps) {
    ctx->saved_data["delta"] = delta;
    ctx->saved_data["substeps"] = substeps;
    ctx->saved_data["activation"] = activation;
    ctx->saved_data["time1"] = time1;
    ctx->saved_data["time2"] = time2;
    ctx->saved_data["scheme"] = scheme;
    ctx->saved_data["threads"] = threads;
    ctx->saved_data["gradient"] = gradient;
    ctx->saved_data["adjoint_substeps"] = adjoint_substeps;
    Tensor out;
    if (plain_eager({&w1, &b1, &w2, &b2, &p0})) {
      // eager: keep the encoder (its table and forward stages) for backward instead of integrating again
      constexpr const char* op = "floater_table";
      check_positions_count(L, op);
      parse_gradient(gradient, op);
      TORCH_CHECK_VALUE(adjoint_substeps >= 0, "posenc: ", op,
                        ": adjoint_substeps: expected >= 0 (0: the forward substeps), got ", adjoint_substeps);
      auto st = floater_build(w1, b1, w2, b2, p0, delta, substeps, activation, time1, time2, scheme, threads, op);
      out = guarded([&] { return st->impl->table(L); });
      ctx->saved_data["state"] = st;
    } else {
      at::AutoDispatchBelowADInplaceOrView guard;
      out = op_handle<decltype(floater_table)>("posenc::floater_table")
                .call(w1, b1, w2, b2, p0, L, delta, substeps, activation, time1, time2, scheme, threads, gradient,
                      adjoint_substeps);
    }
    ctx->save_for_backward({w1, b1, w2, b2, p0});
    return {out};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = ctx->get_saved_variables();
    auto& d = ctx->saved_data;
    const Tensor g = grads[0].contiguous();
    std::vector<Tensor> r;
    if (d.count("state")) {
      auto st = d["state"].toCustomClass<FloaterState>();
      r = guarded([&] {
        return st->impl->backward(g, d["gradient"].toStringRef() == "adjoint", d["adjoint_substeps"].toInt());
      });
    } else {
      r = op_handle<decltype(floater_table_backward)>("posenc::floater_table_backward")
              .call(g, s[0], s[1], s[2], s[3], s[4], d["delta"].toDouble(), d["substeps"].toInt(),
                    d["activation"].toStringRef(), d["time1"].toBool(), d["time2"].toBool(), d["scheme"].toStringRef(),
                    d["threads"].toInt(), d["gradient"].toStringRef(), d["adjoint_substeps"].toInt());
    }
    variable_list out{r[0], r[1], r[2], r[3], r[4]};
    out.resize(15);
    return out;
  }
};

Tensor floater_table_autograd(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2, const Tensor& p0,
                              int64_t L, double delta, int64_t substeps, const std::string& activation, bool time1,
                              bool time2, const std::string& scheme, int64_t threads, const std::string& gradient,
                              int64_t adjoint_substeps) {
  return FloaterFn::apply(w1, b1, w2, b2, p0, L, delta, substeps, activation, time1, time2, scheme, threads, gradient,
                          adjoint_substeps)[0];
}

struct RopeFn : torch::autograd::Function<RopeFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& inv_freq, double af,
                               const optional_tensors& o, const std::string& layout, bool key, bool transpose, bool xpos, double gamma, double sb,
                               double center) {
    ctx->saved_data["inv_freq"] = inv_freq;
    ctx->saved_data["af"] = af;
    ctx->saved_data["position_ids"] = o.a;
    ctx->saved_data["cu_seqlens"] = o.b;
    ctx->saved_data["offsets"] = o.c;
    ctx->saved_data["layout"] = layout;
    ctx->saved_data["key"] = key;
    ctx->saved_data["transpose"] = transpose;
    ctx->saved_data["xpos"] = xpos;
    ctx->saved_data["gamma"] = gamma;
    ctx->saved_data["sb"] = sb;
    ctx->saved_data["center"] = center;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(rope)>("posenc::rope").call(x, inv_freq, af, o.a, o.b, o.c, layout, key, transpose, xpos, gamma, sb,
                                                             center)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& d = ctx->saved_data;
    // y = f S R x with S diagonal (xPos) and R orthogonal: dx = f S R^T dy, the transposed op
    Tensor gx = op_handle<decltype(rope)>("posenc::rope")
                    .call(grads[0], d["inv_freq"].toTensor(), d["af"].toDouble(), d["position_ids"].toOptional<Tensor>(),
                          d["cu_seqlens"].toOptional<Tensor>(), d["offsets"].toOptional<Tensor>(),
                          d["layout"].toStringRef(), d["key"].toBool(), !d["transpose"].toBool(), d["xpos"].toBool(),
                          d["gamma"].toDouble(), d["sb"].toDouble(), d["center"].toDouble());
    variable_list out(11);
    out[0] = gx;
    return out;
  }
};

Tensor rope_autograd(const Tensor& x, const Tensor& inv_freq, double af, const c10::optional<Tensor>& position_ids,
                     const c10::optional<Tensor>& cu_seqlens, const c10::optional<Tensor>& offsets,
                     const std::string& layout, bool key, bool transpose, bool xpos, double gamma, double sb,
                     double center) {
  return RopeFn::apply(x, inv_freq, af, optional_tensors{position_ids, cu_seqlens, offsets}, layout, key, transpose,
                       xpos, gamma, sb, center)[0];
}

struct RopeRotateFn : torch::autograd::Function<RopeRotateFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const optional_tensors& positions, int64_t head_dim,
                               int64_t rotary_dim, const std::string& layout, double base, double first, double step) {
    ctx->saved_data["positions"] = positions.a;
    ctx->saved_data["head_dim"] = head_dim;
    ctx->saved_data["rotary_dim"] = rotary_dim;
    ctx->saved_data["layout"] = layout;
    ctx->saved_data["base"] = base;
    ctx->saved_data["first"] = first;
    ctx->saved_data["step"] = step;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(rope_rotate)>("posenc::rope_rotate")
                .call(x, positions.a, head_dim, rotary_dim, layout, base, first, step)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& d = ctx->saved_data;
    // R is orthogonal: dx = R(-position) dy, the same op at negated positions
    auto pos = d["positions"].toOptional<Tensor>();
    if (pos) pos = pos->neg();
    Tensor gx = op_handle<decltype(rope_rotate)>("posenc::rope_rotate")
                    .call(grads[0], pos, d["head_dim"].toInt(), d["rotary_dim"].toInt(), d["layout"].toStringRef(),
                          d["base"].toDouble(), -d["first"].toDouble(), -d["step"].toDouble());
    variable_list out(8);
    out[0] = gx;
    return out;
  }
};

Tensor rope_rotate_autograd(const Tensor& x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
                            const std::string& layout, double base, double first, double step) {
  return RopeRotateFn::apply(x, optional_tensors{positions, {}, {}}, head_dim, rotary_dim, layout, base, first, step)[0];
}

struct AlibiAddFn : torch::autograd::Function<AlibiAddFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& scores, const Tensor& slopes,
                               const optional_tensors& q_offsets, const std::string& form, bool causal_mask) {
    ctx->saved_data["q_offsets"] = q_offsets.a;
    ctx->saved_data["causal_mask"] = causal_mask;
    if (causal_mask && !plain_eager({&scores, &slopes})) ctx->saved_data["slopes"] = slopes;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(alibi_add)>("posenc::alibi_add").call(scores, slopes, q_offsets.a, form, causal_mask)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& d = ctx->saved_data;
    Tensor g = grads[0];
    if (d["causal_mask"].toBool() && d.count("slopes")) {
      // a tensor subclass (DTensor, ...): the mask from the op itself (-inf where masked, 0 elsewhere
      // with zero slopes), so that every tensor is of g's kind and no plain tensor meets it
      Tensor masked = op_handle<decltype(alibi_add)>("posenc::alibi_add")
                          .call(at::zeros_like(g), at::zeros_like(d["slopes"].toTensor()),
                                d["q_offsets"].toOptional<Tensor>(), "relative", true);
      g = g.masked_fill(masked.isinf(), 0);
    } else if (d["causal_mask"].toBool()) {
      // the masked entries (key after query) are -inf whatever the scores: zero gradient there
      const int64_t Lq = g.size(2), Lk = g.size(3);
      auto off = d["q_offsets"].toOptional<Tensor>();
      Tensor qpos = at::arange(Lq, g.options().dtype(at::kLong)).view({1, 1, Lq, 1});
      qpos = off ? qpos + off->to(at::kLong).view({-1, 1, 1, 1}) : qpos + (Lk - Lq);
      Tensor kpos = at::arange(Lk, g.options().dtype(at::kLong)).view({1, 1, 1, Lk});
      g = g.masked_fill(kpos > qpos, 0);
    }
    return {g, Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor alibi_add_autograd(const Tensor& scores, const Tensor& slopes, const c10::optional<Tensor>& q_offsets,
                          const std::string& form, bool causal_mask) {
  return AlibiAddFn::apply(scores, slopes, optional_tensors{q_offsets, {}, {}}, form, causal_mask)[0];
}

struct TupeFn : torch::autograd::Function<TupeFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b,
                               const Tensor& q_w, const Tensor& q_b, const Tensor& k_w, const Tensor& k_b,
                               const Tensor& rel, int64_t n, int64_t heads, const std::string& cls,
                               const std::string& scale, int64_t num_buckets, int64_t max_distance, double ln_eps) {
    ctx->save_for_backward({pos, ln_w, ln_b, q_w, q_b, k_w, k_b, rel});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["cls"] = cls;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["nb"] = num_buckets;
    ctx->saved_data["md"] = max_distance;
    ctx->saved_data["eps"] = ln_eps;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(tupe_bias)>("posenc::tupe_bias")
                .call(pos, ln_w, ln_b, q_w, from_placeholder(q_b), k_w, from_placeholder(k_b), from_placeholder(rel), n, heads, cls, scale, num_buckets,
                      max_distance, ln_eps)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = ctx->get_saved_variables();
    auto& d = ctx->saved_data;
    auto r = op_handle<decltype(tupe_bias_backward)>("posenc::tupe_bias_backward")
                 .call(grads[0].contiguous(), s[0], s[1], s[2], s[3], from_placeholder(s[4]), s[5], from_placeholder(s[6]),
                       from_placeholder(s[7]),
                       d["heads"].toInt(), d["cls"].toStringRef(), d["scale"].toStringRef(), d["nb"].toInt(),
                       d["md"].toInt(), d["eps"].toDouble());
    variable_list out(15);
    for (int i = 0; i < 8; ++i) out[i] = from_placeholder(s[i]) ? r[i] : Tensor();
    return out;
  }
};

Tensor tupe_bias_autograd(const Tensor& pos, const Tensor& ln_w, const Tensor& ln_b, const Tensor& q_w,
                          const c10::optional<Tensor>& q_b, const Tensor& k_w, const c10::optional<Tensor>& k_b,
                          const c10::optional<Tensor>& rel, int64_t n, int64_t heads, const std::string& cls,
                          const std::string& scale, int64_t num_buckets, int64_t max_distance, double ln_eps) {
  return TupeFn::apply(pos, ln_w, ln_b, q_w, or_placeholder(q_b, pos), k_w, or_placeholder(k_b, pos), or_placeholder(rel, pos), n, heads, cls, scale, num_buckets,
                       max_distance, ln_eps)[0];
}

struct T5Fn : torch::autograd::Function<T5Fn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& table, int64_t n, int64_t nb, int64_t md, bool bidir) {
    ctx->saved_data["rows"] = table.size(0);
    ctx->saved_data["nb"] = nb;
    ctx->saved_data["md"] = md;
    ctx->saved_data["bidir"] = bidir;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(t5_bias)>("posenc::t5_bias").call(table, n, nb, md, bidir)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& d = ctx->saved_data;
    return {op_handle<decltype(t5_bias_backward)>("posenc::t5_bias_backward")
                .call(grads[0].contiguous(), d["rows"].toInt(), d["nb"].toInt(), d["md"].toInt(), d["bidir"].toBool()),
            Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor t5_bias_autograd(const Tensor& table, int64_t n, int64_t nb, int64_t md, bool bidir) {
  return T5Fn::apply(table, n, nb, md, bidir)[0];
}

struct T5BackFn : torch::autograd::Function<T5BackFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& grad, int64_t rows, int64_t nb, int64_t md, bool bidir) {
    ctx->saved_data["n"] = grad.size(1);
    ctx->saved_data["nb"] = nb;
    ctx->saved_data["md"] = md;
    ctx->saved_data["bidir"] = bidir;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(t5_bias_backward)>("posenc::t5_bias_backward").call(grad, rows, nb, md, bidir)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& d = ctx->saved_data;
    // the adjoint of the bucket sum is the gather
    return {op_handle<decltype(t5_bias)>("posenc::t5_bias")
                .call(grads[0].contiguous(), d["n"].toInt(), d["nb"].toInt(), d["md"].toInt(), d["bidir"].toBool()),
            Tensor(), Tensor(), Tensor(), Tensor()};
  }
};

Tensor t5_bias_backward_autograd(const Tensor& grad, int64_t rows, int64_t nb, int64_t md, bool bidir) {
  return T5BackFn::apply(grad, rows, nb, md, bidir)[0];
}

struct ToeplitzFn : torch::autograd::Function<ToeplitzFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& b, const Tensor& x, int64_t m) {
    ctx->save_for_backward({b, x});
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(toeplitz_matmul)>("posenc::toeplitz_matmul").call(b, x, m)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = ctx->get_saved_variables();
    const Tensor g = grads[0].contiguous();
    // Y = B X: dX = B^T dY (a Toeplitz product with b reversed), db = the correlation of dY and X
    Tensor db = op_handle<decltype(toeplitz_correlate)>("posenc::toeplitz_correlate").call(g, s[1]);
    Tensor dx = op_handle<decltype(toeplitz_matmul)>("posenc::toeplitz_matmul").call(s[0].flip(0).contiguous(), g, s[1].size(0));
    return {db, dx, Tensor()};
  }
};

Tensor toeplitz_matmul_autograd(const Tensor& b, const Tensor& x, int64_t m) { return ToeplitzFn::apply(b, x, m)[0]; }

struct CorrelateFn : torch::autograd::Function<CorrelateFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& g, const Tensor& x) {
    ctx->save_for_backward({g, x});
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(toeplitz_correlate)>("posenc::toeplitz_correlate").call(g, x)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto s = ctx->get_saved_variables();
    const Tensor gc = grads[0].contiguous();
    auto mm = op_handle<decltype(toeplitz_matmul)>("posenc::toeplitz_matmul");
    return {mm.call(gc, s[1], s[0].size(0)), mm.call(gc.flip(0).contiguous(), s[0], s[1].size(0))};
  }
};

Tensor toeplitz_correlate_autograd(const Tensor& g, const Tensor& x) { return CorrelateFn::apply(g, x)[0]; }

struct AxesRopeFn : torch::autograd::Function<AxesRopeFn> {
  static variable_list forward(AutogradContext* ctx, const Tensor& x, const Tensor& position_ids, const Tensor& freqs,
                               const Tensor& axis, double af, const std::string& layout, bool transpose) {
    ctx->saved_data["position_ids"] = position_ids;
    ctx->saved_data["freqs"] = freqs;
    ctx->saved_data["axis"] = axis;
    ctx->saved_data["af"] = af;
    ctx->saved_data["layout"] = layout;
    ctx->saved_data["transpose"] = transpose;
    at::AutoDispatchBelowADInplaceOrView guard;
    return {op_handle<decltype(axes_rope)>("posenc::axes_rope").call(x, position_ids, freqs, axis, af, layout, transpose)};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& d = ctx->saved_data;
    // y = f R x with R orthogonal: dx = f R^T dy, the rotation by the negated positions
    Tensor gx = op_handle<decltype(axes_rope)>("posenc::axes_rope")
                    .call(grads[0], d["position_ids"].toTensor(), d["freqs"].toTensor(), d["axis"].toTensor(),
                          d["af"].toDouble(), d["layout"].toStringRef(), !d["transpose"].toBool());
    variable_list out(7);
    out[0] = gx;
    return out;
  }
};

Tensor axes_rope_autograd(const Tensor& x, const Tensor& position_ids, const Tensor& freqs, const Tensor& axis,
                          double af, const std::string& layout, bool transpose) {
  return AxesRopeFn::apply(x, position_ids, freqs, axis, af, layout, transpose)[0];
}

}  // namespace

// Schemas, once. Kernels: CPU (tensor inputs), CompositeExplicitAutograd (the tables, which have
// no tensor input to dispatch on), Autograd (gradients for every caller). Fake (meta) kernels for
// torch.compile are registered from Python (posenc/_fake.py, torch.library.register_fake).
TORCH_LIBRARY(posenc, m) {
  m.class_<FloaterState>("FloaterState").def("cached", &FloaterState::cached);
  m.def("build_torch_version() -> str");
  m.def("floater_table(Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor p0, int L, float delta=0.01, int substeps=5, "
        "str activation='relu', bool time1=True, bool time2=True, str scheme='rk4', int threads=0, "
        "str gradient='backprop', int adjoint_substeps=0) -> Tensor");
  m.def("floater_table_backward(Tensor grad, Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor p0, float delta=0.01, "
        "int substeps=5, str activation='relu', bool time1=True, bool time2=True, str scheme='rk4', int threads=0, "
        "str gradient='backprop', int adjoint_substeps=0) -> Tensor[]");
  // the eval-mode cache of FloaterEncoder (eager only: the state is a TorchScript class)
  m.def("floater_forward(Tensor w1, Tensor b1, Tensor w2, Tensor b2, Tensor p0, int L, float delta=0.01, int substeps=5, "
        "str activation='relu', bool time1=True, bool time2=True, str scheme='rk4', int threads=0) "
        "-> (Tensor, __torch__.torch.classes.posenc.FloaterState)",
        &floater_forward);
  m.def("floater_extend(__torch__.torch.classes.posenc.FloaterState state, int L) -> Tensor", &floater_extend);
  m.def("floater_backward(__torch__.torch.classes.posenc.FloaterState state, Tensor grad, bool adjoint=False, "
        "int adjoint_substeps=0) -> Tensor[]",
        &floater_backward);
  m.def("floater_state_cached(__torch__.torch.classes.posenc.FloaterState state) -> int", &floater_state_cached);
  m.def("sinusoidal_table(int L, int d, str layout='interleaved', str spacing='two_k_over_d', float base=10000.0, "
        "float first_position=0.0, float position_step=1.0, bool zero_pad_odd=False, Tensor? positions=None, "
        "ScalarType dtype=7) -> Tensor");
  m.def("rope_tables(int L, int rotary_dim, float base=10000.0, float first_position=0.0, float position_step=1.0, "
        "Tensor? positions=None, ScalarType dtype=7) -> (Tensor, Tensor)");
  m.def("rope_rotate_(Tensor(a!) x, Tensor? positions=None, int head_dim=0, int rotary_dim=0, str layout='interleaved', "
        "float base=10000.0, float first_position=0.0, float position_step=1.0) -> ()");
  m.def("rope_rotate(Tensor x, Tensor? positions=None, int head_dim=0, int rotary_dim=0, str layout='interleaved', "
        "float base=10000.0, float first_position=0.0, float position_step=1.0) -> Tensor");
  m.def("rope_frequencies(str config_json, int seq_len=0, str? layer_type=None, str semantics='transformers_5', "
        "str longrope_rule='init_function', bool exact=False) -> (Tensor, float, int, int, bool)");
  m.def("rope_layer_types(str config_json, str semantics='transformers_5') -> str[]");
  m.def("rope_frequencies_at(Tensor positions, str config_json, int pairs, str? layer_type=None, "
        "str semantics='transformers_5', str longrope_rule='init_function') -> Tensor");
  m.def("rope_cos_sin(Tensor position_ids, Tensor inv_freq, float attention_factor=1.0, ScalarType dtype=6) "
        "-> (Tensor, Tensor)");
  m.def("rope(Tensor x, Tensor inv_freq, float attention_factor=1.0, Tensor? position_ids=None, Tensor? cu_seqlens=None, "
        "Tensor? offsets=None, str layout='half', bool key=False, bool transpose=False, bool xpos=False, "
        "float xpos_gamma=0.4, float xpos_scale_base=512.0, float xpos_center=0.0) -> Tensor");
  m.def("rope_(Tensor(a!) x, Tensor inv_freq, float attention_factor=1.0, Tensor? position_ids=None, "
        "Tensor? cu_seqlens=None, Tensor? offsets=None, str layout='half', bool key=False, bool transpose=False, "
        "bool xpos=False, float xpos_gamma=0.4, float xpos_scale_base=512.0, float xpos_center=0.0) -> ()");
  m.def("mrope_config(str config_json) -> (Tensor, Tensor, float, int, bool, int[], int, int, int, bool, float)");
  m.def("axes_cos_sin(Tensor position_ids, Tensor freqs, Tensor axis, float attention_factor=1.0, ScalarType dtype=6, "
        "bool duplicated=True) -> (Tensor, Tensor)");
  m.def("axes_rope(Tensor x, Tensor position_ids, Tensor freqs, Tensor axis, float attention_factor=1.0, "
        "str layout='half', bool transpose=False) -> Tensor");
  m.def("axes_rope_(Tensor(a!) x, Tensor position_ids, Tensor freqs, Tensor axis, float attention_factor=1.0, "
        "str layout='half', bool transpose=False) -> ()");
  m.def("get_rope_index(Tensor mm_token_type_ids, Tensor? image_grid_thw=None, Tensor? video_grid_thw=None, "
        "Tensor? attention_mask=None, Tensor? second_per_grid_ts=None, int spatial_merge_size=2, "
        "int temporal_merge_size=1, bool split_video_frames=False, float tokens_per_second=0.0) -> (Tensor, Tensor)");
  m.def("hunyuan_rope_index(Tensor mm_token_type_ids, Tensor? image_grid_thw=None, Tensor? attention_mask=None, "
        "int axes=4, int spatial_merge_size=2) -> (Tensor, Tensor)");
  m.def("alibi_slopes(int heads) -> Tensor");
  m.def("alibi_bias(Tensor slopes, int q_len, int k_len, int q_offset=0, str form='relative', bool causal_mask=False, "
        "ScalarType dtype=6) -> Tensor");
  m.def("alibi_add(Tensor scores, Tensor slopes, Tensor? q_offsets=None, str form='relative', bool causal_mask=False) "
        "-> Tensor");
  m.def("alibi_add_(Tensor(a!) scores, Tensor slopes, Tensor? q_offsets=None, str form='relative', "
        "bool causal_mask=False) -> ()");
  m.def("tupe_bias(Tensor pos, Tensor ln_weight, Tensor ln_bias, Tensor q_weight, Tensor? q_bias, Tensor k_weight, "
        "Tensor? k_bias, Tensor? relative_attention_bias, int n, int heads, str cls='reference', str scale='reference', "
        "int num_buckets=32, int max_distance=128, float ln_eps=1e-5) -> Tensor");
  m.def("tupe_bias_backward(Tensor grad, Tensor pos, Tensor ln_weight, Tensor ln_bias, Tensor q_weight, Tensor? q_bias, "
        "Tensor k_weight, Tensor? k_bias, Tensor? relative_attention_bias, int heads, str cls='reference', "
        "str scale='reference', int num_buckets=32, int max_distance=128, float ln_eps=1e-5) -> Tensor[]");
  m.def("relative_position_bucket(int n, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor");
  m.def("t5_bias(Tensor table, int n, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor");
  m.def("t5_bias_backward(Tensor grad, int rows, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor");
  m.def("toeplitz_matmul(Tensor b, Tensor x, int m) -> Tensor");
  m.def("toeplitz_correlate(Tensor g, Tensor x) -> Tensor");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) {
  m.impl("build_torch_version", TORCH_FN(build_torch_version));
  m.impl("sinusoidal_table", TORCH_FN(sinusoidal_table));
  m.impl("rope_tables", TORCH_FN(rope_tables));
  m.impl("rope_frequencies", TORCH_FN(rope_frequencies));
  m.impl("rope_layer_types", TORCH_FN(rope_layer_types));
  m.impl("mrope_config", TORCH_FN(mrope_config));
  m.impl("alibi_slopes", TORCH_FN(alibi_slopes));
  m.impl("relative_position_bucket", TORCH_FN(relative_position_bucket));
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("floater_table", TORCH_FN(floater_table));
  m.impl("floater_table_backward", TORCH_FN(floater_table_backward));
  m.impl("rope_rotate_", TORCH_FN(rope_rotate_));
  m.impl("rope_rotate", TORCH_FN(rope_rotate));
  m.impl("rope", TORCH_FN(rope));
  m.impl("rope_", TORCH_FN(rope_));
  m.impl("rope_cos_sin", TORCH_FN(rope_cos_sin));
  m.impl("rope_frequencies_at", TORCH_FN(rope_frequencies_at));
  m.impl("axes_cos_sin", TORCH_FN(axes_cos_sin));
  m.impl("axes_rope", TORCH_FN(axes_rope));
  m.impl("axes_rope_", TORCH_FN(axes_rope_));
  m.impl("get_rope_index", TORCH_FN(get_rope_index));
  m.impl("hunyuan_rope_index", TORCH_FN(hunyuan_rope_index));
  m.impl("alibi_bias", TORCH_FN(alibi_bias));
  m.impl("alibi_add", TORCH_FN(alibi_add));
  m.impl("alibi_add_", TORCH_FN(alibi_add_));
  m.impl("tupe_bias", TORCH_FN(tupe_bias));
  m.impl("tupe_bias_backward", TORCH_FN(tupe_bias_backward));
  m.impl("t5_bias", TORCH_FN(t5_bias));
  m.impl("t5_bias_backward", TORCH_FN(t5_bias_backward));
  m.impl("toeplitz_matmul", TORCH_FN(toeplitz_matmul));
  m.impl("toeplitz_correlate", TORCH_FN(toeplitz_correlate));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) {
  m.impl("floater_table", TORCH_FN(floater_table_autograd));
  m.impl("rope", TORCH_FN(rope_autograd));
  m.impl("axes_rope", TORCH_FN(axes_rope_autograd));
  m.impl("rope_rotate", TORCH_FN(rope_rotate_autograd));
  m.impl("alibi_add", TORCH_FN(alibi_add_autograd));
  m.impl("tupe_bias", TORCH_FN(tupe_bias_autograd));
  m.impl("t5_bias", TORCH_FN(t5_bias_autograd));
  m.impl("t5_bias_backward", TORCH_FN(t5_bias_backward_autograd));
  m.impl("toeplitz_matmul", TORCH_FN(toeplitz_matmul_autograd));
  m.impl("toeplitz_correlate", TORCH_FN(toeplitz_correlate_autograd));
}

// ---- multi-axis RoPE layouts of diffusion transformers and vision encoders ------------------------
//
// The frequencies and int64 positions of rotary/diffusion.hpp and rotary/vision.hpp by model name,
// for torch.ops.posenc.axes_cos_sin / axes_rope / axes_rope_ (python/posenc/layouts.py). Neither
// op has a tensor input: both are CompositeExplicitAutograd, their fake kernels run them for real.

namespace {

constexpr const char* kLayoutFreqModels =
    "'nd', 'flux', 'wan', 'hunyuan_video', 'qwen_image', 'qwen_vl_vision', 'pixtral_vision', 'llama4_vision' or "
    "'dinov3'";
constexpr const char* kLayoutPosModels =
    "'flux', 'grid3d', 'wan', 'hunyuan_video', 'qwen_image', 'qwen_vl_vision', 'qwen2_5_vl_window', "
    "'pixtral_vision', 'llama4_vision' or 'dinov3'";

std::vector<std::size_t> layout_sizes(const std::vector<int64_t>& v, const char* op, const char* name) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    TORCH_CHECK_VALUE(v[i] >= 0, "posenc: ", op, ": ", name, "[", i, "]: expected a size >= 0, got ", v[i]);
    out.push_back(static_cast<std::size_t>(v[i]));
  }
  return out;
}

void layout_arity(const std::string& model, const std::vector<int64_t>& v, std::size_t lo, std::size_t hi,
                  const char* meaning, const char* op, const char* name) {
  TORCH_CHECK_VALUE(v.size() >= lo && v.size() <= hi, "posenc: ", op, ": ", name, ": expected ", meaning, " for model '",
                    model, "', got ", v.size(), " values");
}

Tensor layout_ids(const std::vector<std::int64_t>& ids, int64_t rows) {
  const auto n = static_cast<int64_t>(ids.size()) / rows;
  Tensor t = at::empty({rows, n}, at::TensorOptions().dtype(at::kLong));
  if (!ids.empty()) std::memcpy(t.data_ptr<int64_t>(), ids.data(), sizeof(std::int64_t) * ids.size());
  return t;
}

std::vector<posenc::rotary::vision_grid> layout_grids(const std::vector<int64_t>& g, const char* op) {
  TORCH_CHECK_VALUE(g.size() % 3 == 0 && !g.empty(), "posenc: ", op,
                    ": grids: expected (t, h, w) triples, flattened (a multiple of 3 values, at least 3), got ",
                    g.size(), " values");
  std::vector<posenc::rotary::vision_grid> out;
  for (std::size_t i = 0; i < g.size(); i += 3) out.push_back({g[i], g[i + 1], g[i + 2]});
  return out;
}

/// (freqs float64 [pairs, 2, 3], axis int64 [pairs]) of a model's multi-axis RoPE (the exact
/// frequencies of rotary/diffusion.hpp, rotary/vision.hpp). sizes: 'nd' axes_dim; 'flux',
/// 'hunyuan_video', 'qwen_image' axes_dim (empty: the model's (16, 56, 56)); 'wan',
/// 'qwen_vl_vision', 'pixtral_vision', 'llama4_vision' [head_dim] (the last two may be empty: 64,
/// 88); 'dinov3' [head_dim, grid_h, grid_w]. theta 0: the model's default.
std::tuple<Tensor, Tensor> axes_layout_frequencies(const std::string& model, const std::vector<int64_t>& sizes,
                                                   double theta) {
  constexpr const char* op = "axes_layout_frequencies";
  namespace rt = posenc::rotary;
  const auto s = layout_sizes(sizes, op, "sizes");
  const auto th = [&](double d) { return theta == 0.0 ? d : theta; };
  const auto f = guarded([&]() -> rt::axis_frequencies {
    if (model == "nd") {
      TORCH_CHECK_VALUE(theta != 0.0, "posenc: ", op, ": theta: expected a finite theta > 1 for model 'nd', got 0");
      return rt::axes_nd(s, theta, "axes_layout_frequencies('nd')");
    }
    if (model == "flux" || model == "hunyuan_video" || model == "qwen_image") {
      const std::array<std::size_t, 3> def{16, 56, 56};
      const std::span<const std::size_t> dims = s.empty() ? std::span<const std::size_t>(def) : std::span(s);
      if (model == "flux") return rt::flux_frequencies(dims, th(10000.0));
      if (model == "hunyuan_video") return rt::hunyuan_video_frequencies(dims, th(256.0));
      return rt::qwen_image_frequencies(dims, th(10000.0));
    }
    if (model == "wan" || model == "qwen_vl_vision") {
      layout_arity(model, sizes, 1, 1, "[head_dim]", op, "sizes");
      return model == "wan" ? rt::wan_frequencies(s[0], th(10000.0)) : rt::qwen_vl_vision_frequencies(s[0], th(10000.0));
    }
    if (model == "pixtral_vision" || model == "llama4_vision") {
      layout_arity(model, sizes, 0, 1, "[head_dim] or []", op, "sizes");
      const bool pix = model == "pixtral_vision";
      const std::size_t d = s.empty() ? (pix ? 64 : 88) : s[0];
      return pix ? rt::pixtral_vision_frequencies(d, th(10000.0)) : rt::llama4_vision_frequencies(d, th(10000.0));
    }
    if (model == "dinov3") {
      layout_arity(model, sizes, 3, 3, "[head_dim, grid_h, grid_w]", op, "sizes");
      return rt::dinov3_frequencies(s[0], s[1], s[2], th(100.0));
    }
    TORCH_CHECK_VALUE(false, "posenc: ", op, ": model: expected ", kLayoutFreqModels, ", got '", model, "'");
    return {};
  });
  const auto pairs = static_cast<int64_t>(f.freqs.inv_freq.size());
  Tensor freqs = at::zeros({pairs, 2, kWideParts}, at::TensorOptions().dtype(at::kDouble));
  Tensor axis = at::empty({pairs}, at::TensorOptions().dtype(at::kLong));
  double* w = freqs.data_ptr<double>();
  for (int64_t k = 0; k < pairs; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    split_wide(f.freqs.inv_freq[ku], w + k * 2 * kWideParts);
    if (!f.freqs.inv_freq_lo.empty()) split_wide(f.freqs.inv_freq_lo[ku], w + k * 2 * kWideParts + kWideParts);
    axis.data_ptr<int64_t>()[k] = f.axis[ku];
  }
  return {freqs, axis};
}

/// A model's int64 positions [A, tokens] (rotary/diffusion.hpp, rotary/vision.hpp), as a list:
///  'flux' sizes [text_tokens, height, width] (patches); 'grid3d' [frames, height, width];
///  'wan' [latent_frames, latent_height, latent_width, (p_t, p_h, p_w, (max_seq_len))];
///  'hunyuan_video' [latent_frames, latent_height, latent_width, (patch_size, (patch_size_t))];
///  'qwen_image' [text_tokens, (scale_rope)] with grids (frames, height, width) per image: [image, text];
///  'qwen_vl_vision' [(spatial_merge_size)] with grids (t, h, w); 'qwen2_5_vl_window'
///  [(spatial_merge_size, (window_size, (patch_size)))] with grids: [window_index, cu_window_seqlens
///  (int32), token_order]; 'pixtral_vision' grids (1, h, w); 'llama4_vision' [(side)];
///  'dinov3' [grid_h, grid_w].
std::vector<Tensor> axes_layout_positions(const std::string& model, const std::vector<int64_t>& sizes,
                                          const std::vector<int64_t>& grids) {
  constexpr const char* op = "axes_layout_positions";
  namespace rt = posenc::rotary;
  const auto s = layout_sizes(sizes, op, "sizes");
  const bool takes_grids = model == "qwen_image" || model == "qwen_vl_vision" || model == "qwen2_5_vl_window" ||
                           model == "pixtral_vision";
  TORCH_CHECK_VALUE(takes_grids || grids.empty(), "posenc: ", op, ": grids: expected none for model '", model, "', got ",
                    grids.size(), " values");
  return guarded([&]() -> std::vector<Tensor> {
    if (model == "flux") {
      layout_arity(model, sizes, 3, 3, "[text_tokens, height, width]", op, "sizes");
      return {layout_ids(rt::flux_positions(s[0], s[1], s[2]), 3)};
    }
    if (model == "grid3d") {
      layout_arity(model, sizes, 3, 3, "[frames, height, width]", op, "sizes");
      return {layout_ids(rt::grid_positions_3d(s[0], s[1], s[2]), 3)};
    }
    if (model == "wan") {
      layout_arity(model, sizes, 3, 7, "[latent_frames, latent_height, latent_width] or with (p_t, p_h, p_w) and "
                   "max_seq_len", op, "sizes");
      TORCH_CHECK_VALUE(s.size() == 3 || s.size() >= 6, "posenc: ", op,
                        ": sizes: expected the patch_size as three values (p_t, p_h, p_w), got ", s.size() - 3);
      const std::array<std::size_t, 3> p = s.size() >= 6 ? std::array<std::size_t, 3>{s[3], s[4], s[5]}
                                                          : std::array<std::size_t, 3>{1, 2, 2};
      return {layout_ids(rt::wan_positions(s[0], s[1], s[2], p, s.size() == 7 ? s[6] : 1024), 3)};
    }
    if (model == "hunyuan_video") {
      layout_arity(model, sizes, 3, 5, "[latent_frames, latent_height, latent_width, (patch_size, (patch_size_t))]", op,
                   "sizes");
      return {layout_ids(rt::hunyuan_video_positions(s[0], s[1], s[2], s.size() >= 4 ? s[3] : 2,
                                                     s.size() >= 5 ? s[4] : 1),
                         3)};
    }
    if (model == "qwen_image") {
      layout_arity(model, sizes, 1, 2, "[text_tokens, (scale_rope)]", op, "sizes");
      TORCH_CHECK_VALUE(grids.size() % 3 == 0, "posenc: ", op,
                        ": grids: expected (frames, height, width) triples, flattened, got ", grids.size(), " values");
      const auto g = layout_sizes(grids, op, "grids");
      std::vector<rt::qwen_image_shape> shapes;
      for (std::size_t i = 0; i < g.size(); i += 3) shapes.push_back({g[i], g[i + 1], g[i + 2]});
      const auto ids = rt::qwen_image_positions(shapes, s[0], s.size() < 2 || s[1] != 0);
      return {layout_ids(ids.image, 3), layout_ids(ids.text, 3)};
    }
    if (model == "qwen_vl_vision") {
      layout_arity(model, sizes, 0, 1, "[(spatial_merge_size)]", op, "sizes");
      return {layout_ids(rt::qwen_vl_vision_positions(layout_grids(grids, op), s.empty() ? 2 : s[0]), 2)};
    }
    if (model == "qwen2_5_vl_window") {
      layout_arity(model, sizes, 0, 3, "[(spatial_merge_size, (window_size, (patch_size)))]", op, "sizes");
      const auto o = rt::qwen2_5_vl_window_order(layout_grids(grids, op), s.size() >= 1 ? s[0] : 2,
                                                 s.size() >= 2 ? s[1] : 112, s.size() >= 3 ? s[2] : 14);
      Tensor wi = at::empty({static_cast<int64_t>(o.window_index.size())}, at::TensorOptions().dtype(at::kLong));
      Tensor cu = at::empty({static_cast<int64_t>(o.cu_window_seqlens.size())}, at::TensorOptions().dtype(at::kInt));
      Tensor to = at::empty({static_cast<int64_t>(o.token_order.size())}, at::TensorOptions().dtype(at::kLong));
      std::copy(o.window_index.begin(), o.window_index.end(), wi.data_ptr<int64_t>());
      std::copy(o.cu_window_seqlens.begin(), o.cu_window_seqlens.end(), cu.data_ptr<int32_t>());
      std::copy(o.token_order.begin(), o.token_order.end(), to.data_ptr<int64_t>());
      return {wi, cu, to};
    }
    if (model == "pixtral_vision") {
      layout_arity(model, sizes, 0, 0, "none", op, "sizes");
      return {layout_ids(rt::pixtral_vision_positions(layout_grids(grids, op)), 2)};
    }
    if (model == "llama4_vision") {
      layout_arity(model, sizes, 0, 1, "[(side)]", op, "sizes");
      return {layout_ids(rt::llama4_vision_positions(s.empty() ? 24 : s[0]), 2)};
    }
    if (model == "dinov3") {
      layout_arity(model, sizes, 2, 2, "[grid_h, grid_w]", op, "sizes");
      return {layout_ids(rt::dinov3_positions(s[0], s[1]), 2)};
    }
    TORCH_CHECK_VALUE(false, "posenc: ", op, ": model: expected ", kLayoutPosModels, ", got '", model, "'");
    return {};
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.def("axes_layout_frequencies(str model, int[] sizes=[], float theta=0.0) -> (Tensor, Tensor)");
  m.def("axes_layout_positions(str model, int[] sizes=[], int[] grids=[]) -> Tensor[]");
}

TORCH_LIBRARY_IMPL(posenc, CompositeExplicitAutograd, m) {
  m.impl("axes_layout_frequencies", TORCH_FN(axes_layout_frequencies));
  m.impl("axes_layout_positions", TORCH_FN(axes_layout_positions));
}
