#include "kernels/cgroup.hpp"

#include <fstream>
#include <sstream>
#include <vector>

namespace topo {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (in) std::getline(in, line);
  return line;
}

void for_each_cgroup_dir(const std::string& controller, const std::function<void(const std::string& dir, bool v2)>& visit) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "hierarchy-id:controllers:path"; v2 is "0::path", v1 lists its controllers ("cpu,cpuacct").
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    std::vector<std::string> roots;
    if (controllers.empty()) {
      roots = {"/sys/fs/cgroup"};
    } else {
      std::stringstream list(controllers);
      std::string c;
      bool listed = false;
      while (std::getline(list, c, ',')) listed |= c == controller;
      if (!listed) continue;
      roots = {"/sys/fs/cgroup/" + controllers, "/sys/fs/cgroup/" + controller};
    }
    for (const std::string& root : roots)
      for (std::string p = path;; p = p.substr(0, p.rfind('/'))) {
        visit(root + (p == "/" ? "" : p), controllers.empty());
        if (p.empty() || p == "/" || p.find('/') == std::string::npos) break;
      }
  }
}

}  // namespace topo
