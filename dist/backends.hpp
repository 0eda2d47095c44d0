#pragma once
// Inside dist/: what the backends share (communicator.cpp, mpi_communicator.cpp, nccl_backend.cpp).
// No MPI or NCCL header here, so every file of the library can include it.
#include <functional>
#include <memory>
#include <string>

#include "dist/communicator.hpp"

namespace topo::dist::detail {

// Polls `done` until it returns true: for 100 ms without pause (yielding the core to any other runnable
// thread: MPI advances a non-blocking collective one round per poll, so a pause between polls would add up
// over its rounds), then with a growing sleep (20 us .. 0.5 ms) between polls, so a
// rank that waits for a slow peer (rank 0 evaluating) leaves the core to the processes that work. Throws
// topo::Error naming `what` and `rank` after `timeout_seconds`.
void wait_until(const std::function<bool()>& done, double timeout_seconds, const std::string& what, int rank);

// The MPI world (mpi_communicator.cpp; only in builds with MPI).
std::unique_ptr<Communicator> make_mpi_world(int* argc, char*** argv);

// Collectives on CUDA buffers (nccl_backend.cpp; only in CUDA builds with NCCL). Created by the MPI
// communicator on a rank's first device collective; the NCCL unique id travels through `bootstrap`.
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;
  virtual std::unique_ptr<Request> start_allreduce_sum(Tensor& values) = 0;
  virtual void broadcast(Tensor& values, int root) = 0;
};
std::unique_ptr<DeviceCollectives> make_nccl(Communicator& bootstrap, int device_index);

}  // namespace topo::dist::detail
