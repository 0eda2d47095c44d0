#pragma once
// A minimal line plot written as SVG (no plotting package needed): log-scale axes, one polyline per series.
#include <string>
#include <utility>
#include <vector>

namespace topo::bench {

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), both > 0 (log axes)
};

// Writes the plot to `path` atomically (temp file + rename). Throws topo::Error naming the path on failure.
void write_log_log_svg(const std::string& path, const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series);

}  // namespace topo::bench
