#include "models/topology_transformer/topology_transformer.hpp"

#include "nn/init.hpp"
#include "nn/ops.hpp"
#include "nn/readout.hpp"

namespace topo::models {

TopologyTransformer::Layer::Layer(const std::vector<std::string>& types, std::int64_t hidden, std::int64_t heads) {
  for (const std::string& t : types) {
    attention.push_back(register_module(t + "_attention", std::make_shared<nn::GraphMultiHeadAttention>(hidden, heads)));
    norm.push_back(register_module(t + "_norm", std::make_shared<nn::LayerNorm>(hidden)));
  }
}

TopologyTransformer::TopologyTransformer(const TopologyTransformerConfig& config)
    : config_(config), dst_types_(config.topology.destination_types()), band_(config.band && band_runs(config.topology)) {
  const EncoderConfig& e = config.encoder;
  TOPO_CHECK(e.hidden > 0 && e.heads > 0 && e.hidden % e.heads == 0,
             "TopologyTransformer: heads ({}) must divide hidden ({})", e.heads, e.hidden);
  TOPO_CHECK(e.layers >= 1, "TopologyTransformer: layers must be >= 1, got {}", e.layers);
  config.topology.check_heads(e.heads, e.layers);
  embedding = register_module("embedding", std::make_shared<SequenceEmbedding>(e.embedding()));
  for (const TopologyNodeType& t : config.topology.node_types)
    node_init.push_back(t.learned ? register_parameter("node_" + t.name, {t.count, e.hidden},
                                                       nn::init::InitSpec::normal(0.f, 0.02f))
                                  : nn::Var());
  layers = register_module("layers", std::make_shared<nn::ModuleList>());
  for (std::int64_t l = 0; l < e.layers; ++l) layers->push_back(std::make_shared<Layer>(dst_types_, e.hidden, e.heads));
}

// tok's rows: sentence b is its c in_sequence rows, then its tokens; `sequence` the per-sentence row counts.
struct TopologyTransformer::Rows {
  std::vector<std::int64_t> sequence;
  Tensor tokens;                     // the token rows of tok (undefined when c = 0: all of them)
  std::vector<Tensor> in_sequence;   // per node type (file order; undefined for the others): its rows of tok
};

TopologyTransformer::Rows TopologyTransformer::rows(const SequenceBatch& batch, Device device) const {
  const TopologySpec& spec = config_.topology;
  const std::int64_t c = spec.lead_count();
  Rows r;
  for (std::int64_t n : batch.lengths) r.sequence.push_back(c + n);
  r.in_sequence.resize(spec.node_types.size());
  if (c == 0) return r;
  auto index = [&](const std::vector<std::int64_t>& v) {
    return Tensor::from_vector(v, {static_cast<std::int64_t>(v.size())}, device);
  };
  std::vector<std::int64_t> tokens;
  std::int64_t first = 0;
  for (std::int64_t n : batch.lengths) {
    for (std::int64_t i = 0; i < n; ++i) tokens.push_back(first + c + i);
    first += c + n;
  }
  r.tokens = index(tokens);
  std::int64_t offset = 0;  // of the type's rows within a sentence's lead rows
  for (std::size_t k = 0; k < spec.node_types.size(); ++k) {
    const TopologyNodeType& t = spec.node_types[k];
    if (!t.in_sequence) continue;
    std::vector<std::int64_t> picks;
    first = 0;
    for (std::int64_t n : batch.lengths) {
      for (std::int64_t i = 0; i < t.count; ++i) picks.push_back(first + offset + i);
      first += c + n;
    }
    r.in_sequence[k] = index(picks);
    offset += t.count;
  }
  return r;
}

nn::Var TopologyTransformer::lead() const {
  std::vector<nn::Var> parts;
  for (std::size_t k = 0; k < node_init.size(); ++k)
    if (config_.topology.node_types[k].in_sequence) parts.push_back(node_init[k]);
  if (parts.empty()) return nn::Var();
  return parts.size() == 1 ? parts[0] : nn::concat(parts, 0);
}

nn::Var TopologyTransformer::epilogue(const nn::LayerNorm& norm, const nn::Var& x, const nn::Var& update) const {
  return config_.residual ? norm.forward_residual_relu(x, update) : norm.forward(relu(update));
}

Encoding TopologyTransformer::encode(const SequenceBatch& batch) {
  if (band_) return encode_band(batch);
  return encode(batch, build_topology(config_.topology, batch.lengths, embedding->position_embedding->weight.device()));
}

Encoding TopologyTransformer::encode(const SequenceBatch& batch, const TopologyGraph& graph) {
  const TopologySpec& spec = config_.topology;
  TOPO_CHECK(graph.lengths == batch.lengths, "TopologyTransformer: topology built for other sentence lengths");
  const nn::Var lead_rows = lead();
  const nn::Var h = lead_rows.defined() ? embedding->forward(batch, lead_rows) : embedding->forward(batch);
  const Rows r = rows(batch, h.device());
  const nn::Var e = r.tokens.defined() ? nn::index_select(h, r.tokens) : h;  // E: the token rows
  std::map<std::string, nn::Var> states = {{kTokenType, h}};
  for (const TopologyRelation& relation : spec.relations)
    if (relation.src == kEmbeddingType) states[kEmbeddingType] = e;
  const auto sentences = static_cast<std::int64_t>(batch.lengths.size());
  for (std::size_t k = 0; k < spec.node_types.size(); ++k) {
    const TopologyNodeType& t = spec.node_types[k];
    if (t.in_sequence) continue;
    // Sentence b's nodes are rows b * count .. of the type: the learned rows tiled, or the sentence's mean.
    std::vector<std::int64_t> picks;
    for (std::int64_t b = 0; b < sentences; ++b)
      for (std::int64_t i = 0; i < t.count; ++i) picks.push_back(t.learned ? i : b);
    nn::Var init = t.learned ? node_init[k] : nn::readout_nodes(e, batch.lengths, nn::Readout::Mean);
    const bool identity = !t.learned && t.count == 1;
    states[t.name] = identity ? init
                              : nn::index_select(init, Tensor::from_vector(picks, {static_cast<std::int64_t>(picks.size())},
                                                                           h.device()));
  }
  for (std::size_t l = 0; l < layers->size(); ++l) {
    const Layer& layer = this->layer(l);
    std::map<std::string, nn::Var> next = states;
    for (std::size_t d = 0; d < dst_types_.size(); ++d) {
      const std::map<std::string, nn::Var>& read = spec.schedule == UpdateSchedule::Sequential ? next : states;
      std::vector<nn::HeadGroup> groups;
      for (std::size_t g = 0; g < spec.head_groups.size(); ++g)
        groups.push_back({spec.head_groups[g].heads_in_layer(l, config_.encoder.heads), graph.blocks[d][g]});
      const nn::Var& x = read.at(dst_types_[d]);
      next[dst_types_[d]] = epilogue(*layer.norm[d], x, layer.attention[d]->forward(groups, x, read));
    }
    states = std::move(next);
  }
  return readout(states.at(kTokenType), states, r, batch);
}

// The graph path's layer with each head's window as a band of one fused attention call (forward_packed), the
// heads in group order, the sentences' tok rows packed as the kernel's sequences; full relations see the whole
// sentence. Only for patterns band_runs() accepts.
Encoding TopologyTransformer::encode_band(const SequenceBatch& batch) {
  const TopologySpec& spec = config_.topology;
  TOPO_CHECK(band_runs(spec), "{}: the band path needs tok as the only destination and one window or full "
             "relation over tok per head group", spec.source);
  const nn::Var lead_rows = lead();
  nn::Var h = lead_rows.defined() ? embedding->forward(batch, lead_rows) : embedding->forward(batch);
  const Rows r = rows(batch, h.device());
  bool windows = false;
  for (const TopologyHeadGroup& g : spec.head_groups)
    windows |= spec.relations[static_cast<std::size_t>(g.relations[0])].builder == TopologyBuilderKind::Window;
  for (std::size_t l = 0; l < layers->size(); ++l) {
    std::vector<std::int64_t> radii;  // [sentences * heads]; empty: every head sees its whole sentence
    if (windows)
      for (std::size_t b = 0; b < batch.lengths.size(); ++b)
        for (const TopologyHeadGroup& g : spec.head_groups) {
          const TopologyRelation& rel = spec.relations[static_cast<std::size_t>(g.relations[0])];
          const std::int64_t radius = rel.builder == TopologyBuilderKind::Window ? window_radius(rel, batch.lengths[b])
                                                                                 : r.sequence[b];
          radii.insert(radii.end(), static_cast<std::size_t>(g.heads_in_layer(l, config_.encoder.heads)), radius);
        }
    h = epilogue(*layer(l).norm[0], h, layer(l).attention[0]->forward_packed(h, r.sequence, radii));
  }
  return readout(h, {{kTokenType, h}}, r, batch);
}

Encoding TopologyTransformer::readout(const nn::Var& tok, const std::map<std::string, nn::Var>& states, const Rows& r,
                                      const SequenceBatch& batch) const {
  const TopologySpec& spec = config_.topology;
  const std::int64_t c = spec.lead_count();
  nn::Var sentence;
  auto add = [&](const nn::Var& v) { sentence = sentence.defined() ? sentence + v : v; };
  for (std::size_t k = 0; k < spec.node_types.size(); ++k) {
    const TopologyNodeType& t = spec.node_types[k];
    // The type's rows, sentence by sentence (count each): their mean per sentence.
    const nn::Var nodes = t.in_sequence ? nn::index_select(tok, r.in_sequence[k]) : states.at(t.name);
    add(t.count == 1 ? nodes
                     : nn::readout_nodes(nodes, std::vector<std::int64_t>(batch.lengths.size(), t.count), nn::Readout::Mean));
  }
  // The max over each sentence's token rows of tok in place (its lead rows before them).
  add(nn::readout_nodes(tok, batch.lengths, nn::Readout::Max, c));
  return Encoding{r.tokens.defined() ? nn::index_select(tok, r.tokens) : tok, sentence};
}

}  // namespace topo::models
