// SPDX-License-Identifier: MIT
// The state conformance suite (tests/core/conformance.hpp) over xtensor containers, and the
// expression-to-container mapping (a lazy xtensor expression is never stored).
#include <posenc/adapters/xtensor.hpp>

#include "core/conformance.hpp"

#include <xtensor/xmath.hpp>

namespace posenc_test {

template <class T>
xt::xarray<T> make(tag<xt::xarray<T>>, int variant) {
  xt::xarray<T> s;
  s.resize(variant == 0 ? std::vector<std::size_t>{4, 9} : std::vector<std::size_t>{3, 2, 2});
  fill_values(s, 0);
  return s;
}
template <class T>
constexpr bool resizable(tag<xt::xarray<T>>) {
  return true;
}

template <class T, std::size_t N>
xt::xtensor<T, N> make(tag<xt::xtensor<T, N>>, int variant) {
  std::array<std::size_t, N> shape{};
  for (std::size_t i = 0; i < N; ++i) shape[i] = variant == 0 ? 3 + 2 * i : 2;
  xt::xtensor<T, N> s;
  s.resize(shape);
  fill_values(s, 0);
  return s;
}
template <class T, std::size_t N>
constexpr bool resizable(tag<xt::xtensor<T, N>>) {
  return true;
}

template <class T, std::size_t... N>
xt::xtensor_fixed<T, xt::xshape<N...>> make(tag<xt::xtensor_fixed<T, xt::xshape<N...>>>, int) {
  xt::xtensor_fixed<T, xt::xshape<N...>> s;
  fill_values(s, 0);
  return s;
}
template <class T, std::size_t... N>
constexpr bool resizable(tag<xt::xtensor_fixed<T, xt::xshape<N...>>>) {
  return false;
}

}  // namespace posenc_test

namespace {
using xt1d = xt::xtensor<double, 1>;
using xt2d = xt::xtensor<double, 2>;
using xt3f = xt::xtensor<float, 3>;
using xf23d = xt::xtensor_fixed<double, xt::xshape<2, 3>>;
using xf5f = xt::xtensor_fixed<float, xt::xshape<5>>;
}  // namespace
TEST_CASE_TEMPLATE("state conformance: xtensor containers", S, xt::xarray<double>, xt::xarray<float>, xt1d, xt2d,
                   xt3f, xf23d, xf5f) {
  posenc_test::run_state_conformance<S>();
}

TEST_CASE("xtensor expressions are not states; a right-hand side may return one") {
  xt::xarray<double> a = {1.0, 2.0};
  xt::xtensor<double, 2> m = xt::zeros<double>({2, 3});
  xt::xtensor_fixed<double, xt::xshape<3>> f = {1.0, 2.0, 3.0};
  static_assert(!posenc::StateSpace<decltype(a + a)>);
  static_assert(!posenc::StateSpace<decltype(2.0 * m)>);
  static_assert(!posenc::StateSpace<decltype(xt::sin(f))>);
  static_assert(!posenc::StateSpace<xt::xarray<int>>);
  static_assert(!posenc::BackendFor<posenc::backend::xtensor, std::vector<double>>);
  // A right-hand side returning an expression (dydt = f(t, y)) is evaluated into the stage buffer.
  xt::xarray<double> y = {1.0, -2.0, 0.5};
  const std::vector<double> times{0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::dopri5{}, [](double, const xt::xarray<double>& v) { return -v; }, y,
                         times, posenc::ode::adaptive{.rtol = 1e-10, .atol = 1e-12});
  const double e = std::exp(-1.0);
  CHECK(std::abs(y(0) - e) <= 1e-8);  // rtol 1e-10 over one time unit: C = 100 margin
  CHECK(std::abs(y(1) + 2 * e) <= 1e-8);
  CHECK(std::abs(y(2) - 0.5 * e) <= 1e-8);
}
