// matmul and its backward. With C = op(A) op(B) and G = dL/dC:
//   dop(A) = G op(B)^T, dop(B) = op(A)^T G, transposed back when the flag was set; each case below is one
//   GEMM with the flags chosen so nothing is materialised transposed.
#include <algorithm>
#include <functional>

#include "kernels/dense/binary.hpp"
#include "kernels/dense/flash_attention.hpp"
#include "kernels/dense/gemm.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

namespace {

using RowsFn = std::function<Tensor(std::int64_t begin, std::int64_t end)>;

// Elements of a recomputed operand made at once in a backward: 4 MiB, well inside a last-level cache.
constexpr std::int64_t kRecomputeSlab = 1 << 20;

// The rows' recipe of a 2-D operand whose data a weight gradient would keep (VarImpl::recompute_rows), or
// null where the data is kept.
RowsFn recipe_of(const Var& x) { return x.ndim() == 2 ? x.impl()->recompute_rows : nullptr; }

// f(begin, end) over the row slabs of an operand [rows, width] made from its recipe: slabs of about
// kRecomputeSlab elements, fixed by the shape (so a sum over them has a fixed order too).
template <class F>
void for_each_slab(std::int64_t rows, std::int64_t width, F&& f) {
  const std::int64_t step = std::max<std::int64_t>(1, kRecomputeSlab / std::max<std::int64_t>(1, width));
  for (std::int64_t r = 0; r < rows; r += step) f(r, std::min(rows, r + step));
}

// out = (accumulate ? out : 0) + sum over row slabs of L^T R, where L, R are g's rows [rows, *] and the
// recomputed operand's rows [rows, width] (g first when g_left); each slab is made again and folded in while
// it is in cache.
void add_slab_products(const Tensor& g, const RowsFn& remake, std::int64_t width, bool g_left, bool accumulate,
                       Tensor& out) {
  if (g.size(0) == 0 && !accumulate) out = Tensor::zeros(out.shape(), DType::F32, out.device());
  for_each_slab(g.size(0), width, [&](std::int64_t r, std::int64_t end) {
    const Tensor gs = g.slice_rows(r, end), xs = remake(r, end);
    gemm(true, false, 1.f, g_left ? gs : xs, g_left ? xs : gs, accumulate || r > 0 ? 1.f : 0.f, out);
  });
}

}  // namespace

Var matmul(const Var& a, const Var& b, bool ta, bool tb) {
  const bool shared_b = a.ndim() == 3 && b.ndim() == 2;
  // dA for a batched transposed `a` against a shared `b` would need a 2-D @ 3-D product the GEMM
  // kernel does not offer; transpose `a` beforehand instead.
  TOPO_CHECK(!(shared_b && ta), "matmul: trans_a with a batched a {} and a shared 2-D b {} is not supported",
             shape_str(a.shape()), shape_str(b.shape()));
  // Each operand is kept only for the other's gradient; `a` not even then where its rows can be made again.
  const RowsFn a_rows = !ta && b.ndim() == 2 ? recipe_of(a) : nullptr;  // a [M, K] from its recipe, by slabs
  const RowsFn remake_a = b.requires_grad() ? a_rows : nullptr;
  Tensor y;
  if (a_rows && a.is_lazy()) {
    const Tensor& bd = b.data();
    TOPO_CHECK(a.size(1) == (tb ? bd.size(1) : bd.size(0)), "matmul: a {} and b {}{} do not chain",
               shape_str(a.shape()), bd.str(), tb ? " (transposed)" : "");
    y = Tensor::empty({a.size(0), tb ? bd.size(0) : bd.size(1)}, DType::F32, bd.device());
    for_each_slab(a.size(0), a.size(1), [&](std::int64_t r, std::int64_t end) {
      Tensor ys = y.slice_rows(r, end);
      gemm(false, tb, 1.f, a_rows(r, end), bd, 0.f, ys);
    });
  } else {
    y = topo::matmul(a.data(), b.data(), ta, tb);
  }
  return make_output(
      y, {a, b},
      [ad = b.requires_grad() && !remake_a ? a.data() : Tensor(), bd = a.requires_grad() ? b.data() : Tensor(),
       remake_a, bshape = b.shape(), ta, tb, shared_b](const Tensor& g, const std::vector<bool>& needs) {
        Tensor ga, gb;
        if (needs[0]) ga = ta ? topo::matmul(bd, g, tb, true) : topo::matmul(g, bd, false, !tb);
        if (needs[1]) {
          if (remake_a) {
            // a [M, K] made again: dB = a^T G [K, N], or G^T a [N, K] when b was transposed.
            gb = Tensor::empty(bshape, DType::F32, g.device());
            add_slab_products(g, remake_a, tb ? bshape[1] : bshape[0], tb, false, gb);
          } else if (shared_b) {
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
    if (!xs[i].is_lazy()) {
      linear_into(xs[i].data(), weight.data(), bd, part);
      continue;
    }
    const RowsFn rows = recipe_of(xs[i]);  // never made whole: projected slab by slab
    for_each_slab(part.size(0), xs[i].size(1), [&](std::int64_t r, std::int64_t end) {
      Tensor ps = part.slice_rows(r, end);
      linear_into(rows(r, end), weight.data(), bd, ps);
    });
  }
  std::vector<Var> inputs = xs;
  inputs.push_back(weight);
  inputs.push_back(bias);
  // What the weight gradient reads of each part: its data, or the rows' recipe where the part has one (the
  // data then goes with the forward). Only kept when the weight takes a gradient.
  std::vector<Tensor> xd;
  std::vector<RowsFn> remake;
  for (const Var& x : xs) {
    remake.push_back(weight.requires_grad() ? recipe_of(x) : nullptr);
    xd.push_back(weight.requires_grad() && !remake.back() ? x.data() : Tensor());
  }
  return make_output(
      y, inputs,
      [xd, remake, offsets, wd = weight.data(), bshape = bias.defined() ? bias.shape() : Shape{}](
          const Tensor& g, const std::vector<bool>& needs) {
        const std::size_t n = xd.size();
        std::vector<Tensor> grads(n + 2);
        Tensor dw;
        for (std::size_t i = 0; i < n; ++i) {
          const Tensor gi = g.slice_rows(offsets[i], offsets[i + 1]);
          if (needs[i]) grads[i] = topo::matmul(gi, wd);
          if (!needs[n] || gi.size(0) == 0) continue;
          const bool first = !dw.defined();
          if (first) dw = Tensor::empty(wd.shape(), DType::F32, wd.device());
          // dW = sum over parts of g_i^T x_i
          if (remake[i]) add_slab_products(gi, remake[i], wd.size(1), true, !first, dw);
          else gemm(true, false, 1.f, gi, xd[i], first ? 0.f : 1.f, dw);
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
