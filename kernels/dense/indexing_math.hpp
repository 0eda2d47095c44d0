#pragma once
// Row gathers/scatters and index validation: helpers shared by the CPU and CUDA backends, and the CUDA
// launcher declarations. Rows are moved as 4-byte words (every dtype is 4 or 8 bytes), so one gather kernel
// serves float32, int32 and int64 tensors.
#include <cstdint>

#include "kernels/hd.hpp"

namespace topo {

// Result of scanning an index tensor against [0, limit): the first position out of range (-1 when none),
// its value, and how many entries are in range. Entries equal to the ignore value (when one is given) are
// neither counted nor errors.
struct IndexScan {
  std::int64_t first_bad = -1;
  std::int64_t bad_value = 0;
  std::int64_t valid = 0;
};

TOPO_HD bool index_in_range(std::int64_t v, std::int64_t limit) { return v >= 0 && v < limit; }

// Host scan (serial: O(n) and far cheaper than the kernels it guards; errors must not be thrown from
// inside an OpenMP region, so validation runs before it).
template <class I>
IndexScan scan_indices_host(const I* index, std::int64_t n, std::int64_t limit, bool use_ignore,
                            std::int64_t ignore) {
  IndexScan scan;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t v = index[i];
    if (use_ignore && v == ignore) continue;
    if (index_in_range(v, limit)) {
      ++scan.valid;
    } else if (scan.first_bad < 0) {
      scan.first_bad = i;
      scan.bad_value = v;
    }
  }
  return scan;
}

namespace cuda {
// Device launchers (indexing_cuda.cu). `index64`: the index pointer holds int64 (else int32).
// Same contract as scan_indices_host; the one result comes back with a small device-to-host copy.
IndexScan scan_indices(const void* index, bool index64, std::int64_t n, std::int64_t limit, bool use_ignore,
                       std::int64_t ignore);
// out[i, :] = x[index[i], :] over rows of `row_words` 4-byte words; indices already validated.
void gather_rows(const void* x, const void* index, bool index64, void* out, std::int64_t m, std::int64_t row_words);
// out[index[i], :] += src[i, :] (out pre-zeroed), atomicAdd: summation order is not fixed on the GPU.
// skip_negative: entries below 0 (embedding_sum's kNoRow) add nothing.
void scatter_add_rows(const float* src, const void* index, bool index64, float* out, std::int64_t m,
                      std::int64_t row, bool skip_negative = false);
// out[i, :] += x[index[i], :] for the i whose index is >= 0 (float rows; indices already validated).
void gather_add_rows(const float* x, const void* index, bool index64, float* out, std::int64_t m, std::int64_t row);
// dst[r * dst_stride + c] = src[r * src_stride + c] for r < rows, c < width; all in 4-byte words.
void copy_strided(const void* src, std::int64_t src_stride, void* dst, std::int64_t dst_stride, std::int64_t rows,
                  std::int64_t width);
}  // namespace cuda

}  // namespace topo
