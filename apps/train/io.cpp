#include "apps/train/io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kernels/error.hpp"

namespace topo::apps {

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / fmt::format(".{}.tmp.XXXXXX", target.filename().string())).string();
  const int fd = ::mkstemp(tmpl.data());
  TOPO_CHECK(fd >= 0, "cannot create a temp file for '{}': {}", path, std::strerror(errno));
  auto give_up = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    ::close(fd);
    ::unlink(tmpl.c_str());
    fail("cannot write '{}' ({}): {}", path, what, reason);
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) give_up("write");
    done += static_cast<std::size_t>(n);
  }
  if (::fchmod(fd, 0644) != 0) give_up("chmod");
  if (::fsync(fd) != 0) give_up("fsync");
  if (::close(fd) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmpl.c_str());
    fail("cannot write '{}' (close): {}", path, reason);
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    ::unlink(tmpl.c_str());
    fail("cannot rename a temp file over '{}': {}", path, reason);
  }
  // The rename itself is durable once the directory is synced; failure here is not worth an error.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void append_json_line(const std::string& path, const nlohmann::json& line) {
  std::ofstream out(path, std::ios::app);
  TOPO_CHECK(out.good(), "cannot open '{}' for appending", path);
  out << line.dump() << '\n';
  out.flush();
  TOPO_CHECK(out.good(), "cannot append to '{}'", path);
}

std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  if (!in.good()) return lines;
  std::string text;
  std::size_t number = 0;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty()) continue;
    try {
      lines.push_back(nlohmann::json::parse(text));
    } catch (const nlohmann::json::exception& e) {
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
