// doctest entry point for every test executable. The gpu executable (TOPO_GPU_TESTS) exits with 77,
// which ctest reports as skipped, after one clear line when no CUDA device is present.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>

#include "kernels/device.hpp"
#include "kernels/threads.hpp"

namespace topo::testing {
bool is_gpu_suite(int argc, char** argv);
}

int main(int argc, char** argv) {
  topo::prepare_runtime(argv);  // `ctest -j` runs suites side by side: see kernels/threads.hpp
  topo::configure_threads();
  if (topo::testing::is_gpu_suite(argc, argv) && !topo::cuda_available()) {
    std::printf("no CUDA device%s: skipping gpu tests\n",
                topo::built_with_cuda() ? "" : " (this build has no CUDA backend)");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
