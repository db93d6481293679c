// SPDX-License-Identifier: MIT
// The positional term [H, n, n]: every (h, i, j) entry against the naive long-double
// transcription of the reference code, the [CLS] rows and columns, the cache shared by all
// layers, the invariants (symmetric PSD when U^Q = U^K, Toeplitz relative term) and any table as P.
#include <doctest/doctest.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

#include "tupe/naive_reference.hpp"

using namespace posenc::tupe;
using tupe_test::ld;

namespace {

config small_config(cls_reset cls, bool relative, bucket_spec b = {}) {
  config c;
  c.d = 12;
  c.heads = 3;
  c.cls = cls;
  c.relative = relative;
  c.buckets = b;
  return c;
}

/// max |got - want| / (1 + max |want|) over all entries.
template <class T>
double max_rel_err(const head_stack<T>& got, const tupe_test::dense& want) {
  REQUIRE(got.heads() == want.H);
  REQUIRE(got.size() == want.n);
  ld err = 0, scale = 0;
  for (Index h = 0; h < want.H; ++h)
    for (Index i = 0; i < want.n; ++i)
      for (Index j = 0; j < want.n; ++j) {
        err = std::max(err, std::abs(ld(got(h, i, j)) - want.at(h, i, j)));
        scale = std::max(scale, std::abs(want.at(h, i, j)));
      }
  return static_cast<double>(err / (1 + scale));
}

}  // namespace

TEST_CASE("tupe bias equals the naive reference transcription entry by entry in double") {
  // Tolerance 1e-12 relative: the library runs in double (53 bits) against long double; each
  // entry is a d-term LayerNorm, a d-term projection and a d/H-term product of O(1) values,
  // so the rounding error is a few hundred ulps of double at most.
  for (const cls_reset cls : {cls_reset::reference, cls_reset::free, cls_reset::off})
    for (const bool rel : {true, false})
      for (const bucket_spec b : {bucket_spec{32, 128, true}, bucket_spec{8, 6, true}}) {
        const config cfg = small_config(cls, rel, b);
        const auto p = tupe_test::random_parameters<double>(cfg, 40, 7);
        for (const Index n : {Index{1}, Index{2}, Index{37}, Index{40}}) {
          const auto got = positional_bias(cfg, p, n);
          INFO("cls " << int(cls) << " relative " << rel << " buckets " << b.num_buckets << " n " << n);
          CHECK(max_rel_err(got, tupe_test::naive_bias(cfg, p, p.pos, n)) < 1e-12);
        }
      }
}

TEST_CASE("tupe bias in float equals the naive reference to float accuracy") {
  // float: 24-bit mantissa; the d-term sums of O(1) values lose up to ~d ulps: 2e-5 relative.
  for (const cls_reset cls : {cls_reset::reference, cls_reset::free, cls_reset::off}) {
    const config cfg = small_config(cls, true);
    const auto p = tupe_test::random_parameters<float>(cfg, 33, 11);
    const auto got = positional_bias(cfg, p, 33);
    CHECK(max_rel_err(got, tupe_test::naive_bias(cfg, p, p.pos, 33)) < 2e-5);
  }
}

TEST_CASE("tupe paper scale is the reference scale divided by sqrt(H)") {
  // s_paper / s_ref = sqrt(2 d/H) / sqrt(2 d) = 1/sqrt(H) exactly; without the relative term and
  // the bias on the keys' side only linear in s. Checked against the naive transcription too.
  config ref = small_config(cls_reset::off, false);
  config pap = ref;
  pap.scale = scale_convention::paper;
  const auto p = tupe_test::random_parameters<double>(ref, 20, 3);
  const auto a = positional_bias(ref, p, 20);
  const auto b = positional_bias(pap, p, 20);
  CHECK((b.flat() - a.flat() / std::sqrt(3.0)).cwiseAbs().maxCoeff() < 1e-13 * (1 + a.flat().cwiseAbs().maxCoeff()));
  CHECK(max_rel_err(b, tupe_test::naive_bias(pap, p, p.pos, 20)) < 1e-12);
  CHECK(std::abs(ref.scaling() - 1.0 / std::sqrt(8.0)) < 1e-16);  // d/H = 4
}

TEST_CASE("tupe reference reset: row 0 comes from p0, column 0 from p1, buckets nb/2 and nb") {
  // Perturbation test (exact comparison of untouched entries: same inputs, same operations).
  // Changing row 0 of P changes exactly the [CLS] row; changing row 1 changes exactly column 0
  // below the diagonal corner (token 0's own row and column are both reset, so p1 feeds theta2
  // only); changing relative row nb/2 (nb) shifts row 0 (column 0 minus (0,0)) by the same delta.
  const config cfg = small_config(cls_reset::reference, true);
  const auto p = tupe_test::random_parameters<double>(cfg, 16, 5);
  const Index n = 16;
  const auto base = positional_bias(cfg, p, n);
  auto changed = [&](auto mutate, auto expect_changed) {
    auto q = p;
    mutate(q);
    const auto b = positional_bias(cfg, q, n);
    for (Index h = 0; h < cfg.heads; ++h)
      for (Index i = 0; i < n; ++i)
        for (Index j = 0; j < n; ++j) {
          INFO("h " << h << " i " << i << " j " << j);
          if (expect_changed(i, j))
            CHECK(b(h, i, j) != base(h, i, j));
          else
            CHECK(b(h, i, j) == base(h, i, j));
        }
    return b;
  };
  changed([](auto& q) { q.pos.row(0).array() += 0.5; q.pos(0, 1) -= 1.0; }, [](Index i, Index) { return i == 0; });
  changed([](auto& q) { q.pos(1, 2) += 0.7; }, [](Index i, Index j) { return j == 0 && i >= 1; });
  const auto b16 = changed([](auto& q) { q.relative_attention_bias.row(16).array() += 0.25; },
                           [](Index i, Index) { return i == 0; });
  const auto b32 = changed([](auto& q) { q.relative_attention_bias.row(32).array() += 0.25; },
                           [](Index i, Index j) { return j == 0 && i >= 1; });
  for (Index h = 0; h < cfg.heads; ++h) {
    // row 0 constant = theta1 + b16, column 0 constant = theta2 + b32
    for (Index j = 0; j < n; ++j) CHECK(base(h, 0, j) == base(h, 0, 0));
    for (Index i = 1; i < n; ++i) CHECK(base(h, i, 0) == base(h, 1, 0));
    CHECK(std::abs(b16(h, 0, 3) - base(h, 0, 3) - 0.25) < 1e-14);
    CHECK(std::abs(b32(h, 5, 0) - base(h, 5, 0) - 0.25) < 1e-14);
  }
}

TEST_CASE("tupe free reset writes theta1 on row 0 and theta2 on column 0 exactly") {
  // Paper eq. (9): the reset replaces the whole term (absolute + relative) by the free scalars.
  const config cfg = small_config(cls_reset::free, true);
  const auto p = tupe_test::random_parameters<double>(cfg, 9, 13);
  const auto b = positional_bias(cfg, p, 9);
  for (Index h = 0; h < cfg.heads; ++h) {
    for (Index j = 0; j < 9; ++j) CHECK(b(h, 0, j) == p.theta1[h]);
    for (Index i = 1; i < 9; ++i) CHECK(b(h, i, 0) == p.theta2[h]);
  }
}

TEST_CASE("tupe with U^Q = U^K and no bias each head is symmetric positive semidefinite") {
  // v_h = s X U_h U_h^T X^T is a Gram matrix: symmetric, eigenvalues >= 0. Tolerances: symmetry
  // to 1e-14 relative (the two triangles come from the same products in a different order);
  // eigenvalues >= -1e-12 * largest (eigen-solver backward error).
  config cfg = small_config(cls_reset::off, false);
  auto p = tupe_test::random_parameters<double>(cfg, 30, 17);
  p.pos_k_weight = p.pos_q_weight;
  p.pos_q_bias.resize(0);
  p.pos_k_bias.resize(0);
  const auto b = positional_bias(cfg, p, 30);
  for (Index h = 0; h < cfg.heads; ++h) {
    const Eigen::MatrixXd A = b.head(h);
    const double scale = A.cwiseAbs().maxCoeff();
    CHECK((A - A.transpose()).cwiseAbs().maxCoeff() <= 1e-14 * scale);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(0.5 * (A + A.transpose()));
    CHECK(es.eigenvalues().minCoeff() >= -1e-12 * es.eigenvalues().maxCoeff());
    // rank <= d/H = 4: the fifth-largest eigenvalue is rounding noise
    CHECK(es.eigenvalues()(A.rows() - 5) <= 1e-12 * es.eigenvalues().maxCoeff());
  }
}

TEST_CASE("tupe relative term is Toeplitz before the reset") {
  // With U^Q = 0 and no projection bias the untied term is exactly 0, leaving the relative term:
  // B(i, j) depends on j - i only (exact equality: the same table entry is copied). With the
  // reference reset the core i, j >= 1 stays Toeplitz and row 0 / column 0 are buckets nb/2, nb.
  for (const cls_reset cls : {cls_reset::off, cls_reset::reference}) {
    config cfg = small_config(cls, true, bucket_spec{8, 6, true});
    auto p = tupe_test::random_parameters<double>(cfg, 20, 19);
    p.pos_q_weight.setZero();
    p.pos_q_bias.resize(0);
    p.pos_k_bias.resize(0);
    const auto b = positional_bias(cfg, p, 20);
    const Index c0 = cls == cls_reset::off ? 0 : 1;
    for (Index h = 0; h < cfg.heads; ++h) {
      for (Index i = c0; i + 1 < 20; ++i)
        for (Index j = c0; j + 1 < 20; ++j) CHECK(b(h, i + 1, j + 1) == b(h, i, j));
      for (Index i = c0; i < 20; ++i)
        for (Index j = c0; j < 20; ++j)
          CHECK(b(h, i, j) == p.relative_attention_bias(relative_position_bucket(j - i, cfg.buckets), h));
      if (cls == cls_reset::reference) {
        for (Index j = 0; j < 20; ++j) CHECK(b(h, 0, j) == p.relative_attention_bias(4, h));
        for (Index i = 1; i < 20; ++i) CHECK(b(h, i, 0) == p.relative_attention_bias(8, h));
      }
    }
  }
}

TEST_CASE("tupe cache computes each length once and every layer shares it") {
  // Twelve "layers" ask for the same length: one computation, one object (same address), equal
  // to a fresh computation bit for bit (same code, same inputs).
  const config cfg = small_config(cls_reset::reference, true);
  const auto p = tupe_test::random_parameters<double>(cfg, 24, 23);
  positional_bias_cache<double> cache(cfg, p);
  CHECK(cache.max_length() == 24);
  const auto held = cache.get(20);  // a snapshot: keeps the entry alive
  const head_stack<double>* first = held.get();
  for (int layer = 0; layer < 12; ++layer) CHECK(cache.get(20).get() == first);
  CHECK(cache.computations() == 1);
  const auto fresh = positional_bias(cfg, p, 20);
  CHECK((first->flat() - fresh.flat()).cwiseAbs().maxCoeff() == 0.0);
  // another length: a second computation; the first entry is still valid
  const head_stack<double>& other = *cache.get(24);
  CHECK(cache.computations() == 2);
  CHECK(cache.get(20).get() == first);
  // bias(n) is the leading n x n block of bias(N): LayerNorm is per row and the buckets depend
  // on j - i only (tolerance: the GEMMs block differently for different sizes, 1e-13 relative).
  for (Index h = 0; h < cfg.heads; ++h)
    CHECK((other.head(h).topLeftCorner(20, 20) - first->head(h)).cwiseAbs().maxCoeff() <=
          1e-13 * (1 + first->flat().cwiseAbs().maxCoeff()));
  // new parameters drop the cache
  auto q = p;
  q.pos *= 2.0;
  cache.set_parameters(q);
  (void)cache.get(20);
  CHECK(cache.computations() == 3);
  CHECK(max_rel_err(*cache.get(20), tupe_test::naive_bias(cfg, q, q.pos, 20)) < 1e-12);
}

TEST_CASE("tupe accepts any position table: a sinusoidal table, a block of a longer one, a column-major copy") {
  // Sinusoidal P written from its closed form PE(i, 2k) = sin(i / 10000^(2k/d)), PE(i, 2k+1) =
  // cos(...); the result must match the naive transcription fed the same table, whichever way
  // the table is passed (owning, block view, column-major matrix converted by Eigen::Ref).
  const config cfg = small_config(cls_reset::reference, true);
  const auto p = tupe_test::random_parameters<double>(cfg, 30, 29);
  posenc::table<double> big(50, cfg.d);
  for (Index i = 0; i < 50; ++i)
    for (Index k = 0; k < cfg.d / 2; ++k) {
      const double w = std::pow(10000.0, -2.0 * double(k) / double(cfg.d));
      big(i, 2 * k) = std::sin(double(i) * w);
      big(i, 2 * k + 1) = std::cos(double(i) * w);
    }
  const posenc::table<double> sin_table = big.topRows(31);
  const auto want = tupe_test::naive_bias(cfg, p, sin_table, 30);
  CHECK(max_rel_err(positional_bias(cfg, p, sin_table, 30), want) < 1e-12);
  CHECK(max_rel_err(positional_bias(cfg, p, big.topRows(31), 30), want) < 1e-12);
  const Eigen::MatrixXd colmajor = sin_table;
  CHECK(max_rel_err(positional_bias(cfg, p, colmajor, 30), want) < 1e-12);
  // workspace/out reuse across calls gives the same values
  head_stack<double> out;
  workspace<double> ws;
  positional_bias(cfg, p, sin_table, 30, out, ws);
  positional_bias(cfg, p, p.pos, 12, out, ws);
  CHECK(max_rel_err(out, tupe_test::naive_bias(cfg, p, p.pos, 12)) < 1e-12);
}

TEST_CASE("tupe fused pos_proj weights split into pos_q and pos_k") {
  // pos_proj = Linear(d, 2d), reshaped (L, 2, H, d/H): outputs [0, d) are queries, [d, 2d) keys.
  const config cfg = small_config(cls_reset::reference, false);
  auto p = tupe_test::random_parameters<double>(cfg, 8, 31);
  posenc::matrix<double> fused(2 * cfg.d, cfg.d);
  fused << p.pos_q_weight, p.pos_k_weight;
  posenc::vector<double> fb(2 * cfg.d);
  fb << p.pos_q_bias, p.pos_k_bias;
  auto q = p;
  q.pos_q_weight.setZero();
  q.pos_k_weight.setZero();
  set_fused_projection(q, fused, fb);
  CHECK((positional_bias(cfg, q, 8).flat() - positional_bias(cfg, p, 8).flat()).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("tupe cache shared by concurrent threads computes once") {
  // Four threads ask for the same length at once: the mutex makes them share one computation
  // and one object; the value equals the naive transcription (1e-12 relative, as above).
  const config cfg = small_config(cls_reset::reference, true);
  const auto p = tupe_test::random_parameters<double>(cfg, 32, 37);
  positional_bias_cache<double> cache(cfg, p);
  std::vector<const head_stack<double>*> seen(4, nullptr);
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < 4; ++t) pool.emplace_back([&, t] { seen[t] = cache.get(32).get(); });
  for (auto& th : pool) th.join();
  for (const auto* s : seen) CHECK(s == seen[0]);
  CHECK(cache.computations() == 1);
  CHECK(max_rel_err(*seen[0], tupe_test::naive_bias(cfg, p, p.pos, 32)) < 1e-12);
}
