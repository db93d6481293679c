// SPDX-License-Identifier: MIT
// Thrust adapter: thrust::host_vector<T> and thrust::device_vector<T> (T = float, double) are ODE
// states, with backend::thrust as their default backend. Every operation is one Thrust algorithm
// over a counting iterator (or the vector itself) with a POSENC_HD functor holding raw pointers,
// so the same code runs on the device system chosen at compile time: THRUST_DEVICE_SYSTEM_CPP or
// _OMP (or _TBB) with g++/clang++, THRUST_DEVICE_SYSTEM_CUDA with nvcc. A stage sum
// out = sum_n c_n x_n is ONE pass (one thrust::for_each), norms are one thrust::transform_reduce.
//
// Device allocations go through posenc::detail::device_allocate(): an allocation failure (std::bad_alloc,
// thrust's bad_alloc, or a thrust::system_error from the device runtime) becomes a
// posenc::device_error naming the function and the number of bytes requested.
//
// nvcc needs --expt-relaxed-constexpr (constexpr host helpers are called from device code).
#pragma once

#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/fill.h>
#include <thrust/for_each.h>
#include <thrust/host_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/system_error.h>
#include <thrust/transform_reduce.h>

#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include <posenc/core/backend.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/hd.hpp>
#include <posenc/core/state_traits.hpp>

namespace posenc {
namespace backend {
struct thrust;
}

namespace detail {

template <class V>
struct thrust_vector_info : std::false_type {};
template <class T, class A>
struct thrust_vector_info<::thrust::host_vector<T, A>> : std::true_type {
  static constexpr bool on_device = false;
};
template <class T, class A>
struct thrust_vector_info<::thrust::device_vector<T, A>> : std::true_type {
  static constexpr bool on_device = true;
};

/// thrust::host_vector<T> or thrust::device_vector<T> of a floating-point T.
template <class S>
concept thrust_float_vector = thrust_vector_info<S>::value && std::floating_point<typename S::value_type>;

/// The Thrust execution policy of a vector type: thrust::device for device_vector (the system
/// of THRUST_DEVICE_SYSTEM), thrust::host for host_vector.
template <class S>
constexpr auto thrust_policy() {
  if constexpr (thrust_vector_info<S>::on_device)
    return ::thrust::device;
  else
    return ::thrust::host;
}

/// Raw pointer to a Thrust vector's elements, nullptr when empty (Thrust's data() dereferences
/// front(), undefined for an empty vector).
template <class V>
auto raw_data(V& v) noexcept {
  using P = decltype(::thrust::raw_pointer_cast(v.data()));
  return v.empty() ? P(nullptr) : ::thrust::raw_pointer_cast(v.data());
}

/// Run f() (an allocation of `bytes` bytes); turn allocation failures into device_error.
template <class F>
decltype(auto) device_allocate(std::size_t bytes, std::string_view where, F&& f) {
  try {
    return std::forward<F>(f)();
  } catch (const std::bad_alloc& e) {  // thrust::system::detail::bad_alloc derives from it
    fail<device_error>(where, "could not allocate ", bytes, " bytes on the device (", e.what(), ")");
  } catch (const ::thrust::system_error& e) {
    fail<device_error>(where, "device error while allocating ", bytes, " bytes (", e.what(), ")");
  } catch (const std::length_error& e) {
    fail<device_error>(where, "could not allocate ", bytes, " bytes on the device (", e.what(), ")");
  }
}

/// Bytes of n elements of T; throws device_error if n * sizeof(T) overflows.
template <class T>
std::size_t bytes_for(std::size_t n, std::string_view where) {
  require<device_error>(n <= std::numeric_limits<std::size_t>::max() / sizeof(T), where, "a buffer of ", n,
                        " elements of ", sizeof(T), " bytes does not fit in the address space");
  return n * sizeof(T);
}

/// v.resize(n), with allocation failures reported as device_error.
template <class V>
void guarded_resize(V& v, std::size_t n, std::string_view where) {
  if (v.size() == n) return;
  const std::size_t bytes = bytes_for<typename V::value_type>(n, where);
  device_allocate(bytes, where, [&] {
    if (v.empty()) {
      V fresh(n);  // not resize(): growing an empty Thrust vector copies a null range (UBSan)
      v.swap(fresh);
    } else {
      v.resize(n);
    }
  });
}

template <class T>
POSENC_HD constexpr T abs_hd(T v) noexcept {
  return v < T(0) ? -v : v;  // NaN stays NaN
}
template <class T>
POSENC_HD constexpr bool finite_hd(T v) noexcept {
  return v - v == T(0);  // false for NaN and +-Inf (Inf - Inf = NaN)
}

/// out[i] = sum_n c[n] * x[n][i]: one pass, whatever N. Summed right to left,
/// c0 x0 + (c1 x1 + (... + c_{N-1} x_{N-1})), the order of backend::serial (scalars and ranges)
/// and backend::eigen, so one stage sum gives the same bits on every backend when the compiler
/// does not contract a * b + c into an FMA (tests/core/backend_order.test.cpp: a double, a
/// std::vector<double>{1}, a std::array and an Eigen vector take bitwise the same steps;
/// tests/thrust/ode.test.cpp: Thrust's CPP system, and CUDA on a GPU, against backend::serial).
/// Each product is rounded on its own (detail::mul_rn): nvcc would otherwise contract c x + acc
/// into an FMA (its default --fmad=true) and the device results would differ in the last bit.
/// (g++ contracts host code with -ffp-contract=fast on an FMA target, -march=haswell and later.)
template <class T, std::size_t N>
struct linear_combination_fn {
  T* out;
  const T* x[N];
  T c[N];
  POSENC_HD void operator()(std::size_t i) const {
    T acc = detail::mul_rn(c[N - 1], x[N - 1][i]);
    for (std::size_t n = N - 1; n-- > 0;) acc = detail::mul_rn(c[n], x[n][i]) + acc;
    out[i] = acc;
  }
};

template <class T>
struct abs_fn {
  POSENC_HD T operator()(T v) const { return abs_hd(v); }
};
template <class T>
struct nan_max_fn {
  POSENC_HD T operator()(T a, T b) const { return nan_propagating_max(a, b); }
};
template <class T>
struct not_finite_fn {
  POSENC_HD int operator()(T v) const { return finite_hd(v) ? 0 : 1; }
};

/// ((e_i / (atol + rtol max(|y0_i|, |y1_i|)))^2, accumulated in R.
template <class T, class R>
struct scaled_square_fn {
  const T* e;
  const T* y0;
  const T* y1;
  R atol, rtol;
  POSENC_HD R operator()(std::size_t i) const {
    const R a = abs_hd(static_cast<R>(y0[i])), b = abs_hd(static_cast<R>(y1[i]));
    const R s = atol + mul_rn(rtol, a > b ? a : b);  // products rounded as on the host (mul_rn)
    const R r = static_cast<R>(e[i]) / s;
    return mul_rn(r, r);
  }
};

}  // namespace detail

/// thrust::host_vector<T> and thrust::device_vector<T> (T float or double) as ODE states.
template <detail::thrust_float_vector S>
struct state_traits<S> {
  using value_type = typename S::value_type;
  using default_backend = backend::thrust;
  static std::size_t size(const S& x) noexcept { return x.size(); }
  static void resize_like(S& y, const S& x) { detail::guarded_resize(y, x.size(), "state_traits<thrust vector>::resize_like"); }
  static bool same_shape(const S& a, const S& b) noexcept { return a.size() == b.size(); }
};

namespace backend {

/// Thrust algorithms on the vector's own system (host_vector: thrust::host; device_vector:
/// thrust::device, i.e. THRUST_DEVICE_SYSTEM). One algorithm call per operation.
struct thrust {
  template <detail::thrust_float_vector S, class C, std::size_t N>
  static void linear_combination(S& out, const std::array<C, N>& c, const std::array<const S*, N>& x) {
    using T = typename S::value_type;
    detail::linear_combination_fn<T, N> f{};
    f.out = posenc::detail::raw_data(out);
    for (std::size_t n = 0; n < N; ++n) {
      f.x[n] = posenc::detail::raw_data(*x[n]);
      f.c[n] = static_cast<T>(c[n]);
    }
    ::thrust::for_each(detail::thrust_policy<S>(), ::thrust::counting_iterator<std::size_t>(0),
                       ::thrust::counting_iterator<std::size_t>(out.size()), f);
  }

  // Algorithms run over raw pointers (with the vector's execution policy), never over the
  // vectors' iterators: dereferencing a thrust::device_reference on the host goes through a
  // null system pointer inside Thrust, which UBSan reports for the CPP/OMP systems.
  template <detail::thrust_float_vector S, class C>
  static void fill(S& out, C v) {
    auto* p = posenc::detail::raw_data(out);
    ::thrust::fill(detail::thrust_policy<S>(), p, p + out.size(), static_cast<typename S::value_type>(v));
  }

  template <detail::thrust_float_vector S>
  static typename S::value_type norm_inf(const S& x) {
    using T = typename S::value_type;
    const T* p = posenc::detail::raw_data(x);
    return ::thrust::transform_reduce(detail::thrust_policy<S>(), p, p + x.size(), detail::abs_fn<T>{}, T(0),
                                      detail::nan_max_fn<T>{});
  }

  template <detail::thrust_float_vector S, class R>
  static R scaled_rms(const S& e, const S& y0, const S& y1, R atol, R rtol) {
    using T = typename S::value_type;
    const std::size_t m = e.size();
    if (m == 0) return R(0);
    // Summed in double whatever T: the norm (hence every step-size decision of adaptive runs)
    // does not depend on the reduction order, so CPP, OMP (any thread count) and CUDA take the
    // same steps.
    using A = std::conditional_t<(sizeof(R) > sizeof(double)), R, double>;
    const detail::scaled_square_fn<T, A> f{posenc::detail::raw_data(e), posenc::detail::raw_data(y0),
                                           posenc::detail::raw_data(y1), static_cast<A>(atol),
                                           static_cast<A>(rtol)};
    const A acc = ::thrust::transform_reduce(detail::thrust_policy<S>(), ::thrust::counting_iterator<std::size_t>(0),
                                             ::thrust::counting_iterator<std::size_t>(m), f, A(0),
                                             ::thrust::plus<A>());
    return static_cast<R>(std::sqrt(acc / static_cast<A>(m)));
  }

  template <detail::thrust_float_vector S>
  static bool all_finite(const S& x) {
    using T = typename S::value_type;
    const T* p = posenc::detail::raw_data(x);
    return ::thrust::transform_reduce(detail::thrust_policy<S>(), p, p + x.size(), detail::not_finite_fn<T>{}, 0,
                                      ::thrust::maximum<int>()) == 0;
  }
};

}  // namespace backend
}  // namespace posenc
