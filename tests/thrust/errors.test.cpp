// SPDX-License-Identifier: MIT
// Bad input to the device encodings: the host entry points' validation (same exception types,
// messages naming the device function and the argument), and allocation failures reported as
// posenc::device_error with the size requested.
#include <doctest/doctest.h>

#include <posenc/device/encodings.hpp>

#include "message_of.hpp"

#include <cstddef>
#include <limits>
#include <initializer_list>
#include <string>
#include <typeinfo>
#include <vector>
#include <cmath>

namespace {
using posenc_test::message_of;
bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POSENC_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define POSENC_TEST_ASAN 1
#endif
}  // namespace

TEST_CASE("device sinusoidal rejects what the host rejects") {
  namespace ds = posenc::device::sinusoidal;
  CHECK_THROWS_AS((void)ds::table<double>(10, 7), posenc::invalid_argument);  // odd d without zero_pad
  CHECK_THROWS_AS((void)ds::table<double>(10, 0), posenc::invalid_argument);
  posenc::sinusoidal::options o;
  o.base = -1;
  CHECK_THROWS_AS((void)ds::table<float>(10, 8, o), posenc::invalid_argument);
  o.base = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS((void)ds::table<float>(10, 8, o), posenc::non_finite_error);
  CHECK_THROWS_AS((void)ds::block_table<float>(10, 8, std::numeric_limits<double>::quiet_NaN()),
                  posenc::non_finite_error);
  const auto msg = message_of([] { (void)ds::table<double>(10, 7); });
  CHECK(contains(msg, "device::sinusoidal::table"));
  CHECK(contains(msg, "d: expected an even d"));
}

TEST_CASE("device rotary rejects what the host rejects") {
  posenc::device_table<double> x(4, 12);
  posenc::rotary::options o;
  o.head_dim = 5;  // 12 columns are not a multiple of 5
  CHECK_THROWS_AS(posenc::device::rotary::apply_rotary_inplace(x, o), posenc::shape_error);
  o.head_dim = 6;
  o.rotary_dim = 3;  // odd
  CHECK_THROWS_AS(posenc::device::rotary::apply_rotary_inplace(x, o), posenc::invalid_argument);
}

TEST_CASE("device TUPE rejects what the host rejects") {
  namespace ht = posenc::tupe;
  ht::config cfg;
  cfg.d = 16;
  cfg.heads = 4;
  auto p = ht::make_parameters<double>(cfg, 8, 1);
  CHECK_THROWS_AS((void)posenc::device::tupe::positional_bias(cfg, p, 9), posenc::shape_error);  // 10 rows needed
  CHECK_THROWS_AS((void)posenc::device::tupe::positional_bias(cfg, p, 0), posenc::invalid_argument);
  p.pos(2, 3) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)posenc::device::tupe::positional_bias(cfg, p, 8), posenc::non_finite_error);
  cfg.heads = 5;  // 16 % 5 != 0
  CHECK_THROWS_AS((void)posenc::device::tupe::positional_bias(cfg, p, 8), posenc::invalid_argument);
  CHECK_THROWS_AS((void)posenc::device::tupe::bucket_matrix(10, ht::bucket_spec{3, 128, true}),
                  posenc::invalid_argument);
  CHECK_THROWS_AS((void)posenc::device::tupe::bucket_matrix(0), posenc::invalid_argument);
  const posenc::matrix<double> small = posenc::matrix<double>::Zero(4, 2);  // fewer rows than buckets
  CHECK_THROWS_AS((void)posenc::device::tupe::relative_bias<double>(10, ht::bucket_spec{}, small), posenc::shape_error);
}

TEST_CASE("device Toeplitz rejects what the host rejects") {
  const thrust::device_vector<double> c(5, 1.0);
  CHECK_THROWS_AS((void)posenc::device::toeplitz::dense(3, 4, c), posenc::shape_error);  // needs 6
  CHECK_THROWS_AS((void)posenc::device::toeplitz::dense(0, 6, c), posenc::invalid_argument);
  thrust::host_vector<double> hbad(5, 1.0);
  hbad[2] = std::numeric_limits<double>::infinity();
  const thrust::device_vector<double> bad = hbad;
  CHECK_THROWS_AS((void)posenc::device::toeplitz::dense(3, 3, bad), posenc::non_finite_error);
}

TEST_CASE("device FLOATER rejects what the host rejects") {
  namespace hf = posenc::floater;
  hf::mlp<double> theta(4, 6);
  const posenc::table<double> p0 = posenc::table<double>::Zero(2, 5);  // d = 5 != 4
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, p0, 3), posenc::shape_error);
  const posenc::table<double> ok = posenc::table<double>::Zero(2, 4);
  hf::options o;
  o.substeps = 0;
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, ok, 3, o), posenc::invalid_argument);
  o = {};
  o.times = {0.0, 0.1, 0.1};
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, ok, 3, o), posenc::grid_error);
  theta.b2[1] = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, ok, 3), posenc::non_finite_error);
  // a blow-up is caught at the interval where it happens (dp/dt = 1e3 p with h = 0.2: RK4 grows ~1e39 per interval, overflowing within 20 positions)
  hf::mlp<double> grow(1, 1, hf::activation::identity, false, false);
  grow.w1(0, 0) = 1e3;
  grow.w2(0, 0) = 1;
  const posenc::table<double> one = posenc::table<double>::Ones(1, 1);
  hf::options big;
  big.delta = 1.0;
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(grow, one, 20, big), posenc::non_finite_error);
}

namespace {
/// The error a call throws: its dynamic type and its message without the "posenc: <where>: "
/// prefix (host and device name different functions, the rest must be the same).
struct thrown {
  std::string type, body;
};
template <class F>
thrown error_of(F&& f, std::initializer_list<std::string> wheres) {
  try {
    f();
  } catch (const posenc::error& e) {
    const std::string m = e.what();
    for (const std::string& w : wheres) {
      const std::string prefix = "posenc: " + w + ": ";
      if (m.rfind(prefix, 0) == 0) return {typeid(e).name(), m.substr(prefix.size())};
    }
    return {typeid(e).name(), "<unexpected function name> " + m};
  }
  return {"<nothing thrown>", ""};
}
}  // namespace

TEST_CASE("host encoder and device forward reject the same FLOATER input with the same error") {
  // issue 11: NaN time grid, L beyond the grid, L = 0 and bad threads used to differ in type or
  // acceptance. Both now call floater::detail::check_options / check_initial_state and
  // ode::grid::require_points: same exception type, same message after the function name.
  namespace hf = posenc::floater;
  const hf::mlp<double> theta(3, 4);
  const posenc::table<double> p0 = posenc::table<double>::Zero(2, 3);
  auto compare = [&](const hf::options& o, std::size_t L, const char* what) {
    CAPTURE(what);
    // the host rejects options on construction and L in block_table
    const thrown h = error_of(
        [&] {
          hf::encoder<double> enc(theta, p0, o);
          (void)enc.block_table(0, L);
        },
        {"floater::encoder", "floater::encoder::block_table"});
    const thrown d = error_of([&] { (void)posenc::device::floater::forward<double>(theta, p0, L, o); },
                              {"device::floater::forward"});
    CHECK(h.type != "<nothing thrown>");
    CHECK(h.type == d.type);
    CHECK(h.body == d.body);
  };
  hf::options o;
  o.times = {0.0, std::nan(""), 0.2};
  compare(o, 3, "NaN in the time grid");
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, p0, 3, o), posenc::grid_error);
  o.times = {0.0, 0.1, 0.2};
  compare(o, 4, "L beyond the explicit grid");
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, p0, 4, o), posenc::grid_error);
  compare(hf::options{}, 0, "L = 0");
  // both check L by floater::check_length: above max_extent a size_error, before any allocation
  compare(hf::options{}, posenc::max_extent + 1, "L above max_extent");
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, p0, posenc::max_extent + 1), posenc::size_error);
  CHECK_THROWS_AS((void)posenc::device::floater::forward<double>(theta, p0, 0), posenc::invalid_argument);
  o = {};
  o.threads = posenc::max_threads + 1;
  compare(o, 3, "threads above max_threads");
  o = {};
  o.times = {0.0, 0.2, 0.1};
  compare(o, 3, "decreasing grid");
  o = {};
  o.delta = -1;
  compare(o, 3, "negative delta");
  o = {};
  o.substeps = 0;
  compare(o, 3, "zero substeps");
  // threads = 0 (all hardware threads) is accepted by both, and the tables agree (1e-12: the device
  // sums each dot product in its own order)
  o = {};
  o.threads = 0;
  hf::mlp<double> th(3, 4, hf::activation::tanh);
  th.w1.setConstant(0.3);
  th.w2.setConstant(-0.2);
  th.b1.setConstant(0.1);
  hf::encoder<double> enc(th, p0, o);
  const posenc::table<double> dev = posenc::to_host(posenc::device::floater::forward<double>(th, p0, 5, o));
  enc.extend(5);
  const posenc::matrix<double> traj = enc.trajectory();
  REQUIRE(dev.rows() == traj.rows());
  REQUIRE(dev.cols() == traj.cols());
  CHECK((dev - traj).cwiseAbs().maxCoeff() <= 1e-12);
}

TEST_CASE("device allocation failures are device errors naming the size") {
  // a size whose byte count overflows size_t
  const std::size_t huge = std::numeric_limits<std::size_t>::max() / 4;
  const auto msg = message_of([&] { posenc::device_table<double> t(huge, 2); });
  CHECK(contains(msg, "device_table::resize"));
  CHECK_THROWS_AS(posenc::device_table<double>(huge, 2), posenc::device_error);
#ifndef POSENC_TEST_ASAN  // ASan aborts on allocations above its limit instead of throwing
  // 2^47 bytes (128 TiB): more than any device (or host) has; the allocator throws bad_alloc
  const std::size_t n = std::size_t{1} << 44;
  const auto msg2 = message_of([&] { posenc::device_table<double> t(n, 1); });
  CHECK(contains(msg2, "could not allocate 140737488355328 bytes"));
  CHECK_THROWS_AS(posenc::device_table<double>(n, 1), posenc::device_error);
#endif
}
