#pragma once
// Broadcasting between the per-row feature shapes of two operands (node and edge features), as DGL does:
// the shapes after the leading row dimension broadcast numpy-style, e.g. edge weights [E, H, 1] against
// node features [N, H, D] give messages [H, D]. For a dot product the last dimension is reduced instead.
#include <vector>

#include "kernels/sparse/bcast_math.hpp"
#include "kernels/tensor.hpp"

namespace topo {

struct FeatureBcast {
  Shape out_shape;                    // per-row output shape
  BcastView view;                     // lengths and offsets for the kernels (offsets null without broadcasting)
  std::vector<std::int64_t> lhs_off;  // [out_len] element offset into a lhs row (dot: offset of the K-chunk)
  std::vector<std::int64_t> rhs_off;

  FeatureBcast() = default;
  FeatureBcast(const FeatureBcast&) = delete;  // view points into the vectors
  FeatureBcast& operator=(const FeatureBcast&) = delete;
};

// Per-row feature shape of a [rows, ...] tensor.
Shape row_shape(const Tensor& t);

// `what` names the op in errors. With `dot`, both last dims must be equal and are reduced (output last dim 1).
void feature_bcast(const Shape& lhs, const Shape& rhs, bool dot, const char* what, FeatureBcast& out);

// The view for kernels on `device`: on CUDA the offsets are copied into `holder` (keep it alive while the
// kernel runs); on the CPU the view points into `bcast` itself.
BcastView bcast_view_on(const FeatureBcast& bcast, Device device, Tensor& holder);

}  // namespace topo
