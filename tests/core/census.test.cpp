// SPDX-License-Identifier: MIT
// The malformed-argument census (issue 11): one row per public entry point x malformed argument.
// Each row makes the call and names the exception type it must throw and a substring the message
// must contain (the argument's name). The test checks every row and the row count; nothing is
// allocated beyond a few kilobytes (huge sizes must be rejected before allocating).
//
// Coverage by construction (issue 26): the second test case lists the public entry points of
// include/posenc (free functions and types at namespace scope outside detail, read from the
// headers) and checks them against tests/core/census_registry.txt, which states for each entry
// point and each of six kinds of bad input (zero size, huge size, overflowing product, NaN/Inf,
// null or short buffer, out-of-range offset) whether the census has a row of that kind ("row"),
// why the kind does not apply ("n/a:<reason>"), or that the row is still missing ("todo", a
// count that may only go down). A new public function fails the test until it is registered.
// The entry points of posenc_figures (examples/figures/include: the PNG writer and its compressor,
// figure-making outside the installed headers) are counted the same way.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

#include <posenc/posenc.hpp>
#include <posenc_figures/png.hpp>

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

/// A scratch file or folder under the temp directory, removed when it goes out of scope (the
/// reader rows need a file on disk; the name is unique per process, so parallel runs do not meet).
struct scratch {
  std::filesystem::path path;
  explicit scratch(const std::string& name) {
    static const std::string tag = std::to_string(std::random_device{}());
    path = std::filesystem::temp_directory_path() / ("posenc-census-" + tag + "-" + name);
  }
  scratch(const std::string& name, const std::string& bytes) : scratch(name) { write(path, bytes); }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  static void write(const std::filesystem::path& p, const std::string& bytes) {
    std::ofstream o(p, std::ios::binary);
    o.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
};

/// A version 1.0 .npy image: the header dict text, then `data_bytes` zero bytes.
std::string npy_image(const std::string& dict, std::size_t data_bytes = 0) {
  std::string s("\x93NUMPY\x01\x00", 8);
  s += static_cast<char>(dict.size() & 0xFF);
  s += static_cast<char>(dict.size() >> 8);
  return s + dict + std::string(data_bytes, '\0');
}
/// The header dicts of a .npy whose shape promises 2^40 + 1 values, or an overflowing count.
const std::string npy_huge_dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627777,), }";
const std::string npy_product_dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }";
/// A .npy whose header length field (0x7FFF) runs past the end of the bytes.
std::string npy_long_header() { return npy_image("").substr(0, 8) + std::string("\xFF\x7F{}", 4); }

/// A safetensors image: 8-byte little-endian header length, the header, then `data_bytes` bytes.
std::string safetensors_image(const std::string& header, std::size_t data_bytes) {
  std::string s(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) s[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return s + header + std::string(data_bytes, '\0');
}

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
  // ode::integrate (both policies; the rows above name the policy)
  rows.push_back(expect<posenc::grid_error>("ode::integrate", "times (empty)", "times", [run_fixed] { run_fixed({}, fixed_steps{}); }));
  rows.push_back(expect<step_budget_exceeded>("ode::integrate", "substeps * intervals = 2^62 * 4 overflows (max_steps = SIZE_MAX)", "max_steps", [run_fixed] {
    run_fixed({0.0, 1.0, 2.0, 3.0, 4.0}, fixed_steps{.substeps = std::size_t{1} << 62, .max_step = 0, .max_steps = huge});
  }));
  rows.push_back(expect<posenc::grid_error>("ode::integrate", "adaptive: times (NaN)", "times", [run_adaptive] { run_adaptive({0.0, nan}, adaptive{}); }));
  // ode::grid: time(i) read an explicit grid past its end; for_each_substep(0, ...) read t_{SIZE_MAX}
  auto three = [] { return grid::explicit_times({0.0, 0.5, 1.0}); };
  rows.push_back(expect<invalid_argument>("ode::grid::time", "i = 3 out of range (3 points)", "i", [three] { (void)three().time(3); }));
  rows.push_back(expect<invalid_argument>("ode::grid::time", "i = SIZE_MAX", "i", [three] { (void)three().time(huge); }));
  rows.push_back(expect<invalid_argument>("ode::grid::for_each_substep", "interval i = 0 (out of range)", "i",
                                          [three] { three().for_each_substep(0, 2, [](std::size_t, double, double) {}); }));
  rows.push_back(expect<invalid_argument>("ode::grid::for_each_substep", "interval i = 3 (out of range)", "i",
                                          [three] { three().for_each_substep(3, 2, [](std::size_t, double, double) {}); }));
  rows.push_back(expect<posenc::grid_error>("ode::grid::require_points", "L = 5 (short: 3 points)", "L = 5",
                                            [three] { three().require_points(5, "census"); }));
  rows.push_back(expect<posenc::grid_error>("ode::grid::require_points", "L = SIZE_MAX", "L", [three] { three().require_points(huge, "census"); }));
  // ode::substep with s = k = SIZE_MAX (s must be < k)
  rows.push_back(expect<invalid_argument>("ode::substep", "k = s = SIZE_MAX", "s", [] { (void)substep(0.0, 1.0, huge, huge); }));
  // explicit_rk: a NaN step made every stage NaN; theta outside [0, 1]
  rows.push_back(expect<non_finite_error>("ode::explicit_rk::step", "h (NaN)", "h", [decay] {
    explicit_rk<schemes::rk4, vec> st(vec(2));
    vec y(2, 1.0);
    auto f = decay;
    st.step(f, 0.0, y, nan);
  }));
  rows.push_back(expect<non_finite_error>("ode::explicit_rk::step", "t (Inf)", "t", [decay] {
    explicit_rk<schemes::rk4, vec> st(vec(2));
    vec y(2, 1.0);
    auto f = decay;
    st.step(f, inf, y, 0.1);
  }));
  rows.push_back(expect<invalid_argument>("ode::explicit_rk::dense_output", "theta = 2 (out of range)", "theta", [decay] {
    explicit_rk<schemes::dopri5, vec> st(vec(1));
    auto f = decay;
    const vec y0{1.0};
    vec y1{0.0}, out{0.0};
    (void)st.step_with_error(f, 0.0, y0, y1, 0.1, 1e-6, 1e-6);
    st.dense_output(f, 0.0, 0.1, 2.0, y0, y1, out);
  }));
  rows.push_back(expect<shape_error>("ode::explicit_rk::dense_output", "out (shape)", "state y", [decay] {
    explicit_rk<schemes::dopri5, vec> st(vec(1));
    auto f = decay;
    const vec y0{1.0};
    vec y1{0.0}, out;
    (void)st.step_with_error(f, 0.0, y0, y1, 0.1, 1e-6, 1e-6);
    st.dense_output(f, 0.0, 0.1, 0.5, y0, y1, out);
  }));
  // posenc::linear_combination: a shorter state was read past its end
  rows.push_back(expect<shape_error>("linear_combination", "x1 (shape)", "state x1", [] {
    vec out(4), a(4, 1.0), b(3, 1.0);
    posenc::linear_combination<posenc::backend::serial>(out, 1.0, a, 2.0, b);
  }));
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
  // backprop: the step list of max_steps = SIZE_MAX steps and max_stored_steps = SIZE_MAX states
  // were allocated unchecked (std::length_error / bad_alloc)
  rows.push_back(expect<size_error>("ode::backprop", "substeps = 2^41 (max_steps = SIZE_MAX)", "steps", [bp, up2] {
    bp({0.0, 1.0}, fixed_steps{.substeps = std::size_t{1} << 41, .max_step = 0, .max_steps = huge}, up2);
  }));
  rows.push_back(expect<step_budget_exceeded>("ode::backprop", "substeps * intervals = 2^63 * 2 overflows", "max_steps", [bp] {
    bp({0.0, 1.0, 2.0}, fixed_steps{.substeps = std::size_t{1} << 63, .max_step = 0, .max_steps = huge}, {vec{0.0}, vec{0.0}, vec{1.0}});
  }));
  rows.push_back(expect<step_budget_exceeded>("ode::adjoint", "substeps = SIZE_MAX", "substeps", [up2] {
    decay_k f;
    vec gy0, gth{0.0};
    const vec y0{1.0}, t{0.0, 1.0};
    adjoint(schemes::rk4{}, f, y0, std::span<const double>(t), fixed_steps{huge}, std::span<const vec>(up2), gy0, gth);
  }));
  rows.push_back(expect<step_budget_exceeded>("ode::adjoint", "substeps * intervals = 2^63 * 2 overflows", "max_steps", [] {
    decay_k f;
    vec gy0, gth{0.0};
    const vec y0{1.0}, t{0.0, 1.0, 2.0};
    const std::vector<vec> up{vec{0.0}, vec{0.0}, vec{1.0}};
    adjoint(schemes::rk4{}, f, y0, std::span<const double>(t),
            fixed_steps{.substeps = std::size_t{1} << 63, .max_step = 0, .max_steps = huge}, std::span<const vec>(up), gy0, gth);
  }));
  // reverse_step (the reverse sweep backprop and FLOATER share): h and the cotangent shapes
  auto rev = [](double h, std::size_t kbar_size, std::size_t ybar1_size) {
    vec ybar(2, 1.0), kbar(kbar_size);
    std::array<vec, 4> Ybar{vec(2), vec(ybar1_size), vec(2), vec(2)};
    reverse_step<schemes::rk4, posenc::backend::serial>(ybar, h, Ybar, kbar, [](std::size_t, const vec&, vec&) {});
  };
  rows.push_back(expect<non_finite_error>("ode::reverse_step", "h (NaN)", "h", [rev] { rev(nan, 2, 2); }));
  rows.push_back(expect<shape_error>("ode::reverse_step", "kbar (shape)", "kbar", [rev] { rev(0.1, 1, 2); }));
  rows.push_back(expect<shape_error>("ode::reverse_step", "Ybar[1] (short)", "Ybar", [rev] { rev(0.1, 2, 1); }));
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
  // every kind of every floater entry point (issue 26): zero sizes are a default mlp (d = 0) or
  // no block, huge sizes and overflowing products go through L, p0_shape or a tensor's shape
  const auto m0 = [] { return fl::mlp<double>(); };
  rows.push_back(expect<invalid_argument>("floater::flatten", "theta default (d = 0)", "d >= 1", [m0] { (void)fl::flatten(m0()); }));
  rows.push_back(expect<invalid_argument>("floater::unflatten", "theta default (d = 0)", "d >= 1", [m0] {
    auto x = m0();
    fl::unflatten(posenc::vector<double>(), x);
  }));
  rows.push_back(expect<invalid_argument>("floater::init_xavier_normal", "m default (d = 0)", "d >= 1", [m0] {
    auto x = m0();
    std::mt19937_64 rng(1);
    fl::init_xavier_normal(x, rng);
  }));
  rows.push_back(expect<invalid_argument>("floater::init_small", "m default (d = 0)", "d >= 1", [m0] {
    auto x = m0();
    std::mt19937_64 rng(1);
    fl::init_small(x, rng);
  }));
  // flow: theta is validated when the flow is made, y's width at each call (it indexed unchecked)
  rows.push_back(expect<invalid_argument>("floater::flow", "theta default (d = 0)", "d >= 1", [m0] {
    const auto x = m0();
    fl::flow<double> f(x);
  }));
  rows.push_back(expect<invalid_argument>("floater::flow", "threads = SIZE_MAX", "threads", [m] {
    const auto x = m();
    fl::flow<double> f(x, huge);
  }));
  rows.push_back(expect<non_finite_error>("floater::flow", "theta.w1 (NaN)", "w1", [m] {
    auto x = m();
    x.w1(1, 2) = nan;
    fl::flow<double> f(x);
  }));
  rows.push_back(expect<shape_error>("floater::flow", "theta.w2 short (shape)", "w2", [m] {
    auto x = m();
    x.w2.resize(4, 2);
    fl::flow<double> f(x);
  }));
  rows.push_back(expect<shape_error>("floater::flow::operator()", "y (width)", "y", [m] {
    const auto x = m();
    fl::flow<double> f(x);
    tab dy;
    f(0.0, tab::Zero(2, 3), dy);
  }));
  rows.push_back(expect<shape_error>("floater::flow::vjp", "a (count of rows)", "a (cotangent)", [m] {
    const auto x = m();
    fl::flow<double> f(x);
    tab ady;
    auto g = fl::flow<double>::zero_like(x);
    f.vjp(0.0, tab::Zero(2, 4), tab::Zero(1, 4), ady, g);
  }));
  // biased_encoder: n and L are checked before the base table is made (L = SIZE_MAX made a table
  // of -1 rows: Eigen's assertion, or std::bad_alloc in a release build)
  rows.push_back(expect<invalid_argument>("floater::biased_encoder::block_table", "L = 0", "L", [enc] {
    fl::biased_encoder<double> b(enc());
    (void)b.block_table(0, 0);
  }));
  rows.push_back(expect<size_error>("floater::biased_encoder::block_table", "L = SIZE_MAX (no base)", "L", [enc] {
    fl::biased_encoder<double> b(enc());
    (void)b.block_table(0, huge);
  }));
  rows.push_back(expect<size_error>("floater::biased_encoder::block_table", "L * blocks * d (L = max_extent)", "L * blocks * d", [enc] {
    fl::biased_encoder<double> b(enc(), [](std::size_t L, std::size_t d) {
      return tab::Zero(static_cast<Eigen::Index>(L), static_cast<Eigen::Index>(d));
    });
    (void)b.block_table(0, posenc::max_extent);
  }));
  rows.push_back(expect<size_error>("floater::biased_encoder::base", "L = 2^41", "L", [enc] {
    fl::biased_encoder<double> b(enc());
    (void)b.base(std::size_t{1} << 41);
  }));
  rows.push_back(expect<invalid_argument>("floater::biased_encoder::block_table", "n (block) out of range", "block", [enc] {
    fl::biased_encoder<double> b(enc());
    (void)b.block_table(2, 3);
  }));
  rows.push_back(expect<invalid_argument>("floater::zero_encoder", "options.delta NaN", "delta", [] {
    fl::options o;
    o.delta = nan;
    (void)fl::zero_encoder<double>(4, 3, 2, o);
  }));
  // make_encoder: its weights' checks are the encoder's
  rows.push_back(expect<invalid_argument>("floater::make_encoder", "weights default (d = 0)", "d >= 1",
                                          [] { (void)fl::make_encoder(fl::weights<double>{}); }));
  rows.push_back(expect<invalid_argument>("floater::make_encoder", "options.substeps = SIZE_MAX", "substeps", [m] {
    fl::options o;
    o.substeps = huge;
    (void)fl::make_encoder(fl::weights<double>{m(), tab::Zero(1, 4), {}}, o);
  }));
  rows.push_back(expect<non_finite_error>("floater::make_encoder", "weights.p0 (NaN)", "p0", [m] {
    fl::weights<double> w{m(), tab::Zero(1, 4), {}};
    w.p0(0, 3) = nan;
    (void)fl::make_encoder(w);
  }));
  rows.push_back(expect<shape_error>("floater::make_encoder", "weights.p0 (width)", "p0",
                                     [m] { (void)fl::make_encoder(fl::weights<double>{m(), tab::Zero(1, 3), {}}); }));
  // to_tensors and the two savers (which call it first, before touching the disk): a p0 the
  // loaders would reject (no block, NaN) was written; p0_shape must hold p0
  const auto nowhere = std::filesystem::temp_directory_path() / "posenc-census-no-such-dir" / "x";
  using saver = std::function<void(const fl::mlp<double>&, const tab&, std::vector<std::size_t>)>;
  const std::vector<std::pair<const char*, saver>> savers{
      {"floater::to_tensors", [](const fl::mlp<double>& f, const tab& p, std::vector<std::size_t> s) { (void)fl::to_tensors(f, p, {}, std::move(s)); }},
      {"floater::save_safetensors", [nowhere](const fl::mlp<double>& f, const tab& p, std::vector<std::size_t> s) { fl::save_safetensors(nowhere, f, p, {}, std::move(s)); }},
      {"floater::save_npy_folder", [nowhere](const fl::mlp<double>& f, const tab& p, std::vector<std::size_t> s) { fl::save_npy_folder(nowhere, f, p, {}, std::move(s)); }}};
  for (const auto& [entry, save] : savers) {
    rows.push_back(expect<invalid_argument>(entry, "p0 (no rows, = 0)", "p0", [m, save = save] { save(m(), tab::Zero(0, 4), {}); }));
    rows.push_back(expect<shape_error>(entry, "p0_shape = [2^40 + 1, 4] (huge)", "p0_shape", [m, save = save] {
      save(m(), tab::Zero(2, 4), {(std::size_t{1} << 40) + 1, 4});
    }));
    rows.push_back(expect<shape_error>(entry, "p0_shape [2^32, 2^32, 4] (product overflows)", "p0_shape", [m, save = save] {
      save(m(), tab::Zero(2, 4), {std::size_t{1} << 32, std::size_t{1} << 32, 4});
    }));
    rows.push_back(expect<non_finite_error>(entry, "p0 (NaN)", "p0", [m, save = save] {
      tab p = tab::Zero(2, 4);
      p(1, 1) = nan;
      save(m(), p, {});
    }));
    rows.push_back(expect<shape_error>(entry, "p0 (width)", "p0", [m, save = save] { save(m(), tab::Zero(2, 3), {}); }));
  }
  // weights_from_tensors: a getter may return any io::array; one whose data does not hold its
  // shape was copied into a matrix of the shape's size (a heap overflow, or a huge allocation)
  using arr = posenc::io::array<double>;
  const fl::tensor_names tn;
  const auto tensors = [tn](std::function<void(std::map<std::string, arr>&)> edit) {
    std::map<std::string, arr> t{{tn.w1, arr{{3, 5}, vec(15)}},
                                 {tn.b1, arr{{3}, vec(3)}},
                                 {tn.w2, arr{{4, 4}, vec(16)}},
                                 {tn.b2, arr{{4}, vec(4)}},
                                 {tn.p0, arr{{1, 4}, vec(4)}}};
    edit(t);
    (void)fl::weights_from_tensors<double>([t](const std::string& n) { return t.at(n); });
  };
  rows.push_back(expect<shape_error>("floater::weights_from_tensors", "p0 of shape [0, 4] (empty)", "proj_bias",
                                     [tensors, tn] { tensors([tn](auto& t) { t[tn.p0] = arr{{0, 4}, {}}; }); }));
  rows.push_back(expect<shape_error>("floater::weights_from_tensors", "w1 of shape [2^40 + 1, 5] with 15 values (huge)", "15 elements",
                                     [tensors, tn] { tensors([tn](auto& t) { t[tn.w1].shape = {(std::size_t{1} << 40) + 1, 5}; }); }));
  rows.push_back(expect<shape_error>("floater::weights_from_tensors", "w1 of shape [2^32, 2^32, 5] (product overflows)", "overflowing",
                                     [tensors, tn] { tensors([tn](auto& t) { t[tn.w1].shape = {std::size_t{1} << 32, std::size_t{1} << 32, 5}; }); }));
  rows.push_back(expect<non_finite_error>("floater::weights_from_tensors", "b1 (NaN)", "linear.bias",
                                          [tensors, tn] { tensors([tn](auto& t) { t[tn.b1].data[2] = nan; }); }));
  rows.push_back(expect<shape_error>("floater::weights_from_tensors", "w1 data of 100 values for shape [3, 5] (size)", "100 elements",
                                     [tensors, tn] { tensors([tn](auto& t) { t[tn.w1].data.assign(100, 0.0); }); }));
  // the two loaders on crafted files: p0 empty or NaN (weights_from_tensors' checks), a tensor
  // whose header promises 2^40 + 1 values or an overflowing count, a header past the file's end
  rows.push_back(expect<shape_error>("floater::load_npy_folder", "p0.npy of shape (0, 4) (empty)", "proj_bias", [m] {
    const scratch dir("npy-folder-zero");
    fl::save_npy_folder(dir.path, m(), tab(tab::Zero(1, 4)));
    posenc::io::write_npy(dir.path / "proj_bias.npy", vec{}, {0, 4});
    (void)fl::load_npy_folder<double>(dir.path);
  }));
  rows.push_back(expect<non_finite_error>("floater::load_npy_folder", "p0.npy (NaN)", "proj_bias", [m] {
    const scratch dir("npy-folder-nan");
    fl::save_npy_folder(dir.path, m(), tab(tab::Zero(1, 4)));
    posenc::io::write_npy(dir.path / "proj_bias.npy", vec{0, nan, 0, 0}, {1, 4});
    (void)fl::load_npy_folder<double>(dir.path);
  }));
  for (const auto& [what, bytes, needle] :
       {std::tuple<const char*, std::string, const char*>{"p0.npy of shape (2^40 + 1,) with no data (huge)", npy_image(npy_huge_dict), "truncated"},
        {"p0.npy of shape (2^32, 2^32, 2) (product overflows)", npy_image(npy_product_dict), "overflows"},
        {"p0.npy header length beyond the file (offset)", npy_long_header(), "header length"}}) {
    rows.push_back(expect<posenc::io_error>("floater::load_npy_folder", what, needle, [m, bytes = bytes] {
      const scratch dir("npy-folder-bad");
      fl::save_npy_folder(dir.path, m(), tab(tab::Zero(1, 4)));
      scratch::write(dir.path / "proj_bias.npy", bytes);
      (void)fl::load_npy_folder<double>(dir.path);
    }));
  }
  rows.push_back(expect<shape_error>("floater::load_safetensors", "p0 of shape [0, 4] (empty)", "proj_bias", [m] {
    const scratch f("load-zero.safetensors");
    auto t = fl::to_tensors(m(), tab(tab::Zero(1, 4)));
    t.back().second = arr{{0, 4}, {}};
    std::vector<posenc::io::tensor_ref> refs;
    for (const auto& [n, a] : t) refs.emplace_back(n, a);
    posenc::io::write_safetensors(f.path, refs);
    (void)fl::load_safetensors<double>(f.path);
  }));
  rows.push_back(expect<non_finite_error>("floater::load_safetensors", "p0 (Inf)", "proj_bias", [m] {
    const scratch f("load-inf.safetensors");
    auto t = fl::to_tensors(m(), tab(tab::Zero(1, 4)));
    t.back().second.data[1] = inf;
    std::vector<posenc::io::tensor_ref> refs;
    for (const auto& [n, a] : t) refs.emplace_back(n, a);
    posenc::io::write_safetensors(f.path, refs);
    (void)fl::load_safetensors<double>(f.path);
  }));
  for (const auto& [what, header, needle] :
       {std::tuple<const char*, std::string, const char*>{"p0 of shape [2^40 + 1] in 8 bytes (huge)", R"({"proj_bias":{"dtype":"F64","shape":[1099511627777],"data_offsets":[0,8]}})", "proj_bias"},
        {"p0 shape [2^32, 2^32, 2] (product overflows)", R"({"proj_bias":{"dtype":"F64","shape":[4294967296,4294967296,2],"data_offsets":[0,8]}})", "shape"},
        {"p0 data_offsets beyond the file (offset)", R"({"proj_bias":{"dtype":"F64","shape":[1],"data_offsets":[0,64]}})", "data_offsets"}}) {
    rows.push_back(expect<posenc::io_error>("floater::load_safetensors", what, needle, [header = header] {
      const scratch f("load-bad.safetensors", safetensors_image(header, 8));
      (void)fl::load_safetensors<double>(f.path);
    }));
  }
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
  // every kind of the row-matrix rotary entry points, and of ALiBi's write_bias and
  // validate_ragged (issue 26)
  rows.push_back(expect<shape_error>("rotary::apply_rotary", "options.head_dim = SIZE_MAX", "head_dim", [] {
    rt::options o;
    o.head_dim = huge;
    (void)rt::apply_rotary(tab::Ones(2, 4), o);
  }));
  rows.push_back(expect<shape_error>("rotary::apply_rotary_inplace", "x with 0 columns (empty)", "x: expected", [] {
    tab x(2, 0);
    rt::apply_rotary_inplace(x);
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_rotary_inplace", "options.rotary_dim = SIZE_MAX", "rotary_dim", [] {
    tab x = tab::Ones(2, 4);
    rt::options o;
    o.rotary_dim = huge;
    rt::apply_rotary_inplace(x, o);
  }));
  rows.push_back(expect<shape_error>("rotary::apply_rotary_inplace", "positions (count)", "positions", [] {
    tab x = tab::Ones(2, 4);
    const vec p{0.0, 1.0, 2.0};
    rt::apply_rotary_inplace(x, p);
  }));
  rows.push_back(expect<invalid_argument>("rotary::rotation_matrix", "head_dim = 0", "head_dim", [] { (void)rt::rotation_matrix(1.0, 0); }));
  // the head_dim x head_dim result is checked before its head_dim / 2 frequencies are computed
  // (2^29 of them, 16 GiB, came first)
  rows.push_back(expect<size_error>("rotary::rotation_matrix", "head_dim * head_dim = 2^60 elements", "head_dim * head_dim",
                                    [] { (void)rt::rotation_matrix(1.0, std::size_t{1} << 30); }));
  rows.push_back(expect<posenc::shape_error>("rotary::compute_frequencies", "short_factor (count)", "short_factor", [] {
    rt::rope_config c;
    c.type = rt::rope_type::longrope;
    c.head_dim = 8;
    c.max_position_embeddings = 100;
    c.original_max_position_embeddings = 50;
    c.short_factor = {1, 1};
    c.long_factor = {1, 1, 1, 1};
    (void)rt::compute_frequencies(c);
  }));
  namespace pa = posenc::alibi;
  rows.push_back(expect<size_error>("alibi::write_bias", "scores sizes product overflows (2^62 * 8, null data)", "sizes", [] {
    pa::write_bias<float>(pa::scores_view<float>::contiguous(nullptr, {std::size_t{1} << 62, 2, 2, 2}), vec{0.5, 0.25});
  }));
  rows.push_back(expect<non_finite_error>("alibi::write_bias", "slopes (NaN)", "slopes[0]", [] {
    std::vector<float> s(4);
    pa::write_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 1, 2, 2}), vec{nan});
  }));
  rows.push_back(expect<shape_error>("alibi::write_bias", "scores (null data)", "scores", [] {
    pa::write_bias<float>(pa::scores_view<float>::contiguous(nullptr, {1, 1, 2, 2}), vec{0.5});
  }));
  rows.push_back(expect<invalid_argument>("alibi::write_bias", "q_offsets = INT64_MIN (offset)", "q_offsets[0]", [] {
    std::vector<float> s(4);
    pa::write_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 1, 2, 2}), vec{0.5},
                          std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()});
  }));
  rows.push_back(expect<invalid_argument>("alibi::validate_ragged", "cu_seqlens_q decreasing (negative length)", "cu_seqlens", [] {
    std::vector<float> s(4);
    const std::vector<std::int64_t> cq{0, 2, 1}, ck{0, 2, 2};
    pa::validate_ragged<float, std::int64_t>(pa::ragged_scores_view<float>::contiguous(s.data(), {1, 1, 2}), vec{0.5}, cq, ck, {},
                                             "alibi::validate_ragged");
  }));
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
  // A table long enough that heads * n * n = 32 * 2^36 = 2^41 exceeds max_elements (2^40): get(n)
  // must refuse before it allocates the [H, n, n] term (pos itself is (2^18 + 1) x 32 floats, 32 MiB).
  rows.push_back(expect<size_error>("tupe::positional_bias_cache::get", "n = 2^18 with 32 heads (heads * n * n = 2^41 elements)",
                                    "heads * n * n", [] {
    tp::config c;
    c.d = 32;
    c.heads = 32;
    tp::positional_bias_cache<float> cache(c, tp::make_parameters<float>(c, Index{1} << 18));
    (void)cache.get(Index{1} << 18);
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
  rows.push_back(expect<non_finite_error>("tupe::attention_logits", "q (NaN)", "q", [cfg] {
    const auto c = cfg();
    tp::head_stack<double> b(3, 3), out;
    b.flat().setZero();
    posenc::matrix<double> q = posenc::matrix<double>::Zero(3, 12);
    q(1, 4) = nan;
    tp::attention_logits<double>(c, q, posenc::matrix<double>::Zero(3, 12), b, out);
  }));
  rows.push_back(expect<non_finite_error>("tupe::attention_logits", "bias (Inf)", "bias", [cfg] {
    const auto c = cfg();
    tp::head_stack<double> b(3, 3), out;
    b.flat().setZero();
    b(2, 0, 1) = inf;
    const posenc::matrix<double> q = posenc::matrix<double>::Zero(3, 12);
    tp::attention_logits<double>(c, q, q, b, out);
  }));
  rows.push_back(expect<non_finite_error>("tupe::masked_softmax", "logits (NaN)", "logit", [] {
    tp::head_stack<double> h(1, 3);
    h.flat().setZero();
    h(0, 1, 2) = nan;
    tp::masked_softmax(h, std::span<const bool>());
  }));
  rows.push_back(expect<shape_error>("tupe::set_fused_projection", "weight [0, 0] (empty: d = 0)", "weight", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    tp::set_fused_projection<double>(p, posenc::matrix<double>(0, 0), posenc::vector<double>());
  }));
  rows.push_back(expect<non_finite_error>("tupe::set_fused_projection", "weight (NaN)", "weight", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    posenc::matrix<double> w = posenc::matrix<double>::Zero(24, 12);
    w(3, 3) = nan;
    tp::set_fused_projection<double>(p, w, posenc::vector<double>());
  }));
  rows.push_back(expect<non_finite_error>("tupe::set_fused_projection", "bias (Inf)", "bias", [cfg] {
    auto p = tp::make_parameters<double>(cfg(), 4);
    posenc::vector<double> b = posenc::vector<double>::Zero(24);
    b[5] = -inf;
    tp::set_fused_projection<double>(p, posenc::matrix<double>::Zero(24, 12), b);
  }));
  rows.push_back(expect<size_error>("tupe::make_attention_parameters", "d = 2^20 (3d * d elements)", "d",
                                    [] { (void)tp::make_attention_parameters<double>(Index{1} << 20); }));
  rows.push_back(expect<size_error>("tupe::make_parameters", "max_len * config.d = 2^30 * 6144 elements", "max_len", [with] {
    (void)tp::make_parameters<double>(with([](tp::config& c) { c.d = 6144; }), Index{1} << 30);
  }));
  rows.push_back(expect<invalid_argument>("tupe::positional_bias_backward", "upstream n = 0", "n", [cfg] {
    const auto p = tp::make_parameters<double>(cfg(), 4);
    tp::head_stack<double> up(3, 0);
    (void)tp::positional_bias_backward(cfg(), p, up);
  }));
  // validate_parameters: the one check of the host and device positional_bias, called directly
  auto vp = [cfg](Index n, auto mutate) {
    auto p = tp::make_parameters<double>(cfg(), 4);
    mutate(p);
    tp::validate_parameters<double>(cfg(), p, p.pos, n, "census");
  };
  auto same = [](tp::parameters<double>&) {};
  rows.push_back(expect<invalid_argument>("tupe::validate_parameters", "n = 0", "n", [vp, same] { vp(0, same); }));
  rows.push_back(expect<size_error>("tupe::validate_parameters", "n = INT64_MAX", "n", [vp, same] { vp(big, same); }));
  rows.push_back(expect<size_error>("tupe::validate_parameters", "config.heads * n * n", "config.heads * n * n",
                                    [vp, same] { vp(Index{1} << 20, same); }));
  rows.push_back(expect<non_finite_error>("tupe::validate_parameters", "pos (NaN)", "position table",
                                          [vp] { vp(4, [](tp::parameters<double>& p) { p.pos(1, 1) = nan; }); }));
  rows.push_back(expect<shape_error>("tupe::validate_parameters", "pos_k_bias (size)", "pos_k_bias",
                                     [vp] { vp(4, [](tp::parameters<double>& p) { p.pos_k_bias.resize(5); }); }));
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
  // product_plan::apply: Y = B X was resized to rows(B) x cols(X) unchecked (std::bad_alloc); X is
  // an expression here, so nothing of its size is allocated
  rows.push_back(expect<size_error>("toeplitz::multiply", "Y: rows * columns of X = 4 * 2^39 elements", "rows of B * columns of X", [] {
    const auto B4 = tz::toeplitz_matrix<double>(4, 1, Eigen::VectorXd::Ones(4));
    (void)tz::multiply(B4, Eigen::MatrixXd::Zero(1, Eigen::Index{1} << 39));
  }));
  rows.push_back(expect<size_error>("toeplitz::product_plan::apply", "X columns = 2^62 (rows * columns overflows)", "columns of X", [B] {
    tz::product_plan<double> p(B);
    (void)p.apply(Eigen::MatrixXd::Zero(2, Eigen::Index{1} << 62));
  }));
  rows.push_back(expect<shape_error>("toeplitz::from_bucketed_bias", "table (shape)", "table",
                                     [] { (void)tz::from_bucketed_bias(2, 2, Eigen::MatrixXd::Ones(2, 2), [](std::ptrdiff_t) { return 0; }); }));
  rows.push_back(expect<shape_error>("toeplitz::head_operators", "table [2, 0] (shape)", "table",
                                     [] { (void)tz::head_operators(2, 2, Eigen::MatrixXd(2, 0), [](std::ptrdiff_t) { return 0; }); }));
  // head_operators built one plan per head before any bound on heads * (rows + cols - 1)
  rows.push_back(expect<size_error>("toeplitz::head_operators", "heads * (rows + cols - 1) = 2^11 * (2^31 - 1) elements",
                                    "heads * (rows + cols - 1)", [] {
                                      (void)tz::head_operators(std::size_t{1} << 30, std::size_t{1} << 30, Eigen::MatrixXd::Ones(2048, 2),
                                                               [](std::ptrdiff_t) { return 0; });
                                    }));
  // numeric/fft.hpp
  rows.push_back(expect<invalid_argument>("fft::plan", "n = 0", "size n", [] { fft::plan<double> p(0); }));
  rows.push_back(expect<size_error>("fft::plan", "n = 2^41", "size n", [] { fft::plan<double> p(std::size_t{1} << 41); }));
  rows.push_back(expect<size_error>("fft::real_plan", "n = SIZE_MAX", "size n", [] { fft::real_plan<double> p(huge); }));
  rows.push_back(expect<invalid_argument>("fft::real_plan", "n = 0", "size n", [] { fft::real_plan<float> p(0); }));
  rows.push_back(expect<invalid_argument>("fft::next_fast_size", "n > 2^52", "n", [] { (void)fft::next_fast_size(huge); }));
  rows.push_back(expect<invalid_argument>("fft::plan::forward", "re (null)", "re", [] {
    fft::plan<double> p(4);
    std::vector<double> im(4);
    p.forward(nullptr, im.data());
  }));
  rows.push_back(expect<invalid_argument>("fft::real_plan::forward", "in (null)", "in", [] {
    fft::real_plan<double> p(8);
    std::vector<std::complex<double>> out(5);
    p.forward(nullptr, out.data());
  }));
  rows.push_back(expect<invalid_argument>("fft::real_plan::inverse", "out (null)", "out", [] {
    fft::real_plan<double> p(8);
    const std::vector<std::complex<double>> in(5);
    p.inverse(in.data(), nullptr);
  }));
  rows.push_back(expect<invalid_argument>("fft::batch_plan::forward", "im (null)", "im", [] {
    fft::batch_plan<double> p(4);
    std::vector<double> re(4 * p.width());
    p.forward(re.data(), nullptr);
  }));
  rows.push_back(expect<invalid_argument>("fft::batch_plan::pack_real", "src[0] (null column)", "columns", [] {
    fft::batch_plan<double> p(4);
    const double* src[1] = {nullptr};
    const std::size_t step[1] = {1};
    p.pack_real(src, step, 1, 8);
  }));
  // numeric/real_spectrum.hpp: den = 0 was num % 0; h = SIZE_MAX looped forever (k <= h)
  rows.push_back(expect<invalid_argument>("fft::unit_root", "den = 0", "den", [] {
    double re = 0, im = 0;
    fft::unit_root(std::uint64_t{1}, std::uint64_t{0}, re, im);
  }));
  {
    using half_fn = void (*)(std::size_t, const double*, const double*, const double*, const double*, double*, double*);
    const std::pair<const char*, half_fn> half[2] = {{"fft::split_half_spectrum", &fft::split_half_spectrum<double>},
                                                     {"fft::merge_half_spectrum", &fft::merge_half_spectrum<double>}};
    for (const auto& entry : half) {
      const char* const name = entry.first;
      const half_fn fn = entry.second;  // a variable, not a structured binding: lambdas capture it
      rows.push_back(expect<invalid_argument>(name, "h = 0", "h", [fn] {
        std::vector<double> a(2);
        fn(0, a.data(), a.data(), a.data(), a.data(), a.data() + 1, a.data() + 1);
      }));
      rows.push_back(expect<size_error>(name, "h = SIZE_MAX", "h (half length)", [fn] {
        std::vector<double> a(2);
        fn(huge, a.data(), a.data(), a.data(), a.data(), a.data() + 1, a.data() + 1);
      }));
      rows.push_back(expect<invalid_argument>(name, "wi (null)", "wi", [fn] {
        std::vector<double> a(8), o(8);
        fn(2, a.data(), a.data(), a.data(), nullptr, o.data(), o.data() + 4);
      }));
    }
  }
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
  namespace figures = posenc::figures;
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
  rows.push_back(expect<invalid_argument>("figures::png_rgb_bytes", "width = 0", "width", [] {
    const std::vector<std::uint8_t> rgb(3);
    (void)figures::png_rgb_bytes(rgb, 0, 1);
  }));
  rows.push_back(expect<invalid_argument>("figures::png_rgb_bytes", "height = 2^40", "height", [] {
    const std::vector<std::uint8_t> rgb(3);
    (void)figures::png_rgb_bytes(rgb, 1, std::size_t{1} << 40);
  }));
  rows.push_back(expect<shape_error>("figures::png_rgb_bytes", "rgb (size)", "rgb", [] {
    const std::vector<std::uint8_t> rgb(5);
    (void)figures::png_rgb_bytes(rgb, 1, 2);
  }));
  rows.push_back(expect<shape_error>("figures::write_png_rgb", "rgb (size)", "rgb", [dir] {
    const std::vector<std::uint8_t> rgb(5);
    figures::write_png_rgb(dir / "x.png", rgb, 1, 2);
  }));
  rows.push_back(expect<invalid_argument>("figures::heatmap_rgb", "data (null)", "data", [] { (void)figures::heatmap_rgb<double>(nullptr, 2, 2); }));
  rows.push_back(expect<invalid_argument>("figures::heatmap_rgb", "rows = 0", "table", [] {
    const vec d(4);
    (void)figures::heatmap_rgb(d.data(), 0, 2);
  }));
  rows.push_back(expect<invalid_argument>("figures::heatmap_rgb", "pixel_size = 0", "pixel_size", [] {
    const vec d(4);
    figures::heatmap_options o;
    o.pixel_size = 0;
    (void)figures::heatmap_rgb(d.data(), 2, 2, o);
  }));
  rows.push_back(expect<non_finite_error>("figures::heatmap_rgb", "data (NaN)", "row 1, column 0", [] {
    const vec d{0.0, 1.0, nan, 2.0};
    (void)figures::heatmap_rgb(d.data(), 2, 2);
  }));
  rows.push_back(expect<invalid_argument>("figures::heatmap_rgb", "range (lo >= hi)", "range", [] {
    const vec d(4);
    figures::heatmap_options o;
    o.range = figures::value_range{1.0, 1.0};
    (void)figures::heatmap_rgb(d.data(), 2, 2, o);
  }));
  rows.push_back(expect<invalid_argument>("figures::write_png_heatmap", "cols * pixel_size (too large)", "pixel_size", [dir] {
    const vec d(4);
    figures::heatmap_options o;
    o.pixel_size = 4096;
    figures::write_png_heatmap(dir / "x.png", d.data(), 1, huge / 1024, o);
  }));
  // every kind of every io entry point (issue 26)
  const auto p2 = [](int e) { return std::size_t{1} << e; };
  rows.push_back(expect<shape_error>("io::write_npy", "shape = [2^40 + 1] (huge)", "shape", [dir, p2] { io::write_npy(dir / "x.npy", vec(2), {p2(40) + 1}); }));
  rows.push_back(expect<shape_error>("io::write_npy", "shape [SIZE_MAX, SIZE_MAX] (product overflows)", "overflowing",
                                     [dir] { io::write_npy(dir / "x.npy", vec(2), {huge, huge}); }));
  rows.push_back(expect<shape_error>("io::safetensors_bytes", "shape = [2^40 + 1] (huge)", "shape", [st, p2] {
    const vec d(2);
    st({io::tensor_ref("a", {p2(40) + 1}, d)});
  }));
  rows.push_back(expect<shape_error>("io::safetensors_bytes", "shape [2^32, 2^32, 2] (product overflows)", "overflowing", [st, p2] {
    const vec d(2);
    st({io::tensor_ref("a", {p2(32), p2(32), 2}, d)});
  }));
  // tensor_ref's fields are public: bytes shorter than count elements were read in full
  rows.push_back(expect<shape_error>("io::safetensors_bytes", "tensor bytes short (size)", "bytes", [st] {
    const vec d(4);
    io::tensor_ref t("a", {4}, d);
    t.bytes = t.bytes.first(8);
    st({t});
  }));
  rows.push_back(expect<shape_error>("io::write_safetensors", "shape = [2^40 + 1] (huge)", "shape", [dir, p2] {
    const vec d(2);
    io::write_safetensors(dir / "x.safetensors", {io::tensor_ref("a", {p2(40) + 1}, d)});
  }));
  rows.push_back(expect<shape_error>("io::write_safetensors", "shape [2^32, 2^32, 2] (product overflows)", "overflowing", [dir, p2] {
    const vec d(2);
    io::write_safetensors(dir / "x.safetensors", {io::tensor_ref("a", {p2(32), p2(32), 2}, d)});
  }));
  rows.push_back(expect<shape_error>("io::write_safetensors", "tensor bytes short (size)", "bytes", [dir] {
    const vec d(4);
    io::tensor_ref t("a", {4}, d);
    t.bytes = t.bytes.first(8);
    io::write_safetensors(dir / "x.safetensors", {t});
  }));
  rows.push_back(expect<invalid_argument>("figures::png_rgb_bytes", "width * height = (2^31 - 1)^2 pixels (product overflows the image)", "width * height", [] {
    const std::vector<std::uint8_t> rgb(3);
    (void)figures::png_rgb_bytes(rgb, 0x7FFFFFFF, 0x7FFFFFFF);
  }));
  rows.push_back(expect<invalid_argument>("figures::write_png_rgb", "width = 0", "width", [dir] {
    const std::vector<std::uint8_t> rgb(3);
    figures::write_png_rgb(dir / "x.png", rgb, 0, 1);
  }));
  rows.push_back(expect<invalid_argument>("figures::write_png_rgb", "height = 2^40", "height", [dir, p2] {
    const std::vector<std::uint8_t> rgb(3);
    figures::write_png_rgb(dir / "x.png", rgb, 1, p2(40));
  }));
  rows.push_back(expect<invalid_argument>("figures::write_png_rgb", "width * height = (2^31 - 1)^2 pixels (product overflows the image)", "width * height", [dir] {
    const std::vector<std::uint8_t> rgb(3);
    figures::write_png_rgb(dir / "x.png", rgb, 0x7FFFFFFF, 0x7FFFFFFF);
  }));
  rows.push_back(expect<invalid_argument>("figures::heatmap_rgb", "rows = 2^40 + 1", "height", [p2] {
    const vec d(4);
    (void)figures::heatmap_rgb(d.data(), p2(40) + 1, 1);
  }));
  // a 2^30 x 2^30 table passed the PNG size checks and its 2^60 values were read from a
  // 4-value buffer (a crash) before the image was allocated
  rows.push_back(expect<size_error>("figures::heatmap_rgb", "rows * cols = 2^60 elements (4 values held)", "rows * cols", [p2] {
    const vec d(4);
    (void)figures::heatmap_rgb(d.data(), p2(30), p2(30));
  }));
  rows.push_back(expect<invalid_argument>("figures::write_png_heatmap", "rows = 0", "table", [dir] {
    const vec d(4);
    figures::write_png_heatmap(dir / "x.png", d.data(), 0, 2);
  }));
  rows.push_back(expect<non_finite_error>("figures::write_png_heatmap", "data (NaN)", "row 0, column 1", [dir] {
    const vec d{0.0, nan, 1.0, 2.0};
    figures::write_png_heatmap(dir / "x.png", d.data(), 2, 2);
  }));
  rows.push_back(expect<invalid_argument>("figures::write_png_heatmap", "data (null)", "data", [dir] {
    figures::write_png_heatmap<double>(dir / "x.png", nullptr, 2, 2);
  }));
  // JSON text is UTF-8: write_string assumed it (a documented precondition) and wrote the bytes
  rows.push_back(expect<invalid_argument>("io::json::write_string", "s truncated UTF-8 (short)", "s: expected valid UTF-8", [] {
    std::string out;
    io::json::write_string(out, "\xC3");
  }));
  // the readers on crafted images: a shape of 2^40 + 1 values with no data, an overflowing
  // count, a header length past the end
  auto npy = [](const std::string& s) { (void)io::read_npy<double>(std::as_bytes(std::span<const char>(s.data(), s.size()))); };
  rows.push_back(expect<posenc::io_error>("io::read_npy", "shape (2^40 + 1,) with no data (huge)", "truncated",
                                          [npy] { npy(npy_image(npy_huge_dict)); }));
  rows.push_back(expect<posenc::io_error>("io::read_npy", "shape (2^32, 2^32, 2) (product overflows)", "overflows",
                                          [npy] { npy(npy_image(npy_product_dict)); }));
  rows.push_back(expect<posenc::io_error>("io::read_npy", "header length beyond the bytes (offset)", "header length",
                                          [npy] { npy(npy_long_header()); }));
  for (const auto& [what, bytes, needle] :
       {std::tuple<const char*, std::string, const char*>{"file (empty)", std::string(), "preamble"},
        {"shape (2^40 + 1,) with no data (huge)", npy_image(npy_huge_dict), "truncated"},
        {"shape (2^32, 2^32, 2) (product overflows)", npy_image(npy_product_dict), "overflows"},
        {"header length beyond the file (offset)", npy_long_header(), "header length"}}) {
    rows.push_back(expect<posenc::io_error>("io::read_npy_header", what, needle, [bytes = bytes] {
      const scratch f("header.npy", bytes);
      (void)io::read_npy_header(f.path);
    }));
  }
  rows.push_back(expect<posenc::io_error>("io::safetensors_file::from_bytes", "bytes truncated (short)", "data_offsets", [] {
    const vec d(2);
    const auto b = io::safetensors_bytes({io::tensor_ref("a", {2}, d)});
    (void)io::safetensors_file::from_bytes(std::span<const std::byte>(b).first(b.size() - 4));
  }));
}

/// A small TUPE cache for the census rows of positional_bias_cache (made once).
posenc::tupe::positional_bias_cache<double>& tupe_census_cache() {
  static posenc::tupe::positional_bias_cache<double> cache = [] {
    posenc::tupe::config c;
    c.d = 4;
    c.heads = 1;
    return posenc::tupe::positional_bias_cache<double>(c, posenc::tupe::make_parameters<double>(c, 4));
  }();
  return cache;
}

// The families added after the first census (issue 26): in-place rotary and ALiBi on views, the
// JSON API, fft::batch_plan, the frequency and table builders. Argument strings follow the kind
// vocabulary of kinds_of() below.
void add_views_and_readers(std::vector<row>& rows) {
  namespace pr = posenc::rotary;
  namespace pa = posenc::alibi;
  namespace js = posenc::io::json;
  using V4 = posenc::tensor_view<float, 4>;
  constexpr auto p2 = [](int e) { return std::size_t{1} << e; };
  auto f2 = [] { return pr::default_frequencies(2); };
  // tensor_view
  rows.push_back(expect<size_error>("tensor_view", "sizes = SIZE_MAX", "sizes[0]", [] { (void)V4::contiguous(nullptr, {huge, 1, 1, 1}); }));
  rows.push_back(expect<size_error>("tensor_view", "sizes product overflows (2^32 * 2^32)", "sizes",
                                    [p2] { (void)V4::contiguous(nullptr, {p2(32), p2(32), 1, 2}); }));
  rows.push_back(expect<size_error>("tensor_view", "strides span = 2^62 (huge offset)", "strides[0]", [p2] {
    float x = 0;
    (void)V4{&x, {2, 1, 1, 1}, {static_cast<std::ptrdiff_t>(p2(62)), 0, 0, 1}};
  }));
  rows.push_back(expect<size_error>("tensor_view", "sizes = 2^40 + 1 with a zero size", "sizes[2]",
                                    [p2] { (void)V4::contiguous(nullptr, {0, 1, p2(40) + 1, 1}); }));
  // rotary::apply_inplace / apply_ragged_inplace
  rows.push_back(expect<size_error>("rotary::apply_inplace", "q sizes product overflows (null data)", "sizes", [p2, f2] {
    pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {p2(32), p2(32), 1, 2}), {}, f2());
  }));
  rows.push_back(expect<size_error>("rotary::apply_inplace", "seq = 2^63", "sizes[2]", [p2, f2] {
    pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, p2(63), 0}), {}, f2(), std::vector<std::int64_t>{0});
  }));
  rows.push_back(expect<shape_error>("rotary::apply_inplace", "q (null data)", "q", [f2] {
    pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, 2, 2}), {}, f2());
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_inplace", "offsets = INT64_MIN (offset)", "offsets[0]", [f2] {
    std::vector<float> q(4);
    pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 2}), {}, f2(),
                             std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()});
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_inplace", "q (NaN)", "non-finite", [f2] {
    std::vector<float> q{1, std::nanf(""), 0, 0};
    pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 2}), {}, f2());
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_inplace", "head_dim = 0 (zero)", "head_dim", [f2] {
    std::vector<float> q(4);
    pr::apply_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 0}), {}, f2());
  }));
  rows.push_back(expect<size_error>("rotary::apply_ragged_inplace", "q sizes product overflows (null data)", "sizes", [p2, f2] {
    const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(p2(33))};
    pr::apply_ragged_inplace<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {p2(33), p2(31), 2}), {}, cu, {}, f2());
  }));
  rows.push_back(expect<size_error>("rotary::apply_ragged_inplace", "tokens = SIZE_MAX", "sizes[0]", [f2] {
    const std::vector<std::int64_t> cu{0};
    pr::apply_ragged_inplace<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {huge, 1, 2}), {}, cu, {}, f2());
  }));
  rows.push_back(expect<shape_error>("rotary::apply_ragged_inplace", "cu_seqlens (empty)", "cu_seqlens", [f2] {
    std::vector<float> q(4);
    pr::apply_ragged_inplace<float, int>(pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, {}, {}, f2());
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_ragged_inplace", "offsets < 0 (offset)", "offsets[0]", [f2] {
    std::vector<float> q(4);
    const std::vector<int> cu{0, 2}, off{-1};
    pr::apply_ragged_inplace<float, int>(pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, off, f2());
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_ragged_inplace", "q (Inf)", "non-finite", [f2] {
    std::vector<float> q{1, INFINITY, 0, 0};
    const std::vector<int> cu{0, 2};
    pr::apply_ragged_inplace<float, int>(pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, {}, f2());
  }));
  // rotary::apply_decode_inplace / apply_decode_ragged_inplace / decode_cache
  using ids = std::vector<std::int64_t>;
  rows.push_back(expect<invalid_argument>("rotary::apply_decode_inplace", "head_dim = 0 (zero)", "head_dim", [f2] {
    std::vector<float> q(4);
    pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 1, 0}), {}, f2(), ids{0});
  }));
  rows.push_back(expect<size_error>("rotary::apply_decode_inplace", "seq = 2^63", "sizes[2]", [p2, f2] {
    pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, p2(63), 0}), {}, f2(), ids{0});
  }));
  rows.push_back(expect<size_error>("rotary::apply_decode_inplace", "q sizes product overflows (null data)", "sizes", [p2, f2] {
    pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {p2(32), p2(32), 1, 2}), {}, f2(), ids{0});
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_decode_inplace", "q (NaN)", "non-finite", [f2] {
    std::vector<float> q{1, std::nanf("")};
    pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 1, 2}), {}, f2(), ids{7});
  }));
  rows.push_back(expect<shape_error>("rotary::apply_decode_inplace", "q (null data)", "q", [f2] {
    pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, 1, 2}), {}, f2(), ids{0});
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_decode_inplace", "positions = INT64_MIN (offset)", "position_ids[0]",
                                          [f2] {
    std::vector<float> q(2);
    pr::apply_decode_inplace<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 1, 2}), {}, f2(),
                                    ids{std::numeric_limits<std::int64_t>::min()});
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_decode_ragged_inplace", "head_dim = 0 (zero)", "head_dim", [f2] {
    std::vector<float> q(4);
    pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(q.data(), {1, 1, 0}), {}, ids{0}, f2());
  }));
  rows.push_back(expect<size_error>("rotary::apply_decode_ragged_inplace", "tokens = SIZE_MAX", "sizes[0]", [f2] {
    pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(nullptr, {huge, 1, 2}), {}, ids{0}, f2());
  }));
  rows.push_back(expect<size_error>("rotary::apply_decode_ragged_inplace", "q sizes product overflows (null data)", "sizes",
                                    [p2, f2] {
    pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(nullptr, {p2(33), p2(31), 2}), {}, ids{0}, f2());
  }));
  rows.push_back(expect<non_finite_error>("rotary::apply_decode_ragged_inplace", "q (Inf)", "non-finite", [f2] {
    std::vector<float> q{1, INFINITY};
    pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(q.data(), {1, 1, 2}), {}, ids{5}, f2());
  }));
  rows.push_back(expect<shape_error>("rotary::apply_decode_ragged_inplace", "q (null data)", "q", [f2] {
    pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(nullptr, {1, 1, 2}), {}, ids{0}, f2());
  }));
  rows.push_back(expect<invalid_argument>("rotary::apply_decode_ragged_inplace", "positions < 0 (offset)", "position_ids[0]",
                                          [f2] {
    std::vector<float> q(2);
    pr::apply_decode_ragged_inplace<float>(pr::ragged_view<float>::contiguous(q.data(), {1, 1, 2}), {}, ids{-1}, f2());
  }));
  rows.push_back(expect<invalid_argument>("rotary::decode_cache", "limits.max_tables = 0 (zero)", "max_tables", [] {
    pr::decode_cache c({.max_positions = 16, .max_bytes = 1024, .max_tables = 0});
  }));
  rows.push_back(expect<invalid_argument>("rotary::decode_cache", "limits.max_positions = 2^60 (huge)", "max_positions", [p2] {
    pr::decode_cache c({.max_positions = p2(60), .max_bytes = 1024, .max_tables = 1});
  }));
  rows.push_back(expect<non_finite_error>("rotary::decode_cache", "freqs.inv_freq NaN", "inv_freq", [f2] {
    pr::decode_cache c;
    auto f = f2();
    f.inv_freq[0] = std::numeric_limits<long double>::quiet_NaN();
    (void)c.table<float>(f, 0);
  }));
  rows.push_back(expect<invalid_argument>("rotary::decode_cache", "max_position = -1 (offset)", "max_position", [f2] {
    pr::decode_cache c;
    (void)c.table<float>(f2(), -1);
  }));
  // alibi
  rows.push_back(expect<size_error>("alibi::add_bias", "scores sizes product overflows (2^62 * 8, null data)", "sizes", [p2] {
    pa::add_bias<float>(pa::scores_view<float>::contiguous(nullptr, {p2(62), 2, 2, 2}), vec{0.5, 0.25});
  }));
  rows.push_back(expect<size_error>("alibi::add_bias", "q_len = 2^63", "sizes[2]", [p2] {
    pa::add_bias<float>(pa::scores_view<float>::contiguous(nullptr, {1, 1, p2(63), 0}), vec{0.5});
  }));
  rows.push_back(expect<invalid_argument>("alibi::add_bias", "heads = 0", "heads", [] {
    std::vector<float> s(4);
    pa::add_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 0, 2, 2}), {});
  }));
  rows.push_back(expect<invalid_argument>("alibi::add_bias", "q_offsets = INT64_MIN (offset)", "q_offsets[0]", [] {
    std::vector<float> s(4);
    pa::add_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 1, 2, 2}), vec{0.5},
                        std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min()});
  }));
  rows.push_back(expect<non_finite_error>("alibi::add_bias", "slopes (NaN)", "slopes[0]", [] {
    std::vector<float> s(4);
    pa::add_bias<float>(pa::scores_view<float>::contiguous(s.data(), {1, 1, 2, 2}), vec{nan});
  }));
  rows.push_back(expect<invalid_argument>("alibi::add_bias", "slopes = 1e300 in bfloat16 (Inf bias)", "slopes[0]", [] {
    std::vector<Eigen::bfloat16> s(4);
    pa::add_bias<Eigen::bfloat16>(pa::scores_view<Eigen::bfloat16>::contiguous(s.data(), {1, 1, 2, 2}), vec{1e300});
  }));
  rows.push_back(expect<shape_error>("alibi::add_bias", "scores (null data)", "scores", [] {
    pa::add_bias<float>(pa::scores_view<float>::contiguous(nullptr, {1, 1, 2, 2}), vec{0.5});
  }));
  rows.push_back(expect<size_error>("alibi::write_bias", "k_len = 2^53, q_len = 0", "sizes[3]", [p2] {
    pa::write_bias<float>(pa::scores_view<float>::contiguous(nullptr, {1, 1, 0, p2(53)}), vec{0.5});
  }));
  rows.push_back(expect<size_error>("alibi::bias_table", "q_len * k_len = 2^42 elements", "k_len",
                                    [p2] { (void)pa::bias_table<float>(vec{0.5}, p2(21), p2(21)); }));
  rows.push_back(expect<size_error>("alibi::bias_table", "q_len = SIZE_MAX", "q_len", [] { (void)pa::bias_table<float>(vec{0.5}, huge, 1); }));
  rows.push_back(expect<invalid_argument>("alibi::bias_table", "slopes (empty: zero heads)", "slopes", [] { (void)pa::bias_table<float>({}, 1, 1); }));
  rows.push_back(expect<invalid_argument>("alibi::bias_table", "q_offset = INT64_MIN (offset)", "q_offset",
                                          [] { (void)pa::bias_table<float>(vec{0.5}, 2, 2, std::numeric_limits<std::int64_t>::min()); }));
  rows.push_back(expect<non_finite_error>("alibi::bias_table", "slopes (Inf)", "slopes[0]", [] { (void)pa::bias_table<float>(vec{inf}, 1, 1); }));
  rows.push_back(expect<invalid_argument>("alibi::slopes", "heads = 0", "heads", [] { (void)pa::slopes(0); }));
  rows.push_back(expect<invalid_argument>("alibi::slopes", "heads = SIZE_MAX", "heads", [] { (void)pa::slopes(huge); }));
  // rotary frequencies, config, tables
  rows.push_back(expect<invalid_argument>("rotary::default_frequencies", "rotary_dim = 0", "rotary_dim", [] { (void)pr::default_frequencies(0); }));
  rows.push_back(expect<size_error>("rotary::default_frequencies", "rotary_dim = 2^41", "rotary_dim", [p2] { (void)pr::default_frequencies(p2(41)); }));
  rows.push_back(expect<size_error>("rotary::default_frequencies", "rotary_dim = SIZE_MAX - 1", "rotary_dim",
                                    [] { (void)pr::default_frequencies(huge - 1); }));
  rows.push_back(expect<non_finite_error>("rotary::default_frequencies", "base NaN", "base", [] { (void)pr::default_frequencies(2, nan); }));
  rows.push_back(expect<size_error>("rotary::validate", "head_dim = SIZE_MAX", "head_dim", [] {
    pr::rope_config c;
    c.head_dim = huge;
    pr::validate(c);
  }));
  rows.push_back(expect<invalid_argument>("rotary::validate", "head_dim = 0", "head_dim", [] {
    pr::rope_config c;
    pr::validate(c);
  }));
  rows.push_back(expect<non_finite_error>("rotary::validate", "theta NaN", "theta", [] {
    pr::rope_config c;
    c.head_dim = 8;
    c.theta = nan;
    pr::validate(c);
  }));
  rows.push_back(expect<size_error>("rotary::compute_frequencies", "head_dim = 2^40 + 2", "head_dim", [p2] {
    pr::rope_config c;
    c.head_dim = p2(40) + 2;
    (void)pr::compute_frequencies(c);
  }));
  rows.push_back(expect<pr::config_error>("rotary::load_config", "head_dim = 2^53", "head_dim",
                                    [] { (void)pr::load_config(R"({"head_dim": 9007199254740992})"); }));
  rows.push_back(expect<pr::config_error>("rotary::load_config", "head_dim = 0 (as transformers: 0 means absent, and nothing to derive it from)", "head_dim", [] { (void)pr::load_config(R"({"head_dim": 0})"); }));
  // issue 37: the loader's work is bounded by the model's layers, and a zero length is no "absent"
  rows.push_back(expect<pr::config_error>("rotary::load_config", "num_hidden_layers = 2^16 + 1", "num_hidden_layers",
                                          [] { (void)pr::load_config(R"({"head_dim": 8, "num_hidden_layers": 65537})"); }));
  rows.push_back(expect<pr::config_error>("rotary::load_config", "original_max_position_embeddings = 0",
                                          "original_max_position_embeddings", [] {
                                            (void)pr::load_config(R"({"head_dim": 8, "original_max_position_embeddings": 0})");
                                          }));
  rows.push_back(expect<posenc::io_error>("rotary::load_config", "short JSON text (truncated buffer)", "JSON",
                                          [] { (void)pr::load_config(R"({"head_dim": 8)"); }));
  rows.push_back(expect<size_error>("rotary::table", "count = 2^53", "count", [p2] { (void)pr::table<float>(pr::default_frequencies(4), 0, p2(53)); }));
  rows.push_back(expect<size_error>("rotary::table", "count = 2^40 + 1", "count",
                                    [p2] { (void)pr::table<float>(pr::default_frequencies(4), 0, p2(40) + 1); }));
  rows.push_back(expect<invalid_argument>("rotary::table", "attention_factor = 1e6 in half (Inf)", "attention_factor", [] {
    auto f = pr::default_frequencies(4);
    f.attention_factor = 1e6;
    (void)pr::table<Eigen::half>(f, 0, 4);
  }));
  rows.push_back(expect<invalid_argument>("rotary::table", "first + count beyond 2^53 (offset)", "first + count",
                                          [p2] { (void)pr::table<float>(pr::default_frequencies(4), p2(53), 2); }));
  rows.push_back(expect<invalid_argument>("rotary::xpos_zeta", "rotary_dim = 0", "rotary_dim", [] { (void)pr::xpos_zeta(0, 0); }));
  rows.push_back(expect<invalid_argument>("rotary::xpos_zeta", "k out of range (offset)", "k", [] { (void)pr::xpos_zeta(5, 4); }));
  rows.push_back(expect<non_finite_error>("rotary::xpos_zeta", "gamma NaN", "gamma", [] { (void)pr::xpos_zeta(0, 4, nan); }));
  // fft::batch_plan
  rows.push_back(expect<size_error>("fft::batch_plan", "n = 2^41", "size n", [p2] { posenc::fft::batch_plan<double> p(p2(41)); }));
  rows.push_back(expect<size_error>("fft::batch_plan", "n = 2^62", "size n", [p2] { posenc::fft::batch_plan<double> p(p2(62)); }));
  rows.push_back(expect<invalid_argument>("fft::batch_plan", "n = 0", "size n", [] { posenc::fft::batch_plan<double> p(0); }));
  // more kinds per entry point (issue 26 registry)
  rows.push_back(expect<invalid_argument>("alibi::add_bias_ragged", "heads = 0", "heads", [] {
    std::vector<float> s(4);
    const std::vector<int> c{0, 2};
    pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(s.data(), {2, 0, 2}), {}, c, c);
  }));
  rows.push_back(expect<size_error>("alibi::add_bias_ragged", "k_max = SIZE_MAX", "sizes[2]", [] {
    const std::vector<int> c{0};
    pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(nullptr, {0, 1, huge}), vec{0.5}, c, c);
  }));
  rows.push_back(expect<size_error>("alibi::add_bias_ragged", "sizes product overflows (2^32 * 2^32)", "sizes", [p2] {
    const std::vector<int> c{0};
    pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(nullptr, {p2(32), p2(32), 1}), vec{0.5}, c, c);
  }));
  rows.push_back(expect<non_finite_error>("alibi::add_bias_ragged", "slopes (Inf)", "slopes[0]", [] {
    std::vector<float> s(4);
    const std::vector<int> c{0, 2};
    pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(s.data(), {2, 1, 2}), vec{inf}, c, c);
  }));
  rows.push_back(expect<shape_error>("alibi::add_bias_ragged", "scores (null data)", "scores", [] {
    const std::vector<int> c{0, 2};
    pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(nullptr, {2, 1, 2}), vec{0.5}, c, c);
  }));
  rows.push_back(expect<shape_error>("alibi::add_bias_ragged", "cu_seqlens_k beyond k_max (offset)", "k_max", [] {
    std::vector<float> s(4);
    const std::vector<int> cq{0, 2}, ck{0, 3};
    pa::add_bias_ragged<float, int>(pa::ragged_scores_view<float>::contiguous(s.data(), {2, 1, 2}), vec{0.5}, cq, ck);
  }));
  for (const char* entry : {"alibi::validate_dense", "alibi::validate_ragged"}) {
    const bool dense = std::string(entry) == "alibi::validate_dense";
    auto run = [dense](std::size_t q, std::size_t h, float* data, vec m, std::int64_t off = 0) {
      if (dense) {
        const std::vector<std::int64_t> o{off};
        pa::validate_dense<float>(pa::scores_view<float>::contiguous(data, {1, h, q, 2}), m, o, {}, "alibi::validate_dense");
      } else {
        const std::vector<std::int64_t> c{0, static_cast<std::int64_t>(q)};
        pa::validate_ragged<float, std::int64_t>(pa::ragged_scores_view<float>::contiguous(data, {q, h, 2}), m, c, c, {},
                                                 "alibi::validate_ragged");
      }
    };
    rows.push_back(expect<invalid_argument>(entry, "heads = 0", "heads", [run] {
      std::vector<float> s(4);
      run(2, 0, s.data(), {});
    }));
    rows.push_back(expect<size_error>(entry, "q_len = SIZE_MAX", "sizes", [run] { run(huge, 1, nullptr, vec{0.5}); }));
    rows.push_back(expect<size_error>(entry, "sizes product overflows (2^32 * 2^32)", "sizes",
                                      [run, p2] { run(p2(32), p2(32), nullptr, vec(p2(0), 0.5)); }));
    rows.push_back(expect<non_finite_error>(entry, "slopes (NaN)", "slopes[0]", [run] {
      std::vector<float> s(4);
      run(2, 1, s.data(), vec{nan});
    }));
    rows.push_back(expect<shape_error>(entry, "scores (null data)", "scores", [run] { run(2, 1, nullptr, vec{0.5}); }));
  }
  rows.push_back(expect<invalid_argument>("alibi::validate_dense", "q_offsets = INT64_MIN (offset)", "q_offsets[0]", [] {
    std::vector<float> s(4);
    const std::vector<std::int64_t> o{std::numeric_limits<std::int64_t>::min()};
    pa::validate_dense<float>(pa::scores_view<float>::contiguous(s.data(), {1, 1, 2, 2}), vec{0.5}, o, {}, "alibi::validate_dense");
  }));
  rows.push_back(expect<size_error>("rotary::fill_table", "count * row_stride overflows (product)", "row_stride", [p2] {
    float c = 0, s = 0;
    pr::fill_table<float>(pr::default_frequencies(2), 0, p2(30), &c, &s, p2(40));
  }));
  rows.push_back(expect<invalid_argument>("rotary::fill_table", "first + count = 2^53 + 1 (huge offset)", "first + count", [p2] {
    float c = 0, s = 0;
    pr::fill_table<float>(pr::default_frequencies(2), p2(53), 1, &c, &s, 1);
  }));
  rows.push_back(expect<invalid_argument>("rotary::fill_table", "cos (null)", "cos/sin", [] {
    float s = 0;
    pr::fill_table<float>(pr::default_frequencies(2), 0, 1, nullptr, &s, 1);
  }));
  rows.push_back(expect<non_finite_error>("rotary::fill_table", "frequencies.attention_factor NaN", "attention_factor", [] {
    auto f = pr::default_frequencies(2);
    f.attention_factor = nan;
    float c = 0, s = 0;
    pr::fill_table<float>(f, 0, 1, &c, &s, 1);
  }));
  rows.push_back(expect<size_error>("rotary::table", "count * width = 2^41 elements (product)", "count * table width",
                                    [p2] { (void)pr::table<float>(pr::default_frequencies(4), 0, p2(40)); }));
  rows.push_back(expect<invalid_argument>("rotary::xpos_zeta", "rotary_dim = SIZE_MAX", "rotary_dim", [] { (void)pr::xpos_zeta(0, huge); }));
  rows.push_back(expect<posenc::shape_error>("rotary::validate", "short_factor (length)", "short_factor", [] {
    pr::rope_config c;
    c.type = pr::rope_type::longrope;
    c.head_dim = 4;
    c.max_position_embeddings = 64;
    c.original_max_position_embeddings = 16;
    c.short_factor = {1.0};
    c.long_factor = {1.0, 1.0};
    pr::validate(c);
  }));
  rows.push_back(expect<invalid_argument>("rotary::compute_frequencies", "head_dim = 0", "head_dim", [] {
    pr::rope_config c;
    (void)pr::compute_frequencies(c);
  }));
  rows.push_back(expect<non_finite_error>("rotary::compute_frequencies", "theta Inf", "theta", [] {
    pr::rope_config c;
    c.head_dim = 8;
    c.theta = inf;
    (void)pr::compute_frequencies(c);
  }));
  rows.push_back(expect<posenc::io_error>("rotary::load_config", "rope_theta = 1e400 (Inf)", "rope_theta",
                                          [] { (void)pr::load_config(R"({"head_dim": 8, "rope_theta": 1e400})"); }));
  rows.push_back(expect<size_error>("fft::batch_plan", "n * lane width elements = 2^40 * width (product)", "size n",
                                    [p2] { posenc::fft::batch_plan<double> p(p2(40) + (posenc::fft::batch_plan<double>::width() == 1 ? p2(40) : 0)); }));
  rows.push_back(expect<invalid_argument>("io::json::value", "item(0) of an empty array (zero)", "k", [] {
    const auto d = js::parse("[]", [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); });
    (void)d.root().item(0);
  }));
  rows.push_back(expect<posenc::io_error>("io::json::parse", "text of 2^27 bytes (huge)", "128 MiB", [p2] {
    const char c = '[';
    (void)js::parse(std::string_view(&c, p2(27)), [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); });
  }));
  rows.push_back(expect<invalid_argument>("tupe::positional_bias_cache::get", "n = 0", "n", [] {
    tupe_census_cache().clear();
    (void)tupe_census_cache().get(0);
  }));
  rows.push_back(expect<invalid_argument>("tupe::positional_bias_cache::get", "n = INT64_MAX", "n",
                                          [] { (void)tupe_census_cache().get(std::numeric_limits<std::int64_t>::max()); }));
  rows.push_back(expect<shape_error>("tupe::positional_bias_cache::set_parameters", "pos (rows)", "pos", [] {
    auto p = tupe_census_cache().params();
    auto q = *p;
    q.pos.resize(1, q.pos.cols());
    tupe_census_cache().set_parameters(q);
  }));
  // the JSON API
  rows.push_back(expect<invalid_argument>("io::json::value", "item(k) out of range (offset)", "k", [] {
    const auto d = js::parse("[1,2]", [](std::size_t, std::string_view m) { throw posenc::io_error(std::string(m)); });
    (void)d.root().item(5);
  }));
  rows.push_back(expect<posenc::io_error>("io::json::parse", "a fail callback that returns (null handler)", "fail",
                                          [] { (void)js::parse("[1,", [](std::size_t, std::string_view) {}); }));
  rows.push_back(expect<posenc::io_error>("io::json::parse", "short text (truncated buffer)", "offset 5",
                                          [] { (void)js::parse("[1, 2", [](std::size_t o, std::string_view m) {
                                                 throw posenc::io_error(posenc::detail::concat("offset ", o, ": ", m));
                                               }); }));
  rows.push_back(expect<posenc::io_error>("io::json::parse", "array longer than max_array_items = 0 (zero)", "limit",
                                          [] { (void)js::parse("[1]", [](std::size_t, std::string_view m) {
                                                 throw posenc::io_error(std::string(m));
                                               }, 0); }));
}

// Entry points added with the FLOATER split, the double-word numerics and the rotary rule table
// (issue 26 registry): the validators and builders a caller can reach directly.
void add_rule_table_and_validators(std::vector<row>& rows) {
  namespace pr = posenc::rotary;
  namespace pf = posenc::floater;
  namespace js = posenc::io::json;
  constexpr auto p2 = [](int e) { return std::size_t{1} << e; };
  auto f2 = [] { return pr::default_frequencies(2); };
  auto throwing = [](std::size_t, std::string_view m) -> void { throw posenc::io_error(std::string(m)); };
  // floater::check_length (shared by the host encoder and the device path)
  rows.push_back(expect<invalid_argument>("floater::check_length", "L = 0", "L",
                                          [] { pf::check_length(posenc::ode::grid::uniform(0.01), 0, 4, "f"); }));
  rows.push_back(expect<size_error>("floater::check_length", "L = SIZE_MAX", "L",
                                    [] { pf::check_length(posenc::ode::grid::uniform(0.01), huge, 4, "f"); }));
  rows.push_back(expect<size_error>("floater::check_length", "L * width = 2^30 * 2^30 (product)", "L * blocks * d",
                                    [p2] { pf::check_length(posenc::ode::grid::uniform(0.01), p2(30), p2(30), "f"); }));
  rows.push_back(expect<posenc::grid_error>("floater::check_length", "L = 5 beyond an explicit grid of 3 points", "f", [] {
    pf::check_length(posenc::ode::grid::explicit_times({0.0, 1.0, 2.0}), 5, 4, "f");
  }));
  // rotary::options_frequencies (the frequencies of a rotary::options)
  rows.push_back(expect<invalid_argument>("rotary::options_frequencies", "rotary_dim = 0", "rotary_dim",
                                          [] { (void)pr::options_frequencies(pr::options{}, 0); }));
  rows.push_back(expect<size_error>("rotary::options_frequencies", "rotary_dim = SIZE_MAX - 1", "rotary_dim",
                                    [] { (void)pr::options_frequencies(pr::options{}, huge - 1); }));
  rows.push_back(expect<non_finite_error>("rotary::options_frequencies", "options.base NaN", "base", [] {
    pr::options o;
    o.base = nan;
    (void)pr::options_frequencies(o, 4);
  }));
  // rotary::frequency3_of
  rows.push_back(expect<invalid_argument>("rotary::frequency3_of", "freqs (empty): k = 0 out of range", "k",
                                          [] { (void)pr::frequency3_of(pr::frequencies{}, 0); }));
  rows.push_back(expect<invalid_argument>("rotary::frequency3_of", "k = SIZE_MAX (out of range)", "k",
                                          [f2] { (void)pr::frequency3_of(f2(), huge); }));
  rows.push_back(expect<non_finite_error>("rotary::frequency3_of", "freqs.inv_freq NaN", "inv_freq", [f2] {
    auto f = f2();
    f.inv_freq[0] = std::numeric_limits<posenc::numeric::wide>::quiet_NaN();
    (void)pr::frequency3_of(f, 0);
  }));
  rows.push_back(expect<shape_error>("rotary::frequency3_of", "inv_freq_lo (short)", "inv_freq_lo", [] {
    auto f = pr::default_frequencies(4);
    f.inv_freq_lo.resize(1);
    (void)pr::frequency3_of(f, 0);
  }));
  // rotary::validate_apply / validate_apply_ragged (apply_inplace's checks without the rotation)
  using off64 = std::span<const std::int64_t>;
  rows.push_back(expect<size_error>("rotary::validate_apply", "q sizes product overflows (null data)", "sizes", [p2, f2] {
    pr::validate_apply<float>(pr::dense_view<float>::contiguous(nullptr, {p2(32), p2(32), 1, 2}), {}, f2(), off64(), {}, "f");
  }));
  rows.push_back(expect<size_error>("rotary::validate_apply", "seq = 2^63", "sizes[2]", [p2, f2] {
    const std::vector<std::int64_t> off{0};
    pr::validate_apply<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, p2(63), 0}), {}, f2(), off64(off), {}, "f");
  }));
  rows.push_back(expect<shape_error>("rotary::validate_apply", "q (null data)", "q", [f2] {
    pr::validate_apply<float>(pr::dense_view<float>::contiguous(nullptr, {1, 1, 2, 2}), {}, f2(), off64(), {}, "f");
  }));
  rows.push_back(expect<invalid_argument>("rotary::validate_apply", "offsets = INT64_MIN (offset)", "offsets[0]", [f2] {
    std::vector<float> q(4);
    const std::vector<std::int64_t> off{std::numeric_limits<std::int64_t>::min()};
    pr::validate_apply<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 2}), {}, f2(), off64(off), {}, "f");
  }));
  rows.push_back(expect<non_finite_error>("rotary::validate_apply", "freqs.inv_freq NaN", "inv_freq", [f2] {
    std::vector<float> q(4);
    auto f = f2();
    f.inv_freq[0] = std::numeric_limits<posenc::numeric::wide>::quiet_NaN();
    pr::validate_apply<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 2}), {}, f, off64(), {}, "f");
  }));
  rows.push_back(expect<invalid_argument>("rotary::validate_apply", "head_dim = 0 (zero)", "head_dim", [f2] {
    std::vector<float> q(4);
    pr::validate_apply<float>(pr::dense_view<float>::contiguous(q.data(), {1, 1, 2, 0}), {}, f2(), off64(), {}, "f");
  }));
  rows.push_back(expect<size_error>("rotary::validate_apply_ragged", "q sizes product overflows (null data)", "sizes", [p2, f2] {
    const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(p2(33))};
    pr::validate_apply_ragged<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {p2(33), p2(31), 2}), {}, cu,
                                                   {}, f2(), {}, "f");
  }));
  rows.push_back(expect<size_error>("rotary::validate_apply_ragged", "tokens = SIZE_MAX", "sizes[0]", [f2] {
    const std::vector<std::int64_t> cu{0};
    pr::validate_apply_ragged<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {huge, 1, 2}), {}, cu, {},
                                                   f2(), {}, "f");
  }));
  rows.push_back(expect<shape_error>("rotary::validate_apply_ragged", "cu_seqlens (empty)", "cu_seqlens", [f2] {
    std::vector<float> q(4);
    pr::validate_apply_ragged<float, int>(pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, {}, {}, f2(), {}, "f");
  }));
  rows.push_back(expect<invalid_argument>("rotary::validate_apply_ragged", "offsets < 0 (offset)", "offsets[0]", [f2] {
    std::vector<float> q(4);
    const std::vector<int> cu{0, 2}, off{-1};
    pr::validate_apply_ragged<float, int>(pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, off, f2(), {}, "f");
  }));
  rows.push_back(expect<non_finite_error>("rotary::validate_apply_ragged", "freqs.inv_freq Inf", "inv_freq", [f2] {
    std::vector<float> q(4);
    const std::vector<int> cu{0, 2};
    auto f = f2();
    f.inv_freq[0] = std::numeric_limits<posenc::numeric::wide>::infinity();
    pr::validate_apply_ragged<float, int>(pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, {}, f, {}, "f");
  }));
  // rotary::plan / to_plan: the context's sizes and theta; each rule's parameters
  auto ctx = [](std::size_t head_dim = 8) {
    pr::rope_context c;
    c.head_dim = head_dim;
    c.max_position_embeddings = 64;
    c.original_max_position_embeddings = 16;
    return c;
  };
  rows.push_back(expect<invalid_argument>("rotary::plan", "head_dim = 0", "head_dim",
                                          [ctx] { pr::plan p(ctx(0), pr::rules::default_rope{}); }));
  rows.push_back(expect<size_error>("rotary::plan", "head_dim = SIZE_MAX", "head_dim",
                                    [ctx] { pr::plan p(ctx(huge), pr::rules::default_rope{}); }));
  rows.push_back(expect<non_finite_error>("rotary::plan", "theta NaN", "theta", [ctx] {
    auto c = ctx();
    c.theta = nan;
    pr::plan p(c, pr::rules::default_rope{});
  }));
  rows.push_back(expect<invalid_argument>("rotary::to_plan", "head_dim = 0", "head_dim", [] { (void)pr::to_plan(pr::rope_config{}); }));
  rows.push_back(expect<size_error>("rotary::to_plan", "head_dim = SIZE_MAX", "head_dim", [] {
    pr::rope_config c;
    c.head_dim = huge;
    (void)pr::to_plan(c);
  }));
  rows.push_back(expect<non_finite_error>("rotary::to_plan", "theta Inf", "theta", [] {
    pr::rope_config c;
    c.head_dim = 8;
    c.theta = inf;
    (void)pr::to_plan(c);
  }));
  rows.push_back(expect<non_finite_error>("rotary::rules::linear", "factor NaN", "factor",
                                          [ctx] { pr::plan p(ctx(), pr::rules::linear{{}, nan}); }));
  rows.push_back(expect<non_finite_error>("rotary::rules::ntk", "factor Inf", "factor",
                                          [ctx] { pr::plan p(ctx(), pr::rules::ntk{{}, inf}); }));
  rows.push_back(expect<non_finite_error>("rotary::rules::dynamic", "factor NaN", "factor",
                                          [ctx] { pr::plan p(ctx(), pr::rules::dynamic{{}, nan}); }));
  rows.push_back(expect<non_finite_error>("rotary::rules::proportional", "factor NaN", "factor",
                                          [ctx] { pr::plan p(ctx(), pr::rules::proportional{{}, nan}); }));
  rows.push_back(expect<non_finite_error>("rotary::rules::yarn", "factor NaN", "factor", [ctx] {
    pr::rules::yarn y;
    y.factor = nan;
    pr::plan p(ctx(), y);
  }));
  rows.push_back(expect<non_finite_error>("rotary::rules::llama3", "low_freq_factor NaN", "low_freq_factor", [ctx] {
    pr::rules::llama3 l;
    l.factor = 8;
    l.low_freq_factor = nan;
    l.original_max_position_embeddings = 16;
    pr::plan p(ctx(), l);
  }));
  rows.push_back(expect<non_finite_error>("rotary::rules::longrope", "short_factor[0] NaN", "short_factor", [ctx] {
    pr::rules::longrope l;
    l.short_factor = {nan, 1.0, 1.0, 1.0};
    l.long_factor = {1.0, 1.0, 1.0, 1.0};
    pr::plan p(ctx(), l);
  }));
  rows.push_back(expect<shape_error>("rotary::rules::longrope", "short_factor (length)", "short_factor", [ctx] {
    pr::rules::longrope l;
    l.short_factor = {1.0};
    l.long_factor = {1.0, 1.0, 1.0, 1.0};
    pr::plan p(ctx(), l);
  }));
  // the rules' lengths: original_max_position_embeddings = 0 is "absent" (as transformers); with no
  // max_position_embeddings to fall back on, the rule has no length
  auto no_length = [] {
    pr::rope_context c;
    c.head_dim = 8;
    return c;
  };
  rows.push_back(expect<invalid_argument>("rotary::rules::llama3", "original_max_position_embeddings = 0", "original_max_position_embeddings", [no_length] {
    pr::rules::llama3 l;
    l.factor = 8;
    l.original_max_position_embeddings = 0;
    pr::plan p(no_length(), l);
  }));
  rows.push_back(expect<invalid_argument>("rotary::rules::yarn", "original_max_position_embeddings = 0", "original_max_position_embeddings", [no_length] {
    pr::rules::yarn y;
    y.factor = 4;
    y.original_max_position_embeddings = 0;
    pr::plan p(no_length(), y);
  }));
  rows.push_back(expect<invalid_argument>("rotary::rules::longrope", "original_max_position_embeddings = 0", "original_max_position_embeddings", [no_length] {
    pr::rules::longrope l;
    l.short_factor = {1.0, 1.0, 1.0, 1.0};
    l.long_factor = {1.0, 1.0, 1.0, 1.0};
    l.factor = 2;
    l.original_max_position_embeddings = 0;
    pr::plan p(no_length(), l);
  }));
  // rotary::param_reader / parse_rule: a rule's parameters read from JSON
  rows.push_back(expect<pr::config_error>("rotary::param_reader", "factor = 1e400 (Inf)", "rope_parameters.factor", [throwing] {
    const auto d = js::parse(R"({"factor": 1e400})", throwing);
    (void)pr::param_reader(d.root(), "rope_parameters", "linear").number("factor");
  }));
  rows.push_back(expect<pr::config_error>("rotary::param_reader", "factor missing (required)", "rope_parameters.factor",
                                          [] { (void)pr::param_reader(std::nullopt, "rope_parameters", "linear").required_number("factor"); }));
  rows.push_back(expect<pr::config_error>("rotary::parse_rule", "factor = -1e400 (Inf)", "rope_parameters.factor", [throwing] {
    const auto d = js::parse(R"({"factor": -1e400})", throwing);
    (void)pr::parse_rule("linear", pr::param_reader(d.root(), "rope_parameters", "linear"));
  }));
  rows.push_back(expect<pr::config_error>("rotary::parse_rule", "factor missing (required by linear)", "rope_parameters.factor",
                                          [] { (void)pr::parse_rule("linear", pr::param_reader(std::nullopt, "rope_parameters", "linear")); }));
}

// Rows added to close registry gaps (issue 26), family by family. Argument strings follow the
// kind vocabulary of kinds_of() below; each row names the argument its message must contain.
void add_registry_gaps(std::vector<row>& rows) {
  namespace ck = posenc::checked;
  namespace ps = posenc::sinusoidal;
  namespace tz = posenc::toeplitz;
  namespace io = posenc::io;
  namespace figures = posenc::figures;
  constexpr auto p2 = [](int e) { return std::size_t{1} << e; };
  constexpr std::int64_t i64min = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();
  // core/checked.hpp: the door itself (huge operands, negative values where a size is expected)
  rows.push_back(expect<size_error>("checked::add", "a = SIZE_MAX (huge)", "n + 1", [] { (void)ck::add(huge, std::size_t{1}, "f", "n + 1"); }));
  rows.push_back(expect<size_error>("checked::add", "INT64_MIN + -1 (negative offset)", "pos + off",
                                    [] { (void)ck::add(i64min, std::int64_t{-1}, "f", "pos + off"); }));
  rows.push_back(expect<size_error>("checked::sub", "INT64_MAX - -1 (huge)", "pos - off",
                                    [] { (void)ck::sub(i64max, std::int64_t{-1}, "f", "pos - off"); }));
  rows.push_back(expect<size_error>("checked::sub", "0 - 1 (negative)", "n - 1", [] { (void)ck::sub(zero, std::size_t{1}, "f", "n - 1"); }));
  rows.push_back(expect<size_error>("checked::mul", "SIZE_MAX * 2 (huge)", "rows * cols", [] { (void)ck::mul(huge, std::size_t{2}, "f", "rows * cols"); }));
  rows.push_back(expect<size_error>("checked::mul", "INT64_MIN * -1 (negative offset)", "pos * step",
                                    [] { (void)ck::mul(i64min, std::int64_t{-1}, "f", "pos * step"); }));
  rows.push_back(expect<size_error>("checked::cast", "SIZE_MAX to ptrdiff_t (huge)", "L", [] { (void)ck::cast<std::ptrdiff_t>(huge, "f", "L"); }));
  rows.push_back(expect<size_error>("checked::cast", "-1 to size_t (negative)", "L", [] { (void)ck::cast<std::size_t>(-1, "f", "L"); }));
  rows.push_back(expect<size_error>("checked::extent", "n = 2^40 + 1", "length", [p2] { (void)ck::extent(p2(40) + 1, "f", "length"); }));
  rows.push_back(expect<size_error>("checked::extent", "n = -1 (negative)", "length", [] { (void)ck::extent(std::int64_t{-1}, "f", "length"); }));
  rows.push_back(expect<size_error>("checked::index", "n = SIZE_MAX", "length", [] { (void)ck::index(huge, "f", "length"); }));
  rows.push_back(expect<size_error>("checked::index", "n = INT64_MIN (negative)", "length", [] { (void)ck::index(i64min, "f", "length"); }));
  rows.push_back(expect<size_error>("checked::elements", "rows = 2^40 + 1 (huge)", "rows * cols",
                                    [p2] { (void)ck::elements(p2(40) + 1, 1, "f", "rows * cols"); }));
  rows.push_back(expect<size_error>("checked::make_vector", "n = 2^40 + 1", "buckets", [p2] { (void)ck::make_vector<int>(p2(40) + 1, "f", "buckets"); }));
  // sinusoidal
  rows.push_back(expect<invalid_argument>("sinusoidal::block_table", "d = 0", "d", [] { (void)ps::block_table(4, 0, 1.0); }));
  rows.push_back(expect<size_error>("sinusoidal::block_table", "length * d = 2^60 elements", "length", [p2] { (void)ps::block_table(p2(40), p2(20), 1.0); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::encode", "d = 0", "d", [] { (void)ps::encode(1.0, 0); }));
  rows.push_back(expect<size_error>("sinusoidal::encode", "d = 2^40 + 2", "d", [p2] { (void)ps::encode(1.0, p2(40) + 2); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::fill", "d = 0", "d", [] {
    std::vector<double> b(8);
    ps::fill(b.data(), 2, 0, 4);
  }));
  rows.push_back(expect<non_finite_error>("sinusoidal::fill", "options.base NaN", "options.base", [] {
    std::vector<double> b(8);
    ps::options o;
    o.base = nan;
    ps::fill(b.data(), 2, 4, 4, o);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::fill_at", "d = 0", "d", [] {
    const vec p{0.0};
    std::vector<double> b(8);
    ps::fill_at(p, b.data(), 0, 8);
  }));
  rows.push_back(expect<size_error>("sinusoidal::fill_at", "d = SIZE_MAX", "d", [] {
    const vec p{0.0};
    std::vector<double> b(8);
    ps::fill_at(p, b.data(), huge - 1, huge);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::fill_at", "data (null)", "data", [] {
    const vec p{0.0};
    ps::fill_at<double>(p, nullptr, 8, 8);
  }));
  rows.push_back(expect<size_error>("sinusoidal::fill_at", "positions.size() * row_stride overflows", "row_stride", [] {
    const vec p{0.0, 1.0};
    std::vector<double> b(8);
    ps::fill_at(p, b.data(), 8, huge / 2 + 1);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::frequencies", "d = 0", "d", [] { (void)ps::frequencies(0); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::frequencies", "options.base Inf", "options.base", [] {
    ps::options o;
    o.base = inf;
    (void)ps::frequencies(8, o);
  }));
  rows.push_back(expect<size_error>("sinusoidal::frequencies_wide", "m = 2^40 + 1", "d / 2", [p2] { (void)ps::frequencies_wide(p2(40) + 1, ps::options{}); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::frequencies_wide", "options.base NaN", "options.base", [] {
    ps::options o;
    o.base = nan;
    (void)ps::frequencies_wide(4, o);
  }));
  rows.push_back(expect<size_error>("sinusoidal::generator", "d = 2^40 + 2", "d", [p2] { (void)ps::generator(p2(40) + 2); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::generator", "options.base NaN", "options.base", [] {
    ps::options o;
    o.base = nan;
    (void)ps::generator(4, o);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::inner_product", "d = 0", "d", [] { (void)ps::inner_product(1.0, 0); }));
  rows.push_back(expect<size_error>("sinusoidal::inner_product", "d = SIZE_MAX - 1", "d", [] { (void)ps::inner_product(1.0, huge - 1); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::pair_count", "d = 0", "d", [] { (void)ps::pair_count(0, ps::options{}); }));
  rows.push_back(expect<size_error>("sinusoidal::pair_count", "d = 2^40 + 2", "d", [p2] { (void)ps::pair_count(p2(40) + 2, ps::options{}); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::pair_count", "options.position_step Inf", "options.position_step", [] {
    ps::options o;
    o.position_step = inf;
    (void)ps::pair_count(4, o);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::rotation", "d = 0", "d", [] { (void)ps::rotation(1.0, 0); }));
  rows.push_back(expect<size_error>("sinusoidal::rotation", "d = 2^40 + 2", "d", [p2] { (void)ps::rotation(1.0, p2(40) + 2); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::table_at", "d = 0", "d", [] {
    const vec p{0.0};
    (void)ps::table_at(p, 0);
  }));
  rows.push_back(expect<size_error>("sinusoidal::table_at", "d = SIZE_MAX - 1", "d", [] {
    const vec p{0.0};
    (void)ps::table_at(p, huge - 1);
  }));
  rows.push_back(expect<size_error>("sinusoidal::table_at", "positions.size() * d = 2^41 elements", "d", [p2] {
    const vec p{0.0, 1.0};
    (void)ps::table_at(p, p2(40));
  }));
  // toeplitz
  const Eigen::VectorXd three = Eigen::VectorXd::Ones(3);
  const auto B = tz::toeplitz_matrix<double>(2, 2, three);
  rows.push_back(expect<invalid_argument>("toeplitz::circulant_embedding", "size = 0", "size", [B] { (void)tz::circulant_embedding(B, 0); }));
  rows.push_back(expect<size_error>("toeplitz::circulant_matrix", "first column of 2^40 + 1 (huge)", "first column", [] {
    // a column longer than max_extent cannot be allocated here; a mapped column of that length is
    // (the length is rejected before any element is read)
    const std::vector<double> one(1, 1.0);
    Eigen::Map<const Eigen::VectorXd> c(one.data(), static_cast<Eigen::Index>((std::size_t{1} << 40) + 1));
    (void)tz::circulant_matrix<double>(c);
  }));
  rows.push_back(expect<invalid_argument>("toeplitz::from_relative_bias", "rows = 0", "rows", [three] { (void)tz::from_relative_bias(0, 2, three); }));
  rows.push_back(expect<non_finite_error>("toeplitz::from_relative_bias", "biases (NaN)", "coefficients", [] {
    Eigen::VectorXd c = Eigen::VectorXd::Ones(3);
    c[2] = nan;
    (void)tz::from_relative_bias(2, 2, c);
  }));
  rows.push_back(expect<non_finite_error>("toeplitz::from_bucketed_bias", "table (NaN)", "table", [] {
    Eigen::VectorXd c = Eigen::VectorXd::Ones(3);
    c[0] = nan;
    (void)tz::from_bucketed_bias(2, 2, c, [](std::ptrdiff_t) { return 0; });
  }));
  rows.push_back(expect<invalid_argument>("toeplitz::head_operators", "bucket out of range", "bucket", [] {
    (void)tz::head_operators(2, 2, Eigen::MatrixXd::Ones(3, 2), [](std::ptrdiff_t) { return 9; });
  }));
  rows.push_back(expect<size_error>("toeplitz::head_operators", "rows = SIZE_MAX", "rows", [] {
    (void)tz::head_operators(huge, 2, Eigen::MatrixXd::Ones(3, 2), [](std::ptrdiff_t) { return 0; });
  }));
  rows.push_back(expect<non_finite_error>("toeplitz::head_operators", "table (Inf)", "table", [] {
    Eigen::MatrixXd t = Eigen::MatrixXd::Ones(3, 2);
    t(1, 1) = inf;
    (void)tz::head_operators(2, 2, t, [](std::ptrdiff_t) { return 0; });
  }));
  rows.push_back(expect<non_finite_error>("toeplitz::multiply", "X (NaN)", "X", [B] {
    Eigen::MatrixXd x = Eigen::MatrixXd::Ones(2, 1);
    x(0, 0) = nan;
    (void)tz::multiply(B, x);
  }));
  // floater/flow.hpp: the activation name
  rows.push_back(expect<invalid_argument>("floater::activation_from_string", "s (empty)", "''", [] { (void)posenc::floater::activation_from_string(""); }));
  rows.push_back(expect<invalid_argument>("floater::activation_from_string", "s truncated (short)", "'rel'",
                                          [] { (void)posenc::floater::activation_from_string("rel"); }));
  // io
  rows.push_back(expect<invalid_argument>("figures::deflate_bytes", "max_chain = 0", "max_chain", [] {
    figures::deflate_options o;
    o.max_chain = 0;
    (void)figures::deflate_bytes({}, o);
  }));
  rows.push_back(expect<invalid_argument>("figures::deflate_bytes", "max_chain = SIZE_MAX", "max_chain", [] {
    figures::deflate_options o;
    o.max_chain = huge;
    (void)figures::deflate_bytes({}, o);
  }));
  rows.push_back(expect<invalid_argument>("figures::zlib_bytes", "max_chain = 0", "max_chain", [] {
    figures::deflate_options o;
    o.max_chain = 0;
    (void)figures::zlib_bytes({}, o);
  }));
  rows.push_back(expect<invalid_argument>("figures::zlib_bytes", "max_chain = 2^40 + 1", "max_chain", [p2] {
    figures::deflate_options o;
    o.max_chain = p2(40) + 1;
    (void)figures::zlib_bytes({}, o);
  }));
  rows.push_back(expect<posenc::io_error>("io::read_npy", "bytes (empty)", "npy", [] { (void)io::read_npy<double>(std::span<const std::byte>()); }));
  rows.push_back(expect<posenc::io_error>("io::read_npy", "bytes truncated (short)", "npy", [] {
    const std::byte b[6] = {std::byte{0x93}, std::byte{'N'}, std::byte{'U'}, std::byte{'M'}, std::byte{'P'}, std::byte{'Y'}};
    (void)io::read_npy<double>(std::span<const std::byte>(b, 6));
  }));
  rows.push_back(expect<posenc::io_error>("io::read_npy_header", "path (missing)", "posenc-census-no-such", [] {
    (void)io::read_npy_header(std::filesystem::temp_directory_path() / "posenc-census-no-such.npy");
  }));
  rows.push_back(expect<posenc::io_error>("io::safetensors_file::from_bytes", "bytes (empty)", "safetensors",
                                          [] { (void)io::safetensors_file::from_bytes({}); }));
  rows.push_back(expect<posenc::io_error>("io::safetensors_file::from_bytes", "header length 2^63 (huge)", "header", [] {
    std::vector<std::byte> b(8, std::byte{0});
    b[7] = std::byte{0x80};
    (void)io::safetensors_file::from_bytes(b);
  }));
  rows.push_back(expect<posenc::io_error>("io::safetensors_file::from_bytes", "data_offsets beyond the file (offset)", "data_offsets", [] {
    const std::string h = R"({"a":{"dtype":"F64","shape":[1],"data_offsets":[0,8]}})";
    std::vector<std::byte> b(8 + h.size());
    b[0] = static_cast<std::byte>(h.size());
    std::memcpy(b.data() + 8, h.data(), h.size());
    (void)io::safetensors_file::from_bytes(b);
  }));
  rows.push_back(expect<posenc::io_error>("io::safetensors_file::from_bytes", "shape product overflows", "shape", [] {
    const std::string h = R"({"a":{"dtype":"F64","shape":[4294967296,4294967296,16],"data_offsets":[0,0]}})";
    std::vector<std::byte> b(8 + h.size());
    b[0] = static_cast<std::byte>(h.size());
    std::memcpy(b.data() + 8, h.data(), h.size());
    (void)io::safetensors_file::from_bytes(b);
  }));
  rows.push_back(expect<shape_error>("io::npy_bytes", "shape (empty data, zero extent mismatch: [0] vs 1 value)", "shape", [] {
    const vec d(1);
    const std::vector<std::size_t> s{0};
    (void)io::npy_bytes<double>(d, s);
  }));
  rows.push_back(expect<shape_error>("io::npy_bytes", "shape = [2^40 + 1] (huge)", "shape", [p2] {
    const vec d(1);
    const std::vector<std::size_t> s{p2(40) + 1};
    (void)io::npy_bytes<double>(d, s);
  }));
  // core/thread_pool.hpp
  rows.push_back(expect<invalid_argument>("resolve_threads", "threads = SIZE_MAX", "threads", [] { (void)posenc::resolve_threads(huge, "f"); }));
  rows.push_back(expect<invalid_argument>("split_range", "parts = 0", "parts", [] { (void)posenc::split_range(16, 0, 0); }));
  rows.push_back(expect<invalid_argument>("split_range", "count = INT64_MAX (huge; chunks * parts overflows)", "count",
                                          [] { (void)posenc::split_range(i64max, 3, 4); }));
  rows.push_back(expect<invalid_argument>("split_range", "part out of range (offset)", "part", [] { (void)posenc::split_range(16, 4, 4); }));
  rows.push_back(expect<invalid_argument>("split_range", "count < 0", "count", [] { (void)posenc::split_range(-1, 0, 1); }));
  rows.push_back(expect<invalid_argument>("parallel_chunks", "threads = SIZE_MAX", "threads",
                                          [] { posenc::parallel_chunks(std::size_t{1} << 20, huge, [](std::size_t, std::size_t) {}); }));
  rows.push_back(expect<invalid_argument>("worker_pool", "threads = SIZE_MAX", "threads", [] { posenc::worker_pool w(huge); }));
  // ode/grid.hpp helpers
  {
    using namespace posenc::ode;
    rows.push_back(expect<invalid_argument>("ode::validate_fixed_steps", "substeps = 0", "substeps",
                                            [] { validate_fixed_steps(fixed_steps{0}, "f"); }));
    rows.push_back(expect<invalid_argument>("ode::validate_fixed_steps", "max_step NaN", "max_step",
                                            [] { validate_fixed_steps(fixed_steps{.substeps = 1, .max_step = nan}, "f"); }));
    rows.push_back(expect<invalid_argument>("ode::substeps_for", "substeps = 0", "substeps",
                                            [] { (void)substeps_for(fixed_steps{0}, 0.0, 1.0); }));
    rows.push_back(expect<step_budget_exceeded>("ode::substeps_for", "max_step = 1e-300", "max_step",
                                                [] { (void)substeps_for(fixed_steps{.substeps = 1, .max_step = 1e-300}, 0.0, 1.0); }));
    rows.push_back(expect<invalid_argument>("ode::substeps_for", "max_step Inf", "max_step",
                                            [] { (void)substeps_for(fixed_steps{.substeps = 1, .max_step = inf}, 0.0, 1.0); }));
    rows.push_back(expect<invalid_argument>("ode::count_fixed_steps", "substeps = 0", "substeps", [] {
      const vec t{0.0, 1.0};
      (void)count_fixed_steps(fixed_steps{0}, std::span<const double>(t), "f");
    }));
    rows.push_back(expect<step_budget_exceeded>("ode::count_fixed_steps", "substeps = SIZE_MAX over 2 intervals", "max_steps", [] {
      const vec t{0.0, 1.0, 2.0};
      (void)count_fixed_steps(fixed_steps{huge}, std::span<const double>(t), "f");
    }));
    rows.push_back(expect<invalid_argument>("ode::count_fixed_steps", "max_step NaN", "max_step", [] {
      const vec t{0.0, 1.0};
      (void)count_fixed_steps(fixed_steps{.substeps = 1, .max_step = nan}, std::span<const double>(t), "f");
    }));
    rows.push_back(expect<invalid_argument>("ode::substep", "k = 0", "k", [] { (void)substep(0.0, 1.0, 0, 0); }));
    rows.push_back(expect<invalid_argument>("ode::substep", "s out of range (offset)", "s", [] { (void)substep(0.0, 1.0, 2, 2); }));
    rows.push_back(expect<non_finite_error>("ode::substep", "t1 NaN", "t0, t1", [] { (void)substep(0.0, nan, 2, 0); }));
    rows.push_back(expect<non_finite_error>("ode::for_each_substep", "t0 Inf", "t0, t1",
                                            [] { for_each_substep(-inf, 1.0, 2, [](std::size_t, double, double) {}); }));
    rows.push_back(expect<invalid_argument>("ode::grid", "delta = 0", "delta", [] { (void)grid::uniform(0.0); }));
    rows.push_back(expect<invalid_argument>("ode::grid", "delta NaN", "delta", [] { (void)grid::uniform(nan); }));
    rows.push_back(expect<posenc::grid_error>("ode::grid", "times (empty)", "times", [] { (void)grid::explicit_times({}); }));
    rows.push_back(expect<posenc::grid_error>("ode::validate_grid", "times decreasing then increasing (out of range)", "times", [] {
      const vec t{0.0, -1.0, 2.0};
      (void)validate_grid(std::span<const double>(t));
    }));
  }
  // tupe/relative_bucket.hpp
  {
    namespace tp = posenc::tupe;
    rows.push_back(expect<invalid_argument>("tupe::validate", "num_buckets = 0", "num_buckets", [] {
      tp::bucket_spec s;
      s.num_buckets = 0;
      tp::validate(s, "f");
    }));
    rows.push_back(expect<invalid_argument>("tupe::validate", "num_buckets = INT_MAX", "num_buckets", [] {
      tp::bucket_spec s;
      s.num_buckets = std::numeric_limits<int>::max();
      tp::validate(s, "f");
    }));
    rows.push_back(expect<invalid_argument>("tupe::validate", "max_distance < 0 (negative)", "max_distance", [] {
      tp::bucket_spec s;
      s.max_distance = -1;
      tp::validate(s, "f");
    }));
    rows.push_back(expect<invalid_argument>("tupe::relative_position_bucket", "num_buckets = 0", "num_buckets", [] {
      tp::bucket_spec s;
      s.num_buckets = 0;
      (void)tp::relative_position_bucket(1, s);
    }));
    rows.push_back(expect<invalid_argument>("tupe::relative_position_bucket", "num_buckets = INT_MAX", "num_buckets", [] {
      tp::bucket_spec s;
      s.num_buckets = std::numeric_limits<int>::max();
      (void)tp::relative_position_bucket(1, s);
    }));
    rows.push_back(expect<invalid_argument>("tupe::relative_bucket_offsets", "max_distance = -1 (negative)", "max_distance", [] {
      tp::bucket_spec s;
      s.max_distance = -1;
      (void)tp::relative_bucket_offsets(4, s);
    }));
  }
  // floater: flatten / unflatten / initialisers on an mlp whose public tensors disagree
  {
    namespace fl = posenc::floater;
    auto short_mlp = [] {
      fl::mlp<double> m(4, 8);
      m.b1.resize(2);  // a short bias: indexing by w1.rows() would run past it
      return m;
    };
    rows.push_back(expect<shape_error>("floater::flatten", "b1 short (size)", "b1", [short_mlp] { (void)fl::flatten(short_mlp()); }));
    rows.push_back(expect<shape_error>("floater::unflatten", "mlp b1 short (size)", "b1", [short_mlp] {
      auto m = short_mlp();
      const Eigen::VectorXd v = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m.parameter_count()));
      fl::unflatten(v, m);
    }));
    rows.push_back(expect<shape_error>("floater::unflatten", "v (size)", "parameters", [] {
      fl::mlp<double> m(4, 8);
      const Eigen::VectorXd v = Eigen::VectorXd::Zero(3);
      fl::unflatten(v, m);
    }));
    rows.push_back(expect<shape_error>("floater::init_xavier_normal", "w1_t short (size)", "w1_t", [] {
      fl::mlp<double> m(4, 8);
      m.w1_t.resize(1);
      std::mt19937_64 g(1);
      fl::init_xavier_normal(m, g);
    }));
    rows.push_back(expect<non_finite_error>("floater::init_xavier_normal", "gain NaN", "gain", [] {
      fl::mlp<double> m(4, 8);
      std::mt19937_64 g(1);
      fl::init_xavier_normal(m, g, nan);
    }));
    rows.push_back(expect<invalid_argument>("floater::init_xavier_normal", "gain = 0 (zero std)", "gain", [] {
      fl::mlp<double> m(4, 8);
      std::mt19937_64 g(1);
      fl::init_xavier_normal(m, g, 0.0);
    }));
    rows.push_back(expect<non_finite_error>("floater::init_small", "scale Inf", "gain", [] {
      fl::mlp<double> m(4, 8);
      std::mt19937_64 g(1);
      fl::init_small(m, g, inf);
    }));
    rows.push_back(expect<invalid_argument>("floater::init_small", "scale = 0 (zero std)", "gain", [] {
      fl::mlp<double> m(4, 8);
      std::mt19937_64 g(1);
      fl::init_small(m, g, 0.0);
    }));
    rows.push_back(expect<shape_error>("floater::init_small", "b2 short (size)", "b2", [] {
      fl::mlp<double> m(4, 8);
      m.b2.resize(1);
      std::mt19937_64 g(1);
      fl::init_small(m, g);
    }));
    rows.push_back(expect<non_finite_error>("floater::xavier_uniform", "gain NaN", "gain", [] {
      std::mt19937_64 g(1);
      (void)fl::xavier_uniform<double>({2, 2}, g, nan);
    }));
    rows.push_back(expect<size_error>("floater::xavier_uniform", "shape product overflows (2^32 * 2^32)", "shape", [p2] {
      std::mt19937_64 g(1);
      (void)fl::xavier_uniform<double>({p2(32), p2(32), 2}, g);
    }));
    rows.push_back(expect<size_error>("floater::zero_encoder", "blocks = SIZE_MAX", "blocks", [] { (void)fl::zero_encoder<double>(4, 0, huge); }));
    rows.push_back(expect<size_error>("floater::zero_encoder", "blocks * d = 2^43 elements", "blocks * d", [p2] { (void)fl::zero_encoder<double>(8, 8, p2(40)); }));
  }  // numeric/frequencies.hpp: the geometric frequencies base^(-2k / D) and the one check of a base
  {
    namespace pn = posenc::numeric;
    const auto lb = pn::log_pair(10000.0L);
    rows.push_back(expect<invalid_argument>("numeric::geometric_frequencies", "exponent_dim = 0", "exponent_dim",
                                            [lb] { (void)pn::geometric_frequencies(4, 0, lb); }));
    rows.push_back(expect<size_error>("numeric::geometric_frequencies", "pairs = 2^60", "pairs",
                                      [lb, p2] { (void)pn::geometric_frequencies(p2(60), 8, lb); }));
    rows.push_back(expect<non_finite_error>("numeric::geometric_frequencies", "log_base NaN", "log_base", [] {
      (void)pn::geometric_frequencies(4, 8, pn::ff<pn::wide>{std::numeric_limits<pn::wide>::quiet_NaN(), 0});
    }));
    rows.push_back(expect<non_finite_error>("numeric::check_frequency_base", "base NaN", "base",
                                            [] { pn::check_frequency_base(nan, "f", "base"); }));
    rows.push_back(expect<invalid_argument>("numeric::check_frequency_base", "base = 0", "base",
                                            [] { pn::check_frequency_base(0.0, "f", "base"); }));
  }
}

// The 2-D sincos tables (posenc/sinusoidal/grid.hpp) and the diffusion / vision RoPE layouts
// (posenc/rotary/axes/diffusion.hpp): every kind of each entry point.
void add_multiaxis_layouts(std::vector<row>& rows) {
  namespace ps = posenc::sinusoidal;
  constexpr auto p2 = [](int e) { return std::size_t{1} << e; };
  const auto gopt = [](auto f) {
    ps::grid_options o;
    f(o);
    return o;
  };
  rows.push_back(expect<invalid_argument>("sinusoidal::grid_table", "d = 0", "d", [] { (void)ps::grid_table(4, 4, 0); }));
  rows.push_back(expect<size_error>("sinusoidal::grid_table", "grid_h = SIZE_MAX", "grid_h", [] { (void)ps::grid_table(huge, 4, 8); }));
  rows.push_back(expect<size_error>("sinusoidal::grid_table", "grid_h * grid_w = 2^60", "grid_h * grid_w",
                                    [p2] { (void)ps::grid_table(p2(30), p2(30), 8); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::grid_table", "options.interpolation_scale NaN", "options.interpolation_scale",
                                          [gopt] { (void)ps::grid_table(4, 4, 8, gopt([](auto& o) { o.base_size = 4; o.interpolation_scale = nan; })); }));
  rows.push_back(expect<size_error>("sinusoidal::grid_positions", "n = SIZE_MAX", "n", [] { (void)ps::grid_positions(huge); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::grid_positions", "options.base_size Inf", "options.base_size",
                                          [gopt] { (void)ps::grid_positions(4, gopt([](auto& o) { o.base_size = inf; })); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::grid_table_at", "d = 0", "d", [] {
    const std::vector<double> x{0, 1};
    (void)ps::grid_table_at(x, x, 0);
  }));
  rows.push_back(expect<size_error>("sinusoidal::grid_table_at", "d = SIZE_MAX - 3", "d", [] {
    const std::vector<double> x{0, 1};
    (void)ps::grid_table_at(x, x, huge - 3);
  }));
  rows.push_back(expect<size_error>("sinusoidal::grid_table_at", "h_positions.size() * w_positions.size() = 2^41", "grid_h * grid_w", [p2] {
    const std::vector<double> h(p2(21)), w(p2(20));
    (void)ps::grid_table_at(h, w, 8);
  }));
  rows.push_back(expect<non_finite_error>("sinusoidal::grid_table_at", "w_positions (NaN)", "w_positions", [] {
    const std::vector<double> x{0, 1}, bad{0, nan};
    (void)ps::grid_table_at(x, bad, 8);
  }));
  rows.push_back(expect<invalid_argument>("sinusoidal::grid_table_cropped", "d = 0", "d", [] { (void)ps::grid_table_cropped(8, 4, 4, 0); }));
  rows.push_back(expect<size_error>("sinusoidal::grid_table_cropped", "max_size = SIZE_MAX", "max_size",
                                    [] { (void)ps::grid_table_cropped(huge, 4, 4, 8); }));
  rows.push_back(expect<size_error>("sinusoidal::grid_table_cropped", "height * width * d = 2^43 elements", "rows",
                                    [p2] { (void)ps::grid_table_cropped(p2(20), p2(20), p2(20), 8); }));
  rows.push_back(expect<non_finite_error>("sinusoidal::grid_table_cropped", "options.base_size NaN", "options.base_size",
                                          [gopt] { (void)ps::grid_table_cropped(8, 4, 4, 8, gopt([](auto& o) { o.base_size = nan; })); }));
  rows.push_back(expect<invalid_argument>("sinusoidal::grid_table_cropped", "height out of range (> max_size)", "height",
                                          [] { (void)ps::grid_table_cropped(8, 9, 4, 8); }));
  namespace rt = posenc::rotary;
  using dims3 = std::array<std::size_t, 3>;
  for (const char* name : {"rotary::axes_nd", "rotary::flux_frequencies", "rotary::hunyuan_video_frequencies",
                           "rotary::qwen_image_frequencies"}) {
    const std::string n = name;
    const auto call = [n](std::span<const std::size_t> dims, double theta) {
      if (n == "rotary::axes_nd") (void)rt::axes_nd(dims, theta);
      if (n == "rotary::flux_frequencies") (void)rt::flux_frequencies(dims, theta);
      if (n == "rotary::hunyuan_video_frequencies") (void)rt::hunyuan_video_frequencies(dims, theta);
      if (n == "rotary::qwen_image_frequencies") (void)rt::qwen_image_frequencies(dims, theta);
    };
    rows.push_back(expect<invalid_argument>(name, "axes_dim (empty)", "axes_dim", [call] { call({}, 10000); }));
    rows.push_back(expect<invalid_argument>(name, "axes_dim[1] = 0", "axes_dim[1]", [call] { call(dims3{16, 0, 56}, 10000); }));
    rows.push_back(expect<size_error>(name, "axes_dim[0] = SIZE_MAX - 1", "axes_dim", [call] { call(dims3{huge - 1, 56, 56}, 10000); }));
    rows.push_back(expect<non_finite_error>(name, "theta NaN", "theta", [call] { call(dims3{16, 56, 56}, nan); }));
  }
  rows.push_back(expect<invalid_argument>("rotary::wan_frequencies", "head_dim = 0", "head_dim", [] { (void)rt::wan_frequencies(0); }));
  rows.push_back(expect<size_error>("rotary::wan_frequencies", "head_dim = SIZE_MAX - 1", "head_dim", [] { (void)rt::wan_frequencies(huge - 1); }));
  rows.push_back(expect<non_finite_error>("rotary::wan_frequencies", "theta Inf", "theta", [] { (void)rt::wan_frequencies(128, inf); }));
  rows.push_back(expect<size_error>("rotary::grid_positions_3d", "frames = SIZE_MAX", "frames", [] { (void)rt::grid_positions_3d(huge, 2, 2); }));
  rows.push_back(expect<size_error>("rotary::grid_positions_3d", "frames * height * width = 2^62", "frames * height * width",
                                    [p2] { (void)rt::grid_positions_3d(p2(30), p2(30), 4); }));
  rows.push_back(expect<size_error>("rotary::flux_positions", "text_tokens = SIZE_MAX", "text_tokens", [] { (void)rt::flux_positions(huge, 4, 4); }));
  rows.push_back(expect<size_error>("rotary::flux_positions", "height * width = 2^60", "height",
                                    [p2] { (void)rt::flux_positions(4, p2(30), p2(30)); }));
  rows.push_back(expect<invalid_argument>("rotary::flux_patches", "vae_scale_factor = 0", "vae_scale_factor", [] { (void)rt::flux_patches(1024, 0); }));
  rows.push_back(expect<size_error>("rotary::flux_patches", "vae_scale_factor = SIZE_MAX (2 * vae_scale_factor overflows)",
                                    "2 * vae_scale_factor", [] { (void)rt::flux_patches(1024, huge); }));
  rows.push_back(expect<invalid_argument>("rotary::wan_positions", "patch_size (1, 0, 2) = 0", "patch_size",
                                          [] { (void)rt::wan_positions(21, 60, 104, {1, 0, 2}); }));
  rows.push_back(expect<invalid_argument>("rotary::wan_positions", "latent_height = SIZE_MAX", "latent_height",
                                          [] { (void)rt::wan_positions(21, huge, 104); }));
  rows.push_back(expect<size_error>("rotary::wan_positions", "max_seq_len = SIZE_MAX: frames * height * width = 2^62",
                                    "frames * height * width", [p2] { (void)rt::wan_positions(p2(30), p2(30), 4, {1, 1, 1}, huge); }));
  rows.push_back(expect<invalid_argument>("rotary::hunyuan_video_positions", "patch_size = 0", "patch_size",
                                          [] { (void)rt::hunyuan_video_positions(9, 40, 64, 0); }));
  rows.push_back(expect<size_error>("rotary::hunyuan_video_positions", "latent_frames = SIZE_MAX", "frames",
                                    [] { (void)rt::hunyuan_video_positions(huge, 40, 64); }));
  rows.push_back(expect<size_error>("rotary::hunyuan_video_positions", "frames * height * width = 2^62", "frames * height * width",
                                    [p2] { (void)rt::hunyuan_video_positions(p2(30), p2(31), p2(3), 2, 1); }));
  rows.push_back(expect<invalid_argument>("rotary::qwen_image_positions", "images (empty)", "images", [] { (void)rt::qwen_image_positions({}, 4); }));
  rows.push_back(expect<invalid_argument>("rotary::qwen_image_positions", "text_tokens = SIZE_MAX", "text_tokens", [] {
    const std::array<rt::qwen_image_shape, 1> one{{{1, 4, 4}}};
    (void)rt::qwen_image_positions(one, huge);
  }));
  rows.push_back(expect<size_error>("rotary::qwen_image_positions", "images[0] = (1, 2^30, 2^30): frames * height * width overflows",
                                    "frames * height * width", [p2] {
    const std::array<rt::qwen_image_shape, 1> big{{{1, p2(30), p2(30)}}};
    (void)rt::qwen_image_positions(big, 4);
  }));
  rows.push_back(expect<invalid_argument>("rotary::qwen_image_positions", "images[0] out of range (height 9000)", "images[0]", [] {
    const std::array<rt::qwen_image_shape, 1> tall{{{1, 9000, 4}}};
    (void)rt::qwen_image_positions(tall, 4);
  }));
  // rotary/axes/vision.hpp
  using grids1 = std::array<rt::vision_grid, 1>;
  constexpr std::int64_t i64huge = std::numeric_limits<std::int64_t>::max(), i2e30 = std::int64_t{1} << 30;
  rows.push_back(expect<invalid_argument>("rotary::qwen_vl_vision_frequencies", "head_dim = 0", "head_dim", [] { (void)rt::qwen_vl_vision_frequencies(0); }));
  rows.push_back(expect<size_error>("rotary::qwen_vl_vision_frequencies", "head_dim = SIZE_MAX - 3", "head_dim", [] { (void)rt::qwen_vl_vision_frequencies(huge - 3); }));
  rows.push_back(expect<non_finite_error>("rotary::qwen_vl_vision_frequencies", "theta NaN", "theta", [] { (void)rt::qwen_vl_vision_frequencies(80, nan); }));
  rows.push_back(expect<invalid_argument>("rotary::pixtral_vision_frequencies", "head_dim = 0", "head_dim", [] { (void)rt::pixtral_vision_frequencies(0); }));
  rows.push_back(expect<size_error>("rotary::pixtral_vision_frequencies", "head_dim = SIZE_MAX - 3", "head_dim", [] { (void)rt::pixtral_vision_frequencies(huge - 3); }));
  rows.push_back(expect<non_finite_error>("rotary::pixtral_vision_frequencies", "theta Inf", "theta", [] { (void)rt::pixtral_vision_frequencies(64, inf); }));
  rows.push_back(expect<invalid_argument>("rotary::llama4_vision_frequencies", "head_dim = 0", "head_dim", [] { (void)rt::llama4_vision_frequencies(0); }));
  rows.push_back(expect<size_error>("rotary::llama4_vision_frequencies", "head_dim = SIZE_MAX - 3", "head_dim", [] { (void)rt::llama4_vision_frequencies(huge - 3); }));
  rows.push_back(expect<non_finite_error>("rotary::llama4_vision_frequencies", "theta NaN", "theta", [] { (void)rt::llama4_vision_frequencies(88, nan); }));
  rows.push_back(expect<invalid_argument>("rotary::dinov3_frequencies", "grid_h = 0", "grid_h", [] { (void)rt::dinov3_frequencies(64, 0, 4); }));
  rows.push_back(expect<size_error>("rotary::dinov3_frequencies", "grid_w = SIZE_MAX", "grid_w", [] { (void)rt::dinov3_frequencies(64, 4, huge); }));
  rows.push_back(expect<non_finite_error>("rotary::dinov3_frequencies", "theta Inf", "theta", [] { (void)rt::dinov3_frequencies(64, 4, 4, inf); }));
  rows.push_back(expect<invalid_argument>("rotary::qwen_vl_vision_positions", "spatial_merge_size = 0", "spatial_merge_size",
                                          [] { (void)rt::qwen_vl_vision_positions(grids1{{{1, 4, 4}}}, 0); }));
  rows.push_back(expect<size_error>("rotary::qwen_vl_vision_positions", "grids[0].t = INT64_MAX", "frames",
                                    [] { (void)rt::qwen_vl_vision_positions(grids1{{{i64huge, 4, 4}}}, 2); }));
  rows.push_back(expect<size_error>("rotary::qwen_vl_vision_positions", "grids[0] = (1, 2^30, 2^30): t * h * w overflows", "frames * height * width",
                                    [] { (void)rt::qwen_vl_vision_positions(grids1{{{1, i2e30, i2e30}}}, 2); }));
  rows.push_back(expect<invalid_argument>("rotary::qwen2_5_vl_window_order", "patch_size = 0", "patch_size",
                                          [] { (void)rt::qwen2_5_vl_window_order(grids1{{{1, 4, 4}}}, 2, 112, 0); }));
  rows.push_back(expect<size_error>("rotary::qwen2_5_vl_window_order", "grids[0].t = INT64_MAX", "frames",
                                    [] { (void)rt::qwen2_5_vl_window_order(grids1{{{i64huge, 4, 4}}}); }));
  rows.push_back(expect<size_error>("rotary::qwen2_5_vl_window_order", "grids[0] = (1, 2^30, 2^30): t * h * w overflows", "frames * height * width",
                                    [] { (void)rt::qwen2_5_vl_window_order(grids1{{{1, i2e30, i2e30}}}); }));
  rows.push_back(expect<invalid_argument>("rotary::reorder_positions", "axes = 0", "axes", [] {
    const std::vector<std::int64_t> p{0, 1}, o{0, 1};
    (void)rt::reorder_positions(p, 0, o);
  }));
  rows.push_back(expect<invalid_argument>("rotary::reorder_positions", "axes = SIZE_MAX", "axes", [] {
    const std::vector<std::int64_t> p{0, 1}, o{0, 1};
    (void)rt::reorder_positions(p, huge, o);
  }));
  rows.push_back(expect<shape_error>("rotary::reorder_positions", "positions short (size)", "positions", [] {
    const std::vector<std::int64_t> p{0, 1, 2}, o{0, 1};
    (void)rt::reorder_positions(p, 2, o);
  }));
  rows.push_back(expect<invalid_argument>("rotary::reorder_positions", "order[1] out of range", "order[1]", [] {
    const std::vector<std::int64_t> p{0, 1}, o{0, 7};
    (void)rt::reorder_positions(p, 1, o);
  }));
  rows.push_back(expect<size_error>("rotary::pixtral_vision_positions", "grids[0].h = INT64_MAX", "height",
                                    [] { (void)rt::pixtral_vision_positions(grids1{{{1, i64huge, 4}}}); }));
  rows.push_back(expect<size_error>("rotary::pixtral_vision_positions", "grids[0] = (1, 2^30, 2^30): h * w overflows", "frames * height * width",
                                    [] { (void)rt::pixtral_vision_positions(grids1{{{1, i2e30, i2e30}}}); }));
  rows.push_back(expect<size_error>("rotary::llama4_vision_positions", "side = SIZE_MAX", "height", [] { (void)rt::llama4_vision_positions(huge); }));
  rows.push_back(expect<size_error>("rotary::llama4_vision_positions", "side = 2^30: side * side overflows", "frames * height * width",
                                    [p2] { (void)rt::llama4_vision_positions(p2(30)); }));
  rows.push_back(expect<size_error>("rotary::dinov3_positions", "grid_h = SIZE_MAX", "height", [] { (void)rt::dinov3_positions(huge, 4); }));
  rows.push_back(expect<size_error>("rotary::dinov3_positions", "grid_h * grid_w = 2^60", "frames * height * width",
                                    [p2] { (void)rt::dinov3_positions(p2(30), p2(30)); }));
  rows.push_back(expect<invalid_argument>("rotary::qwen_vl_vision_positions", "grids[0].h = -2 (negative)", "grids[0]",
                                          [] { (void)rt::qwen_vl_vision_positions(grids1{{{1, -2, 4}}}, 2); }));
}

// Multi-axis RoPE and M-RoPE (posenc/rotary/axes/axes.hpp, mrope.hpp, mrope_config.hpp).
void add_multi_axis(std::vector<row>& rows) {
  namespace pr = posenc::rotary;
  const std::vector<std::size_t> sec{16, 24, 24};
  rows.push_back(expect<invalid_argument>("rotary::mrope_axes", "section (empty)", "section", [] {
    (void)pr::mrope_axes(pr::default_frequencies(8), std::vector<std::size_t>{}, pr::mrope_style::sections);
  }));
  rows.push_back(expect<invalid_argument>("rotary::mrope_axes", "section = {SIZE_MAX, 2} (its sum overflows)", "section", [] {
    (void)pr::mrope_axes(pr::default_frequencies(8), std::vector<std::size_t>{huge, 2}, pr::mrope_style::sections);
  }));
  rows.push_back(expect<non_finite_error>("rotary::mrope_axes", "freqs.inv_freq[1] = NaN", "freqs.inv_freq", [] {
    auto f = pr::default_frequencies(8);
    f.inv_freq[1] = static_cast<long double>(nan);
    (void)pr::mrope_axes(f, std::vector<std::size_t>{1, 1, 2}, pr::mrope_style::sections);
  }));
  rows.push_back(expect<invalid_argument>("rotary::mrope_axes", "section (size): 2 entries for the interleaved style", "section", [] {
    (void)pr::mrope_axes(pr::default_frequencies(8), std::vector<std::size_t>{2, 2}, pr::mrope_style::interleaved);
  }));
  rows.push_back(expect<invalid_argument>("rotary::mrope", "rotary_dim = 0", "rotary_dim",
                                          [sec] { (void)pr::mrope(0, 1e6, sec); }));
  rows.push_back(expect<invalid_argument>("rotary::mrope", "rotary_dim = 2^62", "rotary_dim",
                                          [sec] { (void)pr::mrope(std::size_t{1} << 62, 1e6, sec); }));
  rows.push_back(expect<non_finite_error>("rotary::mrope", "theta = NaN", "theta", [sec] { (void)pr::mrope(128, nan, sec); }));
  rows.push_back(expect<invalid_argument>("rotary::mrope", "section (size): 2 entries, interleaved", "section",
                                          [] { (void)pr::mrope(8, 1e4, std::vector<std::size_t>{2, 2}, true); }));
  const std::vector<std::int64_t> types{0, 1, 1, 0};
  const std::vector<pr::vision_grid> img{{1, 2, 4}};
  rows.push_back(expect<invalid_argument>("rotary::get_rope_index", "image_grid_thw[0].h = 0", "image_grid_thw", [types] {
    (void)pr::get_rope_index(types, 1, 4, std::vector<pr::vision_grid>{{1, 0, 4}}, {});
  }));
  rows.push_back(expect<invalid_argument>("rotary::get_rope_index", "batch = SIZE_MAX, seq = 2 (batch * seq overflows)",
                                          "batch * seq", [types, img] { (void)pr::get_rope_index(types, huge, 2, img, {}); }));
  rows.push_back(expect<non_finite_error>("rotary::get_rope_index", "second_per_grid_ts[0] = NaN", "second_per_grid_ts", [types, img] {
    const std::vector<float> s{std::numeric_limits<float>::quiet_NaN()};
    (void)pr::get_rope_index(types, 1, 4, img, std::vector<pr::vision_grid>{{2, 2, 2}}, {}, s);
  }));
  rows.push_back(expect<shape_error>("rotary::get_rope_index", "mm_token_type_ids (size): 4 for batch * seq = 8", "mm_token_type_ids",
                                     [types, img] { (void)pr::get_rope_index(types, 2, 4, img, {}); }));
  rows.push_back(expect<invalid_argument>("rotary::get_rope_index", "mm_token_type_ids[0, 1] = 3 (out of range)", "mm_token_type_ids", [img] {
    (void)pr::get_rope_index(std::vector<std::int64_t>{0, 3, 3, 0}, 1, 4, img, {});
  }));
  rows.push_back(expect<invalid_argument>("rotary::hunyuan_rope_index", "image_grid_thw[0].h = 0", "image_grid_thw", [types] {
    (void)pr::hunyuan_rope_index(types, 1, 4, std::vector<pr::vision_grid>{{1, 0, 4}});
  }));
  rows.push_back(expect<invalid_argument>("rotary::hunyuan_rope_index", "batch = SIZE_MAX, seq = 2 (batch * seq overflows)",
                                          "batch * seq", [types, img] { (void)pr::hunyuan_rope_index(types, huge, 2, img); }));
  rows.push_back(expect<shape_error>("rotary::hunyuan_rope_index", "mm_token_type_ids (size): 4 for batch * seq = 8",
                                     "mm_token_type_ids", [types, img] { (void)pr::hunyuan_rope_index(types, 2, 4, img); }));
  rows.push_back(expect<invalid_argument>("rotary::hunyuan_rope_index", "attention_mask = all zeros (no valid token)",
                                          "attention_mask", [types, img] {
    (void)pr::hunyuan_rope_index(types, 1, 4, img, std::vector<std::int64_t>{0, 0, 0, 0});
  }));
  rows.push_back(expect<pr::config_error>("rotary::load_mrope_config", "text_config.head_dim = 0", "head_dim", [] {
    (void)pr::load_mrope_config(R"({"model_type":"qwen2_vl","text_config":{"head_dim":0,"rope_theta":1e6}})");
  }));
  rows.push_back(expect<pr::config_error>("rotary::load_mrope_config", "text_config.head_dim = 2^53", "head_dim", [] {
    (void)pr::load_mrope_config(R"({"model_type":"qwen2_vl","text_config":{"head_dim":9007199254740992,"rope_theta":1e6}})");
  }));
  rows.push_back(expect<pr::config_error>("rotary::load_mrope_config", "rope_theta = 1e400 (Inf)", "rope_theta", [] {
    (void)pr::load_mrope_config(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128,"rope_theta":1e400}})");
  }));
  rows.push_back(expect<pr::config_error>("rotary::load_mrope_config", "short JSON text (truncated buffer)", "JSON",
                                          [] { (void)pr::load_mrope_config(R"({"model_type":"qwen2_vl","text_con)"); }));
  rows.push_back(expect<pr::config_error>("rotary::load_mrope_config", "rope_theta missing", "rope_theta", [] {
    (void)pr::load_mrope_config(R"({"model_type":"qwen2_vl","text_config":{"head_dim":128}})");
  }));
}

// Rows of issue 37: the newest entry points probed as an attacker would. Each failed on the code
// before it: a rule parameter or frequency finite in long double only loaded and gave NaN tables;
// an attention factor beyond the work type was reported as a non-finite q; cu_seqlens of INT64_MIN
// or 2^63 were differenced before they were ordered (signed overflow, or a message with the
// wrapped value).
void add_issue37(std::vector<row>& rows) {
  namespace pr = posenc::rotary;
  namespace pa = posenc::alibi;
  using bf16 = Eigen::bfloat16;
  constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
  constexpr std::uint64_t u2_63 = std::uint64_t{1} << 63;
  auto ctx = [] {
    pr::rope_context c;
    c.head_dim = 8;
    c.max_position_embeddings = 64;
    c.original_max_position_embeddings = 16;
    return c;
  };
  // validation in the precision of use
  rows.push_back(expect<invalid_argument>("rotary::rules::linear", "factor = 1e-320 (frequencies beyond double: huge)",
                                          "factor: expected a normal double",
                                          [ctx] { pr::plan p(ctx(), pr::rules::linear{{}, 1e-320}); }));
  rows.push_back(expect<invalid_argument>("rotary::rules::longrope", "short_factor[1] = 1e-320 (huge frequency)",
                                          "short_factor[1]", [ctx] {
                                            pr::rules::longrope l;
                                            l.short_factor = {1.0, 1e-320, 1.0, 1.0};
                                            l.long_factor = {1.0, 1.0, 1.0, 1.0};
                                            pr::plan p(ctx(), l);
                                          }));
  rows.push_back(expect<invalid_argument>("rotary::load_config", "v5 rope_parameters factor = 1e-320 (huge frequency)",
                                          "factor", [] {
                                            (void)pr::load_config(
                                                R"({"head_dim": 8, "rope_parameters": {"rope_type": "linear", "factor": 1e-320}})");
                                          }));
  rows.push_back(expect<non_finite_error>("rotary::table", "inv_freq = 1e320 (Inf in double)", "finite in double", [] {
    pr::frequencies f;
    f.inv_freq = {static_cast<posenc::numeric::wide>(1e300) * static_cast<posenc::numeric::wide>(1e20)};
    (void)pr::table<double>(f, 0, 4);
  }));
  rows.push_back(expect<non_finite_error>("rotary::fill_table", "inv_freq = 1e320 (Inf in double)", "finite in double", [] {
    pr::frequencies f;
    f.inv_freq = {static_cast<posenc::numeric::wide>(1e300) * static_cast<posenc::numeric::wide>(1e20)};
    std::vector<float> c(4), s(4);
    pr::fill_table<float>(f, 0, 4, c.data(), s.data(), 1);
  }));
  rows.push_back(expect<invalid_argument>("rotary::table", "attention_factor = 1e-40 in float (zero)", "attention_factor",
                                          [] {
                                            auto f = pr::default_frequencies(2);
                                            f.attention_factor = 1e-40;
                                            (void)pr::table<float>(f, 0, 4);
                                          }));
  // an attention factor beyond the work type names the factor, not q
  rows.push_back(expect<invalid_argument>("rotary::apply_inplace", "attention_factor = 1e39 in bf16 (Inf in float)",
                                          "attention_factor", [] {
                                            std::vector<bf16> q(4, bf16(1.0f));
                                            auto f = pr::default_frequencies(2);
                                            f.attention_factor = 1e39;
                                            pr::apply_inplace<bf16>(pr::dense_view<bf16>::contiguous(q.data(), {1, 1, 2, 2}), {}, f);
                                          }));
  rows.push_back(expect<invalid_argument>("rotary::apply_ragged_inplace", "attention_factor = 1e39 in bf16 (Inf in float)",
                                          "attention_factor", [] {
                                            std::vector<bf16> q(4, bf16(1.0f));
                                            const std::vector<int> cu{0, 2};
                                            auto f = pr::default_frequencies(2);
                                            f.attention_factor = 1e39;
                                            pr::apply_ragged_inplace<bf16, int>(pr::ragged_view<bf16>::contiguous(q.data(), {2, 1, 2}),
                                                                                {}, cu, {}, f);
                                          }));
  rows.push_back(expect<invalid_argument>("rotary::validate_apply", "attention_factor = 1e39 in bf16 (Inf in float)",
                                          "attention_factor", [] {
                                            std::vector<bf16> q(4);
                                            auto f = pr::default_frequencies(2);
                                            f.attention_factor = 1e39;
                                            pr::validate_apply<bf16>(pr::dense_view<bf16>::contiguous(q.data(), {1, 1, 2, 2}), {}, f, {},
                                                                     {}, "f");
                                          }));
  // offsets compared as values and differenced once ordered
  rows.push_back(expect<invalid_argument>("alibi::add_bias_ragged", "cu_seqlens_q = {0, 1, INT64_MIN} (offset overflow)",
                                          "length of -9223372036854775809 for sequence 1 in cu_seqlens_q", [] {
                                            std::vector<float> s(2);
                                            const std::vector<std::int64_t> cq{0, 1, i64_min}, ck{0, 1, 2};
                                            pa::add_bias_ragged<float, std::int64_t>(
                                                pa::ragged_scores_view<float>::contiguous(s.data(), {1, 1, 2}), vec{0.5}, cq, ck);
                                          }));
  rows.push_back(expect<invalid_argument>("alibi::add_bias_ragged", "cu_seqlens_k = {0, 1, INT64_MIN} (offset overflow)",
                                          "length of -9223372036854775809 for sequence 1 in cu_seqlens_k", [] {
                                            std::vector<float> s(2);
                                            const std::vector<std::int64_t> cq{0, 1, 1}, ck{0, 1, i64_min};
                                            pa::add_bias_ragged<float, std::int64_t>(
                                                pa::ragged_scores_view<float>::contiguous(s.data(), {1, 1, 2}), vec{0.5}, cq, ck);
                                          }));
  rows.push_back(expect<shape_error>("alibi::add_bias_ragged", "cu_seqlens_k = {0, 2^63} uint64 (offset, huge)",
                                     "9223372036854775808 keys", [] {
                                       std::vector<float> s(2);
                                       const std::vector<std::uint64_t> cq{0, 1}, ck{0, u2_63};
                                       pa::add_bias_ragged<float, std::uint64_t>(
                                           pa::ragged_scores_view<float>::contiguous(s.data(), {1, 1, 2}), vec{0.5}, cq, ck);
                                     }));
  rows.push_back(expect<invalid_argument>("alibi::validate_ragged", "cu_seqlens_q = {0, 1, INT64_MIN} (offset overflow)",
                                          "length of -9223372036854775809 for sequence 1 in cu_seqlens_q", [] {
                                            std::vector<float> s(2);
                                            const std::vector<std::int64_t> cq{0, 1, i64_min}, ck{0, 1, 2};
                                            pa::validate_ragged<float, std::int64_t>(
                                                pa::ragged_scores_view<float>::contiguous(s.data(), {1, 1, 2}), vec{0.5}, cq, ck, {},
                                                "f");
                                          }));
  rows.push_back(expect<invalid_argument>("rotary::apply_ragged_inplace", "cu_seqlens = {0, 2^63, 2} uint64 (offset, huge)",
                                          "cu_seqlens[1] = 9223372036854775808 >", [] {
                                            std::vector<float> q(4);
                                            const std::vector<std::uint64_t> cu{0, u2_63, 2};
                                            pr::apply_ragged_inplace<float, std::uint64_t>(
                                                pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, {},
                                                pr::default_frequencies(2));
                                          }));
  rows.push_back(expect<invalid_argument>("rotary::apply_ragged_inplace", "offsets = {2^63} uint64 (offset, huge)",
                                          "offsets[0] + length: expected <= 2^53, got 9223372036854775808", [] {
                                            std::vector<float> q(4);
                                            const std::vector<std::uint64_t> cu{0, 2}, off{u2_63};
                                            pr::apply_ragged_inplace<float, std::uint64_t>(
                                                pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, off,
                                                pr::default_frequencies(2));
                                          }));
  rows.push_back(expect<invalid_argument>("rotary::validate_apply_ragged", "cu_seqlens = {0, 2^63, 2} uint64 (offset, huge)",
                                          "cu_seqlens[1] = 9223372036854775808 >", [] {
                                            std::vector<float> q(4);
                                            const std::vector<std::uint64_t> cu{0, u2_63, 2};
                                            pr::validate_apply_ragged<float, std::uint64_t>(
                                                pr::ragged_view<float>::contiguous(q.data(), {2, 1, 2}), {}, cu, {},
                                                pr::default_frequencies(2), {}, "f");
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
  add_views_and_readers(rows);
  add_rule_table_and_validators(rows);
  add_registry_gaps(rows);
  add_multiaxis_layouts(rows);
  add_multi_axis(rows);
  add_issue37(rows);
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
  CHECK(rows.size() >= 761);
}

// The registry's n/a:total for the double-word primitives: every input gives a value, NaN/Inf as
// IEEE arithmetic (the limits of e^x and ln x; NaN outside the domain), never undefined behaviour
// (ff_exp converted x / ln 2 to int before: Inf gave NaN and |x| > 1.5e9 was an overflowing cast).
TEST_CASE("census: the double-word primitives are total over NaN, Inf and huge operands") {
  namespace pn = posenc::numeric;
  using W = pn::wide;
  const W winf = std::numeric_limits<W>::infinity();
  for (const W big : {winf, W(1e300), W(20000)}) {
    CHECK(pn::ff_exp(pn::ff<W>{big, 0}).hi == winf);  // e^x overflows every F's range
    CHECK(pn::ff_exp(pn::ff<W>{-big, 0}).hi == 0);
    CHECK(pn::ff_exp(pn::ff<double>{static_cast<double>(big), 0}).hi == inf);
  }
  CHECK(std::isnan(pn::ff_exp(pn::ff<W>{std::numeric_limits<W>::quiet_NaN(), 0}).hi));
  CHECK(pn::ff_log(pn::ff<W>{winf, 0}).hi == winf);
  CHECK(pn::ff_log(pn::ff<W>{0, 0}).hi == -winf);
  CHECK(std::isnan(pn::ff_log(pn::ff<W>{-1, 0}).hi));
  CHECK(!std::isfinite(pn::inverse_power(pn::ff<W>{10000, 0}, 2, 0).hi));  // den = 0
  CHECK(std::isnan(pn::inverse_power(pn::ff<W>{-1, 0}, 2, 4).hi));        // base < 0
  CHECK(pn::two_sum(inf, 1.0).hi == inf);
  double s = 0, c = 0;
  pn::sincos_phase(std::numeric_limits<double>::quiet_NaN(), 0.0, pn::split_frequency(W(1)), 1.0, s, c);
  CHECK((std::isnan(s) && std::isnan(c)));
  pn::sincos_phase(inf, 0.0, pn::split_frequency(W(1)), 1.0, s, c);
  CHECK((std::isnan(s) && std::isnan(c)));
  // a finite value stays exact to the documented ~2^-100 (double pairs): e^1 against the closed form
  CHECK(std::abs(static_cast<double>(pn::ff_exp(pn::ff<W>{1, 0}).hi) - 2.718281828459045) < 1e-15);
}

// The registry's n/a:zero-valid for the ODE, Toeplitz and TUPE entry points: a zero size is
// input with nothing to do, answered with an empty result (not an error, not a crash).
TEST_CASE("census: zero sizes that are valid input give empty results") {
  namespace tz = posenc::toeplitz;
  namespace tp = posenc::tupe;
  const auto B = tz::toeplitz_matrix<double>(3, 2, Eigen::VectorXd::Ones(4));
  const auto Y = tz::multiply(B, Eigen::MatrixXd(2, 0));  // no columns: a 3 x 0 product
  CHECK((Y.rows() == 3 && Y.cols() == 0));
  tp::config c;
  c.d = 12;
  c.heads = 3;
  const auto w = tp::make_attention_parameters<double>(c.d);
  tp::head_stack<double> bias(3, 0), logits;
  const posenc::matrix<double> x(0, 12);
  const auto out = tp::attention_forward<double>(c, w, x, bias);  // an empty sequence
  CHECK((out.rows() == 0 && out.cols() == 12));
  tp::attention_logits<double>(c, x, x, bias, logits);
  CHECK((logits.heads() == 3 && logits.size() == 0));
  tp::masked_softmax(logits, std::span<const bool>());
  // an empty state: every stage sum and the reverse sweep have nothing to do
  auto f = [](double, const vec& y, vec& d) { d.assign(y.size(), 0.0); };
  posenc::ode::explicit_rk<posenc::ode::schemes::rk4, vec> st{vec{}};
  vec y;
  st.step(f, 0.0, y, 0.1);
  CHECK(y.empty());
  vec ybar, kbar;
  std::array<vec, 4> Ybar{};
  posenc::ode::reverse_step<posenc::ode::schemes::rk4, posenc::backend::serial>(ybar, 0.1, Ybar, kbar,
                                                                               [](std::size_t, const vec&, vec&) {});
  CHECK(ybar.empty());
  vec o, a;
  posenc::linear_combination<posenc::backend::serial>(o, 2.0, a);
  CHECK(o.empty());
}

// Cost bounded by the work (issue 37): a call that touches no element returns at once (after its
// cheap checks), and nothing is allocated beyond what the call touches. Each call here hung (a
// loop over batch x positions of a view with zero heads), reserved 512 GiB (std::bad_alloc), or
// allocated a k_max-long ramp (8 TiB: allocation_error) before; it now returns without touching
// the (tiny or null) buffers. No timing: a return is the assertion.
TEST_CASE("census: calls that touch no element return at once and allocate nothing (zero heads, huge positions)") {
  namespace pr = posenc::rotary;
  namespace pa = posenc::alibi;
  constexpr std::size_t t40 = std::size_t{1} << 40, t20 = std::size_t{1} << 20;
  const auto f = pr::default_frequencies(2);
  // dense [2^20, 0 heads, 2^40, 2] (2^52 (chunk, sequence) items before), k absent and k also of zero heads
  const auto q0 = pr::dense_view<float>::contiguous(nullptr, {t20, 0, t40, 2});
  CHECK_NOTHROW(pr::apply_inplace<float>(q0, {}, f));
  CHECK_NOTHROW(pr::apply_inplace<float>(q0, q0, f));
  CHECK_NOTHROW(pr::apply_inplace<Eigen::bfloat16>(pr::dense_view<Eigen::bfloat16>::contiguous(nullptr, {t20, 0, t40, 2}),
                                                  {}, f));
  // explicit positions shared by 2^40 sequences of zero heads (2^40 items before)
  const std::vector<std::int64_t> ids{0, 1, 2, 3};
  CHECK_NOTHROW(pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {t40, 0, 4, 2}), {}, f,
                                         pr::position_ids(ids)));
  // still validated: wrong position count, bad ids
  CHECK_THROWS_AS(pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {t40, 0, 4, 2}), {}, f,
                                           pr::position_ids(std::span<const std::int64_t>(ids).first(3))),
                  shape_error);
  const std::vector<std::int64_t> bad{0, 1, -2, 3};
  CHECK_THROWS_AS(pr::apply_inplace<float>(pr::dense_view<float>::contiguous(nullptr, {t40, 0, 4, 2}), {}, f,
                                           pr::position_ids(bad)),
                  invalid_argument);
  // ragged: 2^40 tokens of zero heads (a 2^34-block reserve, 512 GiB, before)
  const std::vector<std::int64_t> cu{0, static_cast<std::int64_t>(t40)};
  CHECK_NOTHROW(pr::apply_ragged_inplace<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {t40, 0, 2}), {},
                                                              cu, {}, f));
  // and validated first: a cu_seqlens that does not end at the token count is still refused
  const std::vector<std::int64_t> short_cu{0, 5};
  CHECK_THROWS_AS((pr::apply_ragged_inplace<float, std::int64_t>(pr::ragged_view<float>::contiguous(nullptr, {t40, 0, 2}),
                                                                 {}, short_cu, {}, f)),
                  shape_error);
  // ALiBi ragged: k_max = 2^40 but 2 keys (the ramp was k_max long: 8 TiB), and 2^40 query
  // tokens with no keys (a loop over 2^40 empty rows before). The view's data is a small buffer
  // the call must not touch beyond the entries it writes.
  std::vector<float> s(4, 1.0f);
  const std::vector<std::int64_t> cq{0, 1}, ck{0, 2};
  pa::add_bias_ragged<float, std::int64_t>(pa::ragged_scores_view<float>::contiguous(s.data(), {1, 1, t40}), vec{0.5}, cq, ck);
  CHECK(s[0] == 1.0f - 0.5f);  // key 0, query at position 1: -m (1 - 0)
  CHECK(s[1] == 1.0f);         // key 1 at the query's own position: bias 0
  CHECK(s[2] == 1.0f);         // beyond the sequence's 2 keys: untouched
  const std::vector<std::int64_t> cq_all{0, static_cast<std::int64_t>(t40)}, ck_none{0, 0};
  CHECK_NOTHROW(pa::add_bias_ragged<float, std::int64_t>(pa::ragged_scores_view<float>::contiguous(s.data(), {t40, 1, 1}),
                                                         vec{0.5}, cq_all, ck_none));
  CHECK(s[0] == 1.0f - 0.5f);
}

// The registry's n/a:any-length for rotary::rules::{llama3, yarn, longrope}: a length of SIZE_MAX
// is the limit of the formula, not an error. Expected values from the rules' closed forms: llama3
// keeps every frequency whose wavelength is below L0 / high_freq_factor (all of them: omega_k =
// theta^(-2k/d)); yarn interpolates every pair below the correction range (omega_k / factor).
TEST_CASE("census: a rule's length may be any size_t (original_max_position_embeddings = SIZE_MAX)") {
  namespace pr = posenc::rotary;
  pr::rope_context c;
  c.head_dim = 8;
  c.max_position_embeddings = huge;
  pr::rules::llama3 l;
  l.factor = 8;
  l.original_max_position_embeddings = huge;
  pr::rules::yarn y;
  y.factor = 4;
  y.original_max_position_embeddings = huge;
  pr::rules::longrope g;
  g.short_factor = {1, 1, 1, 1};
  g.long_factor = {2, 2, 2, 2};
  g.factor = 2;
  g.original_max_position_embeddings = huge;
  const pr::plan pl(c, l), py(c, y), pg(c, g);
  for (std::size_t k = 0; k < 4; ++k) {
    const double omega = std::pow(10000.0, -static_cast<double>(2 * k) / 8.0);
    // 1e-12 relative: the closed form in double against the rules' exact frequencies
    CHECK(std::abs(static_cast<double>(pl.frequencies().inv_freq[k]) - omega) <= 1e-12 * omega);
    CHECK(std::abs(static_cast<double>(py.frequencies().inv_freq[k]) - omega / 4) <= 1e-12 * omega);
    CHECK(std::isfinite(static_cast<double>(pg.frequencies(huge).inv_freq[k])));
  }
}

// ---------------------------------------------------------------------------------------------
// Coverage by construction: the registry must list every public entry point the headers declare,
// and each kind it marks "row" must have a census row of that kind.
namespace {

constexpr std::array<const char*, 6> kind_names{"zero", "huge", "product", "nonfinite", "buffer", "offset"};

/// The kinds of bad input a census row exercises, read from its argument text (the vocabulary
/// the rows use: "= 0", "(empty)", "2^k", "SIZE_MAX", "a * b", "overflows", "NaN", "Inf",
/// "(null ...)", "(size)", "(count)", "(shape)", "offset", "out of range", "< 0", ...).
std::set<std::string> kinds_of(const std::string& a) {
  auto has = [&](const char* re) { return std::regex_search(a, std::regex(re)); };
  std::set<std::string> k;
  if (has(R"((= 0\b|\(empty|zero|no rows|= 0\)|\b0 heads))")) k.insert("zero");
  if (has(R"((2\^\d|SIZE_MAX|INT64_MAX|INT_MAX|too large|huge|1e300|1e6|1e-300))")) k.insert("huge");
  if (has(R"(( \* |product|overflow|elements))")) k.insert("product");
  if (has(R"((\bNaN\b|\bInf\b|non-finite))")) k.insert("nonfinite");
  if (has(R"((null|\(size\)|\(count|\(length\)|\(shape\)|\(width\)|\(rows\)|short|truncated|missing|\(heads\)))"))
    k.insert("buffer");
  if (has(R"((offset|out of range|position|< 0|negative|= -\d|beyond|first))")) k.insert("offset");
  return k;
}

/// Public entry points of include/posenc (entry name -> header): free functions and class/struct
/// types declared at namespace scope (column 0), outside `detail` namespaces, in the headers of
/// the core library (device/ and adapters/ are components with their own tests; io/detail/ is
/// private). Names are prefixed with their namespace below posenc ("rotary::table").
std::map<std::string, std::string> public_entry_points(const std::filesystem::path& inc) {
  namespace fs = std::filesystem;
  const std::regex ns_open(R"(^namespace ([\w:]+) \{)"), ns_close(R"(^\}  // namespace ([\w:]+))");
  const std::regex fn(
      R"(^(?:template <.*>\s*)?(?:(?:inline|constexpr|static|\[\[nodiscard\]\]|\[\[noreturn\]\]|requires \S+)\s+)*(?:[\w:<>,\*& ]+?|decltype\(auto\))\s+[\*&]?(\w+)\()");
  const std::regex type(R"(^(?:class|struct) (\w+)\b[^;]*$)");
  std::map<std::string, std::string> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(inc))
    if (e.is_regular_file() && e.path().extension() == ".hpp") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const std::string rel = fs::relative(path, inc).generic_string();
    if (rel.rfind("device/", 0) == 0 || rel.rfind("adapters/", 0) == 0 || rel.find("/detail/") != std::string::npos)
      continue;
    std::ifstream in(path);
    std::vector<std::string> ns;
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, ns_open)) {
        ns.push_back(m[1]);
        continue;
      }
      if (std::regex_search(line, m, ns_close)) {
        if (!ns.empty()) ns.pop_back();
        continue;
      }
      if (ns.empty() || line.empty() || std::isspace(static_cast<unsigned char>(line[0]))) continue;
      bool in_detail = false;
      std::string prefix;
      for (const auto& n : ns) {
        std::stringstream parts(n);
        std::string part;
        while (std::getline(parts, part, ':'))
          if (part == "detail") in_detail = true;
          else if (!part.empty() && part != "posenc") prefix += part + "::";
      }
      if (in_detail) continue;
      bool skip = false;
      for (const char* word : {"using", "return", "#", "//", "static_assert"}) skip = skip || line.rfind(word, 0) == 0;
      if (skip) continue;
      if (std::regex_search(line, m, fn) && m[1] != "operator") out.emplace(prefix + std::string(m[1]), rel);
      else if (std::regex_search(line, m, type)) out.emplace(prefix + std::string(m[1]), rel);
    }
  }
  return out;
}

struct registry_entry {
  std::string entry;
  std::array<std::string, 6> status;  // "row", "todo" or "n/a:<reason>"
  std::size_t line = 0;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<registry_entry> read_registry(const std::filesystem::path& p) {
  std::vector<registry_entry> out;
  std::ifstream in(p);
  std::string line;
  for (std::size_t no = 1; std::getline(in, line); ++no) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, '|')) f.push_back(trim(cell));
    registry_entry r;
    r.entry = f.empty() ? "" : f[0];
    r.line = no;
    for (std::size_t k = 0; k < 6; ++k) r.status[k] = k + 1 < f.size() ? f[k + 1] : "";
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

// The extraction itself (issue 37): every declaration form the headers use is found, so a new
// public entry point without a registry line fails the test below. checked::allocate (its
// return type decltype(auto)) was missed before.
TEST_CASE("census: the extraction finds every declaration form of a public entry point, and skips detail") {
  const scratch dir("extract");
  std::filesystem::create_directories(dir.path / "demo");
  scratch::write(dir.path / "demo" / "demo.hpp", R"(namespace posenc::demo {
template <class T>
void apply_new(T x);
[[nodiscard]] inline std::size_t plain_new(int a);
template <class F>
decltype(auto) allocate_like(F&& f) {
template <std::integral I>
  requires(sizeof(I) <= 8)
[[nodiscard]] constexpr std::uint64_t distance_like(I lo, I hi) noexcept {
class busy_like {
struct options_like {
namespace detail {
inline void hidden(int);
}  // namespace detail
}  // namespace posenc::demo
)");
  const auto found = public_entry_points(dir.path);
  for (const char* e : {"demo::apply_new", "demo::plain_new", "demo::allocate_like", "demo::distance_like",
                        "demo::busy_like", "demo::options_like"}) {
    INFO(e);
    CHECK(found.count(e) == 1);
  }
  CHECK(found.count("demo::hidden") == 0);
  CHECK(found.size() == 6);
}

TEST_CASE("census: the registry lists every public entry point, and every applicable kind has a row") {
  const std::filesystem::path src = POSENC_SOURCE_DIR;
  auto found = public_entry_points(src / "include" / "posenc");
  for (auto& [name, header] : public_entry_points(src / "examples" / "figures" / "include" / "posenc_figures"))
    found.emplace(name, "posenc_figures/" + header);
  const auto registry = read_registry(src / "tests" / "core" / "census_registry.txt");
  const auto rows = census();
  // kinds covered per census entry
  std::map<std::string, std::set<std::string>> covered;
  for (const auto& r : rows)
    for (const auto& k : kinds_of(r.argument)) covered[r.entry].insert(k);
  auto covers = [&](const std::string& entry, const std::string& kind) {
    for (const auto& [name, kinds] : covered)
      if ((name == entry || name.rfind(entry + "::", 0) == 0) && kinds.count(kind)) return true;
    return false;
  };
  std::set<std::string> registered;
  std::size_t todo = 0, na = 0, backed = 0;
  for (const auto& r : registry) {
    INFO("census_registry.txt:", r.line, ": ", r.entry);
    CHECK(registered.insert(r.entry).second);  // listed once
    CHECK(found.count(r.entry) == 1);          // still a public entry point
    for (std::size_t k = 0; k < 6; ++k) {
      const std::string& st = r.status[k];
      INFO("kind ", kind_names[k], ": ", st);
      const bool ok = st == "row" || st == "todo" || (st.rfind("n/a:", 0) == 0 && st.size() > 4);
      CHECK(ok);
      if (st == "row") {
        CHECK(covers(r.entry, kind_names[k]));
        ++backed;
      } else if (st == "todo") {
        ++todo;
      } else {
        ++na;
      }
    }
  }
  std::string missing;
  for (const auto& [name, header] : found)
    if (!registered.count(name)) missing += "\n  " + name + " (" + header + ")";
  INFO("public entry points without a census_registry.txt line:", missing);
  CHECK(missing.empty());
  MESSAGE("census registry: ", registry.size(), " entry points, ", backed, " kinds with rows, ", na,
          " not applicable, ", todo, " still to write");
  // Every applicable kind of every entry point has its row: a new entry point comes with its rows
  // (or n/a with a reason); "todo" is kept as a word of the registry for drafts, never as a state.
  CHECK(todo == 0);
  if (const char* out = std::getenv("POSENC_CENSUS_DRAFT")) {
    // A draft registry (row where the census covers the kind, todo elsewhere) to start from.
    std::ofstream o(out);
    for (const auto& [name, header] : found) {
      o << name;
      for (const char* k : kind_names) o << " | " << (covers(name, k) ? "row" : "todo");
      o << "\n";
    }
  }
}
