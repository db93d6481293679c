// SPDX-License-Identifier: MIT
// No allocation inside the stepping loop. This translation unit replaces the global operator
// new/delete for the whole posenc_tests_ode program with counting versions (they forward to
// malloc/free); the count is read around repeated step() calls made after construction.
// std::vector and xtensor states allocate through std::allocator, so operator new sees every
// allocation the engine could make for them. (Eigen allocates with malloc directly; its backend
// is one expression assignment per operation, which creates no temporary.)
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include <posenc/adapters/xtensor.hpp>
#include <posenc/ode.hpp>

// GCC flags free() in a replaced operator delete as "mismatched" once it inlines a paired new
// (a false positive: this file's operator new uses malloc).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<std::size_t> g_allocations{0};
}

void* operator new(std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {
using namespace posenc::ode;

template <class Sch, class State, class Rhs>
std::size_t allocations_in_steps(State y, Rhs f) {
  explicit_rk<Sch, State> st(y);  // the workspace: allocated here
  State y1 = y;  // the caller's output buffer for step_with_error
  const std::size_t before = g_allocations.load();
  double t = 0;
  for (int i = 0; i < 100; ++i, t += 0.01) st.step(f, t, y, 0.01);
  if constexpr (EmbeddedScheme<Sch>) {
    const std::size_t mid = g_allocations.load();
    for (int i = 0; i < 100; ++i) {
      st.step_with_error(f, 0.0, y, y1, 0.01, 1e-6, 1e-6);
      st.dense_output(f, 0.0, 0.01, 0.5, y, y1, y1);
      st.accept();
    }
    return (mid - before) + (g_allocations.load() - mid);
  }
  return g_allocations.load() - before;
}

auto vec_rhs = [](double, const std::vector<double>& y, std::vector<double>& d) {
  for (std::size_t i = 0; i < y.size(); ++i) d[i] = -y[i];
};
auto xt_rhs = [](double, const xt::xarray<double>& y, xt::xarray<double>& d) { xt::noalias(d) = -y; };
}  // namespace

TEST_CASE_TEMPLATE("no allocation in repeated steps after construction", Sch, schemes::euler, schemes::midpoint,
                   schemes::heun, schemes::ralston, schemes::kutta3, schemes::rk4, schemes::rk4_38,
                   schemes::heun_euler, schemes::bogacki_shampine, schemes::dopri5, schemes::tsit5) {
  // the counter itself works (a reference point, so a zero below means something)
  const std::size_t c0 = g_allocations.load();
  { std::vector<double> probe(7); (void)probe; }
  CHECK(g_allocations.load() == c0 + 1);

  CHECK(allocations_in_steps<Sch>(std::vector<double>(64, 1.0), vec_rhs) == 0);
  CHECK(allocations_in_steps<Sch>(xt::xarray<double>(std::vector<std::size_t>{4, 16}, 1.0), xt_rhs) == 0);
}

TEST_CASE("integrate allocates a fixed amount, independent of the number of steps") {
  // The drivers size the workspace once (and the adaptive one its two extra buffers); the
  // number of allocations must not grow with the number of steps.
  auto count = [](auto policy, std::size_t n_out) {
    std::vector<double> y(32, 1.0);
    std::vector<double> times(n_out);
    for (std::size_t i = 0; i < n_out; ++i) times[i] = static_cast<double>(i) / static_cast<double>(n_out - 1);
    explicit_rk<schemes::dopri5, std::vector<double>> st(y);
    const std::size_t before = g_allocations.load();
    integrate(st, vec_rhs, y, times, policy);
    return g_allocations.load() - before;
  };
  CHECK(count(fixed_steps{1}, 3) == 0);
  CHECK(count(fixed_steps{500}, 3) == 0);
  const std::size_t few = count(adaptive{.rtol = 1e-3, .atol = 1e-6}, 3);
  const std::size_t many = count(adaptive{.rtol = 1e-12, .atol = 1e-14}, 300);
  CHECK(few == many);
  CHECK(few <= 6);  // y1, out (+ the starting heuristic's f1): a handful, never per step
}
