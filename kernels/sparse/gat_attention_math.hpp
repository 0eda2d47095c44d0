#pragma once
// GAT's edge attention (Velickovic et al. 2018), per edge and head, shared by the CPU and CUDA backends:
//   x_e = el[u] + er[v], s_e = LeakyReLU(x_e), a_e = exp(s_e - lse_v) (softmax over v's in-edges),
//   a'_e = a_e * keep_e (attention dropout: keep_e = 0 or 1 / (1 - p), as topo::dropout draws it for element
//   e * H + h of an [E, H] tensor), out_v = sum_e a'_e z_u.
// Backward from g_v = dL/dout_v: dz_u += a'_e g_v; with dot_e = g_v . z_u and D_v = g_v . out_v
// (= sum_e a_e keep_e dot_e, the softmax's row term), ds_e = a_e (keep_e dot_e - D_v), dx_e = ds_e LeakyReLU'(x_e),
// del_u += dx_e, der_v += dx_e. Every per-edge quantity is remade from node-sized tensors (el, er, lse, D) and the
// dropout counter, so neither pass keeps anything per edge.
#include <cstdint>

#include "kernels/dense/fast_exp.hpp"
#include "kernels/dense/random_math.hpp"
#include "kernels/hd.hpp"

namespace topo {

// Attention dropout as the kernels see it: p == 0 is none; element g of the mask is uniform_at(seed, offset + g).
struct GatDropout {
  float p = 0.f;
  float scale = 1.f;  // 1 / (1 - p), computed once on the host (as topo::dropout does)
  std::uint64_t seed = 0, offset = 0;
};

// x times a selected constant, not a select of x and slope * x: GCC (-ftrapping-math) will not if-convert a
// product inside a branch, which kept the CPU's per-head loops scalar. NaN stays NaN.
TOPO_HD float gat_leaky(float x, float slope) { return x * (x > 0.f ? 1.f : slope); }
// d LeakyReLU / dx as leaky_relu's backward takes it (slope at 0).
TOPO_HD float gat_leaky_grad(float x, float slope) { return x > 0.f ? 1.f : slope; }

// keep_e of mask element g (= e * H + h): 0 or drop.scale; 1 without dropout.
TOPO_HD float gat_keep(const GatDropout& drop, std::uint64_t g) {
  if (drop.p == 0.f) return 1.f;
  return dropout_apply(1.f, uniform_at(drop.seed, drop.offset + g), drop.p, drop.scale);
}

// The score gradient dx_e of one edge and head from its softmax weight a, keep factor, dot_e, D_v and
// LeakyReLU'(x_e).
TOPO_HD float gat_score_grad(float a, float keep, float dot, float row_term, float leaky_grad) {
  return a * (keep * dot - row_term) * leaky_grad;
}

namespace cuda {
// in_csr rows = destinations (indices: sources; eids: COO ids). el [num_src, H], er [rows, H], z [num_src, H, F]
// -> out [rows, H, F], lse [rows, H].
void gat_attention(const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
                   std::int64_t rows, std::int64_t heads, std::int64_t features, float slope, GatDropout drop,
                   const float* el, const float* er, const float* z, float* out, float* lse);
void gat_attention(const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
                   std::int64_t rows, std::int64_t heads, std::int64_t features, float slope, GatDropout drop,
                   const float* el, const float* er, const float* z, float* out, float* lse);
// Destination pass: D [rows, H] and der [rows, H].
void gat_attention_backward_dst(const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
                                std::int64_t rows, std::int64_t heads, std::int64_t features, float slope,
                                GatDropout drop, const float* el, const float* er, const float* z, const float* lse,
                                const float* dout, float* row_term, float* der);
void gat_attention_backward_dst(const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
                                std::int64_t rows, std::int64_t heads, std::int64_t features, float slope,
                                GatDropout drop, const float* el, const float* er, const float* z, const float* lse,
                                const float* dout, float* row_term, float* der);
// Source pass over out_csr (rows = sources, indices = destinations): del [rows, H], dz [rows, H, F].
void gat_attention_backward_src(const std::int32_t* indptr, const std::int32_t* indices, const std::int32_t* eids,
                                std::int64_t rows, std::int64_t heads, std::int64_t features, float slope,
                                GatDropout drop, const float* el, const float* er, const float* z, const float* lse,
                                const float* dout, const float* row_term, float* del, float* dz);
void gat_attention_backward_src(const std::int64_t* indptr, const std::int64_t* indices, const std::int64_t* eids,
                                std::int64_t rows, std::int64_t heads, std::int64_t features, float slope,
                                GatDropout drop, const float* el, const float* er, const float* z, const float* lse,
                                const float* dout, const float* row_term, float* del, float* dz);
}  // namespace cuda

}  // namespace topo
