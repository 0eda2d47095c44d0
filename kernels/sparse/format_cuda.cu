// COO -> CSR on CUDA, with CUB:
//  1. eids_in = 0..nnz-1; cub::DeviceRadixSort::SortPairs(keys = row ids, values = eids) over only the
//     low radix_bits_for(num_rows) bits. Radix sort is stable, so within a row edges stay in id order: the
//     same result as the CPU counting sort.
//  2. counts[r] = number of edges in row r (one thread per edge, atomicAdd; rows outside [0, num_rows)
//     are skipped, never written out of bounds), indptr[0] = 0, indptr[1..] = cub::DeviceScan::InclusiveSum.
//  3. indices[k] = cols[eids[k]] (one thread per entry).
// Ids are non-negative, so sorting their bit patterns as unsigned integers gives the numeric order.
#include <cub/cub.cuh>

#include "kernels/cuda_utils.cuh"
#include "kernels/sparse/format_math.hpp"

namespace topo::cuda {
namespace {

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

template <class T> struct UnsignedOf;
template <> struct UnsignedOf<std::int32_t> { using type = unsigned int; };
template <> struct UnsignedOf<std::int64_t> { using type = unsigned long long; };

template <class T>
__global__ void iota_kernel(T* out, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<T>(i);
}

__device__ __forceinline__ void add_one(std::int32_t* p) { atomicAdd(reinterpret_cast<int*>(p), 1); }
__device__ __forceinline__ void add_one(std::int64_t* p) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), 1ull);
}

template <class T>
__global__ void histogram_kernel(const T* rows, std::int64_t nnz, std::int64_t num_rows, T* counts) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < nnz;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const T r = rows[i];
    if (topo::id_in_range(r, num_rows)) add_one(counts + r);
  }
}

template <class T>
__global__ void gather_kernel(const T* cols, const T* eids, T* indices, std::int64_t nnz) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < nnz;
       i += std::int64_t{gridDim.x} * blockDim.x)
    indices[i] = cols[eids[i]];
}

template <class T>
__global__ void degrees_kernel(const T* indptr, T* degrees, std::int64_t num_rows) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r < num_rows;
       r += std::int64_t{gridDim.x} * blockDim.x)
    degrees[r] = topo::degree_at(indptr, r);
}

template <class T>
std::size_t cub_bytes(std::int64_t nnz, std::int64_t num_rows) {
  using U = typename UnsignedOf<T>::type;
  std::size_t sort_bytes = 0, scan_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const U*>(nullptr),
                                        static_cast<U*>(nullptr), static_cast<const T*>(nullptr),
                                        static_cast<T*>(nullptr), nnz, 0, radix_bits_for(num_rows)),
        "cub::DeviceRadixSort::SortPairs (size query)");
  check(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, static_cast<const T*>(nullptr),
                                      static_cast<T*>(nullptr), num_rows),
        "cub::DeviceScan::InclusiveSum (size query)");
  return sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
}

// Scratch layout: [sorted keys: nnz][eids_in: nnz][counts: num_rows][CUB temp], each 256-byte aligned.
template <class T>
std::size_t scratch_bytes(std::int64_t nnz, std::int64_t num_rows) {
  return align_up(nnz * sizeof(T)) * 2 + align_up(num_rows * sizeof(T)) + align_up(cub_bytes<T>(nnz, num_rows));
}

template <class T>
void coo_to_csr_impl(const T* rows, const T* cols, std::int64_t nnz, std::int64_t num_rows, T* indptr,
                     T* indices, T* eids, void* scratch, std::size_t bytes) {
  using U = typename UnsignedOf<T>::type;
  char* base = static_cast<char*>(scratch);
  T* keys_out = reinterpret_cast<T*>(base);
  base += align_up(nnz * sizeof(T));
  T* eids_in = reinterpret_cast<T*>(base);
  base += align_up(nnz * sizeof(T));
  T* counts = reinterpret_cast<T*>(base);
  base += align_up(num_rows * sizeof(T));
  std::size_t temp_bytes = bytes - static_cast<std::size_t>(base - static_cast<char*>(scratch));

  check(cudaMemset(indptr, 0, sizeof(T)), "coo_to_csr: cudaMemset");
  if (num_rows > 0) check(cudaMemset(counts, 0, num_rows * sizeof(T)), "coo_to_csr: cudaMemset");
  if (nnz > 0) {
    iota_kernel<<<blocks_for(nnz, 256), 256>>>(eids_in, nnz);
    check_launch("coo_to_csr: iota");
    check(cub::DeviceRadixSort::SortPairs(base, temp_bytes, reinterpret_cast<const U*>(rows),
                                          reinterpret_cast<U*>(keys_out), eids_in, eids, nnz, 0,
                                          radix_bits_for(num_rows)),
          "cub::DeviceRadixSort::SortPairs");
    histogram_kernel<<<blocks_for(nnz, 256), 256>>>(rows, nnz, num_rows, counts);
    check_launch("coo_to_csr: histogram");
    gather_kernel<<<blocks_for(nnz, 256), 256>>>(cols, eids, indices, nnz);
    check_launch("coo_to_csr: gather");
  }
  if (num_rows > 0) {
    temp_bytes = bytes - static_cast<std::size_t>(base - static_cast<char*>(scratch));
    check(cub::DeviceScan::InclusiveSum(base, temp_bytes, static_cast<const T*>(counts), indptr + 1, num_rows),
          "cub::DeviceScan::InclusiveSum");
  }
}

template <class T>
__global__ void merge_count_kernel(const T* part_indptr, std::int64_t part_rows, T* counts) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r < part_rows;
       r += std::int64_t{gridDim.x} * blockDim.x)
    counts[r] += topo::degree_at(part_indptr, r);  // one thread per row of this part: no atomics
}

template <class T>
__global__ void merge_fill_kernel(const T* part_indptr, const T* part_indices, const T* part_eids,
                                  std::int64_t part_rows, T col_offset, T eid_offset, T* cursor, T* indices,
                                  T* eids) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r < part_rows;
       r += std::int64_t{gridDim.x} * blockDim.x)
    cursor[r] = static_cast<T>(topo::copy_shifted_row(part_indptr, part_indices, part_eids, r, col_offset,
                                                      eid_offset, indices, eids, cursor[r]));
}

}  // namespace

// merge_csr: counts per part, one cub::DeviceScan::InclusiveSum, then one fill per part (thread per row;
// parts run in stream order, so a merged row receives them in the order given).
template <class T>
std::size_t merge_csr_scan_bytes(std::int64_t num_rows) {
  std::size_t bytes = 0;
  check(cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<T*>(nullptr),
                                      num_rows),
        "cub::DeviceScan::InclusiveSum (size query)");
  return bytes;
}

template <class T>
void merge_csr_count(const T* part_indptr, std::int64_t part_rows, T* counts) {
  if (part_rows == 0) return;
  merge_count_kernel<<<blocks_for(part_rows, 256), 256>>>(part_indptr, part_rows, counts);
  check_launch("merge_csr: count");
}

template <class T>
void merge_csr_scan(const T* counts, std::int64_t num_rows, T* indptr, T* cursor, void* scratch, std::size_t bytes) {
  check(cudaMemset(indptr, 0, sizeof(T)), "merge_csr: cudaMemset");
  if (num_rows == 0) return;
  check(cub::DeviceScan::InclusiveSum(scratch, bytes, counts, indptr + 1, num_rows), "cub::DeviceScan::InclusiveSum");
  check(cudaMemcpy(cursor, indptr, num_rows * sizeof(T), cudaMemcpyDeviceToDevice), "merge_csr: cursor copy");
}

template <class T>
void merge_csr_fill(const T* part_indptr, const T* part_indices, const T* part_eids, std::int64_t part_rows,
                    T col_offset, T eid_offset, T* cursor, T* indices, T* eids) {
  if (part_rows == 0) return;
  merge_fill_kernel<<<blocks_for(part_rows, 256), 256>>>(part_indptr, part_indices, part_eids, part_rows,
                                                          col_offset, eid_offset, cursor, indices, eids);
  check_launch("merge_csr: fill");
}

#define TOPO_MERGE_CSR_INSTANTIATE(T)                                                                           \
  template std::size_t merge_csr_scan_bytes<T>(std::int64_t);                                                  \
  template void merge_csr_count<T>(const T*, std::int64_t, T*);                                                \
  template void merge_csr_scan<T>(const T*, std::int64_t, T*, T*, void*, std::size_t);                         \
  template void merge_csr_fill<T>(const T*, const T*, const T*, std::int64_t, T, T, T*, T*, T*);
TOPO_MERGE_CSR_INSTANTIATE(std::int32_t)
TOPO_MERGE_CSR_INSTANTIATE(std::int64_t)
#undef TOPO_MERGE_CSR_INSTANTIATE

std::size_t coo_to_csr_scratch_bytes(std::int64_t nnz, std::int64_t num_rows, bool is64) {
  return is64 ? scratch_bytes<std::int64_t>(nnz, num_rows) : scratch_bytes<std::int32_t>(nnz, num_rows);
}

void coo_to_csr(const std::int32_t* rows, const std::int32_t* cols, std::int64_t nnz, std::int64_t num_rows,
                std::int32_t* indptr, std::int32_t* indices, std::int32_t* eids, void* scratch,
                std::size_t scratch_bytes) {
  coo_to_csr_impl(rows, cols, nnz, num_rows, indptr, indices, eids, scratch, scratch_bytes);
}
void coo_to_csr(const std::int64_t* rows, const std::int64_t* cols, std::int64_t nnz, std::int64_t num_rows,
                std::int64_t* indptr, std::int64_t* indices, std::int64_t* eids, void* scratch,
                std::size_t scratch_bytes) {
  coo_to_csr_impl(rows, cols, nnz, num_rows, indptr, indices, eids, scratch, scratch_bytes);
}

void degrees_from_indptr(const std::int32_t* indptr, std::int32_t* degrees, std::int64_t num_rows) {
  if (num_rows == 0) return;
  degrees_kernel<<<blocks_for(num_rows, 256), 256>>>(indptr, degrees, num_rows);
  check_launch("degrees_from_indptr");
}
void degrees_from_indptr(const std::int64_t* indptr, std::int64_t* degrees, std::int64_t num_rows) {
  if (num_rows == 0) return;
  degrees_kernel<<<blocks_for(num_rows, 256), 256>>>(indptr, degrees, num_rows);
  check_launch("degrees_from_indptr");
}

}  // namespace topo::cuda
