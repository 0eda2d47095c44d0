// GCN and GAT as `--model gcn` / `--model gat`: node classifiers that read the task's graph, with the papers'
// semi-supervised recipes (Kipf & Welling 2017; Velickovic et al. 2018) for node-classify.
#include "models/graph_nets/graph_nets.hpp"
#include "models/registry.hpp"

namespace topo::models {

namespace {

GraphNetConfig config_of(const EncoderSpec& spec, const char* model) {
  TOPO_CHECK(spec.case_classes == 0 && spec.vocab_size == 0, "{} reads node features, not token ids", model);
  GraphNetConfig c;
  c.input_dim = spec.input_dim;
  c.hidden = spec.hidden;
  c.heads = spec.heads;
  c.layers = spec.layers;
  c.output_dim = spec.output_dim;
  c.dropout = spec.dropout;
  c.generator = spec.generator;
  return c;
}

ModelRegistration graph_net(const char* name) {
  ModelRegistration m;
  m.name = name;
  m.reads_token_ids = false;
  m.reads_features = false;
  m.reads_graph = true;
  m.heads_divide_hidden = false;  // GAT's hidden is per head
  return m;
}

}  // namespace

ModelRegistration gcn_registration() {
  ModelRegistration m = graph_net("gcn");
  m.summary = "GCN (Kipf & Welling 2017): GraphConv layers (symmetric norm), relu, dropout; reads a graph";
  m.make = [](const EncoderSpec& spec) { return std::make_shared<GcnEncoder>(config_of(spec, "gcn")); };
  // The paper's semi-supervised setting: 2 layers of 16, dropout 0.5, lr 0.01, L2 5e-4, full-batch steps.
  m.recipes["node-classify"] = {{"layers", 2}, {"hidden", 16}, {"dropout", 0.5}, {"lr", 0.01}, {"weight_decay", 5e-4},
                                {"epochs", 100}, {"clip", 0.0}};
  return m;
}

ModelRegistration gat_registration() {
  ModelRegistration m = graph_net("gat");
  m.summary = "GAT (Velickovic et al. 2018): GATConv layers of --heads heads, then one head; reads a graph";
  m.make = [](const EncoderSpec& spec) { return std::make_shared<GatEncoder>(config_of(spec, "gat")); };
  // 2 layers, 4 heads of 8 features, feature and attention dropout 0.5, lr 0.01, L2 5e-4.
  m.recipes["node-classify"] = {{"layers", 2}, {"hidden", 8}, {"heads", 4}, {"dropout", 0.5}, {"lr", 0.01},
                                {"weight_decay", 5e-4}, {"epochs", 100}, {"clip", 0.0}};
  return m;
}

}  // namespace topo::models
