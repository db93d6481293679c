// SPDX-License-Identifier: MIT
// The ODE core on Thrust vectors: thrust::host_vector and thrust::device_vector (on the device
// system this executable was built for) are conforming states, backend::thrust's operations agree
// with backend::serial, and integrating a damped-rotation problem with several schemes (fixed and
// adaptive) gives the std::vector result.
#include <doctest/doctest.h>

#include <posenc/adapters/thrust.hpp>
#include <posenc/ode.hpp>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace {

static_assert(posenc::StateSpace<thrust::device_vector<double>>);
static_assert(posenc::StateSpace<thrust::host_vector<float>>);
static_assert(posenc::BackendFor<posenc::backend::thrust, thrust::device_vector<float>>);
static_assert(std::is_same_v<posenc::default_backend_t<thrust::device_vector<double>>, posenc::backend::thrust>);
static_assert(std::is_same_v<posenc::default_backend_t<thrust::host_vector<double>>, posenc::backend::thrust>);

template <class V>
std::vector<double> to_std(const V& v) {
  thrust::host_vector<typename V::value_type> h = v;
  return std::vector<double>(h.begin(), h.end());
}

template <class V, class T>
V from_std(const std::vector<T>& s) {
  thrust::host_vector<typename V::value_type> h(s.begin(), s.end());
  return V(h.begin(), h.end());
}

// The damped rotation y_{2k}' = w_k y_{2k+1} - mu_k y_{2k}, y_{2k+1}' = -w_k y_{2k} - mu_k y_{2k+1};
// from y = (0, 1, 0, 1, ...) the exact solution is e^{-mu_k t} (sin w_k t, cos w_k t).
constexpr std::size_t pairs = 6;
inline double freq(std::size_t k) { return 0.3 + 0.7 * static_cast<double>(k); }
inline double damp(std::size_t k) { return 0.05 * static_cast<double>(k); }

template <class T>
struct rot_fn {
  const T* y;
  T* dy;
  const T* w;
  const T* mu;
  POSENC_HD void operator()(std::size_t i) const {
    const std::size_t k = i / 2;
    // products rounded on their own (nvcc would contract them into FMAs in device code), so the
    // device, host_vector and std::vector right-hand sides are bitwise equal
    using posenc::detail::mul_rn;
    const T partner = (i % 2 == 0) ? mul_rn(w[k], y[i + 1]) : -mul_rn(w[k], y[i - 1]);
    dy[i] = partner - mul_rn(mu[k], y[i]);
  }
};

template <class V>
struct rot_rhs {
  using T = typename V::value_type;
  V w, mu;
  rot_rhs() {
    std::vector<T> ws(pairs), ms(pairs);
    for (std::size_t k = 0; k < pairs; ++k) {
      ws[k] = static_cast<T>(freq(k));
      ms[k] = static_cast<T>(damp(k));
    }
    w = from_std<V>(ws);
    mu = from_std<V>(ms);
  }
  void operator()(double, const V& y, V& dy) const {
    rot_fn<T> f{thrust::raw_pointer_cast(y.data()), thrust::raw_pointer_cast(dy.data()),
                thrust::raw_pointer_cast(w.data()), thrust::raw_pointer_cast(mu.data())};
    thrust::for_each(posenc::detail::thrust_policy<V>(), thrust::counting_iterator<std::size_t>(0),
                     thrust::counting_iterator<std::size_t>(y.size()), f);
  }
};

// The same right-hand side on std::vector, the same arithmetic per element.
template <class T>
struct rot_rhs_std {
  std::vector<T> w, mu;
  rot_rhs_std() : w(pairs), mu(pairs) {
    for (std::size_t k = 0; k < pairs; ++k) {
      w[k] = static_cast<T>(freq(k));
      mu[k] = static_cast<T>(damp(k));
    }
  }
  void operator()(double, const std::vector<T>& y, std::vector<T>& dy) const {
    for (std::size_t i = 0; i < y.size(); ++i) rot_fn<T>{y.data(), dy.data(), w.data(), mu.data()}(i);
  }
};

template <class T>
std::vector<T> start() {
  std::vector<T> y(2 * pairs);
  for (std::size_t k = 0; k < pairs; ++k) {
    y[2 * k] = T(0);
    y[2 * k + 1] = T(1);
  }
  return y;
}

// Relative max-norm difference.
inline double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return num / den;
}

// Integrate on [0, 2] (5 outputs), all observations concatenated.
template <class Scheme, class V, class Rhs, class Policy>
std::vector<double> run(Rhs rhs, const Policy& policy) {
  using T = typename V::value_type;
  V y = from_std<V>(start<T>());
  const std::array<double, 5> times{0.0, 0.5, 1.0, 1.5, 2.0};
  std::vector<double> all;
  posenc::ode::integrate(Scheme{}, rhs, y, std::span<const double>(times), policy,
                         [&](std::size_t, double, const V& yi) {
                           const auto v = to_std(yi);
                           all.insert(all.end(), v.begin(), v.end());
                         });
  return all;
}

template <class T>
std::vector<double> exact_all() {
  std::vector<double> all;
  for (double t : {0.0, 0.5, 1.0, 1.5, 2.0})
    for (std::size_t k = 0; k < pairs; ++k) {
      all.push_back(std::exp(-damp(k) * t) * std::sin(freq(k) * t));
      all.push_back(std::exp(-damp(k) * t) * std::cos(freq(k) * t));
    }
  return all;
}

// Host/device agreement: the Thrust and the serial runs do the same operations per element; only
// the order of the RMS reduction differs (adaptive runs), which moves a step size by an ulp.
// The stage sums are bitwise equal (same per-element expression); the right-hand sides too. f64:
// 1e-12 relative; f32: 1e-6 relative.
template <class T>
constexpr double agree_tol = std::is_same_v<T, double> ? 1e-12 : 1e-6;

template <class Scheme, class T, class Policy>
void check_scheme(const Policy& policy, double accuracy) {
  const auto ref = run<Scheme, std::vector<T>>(rot_rhs_std<T>{}, policy);
  const auto dev = run<Scheme, thrust::device_vector<T>>(rot_rhs<thrust::device_vector<T>>{}, policy);
  const auto hst = run<Scheme, thrust::host_vector<T>>(rot_rhs<thrust::host_vector<T>>{}, policy);
  // Adaptive runs in f32: backend::thrust sums the error norm in double (so every device system
  // and thread count takes the same steps), backend::serial in float; the norms differ by a float
  // ulp now and then, a step size moves, and two equally valid step sequences differ by their
  // float roundoff, ~ steps x eps_f32 ~ 3e-6. Thrust device vs thrust host still agree to 1e-6.
  constexpr bool adaptive_f32 = std::is_same_v<Policy, posenc::ode::adaptive> && std::is_same_v<T, float>;
  const double tol_std = adaptive_f32 ? 1e-5 : agree_tol<T>;
  CHECK(rel_diff(dev, ref) <= tol_std);
  CHECK(rel_diff(hst, ref) <= tol_std);
  CHECK(rel_diff(dev, hst) <= agree_tol<T>);
  // and all three solve the problem (the scheme's own accuracy, against the closed form)
  CHECK(rel_diff(dev, exact_all<T>()) <= accuracy);
}

template <class T>
void check_all_schemes() {
  namespace s = posenc::ode::schemes;
  const posenc::ode::fixed_steps fine{20};
  // accuracy bounds: global error ~ C h^p with h = 0.025, w_max h ~ 0.1 (generous constants,
  // max |y| = 1): they only show that the run solves the problem
  check_scheme<s::euler, T>(fine, 0.5);
  check_scheme<s::midpoint, T>(fine, 2e-2);
  check_scheme<s::heun, T>(fine, 2e-2);
  check_scheme<s::kutta3, T>(fine, 1e-3);
  check_scheme<s::rk4, T>(fine, 1e-5);
  check_scheme<s::rk4_38, T>(fine, 1e-5);
  posenc::ode::adaptive ad;
  ad.rtol = std::is_same_v<T, double> ? 1e-9 : 1e-5;
  ad.atol = std::is_same_v<T, double> ? 1e-12 : 1e-7;
  const double acc = std::is_same_v<T, double> ? 1e-7 : 1e-4;
  check_scheme<s::dopri5, T>(ad, acc);
  check_scheme<s::tsit5, T>(ad, acc);
  check_scheme<s::bogacki_shampine, T>(ad, acc);
}

template <class V>
void check_backend_ops() {
  using T = typename V::value_type;
  using B = posenc::backend::thrust;
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(-2, 2);
  const std::size_t n = 1001;
  std::vector<T> a(n), b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(u(gen));
    b[i] = static_cast<T>(u(gen));
    c[i] = static_cast<T>(u(gen));
  }
  const V da = from_std<V>(a), db = from_std<V>(b), dc = from_std<V>(c);
  V out;
  posenc::state_traits<V>::resize_like(out, da);
  CHECK(out.size() == n);
  // linear_combination against backend::serial on std::vector: the same per-element expression
  // (c0 x0 + c1 x1 + c2 x2 evaluated left to right), so equal to the last bit.
  std::vector<T> ref(n);
  posenc::linear_combination<posenc::backend::serial>(ref, T(0.5), a, T(-1.25), b, T(3), c);
  posenc::linear_combination<B>(out, T(0.5), da, T(-1.25), db, T(3), dc);
  CHECK(to_std(out) == std::vector<double>(ref.begin(), ref.end()));
  // aliasing: out = 2 out - a
  posenc::linear_combination<B>(out, T(2), out, T(-1), da);
  posenc::linear_combination<posenc::backend::serial>(ref, T(2), ref, T(-1), a);
  CHECK(to_std(out) == std::vector<double>(ref.begin(), ref.end()));
  // norms: max is order-independent (exact); the RMS sum differs from the serial one only by
  // the reduction order (relative 1e-14 f64, 1e-5 f32 on 1001 terms)
  CHECK(B::norm_inf(da) == posenc::backend::serial::norm_inf(a));
  const double rms_tol = std::is_same_v<T, double> ? 1e-14 : 1e-5;
  const double r_dev = B::scaled_rms(da, db, dc, T(1e-3), T(1e-2));
  const double r_ref = posenc::backend::serial::scaled_rms(a, b, c, T(1e-3), T(1e-2));
  CHECK(std::abs(r_dev - r_ref) <= rms_tol * r_ref);
  CHECK(B::all_finite(da));
  B::fill(out, T(1.5));
  CHECK(to_std(out) == std::vector<double>(n, 1.5));
  // NaN propagates through norm_inf and fails all_finite; Inf fails all_finite
  std::vector<T> bad = a;
  bad[500] = std::numeric_limits<T>::quiet_NaN();
  const V dbad = from_std<V>(bad);
  CHECK(std::isnan(B::norm_inf(dbad)));
  CHECK_FALSE(B::all_finite(dbad));
  bad[500] = std::numeric_limits<T>::infinity();
  CHECK_FALSE(B::all_finite(from_std<V>(bad)));
  // empty states
  const V empty;
  CHECK(B::scaled_rms(empty, empty, empty, T(1), T(1)) == T(0));
  CHECK(B::all_finite(empty));
}

}  // namespace

TEST_CASE("ode backend operations on device_vector and host_vector agree with backend serial") {
  check_backend_ops<thrust::device_vector<double>>();
  check_backend_ops<thrust::device_vector<float>>();
  check_backend_ops<thrust::host_vector<double>>();
  check_backend_ops<thrust::host_vector<float>>();
}

TEST_CASE("ode integration on thrust vectors matches std vector f64 for every scheme") { check_all_schemes<double>(); }

TEST_CASE("ode integration on thrust vectors matches std vector f32 for every scheme") { check_all_schemes<float>(); }

TEST_CASE("ode non-finite solution on a device vector is reported") {
  // y' = y^2 blows up at t = 1 from y = 1: the fixed-step driver must throw non_finite_error
  struct blow {
    void operator()(double, const thrust::device_vector<double>& y, thrust::device_vector<double>& dy) const {
      const double* p = thrust::raw_pointer_cast(y.data());
      thrust::transform(thrust::device, p, p + y.size(), p, thrust::raw_pointer_cast(dy.data()),
                        thrust::multiplies<double>());
    }
  };
  thrust::device_vector<double> y(3, 1.0);
  const std::array<double, 2> times{0.0, 50.0};
  CHECK_THROWS_AS(posenc::ode::integrate(posenc::ode::schemes::euler{}, blow{}, y, std::span<const double>(times),
                                         posenc::ode::fixed_steps{200}),
                  posenc::non_finite_error);
}
