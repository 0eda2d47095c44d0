// COO -> CSR conversion. CPU strategy: a parallel stable counting sort.
//  1. Edges are cut into T contiguous chunks (T = threads); each thread histograms its chunk's rows into
//     its own counts[t][*] (no atomics) and checks ids.
//  2. One pass over rows turns counts into indptr and into each thread's first slot per row:
//     slot[t][r] = indptr[r] + sum_{t' < t} counts[t'][r]. (Serial, O(T * rows): small next to the edges.)
//  3. Each thread scatters its chunk in edge order into its slots. Chunks are ordered by edge id and the
//     slots of thread t precede those of t+1, so every row lists its edges by increasing id whatever T is.
// merge_csr (blocks from cached per-relation formats): see format.hpp.
#include "kernels/sparse/format.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "kernels/profile.hpp"
#include "kernels/dispatch.hpp"
#include "kernels/parallel.hpp"

namespace topo {
namespace {

template <class T>
[[noreturn]] void report_bad_id(const T* ids, std::int64_t n, std::int64_t count, const char* what) {
  for (std::int64_t e = 0; e < n; ++e)
    if (!id_in_range(ids[e], count))
      fail("coo_to_csr: {}[{}] = {} is outside [0, {})", what, e, static_cast<std::int64_t>(ids[e]), count);
  fail("coo_to_csr: a {} id is out of range", what);  // unreachable: the parallel pass saw one
}

template <class T>
void coo_to_csr_cpu(const T* rows, const T* cols, std::int64_t nnz, std::int64_t num_rows, std::int64_t num_cols,
                    T* indptr, T* indices, T* eids) {
  // Below ~64k edges the parallel region and T histograms cost more than they save.
  const int threads = (nnz < (std::int64_t{1} << 16) || omp_in_parallel()) ? 1 : num_threads();
  const std::int64_t chunk = threads > 0 ? (nnz + threads - 1) / threads : nnz;
  std::vector<std::int64_t> slots(static_cast<std::size_t>(threads) * static_cast<std::size_t>(num_rows), 0);
  std::vector<unsigned char> bad(static_cast<std::size_t>(threads) * 2, 0);

  auto histogram = [&](int t) {
    const std::int64_t begin = std::min(nnz, t * chunk), end = std::min(nnz, begin + chunk);
    std::int64_t* count = slots.data() + static_cast<std::size_t>(t) * num_rows;
    bool bad_row = false, bad_col = false;
    for (std::int64_t e = begin; e < end; ++e) {
      const T r = rows[e];
      if (!id_in_range(r, num_rows)) { bad_row = true; continue; }
      bad_col |= !id_in_range(cols[e], num_cols);
      ++count[r];
    }
    bad[2 * t] = bad_row;
    bad[2 * t + 1] = bad_col;
  };
  auto scatter = [&](int t) {
    const std::int64_t begin = std::min(nnz, t * chunk), end = std::min(nnz, begin + chunk);
    std::int64_t* slot = slots.data() + static_cast<std::size_t>(t) * num_rows;
    for (std::int64_t e = begin; e < end; ++e) {
      const std::int64_t pos = slot[rows[e]]++;
      if (indices) indices[pos] = cols[e];
      if (eids) eids[pos] = static_cast<T>(e);
    }
  };

  if (threads == 1) {
    histogram(0);
  } else {
    profile::count_parallel_region();
#pragma omp parallel num_threads(threads)
    histogram(omp_get_thread_num());
  }
  for (int t = 0; t < threads; ++t) {
    if (bad[2 * t]) report_bad_id(rows, nnz, num_rows, "rows");
    if (bad[2 * t + 1]) report_bad_id(cols, nnz, num_cols, "cols");
  }
  std::int64_t running = 0;
  for (std::int64_t r = 0; r < num_rows; ++r) {
    indptr[r] = static_cast<T>(running);
    for (int t = 0; t < threads; ++t) {
      std::int64_t& s = slots[static_cast<std::size_t>(t) * num_rows + r];
      const std::int64_t c = s;
      s = running;
      running += c;
    }
  }
  indptr[num_rows] = static_cast<T>(running);
  if (threads == 1) {
    scatter(0);
  } else {
    profile::count_parallel_region();
#pragma omp parallel num_threads(threads)
    scatter(omp_get_thread_num());
  }
}

template <class T>
void degrees_cpu(const T* indptr, T* degrees, std::int64_t num_rows) {
  parallel_for(num_rows, 1, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t r = b; r < e; ++r) degrees[r] = degree_at(indptr, r);
  });
}

template <class T>
void merge_csr_cpu(const std::vector<CsrPart>& parts, std::int64_t num_rows, T* indptr, T* indices, T* eids) {
  std::fill(indptr, indptr + num_rows + 1, T{0});
  for (const CsrPart& part : parts) {
    const T* part_indptr = part.csr.indptr.data<T>();
    T* counts = indptr + 1 + part.row_offset;
    parallel_for(part.csr.num_rows, 1, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) counts[r] += degree_at(part_indptr, r);
    });
  }
  for (std::int64_t r = 0; r < num_rows; ++r) indptr[r + 1] += indptr[r];
  std::vector<T> cursor(indptr, indptr + num_rows);
  for (const CsrPart& part : parts) {
    const T* part_indptr = part.csr.indptr.data<T>();
    const T* part_indices = part.csr.indices.defined() ? part.csr.indices.data<T>() : nullptr;
    const T* part_eids = part.csr.eids.defined() ? part.csr.eids.data<T>() : nullptr;
    T* row_cursor = cursor.data() + part.row_offset;
    const std::int64_t per_row = std::max<std::int64_t>(1, part.csr.nnz() / std::max<std::int64_t>(1, part.csr.num_rows));
    parallel_for(part.csr.num_rows, per_row, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r)
        row_cursor[r] = static_cast<T>(copy_shifted_row(part_indptr, part_indices, part_eids, r,
                                                        static_cast<T>(part.col_offset),
                                                        static_cast<T>(part.eid_offset), indices, eids,
                                                        row_cursor[r]));
    });
  }
}

#if TOPO_WITH_CUDA
template <class T>
void merge_csr_cuda(const std::vector<CsrPart>& parts, CsrView& out) {
  const std::int64_t num_rows = out.num_rows;
  const Device device = out.device();
  Tensor counts = Tensor::zeros({num_rows}, out.dtype(), device);
  Tensor cursor = Tensor::empty({num_rows}, out.dtype(), device);
  const std::size_t bytes = cuda::merge_csr_scan_bytes<T>(num_rows);
  Tensor scratch = Tensor::empty({static_cast<std::int64_t>(bytes / 8 + 1)}, DType::I64, device);
  for (const CsrPart& p : parts)
    cuda::merge_csr_count<T>(p.csr.indptr.data<T>(), p.csr.num_rows, counts.data<T>() + p.row_offset);
  cuda::merge_csr_scan<T>(counts.data<T>(), num_rows, out.indptr.data<T>(), cursor.data<T>(), scratch.raw_data(), bytes);
  for (const CsrPart& p : parts)
    if (p.csr.nnz() > 0)
      cuda::merge_csr_fill<T>(p.csr.indptr.data<T>(), p.csr.indices.data<T>(), p.csr.eids.data<T>(), p.csr.num_rows,
                              static_cast<T>(p.col_offset), static_cast<T>(p.eid_offset),
                              cursor.data<T>() + p.row_offset, out.indices.data<T>(), out.eids.data<T>());
}
#endif

}  // namespace

CsrView merge_csr(const std::vector<CsrPart>& parts, std::int64_t num_rows, std::int64_t num_cols) {
  TOPO_PROFILE(Graph);
  TOPO_CHECK(!parts.empty(), "merge_csr: no parts");
  TOPO_CHECK(num_rows >= 0 && num_cols >= 0, "merge_csr: bad matrix size {} x {}", num_rows, num_cols);
  const DType dtype = parts[0].csr.dtype();
  const Device device = parts[0].csr.device();
  std::int64_t nnz = 0, max_eid = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const CsrPart& p = parts[i];
    TOPO_CHECK(p.csr.indptr.defined() && p.csr.dtype() == dtype && p.csr.device() == device,
               "merge_csr: part {} has dtype {} on {}, part 0 {} on {}", i,
               p.csr.indptr.defined() ? dtype_name(p.csr.dtype()) : "undefined", p.csr.device().str(),
               dtype_name(dtype), device.str());
    TOPO_CHECK(p.row_offset >= 0 && p.col_offset >= 0 && p.eid_offset >= 0 &&
                   p.row_offset + p.csr.num_rows <= num_rows && p.col_offset + p.csr.num_cols <= num_cols,
               "merge_csr: part {} ({} x {} at row {}, column {}) does not fit the {} x {} result", i,
               p.csr.num_rows, p.csr.num_cols, p.row_offset, p.col_offset, num_rows, num_cols);
    nnz += p.csr.nnz();
    max_eid = std::max(max_eid, p.eid_offset + p.csr.nnz());
  }
  if (dtype == DType::I32)
    TOPO_CHECK(max_eid <= INT32_MAX && num_rows < INT32_MAX && num_cols <= INT32_MAX,
               "merge_csr: {} edges / {} rows do not fit int32 ids: use int64", max_eid, num_rows);
  CsrView out;
  out.num_rows = num_rows;
  out.num_cols = num_cols;
  out.indptr = Tensor::empty({num_rows + 1}, dtype, device);
  out.indices = Tensor::empty({nnz}, dtype, device);
  out.eids = Tensor::empty({nnz}, dtype, device);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    TOPO_ON_DEVICE(
        device, merge_csr_cpu<T>(parts, num_rows, out.indptr.data<T>(), out.indices.data<T>(), out.eids.data<T>()),
        merge_csr_cuda<T>(parts, out));
  };
  if (dtype == DType::I32) run(std::int32_t{});
  else run(std::int64_t{});
  return out;
}

CsrView coo_to_csr(const Tensor& rows, const Tensor& cols, std::int64_t num_rows, std::int64_t num_cols,
                   CsrArrays arrays) {
  TOPO_PROFILE(Graph);
  TOPO_CHECK(rows.defined() && cols.defined(), "coo_to_csr: rows and cols must be defined tensors");
  TOPO_CHECK(rows.ndim() == 1 && cols.ndim() == 1 && rows.numel() == cols.numel(),
             "coo_to_csr: rows {} and cols {} must be 1-d of one length", shape_str(rows.shape()),
             shape_str(cols.shape()));
  TOPO_CHECK(rows.dtype() == cols.dtype() && rows.dtype() != DType::F32,
             "coo_to_csr: rows ({}) and cols ({}) must share an integer dtype", dtype_name(rows.dtype()),
             dtype_name(cols.dtype()));
  TOPO_CHECK(num_rows >= 0 && num_cols >= 0, "coo_to_csr: bad matrix size {} x {}", num_rows, num_cols);
  check_same_device(rows, cols, "coo_to_csr");
  const std::int64_t nnz = rows.numel();
  if (rows.dtype() == DType::I32)
    TOPO_CHECK(nnz <= INT32_MAX && num_rows < INT32_MAX,
               "coo_to_csr: {} edges / {} rows do not fit int32 ids: use int64", nnz, num_rows);
  const Device device = rows.device();
  CsrView out;
  out.num_rows = num_rows;
  out.num_cols = num_cols;
  out.indptr = Tensor::empty({num_rows + 1}, rows.dtype(), device);
  // The CUDA path writes both arrays (its sort carries the edge ids); the CPU one writes only those asked for.
  const bool on_gpu = device.is_cuda();
  if (arrays != CsrArrays::edge_ids || on_gpu) out.indices = Tensor::empty({nnz}, rows.dtype(), device);
  if (arrays != CsrArrays::structure || on_gpu) out.eids = Tensor::empty({nnz}, rows.dtype(), device);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* indices = out.indices.defined() ? out.indices.data<T>() : nullptr;
    T* eids = out.eids.defined() ? out.eids.data<T>() : nullptr;
    TOPO_ON_DEVICE(
        device,
        coo_to_csr_cpu<T>(rows.data<T>(), cols.data<T>(), nnz, num_rows, num_cols, out.indptr.data<T>(), indices,
                          eids),
        {
          const std::size_t bytes = cuda::coo_to_csr_scratch_bytes(nnz, num_rows, sizeof(T) == 8);
          Tensor scratch = Tensor::empty({static_cast<std::int64_t>(bytes / 8 + 1)}, DType::I64, device);
          cuda::coo_to_csr(rows.data<T>(), cols.data<T>(), nnz, num_rows, out.indptr.data<T>(), indices, eids,
                           scratch.raw_data(), bytes);
        });
  };
  if (rows.dtype() == DType::I32) run(std::int32_t{});
  else run(std::int64_t{});
  if (arrays == CsrArrays::structure) out.eids = Tensor();
  if (arrays == CsrArrays::edge_ids) out.indices = Tensor();
  return out;
}

Tensor degrees_from_indptr(const Tensor& indptr) {
  TOPO_CHECK(indptr.defined() && indptr.ndim() == 1 && indptr.numel() >= 1 && indptr.dtype() != DType::F32,
             "degrees_from_indptr: indptr must be a non-empty 1-d integer tensor, got {}", indptr.str());
  const std::int64_t num_rows = indptr.numel() - 1;
  Tensor out = Tensor::empty({num_rows}, indptr.dtype(), indptr.device());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    TOPO_ON_DEVICE(indptr.device(), degrees_cpu<T>(indptr.data<T>(), out.data<T>(), num_rows),
                   cuda::degrees_from_indptr(indptr.data<T>(), out.data<T>(), num_rows));
  };
  if (indptr.dtype() == DType::I32) run(std::int32_t{});
  else run(std::int64_t{});
  return out;
}

}  // namespace topo
