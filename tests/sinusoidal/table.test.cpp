// SPDX-License-Identifier: MIT
// Sinusoidal tables (eq. 6, both layouts, both spacings, eq. 7) against the entry-by-entry long
// double reference; the large-position accuracy bound; the fill/table_at variants; bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <posenc/sinusoidal.hpp>

#include "sinusoidal/reference.hpp"

namespace ps = posenc::sinusoidal;
using posenc_test::ref_entry;

namespace {
template <class T>
long double max_error(const posenc::table<T>& t, const ps::options& o, std::size_t row_stride_check = 1) {
  long double worst = 0;
  const auto d = static_cast<std::size_t>(t.cols());
  for (Eigen::Index i = 0; i < t.rows(); i += static_cast<Eigen::Index>(row_stride_check)) {
    const long double x = static_cast<long double>(o.first_position) +
                          static_cast<long double>(i) * static_cast<long double>(o.position_step);
    for (std::size_t j = 0; j < d; ++j)
      worst = std::max(worst, std::abs(static_cast<long double>(t(i, static_cast<Eigen::Index>(j))) - ref_entry(x, j, d, o)));
  }
  return worst;
}
}  // namespace

TEST_CASE("eq. 6 table matches the long double reference in every layout and spacing") {
  // Tolerances: float 1e-6 (the bound; rounding alone is 3e-8); double 1e-14 (a few ulp
  // from the three-factor product, plus |x w| 2^-63 from the 64-bit frequency, x < 1000 here).
  for (auto lay : {ps::layout::interleaved, ps::layout::half})
    for (auto sp : {ps::spacing::two_k_over_d, ps::spacing::k_over_half_minus_one})
      for (std::size_t d : {2u, 4u, 6u, 64u, 130u})
        for (double base : {10000.0, 500.0}) {
          ps::options o;
          o.layout = lay;
          o.spacing = sp;
          o.base = base;
          CAPTURE(d);
          CAPTURE(base);
          CHECK(max_error(ps::table<double>(120, d, o), o) < 1e-14L);
          CHECK(max_error(ps::table<float>(120, d, o), o) < 1e-6L);
        }
}

TEST_CASE("first_position and position_step shift and scale the positions") {
  // Same tolerances as above; positions here are below 1e4.
  for (double first : {0.0, 1.0, -7.25, 3000.5})
    for (double step : {1.0, 0.1, -0.5}) {
      ps::options o;
      o.first_position = first;
      o.position_step = step;
      CAPTURE(first);
      CAPTURE(step);
      CHECK(max_error(ps::table<double>(97, 48, o), o) < 1e-13L);
      CHECK(max_error(ps::table<float>(97, 48, o), o) < 1e-6L);
    }
}

TEST_CASE("float table error stays below 1e-6 for positions up to 2^20 and d up to 4096") {
  // The bound. Full 2^20 x 8 table (every 61st row checked, plus the last rows), and
  // windows of the d = 4096 table at random first positions up to 2^20 (same code path: the
  // window start goes into the exact outer phase table). The naive float32 angle i*w is shown
  // to lose > 1e-3 at these positions, so the test does discriminate.
  const std::size_t L = std::size_t{1} << 20;
  {
    ps::options o;
    const auto t = ps::table<float>(L, 8, o);
    CHECK(max_error(t, o, 127) < 1e-6L);
    ps::options tail = o;
    tail.first_position = static_cast<double>(L - 64);
    CHECK(max_error(posenc::table<float>(t.bottomRows(64)), tail) < 1e-6L);
  }
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::uint64_t> pos(0, L - 8);
  long double worst = 0, naive_worst = 0;
  for (int w = 0; w < 4; ++w) {
    ps::options o;
    o.first_position = static_cast<double>(pos(rng));
    for (std::size_t d : {512u, 4096u}) {
      const auto t = ps::table<float>(3, d, o);
      worst = std::max(worst, max_error(t, o));
      // naive: angle formed in float, as many frameworks do
      const auto wf = ps::frequencies<float>(d);
      for (Eigen::Index i = 0; i < 3; ++i)
        for (std::size_t k = 0; k < d / 2; k += 3) {
          const float a = static_cast<float>(o.first_position + static_cast<double>(i)) * wf[static_cast<Eigen::Index>(k)];
          naive_worst = std::max(naive_worst, std::abs(static_cast<long double>(std::sin(a)) -
                                                       ref_entry(o.first_position + static_cast<double>(i), 2 * k, d, o)));
        }
    }
  }
  CHECK(worst < 1e-6L);
  CHECK(naive_worst > 1e-3L);
  // table_at (arbitrary positions) up to 2^20 as well
  std::vector<double> xs;
  for (int i = 0; i < 4; ++i) xs.push_back(static_cast<double>(pos(rng)) + 0.375);
  const auto ta = ps::table_at<float>(xs, 4096);
  long double worst_at = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (std::size_t j = 0; j < 4096; ++j)
      worst_at = std::max(worst_at, std::abs(static_cast<long double>(ta(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j))) -
                                             ref_entry(xs[i], j, 4096, {})));
  CHECK(worst_at < 1e-6L);
}

TEST_CASE("double table at large positions is limited only by the 64-bit frequency") {
  // Tolerance 4e-16 + |x| 2^-60: a few ulp, plus the phase error of w rounded to 64 bits (which
  // the long double reference shares in magnitude, not in sign).
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::uint64_t> pos(0, (std::uint64_t{1} << 20) - 4);
  for (int w = 0; w < 4; ++w) {
    ps::options o;
    o.first_position = static_cast<double>(pos(rng));
    const long double tol = 4e-16L + (o.first_position + 4) * std::ldexp(1.0L, -60);
    CHECK(max_error(ps::table<double>(4, 1024, o), o) < tol);
  }
}

TEST_CASE("half layout is a column permutation of the interleaved layout") {
  // Exact equality: the same products are computed, only stored in other columns.
  ps::options a, b;
  b.layout = ps::layout::half;
  const auto ti = ps::table<double>(100, 20, a), th = ps::table<double>(100, 20, b);
  for (Eigen::Index k = 0; k < 10; ++k) {
    CHECK((ti.col(2 * k) - th.col(k)).cwiseAbs().maxCoeff() == 0.0);
    CHECK((ti.col(2 * k + 1) - th.col(10 + k)).cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("fill writes into caller buffers, blocks and strided rows") {
  // Exact equality with table(): the same computation into different storage.
  const auto ref = ps::table<float>(50, 16);
  posenc::table<float> big = posenc::table<float>::Constant(60, 20, -3.0f);
  ps::fill(big.block(5, 2, 50, 16));
  CHECK((big.block(5, 2, 50, 16) - ref).cwiseAbs().maxCoeff() == 0.0f);
  CHECK((big.topRows(5).array() == -3.0f).all());
  CHECK((big.block(5, 0, 50, 2).array() == -3.0f).all());
  CHECK((big.block(5, 18, 50, 2).array() == -3.0f).all());

  std::vector<double> buf(30 * 24, 9.0);
  ps::fill(buf.data(), 30, 16, 24);
  const auto refd = ps::table<double>(30, 16);
  for (std::size_t i = 0; i < 30; ++i)
    for (std::size_t j = 0; j < 24; ++j) {
      if (j < 16)
        CHECK(buf[i * 24 + j] == refd(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)));
      else
        CHECK(buf[i * 24 + j] == 9.0);
    }
  posenc::table<double> t(30, 16);
  ps::fill(t);
  CHECK((t - refd).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("threads give the same table as the serial path") {
  // Bitwise equality: each row's arithmetic does not depend on how rows are split.
  for (unsigned th : {0u, 2u, 3u}) {
    ps::options o;
    o.threads = th;
    CHECK((ps::table<float>(1000, 64, o) - ps::table<float>(1000, 64)).cwiseAbs().maxCoeff() == 0.0f);
    CHECK((ps::table<double>(7, 64, o) - ps::table<double>(7, 64)).cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("table_at takes any real positions") {
  // Against the long double reference; tolerances as for table().
  const std::vector<double> xs{0.0, -1.0, 0.5, -1234.75, 1e-9, 65535.0, 3.14159};
  for (auto lay : {ps::layout::interleaved, ps::layout::half}) {
    ps::options o;
    o.layout = lay;
    const auto t = ps::table_at<double>(xs, 10, o);
    const auto tf = ps::table_at<float>(xs, 10, o);
    for (std::size_t i = 0; i < xs.size(); ++i)
      for (std::size_t j = 0; j < 10; ++j) {
        CHECK(std::abs(t(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) - ref_entry(xs[i], j, 10, o)) < 1e-14L);
        CHECK(std::abs(tf(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) - ref_entry(xs[i], j, 10, o)) < 1e-6L);
      }
    const auto e = ps::encode<double>(0.5, 10, o);
    CHECK((e.transpose() - t.row(2)).cwiseAbs().maxCoeff() == 0.0);
  }
}

TEST_CASE("odd d is rejected, or zero-padded as fairseq does") {
  CHECK_THROWS_AS(ps::table<double>(4, 7), posenc::invalid_argument);
  ps::options o;
  o.odd = ps::odd_dimension::zero_pad;
  const auto t = ps::table<double>(40, 7, o);
  CHECK(t.cols() == 7);
  CHECK((t.col(6).array() == 0.0).all());
  // the first 6 columns are the d = 6 table... except that the frequencies follow d - 1 = 6
  CHECK((t.leftCols(6) - ps::table<double>(40, 6)).cwiseAbs().maxCoeff() == 0.0);
  CHECK(max_error(t, o) < 1e-14L);
  o.spacing = ps::spacing::k_over_half_minus_one;  // fairseq: half layout, k/(m-1), zero column
  o.layout = ps::layout::half;
  CHECK(max_error(ps::table<float>(40, 9, o), o) < 1e-6L);
}

TEST_CASE("k over (d/2 - 1) spacing spans base^0 to base^-1, and d = 2 uses w_0 = 1") {
  // Exact endpoints up to rounding of exp/log in long double (1e-15 relative).
  ps::options o;
  o.spacing = ps::spacing::k_over_half_minus_one;
  const auto w = ps::frequencies<double>(16, o);
  CHECK(w[0] == doctest::Approx(1.0).epsilon(1e-15));
  CHECK(w[7] == doctest::Approx(1e-4).epsilon(1e-14));
  const auto w2 = ps::frequencies<double>(2, o);
  CHECK(w2.size() == 1);
  CHECK(w2[0] == 1.0);
  const auto v = ps::frequencies<double>(16);
  CHECK(v[7] == doctest::Approx(std::pow(10000.0, -14.0 / 16)).epsilon(1e-14));
}

TEST_CASE("eq. 7 block table is PE(i) + PE(n)") {
  // Against the reference sum; double tolerance 2e-14 (two entries).
  for (double n : {0.0, 1.0, 5.0}) {
    ps::options o;
    const auto t = ps::block_table<double>(64, 12, n, o);
    for (Eigen::Index i = 0; i < 64; ++i)
      for (std::size_t j = 0; j < 12; ++j)
        CHECK(std::abs(t(i, static_cast<Eigen::Index>(j)) - (ref_entry(static_cast<long double>(i), j, 12, o) +
                                                             ref_entry(n, j, 12, o))) < 2e-14L);
  }
}

TEST_CASE("empty tables are fine") {
  CHECK(ps::table<float>(0, 8).rows() == 0);
  CHECK(ps::table_at<double>(std::vector<double>{}, 8).rows() == 0);
  ps::fill(static_cast<float*>(nullptr), 0, 8, 8);
}

TEST_CASE("bad input throws a posenc error that names the argument") {
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const posenc::error& e) {
      return std::string(e.what());
    }
    return std::string("no throw");
  };
  CHECK(message([] { (void)ps::table<float>(4, 0); }).find("d: expected d >= 2") != std::string::npos);
  CHECK(message([] { (void)ps::table<float>(4, 1, {.odd = ps::odd_dimension::zero_pad}); }).find("d >= 2") !=
        std::string::npos);
  CHECK(message([] { (void)ps::table<float>(4, 5); }).find("sinusoidal::table") != std::string::npos);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.base = std::nan("")}), posenc::non_finite_error);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.base = INFINITY}), posenc::non_finite_error);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.base = 0.0}), posenc::invalid_argument);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.base = -2.0}), posenc::invalid_argument);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.first_position = NAN}), posenc::non_finite_error);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.position_step = INFINITY}), posenc::non_finite_error);
  CHECK(message([] { (void)ps::table_at<float>(std::vector<double>{1.0, NAN}, 8); }).find("index 1") !=
        std::string::npos);
  std::vector<float> buf(64);
  CHECK(message([&] { ps::fill(buf.data(), 4, 8, 6); }).find("row_stride") != std::string::npos);
  CHECK(message([] { ps::fill(static_cast<float*>(nullptr), 4, 8, 8); }).find("non-null") != std::string::npos);
  CHECK_THROWS_AS(ps::rotation<double>(NAN, 8), posenc::non_finite_error);
  CHECK_THROWS_AS(ps::block_table<double>(4, 8, INFINITY), posenc::non_finite_error);
  CHECK_THROWS_AS(ps::frequencies<double>(0), posenc::invalid_argument);
  CHECK_THROWS_AS(ps::table<float>(4, 8, {.layout = static_cast<ps::layout>(7)}), posenc::invalid_argument);
}

TEST_CASE("every table length agrees with the per-entry path (block and table-end boundaries)") {
  // table() splits rows into blocks around anchors; table_at() evaluates each entry directly
  // (second method). Lengths 1..200 cover partial blocks at the end. Double: 1e-14 (a few
  // roundings); float: 2e-7 (float rounding of the two products).
  for (std::size_t L = 1; L <= 200; ++L)
    for (std::size_t d : {2u, 3u, 10u})
      for (auto lay : {ps::layout::interleaved, ps::layout::half}) {
        ps::options o;
        o.odd = ps::odd_dimension::zero_pad;
        o.layout = lay;
        o.first_position = 3.5;
        o.position_step = 0.75;
        std::vector<double> xs;
        for (std::size_t i = 0; i < L; ++i) xs.push_back(3.5 + 0.75 * static_cast<double>(i));
        const auto r = ps::table_at<double>(xs, d, o);
        CHECK((ps::table<double>(L, d, o) - r).cwiseAbs().maxCoeff() < 1e-14);
        CHECK((ps::table<float>(L, d, o).cast<double>() - r).cwiseAbs().maxCoeff() < 2e-7);
      }
}

TEST_CASE("float tables are correctly rounded from the exact phase, inside [-1, 1], PE(0) = (0, 1)") {
  // Reference: sinl/cosl of x * w_k formed in long double from the library's own long double
  // frequencies (the exact-phase value). Bound: 0.5 ulp + 2^-20 ulp of each entry (the float
  // rounding decided by an error bound; undecided entries are evaluated directly: <= 2^-28 ulp).
  const auto ulp = [](long double v) {
    int e = 0;
    (void)std::frexp(std::abs(v), &e);
    return std::ldexp(1.0L, std::max(e, -125) - 24);
  };
  long double worst = 0;
  for (auto lay : {ps::layout::interleaved, ps::layout::half})
    for (double first : {0.0, 1000.5, 16777216.0 - 600})
      for (std::size_t d : {64u, 130u, 1024u}) {
        ps::options o;
        o.layout = lay;
        o.first_position = first;
        o.position_step = first == 1000.5 ? 0.25 : 1.0;
        const auto t = ps::table<float>(600, d, o);
        const auto w = ps::frequencies<long double>(d, o);
        for (Eigen::Index i = 0; i < t.rows(); ++i) {
          const long double x = static_cast<long double>(first) + static_cast<long double>(i) * o.position_step;
          for (std::size_t k = 0; k < d / 2; ++k) {
            const auto [js, jc] = ps::detail::columns(k, d / 2, lay);
            const long double th = x * w[static_cast<Eigen::Index>(k)];
            const long double rs = std::sin(th), rc = std::cos(th);
            const long double es = std::abs(t(i, static_cast<Eigen::Index>(js)) - rs) / ulp(rs);
            const long double ec = std::abs(t(i, static_cast<Eigen::Index>(jc)) - rc) / ulp(rc);
            worst = std::max({worst, es, ec});
          }
        }
        CHECK((t.array().abs() <= 1.0f).all());
      }
  MESSAGE("float sinusoidal table: max ", static_cast<double>(worst), " ulp");
  CHECK(worst <= 0.5L + std::ldexp(1.0L, -20));
  const auto t0 = ps::table<float>(1, 512);
  for (Eigen::Index j = 0; j < 512; j += 2) {
    CHECK(t0(0, j) == 0.0f);
    CHECK(t0(0, j + 1) == 1.0f);  // was 1.00000012 with the products taken in float
  }
}
