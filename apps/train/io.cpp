#include "apps/train/io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "kernels/error.hpp"
#include "nn/json_input.hpp"

namespace topo::apps {

void append_json_line(const std::string& path, const nlohmann::json& line) {
  // POSIX calls, so a failure names its errno (a full disk is "No space left on device"). A line cut short
  // here (or by a kill) is the torn tail read_json_lines drops and --resume rewrites.
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  TOPO_CHECK(fd >= 0, "cannot open '{}' for appending: {}", path, std::strerror(errno));
  const std::string text = line.dump() + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      fail("appending to '{}' failed: {}", path, w == 0 ? "no byte written" : std::strerror(err));
    }
    done += static_cast<std::size_t>(w);
  }
  TOPO_CHECK(::close(fd) == 0, "closing '{}' failed: {}", path, std::strerror(errno));
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
      lines.push_back(parse_json_input(text));
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
