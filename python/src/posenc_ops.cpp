// SPDX-License-Identifier: MIT
// posenc's encodings as PyTorch operators: one translation unit registered with TORCH_LIBRARY
// (namespace `posenc`), so the ops are reachable as torch.ops.posenc.* from Python and
// TorchScript. The Python package (python/posenc) wraps them in autograd.Functions and modules.
//
// Conventions of every op:
//   * tensors must be CPU, strided, contiguous, float32 or float64 (index tensors: as stated);
//     anything else raises ValueError (shape, device, layout, contiguity) or TypeError (dtype)
//     with a message "posenc: <op>: <argument>: expected ..., got ...";
//   * posenc's own exceptions are translated: posenc::invalid_argument and its subclasses
//     (shape_error, grid_error, non_finite_error) -> ValueError, any other posenc::error ->
//     RuntimeError, the message unchanged.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/custom_class.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
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

scheme_id parse_scheme(const std::string& s) {
  if (s == "rk4" || s == "rk4_38") return scheme_id::rk4;
  if (s == "euler") return scheme_id::euler;
  if (s == "midpoint") return scheme_id::midpoint;
  if (s == "rk4_classic") return scheme_id::rk4_classic;
  TORCH_CHECK_VALUE(false, "posenc: floater_forward: scheme: expected 'rk4' (Kutta's 3/8 rule, torchdiffeq's rk4), ",
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

/// Build the encoder and compute the L-row table: returns (table [L, N, d], state).
std::tuple<Tensor, c10::intrusive_ptr<FloaterState>> floater_forward(
    const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2, const Tensor& p0, int64_t L, double delta,
    int64_t substeps, const std::string& activation, bool time1, bool time2, const std::string& scheme, int64_t threads) {
  constexpr const char* op = "floater_forward";
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
  TORCH_CHECK_VALUE(L >= 1, "posenc: ", op, ": L: expected a number of positions >= 1, got ", L);
  TORCH_CHECK_VALUE(substeps >= 1, "posenc: ", op, ": substeps: expected >= 1 steps per interval, got ", substeps);
  TORCH_CHECK_VALUE(std::isfinite(delta) && delta > 0, "posenc: ", op, ": delta: expected a finite delta > 0, got ", delta);
  const scheme_id sid = parse_scheme(scheme);
  return guarded([&] {
    const auto act = posenc::floater::activation_from_string(activation);
    auto st = c10::make_intrusive<FloaterState>();
    st->impl = p0.scalar_type() == at::kFloat
                   ? make_floater_scheme<float>(sid, w1, b1, w2, b2, p0, act, time1, time2, delta, substeps, threads)
                   : make_floater_scheme<double>(sid, w1, b1, w2, b2, p0, act, time1, time2, delta, substeps, threads);
    Tensor out = st->impl->table(L);
    return std::make_tuple(out, st);
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
Tensor rope_rotate_(Tensor x, const c10::optional<Tensor>& positions, int64_t head_dim, int64_t rotary_dim,
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
  return x;
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
/// of L given grad = dL/dbias [H, n, n]; absent parameters get undefined (None) gradients.
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
                              q_b ? from_matrix<T>(g.pos_q_bias, {cfg.d}, dt) : Tensor(),
                              from_matrix<T>(g.pos_k_weight, {cfg.d, cfg.d}, dt),
                              k_b ? from_matrix<T>(g.pos_k_bias, {cfg.d}, dt) : Tensor(),
                              rel ? from_matrix<T>(g.relative_attention_bias, {rel->size(0), rel->size(1)}, dt) : Tensor()};
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

}  // namespace

TORCH_LIBRARY(posenc, m) {
  m.class_<FloaterState>("FloaterState").def("cached", &FloaterState::cached);
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
        "ScalarType dtype=7) -> Tensor",
        &sinusoidal_table);
  m.def("rope_rotate_(Tensor(a!) x, Tensor? positions=None, int head_dim=0, int rotary_dim=0, str layout='interleaved', "
        "float base=10000.0, float first_position=0.0, float position_step=1.0) -> Tensor(a!)",
        &rope_rotate_);
  m.def("rope_tables(int L, int rotary_dim, float base=10000.0, float first_position=0.0, float position_step=1.0, "
        "Tensor? positions=None, ScalarType dtype=7) -> (Tensor, Tensor)",
        &rope_tables);
  m.def("tupe_bias(Tensor pos, Tensor ln_weight, Tensor ln_bias, Tensor q_weight, Tensor? q_bias, Tensor k_weight, "
        "Tensor? k_bias, Tensor? relative_attention_bias, int n, int heads, str cls='reference', str scale='reference', "
        "int num_buckets=32, int max_distance=128, float ln_eps=1e-5) -> Tensor",
        &tupe_bias);
  m.def("tupe_bias_backward(Tensor grad, Tensor pos, Tensor ln_weight, Tensor ln_bias, Tensor q_weight, Tensor? q_bias, "
        "Tensor k_weight, Tensor? k_bias, Tensor? relative_attention_bias, int heads, str cls='reference', "
        "str scale='reference', int num_buckets=32, int max_distance=128, float ln_eps=1e-5) -> Tensor[]",
        &tupe_bias_backward);
  m.def("relative_position_bucket(int n, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor",
        &relative_position_bucket);
  m.def("t5_bias(Tensor table, int n, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor", &t5_bias);
  m.def("t5_bias_backward(Tensor grad, int rows, int num_buckets=32, int max_distance=128, bool bidirectional=True) -> Tensor",
        &t5_bias_backward);
  m.def("toeplitz_matmul(Tensor b, Tensor x, int m) -> Tensor", &toeplitz_matmul);
  m.def("toeplitz_correlate(Tensor g, Tensor x) -> Tensor", &toeplitz_correlate);
}
