#include "kernels/memory.hpp"

#include <sys/resource.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "kernels/cgroup.hpp"
#include "kernels/error.hpp"

namespace topo {
namespace {

// "VmHWM:     123456 kB" in /proc/self/status, or "MemAvailable: ... kB" in /proc/meminfo -> bytes; -1: absent.
std::int64_t kib_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, key.size(), key) == 0 && line.size() > key.size() && line[key.size()] == ':') {
      std::istringstream value(line.substr(key.size() + 1));
      std::int64_t kib = -1;
      if (value >> kib) return kib * 1024;
    }
  return -1;
}

// A cgroup file holding one byte count; -1 when absent or "max" (no limit).
std::int64_t cgroup_bytes(const std::string& path) {
  const std::string text = read_first_line(path);
  if (text.empty() || text == "max") return -1;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() && v >= 0 ? static_cast<std::int64_t>(v) : -1;
}

}  // namespace

std::int64_t peak_rss_bytes() {
  const std::int64_t hwm = kib_field("/proc/self/status", "VmHWM");
  if (hwm >= 0) return hwm;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::int64_t>(usage.ru_maxrss) * 1024;  // Linux: KiB
}

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

std::int64_t rss_bytes() { return std::max<std::int64_t>(0, kib_field("/proc/self/status", "VmRSS")); }

std::int64_t mapped_bytes() { return std::max<std::int64_t>(0, kib_field("/proc/self/status", "VmSize")); }

AvailableMemory available_memory(std::int64_t limit) {
  AvailableMemory a;
  const std::int64_t meminfo = kib_field("/proc/meminfo", "MemAvailable");
  a.bytes = meminfo >= 0 ? meminfo : std::numeric_limits<std::int64_t>::max();
  a.source = meminfo >= 0 ? fmt::format("MemAvailable in /proc/meminfo: {}", format_bytes(double(meminfo)))
                          : "no MemAvailable in /proc/meminfo";
  // v1 reports "no limit" as a huge page-rounded number: anything past the machine's memory is none.
  const std::int64_t total = kib_field("/proc/meminfo", "MemTotal");
  for_each_cgroup_dir("memory", [&](const std::string& dir, bool v2) {
    const std::int64_t max = cgroup_bytes(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    if (max < 0 || (total > 0 && max >= total)) return;
    const std::int64_t used = std::max<std::int64_t>(0, cgroup_bytes(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes")));
    const std::int64_t headroom = std::max<std::int64_t>(0, max - used);
    if (headroom < a.bytes) {
      a.bytes = headroom;
      a.source = fmt::format("cgroup memory limit {} ({}), {} of it in use", format_bytes(double(max)), dir,
                             format_bytes(double(used)));
    }
  });
  // ulimit -v and -d (RLIMIT_AS, RLIMIT_DATA): a mapping past them fails as surely as one past a cgroup's limit,
  // counted against what is mapped (VmSize, VmData), not what is resident.
  struct ProcessLimit {
    int resource;
    const char* status_field;
    const char* what;
  };
  for (const ProcessLimit& l : {ProcessLimit{RLIMIT_AS, "VmSize", "address-space limit (ulimit -v)"},
                                ProcessLimit{RLIMIT_DATA, "VmData", "data limit (ulimit -d)"}}) {
    rlimit r{};
    if (getrlimit(l.resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) continue;
    const std::int64_t mapped = kib_field("/proc/self/status", l.status_field);
    if (mapped < 0) continue;
    const auto cap = static_cast<std::int64_t>(std::min<rlim_t>(r.rlim_cur, std::numeric_limits<std::int64_t>::max()));
    const std::int64_t headroom = std::max<std::int64_t>(0, cap - mapped);
    if (headroom < a.bytes) {
      a.bytes = headroom;
      a.source = fmt::format("{} {}, {} of it mapped", l.what, format_bytes(double(cap)), format_bytes(double(mapped)));
    }
  }
  if (limit > 0) {
    const std::int64_t rss = rss_bytes();
    const std::int64_t headroom = std::max<std::int64_t>(0, limit - rss);
    if (headroom < a.bytes) {
      a.bytes = headroom;
      a.source = fmt::format("--memory-limit {}, {} of it resident", format_bytes(double(limit)), format_bytes(double(rss)));
    }
  }
  return a;
}

std::int64_t parse_byte_size(const std::string& text, const std::string& field) {
  std::size_t used = 0;
  double value = -1;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    value = -1;
  }
  std::string unit = text.substr(std::min(used, text.size()));
  for (char& ch : unit) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  double scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  for (const auto& [prefix, power] : {std::pair{'K', 1}, std::pair{'M', 2}, std::pair{'G', 3}, std::pair{'T', 4}})
    if (unit == std::string(1, prefix) || unit == std::string(1, prefix) + "B" || unit == std::string(1, prefix) + "IB")
      scale = std::pow(1024.0, power);
  TOPO_CHECK(used > 0 && scale > 0 && std::isfinite(value) && value > 0 && value * scale < 9.0e18,
             "invalid config field '{}' = '{}': expected a positive size in bytes, optionally with K, M, G or T "
             "(powers of 1024), e.g. 512M or 8G",
             field, text);
  return static_cast<std::int64_t>(value * scale);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (std::abs(bytes) >= 1024 && u < 4) bytes /= 1024, ++u;
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace topo
