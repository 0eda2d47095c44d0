// Node classification: the data reader, the splits, the full-graph batch, the loss and the accuracy.
#include "apps/tasks/node_classify/node_classify.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "graph/structure.hpp"
#include "models/heads.hpp"
#include "nn/ops.hpp"

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

std::vector<std::int64_t> parse_node_list(const std::string& text, const std::string& field) {
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    const std::string id = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    std::int64_t v = -1;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
    TOPO_CHECK(!id.empty() && ec == std::errc() && end == id.data() + id.size() && v >= 0,
               "invalid config field '{}' = '{}': '{}' is not a node id (comma-separated integers >= 0)", field, text,
               id);
    out.push_back(v);
  }
  return out;
}

namespace {

// The node classifier: the encoder's node states are the class scores.
class NodeClassifier final : public models::SequenceModel {
 public:
  explicit NodeClassifier(std::shared_ptr<models::SequenceEncoder> encoder) : SequenceModel(std::move(encoder)) {}
  nn::Var forward(const models::SequenceBatch& batch) override { return encoder_->encode(batch).tokens; }
};

}  // namespace

NodeClassification::NodeClassification(NodeDataset data, std::string path, NodeSplits splits)
    : data_(std::move(data)), path_(std::move(path)), splits_(std::move(splits)) {
  const std::int64_t n = data_.num_nodes;
  std::vector<const char*> owner(static_cast<std::size_t>(n), nullptr);
  auto claim = [&](const std::vector<std::int64_t>& nodes, const char* field) {
    for (const std::int64_t v : nodes) {
      TOPO_CHECK(v >= 0 && v < n, "node-classify: --{} names node {}, outside [0, {}) of {}", field, v, n, path_);
      TOPO_CHECK(owner[v] == nullptr, "node-classify: node {} is in --{} and in --{}", v, owner[v], field);
      owner[v] = field;
    }
  };
  claim(splits_.train, "labelled");
  claim(splits_.test, "test-nodes");
  if (splits_.dev.empty())
    for (std::int64_t v = 0; v < n; ++v)
      if (owner[v] == nullptr) splits_.dev.push_back(v);
  claim(splits_.dev, "dev-nodes");
  TOPO_CHECK(!splits_.train.empty(), "node-classify: --labelled names no node: nothing to train on");
  TOPO_CHECK(!splits_.dev.empty(), "node-classify: no dev node left (every node is labelled or a test node)");
  graph_ = std::make_shared<const HeteroGraph>(node_classify_graph(data_));
  features_ = Tensor::zeros({n, n});
  for (std::int64_t v = 0; v < n; ++v) features_.data<float>()[v * n + v] = 1.f;
}

std::shared_ptr<models::SequenceModel> NodeClassification::make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                                      const models::HeadOptions& /*head*/) const {
  return std::make_shared<NodeClassifier>(std::move(encoder));
}

const std::vector<std::int64_t>& NodeClassification::nodes(Split split) const {
  return split == Split::Train ? splits_.train : split == Split::Dev ? splits_.dev : splits_.test;
}

std::int64_t NodeClassification::size(Split split) const { return static_cast<std::int64_t>(nodes(split).size()); }

std::vector<std::vector<std::int64_t>> NodeClassification::epoch_batches(std::int64_t /*batch*/,
                                                                         std::uint64_t /*seed*/,
                                                                         std::int64_t /*epoch*/) const {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size(Split::Train)));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  return {all};
}

TaskBatch NodeClassification::batch(Split split, const std::vector<std::int64_t>& indices) const {
  const std::vector<std::int64_t>& split_nodes = nodes(split);
  std::vector<std::int64_t> targets(static_cast<std::size_t>(data_.num_nodes), -100);
  for (const std::int64_t i : indices) {
    TOPO_CHECK(i >= 0 && i < static_cast<std::int64_t>(split_nodes.size()), "node-classify: {} index {} outside [0, {})",
               split_name(split), i, split_nodes.size());
    const std::int64_t v = split_nodes[static_cast<std::size_t>(i)];
    targets[static_cast<std::size_t>(v)] = data_.labels[static_cast<std::size_t>(v)];
  }
  models::SequenceBatch inputs;
  inputs.lengths = {data_.num_nodes};
  inputs.features = features_;
  inputs.graph = graph_;
  return {inputs, Tensor::from_vector(targets, {data_.num_nodes})};
}

nn::Var NodeClassification::loss(const nn::Var& output, const Tensor& targets) const {
  return nn::cross_entropy(output, targets);  // -100: nodes outside the batch's split, not counted
}

Evaluation NodeClassification::evaluate(models::SequenceModel& model, Split split, Device device) const {
  const bool was_training = model.is_training();
  model.eval();
  std::vector<std::int64_t> all(static_cast<std::size_t>(size(split)));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  const TaskBatch b = batch(split, all).to(device);
  const nn::Var out = model.forward(b.inputs);
  const double loss = all.empty() ? 0.0 : nn::cross_entropy(out, b.targets).item();
  const std::vector<float> scores = out.data().to(Device::cpu()).to_vector<float>();
  std::int64_t right = 0;
  for (const std::int64_t v : nodes(split)) {
    const float* row = scores.data() + v * data_.num_classes;
    if (std::max_element(row, row + data_.num_classes) - row == data_.labels[static_cast<std::size_t>(v)]) ++right;
  }
  if (was_training) model.train();
  const double acc = all.empty() ? 0.0 : static_cast<double>(right) / static_cast<double>(all.size());
  return {acc, {{"acc", acc}, {"loss", loss}, {"nodes", static_cast<std::int64_t>(all.size())}}};
}

nlohmann::json NodeClassification::baseline(Split split) const {
  std::vector<std::int64_t> count(static_cast<std::size_t>(data_.num_classes), 0);
  for (const std::int64_t v : splits_.train) ++count[static_cast<std::size_t>(data_.labels[static_cast<std::size_t>(v)])];
  const auto majority = std::max_element(count.begin(), count.end()) - count.begin();  // ties: the smaller class
  std::int64_t right = 0;
  for (const std::int64_t v : nodes(split)) right += data_.labels[static_cast<std::size_t>(v)] == majority;
  return {{"majority_class", majority},
          {"majority_acc", size(split) > 0 ? static_cast<double>(right) / static_cast<double>(size(split)) : 0.0}};
}

nlohmann::json NodeClassification::metadata() const {
  return {{"graph_file", path_},
          {"num_nodes", data_.num_nodes},
          {"num_edges", static_cast<std::int64_t>(data_.edges.size())},
          {"num_classes", data_.num_classes},
          {"labelled", splits_.train},
          {"dev_nodes", splits_.dev},
          {"test_nodes", splits_.test}};
}

}  // namespace topo::apps
