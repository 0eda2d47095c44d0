// Dropout, embedding, row gathers, concat and split.
#include "kernels/dense/indexing.hpp"
#include "kernels/dense/random.hpp"
#include "nn/ops.hpp"

namespace topo::nn {

// One per thread, as grad mode: two threads training at once each draw the masks a sequential run would
// (a process-wide generator would interleave their offsets, and race on them).
Generator& default_generator() {
  thread_local Generator generator;
  return generator;
}
void set_seed(std::uint64_t seed) { default_generator().set_seed(seed); }

Var dropout(const Var& x, float p, bool training, Generator& gen) {
  TOPO_CHECK(p >= 0.f && p < 1.f, "dropout: p must be in [0, 1), got {}", p);
  if (!training || p == 0.f) return x;
  const std::uint64_t seed = gen.seed(), offset = gen.advance(static_cast<std::uint64_t>(x.numel()));
  // The mask is drawn once and kept as bits (1/32 of x's bytes): the backward, and a lazy output's slabs made
  // forward and again for a weight gradient, apply it instead of drawing the stream again (the draws were a
  // third of GraphSAGE's elementwise time at 100k nodes, its input's mask drawn twice an epoch).
  const auto backward_with = [p](const Tensor& mask) {
    return [p, mask](const Tensor& g, const std::vector<bool>&) {
      return std::vector<Tensor>{dropout_apply_mask(g, mask, p)};
    };
  };
  if (!x.is_leaf() || x.ndim() == 0 || x.is_lazy()) {
    MaskedDropout d = dropout_with_mask(x.data(), p, seed, offset);  // one pass: y and the bits
    return make_output(d.y, {x}, backward_with(d.mask), "dropout");
  }
  const Tensor mask = dropout_mask(x.numel(), p, seed, offset, x.device());
  // A leaf keeps its data, so any rows of y are made, bitwise, from it and the mask: y is lazy (Var::lazy) and a
  // linear over it never makes it whole.
  const std::int64_t row = x.size(0) == 0 ? 0 : x.numel() / x.size(0);
  return make_lazy_output(
      x.shape(), x.device(),
      [xd = x.data(), p, mask, row](std::int64_t begin, std::int64_t end) {
        return dropout_apply_mask(xd.slice_rows(begin, end), mask, p, begin * row);
      },
      {x}, backward_with(mask), "dropout");
}

Var embedding(const Var& weight, const Tensor& ids) {
  return make_output(
      topo::embedding(weight.data(), ids), {weight},
      [ids, rows = weight.size(0)](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{embedding_backward(g, ids, rows)};
      },
      "embedding");
}

Var embedding_sum(const std::vector<Var>& tables, const std::vector<Tensor>& ids) {
  std::vector<Tensor> data;
  std::vector<std::int64_t> rows;
  for (const Var& t : tables) {
    data.push_back(t.data());
    rows.push_back(t.size(0));
  }
  return make_output(
      topo::embedding_sum(data, ids), tables,
      [ids, rows](const Tensor& g, const std::vector<bool>& needs) {
        std::vector<Tensor> grads(ids.size());
        for (std::size_t t = 0; t < ids.size(); ++t)
          if (needs[t]) grads[t] = embedding_sum_backward(g, ids[t], rows[t]);
        return grads;
      },
      "embedding_sum");
}

Var index_select(const Var& x, const Tensor& index) {
  return make_output(
      topo::index_select(x.data(), index), {x},
      [index, rows = x.size(0)](const Tensor& g, const std::vector<bool>&) {
        return std::vector<Tensor>{index_add(rows, index, g)};
      },
      "index_select");
}

Var concat(const std::vector<Var>& xs, int dim) {
  TOPO_CHECK(!xs.empty(), "concat: no inputs");
  std::vector<Tensor> data;
  std::vector<std::int64_t> sizes;
  for (const Var& x : xs) {
    data.push_back(x.data());
    sizes.push_back(x.size(dim));
  }
  return make_output(
      topo::concat(data, dim), xs,
      [sizes, dim](const Tensor& g, const std::vector<bool>&) { return topo::split(g, sizes, dim); }, "concat");
}

std::vector<Var> split(const Var& x, const std::vector<std::int64_t>& sizes, int dim) {
  std::vector<Tensor> pieces = topo::split(x.data(), sizes, dim);
  const int d = dim < 0 ? dim + x.ndim() : dim;  // topo::split has validated dim and sizes
  const std::int64_t total = x.size(d);
  std::vector<Var> out;
  std::int64_t begin = 0;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    // Each piece is its own node: its gradient is padded with zeros to x's shape. Summing the pieces'
    // padded gradients costs O(pieces * numel), fine for the few pieces (heads, q/k/v) split is used for.
    const std::int64_t before = begin, after = total - begin - sizes[i];
    out.push_back(make_output(
        pieces[i], {x},
        [shape = x.shape(), d, before, after](const Tensor& g, const std::vector<bool>&) {
          std::vector<Tensor> parts;
          Shape pad = shape;
          if (before > 0) {
            pad[d] = before;
            parts.push_back(Tensor::zeros(pad, DType::F32, g.device()));
          }
          parts.push_back(g);
          if (after > 0) {
            pad[d] = after;
            parts.push_back(Tensor::zeros(pad, DType::F32, g.device()));
          }
          return std::vector<Tensor>{parts.size() == 1 ? g : topo::concat(parts, d)};
        },
        "split"));
    begin += sizes[i];
  }
  return out;
}

}  // namespace topo::nn
