// topo-train --task node-classify: the karate-club file as published (Zachary 1977), GCN and GAT learn the
// two factions from one labelled node each, the reader's errors name file:line, and the CLI writes result.json.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/tasks/node_classify.hpp"
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

TEST_CASE("node-classify: GCN and GAT learn the factions from one labelled node each") {
  for (const std::string model : {"gcn", "gat"}) {
    CAPTURE(model);
    NodeClassifyConfig c;
    c.model = model;
    c.seeds = 3;
    const nlohmann::json r = run_node_classify(c);
    // 32 scored nodes, 16 per faction: a constant guess scores 0.5.
    CHECK(r.at("mean_accuracy").get<double>() >= 0.8);
    for (const double loss : r.at("final_train_loss").get<std::vector<double>>()) CHECK(loss < 0.3);
    const auto acc = r.at("accuracy").get<std::vector<double>>();
    const auto wrong = r.at("misclassified").get<std::vector<std::vector<std::int64_t>>>();
    REQUIRE(wrong.size() == acc.size());
    for (std::size_t s = 0; s < acc.size(); ++s) CHECK(acc[s] == doctest::Approx(1.0 - wrong[s].size() / 32.0));
    // Untrained (one step), the same models are far from it: the accuracy comes from training.
    c.epochs = 1;
    c.lr = 1e-6f;
    CHECK(run_node_classify(c).at("mean_accuracy").get<double>() < r.at("mean_accuracy").get<double>());
  }
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
  CHECK(error_of([] { read_node_dataset("/nonexistent/karate.txt"); }).find("/nonexistent/karate.txt") !=
        std::string::npos);
  NodeClassifyConfig c;
  c.model = "gin";
  CHECK(error_of([&] { run_node_classify(c); }).find("unknown model 'gin' (models: gcn, gat)") != std::string::npos);
  c.model = "gcn";
  c.labelled = {0, 34};
  CHECK(error_of([&] { run_node_classify(c); }).find("labelled node 34") != std::string::npos);
}

TEST_CASE("topo-train --task node-classify writes result.json with the per-seed accuracies") {
  const auto dir = topo::testing::fresh_temp_dir("node_classify_cli");
  const std::string out_dir = (dir / "run").string();
  std::vector<std::string> args = {"topo-train", "--task", "node-classify", "--model", "gat", "--seeds", "2",
                                   "--out", out_dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  CHECK(wants_node_classify(static_cast<int>(argv.size()), argv.data()));
  std::ostringstream log;
  CHECK(node_classify_main(static_cast<int>(argv.size()), argv.data(), log) == 0);
  CHECK(log.str().find("over 2 seeds") != std::string::npos);
  std::ifstream in(out_dir + "/result.json");
  REQUIRE(in.good());
  const auto r = nlohmann::json::parse(in);
  CHECK(r.at("model") == "gat");
  CHECK(r.at("accuracy").size() == 2);
  CHECK(r.at("heads") == 4);
}
