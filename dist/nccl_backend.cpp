// NCCL collectives on CUDA buffers (built in CUDA builds where CMake finds NCCL and MPI). The unique id
// that joins the ranks travels through the MPI communicator. Kernels run on the legacy default stream;
// NCCL runs on a stream of its own that first waits for an event recorded on the default stream, so a
// bucket's allreduce overlaps the backward kernels still queued after it. Completion is an event the host
// polls (with the communicator's timeout; NCCL's asynchronous errors are checked while polling).
#include <cuda_runtime.h>
#include <nccl.h>

#include <climits>
#include <cstring>

#include "dist/backends.hpp"
#include "kernels/cuda_utils.cuh"
#include "kernels/error.hpp"

namespace topo::dist::detail {
namespace {

void check_nccl(ncclResult_t status, const char* call, int rank) {
  if (status != ncclSuccess && status != ncclInProgress)
    fail("rank {}: {} failed: {}", rank, call, ncclGetErrorString(status));
}

class NcclRequest final : public Request {
 public:
  NcclRequest(ncclComm_t comm, cudaEvent_t done, int rank, double timeout, std::string what)
      : comm_(comm), done_event_(done), rank_(rank), timeout_(timeout), what_(std::move(what)) {}
  ~NcclRequest() override {
    if (done_) cudaEventDestroy(done_event_);
  }
  bool test() override {
    if (done_) return true;
    const cudaError_t status = cudaEventQuery(done_event_);
    if (status == cudaSuccess) return done_ = true;
    if (status != cudaErrorNotReady) cuda::check(status, "cudaEventQuery (NCCL collective)");
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", rank_);
    check_nccl(async, what_.c_str(), rank_);
    return false;
  }
  void wait() override {
    try {
      wait_until([this] { return test(); }, timeout_, what_, rank_);
    } catch (const Error&) {
      ncclCommAbort(comm_);  // NCCL's kernels would otherwise spin on the GPU for ever
      throw;
    }
  }

 private:
  ncclComm_t comm_;
  cudaEvent_t done_event_;
  int rank_;
  double timeout_;
  std::string what_;
  bool done_ = false;
};

class Nccl final : public DeviceCollectives {
 public:
  Nccl(Communicator& bootstrap, int device) : rank_(bootstrap.rank()), timeout_(bootstrap.timeout_seconds()) {
    cuda::check(cudaSetDevice(device), "cudaSetDevice");
    ncclUniqueId id{};
    std::string bytes;
    if (bootstrap.is_root()) {
      check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId", rank_);
      bytes.assign(reinterpret_cast<const char*>(&id), sizeof id);
    }
    bootstrap.broadcast(bytes, 0);
    TOPO_CHECK(bytes.size() == sizeof id, "rank {}: NCCL unique id of {} bytes, expected {}", rank_, bytes.size(),
               sizeof id);
    std::memcpy(&id, bytes.data(), sizeof id);
    check_nccl(ncclCommInitRank(&comm_, bootstrap.size(), id, bootstrap.rank()), "ncclCommInitRank", rank_);
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  }
  ~Nccl() override {
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }

  std::unique_ptr<Request> start_allreduce_sum(Tensor& values) override {
    after_default_stream();
    check_nccl(ncclAllReduce(values.raw_data(), values.raw_data(), static_cast<std::size_t>(values.numel()), ncclFloat,
                             ncclSum, comm_, stream_),
               "ncclAllReduce", rank_);
    return std::make_unique<NcclRequest>(comm_, record(stream_), rank_, timeout_,
                                         fmt::format("ncclAllReduce of {} floats", values.numel()));
  }

  void broadcast(Tensor& values, int root) override {
    after_default_stream();
    check_nccl(ncclBroadcast(values.raw_data(), values.raw_data(), static_cast<std::size_t>(values.numel()), ncclFloat,
                             root, comm_, stream_),
               "ncclBroadcast", rank_);
    NcclRequest(comm_, record(stream_), rank_, timeout_, fmt::format("ncclBroadcast of {} floats", values.numel()))
        .wait();
  }

 private:
  int rank_;
  double timeout_;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;

  static cudaEvent_t record(cudaStream_t stream) {
    cudaEvent_t event = nullptr;
    cuda::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    cuda::check(cudaEventRecord(event, stream), "cudaEventRecord");
    return event;
  }
  // NCCL's stream waits for everything queued so far on the default stream (the kernels that wrote the buffer).
  void after_default_stream() {
    cudaEvent_t ready = record(cudaStreamLegacy);
    cuda::check(cudaStreamWaitEvent(stream_, ready, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ready);  // released once the wait it feeds has happened
  }
};

}  // namespace

std::unique_ptr<DeviceCollectives> make_nccl(Communicator& bootstrap, int device_index) {
  return std::make_unique<Nccl>(bootstrap, device_index);
}

}  // namespace topo::dist::detail
