#include "apps/train/io.hpp"

#include <cmath>
#include <fstream>

#include "kernels/error.hpp"

namespace topo::apps {

void append_json_line(const std::string& path, const nlohmann::json& line) {
  std::ofstream out(path, std::ios::app);
  TOPO_CHECK(out.good(), "cannot open '{}' for appending", path);
  out << line.dump() << '\n';
  out.flush();
  TOPO_CHECK(out.good(), "cannot append to '{}'", path);
}

std::vector<nlohmann::json> read_json_lines(const std::string& path, bool drop_torn_tail) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path, std::ios::binary);
  if (!in.good()) return lines;
  std::string text;
  std::size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    // getline sets eof only when the last line has no '\n': an append cut short by a kill.
    const bool unterminated = in.eof();
    if (text.empty()) continue;
    try {
      lines.push_back(nlohmann::json::parse(text));
    } catch (const nlohmann::json::exception& e) {
      if (drop_torn_tail && unterminated) break;
      fail("'{}' line {} is not valid JSON: {}", path, number, e.what());
    }
  }
  return lines;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace topo::apps
