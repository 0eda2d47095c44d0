#pragma once
// The processes of one data-parallel job and the collectives the trainer needs from them, behind one small
// interface (issue #18). Backends:
//   - single process: rank 0 of 1, every collective a no-op (a build without MPI, or no launcher);
//   - MPI (OpenMPI from Debian) on host buffers, when launched by mpirun/srun with more than one rank;
//   - NCCL on device buffers in a CUDA build with NCCL: the MPI communicator hands a CUDA tensor's
//     collectives to it (MPI only carries NCCL's unique id). It runs where a device exists.
//
// Rules every caller keeps: all ranks call the collectives in the same order with the same sizes; a
// collective that does not complete within timeout_seconds() (a peer died, hangs or was stopped) throws
// topo::Error naming this rank and the collective; after any topo::Error the caller ends the job with
// abort() — the other ranks would otherwise wait for a collective that never comes.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/tensor.hpp"

namespace topo::dist {

// A collective in flight (start_allreduce_sum). test() progresses it and says whether it completed;
// wait() blocks until it did (throws topo::Error after the communicator's timeout). The buffer must live
// until then; a request dropped unfinished (an error on the way) is left to the job's abort().
class Request {
 public:
  virtual ~Request() = default;
  virtual bool test() = 0;
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // This rank's index among the ranks on its node (selects its GPU), and the ranks on the node.
  virtual int local_rank() const { return rank(); }
  // "single", "mpi" (host buffers) or "mpi+nccl" (device buffers through NCCL).
  virtual std::string backend() const = 0;

  // values (float32, contiguous, host or device) <- the sum of every rank's values, in place. The order of
  // the sum is fixed by the backend's algorithm for a given size and rank count, so a run is reproducible
  // bit for bit and every rank gets the same bits.
  virtual std::unique_ptr<Request> start_allreduce_sum(Tensor& values) = 0;
  void allreduce_sum(Tensor& values) { start_allreduce_sum(values)->wait(); }
  // Host scalars, summed in double precision (loss sums, counts, flags).
  virtual void allreduce_sum(std::vector<double>& values) = 0;
  // values <- root's values (float32 tensors on any device; bytes: receivers are resized to root's size).
  virtual void broadcast(Tensor& values, int root) = 0;
  virtual void broadcast(std::string& bytes, int root) = 0;
  virtual void barrier() = 0;
  // Ends every rank of the job now (MPI_Abort); the single process exits with `exit_code`.
  [[noreturn]] virtual void abort(int exit_code) = 0;

  // How long a collective may wait for the other ranks before it is an error (default 600 s).
  double timeout_seconds() const { return timeout_seconds_; }
  void set_timeout_seconds(double seconds);

  bool is_root() const { return rank() == 0; }

 protected:
  double timeout_seconds_ = 600.0;
};

// The no-op communicator of one process.
std::unique_ptr<Communicator> single_process();

// True when this build has the MPI backend (CMake TOPO_MPI) and, on top of it, NCCL (CUDA builds).
bool built_with_mpi();
bool built_with_nccl();
// The launcher's world size from the environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE, SLURM_NTASKS
// under srun), 0 when no launcher started this process.
int launcher_world_size();

// This process's world: MPI when a launcher started it (even with one rank, so `mpirun -np 1` takes the
// MPI path), the single process otherwise. MPI is initialised here and finalised when the communicator is
// destroyed. Throws topo::Error when a launcher started more than one rank but the build has no MPI.
std::unique_ptr<Communicator> init_world(int* argc, char*** argv);

// JSON through broadcast(bytes): every rank leaves with root's value.
void broadcast_json(Communicator& comm, nlohmann::json& value, int root);

}  // namespace topo::dist
