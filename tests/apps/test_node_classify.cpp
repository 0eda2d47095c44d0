// topo-train --task node-classify: the karate-club file as published (Zachary 1977), GCN and GAT learn the
// two factions from one labelled node each through the common trainer, the reader's and the splits' errors name
// file:line, node and option.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/train/config.hpp"
#include "apps/train/trainer.hpp"
#include "graph/structure.hpp"
#include "models/registry.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

TEST_CASE("the karate-club file: 34 members, 78 ties, two factions of 17") {
  const NodeDataset d = read_node_dataset(default_node_dataset_path());
  CHECK(d.num_nodes == 34);
  CHECK(d.edges.size() == 78);
  CHECK(d.num_classes == 2);
  CHECK(std::count(d.labels.begin(), d.labels.end(), 0) == 17);
  std::vector<int> degree(34, 0);
  for (const auto& [u, v] : d.edges) {
    CHECK(u != v);
    ++degree[u];
    ++degree[v];
  }
  // The instructor (0) and the officer (33) lead the two factions and are the best-connected members.
  CHECK(degree[0] == 16);
  CHECK(degree[33] == 17);
  CHECK(d.labels[0] != d.labels[33]);
  const HeteroGraph g = node_classify_graph(d);
  CHECK(g.num_edges(0) == 2 * 78 + 34);  // both directions and a self loop per node
}

TEST_CASE("node_classify_graph writes the edges add_self_loop gives: listed (reversed after), then the loops") {
  NodeDataset d;
  d.num_nodes = 5;
  d.edges = {{0, 1}, {2, 2}, {3, 1}, {4, 0}, {1, 0}};  // a self loop and a repeated pair among them
  for (const bool directed : {false, true}) {
    CAPTURE(directed);
    d.directed = directed;
    std::vector<std::pair<std::int64_t, std::int64_t>> listed;
    for (const auto& [u, v] : d.edges) {
      listed.emplace_back(u, v);
      if (!directed && u != v) listed.emplace_back(v, u);
    }
    const HeteroGraph expected = add_self_loop(HeteroGraph::from_edges(EdgeList::from_pairs(listed), 5));
    const HeteroGraph g = node_classify_graph(d);
    CHECK(g.num_nodes(0) == 5);
    CHECK(g.edges(0).dtype() == DType::I32);
    CHECK(g.edges(0).pairs() == expected.edges(0).pairs());
  }
}

namespace {

TrainConfig node_config(const std::string& model, const std::filesystem::path& out) {
  TrainConfig c;
  c.set("task", "node-classify").set("model", model);
  apply_config_json(c, models::model_recipe(model, "node-classify"), "recipe");
  c.progress = "none";
  c.out = out.string();
  return c;
}

}  // namespace

TEST_CASE("node-classify: GCN and GAT learn the factions from one labelled node each, through the trainer") {
  for (const std::string model : {"gcn", "gat"}) {
    CAPTURE(model);
    double mean = 0;
    for (std::int64_t seed = 1; seed <= 3; ++seed) {
      const auto dir = topo::testing::fresh_temp_dir("node_" + model + std::to_string(seed));
      TrainConfig c = node_config(model, dir);
      c.seed = seed;
      const TrainResult r = Trainer(c).run();
      REQUIRE(r.completed);
      CHECK_FALSE(r.has_test);  // karate: no held-out nodes unless --test-nodes names some
      CHECK(r.steps == c.epochs);  // one full-graph step per epoch
      mean += r.best_dev_metric / 3;
      // 32 dev nodes, 16 per faction: the majority guess scores 0.5.
      CHECK(r.baseline.at("majority_acc").get<double>() == doctest::Approx(0.5));
      std::filesystem::remove_all(dir);
    }
    CHECK(mean >= 0.8);
    // Untrained (one step at a tiny rate), the same model is far from it: the accuracy comes from training.
    const auto dir = topo::testing::fresh_temp_dir("node_untrained_" + model);
    TrainConfig c = node_config(model, dir);
    c.epochs = 1;
    c.lr = 1e-6;
    CHECK(Trainer(c).run().best_dev_metric < mean);
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("node-classify: held-out test nodes are scored once with the best-on-dev parameters") {
  const auto dir = topo::testing::fresh_temp_dir("node_test_split");
  TrainConfig c = node_config("gcn", dir);
  c.set("test_nodes", "1,2,3,30,31,32").set("dev_nodes", "4,5,6,7,8,23,24,25,26,27");
  const TrainResult r = Trainer(c).run();
  REQUIRE(r.has_test);
  CHECK(r.test_metric >= 0.5);
  std::ifstream in(Trainer::result_path(c.out));
  const auto result = nlohmann::json::parse(in);
  CHECK(result.at("task") == "node-classify");
  CHECK(result.at("test_nodes") == 6);
  std::filesystem::remove_all(dir);
}

TEST_CASE("node-classify: bad data lines and settings are named") {
  auto bad = [](const std::string& text) {
    const std::string path = topo::testing::write_temp_file("nodes.txt", text);
    return error_of([&] { read_node_dataset(path); });
  };
  CHECK(bad("nodes 3\nlabel 0 0\nlabel 1 1\nlabel 2 0\nedge 0 3\n").find("nodes.txt:5: node 3 is outside [0, 3)") !=
        std::string::npos);
  CHECK(bad("label 0 0\n").find("nodes.txt:1: 'nodes N' must come first") != std::string::npos);
  CHECK(bad("nodes 2\nlabel 0 0\nlabel 0 1\n").find(":3: node 0 is labelled twice") != std::string::npos);
  CHECK(bad("nodes 2\nlabel 0 0\n").find("node 1 has no label") != std::string::npos);
  CHECK(bad("nodes 2\nvertex 0 1\n").find(":2: unknown record 'vertex'") != std::string::npos);
  CHECK(bad("nodes 2\nedge 0 1 7\n").find(":2: unexpected '7'") != std::string::npos);
  // A UTF-8 byte order mark opening the file is dropped, not read as part of the first record.
  const std::string bom = topo::testing::write_temp_file("bom.txt", "\xEF\xBB\xBFnodes 2\nlabel 0 0\nlabel 1 1\n");
  CHECK(read_node_dataset(bom).num_nodes == 2);
  CHECK(error_of([] { read_node_dataset("/nonexistent/karate.txt"); }).find("/nonexistent/karate.txt") !=
        std::string::npos);
  const auto dir = topo::testing::fresh_temp_dir("node_bad");
  CHECK(error_of([&] { read_node_dataset(dir.string()); }).find("is a directory, not a graph file") != std::string::npos);
  TrainConfig c = node_config("gcn", dir);
  CHECK(error_of([&] { c.set("model", "star").validate(); }).find("node-classify needs a model that reads a graph: gcn, gat") !=
        std::string::npos);
  c = node_config("gcn", dir);
  c.set("labelled", "0,34");
  CHECK(error_of([&] { Trainer(c).run(); }).find("--labelled names node 34, outside [0, 34)") != std::string::npos);
  c.set("labelled", "0,x");
  CHECK(error_of([&] { c.validate(); }).find("'labelled' = '0,x': 'x' is not a node id") != std::string::npos);
  c.set("labelled", "0,33").set("test_nodes", "33");
  CHECK(error_of([&] { Trainer(c).run(); }).find("node 33 is in --labelled and in --test-nodes") != std::string::npos);
  // The file's own splits are named as the file's, not as options the user never typed.
  NodeDataset d;
  d.num_nodes = 3, d.num_classes = 2, d.labels = {0, -1, 1}, d.edges = {{0, 1}, {1, 2}};
  d.splits.train = {0, 2};
  d.splits.dev = {2};
  CHECK(error_of([&] { NodeClassification(d, "g.npz", NodeSplits{}); })
            .find("node 2 is in the train split of g.npz and in the dev split of g.npz") != std::string::npos);
  d.splits = {.train = {0, 1}, .dev = {2}, .test = {}};
  CHECK(error_of([&] { NodeClassification(d, "g.npz", NodeSplits{}); })
            .find("node 1 of the train split of g.npz has no label in g.npz") != std::string::npos);
  CHECK(error_of([&] { NodeClassification(d, "g.npz", NodeSplits{.train = {1}, .dev = {}, .test = {}}); })
            .find("node 1 of --labelled has no label in g.npz") != std::string::npos);
  c = node_config("gcn", dir);
  c.set("data", "/nonexistent/graph.txt");
  CHECK(error_of([&] { Trainer(c).run(); }).find("/nonexistent/graph.txt") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("node-classify: a node count or class id past what the graph can hold is named with its line") {
  auto bad = [](const std::string& text) {
    const std::string path = topo::testing::write_temp_file("counts.txt", text);
    return error_of([&] { read_node_dataset(path); });
  };
  // Refused before the per-node arrays are allocated (these gave std::bad_alloc).
  CHECK(bad("nodes 99999999999999\nlabel 0 0\n")
            .find("counts.txt:1: 99999999999999 nodes do not fit the graph's int32 node ids") != std::string::npos);
  CHECK(bad("# a short file\nnodes 300000000\nlabel 0 0\nlabel 1 1\n")
            .find("counts.txt:2: 300000000 nodes, but every node needs a 'label NODE CLASS' line, and this file of 51 "
                  "bytes has room for at most 5") != std::string::npos);
  // A class id is below the node count (2000000 on karate trained a 2,000,001-class model; 2^63 - 1 overflowed).
  CHECK(bad("nodes 3\nlabel 0 0\nlabel 1 3\nlabel 2 1\n")
            .find("counts.txt:3: class 3 of node 1 is not below the node count 3") != std::string::npos);
  CHECK(bad("nodes 3\nlabel 0 0\nlabel 1 9223372036854775807\n")
            .find("counts.txt:3: class 9223372036854775807 of node 1") != std::string::npos);
  const NodeDataset d = read_node_dataset(topo::testing::write_temp_file("counts.txt", "nodes 3\nlabel 0 2\nlabel 1 0\n"
                                                                                       "label 2 0\n"));
  CHECK(d.num_classes == 3);  // the largest id the bound allows
}
