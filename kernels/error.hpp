#pragma once
// topo::Error: the one exception type for bad user input (shapes, devices, ids, files, configs).
// Messages name the offending value: `TOPO_CHECK(a == b, "matmul: inner dims differ: {} vs {}", a, b)`.
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace topo {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <class... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace topo

#define TOPO_CHECK(cond, ...)                   \
  do {                                          \
    if (!(cond)) ::topo::fail(__VA_ARGS__);     \
  } while (0)
