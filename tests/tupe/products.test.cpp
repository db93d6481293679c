// SPDX-License-Identifier: MIT
// The forward pass's products (the two projections and the per-head scores) against long-double
// products of the same LayerNorm output, entry by entry, within the componentwise error bound of
// a k-term dot product, |fl(a.b) - a.b| <= k eps |a|.|b|. Compiled twice: into posenc_tests_tupe
// (Eigen's own GEMM) and, with -DPOSENC_WITH_BLAS=ON, into posenc_tests_tupe_blas
// (EIGEN_USE_BLAS: the products run in the BLAS). Both routes meet the same bound against the
// same reference, so they agree with each other to twice that bound. Threads and head tiles
// (which change how the work is split, not what each entry sums) are covered as well.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "tupe/naive_reference.hpp"

using namespace posenc::tupe;
using tupe_test::ld;

namespace {

/// The projections of rows x (long double, exact up to long double rounding) and the sums of
/// absolute products that bound their rounding: q = s (x Wq^T + bq), |q| <= s (|x| |Wq|^T + |bq|).
struct projected {
  std::vector<std::vector<ld>> q, k, qa, ka;
};

template <class T>
projected project_ld(const config& cfg, const parameters<T>& p, const posenc::table<T>& x) {
  const Index rows = x.rows(), d = cfg.d;
  const ld s = static_cast<ld>(static_cast<T>(cfg.scaling()));  // the library scales by s rounded to T
  projected r;
  r.q.assign(rows, std::vector<ld>(d));
  r.k = r.qa = r.ka = r.q;
  for (Index i = 0; i < rows; ++i)
    for (Index o = 0; o < d; ++o) {
      ld q = p.pos_q_bias.size() ? ld(p.pos_q_bias[o]) : 0, k = p.pos_k_bias.size() ? ld(p.pos_k_bias[o]) : 0;
      ld qa = std::abs(q), ka = std::abs(k);
      for (Index c = 0; c < d; ++c) {
        q += ld(x(i, c)) * ld(p.pos_q_weight(o, c));
        k += ld(x(i, c)) * ld(p.pos_k_weight(o, c));
        qa += std::abs(ld(x(i, c)) * ld(p.pos_q_weight(o, c)));
        ka += std::abs(ld(x(i, c)) * ld(p.pos_k_weight(o, c)));
      }
      r.q[i][o] = s * q;
      r.k[i][o] = k;
      r.qa[i][o] = s * qa;
      r.ka[i][o] = ka;
    }
  return r;
}

/// Largest |got - want| / bound over every entry of the term (must be <= 1), with
/// want = q_a . k_b (+ the relative bias) for the rows a, b the entry reads and
///   bound = eps [ (dh + 2) |q_a|.|k_b| + (d + 3) (qa_a.|k_b| + |q_a|.ka_b) + |want| + |rel| ]:
/// the dh-term score sum, the (d + 1)-term projections with their bias and the scale, and the one
/// addition of the relative term, each bounded by (terms + 1) eps |.|.|.| (eps = 2u: a factor 2
/// of headroom over the first-order bound k u).
template <class T>
double worst_ratio(const config& cfg, const parameters<T>& p, Index n, const head_stack<T>& got) {
  workspace<T> ws;
  posenc::tupe::detail::layer_norm(cfg, p, p.pos, cfg.rows_needed(n), ws);
  const projected pr = project_ld(cfg, p, ws.x);
  const Index H = cfg.heads, dh = cfg.head_dim(), d = cfg.d;
  const ld eps = std::numeric_limits<T>::epsilon();
  const int nb = cfg.buckets.num_buckets;
  double worst = 0;
  for (Index h = 0; h < H; ++h)
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < n; ++j) {
        // reference reset: row 0 is theta1 (position row 0 with itself), column 0 theta2 (row 1)
        Index a = i + 1, b = j + 1;
        int bucket = posenc::tupe::detail::bucket_unchecked(static_cast<std::int64_t>(j - i), cfg.buckets);
        if (i == 0) a = b = 0, bucket = nb / 2;
        else if (j == 0) a = b = 1, bucket = nb;
        ld want = 0, prod = 0, proj = 0;
        for (Index t = h * dh; t < (h + 1) * dh; ++t) {
          want += pr.q[a][t] * pr.k[b][t];
          prod += std::abs(pr.q[a][t] * pr.k[b][t]);
          proj += pr.qa[a][t] * std::abs(pr.k[b][t]) + std::abs(pr.q[a][t]) * pr.ka[b][t];
        }
        const ld rel = ld(p.relative_attention_bias(bucket, h));
        want += rel;
        const ld bound = eps * (ld(dh + 2) * prod + ld(d + 3) * proj + std::abs(want) + std::abs(rel));
        worst = std::max(worst, static_cast<double>(std::abs(ld(got(h, i, j)) - want) / bound));
      }
  return worst;
}

template <class T>
void check_products() {
  config cfg;  // reference scale, TUPE-R, reference [CLS] reset
  cfg.d = 192;
  cfg.heads = 3;  // d_h = 64 as in BERT-base
  const Index n = 70;
  const auto p = tupe_test::random_parameters<T>(cfg, n, 21);
  for (const std::size_t threads : {std::size_t{1}, std::size_t{2}})
    for (const Index tile : {Index{0}, Index{16}, Index{n}}) {
      cfg.threads = threads;
      head_stack<T> out;
      workspace<T> ws;
      ws.tile_rows = tile;
      positional_bias(cfg, p, p.pos, n, out, ws);
      INFO("threads " << threads << " tile rows " << tile);
      const double r = worst_ratio(cfg, p, n, out);
      MESSAGE("worst |error| / bound = " << r);
      CHECK(r <= 1.0);
      CHECK(r > 0.0);  // the comparison is not vacuous: some entry rounds
    }
}

}  // namespace

TEST_CASE("tupe forward products meet the k eps |a||b| bound in double (every thread count and tile)") {
  check_products<double>();
}

TEST_CASE("tupe forward products meet the k eps |a||b| bound in float (every thread count and tile)") {
  check_products<float>();
}

TEST_CASE("tupe forward with 3 threads and one-row tiles writes every entry and agrees with one thread") {
#if defined(EIGEN_USE_BLAS)
  MESSAGE("products route: the BLAS (EIGEN_USE_BLAS)");
#else
  MESSAGE("products route: Eigen's own header-only GEMM");
#endif
  // Every output entry is written (the NaN fill must be gone) and the values agree with one
  // thread and whole heads to 1e-12 relative: a few ulps of double, since the projections split
  // by output columns may be blocked differently inside the GEMM.
  config cfg;
  cfg.d = 96;
  cfg.heads = 3;
  const Index n = 45;
  const auto p = tupe_test::random_parameters<double>(cfg, n, 5);
  workspace<double> ws1, ws2;
  head_stack<double> a, b(cfg.heads, n);
  b.flat().setConstant(std::numeric_limits<double>::quiet_NaN());
  positional_bias(cfg, p, p.pos, n, a, ws1);
  cfg.threads = 3;
  ws2.tile_rows = 1;
  positional_bias(cfg, p, p.pos, n, b, ws2);
  CHECK(b.flat().allFinite());
  CHECK((a.flat() - b.flat()).cwiseAbs().maxCoeff() <= 1e-12 * a.flat().cwiseAbs().maxCoeff());
}
