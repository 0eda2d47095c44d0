#include "dist/communicator.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "dist/backends.hpp"
#include "kernels/error.hpp"

namespace topo::dist {
namespace {

// One process: every rank-local value is already the sum, the broadcast and the barrier have nobody to wait for.
class SingleProcess final : public Communicator {
 public:
  using Communicator::allreduce_sum;  // the blocking Tensor form
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend() const override { return "single"; }
  std::unique_ptr<Request> start_allreduce_sum(Tensor& values) override {
    check_dtype(values, DType::F32, "allreduce_sum", "values");
    struct Done final : Request {
      bool test() override { return true; }
      void wait() override {}
    };
    return std::make_unique<Done>();
  }
  void allreduce_sum(std::vector<double>&) override {}
  void broadcast(Tensor&, int root) override { check_root(root); }
  void broadcast(std::string&, int root) override { check_root(root); }
  void barrier() override {}
  [[noreturn]] void abort(int exit_code) override { std::exit(exit_code); }

 private:
  static void check_root(int root) { TOPO_CHECK(root == 0, "broadcast: root {} outside the 1 rank of this job", root); }
};

int positive_env(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end != v && *end == '\0' && n > 0 && n < (1L << 30) ? static_cast<int>(n) : 0;
}

}  // namespace

void Communicator::set_timeout_seconds(double seconds) {
  TOPO_CHECK(seconds > 0, "collective timeout must be positive, got {} s", seconds);
  timeout_seconds_ = seconds;
}

std::unique_ptr<Communicator> single_process() { return std::make_unique<SingleProcess>(); }

bool built_with_mpi() { return TOPO_WITH_MPI != 0; }
bool built_with_nccl() { return TOPO_WITH_NCCL != 0; }

int launcher_world_size() {
  // OpenMPI, MPICH/Hydra (PMI), PMIx launchers, and srun (whose tasks may also carry PMI_SIZE).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS"})
    if (const int n = positive_env(name)) return n;
  return 0;
}

std::unique_ptr<Communicator> init_world(int* argc, char*** argv) {
  const int launched = launcher_world_size();
  if (launched == 0) return single_process();
#if TOPO_WITH_MPI
  return detail::make_mpi_world(argc, argv);
#else
  (void)argc;
  (void)argv;
  TOPO_CHECK(launched == 1,
             "a launcher started {} ranks, but this build has no MPI backend (configure with -DTOPO_MPI=ON after "
             "scripts/setup.sh installed libopenmpi-dev); each rank would train alone",
             launched);
  return single_process();
#endif
}

void broadcast_json(Communicator& comm, nlohmann::json& value, int root) {
  if (comm.size() == 1) return;
  std::string bytes = comm.rank() == root ? value.dump() : std::string();
  comm.broadcast(bytes, root);
  if (comm.rank() != root) value = nlohmann::json::parse(bytes);
}

namespace detail {

void wait_until(const std::function<bool()>& done, double timeout_seconds, const std::string& what, int rank) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto spin_until = start + std::chrono::milliseconds(100);
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  auto pause = std::chrono::microseconds(20);
  while (!done()) {
    const auto now = Clock::now();
    if (now > deadline)
      fail("rank {}: {} did not complete within {:g} s: another rank died, hangs or stopped taking part "
           "(--dist-timeout sets the limit)",
           rank, what, timeout_seconds);
    if (now < spin_until) {
      std::this_thread::yield();
      continue;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(500));
  }
}

}  // namespace detail
}  // namespace topo::dist
