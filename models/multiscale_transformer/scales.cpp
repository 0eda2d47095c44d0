#include "models/multiscale_transformer/scales.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/error.hpp"

namespace topo::models {

std::string Scale::str() const { return fractional() ? fmt::format("N/{}", divisor) : std::to_string(width); }

std::int64_t Scale::width_for(std::int64_t n) const {
  if (!fractional()) return width;
  const std::int64_t w = std::max<std::int64_t>(1, (n + divisor - 1) / divisor);
  return w % 2 == 1 ? w : w + 1;
}

std::vector<Scale> parse_scales(const std::string& spec) {
  std::vector<Scale> out;
  std::size_t begin = 0;
  while (begin <= spec.size()) {
    const std::size_t end = std::min(spec.find(',', begin), spec.size());
    std::string item = spec.substr(begin, end - begin);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    TOPO_CHECK(!item.empty(), "scales '{}': empty entry (expected e.g. 1,3,N/16,N/8,N/4)", spec);
    Scale s;
    auto parse_int = [&](const std::string& text) {
      std::size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(text, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      TOPO_CHECK(used == text.size() && !text.empty(), "scales '{}': '{}' is not a whole number", spec, text);
      return static_cast<std::int64_t>(v);
    };
    if (item.rfind("N/", 0) == 0) {
      s.divisor = parse_int(item.substr(2));
      TOPO_CHECK(s.divisor > 0, "scales '{}': divisor in '{}' must be positive", spec, item);
    } else {
      s.width = parse_int(item);
      TOPO_CHECK(s.width >= 1 && s.width % 2 == 1, "scales '{}': width {} must be odd and >= 1", spec, s.width);
    }
    for (const Scale& o : out)
      TOPO_CHECK(o.str() != s.str(), "scales '{}': scale {} named twice", spec, s.str());
    out.push_back(s);
    begin = end + 1;
  }
  return out;
}

std::string scales_str(const std::vector<Scale>& scales) {
  std::vector<std::string> parts;
  for (const Scale& s : scales) parts.push_back(s.str());
  return fmt::format("{}", fmt::join(parts, ","));
}

std::vector<std::vector<std::int64_t>> head_distribution(double alpha, std::int64_t layers, std::int64_t num_scales,
                                                         std::int64_t heads) {
  TOPO_CHECK(layers >= 1 && num_scales >= 1 && heads >= 1,
             "head_distribution: layers ({}), scales ({}) and heads ({}) must be >= 1", layers, num_scales, heads);
  TOPO_CHECK(std::isfinite(alpha), "head_distribution: alpha must be finite");
  std::vector<std::vector<std::int64_t>> out;
  for (std::int64_t l = 1; l <= layers; ++l) {
    std::vector<double> z(static_cast<std::size_t>(num_scales));
    for (std::int64_t k = 0; k < num_scales; ++k)
      z[static_cast<std::size_t>(k)] = alpha * static_cast<double>(layers - l) * static_cast<double>(num_scales - 1 - k);
    const double top = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (double& v : z) sum += (v = std::exp(v - top));
    std::vector<std::int64_t> counts(static_cast<std::size_t>(num_scales));
    std::vector<double> remainder(static_cast<std::size_t>(num_scales));
    std::int64_t given = 0;
    for (std::size_t k = 0; k < z.size(); ++k) {
      const double share = z[k] / sum * static_cast<double>(heads);
      counts[k] = static_cast<std::int64_t>(std::floor(share));
      remainder[k] = share - static_cast<double>(counts[k]);
      given += counts[k];
    }
    std::vector<std::size_t> order(z.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return remainder[a] > remainder[b]; });
    for (std::size_t i = 0; given < heads; ++i, ++given) ++counts[order[i % order.size()]];
    out.push_back(std::move(counts));
  }
  return out;
}

}  // namespace topo::models
