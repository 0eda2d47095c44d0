// `--task node-classify`: semi-supervised node classification on one graph, its options and their checks.
#include <charconv>
#include <sstream>

#include "apps/graphs/generate.hpp"
#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/tasks/registry.hpp"
#include "kernels/memory.hpp"

namespace topo::apps {

namespace {

// --memory-limit: "" the machine's memory, "off" no check, else a size ("8G").
std::int64_t memory_limit_of(const TaskSettings& s) {
  const std::string text = s.option<std::string>("memory_limit");
  if (text.empty()) return 0;
  if (text == "off") return -1;
  return parse_byte_size(text, "memory_limit");
}

// --feature-norm auto: Kipf & Welling's row normalisation for non-negative features (bag-of-words such as
// Planetoid's; one-hot ids), none for features with negative values (a generated graph's Gaussian ones, whose
// rows may sum to about 0).
bool row_normalize(const std::string& norm, const NodeDataset& data) {
  if (norm != "auto") return norm == "row";
  if (!data.features.defined()) return true;
  const float* x = data.features.data<float>();
  const std::int64_t count = data.features.numel();
  for (std::int64_t i = 0; i < count; ++i)
    if (x[i] < 0) return false;
  return true;
}

// --fanouts "10,25" -> {10, 25}: each >= 1 or -1 (every in-edge); empty: full-graph training.
std::vector<std::int64_t> fanouts_of(const TaskSettings& s) {
  const std::string text = s.option<std::string>("fanouts");
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    std::int64_t f = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), f);
    TOPO_CHECK(!item.empty() && ec == std::errc() && end == item.data() + item.size() && (f >= 1 || f == -1),
               "invalid config field 'fanouts' = '{}': '{}' is not a fan-out (an integer >= 1, or -1 for every "
               "in-edge)", text, item);
    out.push_back(f);
  }
  return out;
}

}  // namespace

TaskRegistration node_classify_registration() {
  TaskRegistration t;
  t.name = "node-classify";
  t.summary = "semi-supervised node classification on one graph (karate club by default, an .npz such as Planetoid's Cora, or a generated csbm: / rmat: graph); accuracy; --model gcn | gat | sage";
  t.input = TaskInput::Graph;
  t.options = {
      {"data", "",
       "the graph: FILE.npz (NumPy arrays: edge_index, node features, y, train/val/test masks, as PyG's Planetoid), "
       "a 'nodes/label/edge/split' text file, or a generated one: csbm:KEY=VALUE,... (planted partition) or "
       "rmat:KEY=VALUE,... (power law) with keys nodes, degree, classes, features, snr, train, dev, test, seed and "
       "csbm's homophily or rmat's a, b, c (apps/README.md; empty: Zachary's karate club)",
       {}},
      {"labelled", "", "the training nodes, comma-separated (empty: the file's train split)", {}},
      {"dev_nodes", "", "the dev nodes, comma-separated (empty: the file's dev split, else every node in no other)", {}},
      {"test_nodes", "", "held-out test nodes, comma-separated (empty: the file's test split, else none)", {}},
      {"feature_norm", "auto",
       "node features: row (each row over its sum, Kipf & Welling's preprocessing) | none | auto (row when no "
       "feature is negative, as bag-of-words; none for a generated graph's Gaussian features)",
       {"auto", "row", "none"}},
      {"fanouts", "",
       "neighbour-sampled mini-batches: one fan-out per graph layer, input layer first, comma-separated (e.g. "
       "10,25; -1: every in-edge), with --batch training nodes per batch (DGL's MultiLayerNeighborSampler); "
       "empty: full-graph training. Evaluation stays full-graph",
       {}},
      {"memory_limit", "",
       "the most memory the run may hold (e.g. 8G): it stops before allocating, naming the sizes, when the graph or "
       "a training step would need more (empty: what the machine or its cgroup has left; off: no check)",
       {}},
  };
  t.validate = [](const TaskSettings& s) {
    for (const char* field : {"labelled", "dev_nodes", "test_nodes"})
      (void)parse_node_list(s.option<std::string>(field), field);
    const std::string data = s.option<std::string>("data");
    if (is_generated_graph_spec(data)) (void)parse_generated_graph_spec(data);
    (void)memory_limit_of(s);
    (void)fanouts_of(s);
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    const std::string given = s.option<std::string>("data");
    const std::string path = given.empty() ? default_node_dataset_path()
                             : is_generated_graph_spec(given) ? parse_generated_graph_spec(given).str()
                                                              : given;
    NodeSplits splits{parse_node_list(s.option<std::string>("labelled"), "labelled"),
                      parse_node_list(s.option<std::string>("dev_nodes"), "dev_nodes"),
                      parse_node_list(s.option<std::string>("test_nodes"), "test_nodes")};
    const std::int64_t limit = memory_limit_of(s);
    NodeDataset data = load_node_dataset(given, limit);
    const bool row = row_normalize(s.option<std::string>("feature_norm"), data);
    return std::make_unique<NodeClassification>(std::move(data), path, std::move(splits), row, limit, fanouts_of(s));
  };
  return t;
}

}  // namespace topo::apps
