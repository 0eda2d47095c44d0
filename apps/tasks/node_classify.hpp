#pragma once
// topo-train --task node-classify: transductive semi-supervised node classification on one graph (the
// engine beyond sequences). The whole graph is one batch: a few labelled nodes train, every other node is
// scored. Default data: Zachary's karate club (apps/data/karate_club.txt, 34 nodes, 78 ties, two factions),
// one labelled node per faction (0, the instructor, and 33, the officer), as in the usual GCN demo.
//
// Why not the Task interface (task.hpp): a Task batches sentences for a SequenceModel from the sequence
// model registry (models/registry.hpp), whose encoders read token sequences; a node classifier reads one
// graph and its node features. So node-classify keeps its own small model table (node_models()) and loop.
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/heterograph.hpp"
#include "nn/module.hpp"

namespace topo::apps {

// A labelled graph: edges undirected as read; labels [num_nodes] in [0, num_classes).
struct NodeDataset {
  std::int64_t num_nodes = 0, num_classes = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;
  std::vector<std::int64_t> labels;
};
// Reads 'nodes N', 'label NODE CLASS' (every node once) and 'edge U V' lines ('#' comments, blank lines);
// a bad line is a topo::Error naming path:line.
NodeDataset read_node_dataset(const std::string& path);
// The packaged karate-club file (its path in the source tree).
std::string default_node_dataset_path();
// Both directions of every edge plus one self loop per node, single relation ("_N", "_E", "_N").
HeteroGraph node_classify_graph(const NodeDataset& data);

struct NodeClassifyConfig {
  std::string model = "gcn";
  std::string data;                       // empty: default_node_dataset_path()
  std::vector<std::int64_t> labelled = {0, 33};
  std::int64_t epochs = 0, hidden = 0, heads = 0;  // 0: the model's recipe
  float lr = 0.f, dropout = -1.f, weight_decay = -1.f;  // < 0 / 0: the model's recipe
  std::int64_t seeds = 10;
  std::uint64_t first_seed = 0;
  int threads = 1;
  std::string out;  // run directory for result.json (written atomically); empty: none
};

// A node classifier: (graph, features [N, in]) -> logits [N, classes].
class NodeModel : public nn::Module {
 public:
  virtual nn::Var forward(const HeteroGraph& g, const nn::Var& x) const = 0;
};

// One row of the node-classify model table: its name, a line for --help, its recipe and its factory.
struct NodeModelEntry {
  std::string name, description;
  std::int64_t epochs, hidden, heads;
  float lr, dropout, weight_decay;
  std::function<std::shared_ptr<NodeModel>(std::int64_t in, std::int64_t classes, const NodeClassifyConfig&)> make;
};
const std::vector<NodeModelEntry>& node_models();
const NodeModelEntry& node_model(const std::string& name);  // throws naming the known ones

// The config with the model's recipe filled in where left at 0 / < 0.
NodeClassifyConfig with_recipe(NodeClassifyConfig config);

// Trains one model per seed (full batch, Adam, cross-entropy on the labelled nodes) and scores the
// unlabelled nodes in eval mode; final_train_loss is the eval-mode loss on the labelled nodes:
// {"accuracy": [...per seed], "mean_accuracy", "std_accuracy", "final_train_loss" and "misclassified" (node
// ids) per seed, the settings}.
nlohmann::json run_node_classify(const NodeClassifyConfig& config);

// topo-train's entry for --task node-classify: parses argv (its own flags), runs, prints, writes
// result.json with --out. Returns the exit code.
int node_classify_main(int argc, char** argv, std::ostream& out);
// Whether argv asks for --task node-classify (so topo-train dispatches here).
bool wants_node_classify(int argc, char** argv);

}  // namespace topo::apps
