#pragma once
// Row gathers and scatters, concatenation and splitting. Index tensors are int32 or int64; an index out of
// range is a topo::Error naming its position and value.
#include <optional>
#include <vector>

#include "kernels/dense/indexing_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

// out[i, ...] = x[index[i], ...]: x [N, ...], index [M] -> [M, ...].
Tensor index_select(const Tensor& x, const Tensor& index);
// out [num_rows, ...] = 0; out[index[i], ...] += src[i, ...]: the backward of index_select.
// CPU: deterministic (threads own column ranges, no atomics).
Tensor index_add(std::int64_t num_rows, const Tensor& index, const Tensor& src);

// Embedding lookup: weight [V, D], ids of any shape -> ids.shape + [D]. Backward: embedding_backward.
Tensor embedding(const Tensor& weight, const Tensor& ids);
Tensor embedding_backward(const Tensor& grad, const Tensor& ids, std::int64_t num_embeddings);

// Row look-ups summed over several tables in one pass: out[i, :] = sum over t of tables[t][ids[t][i], :], where
// ids[t][i] == kNoRow leaves table t out of row i (a row every table leaves out is 0). tables[t] float32
// [V_t, D] (one D), ids[t] int32/int64 [M], all on one device; the sum runs in table order. Token + position
// embeddings (and a [CLS] row from a table of its own, in place) without an [M, D] tensor per table and their
// sum: on Multi-Scale's input (16,896 rows of 300) that was four [M, D] passes more than this one.
// The backward, per table: embedding_sum_backward(grad, ids[t], V_t), the scatter-add of embedding_backward
// that skips the rows marked kNoRow.
inline constexpr std::int64_t kNoRow = -1;
Tensor embedding_sum(const std::vector<Tensor>& tables, const std::vector<Tensor>& ids);
Tensor embedding_sum_backward(const Tensor& grad, const Tensor& ids, std::int64_t num_embeddings);

// Concatenation along `dim` (all other dims equal); split is its inverse (sizes sum to x.size(dim)).
Tensor concat(const std::vector<Tensor>& xs, int dim);
std::vector<Tensor> split(const Tensor& x, const std::vector<std::int64_t>& sizes, int dim);
// A packed projection's parts: x [rows, P, ...] -> P tensors [rows, ...] (copies; one split), and back
// (pack_parts: P tensors [rows, ...] -> [rows, P, ...], one concat). The fused attention kernels read packed
// q/k/v in place on the CPU; their CUDA paths go through these.
std::vector<Tensor> unpack_parts(const Tensor& x);
Tensor pack_parts(const std::vector<Tensor>& parts);

// Scans an int32/int64 index tensor of any shape against [0, limit), skipping entries equal to `ignore`
// (see IndexScan). On CUDA this synchronises (one small copy back). Shared by the ops that validate ids.
IndexScan scan_indices(const Tensor& index, std::int64_t limit, std::optional<std::int64_t> ignore = {});

}  // namespace topo
