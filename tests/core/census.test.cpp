// SPDX-License-Identifier: MIT
// The malformed-argument census (issue 11): one row per public entry point x malformed argument.
// Each row makes the call and names the exception type it must throw and a substring the message
// must contain (the argument's name). The test checks every row and the row count; nothing is
// allocated beyond a few kilobytes (huge sizes must be rejected before allocating).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

#include <posenc/posenc.hpp>

namespace {

struct row {
  std::string entry;     // public entry point
  std::string argument;  // the malformed argument; the message must contain `needle`
  std::string needle;
  std::string type;                                // expected exception type
  std::function<bool(const std::exception&)> is;   // dynamic type test
  std::function<void()> call;
};

template <class E>
row expect(std::string entry, std::string argument, std::string needle, std::function<void()> call) {
  return row{std::move(entry), std::move(argument), std::move(needle), typeid(E).name(),
             [](const std::exception& e) { return dynamic_cast<const E*>(&e) != nullptr; }, std::move(call)};
}

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::size_t huge = std::numeric_limits<std::size_t>::max();
constexpr std::size_t zero = 0;

using posenc::invalid_argument;
using posenc::non_finite_error;
using posenc::shape_error;
using posenc::size_error;
using posenc::step_budget_exceeded;
using vec = std::vector<double>;

void add_core_ode(std::vector<row>& rows) {
  using namespace posenc::ode;
  auto decay = [](double, const vec& y, vec& d) {
    for (std::size_t i = 0; i < y.size(); ++i) d[i] = -y[i];
  };
  auto run_fixed = [decay](vec times, fixed_steps p, vec y0 = {1.0}) {
    integrate(schemes::rk4{}, decay, y0, std::span<const double>(times), p);
  };
  auto run_adaptive = [decay](vec times, adaptive a, vec y0 = {1.0}) {
    integrate(schemes::dopri5{}, decay, y0, std::span<const double>(times), a);
  };
  // core/checked.hpp
  rows.push_back(expect<size_error>("checked::mul", "a * b", "rows * cols",
                                    [] { (void)posenc::checked::mul(huge, std::size_t{2}, "f", "rows * cols"); }));
  rows.push_back(expect<size_error>("checked::add", "a + b", "rows + cols",
                                    [] { (void)posenc::checked::add(huge, std::size_t{1}, "f", "rows + cols"); }));
  rows.push_back(expect<size_error>("checked::sub", "a - b", "n - 1",
                                    [] { (void)posenc::checked::sub(zero, std::size_t{1}, "f", "n - 1"); }));
  rows.push_back(expect<size_error>("checked::cast", "v", "L", [] { (void)posenc::checked::cast<std::ptrdiff_t>(huge, "f", "L"); }));
  rows.push_back(expect<size_error>("checked::extent", "n", "length", [] { (void)posenc::checked::extent(huge, "f", "length"); }));
  rows.push_back(expect<size_error>("checked::elements", "rows * cols", "length * d",
                                    [] { (void)posenc::checked::elements(std::size_t{1} << 30, std::size_t{1} << 30, "f", "length * d"); }));
  rows.push_back(expect<size_error>("checked::make_vector", "n", "buckets",
                                    [] { (void)posenc::checked::make_vector<int>(huge, "f", "buckets"); }));
  // ode::validate_grid / integrate(fixed_steps)
  rows.push_back(expect<posenc::grid_error>("ode::validate_grid", "times (empty)", "times",
                                            [] { (void)validate_grid(std::span<const double>()); }));
  rows.push_back(expect<posenc::grid_error>("ode::validate_grid", "times (NaN)", "times", [] {
    const vec t{0.0, nan};
    (void)validate_grid(std::span<const double>(t));
  }));
  rows.push_back(expect<posenc::grid_error>("integrate(fixed_steps)", "times (not monotone)", "times",
                                            [run_fixed] { run_fixed({0.0, 1.0, 0.5}, fixed_steps{}); }));
  rows.push_back(expect<posenc::grid_error>("integrate(fixed_steps)", "times (repeated)", "times",
                                            [run_fixed] { run_fixed({0.0, 0.0}, fixed_steps{}); }));
  rows.push_back(expect<posenc::grid_error>("integrate(fixed_steps)", "times (Inf)", "times",
                                            [run_fixed] { run_fixed({0.0, inf}, fixed_steps{}); }));
  rows.push_back(expect<invalid_argument>("integrate(fixed_steps)", "substeps = 0", "substeps",
                                          [run_fixed] { run_fixed({0.0, 1.0}, fixed_steps{0}); }));
  rows.push_back(expect<invalid_argument>("integrate(fixed_steps)", "max_step < 0", "max_step",
                                          [run_fixed] { run_fixed({0.0, 1.0}, fixed_steps{.substeps = 1, .max_step = -1}); }));
  rows.push_back(expect<invalid_argument>("integrate(fixed_steps)", "max_step NaN", "max_step",
                                          [run_fixed] { run_fixed({0.0, 1.0}, fixed_steps{.substeps = 1, .max_step = nan}); }));
  rows.push_back(expect<invalid_argument>("integrate(fixed_steps)", "max_steps = 0", "max_steps", [run_fixed] {
    run_fixed({0.0, 1.0}, fixed_steps{.substeps = 1, .max_step = 0, .max_steps = 0});
  }));
  rows.push_back(expect<step_budget_exceeded>("integrate(fixed_steps)", "max_step = 1e-300", "max_step",
                                              [run_fixed] { run_fixed({0.0, 1.0}, fixed_steps{.substeps = 1, .max_step = 1e-300}); }));
  rows.push_back(expect<step_budget_exceeded>("integrate(fixed_steps)", "substeps = SIZE_MAX", "substeps",
                                              [run_fixed] { run_fixed({0.0, 1.0}, fixed_steps{huge}); }));
  rows.push_back(expect<non_finite_error>("integrate(fixed_steps)", "y0 (NaN)", "y0",
                                          [run_fixed] { run_fixed({0.0, 1.0}, fixed_steps{}, {nan}); }));
  rows.push_back(expect<non_finite_error>("integrate(fixed_steps)", "f (produces NaN)", "non-finite", [] {
    vec y{1.0};
    const vec t{0.0, 1.0};
    integrate(schemes::rk4{}, [](double, const vec&, vec& d) { d[0] = nan; }, y, std::span<const double>(t), fixed_steps{});
  }));
  // integrate(adaptive)
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "rtol < 0", "rtol",
                                          [run_adaptive] { run_adaptive({0.0, 1.0}, adaptive{.rtol = -1}); }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "atol NaN", "atol",
                                          [run_adaptive] { run_adaptive({0.0, 1.0}, adaptive{.atol = nan}); }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "rtol = atol = 0", "rtol",
                                          [run_adaptive] { run_adaptive({0.0, 1.0}, adaptive{.rtol = 0, .atol = 0}); }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "max_step = 0", "max_step", [run_adaptive] {
    adaptive a;
    a.max_step = 0;
    run_adaptive({0.0, 1.0}, a);
  }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "min_step > max_step", "min_step", [run_adaptive] {
    adaptive a;
    a.min_step = 2;
    a.max_step = 1;
    run_adaptive({0.0, 1.0}, a);
  }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "first_step < 0", "first_step", [run_adaptive] {
    adaptive a;
    a.first_step = -1;
    run_adaptive({0.0, 1.0}, a);
  }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "safety > 1", "safety", [run_adaptive] {
    adaptive a;
    a.safety = 2;
    run_adaptive({0.0, 1.0}, a);
  }));
  rows.push_back(expect<invalid_argument>("integrate(adaptive)", "max_steps = 0", "max_steps", [run_adaptive] {
    adaptive a;
    a.max_steps = 0;
    run_adaptive({0.0, 1.0}, a);
  }));
  rows.push_back(expect<step_budget_exceeded>("integrate(adaptive)", "max_steps too small", "max_steps", [run_adaptive] {
    adaptive a;
    a.max_steps = 2;
    a.rtol = 1e-12;
    a.atol = 1e-12;
    run_adaptive({0.0, 10.0}, a);
  }));
  rows.push_back(expect<posenc::grid_error>("integrate(adaptive)", "times (not monotone)", "times",
                                            [run_adaptive] { run_adaptive({0.0, 1.0, 0.5}, adaptive{}); }));
  rows.push_back(expect<non_finite_error>("integrate(adaptive)", "y0 (Inf)", "y0",
                                          [run_adaptive] { run_adaptive({0.0, 1.0}, adaptive{}, {inf}); }));
  // explicit_rk::step with a state of another shape
  rows.push_back(expect<shape_error>("ode::explicit_rk::step", "y (shape)", "state y", [decay] {
    explicit_rk<schemes::rk4, vec> st(vec(2));
    vec y(3, 1.0);
    auto f = decay;
    st.step(f, 0.0, y, 0.1);
  }));
}

// y' = -k y with theta = [k]: a differentiable right-hand side for backprop/adjoint rows.
struct decay_k {
  void operator()(double, const vec& y, vec& d) const {
    for (std::size_t i = 0; i < y.size(); ++i) d[i] = -y[i];
  }
  void vjp(double, const vec& y, const vec& a, vec& ay, vec& g) const {
    for (std::size_t i = 0; i < y.size(); ++i) {
      ay[i] = -a[i];
      g[0] += -a[i] * y[i];
    }
  }
};

void add_gradients(std::vector<row>& rows) {
  using namespace posenc::ode;
  auto bp = [](vec times, fixed_steps p, std::vector<vec> up, vec y0 = {1.0}) {
    decay_k f;
    vec gy0, gth{0.0};
    backprop(schemes::rk4{}, f, y0, std::span<const double>(times), p, std::span<const vec>(up), gy0, gth);
  };
  auto adj = [](vec times, std::vector<vec> up, vec y0 = {1.0}, vec gth = {0.0}) {
    decay_k f;
    vec gy0;
    adjoint(schemes::rk4{}, f, y0, std::span<const double>(times), fixed_steps{4}, std::span<const vec>(up), gy0, gth);
  };
  const std::vector<vec> up2{vec{0.0}, vec{1.0}};
  rows.push_back(expect<shape_error>("ode::backprop", "dL_dy (count)", "dL_dy",
                                     [bp] { bp({0.0, 1.0}, fixed_steps{}, {vec{1.0}}); }));
  rows.push_back(expect<shape_error>("ode::backprop", "dL_dy[1] (shape)", "dL_dy",
                                     [bp] { bp({0.0, 1.0}, fixed_steps{}, {vec{1.0}, vec{1.0, 2.0}}); }));
  rows.push_back(expect<non_finite_error>("ode::backprop", "dL_dy[1] (NaN)", "dL_dy",
                                          [bp] { bp({0.0, 1.0}, fixed_steps{}, {vec{1.0}, vec{nan}}); }));
  rows.push_back(expect<non_finite_error>("ode::backprop", "y0 (NaN)", "y0",
                                          [bp, up2] { bp({0.0, 1.0}, fixed_steps{}, up2, {nan}); }));
  rows.push_back(expect<posenc::grid_error>("ode::backprop", "times (not monotone)", "times",
                                            [bp] { bp({0.0, 1.0, 0.5}, fixed_steps{}, {vec{0.0}, vec{0.0}, vec{0.0}}); }));
  rows.push_back(expect<invalid_argument>("ode::backprop", "substeps = 0", "substeps",
                                          [bp, up2] { bp({0.0, 1.0}, fixed_steps{0}, up2); }));
  rows.push_back(expect<step_budget_exceeded>("ode::backprop", "max_step = 1e-9", "max_step",
                                              [bp, up2] { bp({0.0, 1.0}, fixed_steps{.substeps = 1, .max_step = 1e-9}, up2); }));
  rows.push_back(expect<shape_error>("ode::adjoint", "dL_dy (count)", "dL_dy", [adj] { adj({0.0, 1.0}, {vec{1.0}}); }));
  rows.push_back(expect<non_finite_error>("ode::adjoint", "y0 (Inf)", "y0", [adj, up2] { adj({0.0, 1.0}, up2, {inf}); }));
  rows.push_back(expect<non_finite_error>("ode::adjoint", "dL_dtheta (NaN)", "dL_dtheta",
                                          [adj, up2] { adj({0.0, 1.0}, up2, {1.0}, {nan}); }));
  rows.push_back(expect<posenc::grid_error>("ode::adjoint", "times (empty)", "times", [adj] { adj({}, {}); }));
}

void add_floater(std::vector<row>& rows) {
  namespace fl = posenc::floater;
  using tab = posenc::table<double>;
  auto m = [] { return fl::mlp<double>(4, 3); };
  auto enc = [] { return fl::zero_encoder<double>(4, 3, 2); };
  rows.push_back(expect<invalid_argument>("floater::mlp", "d = 0", "d >= 1", [] { fl::mlp<double> x(0); }));
  rows.push_back(expect<size_error>("floater::mlp", "d = 2^41", "d", [] { fl::mlp<double> x(std::size_t{1} << 41); }));
  rows.push_back(expect<size_error>("floater::mlp", "hidden * d", "hidden * d",
                                    [] { fl::mlp<double> x(std::size_t{1} << 30, std::size_t{1} << 30); }));
  rows.push_back(expect<size_error>("floater::mlp", "hidden = SIZE_MAX", "hidden", [] { fl::mlp<double> x(4, huge); }));
  rows.push_back(expect<invalid_argument>("floater::mlp::validate", "act (outside the enum)", "act", [m] {
    auto x = m();
    x.act = static_cast<fl::activation>(7);
    x.validate("test");
  }));
  rows.push_back(expect<shape_error>("floater::mlp::validate", "b1 (shape)", "b1", [m] {
    auto x = m();
    x.b1.resize(2);
    x.validate("test");
  }));
  rows.push_back(expect<shape_error>("floater::mlp::validate", "w2 (shape)", "w2", [m] {
    auto x = m();
    x.w2.resize(4, 2);
    x.validate("test");
  }));
  rows.push_back(expect<non_finite_error>("floater::mlp::validate", "w1 (NaN)", "w1", [m] {
    auto x = m();
    x.w1(0, 0) = nan;
    x.validate("test");
  }));
  rows.push_back(expect<non_finite_error>("floater::mlp::validate", "b2 (Inf)", "b2", [m] {
    auto x = m();
    x.b2[1] = inf;
    x.validate("test");
  }));
  rows.push_back(expect<shape_error>("floater::mlp::set_linear1_weight", "weight (shape)", "weight",
                                     [m] { m().set_linear1_weight(posenc::matrix<double>::Zero(3, 3)); }));
  rows.push_back(expect<shape_error>("floater::mlp::set_linear2_weight", "weight (shape)", "weight",
                                     [m] { m().set_linear2_weight(posenc::matrix<double>::Zero(3, 3)); }));
  rows.push_back(expect<shape_error>("floater::encoder", "p0 (width)", "p0", [m] { fl::encoder<double> e(m(), tab::Zero(1, 5)); }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "p0 (no rows)", "p0", [m] { fl::encoder<double> e(m(), tab::Zero(0, 4)); }));
  rows.push_back(expect<non_finite_error>("floater::encoder", "p0 (NaN)", "p0", [m] {
    tab p = tab::Zero(1, 4);
    p(0, 2) = nan;
    fl::encoder<double> e(m(), p);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "options.delta = 0", "delta", [m] {
    fl::options o;
    o.delta = 0;
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "options.delta NaN", "delta", [m] {
    fl::options o;
    o.delta = nan;
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "options.substeps = 0", "substeps", [m] {
    fl::options o;
    o.substeps = 0;
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "options.substeps = SIZE_MAX", "substeps", [m] {
    fl::options o;
    o.substeps = huge;
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "options.threads above max_threads", "threads", [m] {
    fl::options o;
    o.threads = posenc::max_threads + 1;
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<posenc::grid_error>("floater::encoder", "options.times (decreasing)", "times", [m] {
    fl::options o;
    o.times = {0.0, 1.0, 0.5};
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<posenc::grid_error>("floater::encoder", "options.times (NaN)", "times", [m] {
    fl::options o;
    o.times = {0.0, nan};
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder", "theta.act (outside the enum)", "act", [m] {
    auto x = m();
    x.act = static_cast<fl::activation>(-3);
    fl::encoder<double> e(x, tab::Zero(1, 4));
  }));
  rows.push_back(expect<size_error>("floater::encoder::extend", "L = SIZE_MAX (n - 1 with n = 0)", "L", [enc] { enc().extend(zero - 1); }));
  rows.push_back(expect<size_error>("floater::encoder::extend", "L = 2^62", "L", [enc] { enc().extend(std::size_t{1} << 62); }));
  rows.push_back(expect<size_error>("floater::encoder::extend", "L * blocks * d", "L * blocks * d",
                                    [enc] { enc().extend(posenc::max_extent); }));
  rows.push_back(expect<invalid_argument>("floater::encoder::extend", "L beyond the explicit grid", "L = 5", [m] {
    fl::options o;
    o.times = {0.0, 0.1, 0.2};
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
    e.extend(5);
  }));
  rows.push_back(expect<size_error>("floater::encoder::block_table", "L = SIZE_MAX", "L", [enc] { (void)enc().block_table(0, huge); }));
  rows.push_back(expect<invalid_argument>("floater::encoder::block_table", "n (block) out of range", "block",
                                          [enc] { (void)enc().block_table(2, 3); }));
  rows.push_back(expect<size_error>("floater::encoder::tables", "L = SIZE_MAX", "L", [enc] { (void)enc().tables(huge); }));
  rows.push_back(expect<shape_error>("floater::encoder::set_parameters", "theta (d)", "d =", [enc] { enc().set_parameters(fl::mlp<double>(5)); }));
  rows.push_back(expect<shape_error>("floater::encoder::set_initial_state", "p0 (width)", "columns",
                                     [enc] { enc().set_initial_state(tab::Zero(2, 3)); }));
  rows.push_back(expect<non_finite_error>("floater::encoder::set_initial_state", "p0 (Inf)", "p0", [enc] {
    tab p = tab::Zero(2, 4);
    p(1, 1) = inf;
    enc().set_initial_state(p);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder::append_times", "times (no explicit grid)", "grid", [enc] {
    const vec t{1.0};
    enc().append_times(t);
  }));
  rows.push_back(expect<posenc::grid_error>("floater::encoder::append_times", "times (not increasing)", "times", [m] {
    fl::options o;
    o.times = {0.0, 1.0};
    fl::encoder<double> e(m(), tab::Zero(1, 4), o);
    const vec t{0.5};
    e.append_times(t);
  }));
  rows.push_back(expect<invalid_argument>("floater::encoder::set_threads", "threads above max_threads", "threads",
                                          [enc] { enc().set_threads(posenc::max_threads + 1); }));
  rows.push_back(expect<shape_error>("floater::encoder::backprop", "dL_dP (count)", "dL/dP", [enc] {
    const std::vector<tab> g{tab::Zero(3, 4)};
    (void)enc().backprop(g);
  }));
  rows.push_back(expect<shape_error>("floater::encoder::backprop", "dL_dP[1] (shape)", "dL/dP", [enc] {
    const std::vector<tab> g{tab::Zero(3, 4), tab::Zero(2, 4)};
    (void)enc().backprop(g);
  }));
  rows.push_back(expect<non_finite_error>("floater::encoder::backprop", "dL_dP (NaN)", "dL/dP", [enc] {
    std::vector<tab> g{tab::Zero(3, 4), tab::Zero(3, 4)};
    g[1](2, 3) = nan;
    (void)enc().backprop(g);
  }));
  rows.push_back(expect<shape_error>("floater::encoder::adjoint", "dL_dP (no rows)", "dL/dP", [enc] {
    const std::vector<tab> g{tab::Zero(0, 4), tab::Zero(0, 4)};
    (void)enc().adjoint(g);
  }));
  rows.push_back(expect<invalid_argument>("floater::zero_encoder", "blocks = 0", "blocks",
                                          [] { (void)fl::zero_encoder<double>(4, 3, 0); }));
  rows.push_back(expect<shape_error>("floater::biased_encoder::block_table", "base(L, d) (shape)", "base(L, d)", [enc] {
    fl::biased_encoder<double> b(enc(), [](std::size_t L, std::size_t) { return tab::Zero(static_cast<Eigen::Index>(L), 3); });
    (void)b.block_table(0, 4);
  }));
  rows.push_back(expect<non_finite_error>("floater::biased_encoder::block_table", "base(L, d) (NaN)", "base(L, d)", [enc] {
    fl::biased_encoder<double> b(enc(), [](std::size_t L, std::size_t d) {
      return tab::Constant(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(d), nan);
    });
    (void)b.block_table(0, 4);
  }));
  rows.push_back(expect<size_error>("floater::xavier_uniform", "shape {2^32, 2^32, 3}", "shape", [] {
    std::mt19937_64 rng(1);
    (void)fl::xavier_uniform<double>({std::size_t{1} << 32, std::size_t{1} << 32, 3}, rng);
  }));
  rows.push_back(expect<shape_error>("floater::xavier_uniform", "shape (rank 1)", "shape", [] {
    std::mt19937_64 rng(1);
    (void)fl::xavier_uniform<double>({3}, rng);
  }));
  rows.push_back(expect<shape_error>("floater::xavier_uniform", "shape (zero extent)", "shape", [] {
    std::mt19937_64 rng(1);
    (void)fl::xavier_uniform<double>({3, 0}, rng);
  }));
  rows.push_back(expect<shape_error>("floater::to_tensors", "p0 (width)", "p0", [m] { (void)fl::to_tensors(m(), tab(tab::Zero(1, 3))); }));
  rows.push_back(expect<shape_error>("floater::to_tensors", "p0_shape", "p0_shape",
                                     [m] { (void)fl::to_tensors(m(), tab(tab::Zero(2, 4)), {}, {3, 4}); }));
  rows.push_back(expect<posenc::io_error>("floater::load_safetensors", "path (missing file)", "no-such-file", [] {
    (void)fl::load_safetensors<double>(std::filesystem::temp_directory_path() / "posenc-census-no-such-file.safetensors");
  }));
  rows.push_back(expect<posenc::io_error>("floater::load_npy_folder", "folder (missing)", "no-such-folder", [] {
    (void)fl::load_npy_folder<double>(std::filesystem::temp_directory_path() / "posenc-census-no-such-folder");
  }));
}

void add_sinusoidal_rotary(std::vector<row>& rows) {
  namespace ps = posenc::sinusoidal;
  namespace rt = posenc::rotary;
  auto opt = [](auto f) {
    ps::options o;
    f(o);
    return o;
  };
  rows.push_back(expect<invalid_argument>("sinusoidal::table", "d = 0", "d", [] { (void)ps::table(4, 0); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::table", "d odd", "d", [] { (void)ps::table(4, 5); }));
  rows.push_back(expect<size_error>("sinusoidal::table", "length = SIZE_MAX", "length", [] { (void)ps::table(huge, 8); }));
  rows.push_back(expect<size_error>("sinusoidal::table", "length = -5", "length", [] { (void)ps::table(std::size_t(-5), 8); }));
  rows.push_back(expect<size_error>("sinusoidal::table", "length * d = 2^80", "length * d",
                                    [] { (void)ps::table(std::size_t{1} << 40, std::size_t{1} << 40); }));
  rows.push_back(expect<size_error>("sinusoidal::table", "d = SIZE_MAX - 1", "d", [] { (void)ps::table(1, huge - 1); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::table", "options.base NaN", "options.base",
                                          [opt] { (void)ps::table(4, 8, opt([](ps::options& o) { o.base = nan; })); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::table", "options.base <= 0", "options.base",
                                          [opt] { (void)ps::table(4, 8, opt([](ps::options& o) { o.base = -2; })); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::table", "options.first_position Inf", "options.first_position",
                                          [opt] { (void)ps::table(4, 8, opt([](ps::options& o) { o.first_position = inf; })); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::table", "options.position_step NaN", "options.position_step",
                                          [opt] { (void)ps::table(4, 8, opt([](ps::options& o) { o.position_step = nan; })); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::table", "options.layout (outside the enum)", "options.layout", [opt] {
    (void)ps::table(4, 8, opt([](ps::options& o) { o.layout = static_cast<ps::layout>(9); }));
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::table", "options.spacing (outside the enum)", "options.spacing", [opt] {
    (void)ps::table(4, 8, opt([](ps::options& o) { o.spacing = static_cast<ps::spacing>(9); }));
  }));
  rows.push_back(expect<size_error>("sinusoidal::frequencies", "d = SIZE_MAX - 1", "d", [] { (void)ps::frequencies(huge - 1); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::frequencies", "d = 1", "d", [] { (void)ps::frequencies(1); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::fill", "data (null)", "data", [] { ps::fill<double>(nullptr, 3, 4, 4); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::fill", "row_stride < d", "row_stride", [] {
    std::vector<double> b(32);
    ps::fill(b.data(), 3, 8, 4);
  }));
  rows.push_back(expect<size_error>("sinusoidal::fill", "length = SIZE_MAX", "length", [] {
    std::vector<double> b(32);
    ps::fill(b.data(), huge, 8, 8);
  }));
  rows.push_back(expect<size_error>("sinusoidal::fill", "length * row_stride", "length * row_stride", [] {
    std::vector<double> b(32);
    ps::fill(b.data(), std::size_t{1} << 30, 8, std::size_t{1} << 20);
  }));
  rows.push_back(expect<non_finite_error>("sinusoidal::table_at", "positions (NaN)", "positions", [] {
    const vec p{0.0, nan};
    (void)ps::table_at(p, 8);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::table_at", "d odd", "d", [] {
    const vec p{0.0};
    (void)ps::table_at(p, 3);
  }));
  rows.push_back(expect<non_finite_error>("sinusoidal::fill_at", "positions (Inf)", "positions", [] {
    const vec p{inf};
    std::vector<double> b(8);
    ps::fill_at(p, b.data(), 8, 8);
  }));
  rows.push_back(expect<non_finite_error>("sinusoidal::encode", "x (NaN)", "positions", [] { (void)ps::encode(nan, 8); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::block_table", "block (NaN)", "block", [] { (void)ps::block_table(4, 8, nan); }));
  rows.push_back(expect<size_error>("sinusoidal::block_table", "length = SIZE_MAX", "length", [] { (void)ps::block_table(huge, 8, 1.0); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::rotation", "phi (Inf)", "phi", [] { (void)ps::rotation(inf, 8); }));
  rows.push_back(expect<size_error>("sinusoidal::rotation", "d * d", "d * d", [] { (void)ps::rotation(1.0, std::size_t{1} << 22); }));
  rows.push_back(expect<size_error>("sinusoidal::generator", "d * d", "d * d", [] { (void)ps::generator(std::size_t{1} << 22); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::generator", "d = 0", "d", [] { (void)ps::generator(0); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::inner_product", "offset (NaN)", "offset", [] { (void)ps::inner_product(nan, 8); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::linear_dynamics", "d odd", "d", [] { ps::linear_dynamics<double> f(7); }));
  rows.push_back(expect<size_error>("sinusoidal::time_dynamics", "d = SIZE_MAX - 1", "d", [] { ps::time_dynamics<double> f(huge - 1); }));
  rows.push_back(expect<shape_error>("sinusoidal::linear_dynamics", "state (shape)", "state", [] {
    ps::linear_dynamics<double> f(4);
    Eigen::VectorXd p = Eigen::VectorXd::Zero(3), dp = Eigen::VectorXd::Zero(3);
    f(0.0, p, dp);
  }));
  // rotary (rotary.hpp)
  using tab = posenc::table<double>;
  rows.push_back(expect<non_finite_error>("rotary::apply_rotary", "x (NaN)", "x", [] {
    tab x = tab::Ones(2, 4);
    x(1, 1) = nan;
    (void)rt::apply_rotary(x);
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_rotary_inplace", "x (Inf)", "x", [] {
    tab x = tab::Ones(2, 4);
    x(0, 3) = inf;
    rt::apply_rotary_inplace(x);
  }));
  rows.push_back(expect<shape_error>("rotary::apply_rotary", "options.head_dim (does not divide)", "head_dim", [] {
    rt::options o;
    o.head_dim = 3;
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_rotary", "options.rotary_dim odd", "rotary_dim", [] {
    rt::options o;
    o.rotary_dim = 3;
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_rotary", "options.rotary_dim > head_dim", "rotary_dim", [] {
    rt::options o;
    o.head_dim = 4;
    o.rotary_dim = 8;
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_rotary", "options.base NaN", "options.base", [] {
    rt::options o;
    o.base = nan;
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_rotary", "options.base <= 0", "options.base", [] {
    rt::options o;
    o.base = 0;
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_rotary", "options.position_step Inf", "position_step", [] {
    rt::options o;
    o.position_step = inf;
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_rotary", "options.layout (outside the enum)", "options.layout", [] {
    rt::options o;
    o.layout = static_cast<rt::layout>(5);
    (void)rt::apply_rotary(tab::Ones(2, 8), o);
  }));
  rows.push_back(expect<shape_error>("rotary::apply_rotary", "positions (count)", "positions", [] {
    const vec p{0.0};
    (void)rt::apply_rotary(tab::Ones(2, 8), p);
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_rotary", "positions (NaN)", "positions", [] {
    const vec p{0.0, nan};
    (void)rt::apply_rotary(tab::Ones(2, 8), p);
  }));
  rows.push_back(expect<invalid_argument>("rotary::rotation_matrix", "head_dim = 1", "head_dim", [] { (void)rt::rotation_matrix(1.0, 1); }));
  rows.push_back(expect<size_error>("rotary::rotation_matrix", "head_dim = 2^22", "head_dim",
                                    [] { (void)rt::rotation_matrix(1.0, std::size_t{1} << 22); }));
  rows.push_back(expect<non_finite_error>("rotary::rotation_matrix", "position (NaN)", "position", [] { (void)rt::rotation_matrix(nan, 4); }));
}

void add_tupe(std::vector<row>& rows) {
  namespace tp = posenc::tupe;
  using tp::Index;
  auto cfg = [] {
    tp::config c;
    c.d = 12;
    c.heads = 3;
    return c;
  };
  constexpr Index big = std::numeric_limits<Index>::max();
  auto with = [cfg](auto f) {
    auto c = cfg();
    f(c);
    return c;
  };
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "config.d = 0", "config.d",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.d = 0; }), 4); }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "config.heads = 0", "config.heads",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.heads = 0; }), 4); }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "config.d not a multiple of heads", "config.d",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.heads = 5; }), 4); }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "config.ln_eps NaN", "config.ln_eps",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.ln_eps = nan; }), 4); }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "config.ln_eps <= 0", "config.ln_eps",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.ln_eps = 0; }), 4); }));
  rows.push_back(expect<size_error>("tupe::make_parameters", "config.d = 2^62", "config.d", [with] {
    (void)tp::make_parameters<double>(with([](tp::config& c) {
                                        c.d = Index{3} << 60;
                                        c.heads = 3;
                                      }),
                                      4);
  }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "max_len = 0", "max_len", [cfg] { (void)tp::make_parameters<double>(cfg(), 0); }));
  rows.push_back(expect<size_error>("tupe::make_parameters", "max_len = INT64_MAX", "max_len", [cfg] { (void)tp::make_parameters<double>(cfg(), big); }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "bucket_spec.num_buckets odd", "num_buckets",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.buckets.num_buckets = 7; }), 4); }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "bucket_spec.num_buckets = INT_MAX - 1", "num_buckets", [with] {
    (void)tp::make_parameters<double>(with([](tp::config& c) { c.buckets.num_buckets = std::numeric_limits<int>::max() - 1; }), 4);
  }));
  rows.push_back(expect<invalid_argument>("tupe::make_parameters", "bucket_spec.max_distance <= max_exact", "max_distance",
                                          [with] { (void)tp::make_parameters<double>(with([](tp::config& c) { c.buckets.max_distance = 2; }), 4); }));
  rows.push_back(expect<invalid_argument>("tupe::positional_bias", "n = 0", "n", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    (void)tp::positional_bias(cfg(), p, 0);
  }));
  rows.push_back(expect<shape_error>("tupe::positional_bias", "n > rows of pos", "n = 9", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    (void)tp::positional_bias(cfg(), p, 9);
  }));
  rows.push_back(expect<size_error>("tupe::positional_bias", "n = INT64_MAX", "n", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    (void)tp::positional_bias(cfg(), p, big);
  }));
  rows.push_back(expect<size_error>("tupe::positional_bias", "config.heads * n * n", "config.heads * n * n", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    (void)tp::positional_bias(cfg(), p, Index{1} << 20);
  }));
  rows.push_back(expect<shape_error>("tupe::positional_bias", "pos (width)", "position table", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    const posenc::table<double> pos = posenc::table<double>::Zero(5, 10);
    (void)tp::positional_bias<double>(cfg(), p, pos, 4);
  }));
  rows.push_back(expect<non_finite_error>("tupe::positional_bias", "pos (NaN)", "position table", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    posenc::table<double> pos = p.pos;
    pos(2, 2) = nan;
    (void)tp::positional_bias<double>(cfg(), p, pos, 4);
  }));
  rows.push_back(expect<shape_error>("tupe::positional_bias", "pos_q_weight (shape)", "pos_q_weight", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    p.pos_q_weight.resize(3, 3);
    (void)tp::positional_bias(cfg(), p, 4);
  }));
  rows.push_back(expect<non_finite_error>("tupe::positional_bias", "pos_ln_weight (NaN)", "pos_ln_weight", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    p.pos_ln_weight[0] = nan;
    (void)tp::positional_bias(cfg(), p, 4);
  }));
  rows.push_back(expect<shape_error>("tupe::positional_bias", "relative_attention_bias (shape)", "relative_attention_bias", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    p.relative_attention_bias.resize(4, 3);
    (void)tp::positional_bias(cfg(), p, 4);
  }));
  rows.push_back(expect<shape_error>("tupe::positional_bias_backward", "upstream (heads)", "upstream", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    tp::head_stack<double> up(2, 4);
    up.flat().setZero();
    (void)tp::positional_bias_backward(cfg(), p, up);
  }));
  rows.push_back(expect<non_finite_error>("tupe::positional_bias_backward", "upstream (NaN)", "upstream", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    tp::head_stack<double> up(3, 4);
    up.flat().setZero();
    up(1, 2, 3) = nan;
    (void)tp::positional_bias_backward(cfg(), p, up);
  }));
  rows.push_back(expect<size_error>("tupe::head_stack", "heads * n * n = 2^96", "heads * n * n",
                                    [] { tp::head_stack<double> h(Index{1} << 32, Index{1} << 32); }));
  rows.push_back(expect<size_error>("tupe::head_stack", "heads = INT64_MAX", "heads", [] { tp::head_stack<double> h(big, 1); }));
  rows.push_back(expect<invalid_argument>("tupe::head_stack::resize", "n < 0", "n", [] { tp::head_stack<double> h(1, -1); }));
  rows.push_back(expect<size_error>("tupe::relative_bucket_offsets", "n = 2^62 + 1", "n",
                                    [] { (void)tp::relative_bucket_offsets((Index{1} << 62) + 1); }));
  rows.push_back(expect<invalid_argument>("tupe::relative_bucket_offsets", "n = 0", "n", [] { (void)tp::relative_bucket_offsets(0); }));
  rows.push_back(expect<invalid_argument>("tupe::relative_position_bucket", "spec.num_buckets = 2", "num_buckets", [] {
    tp::bucket_spec s;
    s.num_buckets = 2;
    (void)tp::relative_position_bucket(3, s);
  }));
  rows.push_back(expect<invalid_argument>("tupe::positional_bias_cache::get", "n > max_length", "n", [cfg] {
    tp::positional_bias_cache<double> c(cfg(), tp::make_parameters<double>(cfg(), 4));
    (void)c.get(5);
  }));
  rows.push_back(expect<non_finite_error>("tupe::positional_bias_cache", "params.pos (NaN)", "position table", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    p.pos(4, 0) = nan;
    tp::positional_bias_cache<double> c(cfg(), p);
  }));
  rows.push_back(expect<shape_error>("tupe::set_fused_projection", "weight (shape)", "weight", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    tp::set_fused_projection<double>(p, posenc::matrix<double>::Zero(5, 12), posenc::vector<double>());
  }));
  rows.push_back(expect<size_error>("tupe::make_attention_parameters", "d = INT64_MAX", "d",
                                    [] { (void)tp::make_attention_parameters<double>(big); }));
  rows.push_back(expect<invalid_argument>("tupe::make_attention_parameters", "d = 0", "d", [] { (void)tp::make_attention_parameters<double>(0); }));
  auto attn = [cfg](auto mutate) {
    const auto c = cfg();
    const auto p = tp::make_parameters<double>(c, 4);
    auto w = tp::make_attention_parameters<double>(c.d);
    auto bias = tp::positional_bias(c, p, 4);
    posenc::matrix<double> x = posenc::matrix<double>::Ones(4, c.d);
    mutate(w, bias, x);
    (void)tp::attention_forward<double>(c, w, x, bias);
  };
  rows.push_back(expect<non_finite_error>("tupe::attention_forward", "x (NaN)", "x", [attn] {
    attn([](auto&, auto&, auto& x) { x(1, 1) = nan; });
  }));
  rows.push_back(expect<shape_error>("tupe::attention_forward", "x (shape)", "x", [attn] {
    attn([](auto&, auto&, auto& x) { x.resize(3, 12); });
  }));
  rows.push_back(expect<shape_error>("tupe::attention_forward", "in_proj_weight (shape)", "in_proj_weight", [attn] {
    attn([](auto& w, auto&, auto&) { w.in_proj_weight.resize(12, 12); });
  }));
  rows.push_back(expect<non_finite_error>("tupe::attention_forward", "out_proj_weight (Inf)", "out_proj_weight", [attn] {
    attn([](auto& w, auto&, auto&) { w.out_proj_weight(0, 0) = inf; });
  }));
  rows.push_back(expect<shape_error>("tupe::attention_forward", "out_proj_bias (size)", "out_proj_bias", [attn] {
    attn([](auto& w, auto&, auto&) { w.out_proj_bias.resize(5); });
  }));
  rows.push_back(expect<non_finite_error>("tupe::attention_forward", "bias (NaN)", "bias", [attn] {
    attn([](auto&, auto& b, auto&) { b(0, 1, 1) = nan; });
  }));
  rows.push_back(expect<shape_error>("tupe::masked_softmax", "key_padding_mask (size)", "key_padding_mask", [] {
    tp::head_stack<double> h(1, 3);
    h.flat().setZero();
    const std::vector<bool> mask{true};
    tp::masked_softmax(h, mask);
  }));
  rows.push_back(expect<shape_error>("tupe::attention_logits", "bias (heads)", "bias", [cfg] {
    const auto c = cfg();
    tp::head_stack<double> b(2, 3), out;
    b.flat().setZero();
    const posenc::matrix<double> q = posenc::matrix<double>::Zero(3, 12);
    tp::attention_logits<double>(c, q, q, b, out);
  }));
}

void add_toeplitz_fft(std::vector<row>& rows) {
  namespace tz = posenc::toeplitz;
  namespace fft = posenc::fft;
  const Eigen::VectorXd three = Eigen::VectorXd::Ones(3);
  rows.push_back(expect<size_error>("toeplitz::toeplitz_matrix", "rows = SIZE_MAX", "rows",
                                    [] { (void)tz::toeplitz_matrix<double>(huge, 2, Eigen::VectorXd()); }));
  rows.push_back(expect<size_error>("toeplitz::toeplitz_matrix", "cols = SIZE_MAX", "cols",
                                    [] { (void)tz::toeplitz_matrix<double>(2, huge, Eigen::VectorXd()); }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix", "rows = 0", "rows", [three] { (void)tz::toeplitz_matrix<double>(0, 4, three); }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix", "cols = 0", "cols", [three] { (void)tz::toeplitz_matrix<double>(4, 0, three); }));
  rows.push_back(expect<shape_error>("toeplitz::toeplitz_matrix", "coefficients (length)", "coefficients",
                                     [three] { (void)tz::toeplitz_matrix<double>(3, 3, three); }));
  rows.push_back(expect<shape_error>("toeplitz::toeplitz_matrix", "coefficients (not a vector)", "coefficients",
                                     [] { (void)tz::toeplitz_matrix<double>(2, 2, Eigen::MatrixXd::Ones(3, 2)); }));
  rows.push_back(expect<non_finite_error>("toeplitz::toeplitz_matrix", "coefficients (NaN)", "coefficients", [] {
    Eigen::VectorXd c = Eigen::VectorXd::Ones(3);
    c[1] = nan;
    (void)tz::toeplitz_matrix<double>(2, 2, c);
  }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix::from_column_row", "c[0] != r[0]", "first column",
                                          [] { (void)tz::toeplitz_matrix<double>::from_column_row(Eigen::VectorXd::Ones(2), Eigen::VectorXd::Zero(2)); }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix::from_column_row", "c (empty)", "first column",
                                          [] { (void)tz::toeplitz_matrix<double>::from_column_row(Eigen::VectorXd(), Eigen::VectorXd::Zero(2)); }));
  const auto B = tz::toeplitz_matrix<double>(2, 2, three);
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix::operator()", "i out of range", "i", [B] { (void)B(2, 0); }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix::row", "i out of range", "i", [B] { (void)B.row(5); }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix::col", "j out of range", "j", [B] { (void)B.col(5); }));
  rows.push_back(expect<invalid_argument>("toeplitz::toeplitz_matrix::coefficient", "d out of range", "d", [B] { (void)B.coefficient(7); }));
  rows.push_back(expect<invalid_argument>("toeplitz::circulant_matrix", "first column (empty)", "first column",
                                          [] { (void)tz::circulant_matrix<double>(Eigen::VectorXd()); }));
  rows.push_back(expect<non_finite_error>("toeplitz::circulant_matrix", "first column (Inf)", "first column", [] {
    Eigen::VectorXd c = Eigen::VectorXd::Ones(3);
    c[0] = inf;
    (void)tz::circulant_matrix<double>(c);
  }));
  rows.push_back(expect<invalid_argument>("toeplitz::circulant_embedding", "size < rows + cols - 1", "size", [B] { (void)tz::circulant_embedding(B, 2); }));
  rows.push_back(expect<size_error>("toeplitz::circulant_embedding", "size = SIZE_MAX", "size", [B] { (void)tz::circulant_embedding(B, huge); }));
  rows.push_back(expect<non_finite_error>("toeplitz::circulant_embedding", "fill (NaN)", "fill", [B] { (void)tz::circulant_embedding(B, 4, nan); }));
  rows.push_back(expect<shape_error>("toeplitz::paper_embedding", "B (not square)", "square",
                                     [] { (void)tz::paper_embedding(tz::toeplitz_matrix<double>(2, 3, Eigen::VectorXd::Ones(4))); }));
  rows.push_back(expect<invalid_argument>("toeplitz::proposition1_G", "n = 0", "n", [] { (void)tz::proposition1_G<double>(0); }));
  rows.push_back(expect<size_error>("toeplitz::proposition1_G", "n = 2^62", "n", [] { (void)tz::proposition1_G<double>(std::size_t{1} << 62); }));
  rows.push_back(expect<size_error>("toeplitz::proposition1_G", "n x 2n elements", "n * 2n", [] { (void)tz::proposition1_G<double>(std::size_t{1} << 21); }));
  rows.push_back(expect<shape_error>("toeplitz::proposition1_D", "B (not square)", "square",
                                     [] { (void)tz::proposition1_D(tz::toeplitz_matrix<double>(2, 3, Eigen::VectorXd::Ones(4))); }));
  rows.push_back(expect<invalid_argument>("toeplitz::product_plan", "fft_size too small", "fft_size", [B] { (void)tz::product_plan<double>(B, 2); }));
  rows.push_back(expect<size_error>("toeplitz::product_plan", "fft_size = SIZE_MAX", "fft_size", [B] { (void)tz::product_plan<double>(B, huge); }));
  rows.push_back(expect<shape_error>("toeplitz::product_plan::apply", "X (rows)", "X", [B] {
    tz::product_plan<double> p(B);
    (void)p.apply(Eigen::MatrixXd::Ones(3, 1));
  }));
  rows.push_back(expect<non_finite_error>("toeplitz::product_plan::apply", "X (NaN)", "X", [B] {
    tz::product_plan<double> p(B);
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 2);
    x(1, 0) = nan;
    (void)p.apply(x);
  }));
  rows.push_back(expect<shape_error>("toeplitz::multiply", "X (rows)", "X", [B] { (void)tz::multiply(B, Eigen::MatrixXd::Ones(5, 1)); }));
  rows.push_back(expect<size_error>("toeplitz::from_relative_bias", "rows = SIZE_MAX", "rows",
                                    [three] { (void)tz::from_relative_bias(huge, 2, three); }));
  rows.push_back(expect<shape_error>("toeplitz::from_relative_bias", "biases (length)", "coefficients",
                                     [three] { (void)tz::from_relative_bias(4, 4, three); }));
  rows.push_back(expect<invalid_argument>("toeplitz::from_bucketed_bias", "bucket out of range", "bucket",
                                          [three] { (void)tz::from_bucketed_bias(2, 2, three, [](std::ptrdiff_t) { return 7; }); }));
  rows.push_back(expect<invalid_argument>("toeplitz::from_bucketed_bias", "rows = 0", "rows",
                                          [three] { (void)tz::from_bucketed_bias(0, 2, three, [](std::ptrdiff_t) { return 0; }); }));
  rows.push_back(expect<size_error>("toeplitz::from_bucketed_bias", "cols = SIZE_MAX", "cols",
                                    [three] { (void)tz::from_bucketed_bias(2, huge, three, [](std::ptrdiff_t) { return 0; }); }));
  rows.push_back(expect<shape_error>("toeplitz::from_bucketed_bias", "table (empty)", "table",
                                     [] { (void)tz::from_bucketed_bias(2, 2, Eigen::VectorXd(), [](std::ptrdiff_t) { return 0; }); }));
  rows.push_back(expect<shape_error>("toeplitz::head_operators", "table (empty)", "table",
                                     [] { (void)tz::head_operators(2, 2, Eigen::MatrixXd(), [](std::ptrdiff_t) { return 0; }); }));
  // numeric/fft.hpp
  rows.push_back(expect<invalid_argument>("fft::plan", "n = 0", "size n", [] { fft::plan<double> p(0); }));
  rows.push_back(expect<size_error>("fft::plan", "n = 2^41", "size n", [] { fft::plan<double> p(std::size_t{1} << 41); }));
  rows.push_back(expect<size_error>("fft::real_plan", "n = SIZE_MAX", "size n", [] { fft::real_plan<double> p(huge); }));
  rows.push_back(expect<invalid_argument>("fft::real_plan", "n = 0", "size n", [] { fft::real_plan<float> p(0); }));
  rows.push_back(expect<invalid_argument>("fft::next_fast_size", "n > 2^52", "n", [] { (void)fft::next_fast_size(huge); }));
  rows.push_back(expect<shape_error>("fft::plan::forward", "x (length)", "input length", [] {
    fft::plan<double> p(4);
    const std::vector<std::complex<double>> x(3);
    (void)p.forward(std::span<const std::complex<double>>(x));
  }));
  rows.push_back(expect<shape_error>("fft::plan::inverse", "x (length)", "input length", [] {
    fft::plan<double> p(4);
    const std::vector<std::complex<double>> x(5);
    (void)p.inverse(std::span<const std::complex<double>>(x));
  }));
}

void add_io_writers(std::vector<row>& rows) {
  namespace io = posenc::io;
  const auto dir = std::filesystem::temp_directory_path() / "posenc-census-no-such-dir";
  rows.push_back(expect<shape_error>("io::npy_bytes", "data (count vs shape)", "shape", [] {
    const vec d(5);
    const std::vector<std::size_t> s{2, 3};
    (void)io::npy_bytes<double>(d, s);
  }));
  rows.push_back(expect<shape_error>("io::npy_bytes", "shape (overflowing product)", "shape", [] {
    const vec d(5);
    const std::vector<std::size_t> s{huge, huge};
    (void)io::npy_bytes<double>(d, s);
  }));
  rows.push_back(expect<shape_error>("io::write_npy", "data (count vs shape)", "shape", [dir] {
    io::write_npy(dir / "x.npy", vec(3), {2, 2});
  }));
  rows.push_back(expect<posenc::io_error>("io::write_npy", "path (missing directory)", "posenc-census-no-such-dir", [dir] {
    io::write_npy(dir / "x.npy", vec(4), {2, 2});
  }));
  auto st = [](std::vector<io::tensor_ref> t, io::safetensors_metadata m = {}) { (void)io::safetensors_bytes(t, m); };
  rows.push_back(expect<invalid_argument>("io::safetensors_bytes", "tensor name (empty)", "name", [st] {
    const vec d(2);
    st({io::tensor_ref("", {2}, d)});
  }));
  rows.push_back(expect<invalid_argument>("io::safetensors_bytes", "tensor name (__metadata__)", "__metadata__", [st] {
    const vec d(2);
    st({io::tensor_ref("__metadata__", {2}, d)});
  }));
  rows.push_back(expect<invalid_argument>("io::safetensors_bytes", "tensor name (duplicate)", "duplicate tensor name", [st] {
    const vec d(2);
    st({io::tensor_ref("a", {2}, d), io::tensor_ref("a", {2}, d)});
  }));
  rows.push_back(expect<invalid_argument>("io::safetensors_bytes", "tensor name (invalid UTF-8)", "name", [st] {
    const vec d(2);
    st({io::tensor_ref(std::string("\xff\xfe"), {2}, d)});
  }));
  rows.push_back(expect<shape_error>("io::safetensors_bytes", "tensor data (count vs shape)", "shape", [st] {
    const vec d(2);
    st({io::tensor_ref("a", {3}, d)});
  }));
  rows.push_back(expect<invalid_argument>("io::safetensors_bytes", "metadata (invalid UTF-8)", "metadata", [st] {
    const vec d(2);
    st({io::tensor_ref("a", {2}, d)}, {{"k", std::string("\xc3")}});
  }));
  rows.push_back(expect<posenc::io_error>("io::write_safetensors", "path (missing directory)", "posenc-census-no-such-dir", [dir] {
    const vec d(2);
    io::write_safetensors(dir / "x.safetensors", {io::tensor_ref("a", {2}, d)});
  }));
  rows.push_back(expect<invalid_argument>("io::png_rgb_bytes", "width = 0", "width", [] {
    const std::vector<std::uint8_t> rgb(3);
    (void)io::png_rgb_bytes(rgb, 0, 1);
  }));
  rows.push_back(expect<invalid_argument>("io::png_rgb_bytes", "height = 2^40", "height", [] {
    const std::vector<std::uint8_t> rgb(3);
    (void)io::png_rgb_bytes(rgb, 1, std::size_t{1} << 40);
  }));
  rows.push_back(expect<shape_error>("io::png_rgb_bytes", "rgb (size)", "rgb", [] {
    const std::vector<std::uint8_t> rgb(5);
    (void)io::png_rgb_bytes(rgb, 1, 2);
  }));
  rows.push_back(expect<shape_error>("io::write_png_rgb", "rgb (size)", "rgb", [dir] {
    const std::vector<std::uint8_t> rgb(5);
    io::write_png_rgb(dir / "x.png", rgb, 1, 2);
  }));
  rows.push_back(expect<invalid_argument>("io::heatmap_rgb", "data (null)", "data", [] { (void)io::heatmap_rgb<double>(nullptr, 2, 2); }));
  rows.push_back(expect<invalid_argument>("io::heatmap_rgb", "rows = 0", "table", [] {
    const vec d(4);
    (void)io::heatmap_rgb(d.data(), 0, 2);
  }));
  rows.push_back(expect<invalid_argument>("io::heatmap_rgb", "pixel_size = 0", "pixel_size", [] {
    const vec d(4);
    io::heatmap_options o;
    o.pixel_size = 0;
    (void)io::heatmap_rgb(d.data(), 2, 2, o);
  }));
  rows.push_back(expect<non_finite_error>("io::heatmap_rgb", "data (NaN)", "row 1, column 0", [] {
    const vec d{0.0, 1.0, nan, 2.0};
    (void)io::heatmap_rgb(d.data(), 2, 2);
  }));
  rows.push_back(expect<invalid_argument>("io::heatmap_rgb", "range (lo >= hi)", "range", [] {
    const vec d(4);
    io::heatmap_options o;
    o.range = io::value_range{1.0, 1.0};
    (void)io::heatmap_rgb(d.data(), 2, 2, o);
  }));
  rows.push_back(expect<invalid_argument>("io::write_png_heatmap", "cols * pixel_size (too large)", "pixel_size", [dir] {
    const vec d(4);
    io::heatmap_options o;
    o.pixel_size = 4096;
    io::write_png_heatmap(dir / "x.png", d.data(), 1, huge / 1024, o);
  }));
}

std::vector<row> census() {
  std::vector<row> rows;
  add_core_ode(rows);
  add_gradients(rows);
  add_floater(rows);
  add_sinusoidal_rotary(rows);
  add_tupe(rows);
  add_toeplitz_fft(rows);
  add_io_writers(rows);
  return rows;
}

}  // namespace

TEST_CASE("census: every public entry point x malformed argument throws the typed error naming the argument") {
  const auto rows = census();
  std::size_t passed = 0;
  std::set<std::string> entries;
  for (const auto& r : rows) {
    entries.insert(r.entry);
    std::string got = "no exception";
    bool type_ok = false, named = false;
    try {
      r.call();
    } catch (const std::exception& e) {
      got = std::string(typeid(e).name()) + ": " + e.what();
      type_ok = r.is(e) && dynamic_cast<const posenc::error*>(&e) != nullptr;
      named = std::string(e.what()).find(r.needle) != std::string::npos;
    }
    INFO("row: ", r.entry, " (", r.argument, "), expected ", r.type, " naming '", r.needle, "', got ", got);
    CHECK(type_ok);
    CHECK(named);
    if (type_ok && named) ++passed;
  }
  MESSAGE("census: ", passed, " of ", rows.size(), " rows pass, over ", entries.size(), " entry points");
  CHECK(passed == rows.size());
  // the count docs/reliability.md states; a row removed without updating the docs fails here
  CHECK(rows.size() >= 242);
}
