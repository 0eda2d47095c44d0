// Gathers, scatter-adds, strided copies and index scans on CUDA.
// - gather: one thread per output word (rows of 4-byte words), grid-stride; coalesced along each row.
// - scatter-add: one thread per source element, atomicAdd into the destination row (order not fixed).
// - gather-add (embedding_sum): one thread per output element, one launch per table (each adds its rows).
// - scan: every thread checks its entries; atomicMin keeps the first bad position, atomicAdd counts the
//   in-range entries; the two counters come back with one 16-byte copy (the op's single sync), and the bad
//   value with one more only when there is an error.
#include "kernels/cuda_utils.cuh"
#include "kernels/dense/indexing_math.hpp"
#include "kernels/storage.hpp"

namespace topo::cuda {
namespace {

__device__ __forceinline__ std::int64_t load_index(const void* index, bool index64, std::int64_t i) {
  return index64 ? static_cast<const std::int64_t*>(index)[i]
                 : static_cast<std::int64_t>(static_cast<const std::int32_t*>(index)[i]);
}

// counters[0]: first bad position (initialised to n), counters[1]: in-range count.
__global__ void scan_kernel(const void* index, bool index64, std::int64_t n, std::int64_t limit, bool use_ignore,
                            std::int64_t ignore, unsigned long long* counters) {
  unsigned long long first_bad = static_cast<unsigned long long>(n), valid = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t v = load_index(index, index64, i);
    if (use_ignore && v == ignore) continue;
    if (topo::index_in_range(v, limit)) {
      ++valid;
    } else if (static_cast<unsigned long long>(i) < first_bad) {
      first_bad = static_cast<unsigned long long>(i);
    }
  }
  if (first_bad < static_cast<unsigned long long>(n)) atomicMin(&counters[0], first_bad);
  if (valid > 0) atomicAdd(&counters[1], valid);
}

__global__ void gather_kernel(const std::uint32_t* x, const void* index, bool index64, std::uint32_t* out,
                              std::int64_t total, std::int64_t row_words) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = t / row_words, c = t - i * row_words;
    out[t] = x[load_index(index, index64, i) * row_words + c];
  }
}

__global__ void scatter_add_kernel(const float* src, const void* index, bool index64, float* out,
                                   std::int64_t total, std::int64_t row, bool skip_negative) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = t / row, c = t - i * row, r = load_index(index, index64, i);
    if (skip_negative && r < 0) continue;
    atomicAdd(&out[r * row + c], src[t]);
  }
}

__global__ void gather_add_kernel(const float* x, const void* index, bool index64, float* out, std::int64_t total,
                                  std::int64_t row) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t i = t / row, c = t - i * row, r = load_index(index, index64, i);
    if (r >= 0) out[t] += x[r * row + c];
  }
}

__global__ void copy_strided_kernel(const std::uint32_t* src, std::int64_t src_stride, std::uint32_t* dst,
                                    std::int64_t dst_stride, std::int64_t total, std::int64_t width) {
  for (std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; t < total;
       t += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = t / width, c = t - r * width;
    dst[r * dst_stride + c] = src[r * src_stride + c];
  }
}

int current_device() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

}  // namespace

IndexScan scan_indices(const void* index, bool index64, std::int64_t n, std::int64_t limit, bool use_ignore,
                       std::int64_t ignore) {
  IndexScan scan;
  if (n == 0) return scan;
  const int device = current_device();
  auto* counters = static_cast<unsigned long long*>(topo::cuda_memory::allocate(2 * sizeof(unsigned long long), device));
  const unsigned long long init[2] = {static_cast<unsigned long long>(n), 0};
  unsigned long long result[2] = {0, 0};
  cudaError_t status = cudaMemcpy(counters, init, sizeof(init), cudaMemcpyHostToDevice);
  if (status == cudaSuccess) {
    scan_kernel<<<blocks_for(n, 256), 256>>>(index, index64, n, limit, use_ignore, ignore, counters);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) status = cudaMemcpy(result, counters, sizeof(result), cudaMemcpyDeviceToHost);
  topo::cuda_memory::release(counters, 2 * sizeof(unsigned long long), device);
  check(status, "scan_indices");
  scan.valid = static_cast<std::int64_t>(result[1]);
  if (result[0] < static_cast<unsigned long long>(n)) {
    scan.first_bad = static_cast<std::int64_t>(result[0]);
    if (index64) {
      check(cudaMemcpy(&scan.bad_value, static_cast<const std::int64_t*>(index) + scan.first_bad,
                       sizeof(std::int64_t), cudaMemcpyDeviceToHost),
            "scan_indices");
    } else {
      std::int32_t v = 0;
      check(cudaMemcpy(&v, static_cast<const std::int32_t*>(index) + scan.first_bad, sizeof(v),
                       cudaMemcpyDeviceToHost),
            "scan_indices");
      scan.bad_value = v;
    }
  }
  return scan;
}

void gather_rows(const void* x, const void* index, bool index64, void* out, std::int64_t m, std::int64_t row_words) {
  const std::int64_t total = m * row_words;
  if (total == 0) return;
  gather_kernel<<<blocks_for(total, 256), 256>>>(static_cast<const std::uint32_t*>(x), index, index64,
                                                 static_cast<std::uint32_t*>(out), total, row_words);
  check_launch("gather_rows");
}

void scatter_add_rows(const float* src, const void* index, bool index64, float* out, std::int64_t m,
                      std::int64_t row, bool skip_negative) {
  const std::int64_t total = m * row;
  if (total == 0) return;
  scatter_add_kernel<<<blocks_for(total, 256), 256>>>(src, index, index64, out, total, row, skip_negative);
  check_launch("scatter_add_rows");
}

void gather_add_rows(const float* x, const void* index, bool index64, float* out, std::int64_t m, std::int64_t row) {
  const std::int64_t total = m * row;
  if (total == 0) return;
  gather_add_kernel<<<blocks_for(total, 256), 256>>>(x, index, index64, out, total, row);
  check_launch("gather_add_rows");
}

void copy_strided(const void* src, std::int64_t src_stride, void* dst, std::int64_t dst_stride, std::int64_t rows,
                  std::int64_t width) {
  const std::int64_t total = rows * width;
  if (total == 0) return;
  copy_strided_kernel<<<blocks_for(total, 256), 256>>>(static_cast<const std::uint32_t*>(src), src_stride,
                                                       static_cast<std::uint32_t*>(dst), dst_stride, total, width);
  check_launch("copy_strided");
}

}  // namespace topo::cuda
