// SPDX-License-Identifier: MIT
// The usage shown in docs/device.md, compiled and run on every device system: build tables and
// biases on the device, bring back only what the host needs, integrate on a device state.
#include <doctest/doctest.h>

#include <posenc/device/encodings.hpp>
#include <posenc/ode.hpp>

#include <array>
#include <cmath>
#include <span>

TEST_CASE("device usage as documented") {
  // [device-usage]
  // A 4096 x 512 sinusoidal table, generated on the device; it stays there.
  posenc::device_table<float> pe = posenc::device::sinusoidal::table<float>(4096, 512);
  // Rotate a block of queries in place on the device (RoPE, 8 heads of 64).
  posenc::rotary::options rope;
  rope.head_dim = 64;
  posenc::device::rotary::apply_rotary_inplace(pe, rope);
  // TUPE-R positional term [H, n, n] on the device, then one explicit copy back.
  posenc::tupe::config cfg;
  cfg.d = 64;
  cfg.heads = 4;
  const auto params = posenc::tupe::make_parameters<float>(cfg, 128, /*seed=*/1);
  const posenc::device_head_stack<float> bias = posenc::device::tupe::positional_bias(cfg, params, 128);
  const posenc::tupe::head_stack<float> host_bias = posenc::to_host(bias);  // the only transfer
  // The ODE core on a device state: y' = -y from y = 1, RK4, 10 steps.
  thrust::device_vector<double> y(1000, 1.0);
  auto rhs = [](double, const thrust::device_vector<double>& x, thrust::device_vector<double>& dx) {
    const double* p = thrust::raw_pointer_cast(x.data());
    thrust::transform(thrust::device, p, p + x.size(), thrust::raw_pointer_cast(dx.data()), thrust::negate<double>());
  };
  const std::array<double, 2> times{0.0, 1.0};
  posenc::ode::integrate(posenc::ode::schemes::rk4{}, rhs, y, std::span<const double>(times),
                         posenc::ode::fixed_steps{10});
  // [device-usage]
  // checks: shapes, and the independent references (the host term; e^{-1} to RK4's 1e-6)
  CHECK(pe.rows() == 4096);
  CHECK(host_bias.heads() == 4);
  const auto ref = posenc::tupe::positional_bias(cfg, params, 128);
  CHECK((host_bias.flat() - ref.flat()).cwiseAbs().maxCoeff() <= 1e-6f * ref.flat().cwiseAbs().maxCoeff());
  const thrust::host_vector<double> yh = y;
  CHECK(std::abs(yh[999] - std::exp(-1.0)) < 1e-6);
}
