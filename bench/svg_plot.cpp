#include "bench/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "kernels/atomic_file.hpp"
#include "kernels/error.hpp"

namespace topo::bench {

void write_log_log_svg(const std::string& path, const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series,
                       const std::vector<XMark>& marks) {
  double x0 = std::numeric_limits<double>::max(), x1 = 0, y0 = x0, y1 = 0;
  for (const Series& s : series)
    for (auto [x, y] : s.points) {
      TOPO_CHECK(x > 0 && y > 0, "plot {}: point ({}, {}) of '{}' is not positive", path, x, y, s.name);
      x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  TOPO_CHECK(x1 > 0, "plot {}: no points", path);
  const double lx0 = std::floor(std::log10(x0)), lx1 = std::ceil(std::log10(x1) + 1e-9);
  const double ly0 = std::floor(std::log10(y0)), ly1 = std::ceil(std::log10(y1) + 1e-9);
  const double W = 720, H = 480, L = 80, R = 200, T = 40, B = 60;
  auto px = [&](double x) { return L + (std::log10(x) - lx0) / std::max(lx1 - lx0, 1.0) * (W - L - R); };
  auto py = [&](double y) { return H - B - (std::log10(y) - ly0) / std::max(ly1 - ly0, 1.0) * (H - T - B); };
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"24\" font-size=\"15\">{}</text>\n",
      W, H, L, title);
  for (double e = lx0; e <= lx1; ++e)
    for (double m : {1.0, 2.0, 5.0}) {
      const double x = m * std::pow(10, e);
      if (x < std::pow(10, lx0) || x > std::pow(10, lx1)) continue;
      svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>"
                         "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4:g}</text>\n",
                         px(x), T, H - B, H - B + 16, x);
    }
  for (double e = ly0; e <= ly1; ++e) {
    const double y = std::pow(10, e);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
                       "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
                       L, py(y), W - R, L - 6, py(y) + 4, y);
  }
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", L, T,
                     W - L - R, H - T - B);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2, H - 16, x_label);
  svg += fmt::format("<text x=\"18\" y=\"{0}\" transform=\"rotate(-90 18 {0})\" text-anchor=\"middle\">{1}</text>\n",
                     (T + H - B) / 2, y_label);
  for (const XMark& m : marks) {
    if (!(m.x >= std::pow(10, lx0) && m.x <= std::pow(10, lx1))) continue;
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#555\" stroke-dasharray=\"5,4\"/>"
                       "<text x=\"{3:.1f}\" y=\"{4}\" font-size=\"11\">{5}</text>\n",
                       px(m.x), T, H - B, px(m.x) + 4, T + 12, m.label);
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* c = colors[i % 6];
    std::string pts;
    for (auto [x, y] : series[i].points) {
      pts += fmt::format("{:.1f},{:.1f} ", px(x), py(y));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", px(x), py(y), c);
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", pts, c);
    svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"2\"/>"
                       "<text x=\"{4}\" y=\"{5}\">{6}</text>\n",
                       W - R + 12, T + 14 + 20 * i, W - R + 36, c, W - R + 42, T + 18 + 20 * i, series[i].name);
  }
  svg += "</svg>\n";
  write_file_atomically(path, svg);
}

}  // namespace topo::bench
