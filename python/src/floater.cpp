// SPDX-License-Identifier: MIT
// FLOATER as PyTorch operators: floater_table (differentiable: exact discrete backprop or the
// continuous adjoint), floater_table_backward (its gradient, for traced graphs), and the
// eval-mode cache of posenc.FloaterEncoder: floater_forward / floater_extend / floater_backward
// over the TorchScript class torch.classes.posenc.FloaterState. Conventions: common.hpp.
#include "common.hpp"

#include <cmath>
#include <memory>
#include <tuple>

#include <posenc/floater.hpp>
#include <posenc/ode.hpp>

using namespace posenc_torch;

namespace {

/// threads > 0: as given. 0: torch's intra-op thread count for weights of at least 128 x 128
/// (below that, a product is too small to share between threads), else 1.
std::size_t threads_or_default(int64_t threads, int64_t weight_size) {
  if (threads > 0) return static_cast<std::size_t>(threads);
  return weight_size >= 128 * 128 ? static_cast<std::size_t>(std::max(1, at::get_num_threads())) : 1;
}

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

int64_t floater_state_cached(const c10::intrusive_ptr<FloaterState>& st) {
  TORCH_CHECK_VALUE(st && st->impl, "posenc: floater_state_cached: state: expected a state made by floater_forward");
  return st->cached();
}

// ---- autograd ------------------------------------------------------------------------------------

struct FloaterTableBackward {};

Tensor floater_table_autograd(const Tensor& w1, const Tensor& b1, const Tensor& w2, const Tensor& b2, const Tensor& p0,
                              int64_t L, double delta, int64_t substeps, const std::string& activation, bool time1,
                              bool time2, const std::string& scheme, int64_t threads, const std::string& gradient,
                              int64_t adjoint_substeps) {
  // the eager forward's encoder (its table and forward stages), which backward reuses
  auto state = std::make_shared<c10::intrusive_ptr<FloaterState>>();
  const std::function<variable_list()> forward = [&]() -> variable_list {
    if (plain_eager({&w1, &b1, &w2, &b2, &p0})) {
      constexpr const char* op = "floater_table";
      check_positions_count(L, op);
      parse_gradient(gradient, op);
      TORCH_CHECK_VALUE(adjoint_substeps >= 0, "posenc: ", op,
                        ": adjoint_substeps: expected >= 0 (0: the forward substeps), got ", adjoint_substeps);
      *state = floater_build(w1, b1, w2, b2, p0, delta, substeps, activation, time1, time2, scheme, threads, op);
      return {guarded([&] { return (*state)->impl->table(L); })};
    }
    return {op_handle<decltype(floater_table)>("posenc::floater_table")
                .call(w1, b1, w2, b2, p0, L, delta, substeps, activation, time1, time2, scheme, threads, gradient,
                      adjoint_substeps)};
  };
  backward_fn backward = [state, delta, substeps, activation, time1, time2, scheme, threads, gradient,
                          adjoint_substeps](const variable_list& grads, const variable_list& s) -> variable_list {
    const Tensor g = grads[0].contiguous();
    if (*state) return guarded([&] { return (*state)->impl->backward(g, gradient == "adjoint", adjoint_substeps); });
    // a traced forward kept no encoder: floater_table_backward builds and integrates it again
    return op_handle<decltype(floater_table_backward)>("posenc::floater_table_backward")
        .call(g, s[0], s[1], s[2], s[3], s[4], delta, substeps, activation, time1, time2, scheme, threads, gradient,
              adjoint_substeps);
  };
  return autograd_apply<FloaterTableBackward>(true, forward, backward, w1, b1, w2, b2, p0)[0];
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(posenc, m) {
  m.class_<FloaterState>("FloaterState").def("cached", &FloaterState::cached);
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
}

TORCH_LIBRARY_IMPL(posenc, CPU, m) {
  m.impl("floater_table", TORCH_FN(floater_table));
  m.impl("floater_table_backward", TORCH_FN(floater_table_backward));
}

TORCH_LIBRARY_IMPL(posenc, Autograd, m) { m.impl("floater_table", TORCH_FN(floater_table_autograd)); }
