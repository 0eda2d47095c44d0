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

// A dashed vertical line at x with a label (where a curve leaves a cache level); one outside the axes is left out.
struct XMark {
  double x = 0;
  std::string label;
};

// Writes the plot to `path` atomically (temp file + rename). Throws topo::Error naming the path on failure.
void write_log_log_svg(const std::string& path, const std::string& title, const std::string& x_label,
                       const std::string& y_label, const std::vector<Series>& series,
                       const std::vector<XMark>& marks = {});

}  // namespace topo::bench
