#pragma once
// Plain-array sparse formats: no graph objects here (graph/ owns topology and hands kernels these views).
// A CsrView is a compressed-row matrix over edge ids: row r's entries are positions
// [indptr[r], indptr[r+1]) of `indices` (the column of each entry) and `eids` (the COO edge id of each entry).
// All three arrays share one integer dtype (int32 or int64) and one device. A structure-only view has no
// `eids` (undefined): what reads no edge data (gspmm of copy_u by sum or mean, degrees) takes it, and at 4 bytes
// an edge it is a third of what a graph's two formats hold (HeteroGraph::in_csc_structure).
#include <cstdint>
#include <vector>

#include "kernels/sparse/format_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

struct CsrView {
  Tensor indptr;   // [num_rows + 1]
  Tensor indices;  // [nnz] column ids, rows concatenated
  Tensor eids;     // [nnz] COO edge id of each entry (a permutation of 0..nnz-1)
  std::int64_t num_rows = 0;
  std::int64_t num_cols = 0;

  std::int64_t nnz() const { return indices.defined() ? indices.numel() : 0; }
  bool has_edge_ids() const { return eids.defined(); }
  DType dtype() const { return indptr.dtype(); }
  Device device() const { return indptr.device(); }
};

// COO (rows[e], cols[e]) for e in 0..nnz-1 -> CSR over rows. Within a row, entries are ordered by edge id
// (a stable sort), so the result is deterministic on every backend and thread count.
// rows/cols: [nnz] int32 or int64 (same dtype, same device); the output has their dtype and device.
// On the CPU every id is checked (topo::Error names the array, position and value); the CUDA path trusts
// its input (graph/ validates at construction) but never writes out of bounds on a bad row id.
// `arrays`: all three; `structure`: no eids; `edge_ids`: indptr and eids only (no indices: the eids of a
// structure already built, without a second copy of its indices).
enum class CsrArrays { all, structure, edge_ids };
CsrView coo_to_csr(const Tensor& rows, const Tensor& cols, std::int64_t num_rows, std::int64_t num_cols,
                   CsrArrays arrays = CsrArrays::all);

// One CSR placed inside a larger one: its row r becomes merged row row_offset + r, its column ids are
// shifted by col_offset and its edge ids by eid_offset.
struct CsrPart {
  CsrView csr;
  std::int64_t row_offset = 0, col_offset = 0, eid_offset = 0;
};
// Stacks parts into one num_rows x num_cols CSR (how a block joins the per-relation formats a graph caches):
// a merged row holds the entries of every part that covers it, part by part in the order given, each part's
// own entry order kept; rows no part covers are empty. Parts share one dtype and device (the output's);
// their shifted ranges must fit the merged matrix (topo::Error names the part otherwise).
// CPU: degrees summed per part (parallel over rows), one serial scan, then each part's rows copied in
// parallel at per-row cursors. CUDA: the same steps, the scan with cub::DeviceScan.
CsrView merge_csr(const std::vector<CsrPart>& parts, std::int64_t num_rows, std::int64_t num_cols);

// Per-row entry counts indptr[r+1] - indptr[r]: [num_rows], same dtype and device as indptr.
Tensor degrees_from_indptr(const Tensor& indptr);

}  // namespace topo
