#include "tests/support/testing.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace topo::testing {

bool is_gpu_suite(int argc, char** argv) {
  (void)argc;
  const std::string name = std::filesystem::path(argv[0]).filename().string();
  return name == "topo_test_gpu";
}

namespace {
// <tmp>/topo_test_<pid>: one per test process, removed when the process exits normally.
const std::filesystem::path& process_temp_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("topo_test_" + std::to_string(::getpid()));
    Root() { std::filesystem::create_directories(path); }
    ~Root() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Root root;
  return root.path;
}
}  // namespace

std::filesystem::path fresh_temp_dir(const std::string& name) {
  const std::filesystem::path dir = process_temp_root() / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write_temp_file(const std::string& name, const std::string& bytes) {
  const std::filesystem::path path = process_temp_root() / "files" / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

double closeness(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
                 std::size_t* where) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double err = std::abs(double(a[i]) - double(b[i]));
    const double c = std::isfinite(a[i]) == std::isfinite(b[i]) && (std::isfinite(a[i]) || a[i] == b[i])
                         ? (std::isfinite(a[i]) ? err / (atol + rtol * std::abs(double(b[i]))) : 0.0)
                         : INFINITY;
    if (!(c <= worst)) {  // also catches NaN
      worst = std::isnan(c) ? INFINITY : c;
      if (where) *where = i;
    }
  }
  return worst;
}

std::string shared_data_path(const std::string& relative) {
  const std::filesystem::path path = std::filesystem::path(TOPO_SHARED_DATA) / relative;
  if (std::filesystem::exists(path)) return path.string();
  // Thrown, not skipped: a test that needs the data and cannot read it has not passed, whoever runs it.
  fail("data set missing: {} (the tests read ../shared/data beside the checkout; see its README)", path.string());
}

}  // namespace topo::testing
