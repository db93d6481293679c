// SPDX-License-Identifier: MIT
// The ODE toolkit: schemes, the generic explicit Runge-Kutta stepper, integration drivers and
// gradients. Standard library only; adapters for Eigen, xtensor, Thrust and Boost.Odeint are in
// posenc/adapters/.
#pragma once

#include <posenc/core/backend.hpp>
#include <posenc/core/error.hpp>
#include <posenc/core/state_traits.hpp>
#include <posenc/ode/grid.hpp>
#include <posenc/ode/integrate.hpp>
#include <posenc/ode/schemes.hpp>
#include <posenc/ode/stepper.hpp>
#include <posenc/ode/gradient.hpp>
#include <posenc/ode/tableau.hpp>
