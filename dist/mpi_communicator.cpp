// The MPI backend of dist::Communicator (built when CMake finds MPI: TOPO_MPI). Host buffers go through
// MPI's non-blocking collectives; blocking ones are the same calls followed by a timed wait, so no rank can
// hang for ever on a peer that died or stopped. CUDA buffers go to NCCL when the build has it, else they are
// staged through host memory.
#include <mpi.h>

#include <climits>
#include <cstdint>
#include <cstdlib>

#include "dist/backends.hpp"
#include "kernels/error.hpp"

namespace topo::dist::detail {
namespace {

class MpiWorld;

// One non-blocking MPI collective. MPI progresses it only inside MPI calls: test() is such a call.
class MpiRequest final : public Request {
 public:
  MpiRequest(const MpiWorld& world, MPI_Request request, std::string what)
      : world_(world), request_(request), what_(std::move(what)) {}
  bool test() override;
  void wait() override;

 private:
  const MpiWorld& world_;
  MPI_Request request_;
  std::string what_;
  bool done_ = false;
};

class MpiWorld final : public Communicator {
 public:
  MpiWorld(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      // Collectives are called from the training thread alone (OpenMP threads never call MPI).
      if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) fail("MPI_Init_thread failed");
      owns_mpi_ = true;
    }
    // Errors come back as return codes (turned into topo::Error naming the call) instead of aborting
    // inside MPI with a message about a communicator the user never saw.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
    check(MPI_Comm_rank(node, &local_rank_), "MPI_Comm_rank(node)");
    MPI_Comm_free(&node);
  }
  ~MpiWorld() override {
    device_.reset();  // NCCL's communicator first: it was bootstrapped over this one
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_mpi_ && !finalized) MPI_Finalize();
  }

  using Communicator::allreduce_sum;  // the blocking Tensor form
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  std::string backend() const override { return built_with_nccl() ? "mpi+nccl" : "mpi"; }

  std::unique_ptr<Request> start_allreduce_sum(Tensor& values) override {
    check_dtype(values, DType::F32, "allreduce_sum", "values");
    if (values.device().is_cuda()) {
      if (DeviceCollectives* device = device_collectives(values.device())) return device->start_allreduce_sum(values);
      Tensor host = values.to(Device::cpu());  // no NCCL in this build: stage through host memory
      allreduce_sum(host);
      values.copy_from(host);
      return std::make_unique<MpiRequest>(*this, MPI_REQUEST_NULL, "allreduce_sum");
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, values.data<float>(), count(values.numel()), MPI_FLOAT, MPI_SUM, comm_, &request),
          "MPI_Iallreduce");
    return std::make_unique<MpiRequest>(*this, request, fmt::format("allreduce_sum of {} floats", values.numel()));
  }

  void allreduce_sum(std::vector<double>& values) override {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, values.data(), count(static_cast<std::int64_t>(values.size())), MPI_DOUBLE,
                         MPI_SUM, comm_, &request),
          "MPI_Iallreduce");
    MpiRequest(*this, request, fmt::format("allreduce_sum of {} doubles", values.size())).wait();
  }

  void broadcast(Tensor& values, int root) override {
    check_dtype(values, DType::F32, "broadcast", "values");
    check_root(root);
    if (values.device().is_cuda()) {
      if (DeviceCollectives* device = device_collectives(values.device())) return device->broadcast(values, root);
      Tensor host = values.to(Device::cpu());
      broadcast(host, root);
      values.copy_from(host);
      return;
    }
    bcast(values.data<float>(), values.numel(), MPI_FLOAT, root, "broadcast of floats");
  }

  void broadcast(std::string& bytes, int root) override {
    check_root(root);
    std::uint64_t n = bytes.size();
    bcast(&n, 1, MPI_UINT64_T, root, "broadcast of a length");
    bytes.resize(n);
    bcast(bytes.data(), static_cast<std::int64_t>(n), MPI_CHAR, root, "broadcast of bytes");
  }

  void barrier() override {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    MpiRequest(*this, request, "barrier").wait();
  }

  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(MPI_COMM_WORLD, exit_code);
    std::_Exit(exit_code);
  }

  void check(int status, const char* call) const {
    if (status == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(status, text, &length);
    fail("rank {}: {} failed: {}", rank_, call, std::string(text, static_cast<std::size_t>(length)));
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  bool owns_mpi_ = false;
  std::unique_ptr<DeviceCollectives> device_;

  static int count(std::int64_t n) {
    TOPO_CHECK(n <= INT_MAX, "collective of {} elements: MPI counts stop at {}; split the buffer", n, INT_MAX);
    return static_cast<int>(n);
  }
  void check_root(int root) const {
    TOPO_CHECK(root >= 0 && root < size_, "broadcast: root {} outside the {} ranks of this job", root, size_);
  }
  void bcast(void* data, std::int64_t n, MPI_Datatype type, int root, const char* what) {
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Ibcast(data, count(n), type, root, comm_, &request), "MPI_Ibcast");
    MpiRequest(*this, request, what).wait();
  }
  DeviceCollectives* device_collectives(Device device) {
#if TOPO_WITH_NCCL
    if (!device_) device_ = make_nccl(*this, device.index);
    return device_.get();
#else
    (void)device;
    return nullptr;
#endif
  }
};

bool MpiRequest::test() {
  if (done_) return true;
  int flag = 0;
  world_.check(MPI_Test(&request_, &flag, MPI_STATUS_IGNORE), "MPI_Test");
  done_ = flag != 0;
  return done_;
}

void MpiRequest::wait() {
  wait_until([this] { return test(); }, world_.timeout_seconds(), what_, world_.rank());
}

}  // namespace

std::unique_ptr<Communicator> make_mpi_world(int* argc, char*** argv) { return std::make_unique<MpiWorld>(argc, argv); }

}  // namespace topo::dist::detail
