// SPDX-License-Identifier: MIT
// The docs' line charts as SVG, written by the programs of examples/figures: each panel has a
// plot area with its data mapped from data space (linear or log10 axes), ticks and tick labels on
// both axes, axis labels with units, and a legend with one entry per series. Series differ in
// colour, dash pattern and marker, so a curve drawn over another stays visible.
// The structure is what docs/check-site.py reads: <g class="plot"> per panel holding
// <rect class="plot-area">, <g class="series" data-name> per series, <g class="legend-entry"
// data-name> per legend entry and <text class="tick-label"> per tick.
#pragma once

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace figure {

struct axis {
  std::string label;         ///< with its unit, e.g. "distance i - j (positions)"
  double lo = 0, hi = 1;     ///< the range shown
  bool log10 = false;        ///< logarithmic axis: ticks at the powers of ten in [lo, hi]
  std::vector<double> ticks; ///< linear axis: tick values (empty: 5 even steps)
};

struct series {
  std::string name;
  std::vector<double> x, y;
};

struct reference_line {  ///< a horizontal line at y, labelled in the legend
  double y = 0;
  std::string name;
};

struct panel {
  std::string title;
  axis x, y;
  std::vector<series> data;
  std::vector<reference_line> lines{};
  /// Where the legend goes: beside the plot area (legend_x < 0), or inside it with its top-left
  /// corner at these fractions of the plot area's width and height (a corner the data leaves free).
  double legend_x = -1, legend_y = 0;
};

namespace detail {
inline const char* colours[] = {"#000000", "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#8c564b"};
inline const char* dashes[] = {"", "7 3", "2 2", "9 3 2 3", "4 4", "1 3", "12 4", "6 2 2 2 2 2"};

inline std::string fmt(const char* f, auto... a) {
  char buf[512];
  std::snprintf(buf, sizeof buf, f, a...);
  return buf;
}
inline std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) o += c == '<' ? std::string("&lt;") : c == '>' ? std::string("&gt;") : c == '&' ? std::string("&amp;") : std::string(1, c);
  return o;
}
// marker m (of 8 shapes) centred at (x, y)
inline std::string marker(int m, double x, double y, const char* colour) {
  const double r = 3.2;
  switch (m % 8) {
    case 0: return fmt("<circle cx='%.1f' cy='%.1f' r='%.1f' fill='%s'/>", x, y, r, colour);
    case 1: return fmt("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>", x - r, y - r, 2 * r, 2 * r, colour);
    case 2: return fmt("<path d='M%.1f %.1fL%.1f %.1fL%.1f %.1fZ' fill='%s'/>", x, y - r - 1, x + r + 1, y + r, x - r - 1, y + r, colour);
    case 3: return fmt("<path d='M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ' fill='%s'/>", x, y - r - 1, x + r + 1, y, x, y + r + 1, x - r - 1, y, colour);
    case 4: return fmt("<circle cx='%.1f' cy='%.1f' r='%.1f' fill='white' stroke='%s' stroke-width='1.5'/>", x, y, r, colour);
    case 5: return fmt("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='white' stroke='%s' stroke-width='1.5'/>", x - r, y - r, 2 * r, 2 * r, colour);
    case 6: return fmt("<path d='M%.1f %.1fL%.1f %.1fL%.1f %.1fZ' fill='white' stroke='%s' stroke-width='1.5'/>", x, y + r + 1, x + r + 1, y - r, x - r - 1, y - r, colour);
    default: return fmt("<path d='M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f' stroke='%s' stroke-width='2'/>", x - r, y - r, x + r, y + r, x - r, y + r, x + r, y - r, colour);
  }
}
}  // namespace detail

/// The panels side by side, each `pw` x `ph` pixels of plot area, as one SVG document.
inline std::string svg(const std::vector<panel>& panels, int pw = 420, int ph = 260) {
  using detail::fmt;
  const int left = 70, top = 34, bottom = 52, legend_w = 190, gap = 24;
  const bool beside = !panels.empty() && panels[0].legend_x < 0;  // the first panel decides for all
  const int panel_w = left + pw + (beside ? 16 + legend_w : 0) + gap, height = top + ph + bottom;
  std::string s = fmt("<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' viewBox='0 0 %d %d' "
                      "font-family='sans-serif' font-size='12'>\n<rect width='100%%' height='100%%' fill='white'/>\n",
                      panel_w * static_cast<int>(panels.size()), height, panel_w * static_cast<int>(panels.size()), height);
  for (std::size_t pi = 0; pi < panels.size(); ++pi) {
    const panel& p = panels[pi];
    const double x0 = static_cast<double>(pi) * panel_w + left, y0 = top;
    auto map = [](const axis& a, double v, double from, double len, bool flip) {
      const double t = a.log10 ? (std::log10(v) - std::log10(a.lo)) / (std::log10(a.hi) - std::log10(a.lo))
                               : (v - a.lo) / (a.hi - a.lo);
      return flip ? from + len - t * len : from + t * len;
    };
    auto X = [&](double v) { return map(p.x, v, x0, pw, false); };
    auto Y = [&](double v) { return map(p.y, v, y0, ph, true); };
    s += "<g class='plot' data-title='" + detail::escape(p.title) + "'>\n";
    s += fmt("<text x='%.1f' y='%d' font-size='14' text-anchor='middle'>", x0 + pw / 2.0, top - 14) + detail::escape(p.title) + "</text>\n";
    s += fmt("<rect class='plot-area' x='%.1f' y='%.1f' width='%d' height='%d' fill='none' stroke='#333'/>\n", x0, y0, pw, ph);
    // ticks: linear axes at the given values (or 5 steps), log axes at the powers of ten
    auto ticks = [](const axis& a) {
      std::vector<double> t = a.ticks;
      if (a.log10) {
        t.clear();
        for (double e = std::ceil(std::log10(a.lo) - 1e-9); e <= std::log10(a.hi) + 1e-9; e += 1) t.push_back(std::pow(10.0, e));
      } else if (t.empty()) {
        for (int i = 0; i <= 4; ++i) t.push_back(a.lo + (a.hi - a.lo) * i / 4);
      }
      return t;
    };
    auto label = [](const axis& a, double v) {
      if (a.log10) return fmt("10<tspan dy='-5' font-size='9'>%d</tspan>", static_cast<int>(std::lround(std::log10(v))));
      return fmt("%g", v);
    };
    s += "<g class='axis x'>\n";
    for (double t : ticks(p.x))
      s += fmt("<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#333'/><line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
               "<text class='tick-label' x='%.1f' y='%.1f' text-anchor='middle'>",
               X(t), X(t), y0 + ph, y0 + ph + 5, X(t), X(t), y0, y0 + ph - 1, X(t), y0 + ph + 18) + label(p.x, t) + "</text>\n";
    s += fmt("<text class='axis-label' x='%.1f' y='%.1f' text-anchor='middle'>", x0 + pw / 2.0, y0 + ph + 40) + detail::escape(p.x.label) + "</text>\n</g>\n";
    s += "<g class='axis y'>\n";
    for (double t : ticks(p.y))
      s += fmt("<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#333'/><line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#eee'/>"
               "<text class='tick-label' x='%.1f' y='%.1f' text-anchor='end'>",
               x0 - 5, x0, Y(t), Y(t), x0 + 1, x0 + pw, Y(t), Y(t), x0 - 8, Y(t) + 4) + label(p.y, t) + "</text>\n";
    s += fmt("<text class='axis-label' x='%.1f' y='%.1f' text-anchor='middle' transform='rotate(-90 %.1f %.1f)'>",
             x0 - 52, y0 + ph / 2.0, x0 - 52, y0 + ph / 2.0) + detail::escape(p.y.label) + "</text>\n</g>\n";
    // the data
    const bool inside = p.legend_x >= 0;
    const double lx = inside ? x0 + p.legend_x * pw + 6 : x0 + pw + 16, ly0 = inside ? y0 + p.legend_y * ph : y0;
    int entry = 0;
    auto legend_entry = [&](const std::string& name, const char* colour, const char* dash, int m) {
      const double ly = ly0 + 8 + 20.0 * entry++;
      std::string e = "<g class='legend-entry' data-name='" + detail::escape(name) + "'>";
      e += fmt("<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='%s' stroke-width='2' stroke-dasharray='%s'/>", lx, lx + 30,
               ly, ly, colour, dash);
      if (m >= 0) e += detail::marker(m, lx + 15, ly, colour);
      return e + fmt("<text x='%.1f' y='%.1f'>", lx + 36, ly + 4) + detail::escape(name) + "</text></g>\n";
    };
    std::string legend = "<g class='legend'>\n";
    if (inside)  // a white box under the entries, so grid lines do not run through the text
      legend += fmt("<rect x='%.1f' y='%.1f' width='%d' height='%.1f' fill='white' stroke='#bbb'/>\n", lx - 6, ly0 - 4,
                    legend_w - 30, 20.0 * static_cast<double>(p.data.size() + p.lines.size()) + 4);
    for (std::size_t k = 0; k < p.data.size(); ++k) {
      const series& d = p.data[k];
      if (d.x.size() != d.y.size() || d.x.empty()) throw std::invalid_argument("figure::svg: series " + d.name + " has no or unequal x and y");
      const char* colour = detail::colours[k % 8];
      const char* dash = detail::dashes[k % 8];
      s += "<g class='series' data-name='" + detail::escape(d.name) + "'>\n<polyline fill='none' stroke-width='1.8' stroke='" +
           colour + "' stroke-dasharray='" + dash + "' points='";
      for (std::size_t i = 0; i < d.x.size(); ++i) s += fmt("%.2f,%.2f ", X(d.x[i]), Y(d.y[i]));
      s += "'/>\n";
      // markers at 6 points per series, shifted by the series index so equal curves show each one
      const std::size_t n = d.x.size();
      for (int j = 0; j < 6 && n > 1; ++j) {
        const std::size_t i = (n - 1) * (static_cast<std::size_t>(j) * p.data.size() + k) / (6 * p.data.size());
        s += detail::marker(static_cast<int>(k), X(d.x[i]), Y(d.y[i]), colour);
      }
      s += "</g>\n";
      legend += legend_entry(d.name, colour, dash, static_cast<int>(k));
    }
    for (const reference_line& r : p.lines) {
      s += fmt("<line class='reference' x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#888' stroke-dasharray='3 3'/>\n", x0,
               x0 + pw, Y(r.y), Y(r.y));
      legend += legend_entry(r.name, "#888", "3 3", -1);
    }
    s += legend + "</g>\n</g>\n";
  }
  return s + "</svg>\n";
}

/// Writes text to path; false on failure.
inline bool write(const char* path, const std::string& text) {
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace figure
