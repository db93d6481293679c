// SPDX-License-Identifier: MIT
// Gradients of a scalar loss L through an ODE solution, given the upstream gradients
// dL/dy(t_i) at the output times t_0 .. t_{n-1}:
//
//   backprop(...)  reverse-mode differentiation of the discrete Runge-Kutta steps: the exact
//                  gradient of what integrate(..., fixed_steps{...}) computed, to rounding.
//                  Memory: checkpoints every C steps plus one segment of C step states
//                  (C = ceil(sqrt(steps)) by default, or user-bounded), so O(sqrt(steps)).
//   adjoint(...)   the continuous adjoint (Chen et al. 2018; FLOATER supplementary eqs. 2-3):
//                  the augmented system y' = f, a' = -a^T df/dy, g' = -a^T df/dtheta integrated
//                  backwards segment by segment between output times, y reset to the forward
//                  values and a incremented by dL/dy(t_i) at each t_i. Memory O(outputs).
//                  Its gradient converges to the exact one as the step shrinks.
//
// The right-hand side must be differentiable: besides f(t, y, dydt) it provides
//
//   void vjp(t, const State& y, const State& a, State& a_dfdy, Param& g_theta);
//       a_dfdy   = (df/dy)^T a            (overwritten)
//       g_theta += (df/dtheta)^T a        (accumulated)
//
// Param is the type that holds parameter gradients (any type for backprop; a StateSpace with
// the same scalar type for adjoint, which integrates it).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <posenc/core/backend.hpp>
#include <posenc/core/checked.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/state_traits.hpp>
#include <posenc/ode/integrate.hpp>
#include <posenc/ode/stepper.hpp>
#include <posenc/ode/tableau.hpp>

namespace posenc::ode {

/// A right-hand side that can multiply its Jacobians by a cotangent vector.
template <class F, class State, class Param>
concept DifferentiableRhs = requires(F& f, time_type_for<state_value_t<State>> t, const State& y, const State& a,
                                     State& out, Param& g) {
  f(t, y, out);
  f.vjp(t, y, a, out, g);
};

/// Memory bound of backprop: at most `max_stored_steps` step states are held for one segment
/// (plus one checkpoint per segment). 0 chooses ceil(sqrt(total steps)).
struct checkpointing {
  std::size_t max_stored_steps = 0;
};

struct gradient_stats {
  std::size_t steps = 0;            // forward steps of the discretisation (backprop) or of the
                                    // forward pass (adjoint)
  std::size_t backward_steps = 0;   // steps of the augmented backward integration (adjoint)
  std::size_t rhs_evaluations = 0;  // calls of f
  std::size_t vjp_evaluations = 0;  // calls of f.vjp
  std::size_t stored_states = 0;    // peak number of full states held (checkpoints + segment)
};

/// Which stages influence y_new: b_i != 0, or a later needed stage uses them. (The last stage
/// of an FSAL scheme does not: it only seeds the next step.)
template <ExplicitScheme Scheme>
[[nodiscard]] constexpr std::array<bool, stages_v<Scheme>> needed_stages() {
  constexpr auto& tab = Scheme::coefficients;
  constexpr std::size_t s = tab.stages;
  std::array<bool, s> need{};
  for (std::size_t i = s; i-- > 0;) {
    bool n = tab.b[i] != 0;
    for (std::size_t j = i + 1; j < s && !n; ++j) n = need[j] && tab.a[j][i] != 0;
    need[i] = n;
  }
  return need;
}

namespace detail {

template <class State>
void validate_upstream(std::span<const State> dL_dy, const State& y0, std::size_t n, std::string_view where) {
  posenc::detail::require<shape_error>(dL_dy.size() == n, where, "dL_dy: expected one upstream gradient per time point (",
                                       n, "), got ", dL_dy.size());
  for (std::size_t i = 0; i < n; ++i) {
    posenc::detail::require<shape_error>(state_traits<State>::same_shape(dL_dy[i], y0), where, "dL_dy[", i,
                                         "]: expected the shape of y0");
    posenc::detail::require<non_finite_error>(default_backend_t<State>::all_finite(dL_dy[i]), where, "dL_dy[", i,
                                              "] contains NaN or Inf");
  }
}

/// The terms of a stage's cotangent kbar_i = h b_i ybar + sum_{m > i} h a_mi Ybar_m (needed m
/// only): source -1 is ybar, m >= 0 is Ybar_m.
template <ExplicitScheme Scheme, std::size_t I>
constexpr auto cotangent_terms() {
  constexpr auto& tab = Scheme::coefficients;
  constexpr std::size_t s = tab.stages;
  constexpr auto need = needed_stages<Scheme>();
  constexpr std::size_t n = [&] {
    std::size_t c = tab.b[I] != 0 ? 1 : 0;
    for (std::size_t m = I + 1; m < s; ++m) c += (need[m] && tab.a[m][I] != 0) ? 1 : 0;
    return c;
  }();
  struct terms_t {
    std::array<std::ptrdiff_t, n> source{};
    std::array<long double, n> coefficient{};
  } r;
  std::size_t c = 0;
  if (tab.b[I] != 0) {
    r.source[c] = -1;
    r.coefficient[c++] = tab.b[I];
  }
  for (std::size_t m = I + 1; m < s; ++m)
    if (need[m] && tab.a[m][I] != 0) {
      r.source[c] = static_cast<std::ptrdiff_t>(m);
      r.coefficient[c++] = tab.a[m][I];
    }
  return r;
}

template <class Backend, class State, class Time, class Terms, class YB, std::size_t... M>
void cotangent_sum(State& kbar, const State& ybar, const YB& Ybar, Time h, const Terms& terms, std::index_sequence<M...>) {
  using V = state_value_t<State>;
  Backend::linear_combination(
      kbar, std::array<V, sizeof...(M)>{static_cast<V>(h * static_cast<Time>(terms.coefficient[M]))...},
      std::array<const State*, sizeof...(M)>{(terms.source[M] < 0 ? &ybar : &Ybar[static_cast<std::size_t>(terms.source[M])])...});
}


/// One forward step of the scheme from (t, y), storing every needed stage input Y_i and
/// derivative k_i (the data the reverse step reads). Stage sums are those of explicit_rk
/// (detail::stage_input), so Y_i and k_i are bitwise the stepper's.
template <ExplicitScheme Scheme, class Backend, class F, class State, class T, class YS, class KS>
void step_storing_stages(F& f, T t, const State& y, T h, YS& Y, KS& k, std::size_t& nfev) {
  constexpr auto need = needed_stages<Scheme>();
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          if constexpr (need[I]) {
            detail::stage_input<Scheme, I, Backend>(Y[I], y, h, k);
            call_rhs(f, stage_time<Scheme, I>(t, h), std::as_const(Y[I]), k[I]);
            ++nfev;
          }
        }(),
        ...);
  }(std::make_index_sequence<stages_v<Scheme>>{});
}
}  // namespace detail

/// The reverse sweep of one explicit Runge-Kutta step y_new = y + h sum b_i k_i, k_i = f(Y_i),
/// Y_i = y + h sum_{j<i} a_ij k_j: the one reverse sweep of posenc (backprop and FLOATER's
/// encoder use it). On entry ybar = dL/dy_new, on return ybar = dL/dy. For the needed stages
/// i = s-1 .. 0 it forms kbar_i = h b_i ybar + sum_{m>i} h a_mi Ybar_m (one pass, into `kbar`)
/// and calls stage_vjp(i, kbar_i, Ybar_i), which must set Ybar_i = (df/dy at stage i)^T kbar_i
/// (and may accumulate the parameter gradient (df/dtheta)^T kbar_i); then ybar += sum_i Ybar_i.
/// Ybar: indexable by stage, each shaped like ybar once stage_vjp has set it; kbar: one state
/// shaped like ybar (shape_error naming kbar / Ybar otherwise: a shorter one was read past its
/// end). A NaN or infinite h throws non_finite_error naming h.
template <ExplicitScheme Scheme, class Backend, class State, class Time, class YB, class StageVjp>
void reverse_step(State& ybar, Time h, YB& Ybar, State& kbar, StageVjp&& stage_vjp) {
  using V = state_value_t<State>;
  constexpr std::string_view where = "ode::reverse_step";
  posenc::detail::require<non_finite_error>(std::isfinite(h), where, "h: expected a finite step size, got ", h);
  auto check_shape = [&](const State& x, std::string_view name, std::size_t stage) {
    if constexpr (requires { state_traits<State>::same_shape(ybar, x); }) {
      if (!state_traits<State>::same_shape(ybar, x))
        posenc::detail::fail<shape_error>(where, name, " (stage ", stage, "): ", state_traits<State>::size(x),
                                          " scalars, expected the shape of ybar (", state_traits<State>::size(ybar), " scalars)");
    }
  };
  check_shape(kbar, "kbar", stages_v<Scheme> - 1);
  constexpr std::size_t s = stages_v<Scheme>;
  constexpr auto need = needed_stages<Scheme>();
  [&]<std::size_t... R>(std::index_sequence<R...>) {
    (
        [&] {
          constexpr std::size_t i = s - 1 - R;
          if constexpr (need[i]) {
            constexpr auto terms = detail::cotangent_terms<Scheme, i>();
            if constexpr (terms.source.size() == 0) {
              Backend::fill(kbar, 0);
            } else {
              detail::cotangent_sum<Backend>(kbar, std::as_const(ybar), std::as_const(Ybar), h, terms,
                                             std::make_index_sequence<terms.source.size()>{});
            }
            stage_vjp(i, std::as_const(kbar), Ybar[i]);
            check_shape(Ybar[i], "Ybar", i);
          }
        }(),
        ...);
  }(std::make_index_sequence<s>{});
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    constexpr std::size_t n = ((need[I] ? 1 : 0) + ... + 0);
    std::array<const State*, n + 1> x{};
    std::size_t c = 0;
    x[c++] = &ybar;
    ((need[I] ? (void)(x[c++] = &Ybar[I]) : (void)0), ...);
    std::array<V, n + 1> one{};
    one.fill(V(1));
    Backend::linear_combination(ybar, one, x);
  }(std::make_index_sequence<s>{});
}

/// Exact gradient of the fixed-step discretisation (reverse-mode through the RK stages).
/// On return dL_dy0 = dL/dy0 and dL_dtheta = dL/dtheta (dL_dtheta is overwritten: the caller
/// sizes it and it is zeroed through the backend of Param when Param is a StateSpace, else by
/// assigning Param{} - pass a zeroed accumulator for other types).
template <ExplicitScheme Scheme, class F, StateSpace State, class Param>
  requires DifferentiableRhs<F, State, Param>
gradient_stats backprop(Scheme, F& f, const State& y0, std::span<const time_type_for<state_value_t<State>>> times,
                        fixed_steps policy, std::span<const State> dL_dy, State& dL_dy0, Param& dL_dtheta,
                        checkpointing memory = {}) {
  using T = time_type_for<state_value_t<State>>;
  using V = state_value_t<State>;
  using B = default_backend_t<State>;
  constexpr std::string_view where = "backprop";
  constexpr auto& tab = Scheme::coefficients;
  constexpr std::size_t s = tab.stages;

  validate_grid(times);
  validate_fixed_steps(policy, where);
  const std::size_t total_steps = count_fixed_steps(policy, times, where);
  posenc::detail::require<non_finite_error>(B::all_finite(y0), where, "y0 contains NaN or Inf");
  detail::validate_upstream(dL_dy, y0, times.size(), where);
  if constexpr (StateSpace<Param>) default_backend_t<Param>::fill(dL_dtheta, 0);

  // The step list: (interval, substep) in forward order, and which step ends at which output.
  struct step_info {
    T t, h;
    std::size_t output_after;  // index of the output time reached at the end of this step, or npos
  };
  constexpr std::size_t npos = static_cast<std::size_t>(-1);
  std::vector<step_info> steps;
  // total_steps <= max_steps, which may be SIZE_MAX: reserving it was std::length_error/bad_alloc
  (void)checked::elements(total_steps, 1, where, "steps (the fixed steps over the grid)");
  checked::allocate(where, "steps", total_steps, sizeof(step_info), [&] { steps.reserve(total_steps); });
  for (std::size_t i = 0; i + 1 < times.size(); ++i) {
    const std::size_t k = substeps_for(policy, times[i], times[i + 1]);
    for_each_substep(times[i], times[i + 1], k,
                     [&](std::size_t j, T ts, T hs) { steps.push_back({ts, hs, j + 1 == k ? i + 1 : npos}); });
  }
  const std::size_t M = steps.size();
  gradient_stats stats;
  stats.steps = M;

  state_traits<State>::resize_like(dL_dy0, y0);
  B::linear_combination(dL_dy0, std::array<V, 1>{V(1)}, std::array<const State*, 1>{&dL_dy.back()});
  if (M == 0) return stats;

  // At most M steps per segment: a larger max_stored_steps stores the same (it allocated
  // max_stored_steps states before, std::length_error for SIZE_MAX).
  const std::size_t C = memory.max_stored_steps > 0
                            ? std::min(memory.max_stored_steps, M)
                            : std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(M)))));
  const std::size_t n_seg = (M + C - 1) / C;

  // Pass 1: forward, keeping the state at the start of every segment.
  explicit_rk<Scheme, State, B> stepper(y0);
  const std::size_t state_bytes = checked::mul(state_traits<State>::size(y0), sizeof(V), where, "size(y0) * scalar bytes");
  std::vector<State> checkpoint = checked::allocate(where, "checkpoints", n_seg, state_bytes, [&] { return std::vector<State>(n_seg); });
  State y = y0;
  for (std::size_t m = 0; m < M; ++m) {
    if (m % C == 0) checkpoint[m / C] = y;
    stepper.step(f, steps[m].t, y, steps[m].h);
  }
  stats.rhs_evaluations += stepper.rhs_evaluations();
  detail::check_finite<B>(y, times.back(), where);

  // Workspace for the reverse sweep (allocated once).
  std::vector<State> seg;
  std::array<State, s> Y{}, k{}, Ybar{};
  State kbar;
  checked::allocate(where, "segment states (checkpointing.max_stored_steps)", C, state_bytes, [&] {
    seg.resize(C);
    for (auto& x : seg) state_traits<State>::resize_like(x, y0);
  });
  for (std::size_t i = 0; i < s; ++i) {
    state_traits<State>::resize_like(Y[i], y0);
    state_traits<State>::resize_like(k[i], y0);
    state_traits<State>::resize_like(Ybar[i], y0);
  }
  state_traits<State>::resize_like(kbar, y0);
  stats.stored_states = n_seg + C;

  // dL_dy0 currently holds ybar = dL/dy at the end. Walk the segments backwards.
  State& ybar = dL_dy0;
  for (std::size_t g = n_seg; g-- > 0;) {
    const std::size_t m0 = g * C, m1 = std::min(M, m0 + C);
    // Recompute the segment's step-start states.
    B::linear_combination(seg[0], std::array<V, 1>{V(1)}, std::array<const State*, 1>{&checkpoint[g]});
    stepper.reset();
    for (std::size_t m = m0; m + 1 < m1; ++m) {
      B::linear_combination(seg[m - m0 + 1], std::array<V, 1>{V(1)}, std::array<const State*, 1>{&seg[m - m0]});
      stepper.reset();
      stepper.step(f, steps[m].t, seg[m - m0 + 1], steps[m].h);
    }
    for (std::size_t m = m1; m-- > m0;) {
      const T t = steps[m].t, h = steps[m].h;
      detail::step_storing_stages<Scheme, B>(f, t, seg[m - m0], h, Y, k, stats.rhs_evaluations);
      // k_i = f(t + c_i h, Y_i):  Ybar_i = J_i^T kbar_i,  thetabar += (df/dtheta)^T kbar_i
      reverse_step<Scheme, B>(ybar, h, Ybar, kbar, [&](std::size_t i, const State& kb, State& Yb) {
        f.vjp(t + static_cast<T>(tab.c[i]) * h, std::as_const(Y[i]), kb, Yb, dL_dtheta);
        ++stats.vjp_evaluations;
      });
      // The state at the start of step m is an output when the previous step ended on one.
      if (m > 0 && steps[m - 1].output_after != npos) {
        const std::size_t i_out = steps[m - 1].output_after;
        B::linear_combination(ybar, std::array<V, 2>{V(1), V(1)}, std::array<const State*, 2>{&ybar, &dL_dy[i_out]});
      }
    }
  }
  // Output 0 is y0 itself.
  B::linear_combination(ybar, std::array<V, 2>{V(1), V(1)}, std::array<const State*, 2>{&ybar, &dL_dy[0]});
  return stats;
}

// ---- continuous adjoint -------------------------------------------------------------------------

/// The augmented state of the adjoint method: the state y, its adjoint a = dL/dy, and the
/// running parameter gradient g. It is a StateSpace (posenc's backend runs on each part).
template <StateSpace State, StateSpace Param>
struct adjoint_state {
  State y;
  State a;
  Param g;
};

namespace detail {
template <class BS, class BP>
struct adjoint_backend {
  template <class S, class P, class T, std::size_t N>
  static void linear_combination(adjoint_state<S, P>& out, const std::array<T, N>& c,
                                 const std::array<const adjoint_state<S, P>*, N>& x) {
    std::array<const S*, N> ys{}, as{};
    std::array<const P*, N> gs{};
    for (std::size_t n = 0; n < N; ++n) {
      ys[n] = &x[n]->y;
      as[n] = &x[n]->a;
      gs[n] = &x[n]->g;
    }
    BS::linear_combination(out.y, c, ys);
    BS::linear_combination(out.a, c, as);
    std::array<state_value_t<P>, N> cp{};
    for (std::size_t n = 0; n < N; ++n) cp[n] = static_cast<state_value_t<P>>(c[n]);
    BP::linear_combination(out.g, cp, gs);
  }
  template <class S, class P, class T>
  static void fill(adjoint_state<S, P>& out, T v) {
    BS::fill(out.y, v);
    BS::fill(out.a, v);
    BP::fill(out.g, v);
  }
  template <class S, class P>
  static auto norm_inf(const adjoint_state<S, P>& x) {
    using V = state_value_t<S>;
    const V a = BS::norm_inf(x.y), b = BS::norm_inf(x.a), c = static_cast<V>(BP::norm_inf(x.g));
    return posenc::detail::nan_propagating_max(posenc::detail::nan_propagating_max(a, b), c);
  }
  template <class S, class P, class T>
  static T scaled_rms(const adjoint_state<S, P>& e, const adjoint_state<S, P>& y0, const adjoint_state<S, P>& y1,
                      T atol, T rtol) {
    const double ny = static_cast<double>(state_traits<S>::size(e.y));
    const double ng = static_cast<double>(state_traits<P>::size(e.g));
    const double ry = BS::scaled_rms(e.y, y0.y, y1.y, atol, rtol);
    const double ra = BS::scaled_rms(e.a, y0.a, y1.a, atol, rtol);
    const double rg = BP::scaled_rms(e.g, y0.g, y1.g, static_cast<state_value_t<P>>(atol), static_cast<state_value_t<P>>(rtol));
    const double n = 2 * ny + ng;
    return n == 0 ? T(0) : static_cast<T>(std::sqrt((ny * (ry * ry + ra * ra) + ng * rg * rg) / n));
  }
  template <class S, class P>
  static bool all_finite(const adjoint_state<S, P>& x) {
    return BS::all_finite(x.y) && BS::all_finite(x.a) && BP::all_finite(x.g);
  }
};
}  // namespace detail

}  // namespace posenc::ode

namespace posenc {
template <StateSpace State, StateSpace Param>
struct state_traits<ode::adjoint_state<State, Param>> {
  using value_type = state_value_t<State>;
  using evaluated_type = ode::adjoint_state<State, Param>;
  using default_backend = ode::detail::adjoint_backend<default_backend_t<State>, default_backend_t<Param>>;
  static std::size_t size(const ode::adjoint_state<State, Param>& x) {
    return 2 * state_traits<State>::size(x.y) + state_traits<Param>::size(x.g);
  }
  static void resize_like(ode::adjoint_state<State, Param>& y, const ode::adjoint_state<State, Param>& x) {
    state_traits<State>::resize_like(y.y, x.y);
    state_traits<State>::resize_like(y.a, x.a);
    state_traits<Param>::resize_like(y.g, x.g);
  }
  static bool same_shape(const ode::adjoint_state<State, Param>& a, const ode::adjoint_state<State, Param>& b) {
    return state_traits<State>::same_shape(a.y, b.y) && state_traits<State>::same_shape(a.a, b.a) &&
           state_traits<Param>::same_shape(a.g, b.g);
  }
};
}  // namespace posenc

namespace posenc::ode {

namespace detail {
/// The augmented dynamics (y' = f, a' = -(df/dy)^T a, g' = -(df/dtheta)^T a).
template <class F, class State, class Param>
struct adjoint_rhs {
  F* f;
  State minus_a;
  std::size_t* nfev;
  std::size_t* nvjp;
  template <class T>
  void operator()(T t, const adjoint_state<State, Param>& z, adjoint_state<State, Param>& dz) {
    using V = state_value_t<State>;
    using BS = default_backend_t<State>;
    (*f)(t, z.y, dz.y);
    BS::linear_combination(minus_a, std::array<V, 1>{V(-1)}, std::array<const State*, 1>{&z.a});
    default_backend_t<Param>::fill(dz.g, 0);
    f->vjp(t, z.y, std::as_const(minus_a), dz.a, dz.g);
    ++*nfev;
    ++*nvjp;
  }
};
}  // namespace detail

/// The continuous adjoint from cached forward states (no forward integration): forward_state(i, y)
/// writes y(t_i) into y (the values the forward pass produced, e.g. a cached table), and
/// add_upstream(i, a) adds dL/dy(t_i) to a (validated by the caller). Backwards from t_{n-1}, each
/// segment [t_i, t_{i-1}] is integrated with the scheme and policy; y restarts from
/// forward_state(i - 1) and a jumps by dL/dy(t_{i-1}) at every output. dL_dtheta must be sized
/// (its value is overwritten); on return dL_dy0 = a(t_0).
template <ExplicitScheme Scheme, class F, StateSpace State, StateSpace Param, class Policy, class Forward,
          class Upstream>
  requires DifferentiableRhs<F, State, Param> && std::same_as<state_value_t<Param>, state_value_t<State>> &&
           std::invocable<Forward&, std::size_t, State&> && std::invocable<Upstream&, std::size_t, State&>
gradient_stats adjoint(Scheme, F& f, std::span<const time_type_for<state_value_t<State>>> times, const Policy& policy,
                       Forward&& forward_state, Upstream&& add_upstream, State& dL_dy0, Param& dL_dtheta) {
  using T = time_type_for<state_value_t<State>>;
  using V = state_value_t<State>;
  using B = default_backend_t<State>;
  using Z = adjoint_state<State, Param>;
  constexpr std::string_view where = "adjoint";
  validate_grid(times);
  posenc::detail::require<non_finite_error>(default_backend_t<Param>::all_finite(dL_dtheta), where,
                                            "dL_dtheta must be sized (and finite) on entry");
  const std::size_t n = times.size();
  gradient_stats stats;
  Z z{State{}, State{}, dL_dtheta};
  forward_state(n - 1, z.y);
  state_traits<State>::resize_like(z.a, z.y);
  B::fill(z.a, 0);
  add_upstream(n - 1, z.a);
  default_backend_t<Param>::fill(z.g, 0);
  detail::adjoint_rhs<F, State, Param> aug{&f, z.y, &stats.rhs_evaluations, &stats.vjp_evaluations};
  explicit_rk<Scheme, Z> stepper(z);
  for (std::size_t i = n - 1; i > 0; --i) {
    const std::array<T, 2> seg{times[i], times[i - 1]};
    const auto st = integrate(stepper, aug, z, std::span<const T>(seg), policy);
    stats.backward_steps += st.steps;
    // Reset y to the forward value (the backward re-integration of y drifts), add dL/dy(t_{i-1}).
    forward_state(i - 1, z.y);
    add_upstream(i - 1, z.a);
  }
  state_traits<State>::resize_like(dL_dy0, z.a);
  B::linear_combination(dL_dy0, std::array<V, 1>{V(1)}, std::array<const State*, 1>{&z.a});
  default_backend_t<Param>::linear_combination(dL_dtheta, std::array<V, 1>{V(1)}, std::array<const Param*, 1>{&z.g});
  return stats;
}

/// Gradient by the continuous adjoint method, integrated backwards with the same scheme and
/// policy as the forward pass (fixed_steps or, for embedded schemes, adaptive).
template <ExplicitScheme Scheme, class F, StateSpace State, StateSpace Param, class Policy>
  requires DifferentiableRhs<F, State, Param> && std::same_as<state_value_t<Param>, state_value_t<State>>
gradient_stats adjoint(Scheme, F& f, const State& y0, std::span<const time_type_for<state_value_t<State>>> times,
                       const Policy& policy, std::span<const State> dL_dy, State& dL_dy0, Param& dL_dtheta) {
  using T = time_type_for<state_value_t<State>>;
  using V = state_value_t<State>;
  using B = default_backend_t<State>;
  constexpr std::string_view where = "adjoint";
  validate_grid(times);
  posenc::detail::require<non_finite_error>(B::all_finite(y0), where, "y0 contains NaN or Inf");
  detail::validate_upstream(dL_dy, y0, times.size(), where);
  posenc::detail::require<non_finite_error>(default_backend_t<Param>::all_finite(dL_dtheta), where,
                                            "dL_dtheta must be sized (and finite) on entry");
  const std::size_t n = times.size();

  // Forward pass: the states at the output times (the only thing the adjoint stores).
  gradient_stats stats;
  std::vector<State> ys;
  ys.reserve(n);
  State y = y0;
  const auto fwd = integrate(Scheme{}, f, y, times, policy,
                             [&](std::size_t, T, const State& yi) { ys.push_back(yi); });
  stats.steps = fwd.steps;
  stats.rhs_evaluations = fwd.rhs_evaluations;
  stats.stored_states = n;

  const auto back = adjoint(
      Scheme{}, f, times, policy, [&](std::size_t i, State& yi) { yi = ys[i]; },
      [&](std::size_t i, State& a) {
        B::linear_combination(a, std::array<V, 2>{V(1), V(1)}, std::array<const State*, 2>{&a, &dL_dy[i]});
      },
      dL_dy0, dL_dtheta);
  stats.backward_steps = back.backward_steps;
  stats.rhs_evaluations += back.rhs_evaluations;
  stats.vjp_evaluations = back.vjp_evaluations;
  return stats;
}

}  // namespace posenc::ode
