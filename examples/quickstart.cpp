// SPDX-License-Identifier: MIT
// Quickstart: FLOATER position encodings (a learned ODE, 3 blocks sharing the dynamics), then the
// ODE toolkit underneath: a rotation (the flow that generates the sinusoidal encoding) integrated
// with the 3/8-rule RK4 over a grid of positions, and with adaptive Dormand-Prince 5(4).
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <posenc/floater.hpp>
#include <posenc/ode.hpp>

int main() {
  {
    // [quickstart-floater]
    namespace fl = posenc::floater;
    std::mt19937_64 rng(42);
    fl::mlp<float> h(64);                                             // h(t, p) = W2 [relu(W1 [p; t] + b1); t] + b2
    fl::init_xavier_normal(h, rng);                                   // reference initialisation
    fl::encoder<float> floater(h, fl::xavier_uniform<float>({3, 64}, rng));  // 3 blocks, Delta = 0.01, RK 3/8
    const posenc::table<float> P = floater.block_table(2, 128);       // block 2: 128 positions x 64
    floater.extend(1024);                                             // longer inputs: only new intervals
    std::printf("FLOATER block 2: %ld x %ld, P[127][0] = %.6f; cached %zu positions\n", static_cast<long>(P.rows()),
                static_cast<long>(P.cols()), static_cast<double>(P(127, 0)), floater.size());
    // [quickstart-floater]
    if (!P.allFinite()) return 1;
  }
  using namespace posenc::ode;
  const double omega = 0.5;
  // dp/dt = A p with A = [[0, omega], [-omega, 0]]: p(t) = (sin(omega t), cos(omega t)) from p(0) = (0, 1).
  auto rotation = [omega](double, const std::vector<double>& p, std::vector<double>& dp) {
    dp[0] = omega * p[1];
    dp[1] = -omega * p[0];
  };
  std::vector<double> times;
  for (int i = 0; i <= 8; ++i) times.push_back(0.1 * i);  // positions t_i = i * 0.1

  std::vector<double> p{0.0, 1.0};
  double worst = 0;
  integrate(schemes::rk4_38{}, rotation, p, times, fixed_steps{5}, [&](std::size_t i, double t, const auto& y) {
    worst = std::max(worst, std::abs(y[0] - std::sin(omega * t)) + std::abs(y[1] - std::cos(omega * t)));
    std::printf("p_%zu = (%.12f, %.12f)\n", i, y[0], y[1]);
  });
  std::printf("rk4 (3/8 rule), 5 substeps: max error %.2e\n", worst);

  std::vector<double> q{0.0, 1.0};
  const auto stats = integrate(schemes::dopri5{}, rotation, q, times, adaptive{.rtol = 1e-10, .atol = 1e-12});
  std::printf("dopri5: %zu steps, %zu rejected, %zu evaluations, error at t = 0.8: %.2e\n", stats.steps,
              stats.rejected, stats.rhs_evaluations, std::abs(q[0] - std::sin(omega * 0.8)));
  return worst < 1e-9 ? 0 : 1;
}
