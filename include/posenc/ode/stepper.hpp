// SPDX-License-Identifier: MIT
// One generic explicit Runge-Kutta engine for every tableau. The stepper owns its workspace
// (stage derivatives, one stage input, the error vector): it allocates in resize_like() and
// never inside step(). Stage sums are fused: each is one Backend::linear_combination pass over
// memory, with the tableau's zero coefficients dropped at compile time.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <posenc/core/backend.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/core/state_traits.hpp>
#include <posenc/ode/tableau.hpp>

namespace posenc::ode {

/// The time type used with a state of scalar T: double, or long double for long double states.
template <class T>
using time_type_for = std::conditional_t<(sizeof(T) > sizeof(double)), T, double>;

/// Call a right-hand side in either supported form: f(t, y, dydt) (in place, preferred) or
/// dydt = f(t, y) (the result is assigned, so an expression-template proxy is evaluated).
template <class F, class Time, class S>
POSENC_ALWAYS_INLINE inline void call_rhs(F& f, Time t, const S& y, S& dydt) {
  if constexpr (requires { f(t, y, dydt); }) {
    f(t, y, dydt);
  } else if constexpr (requires { dydt = f(t, y); }) {
    dydt = f(t, y);
  } else {
    static_assert(sizeof(F) == 0, "posenc: the right-hand side must be callable as f(t, y, dydt) or dydt = f(t, y)");
  }
}

namespace detail {
template <std::size_t N>
struct index_list {
  std::array<std::size_t, N> index{};
};

/// Indices j of the non-zero entries of a coefficient row, known at compile time.
template <auto Row, std::size_t Limit>
constexpr auto nonzero_indices() {
  constexpr std::size_t n = [] {
    std::size_t k = 0;
    for (std::size_t j = 0; j < Limit; ++j)
      if (Row[j] != 0) ++k;
    return k;
  }();
  index_list<n> r;
  std::size_t k = 0;
  for (std::size_t j = 0; j < Limit; ++j)
    if (Row[j] != 0) r.index[k++] = j;
  return r;
}

template <class Sch>
constexpr auto error_weights() {
  constexpr auto& t = Sch::coefficients;
  std::array<long double, t.stages> e{};
  for (std::size_t j = 0; j < t.stages; ++j) e[j] = t.b[j] - t.b_low[j];
  return e;
}
}  // namespace detail

// ---- the stage sums: written once, used by the stepper, the gradient drivers and FLOATER --------

/// Indices j < I with a_Ij != 0: the terms of stage I's input.
template <ExplicitScheme Scheme, std::size_t I>
inline constexpr auto stage_terms = detail::nonzero_indices<Scheme::coefficients.a[I], I>();

/// Indices j with b_j != 0: the terms of the solution update.
template <ExplicitScheme Scheme>
inline constexpr auto solution_terms = detail::nonzero_indices<Scheme::coefficients.b, stages_v<Scheme>>();

/// The time of stage I of a step of size h from t: t + c_I h, in the step's time type. Every
/// stage time in posenc is formed here (the stepper, the gradient drivers, FLOATER's batched
/// replay), so a recomputed stage sees the forward's time bit for bit.
template <ExplicitScheme Scheme, std::size_t I, class Time>
[[nodiscard]] POSENC_ALWAYS_INLINE constexpr Time stage_time(Time t, Time h) {
  return t + static_cast<Time>(Scheme::coefficients.c[I]) * h;
}

namespace detail {
/// The weights of stage I's input for a step h, in the order of stage_terms: V(h * a_Ij). Every
/// stage sum in posenc takes its coefficients from here, so a recomputed stage equals the
/// forward one bit for bit.
template <class V, ExplicitScheme Scheme, std::size_t I, class Time>
[[nodiscard]] POSENC_ALWAYS_INLINE constexpr auto stage_weights(Time h) {
  constexpr auto& terms = stage_terms<Scheme, I>;
  std::array<V, terms.index.size()> w{};
  for (std::size_t m = 0; m < terms.index.size(); ++m)
    w[m] = static_cast<V>(h * static_cast<Time>(Scheme::coefficients.a[I][terms.index[m]]));
  return w;
}

/// The weights of the solution update, in the order of solution_terms: V(h * b_j).
template <class V, ExplicitScheme Scheme, class Time>
[[nodiscard]] POSENC_ALWAYS_INLINE constexpr auto solution_weights(Time h) {
  constexpr auto& terms = solution_terms<Scheme>;
  std::array<V, terms.index.size()> w{};
  for (std::size_t m = 0; m < terms.index.size(); ++m)
    w[m] = static_cast<V>(h * static_cast<Time>(Scheme::coefficients.b[terms.index[m]]));
  return w;
}

/// out = base + sum_m w_m k[idx_m] as one Backend::linear_combination pass: the coefficients are
/// handed over as (1, w_1, w_2, ...) in W's element type, the base first.
template <class Backend, class State, class W, class Terms, class K, std::size_t... M>
POSENC_ALWAYS_INLINE inline void base_plus(State& out, const State& base, const W& w, const Terms& terms, const K& k, std::index_sequence<M...>) {
  using C = typename W::value_type;
  Backend::linear_combination(out, std::array<C, sizeof...(M) + 1>{C(1), w[M]...},
                              std::array<const State*, sizeof...(M) + 1>{&base, &k[terms.index[M]]...});
}

/// The stage sum of stage I with its weights already formed: out = y + sum_m w_m k_{j_m} over
/// stage_terms<Scheme, I> (one Backend::linear_combination pass, coefficients (1, w_1, w_2, ...)).
/// stage_input passes stage_weights(h); a batch of independent steps stacked as rows, each with
/// its own h, passes one weight per term that the backend applies row by row (FLOATER's replay,
/// floater/replay.hpp). The one stage sum of posenc: every caller folds the same terms in the
/// same order.
template <ExplicitScheme Scheme, std::size_t I, class Backend, class State, class W, class K>
POSENC_ALWAYS_INLINE inline void stage_input_weighted(State& out, const State& y, const W& w, const K& k) {
  constexpr auto& terms = stage_terms<Scheme, I>;
  static_assert(std::tuple_size_v<W> == terms.index.size(), "one weight per term of the stage");
  detail::base_plus<Backend>(out, y, w, terms, k, std::make_index_sequence<terms.index.size()>{});
}

/// The solution update with its weights already formed: out = y + sum_m w_m k_{j_m} over
/// solution_terms<Scheme> (out may alias y).
template <ExplicitScheme Scheme, class Backend, class State, class W, class K>
POSENC_ALWAYS_INLINE inline void solution_sum_weighted(State& out, const State& y, const W& w, const K& k) {
  constexpr auto& terms = solution_terms<Scheme>;
  static_assert(std::tuple_size_v<W> == terms.index.size(), "one weight per term of the solution");
  detail::base_plus<Backend>(out, y, w, terms, k, std::make_index_sequence<terms.index.size()>{});
}

/// The stage sum Y_I = y + h sum_{j<I} a_Ij k_j (one fused pass; a copy of y for I = 0 or an
/// empty row). k: anything indexable by the stage number (std::array / std::vector of states).
template <ExplicitScheme Scheme, std::size_t I, class Backend, class State, class Time, class K>
POSENC_ALWAYS_INLINE inline void stage_input(State& out, const State& y, Time h, const K& k) {
  detail::stage_input_weighted<Scheme, I, Backend>(out, y, stage_weights<state_value_t<State>, Scheme, I>(h), k);
}

/// The solution update out = y + h sum_j b_j k_j (out may alias y).
template <ExplicitScheme Scheme, class Backend, class State, class Time, class K>
POSENC_ALWAYS_INLINE inline void solution_sum(State& out, const State& y, Time h, const K& k) {
  detail::solution_sum_weighted<Scheme, Backend>(out, y, solution_weights<state_value_t<State>, Scheme>(h), k);
}
}  // namespace detail

/// The generic explicit Runge-Kutta stepper: scheme x state x backend.
/// Thread safety: one per thread (step() writes the stage workspace; docs/thread-safety.md).
template <ExplicitScheme Scheme, StateSpace State, class Backend = default_backend_t<State>>
  requires BackendFor<Backend, State>
class explicit_rk {
 public:
  using scheme_type = Scheme;
  using state_type = State;
  using backend_type = Backend;
  using value_type = state_value_t<State>;
  using time_type = time_type_for<value_type>;
  static constexpr std::size_t stages = stages_v<Scheme>;
  static constexpr int order = Scheme::order;
  static constexpr bool embedded = EmbeddedScheme<Scheme>;
  static constexpr bool fsal = is_fsal<Scheme>();

  explicit_rk() = default;
  explicit explicit_rk(const State& like) { resize_like(like); }

  /// Allocate the workspace for states shaped like `like` (the only allocation).
  void resize_like(const State& like) {
    for (auto& k : m_k) state_traits<State>::resize_like(k, like);
    state_traits<State>::resize_like(m_tmp, like);
    if constexpr (embedded) state_traits<State>::resize_like(m_err, like);
    // Hermite dense output of a non-FSAL pair needs f(t + h, y1): its buffer is part of the workspace.
    if constexpr (embedded && !fsal && !SchemeWithDenseOutput<Scheme>) state_traits<State>::resize_like(m_f1, like);
    m_first_ready = false;
  }

  [[nodiscard]] bool fits(const State& y) const { return state_traits<State>::same_shape(m_tmp, y); }

  /// One step of size h (negative for reverse time) from (t, y); y is replaced by y(t + h).
  /// With an FSAL scheme the last stage (weight 0) is not evaluated: a fixed step costs
  /// stages - 1 evaluations, and every step is a function of (t, y, h) alone, so steps are
  /// reproducible bit for bit (which gradient recomputation relies on). A NaN or infinite t or h
  /// throws non_finite_error naming it (it made every stage, and y, NaN).
  template <class Rhs>
  POSENC_ALWAYS_INLINE void step(Rhs& f, time_type t, State& y, time_type h) {
    check_shape(y, "explicit_rk::step");
    check_time(t, h, "explicit_rk::step");
    m_first_ready = false;
    compute_stages(f, t, y, h);
    combine_solution(y, y, h);
  }

  /// One step of an embedded pair from (t, y0) into y1 (y1 must not alias y0). Returns the
  /// scaled RMS norm of the error estimate (accept when <= 1).
  template <class Rhs>
    requires EmbeddedScheme<Scheme>
  value_type step_with_error(Rhs& f, time_type t, const State& y0, State& y1, time_type h, value_type atol,
                             value_type rtol) {
    check_shape(y0, "explicit_rk::step_with_error");
    check_shape(y1, "explicit_rk::step_with_error");
    check_time(t, h, "explicit_rk::step_with_error");
    compute_stages(f, t, y0, h);
    combine_solution(y1, y0, h);
    if constexpr (fsal) evaluate_last_stage(f, t, h, y1);
    combine_error(h);
    return Backend::scaled_rms(m_err, y0, y1, atol, rtol);
  }

  /// After an accepted step of an FSAL scheme, the last stage is the next step's first.
  void accept() noexcept {
    if constexpr (fsal) {
      using std::swap;
      swap(m_k[0], m_k[stages - 1]);
      m_first_ready = true;
    } else {
      m_first_ready = false;
    }
  }

  /// After a rejected step: y is unchanged, so the first stage f(t, y) is kept for the retry.
  void reject() noexcept { m_first_ready = true; }

  /// Forget any cached first stage (call when y is changed between steps).
  void reset() noexcept { m_first_ready = false; }

  /// Dense output inside the last step [t, t + h]: out = y(t + theta h), theta in [0, 1].
  /// Uses the scheme's continuous extension when it has one, else cubic Hermite interpolation
  /// from y0, y1, f(t, y0) and f(t + h, y1) (the latter free for FSAL schemes). theta outside
  /// [0, 1] (or NaN) throws invalid_argument naming theta; y0, y1 and out must have the shape of
  /// the workspace (shape_error).
  template <class Rhs>
  void dense_output(Rhs& f, time_type t, time_type h, value_type theta, const State& y0, const State& y1,
                    State& out) {
    posenc::detail::require(theta >= 0 && theta <= 1, "explicit_rk::dense_output",
                            "theta: expected a fraction of the last step in [0, 1], got ", theta);
    check_time(t, h, "explicit_rk::dense_output");
    check_shape(y0, "explicit_rk::dense_output");
    check_shape(y1, "explicit_rk::dense_output");
    check_shape(out, "explicit_rk::dense_output");
    if constexpr (SchemeWithDenseOutput<Scheme>) {
      (void)f;
      (void)t;
      (void)y1;
      dense_combination(out, y0, h, theta, std::make_index_sequence<stages>{});
    } else {
      const State* f1 = nullptr;
      if constexpr (fsal) {
        f1 = &m_k[stages - 1];
      } else {
        if (!m_have_f1) {
          state_traits<State>::resize_like(m_f1, y1);
          call_rhs(f, t + h, y1, m_f1);
          ++m_nfev;
          m_have_f1 = true;
        }
        f1 = &m_f1;
      }
      const value_type th = theta, th2 = th * th, th3 = th2 * th, hv = static_cast<value_type>(h);
      const value_type h00 = 2 * th3 - 3 * th2 + 1, h10 = th3 - 2 * th2 + th, h01 = -2 * th3 + 3 * th2,
                       h11 = th3 - th2;
      Backend::linear_combination(out, std::array<value_type, 4>{h00, h10 * hv, h01, h11 * hv},
                                  std::array<const State*, 4>{&y0, &m_k[0], &y1, f1});
    }
  }

  [[nodiscard]] std::size_t rhs_evaluations() const noexcept { return m_nfev; }
  void reset_counters() noexcept { m_nfev = 0; }

 private:
  // A state of another shape than the workspace would be read out of bounds: refuse it (the
  // integrate() drivers resize the workspace instead). One shape comparison per step.
  // The message is built out of line, in a cold function: the step itself keeps one comparison.
  POSENC_ALWAYS_INLINE void check_shape(const State& y, const char* where) const {
    if (!fits(y)) [[unlikely]]
      shape_mismatch(y, where);
  }
  POSENC_ALWAYS_INLINE static void check_time(time_type t, time_type h, const char* where) {
    if (!(std::isfinite(t) && std::isfinite(h))) [[unlikely]]
      time_not_finite(t, h, where);
  }
  [[noreturn]] POSENC_COLD static void time_not_finite(time_type t, time_type h, const char* where) {
    posenc::detail::fail<non_finite_error>(where, "t, h: expected a finite time and step size, got t = ", t, ", h = ", h);
  }
  [[noreturn]] POSENC_COLD void shape_mismatch(const State& y, const char* where) const {
    posenc::detail::fail<shape_error>(where, "the state y (", state_traits<State>::size(y),
                                      " scalars) does not have the shape of the stepper's workspace (",
                                      state_traits<State>::size(m_tmp), " scalars); call resize_like(y) first");
  }

  template <class Rhs>
  POSENC_ALWAYS_INLINE void compute_stages(Rhs& f, time_type t, const State& y, time_type h) {
    m_have_f1 = false;
    if (!m_first_ready) {
      call_rhs(f, t, y, m_k[0]);
      ++m_nfev;
    }
    m_first_ready = false;
    constexpr std::size_t last = fsal ? stages - 1 : stages;
    later_stages(f, t, y, h, std::make_index_sequence<(last > 0 ? last - 1 : 0)>{});
  }

  template <class Rhs, std::size_t... I>
  POSENC_ALWAYS_INLINE void later_stages([[maybe_unused]] Rhs& f, [[maybe_unused]] time_type t,
                                         [[maybe_unused]] const State& y, [[maybe_unused]] time_type h,
                                         std::index_sequence<I...>) {
    (stage<I + 1>(f, t, y, h), ...);
  }

  template <std::size_t I, class Rhs>
  POSENC_ALWAYS_INLINE void stage(Rhs& f, time_type t, const State& y, time_type h) {
    const time_type ti = stage_time<Scheme, I>(t, h);
    if constexpr (stage_terms<Scheme, I>.index.size() == 0) {
      call_rhs(f, ti, y, m_k[I]);
    } else {
      detail::stage_input<Scheme, I, Backend>(m_tmp, y, h, m_k);
      call_rhs(f, ti, m_tmp, m_k[I]);
    }
    ++m_nfev;
  }

  POSENC_ALWAYS_INLINE void combine_solution(State& out, const State& y, time_type h) { detail::solution_sum<Scheme, Backend>(out, y, h, m_k); }

  void combine_error(time_type h) {
    static constexpr auto row = detail::error_weights<Scheme>();
    static constexpr auto terms = detail::nonzero_indices<row, stages>();
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      Backend::linear_combination(
          m_err, std::array<value_type, sizeof...(J)>{static_cast<value_type>(h * static_cast<time_type>(row[terms.index[J]]))...},
          std::array<const State*, sizeof...(J)>{&m_k[terms.index[J]]...});
    }(std::make_index_sequence<terms.index.size()>{});
  }

  template <class Rhs>
  void evaluate_last_stage(Rhs& f, time_type t, time_type h, const State& y1) {
    call_rhs(f, t + h, y1, m_k[stages - 1]);
    ++m_nfev;
  }

  template <std::size_t... I>
  void dense_combination(State& out, const State& y0, time_type h, value_type theta, std::index_sequence<I...>) {
    auto bi = [theta](std::size_t i) {
      const auto& d = Scheme::dense[i];
      value_type s = 0, p = theta;
      for (std::size_t q = 0; q < d.size(); ++q, p *= theta) s += static_cast<value_type>(d[q]) * p;
      return s;
    };
    const value_type hv = static_cast<value_type>(h);
    Backend::linear_combination(out, std::array<value_type, stages + 1>{value_type(1), (hv * bi(I))...},
                                std::array<const State*, stages + 1>{&y0, &m_k[I]...});
  }

  std::array<State, stages> m_k{};
  State m_tmp{};
  std::conditional_t<embedded, State, char> m_err{};
  State m_f1{};
  std::size_t m_nfev = 0;
  bool m_first_ready = false;
  bool m_have_f1 = false;
};

}  // namespace posenc::ode
