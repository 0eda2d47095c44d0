// matmul and its backward. With C = op(A) op(B) and G = dL/dC:
//   dop(A) = G op(B)^T, dop(B) = op(A)^T G, transposed back when the flag was set; each case below is one
//   GEMM with the flags chosen so nothing is materialised transposed.
#include "kernels/dense/binary.hpp"
#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/gemm.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

Var matmul(const Var& a, const Var& b, bool ta, bool tb) {
  const bool shared_b = a.ndim() == 3 && b.ndim() == 2;
  // dA for a batched transposed `a` against a shared `b` would need a 2-D @ 3-D product the GEMM
  // kernel does not offer; transpose `a` beforehand instead.
  TOPO_CHECK(!(shared_b && ta), "matmul: trans_a with a batched a {} and a shared 2-D b {} is not supported",
             shape_str(a.shape()), shape_str(b.shape()));
  return make_output(
      topo::matmul(a.data(), b.data(), ta, tb), {a, b},
      [ad = a.data(), bd = b.data(), ta, tb, shared_b](const Tensor& g, const std::vector<bool>& needs) {
        Tensor ga, gb;
        if (needs[0]) ga = ta ? topo::matmul(bd, g, tb, true) : topo::matmul(g, bd, false, !tb);
        if (needs[1]) {
          if (shared_b) {
            // b is shared across the batch: its gradient sums over batch and rows alike, so fold the
            // batch into the rows ([B, M, K] -> [B*M, K]) and use one 2-D GEMM.
            const Tensor a2 = ad.reshape({-1, ad.size(-1)}), g2 = g.reshape({-1, g.size(-1)});
            gb = tb ? topo::matmul(g2, a2, true, false) : topo::matmul(a2, g2, true, false);
          } else {
            gb = tb ? topo::matmul(g, ad, true, ta) : topo::matmul(ad, g, !ta, false);
          }
        }
        return std::vector<Tensor>{ga, gb};
      },
      "matmul");
}

Var linear(const Var& x, const Var& weight, const Var& bias) {
  return make_output(
      topo::linear(x.data(), weight.data(), bias.data()), {x, weight, bias},
      [xd = x.data(), wd = weight.data(), bshape = bias.shape()](const Tensor& g, const std::vector<bool>& needs) {
        return std::vector<Tensor>{needs[0] ? topo::matmul(g, wd) : Tensor(),
                                   needs[1] ? topo::matmul(g, xd, true, false) : Tensor(),
                                   needs[2] ? sum_to_shape(g, bshape) : Tensor()};
      },
      "linear");
}

Var flash_attention(const Var& q, const Var& k, const Var& v, const std::vector<std::int64_t>& lengths, float scale,
                    const std::vector<std::int64_t>& radii) {
  FlashAttentionOutput fwd = topo::flash_attention(q.data(), k.data(), v.data(), lengths, scale, radii);
  Tensor out = fwd.out;
  return make_output(
      out, {q, k, v},
      [qd = q.data(), kd = k.data(), vd = v.data(), lengths, radii, fwd, scale](const Tensor& g,
                                                                               const std::vector<bool>&) {
        FlashAttentionGrads d = flash_attention_backward(qd, kd, vd, lengths, fwd, g, scale, radii);
        return std::vector<Tensor>{d.dq, d.dk, d.dv};
      },
      "flash_attention");
}

Var flash_attention_packed(const Var& qkv, const std::vector<std::int64_t>& lengths, float scale,
                           const std::vector<std::int64_t>& radii) {
  FlashAttentionOutput fwd = topo::flash_attention_packed(qkv.data(), lengths, scale, radii);
  Tensor out = fwd.out;
  return make_output(
      out, {qkv},
      [qd = qkv.data(), lengths, radii, fwd, scale](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{flash_attention_packed_backward(qd, lengths, fwd, g, scale, radii)};
      },
      "flash_attention_packed");
}

}  // namespace topo::nn
