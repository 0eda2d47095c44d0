#pragma once
// Fits on log-log axes, shared by the suites that measure how a cost grows with a size (long: tokens per
// sequence; graph_scale: edges) and draw it with bench/svg_plot.hpp.
#include <cmath>
#include <cstddef>
#include <utility>
#include <vector>

namespace topo::bench {

// Least-squares slope of log y over log x (1: y grows linearly with x); NaN with fewer than two points.
inline double loglog_slope(const std::vector<std::pair<double, double>>& points) {
  if (points.size() < 2) return std::nan("");
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : points) {
    const double x = std::log(p.first), y = std::log(p.second);
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double k = double(points.size());
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

// The x at which a series (x increasing) first reaches y (log-log interpolation between its points); its
// first x when the first point already does, 0 when it never does.
inline double crossing(const std::vector<std::pair<double, double>>& points, double y) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].second < y) continue;
    if (i == 0) return points[0].first;
    const auto [x0, y0] = points[i - 1];
    const auto [x1, y1] = points[i];
    const double f = (std::log(y) - std::log(y0)) / (std::log(y1) - std::log(y0));
    return std::exp(std::log(x0) + f * (std::log(x1) - std::log(x0)));
  }
  return 0;
}

}  // namespace topo::bench
