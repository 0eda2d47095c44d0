// `--task node-classify`: semi-supervised node classification on one graph, its options and their checks.
#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/tasks/registry.hpp"

namespace topo::apps {

TaskRegistration node_classify_registration() {
  TaskRegistration t;
  t.name = "node-classify";
  t.summary = "semi-supervised node classification on one graph (karate club by default, or an .npz such as Planetoid's Cora); accuracy; --model gcn | gat";
  t.input = TaskInput::Graph;
  t.options = {
      {"data", "",
       "the graph: FILE.npz (NumPy arrays: edge_index, node features, y, train/val/test masks, as PyG's Planetoid) "
       "or a 'nodes/label/edge/split' text file (empty: Zachary's karate club, apps/data/karate_club.txt)",
       {}},
      {"labelled", "", "the training nodes, comma-separated (empty: the file's train split)", {}},
      {"dev_nodes", "", "the dev nodes, comma-separated (empty: the file's dev split, else every node in no other)", {}},
      {"test_nodes", "", "held-out test nodes, comma-separated (empty: the file's test split, else none)", {}},
      {"feature_norm", "row", "node features: row (each row over its sum, Kipf & Welling's preprocessing) | none",
       {"row", "none"}},
  };
  t.validate = [](const TaskSettings& s) {
    for (const char* field : {"labelled", "dev_nodes", "test_nodes"})
      (void)parse_node_list(s.option<std::string>(field), field);
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    const std::string given = s.option<std::string>("data");
    const std::string path = given.empty() ? default_node_dataset_path() : given;
    NodeSplits splits{parse_node_list(s.option<std::string>("labelled"), "labelled"),
                      parse_node_list(s.option<std::string>("dev_nodes"), "dev_nodes"),
                      parse_node_list(s.option<std::string>("test_nodes"), "test_nodes")};
    return std::make_unique<NodeClassification>(read_node_dataset(path), path, std::move(splits),
                                                s.option<std::string>("feature_norm") == "row");
  };
  return t;
}

}  // namespace topo::apps
