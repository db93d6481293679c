// SPDX-License-Identifier: MIT
// The figure of docs/attention-bias.md: how ALiBi and xPos make attention decay with distance,
// computed through the library and written as attention-decay.svg in the working directory.
//  - left: ALiBi's bias -m_h (i - j) added to the score of a key d = i - j positions back, for
//    heads 1, 2, 4 and 8 of an 8-head model (alibi::bias_table);
//  - right: xPos's factor zeta_k^(d / 512) on the score of pair k (head_dim 128: pairs 0, 16, 32,
//    63), measured as <q_m, k_n> of unit vectors put through rotary::apply_inplace with xPos on and
//    the rotation switched off (inv_freq = 0), so only the decay remains.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <posenc/alibi.hpp>
#include <posenc/rotary.hpp>

#include "svg_plot.hpp"

int main() {
  const int dmax = 64, xmax = 4096;
  // ALiBi: row dmax of a [heads, dmax + 1, dmax + 1] table; column j is d = dmax - j back
  const auto m = posenc::alibi::slopes(8);
  const auto tab = posenc::alibi::bias_table<double>(m, dmax + 1, dmax + 1);
  figure::panel a{"ALiBi bias, 8 heads", {"distance i - j (positions)", 0, dmax, false, {0, 16, 32, 48, 64}},
                  {"bias added to the score", -32, 0, false, {-32, -24, -16, -8, 0}}, {}, {}, 0.02, 0.6};
  const char* heads[] = {"head 1 (m = 1/2)", "head 2 (m = 1/4)", "head 4 (m = 1/16)", "head 8 (m = 1/256)"};
  int c = 0;
  for (std::size_t h : {0u, 1u, 3u, 7u}) {
    figure::series s{heads[c++], {}, {}};
    for (int d = 0; d <= dmax; ++d) {
      s.x.push_back(d);
      s.y.push_back(tab[(h * (dmax + 1) + dmax) * (dmax + 1) + static_cast<std::size_t>(dmax - d)]);
    }
    a.data.push_back(std::move(s));
  }
  // xPos: query at position d, key at position 0, unit vectors on pair k, rotation off
  namespace pr = posenc::rotary;
  pr::frequencies f;
  f.inv_freq.assign(64, 0.0L);
  pr::apply_options o;
  o.xpos.enabled = true;
  figure::panel x{"xPos decay, head_dim 128, scale base 512", {"distance i - j (positions)", 0, xmax, false, {0, 1024, 2048, 3072, 4096}},
                  {"factor on the score", 0, 1, false, {0, 0.25, 0.5, 0.75, 1}}, {}, {}, 0.5, 0.22};
  for (std::size_t k : {0u, 16u, 32u, 63u}) {
    figure::series s{"pair " + std::to_string(k), {}, {}};
    for (int d = 0; d <= xmax; d += 64) {
      std::vector<double> q(128, 0.0), kk(128, 0.0);
      q[2 * k] = kk[2 * k] = 1.0;
      const std::vector<std::int64_t> pq{d}, pk{0};
      pr::apply_inplace<double>(pr::dense_view<double>::contiguous(q.data(), {1, 1, 1, 128}), {}, f, pq, o);
      pr::apply_inplace<double>(pr::dense_view<double>::contiguous(kk.data(), {1, 1, 1, 128}), {}, f, pk, o);
      s.x.push_back(d);
      s.y.push_back(q[2 * k] * kk[2 * k]);
    }
    x.data.push_back(std::move(s));
  }
  if (!figure::write("attention-decay.svg", figure::svg({a, x}, 330, 240))) return 1;
  // checks: ALiBi head 1 at d = 10 is -5; xPos pair 0 at d = 512 is zeta_0 = 0.4 / 1.4
  const double av = a.data[0].y[10], xv = x.data[0].y[512 / 64];
  std::printf("wrote attention-decay.svg; ALiBi head 1 at d = 10: %g; xPos pair 0 at d = 512: %.15f\n", av, xv);
  return av == -5.0 && std::abs(xv - 0.4 / 1.4) < 1e-14 ? 0 : 1;
}
