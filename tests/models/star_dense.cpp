#include "tests/models/star_dense.hpp"

#include <cmath>
#include <limits>

namespace topo::models {
namespace {

nn::Var rows(const nn::Var& x, std::int64_t begin, std::int64_t count) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) idx[i] = begin + i;
  return nn::index_select(x, Tensor::from_vector(idx, {count}, x.device()));
}

// Which of the satellite context [h_0..h_{n-1}, e_0..e_{n-1}, s] satellite i attends to.
Tensor satellite_mask(std::int64_t n, StarVariant variant, Device device) {
  const float blocked = -std::numeric_limits<float>::infinity();
  std::vector<float> m(static_cast<std::size_t>(n * (2 * n + 1)), blocked);
  auto allow = [&](std::int64_t i, std::int64_t j) { m[i * (2 * n + 1) + j] = 0.f; };
  for (std::int64_t i = 0; i < n; ++i) {
    allow(i, i);
    allow(i, n + i);
    if (variant != StarVariant::NoRing) {
      allow(i, (i + n - 1) % n);
      allow(i, (i + 1) % n);
    }
    if (variant != StarVariant::NoRadical) allow(i, 2 * n);
  }
  return Tensor::from_vector(m, {n, 2 * n + 1}, device);
}

}  // namespace

nn::Var dense_masked_attention(const nn::GraphMultiHeadAttention& attention, const nn::Var& queries,
                               const nn::Var& context, const Tensor& mask) {
  const std::int64_t heads = attention.heads(), dh = attention.dim() / heads;
  const std::vector<std::int64_t> sizes(static_cast<std::size_t>(heads), dh);
  const auto q = nn::split(attention.q->forward(queries), sizes, 1);
  const auto k = nn::split(attention.k->forward(context), sizes, 1);
  const auto v = nn::split(attention.v->forward(context), sizes, 1);
  const nn::Var m(mask);
  std::vector<nn::Var> out;
  for (std::int64_t h = 0; h < heads; ++h) {
    const nn::Var scores = nn::matmul(q[h], k[h], false, true) * (1.f / std::sqrt(static_cast<float>(dh))) + m;
    out.push_back(nn::matmul(nn::softmax(scores), v[h]));
  }
  return attention.o->forward(heads == 1 ? out[0] : nn::concat(out, 1));
}

Encoding star_dense_reference(const StarTransformer& model, const SequenceBatch& batch) {
  const StarConfig& cfg = model.config();
  const nn::Var e_all = model.embed(batch);
  const Device device = e_all.device();
  std::vector<nn::Var> tokens, sentences;
  std::int64_t offset = 0;
  for (std::int64_t n : batch.lengths) {
    const nn::Var e = rows(e_all, offset, n);
    offset += n;
    nn::Var h = e;
    nn::Var s = nn::mean(e, 0, /*keepdim=*/true);  // [1, d]
    const Tensor sat_mask = satellite_mask(n, cfg.variant, device);
    const Tensor relay_mask = Tensor::zeros({1, n + 1}, DType::F32, device);
    for (std::size_t l = 0; l < model.layers->size(); ++l) {
      const StarTransformer::Layer& layer = model.layer(l);
      nn::Var update = nn::relu(dense_masked_attention(*layer.satellite_attention, h, nn::concat({h, e, s}, 0), sat_mask));
      h = layer.satellite_norm->forward(cfg.residual ? h + update : update);
      update = nn::relu(dense_masked_attention(*layer.relay_attention, s, nn::concat({h, s}, 0), relay_mask));
      s = layer.relay_norm->forward(cfg.residual ? s + update : update);
    }
    tokens.push_back(h);
    sentences.push_back(s + nn::max(h, 0, /*keepdim=*/true));
  }
  return Encoding{nn::concat(tokens, 0), nn::concat(sentences, 0)};
}

}  // namespace topo::models
