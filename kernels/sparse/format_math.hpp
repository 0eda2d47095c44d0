#pragma once
// Format-conversion math shared by the CPU and CUDA backends, and the CUDA launchers' declarations.
// Free of fmt and Tensor so nvcc sees plain C++.
#include <cstddef>
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

// Number of low key bits a radix sort must look at to order row ids in [0, num_rows).
TOPO_HD int radix_bits_for(std::int64_t num_rows) {
  int bits = 0;
  while (bits < 63 && (std::int64_t{1} << bits) < num_rows) ++bits;
  return bits < 1 ? 1 : bits;
}

// Degree of row r from a CSR row pointer.
template <class T>
TOPO_HD T degree_at(const T* indptr, std::int64_t r) {
  return indptr[r + 1] - indptr[r];
}

// True when id is a valid index into [0, count).
template <class T>
TOPO_HD bool id_in_range(T id, std::int64_t count) {
  return id >= 0 && static_cast<std::int64_t>(id) < count;
}

// Row r of a part CSR copied into a merged CSR at position `pos`: column ids shifted by col_offset, edge ids
// by eid_offset (merge_csr). Returns the position after the row.
template <class T>
TOPO_HD std::int64_t copy_shifted_row(const T* indptr, const T* indices, const T* eids, std::int64_t r,
                                      T col_offset, T eid_offset, T* out_indices, T* out_eids, std::int64_t pos) {
  for (T k = indptr[r]; k < indptr[r + 1]; ++k, ++pos) {
    out_indices[pos] = indices[k] + col_offset;
    out_eids[pos] = eids[k] + eid_offset;
  }
  return pos;
}

namespace cuda {
// Device launchers (format_cuda.cu). Pointers are device memory on the current device.
// coo_to_csr: needs `scratch` of coo_to_csr_scratch_bytes(nnz, num_rows) bytes (256-byte aligned).
std::size_t coo_to_csr_scratch_bytes(std::int64_t nnz, std::int64_t num_rows, bool is64);
void coo_to_csr(const std::int32_t* rows, const std::int32_t* cols, std::int64_t nnz, std::int64_t num_rows,
                std::int32_t* indptr, std::int32_t* indices, std::int32_t* eids, void* scratch,
                std::size_t scratch_bytes);
void coo_to_csr(const std::int64_t* rows, const std::int64_t* cols, std::int64_t nnz, std::int64_t num_rows,
                std::int64_t* indptr, std::int64_t* indices, std::int64_t* eids, void* scratch,
                std::size_t scratch_bytes);
void degrees_from_indptr(const std::int32_t* indptr, std::int32_t* degrees, std::int64_t num_rows);
void degrees_from_indptr(const std::int64_t* indptr, std::int64_t* degrees, std::int64_t num_rows);
// merge_csr in three steps (T = int32 or int64). counts: [num_rows] zeroed by the caller; each part adds its
// row degrees at counts + row_offset; the scan turns counts into indptr [num_rows + 1] and a copy of
// indptr[0..num_rows) into cursor (scratch of merge_csr_scan_bytes); each part then copies its rows at
// cursor + row_offset, advancing the cursor, so parts land in call order within a merged row.
template <class T>
std::size_t merge_csr_scan_bytes(std::int64_t num_rows);
template <class T>
void merge_csr_count(const T* part_indptr, std::int64_t part_rows, T* counts);
template <class T>
void merge_csr_scan(const T* counts, std::int64_t num_rows, T* indptr, T* cursor, void* scratch, std::size_t bytes);
template <class T>
void merge_csr_fill(const T* part_indptr, const T* part_indices, const T* part_eids, std::int64_t part_rows,
                    T col_offset, T eid_offset, T* cursor, T* indices, T* eids);
}  // namespace cuda

}  // namespace topo
