// SPDX-License-Identifier: MIT
// Boost.Odeint interop, both ways (Boost 1.74 or later, headers only).
//
//   posenc::odeint::to_odeint(f)        a posenc right-hand side f(t, y, dydt) (or dydt = f(t, y))
//                                       as an odeint system sys(x, dxdt, t)
//   posenc::odeint::from_odeint(sys)    an odeint system as a posenc right-hand side
//   posenc::odeint::algebra<B>,         an odeint Algebra / Operations pair that runs odeint's
//   posenc::odeint::operations<B>       stage sums with posenc backend B (default: the state's
//                                       default backend), one fused linear_combination per sum;
//                                       with it, every posenc StateSpace is an odeint state
//   posenc::odeint::stepper<Scheme, S>  a posenc explicit scheme modelling odeint's Stepper
//                                       concept, usable in odeint's integrate_* functions
//
// Resizing: odeint resizes its stage buffers through is_resizeable / same_size_impl /
// resize_impl. For posenc states odeint does not know (xtensor containers, user states) this
// header specialises those traits with state_traits<S>::same_shape / resize_like. Scalars,
// std::vector and Eigen types keep odeint's own handling; for Eigen this header includes
// odeint's <boost/numeric/odeint/external/eigen/eigen_resize.hpp> when <Eigen/Core> is on the
// include path (it only specialises odeint traits; nothing is added to Eigen's namespace).
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/numeric/odeint/stepper/stepper_categories.hpp>
#include <boost/numeric/odeint/util/is_resizeable.hpp>
#include <boost/numeric/odeint/util/resize.hpp>
#include <boost/numeric/odeint/util/same_size.hpp>
#if __has_include(<Eigen/Core>)
#include <boost/numeric/odeint/external/eigen/eigen_resize.hpp>
#endif

#include <posenc/core/backend.hpp>
#include <posenc/core/state_traits.hpp>
#include <posenc/ode/stepper.hpp>
#include <posenc/ode/tableau.hpp>

namespace posenc::odeint {

// ---- right-hand sides, both ways -----------------------------------------------------------

/// A posenc right-hand side seen as an odeint system: sys(x, dxdt, t) calls f(t, x, dxdt).
template <class F>
struct odeint_system {
  F f;
  template <class S, class T>
  void operator()(const S& x, S& dxdt, T t) {
    posenc::ode::call_rhs(f, t, x, dxdt);
  }
};

template <class F>
odeint_system<std::decay_t<F>> to_odeint(F&& f) {
  return {std::forward<F>(f)};
}

/// An odeint system seen as a posenc right-hand side: f(t, y, dydt) calls sys(y, dydt, t).
template <class Sys>
struct posenc_rhs {
  Sys sys;
  template <class T, class S>
  void operator()(T t, const S& y, S& dydt) {
    sys(y, dydt, t);
  }
};

template <class Sys>
posenc_rhs<std::decay_t<Sys>> from_odeint(Sys&& sys) {
  return {std::forward<Sys>(sys)};
}

// ---- an odeint Algebra + Operations pair on posenc backends ---------------------------------

namespace detail {
template <class B, class S>
using backend_or_default = std::conditional_t<std::is_void_v<B>, default_backend_t<S>, B>;

/// odeint's scale_sumN as one fused posenc linear_combination: t1 = sum_n alpha_n * t_{n+1}.
template <class B, class... Fac>
struct scale_sum {
  std::tuple<Fac...> alpha;
  explicit scale_sum(Fac... a) : alpha(a...) {}

  template <class S, class... X>
    requires(sizeof...(X) == sizeof...(Fac))
  void operator()(S& out, const X&... x) const {
    using V = state_value_t<S>;
    using Backend = backend_or_default<B, S>;
    constexpr std::size_t N = sizeof...(Fac);
    const std::array<const S*, N> ptr{&x...};
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      Backend::linear_combination(out, std::array<V, N>{static_cast<V>(std::get<J>(alpha))...}, ptr);
    }(std::make_index_sequence<N>{});
  }
};
}  // namespace detail

/// odeint Operations whose scale_sumN are fused posenc linear combinations on whole states.
/// Use with posenc::odeint::algebra<B>. B = void: the state's default backend. (Only the
/// scale_sum family is provided: enough for odeint's explicit steppers, used as fixed steppers.)
template <class B = void>
struct operations {
  // clang-format off
  template <class F1 = double> struct scale_sum1 : detail::scale_sum<B, F1> { using detail::scale_sum<B, F1>::scale_sum; };
  template <class F1 = double, class F2 = F1> struct scale_sum2 : detail::scale_sum<B, F1, F2> { using detail::scale_sum<B, F1, F2>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2> struct scale_sum3 : detail::scale_sum<B, F1, F2, F3> { using detail::scale_sum<B, F1, F2, F3>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3> struct scale_sum4 : detail::scale_sum<B, F1, F2, F3, F4> { using detail::scale_sum<B, F1, F2, F3, F4>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4> struct scale_sum5 : detail::scale_sum<B, F1, F2, F3, F4, F5> { using detail::scale_sum<B, F1, F2, F3, F4, F5>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5> struct scale_sum6 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6> struct scale_sum7 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7> struct scale_sum8 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7, class F9 = F8> struct scale_sum9 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7, class F9 = F8, class F10 = F9> struct scale_sum10 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7, class F9 = F8, class F10 = F9, class F11 = F10> struct scale_sum11 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7, class F9 = F8, class F10 = F9, class F11 = F10, class F12 = F11> struct scale_sum12 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7, class F9 = F8, class F10 = F9, class F11 = F10, class F12 = F11, class F13 = F12> struct scale_sum13 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13>::scale_sum; };
  template <class F1 = double, class F2 = F1, class F3 = F2, class F4 = F3, class F5 = F4, class F6 = F5, class F7 = F6, class F8 = F7, class F9 = F8, class F10 = F9, class F11 = F10, class F12 = F11, class F13 = F12, class F14 = F13> struct scale_sum14 : detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14> { using detail::scale_sum<B, F1, F2, F3, F4, F5, F6, F7, F8, F9, F10, F11, F12, F13, F14>::scale_sum; };
  // clang-format on
};

/// odeint Algebra that hands whole states to the operation (like odeint's vector_space_algebra),
/// so each stage sum is one posenc backend call; norm_inf is the backend's (NaN-propagating).
template <class B = void>
struct algebra {
  template <class S1, class Op>
  static void for_each1(S1& s1, Op op) { op(s1); }
  template <class S1, class S2, class Op>
  static void for_each2(S1& s1, S2& s2, Op op) { op(s1, s2); }
  template <class S1, class S2, class S3, class Op>
  static void for_each3(S1& s1, S2& s2, S3& s3, Op op) { op(s1, s2, s3); }
  template <class S1, class S2, class S3, class S4, class Op>
  static void for_each4(S1& s1, S2& s2, S3& s3, S4& s4, Op op) { op(s1, s2, s3, s4); }
  template <class S1, class S2, class S3, class S4, class S5, class Op>
  static void for_each5(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, Op op) { op(s1, s2, s3, s4, s5); }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class Op>
  static void for_each6(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, Op op) { op(s1, s2, s3, s4, s5, s6); }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class S7, class Op>
  static void for_each7(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, S7& s7, Op op) {
    op(s1, s2, s3, s4, s5, s6, s7);
  }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class S7, class S8, class Op>
  static void for_each8(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, S7& s7, S8& s8, Op op) {
    op(s1, s2, s3, s4, s5, s6, s7, s8);
  }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class S7, class S8, class S9, class Op>
  static void for_each9(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, S7& s7, S8& s8, S9& s9, Op op) {
    op(s1, s2, s3, s4, s5, s6, s7, s8, s9);
  }
  template <class S1, class S2, class S3, class S4, class S5, class S6, class S7, class S8, class S9, class S10,
            class Op>
  static void for_each10(S1& s1, S2& s2, S3& s3, S4& s4, S5& s5, S6& s6, S7& s7, S8& s8, S9& s9, S10& s10, Op op) {
    op(s1, s2, s3, s4, s5, s6, s7, s8, s9, s10);
  }
  template <class S>
  static state_value_t<S> norm_inf(const S& s) {
    return detail::backend_or_default<B, S>::norm_inf(s);
  }
};

// ---- posenc schemes as odeint steppers ------------------------------------------------------

/// A posenc explicit scheme modelling odeint's Stepper concept (stepper_tag): usable in
/// boost::numeric::odeint::integrate_const / integrate_n_steps / integrate_times with a fixed
/// step. The workspace is sized on the first do_step (and again if the state's shape changes).
/// Each do_step is a function of (system, x, t, dt) alone: nothing is cached between steps, so
/// the state may be changed between calls (an FSAL scheme's weight-0 last stage is skipped).
template <posenc::ode::ExplicitScheme Scheme, StateSpace State, class Backend = default_backend_t<State>>
class stepper {
 public:
  using rk_type = posenc::ode::explicit_rk<Scheme, State, Backend>;
  using state_type = State;
  using deriv_type = State;
  using value_type = state_value_t<State>;
  using time_type = typename rk_type::time_type;
  using order_type = unsigned short;
  using stepper_category = boost::numeric::odeint::stepper_tag;
  static constexpr order_type order_value = static_cast<order_type>(Scheme::order);

  stepper() = default;
  explicit stepper(const State& like) : m_rk(like), m_sized(true) {}

  [[nodiscard]] static constexpr order_type order() noexcept { return order_value; }

  /// In place: x(t) -> x(t + dt). sys is an odeint system sys(x, dxdt, t).
  template <class System>
  void do_step(System system, State& x, time_type t, time_type dt) {
    prepare(x);
    auto f = from_odeint(std::ref(unwrap(system)));
    m_rk.step(f, t, x, dt);
  }

  /// Out of place: out = x(t + dt) from in = x(t).
  template <class System>
  void do_step(System system, const State& in, time_type t, State& out, time_type dt) {
    if (!state_traits<State>::same_shape(out, in)) state_traits<State>::resize_like(out, in);
    posenc::linear_combination<Backend>(out, value_type(1), in);
    do_step(system, out, t, dt);
  }

  /// For symmetry with odeint's steppers; nothing is cached between steps.
  void reset() noexcept { m_rk.reset(); }

  [[nodiscard]] const rk_type& engine() const noexcept { return m_rk; }

 private:
  template <class Sys>
  static auto& unwrap(Sys& s) {
    if constexpr (requires { s.get(); }) return s.get();  // boost::ref / std::ref
    else return s;
  }

  void prepare(const State& x) {
    if (!m_sized || !m_rk.fits(x)) {
      m_rk.resize_like(x);
      m_sized = true;
    }
  }

  rk_type m_rk{};
  bool m_sized = false;
};

}  // namespace posenc::odeint

// ---- odeint's resizing traits for posenc states it does not know --------------------------------

namespace posenc::odeint::detail {
/// States whose odeint resizing comes from posenc's state_traits: every StateSpace except
/// scalars, std::vector and Eigen types (odeint, or its Eigen adapter, handles those).
template <class S>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

template <class S>
concept adopted_state = StateSpace<S> && !std::is_arithmetic_v<S> && !is_std_vector<S>::value &&
                        !requires { typename S::PlainObject; };  // Eigen dense types
}  // namespace posenc::odeint::detail

namespace boost::numeric::odeint {

template <class S>
struct is_resizeable_sfinae<S, std::enable_if_t<posenc::odeint::detail::adopted_state<S>>> {
  using type = boost::true_type;
  static constexpr bool value = true;
};

template <class S>
struct same_size_impl_sfinae<S, S, std::enable_if_t<posenc::odeint::detail::adopted_state<S>>> {
  static bool same_size(const S& a, const S& b) { return posenc::state_traits<S>::same_shape(a, b); }
};

template <class S>
struct resize_impl_sfinae<S, S, std::enable_if_t<posenc::odeint::detail::adopted_state<S>>> {
  static void resize(S& out, const S& in) { posenc::state_traits<S>::resize_like(out, in); }
};

}  // namespace boost::numeric::odeint
