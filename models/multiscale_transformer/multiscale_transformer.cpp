#include "models/multiscale_transformer/multiscale_transformer.hpp"

#include "nn/ops.hpp"
#include "nn/readout.hpp"

namespace topo::models {

MultiScaleTopology multiscale_topology(const std::vector<std::int64_t>& lengths, const std::vector<Scale>& scales,
                                       Device device) {
  TOPO_CHECK(!lengths.empty(), "multiscale_topology: empty batch");
  TOPO_CHECK(!scales.empty(), "multiscale_topology: no scales");
  std::vector<std::int64_t> positions(lengths.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    TOPO_CHECK(lengths[i] >= 1, "multiscale_topology: sentence {} has length {} (must be >= 1)", i, lengths[i]);
    positions[i] = lengths[i] + 1;  // [CLS] + tokens
  }
  std::vector<RelationSpec> relations;
  for (std::size_t k = 0; k < scales.size(); ++k) {
    std::vector<std::int64_t> widths(lengths.size());
    for (std::size_t i = 0; i < lengths.size(); ++i) widths[i] = scales[k].width_for(lengths[i]);
    relations.push_back({{"pos", "scale" + std::to_string(k), "pos"}, builders::window_batch(positions, widths)});
  }
  MultiScaleTopology t;
  t.lengths = lengths;
  t.graph = HeteroGraph({builders::node_type("pos", positions)}, relations).to(device);
  for (int k = 0; k < t.graph.num_relations(); ++k) t.scales.push_back(relation_block(t.graph, k));
  return t;
}

MultiScaleTransformer::Layer::Layer(std::int64_t hidden, std::int64_t heads) {
  attention = register_module("attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads));
  norm = register_module("norm", std::make_shared<nn::LayerNorm>(hidden));
}

MultiScaleTransformer::MultiScaleTransformer(const MultiScaleConfig& config) : config_(config) {
  const EncoderConfig& e = config.encoder;
  TOPO_CHECK(e.heads >= 1 && e.hidden >= e.heads && e.hidden % e.heads == 0,
             "MultiScaleTransformer: heads ({}) must be >= 1 and divide hidden ({})", e.heads, e.hidden);
  TOPO_CHECK(e.layers >= 1, "MultiScaleTransformer: layers must be >= 1, got {}", e.layers);
  TOPO_CHECK(!config.scales.empty(), "MultiScaleTransformer: no scales");
  head_counts_ = head_distribution(config.alpha, e.layers, static_cast<std::int64_t>(config.scales.size()), e.heads);
  embedding = register_module("embedding", std::make_shared<SequenceEmbedding>(e.embedding()));
  cls = register_parameter("cls", {1, e.hidden}, nn::init::InitSpec::normal(0.f, 0.02f));
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < e.layers; ++l) layers->push_back(std::make_shared<Layer>(e.hidden, e.heads));
}

// Position rows: sentence b is [CLS] then its tokens (SequenceEmbedding's rows with cls as the lead row), so
// every sentence's positions are consecutive rows (the graph's node numbering, and the packed sequences of
// the band path).
struct MultiScaleTransformer::Positions {
  std::vector<std::int64_t> lengths;  // positions per sentence: tokens + 1
  Tensor token_rows, cls_rows;
};

MultiScaleTransformer::Positions MultiScaleTransformer::positions(const SequenceBatch& batch, Device device) const {
  std::vector<std::int64_t> token_rows, cls_rows;
  std::int64_t row = 0;
  for (std::int64_t len : batch.lengths) {
    cls_rows.push_back(row++);
    for (std::int64_t i = 0; i < len; ++i) token_rows.push_back(row++);
  }
  auto index = [&](const std::vector<std::int64_t>& v) {
    return Tensor::from_vector(v, {static_cast<std::int64_t>(v.size())}, device);
  };
  Positions p{{}, index(token_rows), index(cls_rows)};
  for (std::int64_t len : batch.lengths) p.lengths.push_back(len + 1);
  return p;
}

Encoding MultiScaleTransformer::readout(const nn::Var& h, const Positions& p, const SequenceBatch& batch) const {
  // The max (and mean) over each sentence's token rows of h in place (its [CLS] row leads them): no gather of the
  // tokens on the sentence feature's path, so a classifier's backward never scatters through one.
  nn::Var summary = config_.summary == SentenceSummary::Mean
                        ? nn::readout_nodes(h, batch.lengths, nn::Readout::Mean, 1)
                        : nn::index_select(h, p.cls_rows);
  return Encoding{nn::index_select(h, p.token_rows),
                  summary + nn::readout_nodes(h, batch.lengths, nn::Readout::Max, 1)};
}

Encoding MultiScaleTransformer::encode(const SequenceBatch& batch) {
  if (config_.band) return encode_band(batch);
  return encode(batch, multiscale_topology(batch.lengths, config_.scales, cls.device()));
}

Encoding MultiScaleTransformer::encode(const SequenceBatch& batch, const MultiScaleTopology& topology) {
  TOPO_CHECK(topology.lengths == batch.lengths, "MultiScaleTransformer: topology built for other sentence lengths");
  TOPO_CHECK(topology.scales.size() == config_.scales.size(), "MultiScaleTransformer: topology has {} scales, the model {}",
             topology.scales.size(), config_.scales.size());
  nn::Var h = embedding->forward(batch, cls);  // [N + B, d]
  const Positions p = positions(batch, h.device());
  for (std::size_t l = 0; l < layers->size(); ++l) {
    std::vector<nn::HeadGroup> groups;
    for (std::size_t k = 0; k < topology.scales.size(); ++k) groups.push_back({head_counts_[l][k], topology.scales[k]});
    h = layer(l).norm->forward_residual_relu(h, layer(l).attention->forward(groups, h));
  }
  return readout(h, p, batch);
}

std::vector<std::int64_t> MultiScaleTransformer::band_radii(std::size_t l,
                                                            const std::vector<std::int64_t>& lengths) const {
  std::vector<std::int64_t> radii;
  radii.reserve(lengths.size() * static_cast<std::size_t>(config_.encoder.heads));
  for (std::int64_t n : lengths)
    for (std::size_t k = 0; k < config_.scales.size(); ++k) {
      const std::int64_t width = config_.scales[k].width_for(n);  // odd: the window is i - r .. i + r
      radii.insert(radii.end(), static_cast<std::size_t>(head_counts_[l][k]), (width - 1) / 2);
    }
  return radii;
}

// The graph path's layer with the heads' windows as bands of one fused attention call (the layer's own
// GraphMultiHeadAttention, forward_packed), the heads in group order (scale 0's first), the sentences'
// positions packed as the kernel's sequences. The windows are clipped at the sentence ends as
// builders::window_batch clips them. On CUDA the kernel's band threads walk only their window, so this path
// runs there too.
Encoding MultiScaleTransformer::encode_band(const SequenceBatch& batch) {
  nn::Var h = embedding->forward(batch, cls);  // [N + B, d]
  const Positions p = positions(batch, h.device());
  for (std::size_t l = 0; l < layers->size(); ++l)
    h = layer(l).norm->forward_residual_relu(h, layer(l).attention->forward_packed(h, p.lengths, band_radii(l, batch.lengths)));
  return readout(h, p, batch);
}

}  // namespace topo::models
