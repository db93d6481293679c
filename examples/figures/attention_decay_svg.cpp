// SPDX-License-Identifier: MIT
// The figure of docs/attention-bias.md: how ALiBi and xPos make attention decay with distance,
// computed through the library and written as attention_decay.svg in the working directory.
//  - left: ALiBi's bias -m_h (i - j) added to the score of a key d = i - j positions back, for
//    heads 1, 2, 4 and 8 of an 8-head model (alibi::bias_table);
//  - right: xPos's factor zeta_k^(d / 512) on the score of pair k (head_dim 128: pairs 0, 16, 32,
//    63), measured as <q_m, k_n> of unit vectors put through rotary::apply_inplace with xPos on and
//    the rotation switched off (inv_freq = 0), so only the decay remains.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <posenc/alibi.hpp>
#include <posenc/rotary.hpp>

namespace {
constexpr int W = 360, H = 260, L = 60, T = 30, PW = 270, PH = 190;  // panel size and plot box
const char* colours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a"};

std::string panel(double x0, const std::string& title, const std::string& ylabel, double ymin, double ymax,
                  const std::vector<std::vector<double>>& series, const std::vector<std::string>& names, int dmax,
                  int legend_x, int legend_y) {
  char buf[512];
  std::string s = "<g transform=\"translate(" + std::to_string(x0) + ",0)\">\n";
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#444\"/>\n"
                "<text x=\"%d\" y=\"18\" font-size=\"13\" text-anchor=\"middle\">%s</text>\n"
                "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">distance i - j (positions)</text>\n"
                "<text x=\"14\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 14 %d)\">%s</text>\n",
                L, T, PW, PH, L + PW / 2, title.c_str(), L + PW / 2, T + PH + 32, T + PH / 2, T + PH / 2, ylabel.c_str());
  s += buf;
  for (int t = 0; t <= 4; ++t) {  // ticks
    const double yv = ymin + (ymax - ymin) * t / 4, xv = dmax * t / 4.0;
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%g</text>\n"
                  "<text x=\"%.1f\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%g</text>\n",
                  L - 4, T + PH - PH * t / 4.0 + 3, yv, L + PW * t / 4.0, T + PH + 14, xv);
    s += buf;
  }
  for (std::size_t c = 0; c < series.size(); ++c) {
    s += "<polyline fill=\"none\" stroke-width=\"1.8\" stroke=\"" + std::string(colours[c]) + "\" points=\"";
    for (std::size_t d = 0; d < series[c].size(); ++d) {
      std::snprintf(buf, sizeof buf, "%.1f,%.1f ", L + PW * static_cast<double>(d) / dmax,
                    T + PH - PH * (series[c][d] - ymin) / (ymax - ymin));
      s += buf;
    }
    std::snprintf(buf, sizeof buf, "\"/>\n<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"%s\">%s</text>\n", legend_x,
                  legend_y + 13 * static_cast<int>(c), colours[c], names[c].c_str());
    s += buf;
  }
  return s + "</g>\n";
}
}  // namespace

int main() {
  const int dmax = 64, xmax = 4096;
  // ALiBi: row dmax of a [heads, dmax + 1, dmax + 1] table; column j is d = dmax - j back
  const auto m = posenc::alibi::slopes(8);
  const auto tab = posenc::alibi::bias_table<double>(m, dmax + 1, dmax + 1);
  std::vector<std::vector<double>> alibi;
  for (std::size_t h : {0u, 1u, 3u, 7u}) {
    alibi.emplace_back();
    for (int d = 0; d <= dmax; ++d) alibi.back().push_back(tab[(h * (dmax + 1) + dmax) * (dmax + 1) + (dmax - d)]);
  }
  // xPos: query at position d, key at position 0, unit vectors on pair k, rotation off
  namespace pr = posenc::rotary;
  pr::frequencies f;
  f.inv_freq.assign(64, 0.0L);
  pr::apply_options o;
  o.xpos.enabled = true;
  std::vector<std::vector<double>> xpos;
  for (std::size_t k : {0u, 16u, 32u, 63u}) {
    xpos.emplace_back();
    for (int d = 0; d <= xmax; d += 64) {
      std::vector<double> q(128, 0.0), kk(128, 0.0);
      q[2 * k] = kk[2 * k] = 1.0;
      const std::vector<std::int64_t> pq{d}, pk{0};
      pr::apply_inplace<double>(pr::dense_view<double>::contiguous(q.data(), {1, 1, 1, 128}), {}, f, pq, o);
      pr::apply_inplace<double>(pr::dense_view<double>::contiguous(kk.data(), {1, 1, 1, 128}), {}, f, pk, o);
      xpos.back().push_back(q[2 * k] * kk[2 * k]);
    }
  }
  std::FILE* out = std::fopen("attention_decay.svg", "w");
  if (out == nullptr) return 1;
  std::fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n"
                    "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n", 2 * W, H);
  std::fputs(panel(0, "ALiBi bias, 8 heads", "bias added to the score", -32, 0, alibi,
                   {"head 1 (m = 1/2)", "head 2 (m = 1/4)", "head 4 (m = 1/16)", "head 8 (m = 1/256)"}, dmax, L + 8,
                   T + PH - 50).c_str(), out);
  std::fputs(panel(W, "xPos decay, head_dim 128, B = 512", "factor on the score", 0, 1, xpos,
                   {"pair 0", "pair 16", "pair 32", "pair 63"}, xmax, L + PW - 60, T + PH / 2 - 20).c_str(),
             out);
  std::fputs("</svg>\n", out);
  std::fclose(out);
  // checks: ALiBi head 1 at d = 10 is -5; xPos pair 0 at d = 512 is zeta_0 = 0.4 / 1.4
  const double a = alibi[0][10], x = xpos[0][512 / 64];
  std::printf("wrote attention_decay.svg; ALiBi head 1 at d = 10: %g; xPos pair 0 at d = 512: %.15f\n", a, x);
  return a == -5.0 && std::abs(x - 0.4 / 1.4) < 1e-14 ? 0 : 1;
}
