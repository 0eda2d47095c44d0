// doctest entry point of the data-parallel suite, run by ctest as `mpirun --oversubscribe -np 2
// topo_test_mpi` (label mpi; every rank runs every test case, so the collectives pair up). Works with any
// rank count, 1 included.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "kernels/threads.hpp"
#include "tests/mpi/mpi_testing.hpp"

namespace topo::testing {
namespace {
std::unique_ptr<dist::Communicator> g_world;
}
dist::Communicator& world() { return *g_world; }
}  // namespace topo::testing

int main(int argc, char** argv) {
  topo::prepare_runtime(argv);
  topo::configure_threads();  // under mpirun: the node's cores divided by its ranks
  topo::testing::g_world = topo::dist::init_world(&argc, &argv);
  doctest::Context context(argc, argv);
  const int failed = context.run();
  // Every rank must pass: the job's exit status is the worst rank's.
  std::vector<double> failures = {failed != 0 ? 1.0 : 0.0};
  topo::testing::world().allreduce_sum(failures);
  const int status = failures[0] > 0 ? 1 : 0;
  topo::testing::g_world.reset();  // MPI_Finalize
  return status;
}
