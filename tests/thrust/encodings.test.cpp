// SPDX-License-Identifier: MIT
// The device encodings (posenc/device/*.hpp) against the host implementations on the same
// random inputs: sinusoidal tables (eq. 6 and 7, both layouts and spacings, odd d, positions near
// 2^20), rotary application, T5 buckets, relative bias, the TUPE positional term with every
// [CLS] reset, Toeplitz materialisation and the FLOATER forward pass.
//
// Tolerances (the bounds): f64 1e-12 and f32 1e-6, relative to the largest entry of the
// host result (a normwise relative error: entries near zero make an elementwise relative error
// meaningless). Where device and host compute the same values in a different order (dot products,
// reductions, a 2-level vs 3-level phase table) the differences are a few ulps times the length
// of the sums, well inside these bounds. Bucket indices are compared exactly.
#include <doctest/doctest.h>

#include <posenc/device/encodings.hpp>
#include <posenc/floater/init.hpp>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <type_traits>
#include <vector>

namespace {

template <class T>
constexpr double tol = std::is_same_v<T, double> ? 1e-12 : 1e-6;

template <class A, class B>
double rel_err(const A& got, const B& ref) {
  REQUIRE(got.rows() == ref.rows());
  REQUIRE(got.cols() == ref.cols());
  const double scale = std::max(1e-300, static_cast<double>(ref.cwiseAbs().maxCoeff()));
  return static_cast<double>((got.template cast<double>() - ref.template cast<double>()).cwiseAbs().maxCoeff()) / scale;
}

template <class T>
posenc::table<T> random_table(Eigen::Index r, Eigen::Index c, std::uint64_t seed, double scale = 1.0) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> nd(0.0, scale);
  posenc::table<T> m(r, c);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<T>(nd(gen));
  return m;
}

template <class T>
void check_sinusoidal() {
  namespace hs = posenc::sinusoidal;
  namespace ds = posenc::device::sinusoidal;
  for (auto lay : {hs::layout::interleaved, hs::layout::half})
    for (auto sp : {hs::spacing::two_k_over_d, hs::spacing::k_over_half_minus_one}) {
      hs::options o;
      o.layout = lay;
      o.spacing = sp;
      o.first_position = 3.0;
      o.position_step = 0.75;
      CAPTURE(static_cast<int>(lay));
      CAPTURE(static_cast<int>(sp));
      const auto dev = posenc::to_host(ds::table<T>(777, 64, o));
      CHECK(rel_err(dev, hs::table<T>(777, 64, o)) <= tol<T>);
      // eq. 7 (block 5)
      CHECK(rel_err(posenc::to_host(ds::block_table<T>(100, 64, 5.0, o)), hs::block_table<T>(100, 64, 5.0, o)) <=
            tol<T>);
    }
  // odd d, zero padded (fairseq's rule)
  hs::options odd;
  odd.odd = hs::odd_dimension::zero_pad;
  CHECK(rel_err(posenc::to_host(ds::table<T>(50, 33, odd)), hs::table<T>(50, 33, odd)) <= tol<T>);
  // positions near 2^20 (the host's accuracy claim: no error growth along positions)
  hs::options far;
  far.first_position = 1048576.0 - 300.0;
  CHECK(rel_err(posenc::to_host(ds::table<T>(300, 32, far)), hs::table<T>(300, 32, far)) <= tol<T>);
  // fill() into an existing table, and the row-0 entries of eq. 6 exactly: sin 0 = 0, cos 0 = 1
  posenc::device_table<T> t(40, 16);
  ds::fill(t);
  const auto h = posenc::to_host(t);
  CHECK(rel_err(h, hs::table<T>(40, 16)) <= tol<T>);
  CHECK(h(0, 0) == T(0));
  CHECK(h(0, 1) == T(1));
}

template <class T>
void check_rotary() {
  namespace hr = posenc::rotary;
  for (auto lay : {hr::layout::interleaved, hr::layout::half}) {
    hr::options o;
    o.layout = lay;
    o.head_dim = 16;
    o.rotary_dim = 12;
    o.first_position = 2.0;
    const auto x = random_table<T>(120, 48, 11);
    const auto ref = hr::apply_rotary(x, o);
    auto dx = posenc::to_device(x);
    posenc::device::rotary::apply_rotary_inplace(dx, o);
    CHECK(rel_err(posenc::to_host(dx), ref) <= tol<T>);
    // the copying form leaves its input alone
    const auto dx2 = posenc::to_device(x);
    const auto dy = posenc::device::rotary::apply_rotary(dx2, o);
    CHECK(posenc::to_host(dx2) == x);
    CHECK(rel_err(posenc::to_host(dy), ref) <= tol<T>);
  }
}

template <class T>
void check_tupe() {
  namespace ht = posenc::tupe;
  for (int H : {1, 4})
    for (auto cls : {ht::cls_reset::reference, ht::cls_reset::free, ht::cls_reset::off})
      for (bool relative : {true, false}) {
        ht::config cfg;
        cfg.d = 32;
        cfg.heads = H;
        cfg.cls = cls;
        cfg.relative = relative;
        const Eigen::Index n = 40;
        auto p = ht::make_parameters<T>(cfg, n, 3);
        // non-trivial LayerNorm affine, biases and thetas (the initialiser zeroes them)
        p.pos_ln_weight = random_table<T>(cfg.d, 1, 4, 0.3).col(0).array() + T(1);
        p.pos_ln_bias = random_table<T>(cfg.d, 1, 5, 0.1).col(0);
        p.pos_q_bias = random_table<T>(cfg.d, 1, 6, 0.05).col(0);
        p.pos_k_bias = random_table<T>(cfg.d, 1, 7, 0.05).col(0);
        if (cls == ht::cls_reset::free) {
          p.theta1 = random_table<T>(H, 1, 8).col(0);
          p.theta2 = random_table<T>(H, 1, 9).col(0);
        }
        CAPTURE(H);
        CAPTURE(static_cast<int>(cls));
        CAPTURE(relative);
        const auto ref = ht::positional_bias(cfg, p, n);
        const auto dev = posenc::to_host(posenc::device::tupe::positional_bias(cfg, p, n));
        REQUIRE(dev.heads() == ref.heads());
        REQUIRE(dev.size() == ref.size());
        CHECK(rel_err(dev.flat(), ref.flat()) <= tol<T>);
      }
}

template <class T>
void check_relative_bias() {
  namespace ht = posenc::tupe;
  const Eigen::Index n = 300;  // reaches past max_distance = 128 in both directions
  const ht::bucket_spec spec{};
  const auto rab = random_table<T>(spec.num_buckets + 1, 3, 21);
  const auto dev = posenc::to_host(posenc::device::tupe::relative_bias<T>(n, spec, rab));
  double worst = 0;
  for (Eigen::Index h = 0; h < 3; ++h)
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j)
        worst = std::max(worst, std::abs(static_cast<double>(dev(h, i, j)) -
                                         static_cast<double>(rab(ht::relative_position_bucket(j - i, spec), h))));
  CHECK(worst == 0.0);  // a gather: exact
}

template <class T>
void check_toeplitz() {
  namespace htz = posenc::toeplitz;
  for (auto [m, n] : {std::pair<std::size_t, std::size_t>{17, 17}, {5, 23}, {31, 4}, {1, 1}}) {
    const auto c = random_table<T>(static_cast<Eigen::Index>(m + n - 1), 1, 30 + m).col(0).eval();
    const htz::toeplitz_matrix<T> B(m, n, c);
    const auto dev = posenc::to_host(posenc::device::toeplitz::dense(B));
    CHECK(dev == posenc::table<T>(B.dense()));  // a gather: exact
    const thrust::device_vector<T> dc(c.data(), c.data() + c.size());
    CHECK(posenc::to_host(posenc::device::toeplitz::dense(m, n, dc)) == posenc::table<T>(B.dense()));
  }
}

template <class T>
void check_floater(posenc::floater::activation act, const posenc::floater::options& opt, std::size_t L) {
  namespace hf = posenc::floater;
  const std::size_t d = 8, hidden = 12, N = 3;
  hf::mlp<T> theta(d, hidden, act);
  std::mt19937_64 rng(42);
  hf::init_xavier_normal(theta, rng);
  theta.b1 = random_table<T>(hidden, 1, 43, 0.1).col(0);
  theta.b2 = random_table<T>(d, 1, 44, 0.1).col(0);
  const auto p0 = random_table<T>(N, d, 45, 0.5);
  hf::encoder<T> host(theta, p0, opt);
  host.extend(L);
  const posenc::table<T> ref = host.trajectory();
  const auto dev = posenc::to_host(posenc::device::floater::forward<T>(theta, p0, L, opt));
  CHECK(rel_err(dev, ref) <= tol<T>);
  // row 0 is p0 itself
  CHECK(dev.row(0) == Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>>(p0.data(), p0.size()));
}

}  // namespace

TEST_CASE("device sinusoidal tables match the host f64") { check_sinusoidal<double>(); }
TEST_CASE("device sinusoidal tables match the host f32") { check_sinusoidal<float>(); }

TEST_CASE("device rotary application matches the host") {
  check_rotary<double>();
  check_rotary<float>();
}

TEST_CASE("device T5 bucket matrix equals the host bucket function") {
  namespace ht = posenc::tupe;
  for (const ht::bucket_spec spec : {ht::bucket_spec{}, ht::bucket_spec{32, 128, false}, ht::bucket_spec{8, 20, true},
                                     ht::bucket_spec{64, 256, true}}) {
    const Eigen::Index n = 300;
    const auto dev = posenc::to_host(posenc::device::tupe::bucket_matrix(n, spec));
    int mismatches = 0;
    for (Eigen::Index i = 0; i < n; ++i)
      for (Eigen::Index j = 0; j < n; ++j) mismatches += dev(i, j) != ht::relative_position_bucket(j - i, spec);
    CHECK(mismatches == 0);
  }
}

TEST_CASE("device relative bias gathers the host buckets") {
  check_relative_bias<double>();
  check_relative_bias<float>();
}

TEST_CASE("device TUPE positional term matches the host f64") { check_tupe<double>(); }
TEST_CASE("device TUPE positional term matches the host f32") { check_tupe<float>(); }

TEST_CASE("device Toeplitz materialisation equals the host dense matrix") {
  check_toeplitz<double>();
  check_toeplitz<float>();
}

TEST_CASE("device FLOATER forward matches the host encoder f64") {
  namespace hf = posenc::floater;
  check_floater<double>(hf::activation::relu, hf::reference_options(), 24);
  check_floater<double>(hf::activation::tanh, hf::paper_options(), 12);
  check_floater<double>(hf::activation::gelu, hf::reference_options(), 12);
  hf::options grid;
  grid.times = {0.0, 0.05, 0.07, 0.2, 0.21, 0.5};
  grid.substeps = 3;
  check_floater<double>(hf::activation::softplus, grid, 6);
}

TEST_CASE("device FLOATER forward matches the host encoder f32") {
  namespace hf = posenc::floater;
  check_floater<float>(hf::activation::relu, hf::reference_options(), 24);
  check_floater<float>(hf::activation::identity, hf::paper_options(), 12);
}
