#include "models/graph_nets/graph_nets.hpp"

#include "kernels/error.hpp"
#include "kernels/memory.hpp"
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

// The graph layer l runs over, its relation and its destinations: the batch's graph for every layer (full
// graph), or blocks[l] (sampled mini-batches: DGL's blocks, whose destinations are their first source rows).
struct LayerGraph {
  const HeteroGraph* graph = nullptr;
  std::string etype;
  std::int64_t num_dst = 0;
};
std::vector<LayerGraph> layer_graphs(const SequenceBatch& batch, std::size_t layers, const char* model) {
  if (batch.blocks.empty()) {
    const std::string etype = single_relation(batch, model);
    return std::vector<LayerGraph>(layers, LayerGraph{batch.graph.get(), etype, batch.graph->num_nodes(0)});
  }
  TOPO_CHECK(batch.blocks.size() == layers, "{}: the batch has blocks for {} layers and the model has {} (--fanouts "
             "names one fan-out per layer)", model, batch.blocks.size(), layers);
  std::vector<LayerGraph> out;
  for (std::size_t l = 0; l < layers; ++l) {
    const HeteroGraph& b = *batch.blocks[l];
    TOPO_CHECK(b.num_node_types() == 2 && b.num_relations() == 1, "{}: block {} must have two node types (its "
               "sources, then its destinations) and one relation", model, l);
    const std::int64_t sources = b.num_nodes(0);
    TOPO_CHECK(l == 0 ? batch.features.defined() && batch.features.ndim() == 2 && batch.features.size(0) == sources
                      : out.back().num_dst == sources,
               "{}: block {} has {} sources, but {} rows come into it", model, l, sources,
               l == 0 ? (batch.features.defined() ? batch.features.size(0) : 0) : out.back().num_dst);
    out.push_back({&b, b.canonical_etypes()[0].etype, b.num_nodes(1)});
  }
  return out;
}

// A block's destinations: the first num_dst rows of the layer's input (all of it on a full graph).
nn::Var destination_rows(const nn::Var& h, std::int64_t num_dst) {
  if (h.size(0) == num_dst) return h;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(num_dst));
  for (std::int64_t i = 0; i < num_dst; ++i) rows[static_cast<std::size_t>(i)] = i;
  return nn::index_select(h, Tensor::from_vector(rows, {num_dst}).to(h.data().device()));
}

nn::Generator& generator_of(const GraphNetConfig& c) { return c.generator ? *c.generator : nn::default_generator(); }

// The shapes a step's estimate needs: nodes, edges of the one relation (self loops included; a sampled
// batch's blocks summed), input width.
struct StepShape {
  std::int64_t nodes = 0, edges = 0, in = 0;
};
StepShape step_shape(const SequenceBatch& batch) {
  if (!batch.features.defined() || batch.features.ndim() != 2) return {};
  if (!batch.blocks.empty()) {
    std::int64_t edges = 0;
    for (const auto& b : batch.blocks) edges += b->num_edges(0);
    return {batch.features.size(0), edges, batch.features.size(1)};
  }
  if (batch.graph == nullptr) return {};
  return {batch.features.size(0), batch.graph->num_edges(0), batch.features.size(1)};
}

// Float32 elements -> bytes. The estimates count what a step keeps for backward, its gradients and the
// largest temporaries, per layer, from the layer code (nn/graph_layers.cpp); tests/apps/test_node_memory.cpp
// holds them against the allocator's measured peak.
constexpr std::int64_t kFloat = 4;

// The sizes every graph net needs positive (GAT adds its heads).
void check_sizes(const GraphNetConfig& config, const char* model) {
  TOPO_CHECK(config.layers >= 1 && config.input_dim >= 1 && config.hidden >= 1,
             "{}: layers {}, input features {} and hidden {} must be >= 1", model, config.layers, config.input_dim,
             config.hidden);
}

}  // namespace

GcnEncoder::GcnEncoder(const GraphNetConfig& config) : config_(config) {
  check_sizes(config, "gcn");
  for (std::int64_t l = 0; l < config.layers; ++l) {
    const bool last = l + 1 == config.layers;
    nn::GraphConvOptions options;
    if (!last) options.activation = config.activation;
    convs_.push_back(register_module(
        "conv" + std::to_string(l + 1),
        std::make_shared<nn::GraphConv>(l == 0 ? config.input_dim : config.hidden,
                                        last ? output_width(config) : config.hidden, options)));
  }
}

Encoding GcnEncoder::encode(const SequenceBatch& batch) {
  const std::vector<LayerGraph> graphs = layer_graphs(batch, convs_.size(), "gcn");
  nn::Var h(batch.features);
  for (std::size_t l = 0; l < convs_.size(); ++l) {
    h = convs_[l]->forward(*graphs[l].graph, graphs[l].etype, h);
    if (l + 1 < convs_.size()) h = nn::dropout(h, config_.dropout, is_training(), generator_of(config_));
  }
  return {h, {}};
}

std::int64_t GcnEncoder::hidden_size() const { return output_width(config_); }

StepMemoryEstimate GcnEncoder::step_memory(const SequenceBatch& batch) const {
  const StepShape s = step_shape(batch);
  std::int64_t elements = 0;
  for (std::int64_t l = 0; l < config_.layers; ++l) {
    const std::int64_t in = l == 0 ? s.in : config_.hidden, out = l + 1 == config_.layers ? output_width(config_) : config_.hidden;
    // [N, in] tensors: a wider-than-output layer multiplies first and scales after (GraphConv), so it keeps
    // only its input's gradient, none for the first layer's features; a narrower one scales and aggregates
    // its input (two copies) and takes its gradient. Then about eight [N, out] tensors forward and back: the
    // product and its scaled copy until the aggregate is made, the fused epilogue's output, the dropout's,
    // and their gradients (what no backward reads is dropped with its last handle: nn/var.hpp).
    const std::int64_t wide = in > out ? (l == 0 ? 0 : 1) : (l == 0 ? 2 : 3);
    elements += s.nodes * (wide * in + 8 * out);
  }
  return {elements * kFloat,
          fmt::format("gcn: {} layers over {} nodes x {} input features, hidden {}", config_.layers, s.nodes, s.in,
                      config_.hidden),
          "--hidden, --layers, or a smaller graph"};
}

GatEncoder::GatEncoder(const GraphNetConfig& config) : config_(config) {
  TOPO_CHECK(config.layers >= 1 && config.input_dim >= 1 && config.hidden >= 1 && config.heads >= 1,
             "gat: layers {}, input features {}, hidden {} and heads {} must be >= 1", config.layers,
             config.input_dim, config.hidden, config.heads);
  for (std::int64_t l = 0; l < config.layers; ++l) {
    const bool last = l + 1 == config.layers;
    nn::GATConvOptions options;
    options.feat_drop = options.attn_drop = config.dropout;
    if (!last) options.activation = config.activation;
    convs_.push_back(register_module(
        "conv" + std::to_string(l + 1),
        std::make_shared<nn::GATConv>(l == 0 ? config.input_dim : config.hidden * config.heads,
                                      last ? output_width(config) : config.hidden, last ? 1 : config.heads, options,
                                      &generator_of(config_))));
  }
}

Encoding GatEncoder::encode(const SequenceBatch& batch) {
  const std::vector<LayerGraph> graphs = layer_graphs(batch, convs_.size(), "gat");
  nn::Var h(batch.features);
  for (std::size_t l = 0; l < convs_.size(); ++l) {
    const std::int64_t n = graphs[l].num_dst;
    const nn::Var out = convs_[l]->forward(*graphs[l].graph, graphs[l].etype, h, destination_rows(h, n));  // [n, H, F]
    h = nn::reshape(out, {n, out.size(1) * out.size(2)});
  }
  return {h, {}};
}

std::int64_t GatEncoder::hidden_size() const { return output_width(config_); }

StepMemoryEstimate GatEncoder::step_memory(const SequenceBatch& batch) const {
  const StepShape s = step_shape(batch);
  std::int64_t elements = 0;
  for (std::int64_t l = 0; l < config_.layers; ++l) {
    const bool last = l + 1 == config_.layers;
    const std::int64_t in = l == 0 ? s.in : config_.hidden * config_.heads, heads = last ? 1 : config_.heads;
    const std::int64_t width = heads * (last ? output_width(config_) : config_.hidden);
    // Nothing per edge: the attention is one fused op (nn::gat_attention) that keeps only [N, heads] rows.
    // Per node: the dropped-out input and its gradient (not in the first layer, whose dropped-out features are
    // lazy: nn::dropout of a leaf, projected slab by slab), and about five [N, heads x out] tensors and gradients
    // at the peak (z, the attention's output, the activation's, and their gradients; measured 0.89x of this at
    // 20k nodes, tests/apps/test_node_memory.cpp).
    elements += s.nodes * ((l == 0 ? 0 : 2) * in + 5 * width);
  }
  return {elements * kFloat,
          fmt::format("gat: {} layers of {} heads x {} over {} nodes and {} edges", config_.layers, config_.heads,
                      config_.hidden, s.nodes, s.edges),
          "--heads, --hidden, --layers, or a smaller graph"};
}

// ---- GraphSAGE

SageEncoder::SageEncoder(const GraphNetConfig& config) : config_(config) {
  check_sizes(config, "sage");
  for (std::int64_t l = 0; l < config.layers; ++l) {
    const bool last = l + 1 == config.layers;
    convs_.push_back(register_module(
        "conv" + std::to_string(l + 1),
        std::make_shared<nn::SAGEConv>(l == 0 ? config.input_dim : config.hidden, last ? output_width(config) : config.hidden,
                                       config.aggregator, true, last ? nn::Activation::Identity : config.activation)));
  }
}

Encoding SageEncoder::encode(const SequenceBatch& batch) {
  const std::vector<LayerGraph> graphs = layer_graphs(batch, convs_.size(), "sage");
  nn::Var h = nn::dropout(nn::Var(batch.features), config_.dropout, is_training(), generator_of(config_));
  for (std::size_t l = 0; l < convs_.size(); ++l) {
    h = convs_[l]->forward(*graphs[l].graph, graphs[l].etype, h, destination_rows(h, graphs[l].num_dst));
    if (l + 1 < convs_.size()) h = nn::dropout(h, config_.dropout, is_training(), generator_of(config_));
  }
  return {h, {}};
}

std::int64_t SageEncoder::hidden_size() const { return output_width(config_); }

StepMemoryEstimate SageEncoder::step_memory(const SequenceBatch& batch) const {
  const StepShape s = step_shape(batch);
  const bool pool = config_.aggregator == nn::SageAggregator::Pool;
  std::int64_t elements = 0;
  for (std::int64_t l = 0; l < config_.layers; ++l) {
    const std::int64_t in = l == 0 ? s.in : config_.hidden, out = l + 1 == config_.layers ? output_width(config_) : config_.hidden;
    // The dropped-out input, the neighbour aggregate [N, in] (pool: its projection, relu and the max's argmax
    // too), each with a gradient; about eight [N, out] tensors and their gradients. Mean with in > out projects
    // first (nn::SAGEConv): no [N, in] aggregate, only the input and its gradient, and in the first layer not
    // even those: the dropped-out features are lazy (nn::dropout of a leaf), projected slab by slab.
    const bool project_first = !pool && in > out;
    elements += s.nodes * ((pool ? 10 : project_first ? (l == 0 ? 0 : 2) : 5) * in + 8 * out);
  }
  return {elements * kFloat,
          fmt::format("sage ({}): {} layers over {} nodes x {} input features, hidden {}", pool ? "pool" : "mean",
                      config_.layers, s.nodes, s.in, config_.hidden),
          "--hidden, --layers, or a smaller graph"};
}

}  // namespace topo::models
