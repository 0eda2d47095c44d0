#include "models/graph_nets/graph_nets.hpp"

#include "kernels/error.hpp"
#include "nn/ops.hpp"

namespace topo::models {

namespace {

std::int64_t output_width(const GraphNetConfig& c) { return c.output_dim > 0 ? c.output_dim : c.hidden; }

// The batch's graph and its one relation: node features must be one row per node.
std::string single_relation(const SequenceBatch& batch, const char* model) {
  TOPO_CHECK(batch.graph != nullptr, "{} reads a graph, and this batch has none (a graph task such as node-classify "
             "gives one)", model);
  const HeteroGraph& g = *batch.graph;
  TOPO_CHECK(g.num_node_types() == 1 && g.num_relations() == 1,
             "{} reads a graph of one node type and one relation, got {} and {}", model, g.num_node_types(),
             g.num_relations());
  TOPO_CHECK(batch.features.defined() && batch.features.ndim() == 2 && batch.features.size(0) == g.num_nodes(0),
             "{}: node features must be [num_nodes = {}, in], got {}", model, g.num_nodes(0),
             batch.features.defined() ? shape_str(batch.features.shape()) : std::string("none"));
  return g.canonical_etypes()[0].etype;
}

nn::Generator& generator_of(const GraphNetConfig& c) { return c.generator ? *c.generator : nn::default_generator(); }

}  // namespace

GcnEncoder::GcnEncoder(const GraphNetConfig& config) : config_(config) {
  TOPO_CHECK(config.layers >= 1 && config.input_dim >= 1 && config.hidden >= 1,
             "gcn: layers {}, input features {} and hidden {} must be >= 1", config.layers, config.input_dim,
             config.hidden);
  for (std::int64_t l = 0; l < config.layers; ++l) {
    const bool last = l + 1 == config.layers;
    nn::GraphConvOptions options;
    if (!last) options.activation = nn::Activation::Relu;
    convs_.push_back(register_module(
        "conv" + std::to_string(l + 1),
        std::make_shared<nn::GraphConv>(l == 0 ? config.input_dim : config.hidden,
                                        last ? output_width(config) : config.hidden, options)));
  }
}

Encoding GcnEncoder::encode(const SequenceBatch& batch) {
  const std::string etype = single_relation(batch, "gcn");
  nn::Var h(batch.features);
  for (std::size_t l = 0; l < convs_.size(); ++l) {
    h = convs_[l]->forward(*batch.graph, etype, h);
    if (l + 1 < convs_.size()) h = nn::dropout(h, config_.dropout, is_training(), generator_of(config_));
  }
  return {h, {}};
}

std::int64_t GcnEncoder::hidden_size() const { return output_width(config_); }

GatEncoder::GatEncoder(const GraphNetConfig& config) : config_(config) {
  TOPO_CHECK(config.layers >= 1 && config.input_dim >= 1 && config.hidden >= 1 && config.heads >= 1,
             "gat: layers {}, input features {}, hidden {} and heads {} must be >= 1", config.layers,
             config.input_dim, config.hidden, config.heads);
  for (std::int64_t l = 0; l < config.layers; ++l) {
    const bool last = l + 1 == config.layers;
    nn::GATConvOptions options;
    options.feat_drop = options.attn_drop = config.dropout;
    if (!last) options.activation = nn::Activation::Relu;
    convs_.push_back(register_module(
        "conv" + std::to_string(l + 1),
        std::make_shared<nn::GATConv>(l == 0 ? config.input_dim : config.hidden * config.heads,
                                      last ? output_width(config) : config.hidden, last ? 1 : config.heads, options,
                                      &generator_of(config_))));
  }
}

Encoding GatEncoder::encode(const SequenceBatch& batch) {
  const std::string etype = single_relation(batch, "gat");
  const std::int64_t n = batch.features.size(0);
  nn::Var h(batch.features);
  for (const auto& conv : convs_) {
    const nn::Var out = conv->forward(*batch.graph, etype, h, h);  // [N, H, F]
    h = nn::reshape(out, {n, out.size(1) * out.size(2)});
  }
  return {h, {}};
}

std::int64_t GatEncoder::hidden_size() const { return output_width(config_); }

}  // namespace topo::models
