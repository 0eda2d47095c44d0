#include "models/transformer/transformer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/readout.hpp"

namespace topo::models {

FullTopology full_topology(const std::vector<std::int64_t>& lengths, Device device) {
  TOPO_CHECK(!lengths.empty(), "full_topology: empty batch");
  for (std::size_t i = 0; i < lengths.size(); ++i)
    TOPO_CHECK(lengths[i] >= 1, "full_topology: sentence {} has length {} (must be >= 1)", i, lengths[i]);
  FullTopology t;
  t.lengths = lengths;
  t.graph = HeteroGraph({builders::node_type("tok", lengths)}, {{{"tok", "full", "tok"}, builders::full_batch(lengths)}})
                .to(device);
  t.attention = to_block(t.graph, "tok", {"full"});
  return t;
}

Transformer::Transformer(const TransformerConfig& config) : config_(config) {
  const EncoderConfig& e = config.encoder;
  TOPO_CHECK(e.heads > 0 && e.hidden % e.heads == 0, "Transformer: heads ({}) must divide hidden ({})", e.heads,
             e.hidden);
  TOPO_CHECK(e.layers >= 1, "Transformer: layers must be >= 1, got {}", e.layers);
  if (config_.ffn == 0) config_.ffn = 4 * e.hidden;
  embedding = register_module("embedding", std::make_shared<SequenceEmbedding>(e.embedding()));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < e.layers; ++l)
    layers->push_back(std::make_shared<Layer>(e.hidden, e.heads, config_.ffn, e.dropout));
}

Encoding Transformer::encode(const SequenceBatch& batch) {
  if (config_.dense) return config_.padded ? encode_padded(batch) : encode_dense(batch);
  return encode(batch, full_topology(batch.lengths, parameters().front().device()));
}

Encoding Transformer::encode(const SequenceBatch& batch, const FullTopology& topology) {
  TOPO_CHECK(topology.lengths == batch.lengths, "Transformer: topology built for other sentence lengths");
  nn::Var h = embedding->forward(batch);
  for (std::size_t l = 0; l < layers->size(); ++l)
    h = layer(l).finish(h, layer(l).attention->forward(topology.attention, h));
  return Encoding{h, nn::readout_nodes(h, batch.lengths, nn::Readout::Mean) +
                         nn::readout_nodes(h, batch.lengths, nn::Readout::Max)};
}

Encoding Transformer::encode_dense(const SequenceBatch& batch) {
  nn::Var h = embedding->forward(batch);  // [N, d], sentences packed one after another
  for (std::size_t l = 0; l < layers->size(); ++l)
    h = layer(l).finish(h, layer(l).attention->forward_packed(h, batch.lengths));
  return Encoding{h, nn::readout_nodes(h, batch.lengths, nn::Readout::Mean) +
                         nn::readout_nodes(h, batch.lengths, nn::Readout::Max)};
}

Encoding Transformer::encode_padded(const SequenceBatch& batch) {
  const nn::Var x = embedding->forward(batch);  // [N, d]
  const Device device = x.device();
  const std::int64_t B = batch.size(), N = batch.num_tokens(), d = config_.encoder.hidden;
  const std::int64_t H = config_.encoder.heads, dh = d / H;
  const std::int64_t L = *std::max_element(batch.lengths.begin(), batch.lengths.end());
  // Padding by gather: slot (b, i) reads token offset_b + i, or row N (an appended zero row) past the end.
  std::vector<std::int64_t> pad_index(B * L, N), token_slot;
  std::vector<float> key_mask(B * L, -std::numeric_limits<float>::infinity()), valid(B * L, 0.f);
  std::int64_t offset = 0;
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t i = 0; i < batch.lengths[b]; ++i) {
      pad_index[b * L + i] = offset + i;
      token_slot.push_back(b * L + i);
      key_mask[b * L + i] = 0.f;
      valid[b * L + i] = 1.f;
    }
    offset += batch.lengths[b];
  }
  const nn::Var padded_rows =
      nn::index_select(nn::concat({x, nn::Var(Tensor::zeros({1, d}, DType::F32, device))}, 0),
                       Tensor::from_vector(pad_index, {B * L}, device));
  nn::Var h = nn::reshape(padded_rows, {B, L, d});
  const nn::Var mask(Tensor::from_vector(key_mask, {B, 1, L}, device));  // broadcast over queries
  const std::vector<std::int64_t> head_sizes(static_cast<std::size_t>(H), dh);
  for (std::size_t l = 0; l < layers->size(); ++l) {
    const nn::GraphMultiHeadAttention& att = *layer(l).attention;
    const float scale = att.scale();
    const auto q = nn::split(att.q->forward(h), head_sizes, 2);
    const auto k = nn::split(att.k->forward(h), head_sizes, 2);
    const auto v = nn::split(att.v->forward(h), head_sizes, 2);
    std::vector<nn::Var> heads;
    for (std::int64_t i = 0; i < H; ++i)
      heads.push_back(nn::matmul(nn::softmax(nn::matmul(q[i], k[i], false, true) * scale + mask), v[i]));
    h = layer(l).finish(h, att.o->forward(H == 1 ? heads[0] : nn::concat(heads, 2)));
  }
  // Readout over real tokens only: masked mean and max (-inf on padding) per sentence.
  std::vector<float> inv_len(B);
  for (std::int64_t b = 0; b < B; ++b) inv_len[b] = 1.f / static_cast<float>(batch.lengths[b]);
  const nn::Var valid_mask(Tensor::from_vector(valid, {B, L, 1}, device));
  const nn::Var pad_mask(Tensor::from_vector(key_mask, {B, L, 1}, device));
  const nn::Var mean = nn::sum(h * valid_mask, 1) * nn::Var(Tensor::from_vector(inv_len, {B, 1}, device));
  const nn::Var max = nn::max(h + pad_mask, 1);
  const nn::Var tokens =
      nn::index_select(nn::reshape(h, {B * L, d}), Tensor::from_vector(token_slot, {N}, device));
  return Encoding{tokens, mean + max};
}

}  // namespace topo::models
