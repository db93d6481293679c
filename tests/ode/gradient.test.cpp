// SPDX-License-Identifier: MIT
// Gradients through ODE solutions: discrete backprop and the continuous adjoint, checked against
// central finite differences, a closed form, and each other.
#include <doctest/doctest.h>

#include <cmath>
#include <span>
#include <vector>

#include <posenc/adapters/eigen.hpp>
#include <posenc/ode.hpp>
#include <posenc/ode/gradient.hpp>

namespace {
using namespace posenc::ode;
using vec = Eigen::VectorXd;
using rowmat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// y' = tanh(W y) + b t,  theta = [W (row-major), b]: nonlinear, time-dependent, all parameters used.
struct tanh_rhs {
  int n;
  vec theta;
  [[nodiscard]] Eigen::Map<const rowmat> W() const { return {theta.data(), n, n}; }
  void operator()(double t, const vec& y, vec& d) const { d = (W() * y).array().tanh().matrix() + theta.tail(n) * t; }
  void vjp(double t, const vec& y, const vec& a, vec& ay, vec& g) const {
    const vec z = W() * y;
    const vec s = (1 - z.array().tanh().square()).matrix().cwiseProduct(a);
    ay = W().transpose() * s;
    Eigen::Map<rowmat> gW(g.data(), n, n);
    gW += s * y.transpose();
    g.tail(n) += a * t;
  }
};

// L = sum_i w_i . y(t_i) for the fixed-step discretisation.
template <class Scheme>
double loss(const tanh_rhs& f, const vec& y0, const std::vector<double>& ts, const std::vector<vec>& w, fixed_steps p) {
  double L = 0;
  vec y = y0;
  tanh_rhs g = f;
  integrate(Scheme{}, g, y, ts, p, [&](std::size_t i, double, const vec& yi) { L += w[i].dot(yi); });
  return L;
}

struct problem {
  tanh_rhs f{3, vec()};
  vec y0;
  std::vector<double> ts{0.0, 0.3, 0.7, 1.0};
  std::vector<vec> w;
  problem() {
    std::srand(7);
    f.theta = vec::Random(f.n * f.n + f.n) * 0.5;
    y0 = vec::Random(f.n);
    for (std::size_t i = 0; i < ts.size(); ++i) w.push_back(vec::Random(f.n));
  }
};

template <class Scheme>
void check_backprop_against_fd(std::size_t substeps) {
  problem p;
  vec gy0, gth = vec::Zero(p.f.theta.size());
  backprop(Scheme{}, p.f, p.y0, p.ts, fixed_steps{substeps}, std::span<const vec>(p.w), gy0, gth);
  // Central differences with eps = 1e-6: truncation O(eps^2) ~ 1e-12, rounding O(1e-16 / eps) ~ 1e-10
  // on an O(1) loss; 1e-7 leaves a wide margin and still catches any wrong term (those are O(h) or O(1)).
  const double eps = 1e-6;
  for (int i = 0; i < p.f.n; ++i) {
    vec yp = p.y0, ym = p.y0;
    yp[i] += eps;
    ym[i] -= eps;
    const double fd = (loss<Scheme>(p.f, yp, p.ts, p.w, fixed_steps{substeps}) -
                       loss<Scheme>(p.f, ym, p.ts, p.w, fixed_steps{substeps})) / (2 * eps);
    CHECK(gy0[i] == doctest::Approx(fd).epsilon(1e-7));
  }
  for (Eigen::Index i = 0; i < p.f.theta.size(); ++i) {
    tanh_rhs fp = p.f, fm = p.f;
    fp.theta[i] += eps;
    fm.theta[i] -= eps;
    const double fd = (loss<Scheme>(fp, p.y0, p.ts, p.w, fixed_steps{substeps}) -
                       loss<Scheme>(fm, p.y0, p.ts, p.w, fixed_steps{substeps})) / (2 * eps);
    CHECK(gth[i] == doctest::Approx(fd).epsilon(1e-7));
  }
}
}  // namespace

TEST_CASE("backprop equals central finite differences of the discrete solution, every scheme family") {
  check_backprop_against_fd<schemes::euler>(3);
  check_backprop_against_fd<schemes::midpoint>(3);
  check_backprop_against_fd<schemes::rk4>(2);
  check_backprop_against_fd<schemes::rk4_38>(2);
  check_backprop_against_fd<schemes::bogacki_shampine>(2);  // FSAL: the last stage has weight 0
  check_backprop_against_fd<schemes::dopri5>(1);
  check_backprop_against_fd<schemes::tsit5>(1);
}

TEST_CASE("backprop does not depend on the checkpoint spacing") {
  problem p;
  vec ref_y0, ref_th = vec::Zero(p.f.theta.size());
  const auto ref = backprop(schemes::rk4_38{}, p.f, p.y0, p.ts, fixed_steps{5}, std::span<const vec>(p.w), ref_y0,
                            ref_th, checkpointing{1000});
  // max_stored_steps beyond the 15 steps stores them all: one checkpoint and 15 segment states
  // (it allocated 1000 before)
  CHECK(ref.stored_states == 1 + 15);
  for (std::size_t c : {1u, 2u, 4u, 7u, 0u}) {
    vec gy0, gth = vec::Zero(p.f.theta.size());
    const auto st =
        backprop(schemes::rk4_38{}, p.f, p.y0, p.ts, fixed_steps{5}, std::span<const vec>(p.w), gy0, gth, checkpointing{c});
    // Recomputation repeats the same floating-point operations: identical results.
    CHECK((gy0 - ref_y0).cwiseAbs().maxCoeff() == 0.0);
    CHECK((gth - ref_th).cwiseAbs().maxCoeff() == 0.0);
    const std::size_t C = c == 0 ? 4 : c;  // 15 steps: ceil(sqrt(15)) = 4
    CHECK(st.stored_states == (15 + C - 1) / C + C);
  }
}

TEST_CASE("continuous adjoint converges to the exact gradient at the scheme order") {
  problem p;
  double prev = 0;
  for (std::size_t sub : {2u, 4u, 8u}) {
    vec by0, bth = vec::Zero(p.f.theta.size()), ay0, ath = vec::Zero(p.f.theta.size());
    // A very fine backprop is the reference for the continuous gradient (error ~ (1/64)^4 relative).
    backprop(schemes::rk4{}, p.f, p.y0, p.ts, fixed_steps{64}, std::span<const vec>(p.w), by0, bth);
    adjoint(schemes::rk4{}, p.f, p.y0, p.ts, fixed_steps{sub}, std::span<const vec>(p.w), ay0, ath);
    const double err = std::max((ay0 - by0).cwiseAbs().maxCoeff(), (ath - bth).cwiseAbs().maxCoeff());
    if (prev > 0) {
      const double order = std::log2(prev / err);
      CHECK(order > 3.5);  // RK4: ratio 16 per halving; 3.5 allows pre-asymptotic slack
      CHECK(order < 4.6);
    }
    prev = err;
  }
}

TEST_CASE("adaptive adjoint with dopri5 meets its tolerance") {
  problem p;
  vec by0, bth = vec::Zero(p.f.theta.size()), ay0, ath = vec::Zero(p.f.theta.size());
  backprop(schemes::dopri5{}, p.f, p.y0, p.ts, fixed_steps{40}, std::span<const vec>(p.w), by0, bth);
  const auto st = adjoint(schemes::dopri5{}, p.f, p.y0, p.ts, adaptive{.rtol = 1e-10, .atol = 1e-12},
                          std::span<const vec>(p.w), ay0, ath);
  CHECK(st.backward_steps > 0);
  CHECK(st.vjp_evaluations > 0);
  // Gradients are O(1); rtol 1e-10 per step accumulates to ~1e-9 over tens of steps.
  CHECK((ay0 - by0).cwiseAbs().maxCoeff() < 1e-8);
  CHECK((ath - bth).cwiseAbs().maxCoeff() < 1e-8);
}

namespace {
// y' = A(omega) y with A = [[0, omega], [-omega, 0]]: y(T) = R(omega T) y0 in closed form.
struct rotation_rhs {
  double omega;
  void operator()(double, const vec& y, vec& d) const {
    d.resize(2);
    d << omega * y[1], -omega * y[0];
  }
  void vjp(double, const vec& y, const vec& a, vec& ay, vec& g) const {
    ay.resize(2);
    ay << -omega * a[1], omega * a[0];   // A^T a
    g[0] += a[0] * y[1] - a[1] * y[0];   // a . dA/domega y
  }
};
}  // namespace

TEST_CASE("adjoint and backprop reproduce the closed-form gradient of a rotation") {
  const double omega = 1.3, T = 2.0;
  vec y0(2), w(2);
  y0 << 0.4, -0.7;
  w << 1.5, 0.25;
  const std::vector<double> ts{0.0, T};
  const std::vector<vec> up{vec::Zero(2), w};
  const double c = std::cos(omega * T), s = std::sin(omega * T);
  // L = w . R y0 with R = [[c, s], [-s, c]]: dL/dy0 = R^T w, dL/domega = T w . R' y0, R' = [[-s, c], [-c, -s]].
  vec exact_y0(2);
  exact_y0 << c * w[0] - s * w[1], s * w[0] + c * w[1];
  const double exact_om = T * (w[0] * (-s * y0[0] + c * y0[1]) + w[1] * (-c * y0[0] - s * y0[1]));
  rotation_rhs f{omega};
  vec gy0, gom = vec::Zero(1);
  adjoint(schemes::dopri5{}, f, y0, ts, adaptive{.rtol = 1e-12, .atol = 1e-14}, std::span<const vec>(up), gy0, gom);
  CHECK((gy0 - exact_y0).cwiseAbs().maxCoeff() < 1e-9);
  CHECK(gom[0] == doctest::Approx(exact_om).epsilon(1e-9));
  vec by0, bom = vec::Zero(1);
  backprop(schemes::rk4{}, f, y0, ts, fixed_steps{400}, std::span<const vec>(up), by0, bom);
  // RK4 with h = 0.005: global error ~ (omega h)^4 T ~ 1e-10.
  CHECK((by0 - exact_y0).cwiseAbs().maxCoeff() < 1e-8);
  CHECK(bom[0] == doctest::Approx(exact_om).epsilon(1e-8));
}

TEST_CASE("gradients in reverse time") {
  problem p;
  std::vector<double> rev(p.ts.rbegin(), p.ts.rend());
  vec gy0, gth = vec::Zero(p.f.theta.size());
  backprop(schemes::rk4{}, p.f, p.y0, rev, fixed_steps{3}, std::span<const vec>(p.w), gy0, gth);
  const double eps = 1e-6;
  vec yp = p.y0, ym = p.y0;
  yp[1] += eps;
  ym[1] -= eps;
  const double fd = (loss<schemes::rk4>(p.f, yp, rev, p.w, fixed_steps{3}) - loss<schemes::rk4>(p.f, ym, rev, p.w, fixed_steps{3})) / (2 * eps);
  CHECK(gy0[1] == doctest::Approx(fd).epsilon(1e-7));
}

TEST_CASE("gradient entry points reject bad input") {
  problem p;
  vec gy0, gth = vec::Zero(p.f.theta.size());
  std::vector<vec> too_few(p.w.begin(), p.w.end() - 1);
  CHECK_THROWS_AS(backprop(schemes::rk4{}, p.f, p.y0, p.ts, fixed_steps{2}, std::span<const vec>(too_few), gy0, gth),
                  posenc::shape_error);
  std::vector<vec> wrong = p.w;
  wrong[1] = vec::Zero(5);
  CHECK_THROWS_AS(backprop(schemes::rk4{}, p.f, p.y0, p.ts, fixed_steps{2}, std::span<const vec>(wrong), gy0, gth),
                  posenc::shape_error);
  std::vector<vec> nan = p.w;
  nan[2][0] = std::nan("");
  CHECK_THROWS_AS(adjoint(schemes::rk4{}, p.f, p.y0, p.ts, fixed_steps{2}, std::span<const vec>(nan), gy0, gth),
                  posenc::non_finite_error);
  const std::vector<double> bad{0.0, 0.5, 0.5};
  std::vector<vec> w3(p.w.begin(), p.w.end() - 1);
  CHECK_THROWS_AS(backprop(schemes::rk4{}, p.f, p.y0, bad, fixed_steps{2}, std::span<const vec>(w3), gy0, gth),
                  posenc::grid_error);
  CHECK_THROWS_AS(backprop(schemes::rk4{}, p.f, p.y0, p.ts, fixed_steps{0}, std::span<const vec>(p.w), gy0, gth),
                  posenc::invalid_argument);
  vec y_nan = p.y0;
  y_nan[0] = INFINITY;
  CHECK_THROWS_AS(backprop(schemes::rk4{}, p.f, y_nan, p.ts, fixed_steps{2}, std::span<const vec>(p.w), gy0, gth),
                  posenc::non_finite_error);
}
