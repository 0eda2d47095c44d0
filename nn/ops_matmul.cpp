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

namespace {

// linear over row parts (one part: linear itself): each part's rows projected into its row slice of one
// output; the backward reads the gradient's slices in place and sums the weight gradient over the parts.
Var linear_parts(const std::vector<Var>& xs, const Var& weight, const Var& bias, const char* name) {
  TOPO_CHECK(!xs.empty(), "{}: no inputs", name);
  std::vector<std::int64_t> offsets = {0};
  for (const Var& x : xs) {
    TOPO_CHECK(x.ndim() == 2, "{}: every input must be [rows, in], got {}", name, x.data().str());
    offsets.push_back(offsets.back() + x.size(0));
  }
  Tensor y = Tensor::empty({offsets.back(), weight.size(0)}, DType::F32, weight.data().device());
  const Tensor bd = bias.defined() ? bias.data() : Tensor();
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Tensor part = y.slice_rows(offsets[i], offsets[i + 1]);
    linear_into(xs[i].data(), weight.data(), bd, part);
  }
  std::vector<Var> inputs = xs;
  inputs.push_back(weight);
  inputs.push_back(bias);
  std::vector<Tensor> xd;
  for (const Var& x : xs) xd.push_back(x.data());
  return make_output(
      y, inputs,
      [xd, offsets, wd = weight.data(), bshape = bias.defined() ? bias.shape() : Shape{}](const Tensor& g,
                                                                                 const std::vector<bool>& needs) {
        const std::size_t n = xd.size();
        std::vector<Tensor> grads(n + 2);
        Tensor dw;
        for (std::size_t i = 0; i < n; ++i) {
          const Tensor gi = g.slice_rows(offsets[i], offsets[i + 1]);
          if (needs[i]) grads[i] = topo::matmul(gi, wd);
          if (!needs[n] || gi.size(0) == 0) continue;
          const bool first = !dw.defined();
          if (first) dw = Tensor::empty(wd.shape(), DType::F32, wd.device());
          gemm(true, false, 1.f, gi, xd[i], first ? 0.f : 1.f, dw);  // dW = sum over parts of g_i^T x_i
        }
        if (needs[n] && !dw.defined()) dw = Tensor::zeros(wd.shape(), DType::F32, wd.device());
        grads[n] = dw;
        if (needs[n + 1]) grads[n + 1] = sum_to_shape(g, bshape);
        return grads;
      },
      name);
}

}  // namespace

Var linear(const Var& x, const Var& weight, const Var& bias) { return linear_parts({x}, weight, bias, "linear"); }

Var linear_rows(const std::vector<Var>& xs, const Var& weight, const Var& bias) {
  return linear_parts(xs, weight, bias, "linear_rows");
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
