#pragma once
// Shared test helpers: random tensors, the awkward sizes every op is checked at, and closeness checks
// that report the worst element.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/tensor.hpp"
#include "tests/support/random_data.hpp"

namespace topo::testing {

// The sizes DGL and llm.c test at: powers of two and their awkward neighbours.
inline const std::vector<std::int64_t> kAwkwardSizes = {1, 7, 31, 33, 257};

// The device tests/gpu compares against the CPU: the first CUDA device.
inline const Device kGpu = Device::cuda(0);

// random_uniform, random_ids, random_away_from_zero: tests/support/random_data.hpp.

// Largest |a-b| / (atol + rtol*|b|) over all elements; <= 1 means close. `where` gets the worst index.
double closeness(const std::vector<float>& a, const std::vector<float>& b, double atol, double rtol,
                 std::size_t* where = nullptr);

// The topo::Error message `f` throws, or "" when it throws nothing (other exceptions propagate).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Whether `part` occurs in `text` (error messages, files read back).
inline bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

// A fresh, empty directory <tmp>/topo_test_<pid>/<name>; the per-process parent is removed at exit.
std::filesystem::path fresh_temp_dir(const std::string& name);
// Writes `bytes` to a file <name> in the per-process temp directory and returns its path.
std::string write_temp_file(const std::string& name, const std::string& bytes);

// Path inside ../shared/data. A missing data set is a topo::Error naming the path, so the test that needs
// it fails (never a silent pass), in CI and in scripts/test.sh alike.
std::string shared_data_path(const std::string& relative);

}  // namespace topo::testing

// CAPTURE(x) by value. doctest's CAPTURE and INFO are lambdas capturing by reference, and clang before 16
// cannot capture a structured binding (C++20 allows it; scripts/sanitize.sh builds the tests with clang 14):
// for a binding, or any expression, this captures a copy made first.
#define TOPO_CAPTURE(x) TOPO_CAPTURE_AS_(x, DOCTEST_ANONYMOUS(topo_captured_))
#define TOPO_CAPTURE_AS_(x, copy) \
  const auto copy = (x);          \
  INFO(#x " := ", copy)

// CHECK that two float vectors (or tensors, via to_vector) agree within atol + rtol*|expected|.
#define TOPO_CHECK_CLOSE(actual, expected, atol, rtol)                                                             \
  do {                                                                                                             \
    const std::vector<float> topo_a_ = (actual), topo_b_ = (expected);                                             \
    REQUIRE(topo_a_.size() == topo_b_.size());                                                                     \
    std::size_t topo_at_ = 0;                                                                                      \
    const double topo_c_ = ::topo::testing::closeness(topo_a_, topo_b_, (atol), (rtol), &topo_at_);               \
    INFO("worst element " << topo_at_ << ": " << (topo_a_.empty() ? 0.f : topo_a_[topo_at_]) << " vs "           \
                          << (topo_b_.empty() ? 0.f : topo_b_[topo_at_]));                                        \
    CHECK(topo_c_ <= 1.0);                                                                                         \
  } while (0)
