// Node classification: the data reader, the GCN / GAT table, the full-batch training loop and the CLI.
#include "apps/tasks/node_classify.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "apps/train/cli.hpp"
#include "graph/structure.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/threads.hpp"
#include "nn/graph_layers.hpp"
#include "nn/optim.hpp"

#ifndef TOPO_NODE_DATA_DEFAULT
#define TOPO_NODE_DATA_DEFAULT "apps/data/karate_club.txt"
#endif

namespace topo::apps {

// ---- data

NodeDataset read_node_dataset(const std::string& path) {
  std::ifstream in(path);
  TOPO_CHECK(in.good(), "node-classify: cannot open data file {}", path);
  NodeDataset d;
  std::vector<char> has_label;
  std::string line;
  for (std::int64_t lineno = 1; std::getline(in, line); ++lineno) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream s(line);
    std::string kind;
    std::int64_t a = -1, b = -1;
    s >> kind;
    auto bad = [&](const std::string& why) { fail("{}:{}: {} (line: '{}')", path, lineno, why, line); };
    if (kind == "nodes") {
      if (!(s >> a) || a <= 0) bad("'nodes' needs a positive count");
      if (d.num_nodes > 0) bad("'nodes' given twice");
      d.num_nodes = a;
      d.labels.assign(static_cast<std::size_t>(a), -1);
      has_label.assign(static_cast<std::size_t>(a), 0);
    } else if (kind == "label" || kind == "edge") {
      if (d.num_nodes == 0) bad("'nodes N' must come first");
      if (!(s >> a >> b)) bad("expected two integers");
      if (a < 0 || a >= d.num_nodes) bad(fmt::format("node {} is outside [0, {})", a, d.num_nodes));
      if (kind == "label") {
        if (b < 0) bad(fmt::format("class {} is negative", b));
        if (has_label[a]) bad(fmt::format("node {} is labelled twice", a));
        has_label[a] = 1;
        d.labels[a] = b;
        d.num_classes = std::max(d.num_classes, b + 1);
      } else {
        if (b < 0 || b >= d.num_nodes) bad(fmt::format("node {} is outside [0, {})", b, d.num_nodes));
        d.edges.emplace_back(a, b);
      }
    } else {
      bad(fmt::format("unknown record '{}' (expected nodes, label or edge)", kind));
    }
    std::string rest;
    if (s >> rest) bad(fmt::format("unexpected '{}' after the record", rest));
  }
  TOPO_CHECK(d.num_nodes > 0, "node-classify: {} has no 'nodes N' line", path);
  for (std::int64_t v = 0; v < d.num_nodes; ++v)
    TOPO_CHECK(has_label[v], "node-classify: {}: node {} has no label", path, v);
  TOPO_CHECK(d.num_classes >= 2, "node-classify: {}: needs at least two classes, found {}", path, d.num_classes);
  return d;
}

std::string default_node_dataset_path() { return TOPO_NODE_DATA_DEFAULT; }

HeteroGraph node_classify_graph(const NodeDataset& data) {
  std::vector<std::pair<std::int64_t, std::int64_t>> both;
  for (const auto& [u, v] : data.edges) {
    both.emplace_back(u, v);
    if (u != v) both.emplace_back(v, u);
  }
  return add_self_loop(HeteroGraph::from_edges(EdgeList::from_pairs(both), data.num_nodes));
}

// ---- models

namespace {

// Two GraphConv layers (Kipf & Welling 2017): relu, dropout, then logits; symmetric normalisation.
class Gcn : public NodeModel {
 public:
  Gcn(std::int64_t in, std::int64_t classes, const NodeClassifyConfig& c) : p_(c.dropout) {
    nn::GraphConvOptions first;
    first.activation = nn::Activation::Relu;
    conv1_ = register_module("conv1", std::make_shared<nn::GraphConv>(in, c.hidden, first));
    conv2_ = register_module("conv2", std::make_shared<nn::GraphConv>(c.hidden, classes));
  }
  nn::Var forward(const HeteroGraph& g, const nn::Var& x) const override {
    const nn::Var h = nn::dropout(conv1_->forward(g, "_E", x), p_, is_training(), gen_);
    return conv2_->forward(g, "_E", h);
  }

 private:
  float p_;
  mutable nn::Generator gen_{0x6c6e};
  std::shared_ptr<nn::GraphConv> conv1_, conv2_;
};

// Two GATConv layers (Velickovic et al. 2018): `heads` heads of `hidden` features concatenated, relu,
// then one head of logits; feature and attention dropout `dropout`.
class Gat : public NodeModel {
 public:
  Gat(std::int64_t in, std::int64_t classes, const NodeClassifyConfig& c) : heads_(c.heads), hidden_(c.hidden) {
    nn::GATConvOptions first;
    first.feat_drop = first.attn_drop = c.dropout;
    first.activation = nn::Activation::Relu;
    nn::GATConvOptions last;
    last.feat_drop = last.attn_drop = c.dropout;
    conv1_ = register_module("conv1", std::make_shared<nn::GATConv>(in, c.hidden, c.heads, first, &gen_));
    conv2_ = register_module("conv2", std::make_shared<nn::GATConv>(c.hidden * c.heads, classes, 1, last, &gen_));
  }
  nn::Var forward(const HeteroGraph& g, const nn::Var& x) const override {
    const std::int64_t n = x.size(0);
    const nn::Var h = nn::reshape(conv1_->forward(g, "_E", x, x), {n, heads_ * hidden_});
    const nn::Var out = conv2_->forward(g, "_E", h, h);  // [N, 1, classes]
    return nn::reshape(out, {n, out.size(2)});
  }

 private:
  std::int64_t heads_, hidden_;
  nn::Generator gen_{0x6761};
  std::shared_ptr<nn::GATConv> conv1_, conv2_;
};

}  // namespace

const std::vector<NodeModelEntry>& node_models() {
  static const std::vector<NodeModelEntry> table = {
      {"gcn", "two GraphConv layers (norm both), relu, dropout", 100, 16, 0, 0.01f, 0.5f, 5e-4f,
       [](std::int64_t in, std::int64_t classes, const NodeClassifyConfig& c) -> std::shared_ptr<NodeModel> {
         return std::make_shared<Gcn>(in, classes, c);
       }},
      {"gat", "two GATConv layers (heads concatenated, then one head), relu, feature + attention dropout", 100, 8, 4,
       0.01f, 0.5f, 5e-4f,
       [](std::int64_t in, std::int64_t classes, const NodeClassifyConfig& c) -> std::shared_ptr<NodeModel> {
         return std::make_shared<Gat>(in, classes, c);
       }},
  };
  return table;
}

const NodeModelEntry& node_model(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& e : node_models()) {
    if (e.name == name) return e;
    names.push_back(e.name);
  }
  fail("node-classify: unknown model '{}' (models: {})", name, fmt::join(names, ", "));
}

NodeClassifyConfig with_recipe(NodeClassifyConfig c) {
  const NodeModelEntry& e = node_model(c.model);
  if (c.data.empty()) c.data = default_node_dataset_path();
  if (c.epochs <= 0) c.epochs = e.epochs;
  if (c.hidden <= 0) c.hidden = e.hidden;
  if (c.heads <= 0) c.heads = std::max<std::int64_t>(e.heads, 1);
  if (c.lr <= 0) c.lr = e.lr;
  if (c.dropout < 0) c.dropout = e.dropout;
  if (c.weight_decay < 0) c.weight_decay = e.weight_decay;
  TOPO_CHECK(c.dropout < 1, "node-classify: dropout {} must be below 1", c.dropout);
  TOPO_CHECK(c.seeds > 0, "node-classify: --seeds must be positive, got {}", c.seeds);
  return c;
}

// ---- training

nlohmann::json run_node_classify(const NodeClassifyConfig& config_in) {
  const NodeClassifyConfig c = with_recipe(config_in);
  const NodeDataset data = read_node_dataset(c.data);
  const HeteroGraph g = node_classify_graph(data);
  const std::int64_t n = data.num_nodes;
  // Features: one-hot node ids (the graph's structure is all the models see), as in the usual demo.
  Tensor eye = Tensor::zeros({n, n});
  for (std::int64_t v = 0; v < n; ++v) eye.data<float>()[v * n + v] = 1.f;
  const nn::Var x(eye);
  std::vector<std::int64_t> train_targets(static_cast<std::size_t>(n), -100);
  std::vector<char> labelled(static_cast<std::size_t>(n), 0);
  for (const std::int64_t v : c.labelled) {
    TOPO_CHECK(v >= 0 && v < n, "node-classify: labelled node {} is outside [0, {})", v, n);
    train_targets[v] = data.labels[v];
    labelled[v] = 1;
  }
  const Tensor targets = Tensor::from_vector(train_targets, {n});
  nlohmann::json result = {{"task", "node-classify"}, {"model", c.model}, {"data", c.data},
                           {"num_nodes", n}, {"num_edges", static_cast<std::int64_t>(data.edges.size())},
                           {"labelled", c.labelled}, {"epochs", c.epochs}, {"hidden", c.hidden},
                           {"heads", c.model == "gat" ? c.heads : 0}, {"lr", c.lr}, {"dropout", c.dropout},
                           {"weight_decay", c.weight_decay}};
  std::vector<double> acc, losses;
  std::vector<std::vector<std::int64_t>> misclassified;  // per seed
  for (std::int64_t s = 0; s < c.seeds; ++s) {
    const std::uint64_t seed = c.first_seed + static_cast<std::uint64_t>(s);
    auto model = node_model(c.model).make(n, data.num_classes, c);
    model->reset_parameters(seed);
    nn::Adam opt(model->parameters(), {.lr = c.lr}, c.weight_decay);
    for (std::int64_t epoch = 0; epoch < c.epochs; ++epoch) {
      model->train();
      const nn::Var loss = nn::cross_entropy(model->forward(g, x), targets);
      opt.zero_grad();
      loss.backward();
      opt.step();
    }
    model->eval();
    const nn::Var out = model->forward(g, x);
    const double last = nn::cross_entropy(out, targets).item();  // eval mode: no dropout noise
    const auto logits = out.data().to_vector<float>();
    std::int64_t right = 0, scored = 0;
    std::vector<std::int64_t> wrong;
    for (std::int64_t v = 0; v < n; ++v) {
      if (labelled[v]) continue;
      const float* row = logits.data() + v * data.num_classes;
      const auto pred = std::max_element(row, row + data.num_classes) - row;
      if (pred == data.labels[v]) ++right;
      else wrong.push_back(v);
      ++scored;
    }
    misclassified.push_back(wrong);
    acc.push_back(scored ? static_cast<double>(right) / static_cast<double>(scored) : 0.0);
    losses.push_back(last);
  }
  double mean = 0, var = 0;
  for (const double a : acc) mean += a / static_cast<double>(acc.size());
  for (const double a : acc) var += (a - mean) * (a - mean) / static_cast<double>(acc.size());
  result["seeds"] = c.seeds;
  result["first_seed"] = c.first_seed;
  result["accuracy"] = acc;
  result["final_train_loss"] = losses;
  result["misclassified"] = misclassified;
  result["mean_accuracy"] = mean;
  result["std_accuracy"] = std::sqrt(var);
  return result;
}

// ---- CLI

bool wants_node_classify(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--task=node-classify") == 0) return true;
    if (std::strcmp(argv[i], "--task") == 0 && i + 1 < argc && std::strcmp(argv[i + 1], "node-classify") == 0)
      return true;
  }
  return false;
}

int node_classify_main(int argc, char** argv, std::ostream& out) {
  NodeClassifyConfig c;
  std::string task;
  std::string models;
  for (const auto& e : node_models()) models += (models.empty() ? "" : "; ") + e.name + ": " + e.description;
  CLI::App app{"topo-train --task node-classify: semi-supervised node classification (GCN / GAT) on one graph",
               "topo-train"};
  app.add_option("--task", task, "node-classify")->required();
  app.add_option("--model", c.model, "gcn or gat (" + models + ")");
  app.add_option("--data", c.data, "'nodes/label/edge' file (default: Zachary's karate club, apps/data)");
  app.add_option("--labelled", c.labelled, "the labelled (training) nodes; all others are scored")->delimiter(',');
  app.add_option("--epochs", c.epochs, "full-batch steps (default: the model's recipe)");
  app.add_option("--hidden", c.hidden, "hidden features (per head for gat)");
  app.add_option("--heads", c.heads, "gat: heads of the first layer");
  app.add_option("--lr", c.lr, "Adam learning rate");
  app.add_option("--dropout", c.dropout, "dropout (gat: feature and attention dropout)");
  app.add_option("--weight-decay", c.weight_decay, "Adam L2 decay");
  app.add_option("--seeds", c.seeds, "runs, one per seed, averaged");
  app.add_option("--seed", c.first_seed, "first seed");
  app.add_option("--threads", c.threads, "OpenMP threads (0: detect)");
  app.add_option("--out", c.out, "run directory: result.json is written there (atomically)");
  if (!parse_command_line(app, argc, argv, out)) return 0;
  TOPO_CHECK(task == "node-classify", "node-classify: --task is '{}'", task);
  const ThreadCount threads = configure_threads(c.threads);
  nlohmann::json r = run_node_classify(c);
  r["threads"] = threads.threads;
  const auto& acc = r.at("accuracy");
  out << fmt::format("node-classify {} on {} ({} nodes, {} edges, labelled {}): accuracy on the other nodes",
                     r.at("model").get<std::string>(), r.at("data").get<std::string>(), r.at("num_nodes").get<std::int64_t>(),
                     r.at("num_edges").get<std::int64_t>(), fmt::join(c.labelled, ","));
  for (const auto& a : acc) out << fmt::format(" {:.3f}", a.get<double>());
  out << fmt::format("\nmean {:.4f} +- {:.4f} over {} seeds\n", r.at("mean_accuracy").get<double>(),
                     r.at("std_accuracy").get<double>(), acc.size());
  if (!c.out.empty()) {
    std::filesystem::create_directories(c.out);
    write_file_atomically((std::filesystem::path(c.out) / "result.json").string(), r.dump(2) + "\n");
  }
  return 0;
}

}  // namespace topo::apps
