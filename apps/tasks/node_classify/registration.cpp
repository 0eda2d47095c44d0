// `--task node-classify`: semi-supervised node classification on one graph, its options and their checks.
#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/tasks/registry.hpp"

namespace topo::apps {

TaskRegistration node_classify_registration() {
  TaskRegistration t;
  t.name = "node-classify";
  t.summary = "semi-supervised node classification on one graph (karate club by default); accuracy; --model gcn | gat";
  t.input = TaskInput::Graph;
  t.options = {
      {"data", "", "'nodes/label/edge' file (empty: Zachary's karate club, apps/data/karate_club.txt)", {}},
      {"labelled", "0,33", "the training nodes, comma-separated", {}},
      {"dev_nodes", "", "the dev nodes, comma-separated (empty: every node neither labelled nor a test node)", {}},
      {"test_nodes", "", "held-out test nodes, comma-separated (empty: none)", {}},
  };
  t.validate = [](const TaskSettings& s) {
    for (const char* field : {"labelled", "dev_nodes", "test_nodes"})
      (void)parse_node_list(s.option<std::string>(field), field);
    if (parse_node_list(s.option<std::string>("labelled"), "labelled").empty())
      models::fail_invalid_field("labelled", "", "names no node: nothing to train on");
  };
  t.make = [](const TaskSettings& s) -> std::unique_ptr<Task> {
    const std::string given = s.option<std::string>("data");
    const std::string path = given.empty() ? default_node_dataset_path() : given;
    NodeSplits splits{parse_node_list(s.option<std::string>("labelled"), "labelled"),
                      parse_node_list(s.option<std::string>("dev_nodes"), "dev_nodes"),
                      parse_node_list(s.option<std::string>("test_nodes"), "test_nodes")};
    return std::make_unique<NodeClassification>(read_node_dataset(path), path, std::move(splits));
  };
  return t;
}

}  // namespace topo::apps
