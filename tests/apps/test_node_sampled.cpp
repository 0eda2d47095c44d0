// topo-train --task node-classify --fanouts: neighbour-sampled mini-batches on Cora's public split
// (../shared/data/planetoid, fails without it). A batch's blocks chain (a layer's sources are the next one's
// destinations, destinations leading sources), respect the fan-outs and are a function of the batch's nodes;
// GraphSAGE learns through the trainer, and two runs with one seed end alike.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "apps/graphs/generate.hpp"
#include "apps/graphs/sampling_report.hpp"
#include "apps/tasks/node_classify/node_classify.hpp"
#include "apps/train/config.hpp"
#include "apps/train/trainer.hpp"
#include "models/registry.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

namespace {

// In-degrees of a block's destinations (the graph's id type, int32 or int64).
std::vector<std::int64_t> in_degrees(const HeteroGraph& block) {
  const Tensor d = block.in_degrees(0);
  if (d.dtype() == DType::I64) return d.to_vector<std::int64_t>();
  const auto narrow = d.to_vector<std::int32_t>();
  return {narrow.begin(), narrow.end()};
}

}  // namespace

TEST_CASE("node-classify --fanouts: a batch's blocks chain, respect the fan-outs and repeat for the same nodes") {
  const std::string path = topo::testing::shared_data_path("planetoid/cora.npz");
  const NodeClassification task(read_npz_node_dataset(path), path, {}, true, -1, {5, 3});
  const std::vector<std::int64_t> indices = {7, 0, 139, 42, 8};
  const TaskBatch b = task.sampled_batch(indices);
  const auto& blocks = b.inputs.blocks;
  REQUIRE(blocks.size() == 2);
  CHECK(b.targets.to_vector<std::int64_t>().size() == indices.size());
  CHECK(blocks[1]->num_nodes("DST/_N") == 5);
  CHECK(blocks[0]->num_nodes("DST/_N") == blocks[1]->num_nodes("SRC/_N"));
  CHECK(b.inputs.features.size(0) == blocks[0]->num_nodes("SRC/_N"));
  CHECK(b.inputs.features.size(1) == 1433);
  for (std::size_t l = 0; l < 2; ++l) {
    const std::int64_t fanout = l == 0 ? 5 : 3;
    for (const std::int64_t d : in_degrees(*blocks[l])) {
      CHECK(d >= 1);  // every node has a self loop, so at least one in-edge is drawn
      CHECK(d <= fanout);
    }
  }
  const TaskBatch again = task.sampled_batch(indices);
  for (std::size_t l = 0; l < 2; ++l) CHECK(again.inputs.blocks[l]->edges(0).pairs() == blocks[l]->edges(0).pairs());
  CHECK(error_of([&] { task.sampled_batch({140}); }).find("outside [0, 140)") != std::string::npos);
  CHECK(error_of([&] { NodeClassification(read_npz_node_dataset(path), path, {}, true, -1, {0}); }).find("--fanouts") !=
        std::string::npos);
}

TEST_CASE("node-classify --fanouts: GraphSAGE learns Cora from sampled mini-batches, and a seed repeats its run") {
  const std::string path = topo::testing::shared_data_path("planetoid/cora.npz");
  std::vector<double> test_acc;
  for (int run = 0; run < 2; ++run) {
    const auto dir = topo::testing::fresh_temp_dir("node_sampled_" + std::to_string(run));
    TrainConfig c;
    c.set("task", "node-classify").set("model", "sage");
    apply_config_json(c, models::model_recipe("sage", "node-classify"), "recipe");
    c.set("data", path).set("fanouts", "10,25");
    c.batch = 64;
    c.epochs = 40;
    c.progress = "none";
    c.out = dir.string();
    const TrainResult r = Trainer(c).run();
    REQUIRE(r.completed);
    CHECK(r.steps == 40 * 3);  // 140 training nodes in batches of 64
    REQUIRE(r.has_test);
    test_acc.push_back(r.test_metric);
    std::filesystem::remove_all(dir);
  }
  // Full-graph SAGE reaches 80.8 +- 0.9 on this split (docs/results.md); the majority class scores 0.13.
  CHECK(test_acc[0] > 0.75);
  CHECK(test_acc[1] == test_acc[0]);
}

TEST_CASE("topo-graph sample's report: the sampler's batches on a generated graph, the same edges every run") {
  const NodeDataset d = generate_node_dataset(parse_generated_graph_spec("csbm:nodes=3000,degree=8,classes=4,features=8"));
  const nlohmann::json r = sampling_report(d, {5, 10}, 64, 4, 7);
  CHECK(r["batches"] == 4);
  CHECK(r["batch"] == 64);
  CHECK(r["fanouts"] == nlohmann::json({5, 10}));
  CHECK(r["median_batch_ms"].get<double>() > 0);
  CHECK(r["seeds_per_second"].get<double>() > 0);
  // The output layer draws at most 10 in-edges of each of 64 seeds, the input layer at most 5 of each of its
  // destinations (the seeds and their sampled sources); self loops make every degree at least 1.
  const double edges = r["edges_per_batch"].get<double>();
  CHECK(edges >= 64 + 64);
  CHECK(edges <= 64 * 10 + 64 * 11 * 5);
  CHECK(r["input_nodes_per_batch"].get<double>() >= 64);
  CHECK(sampling_report(d, {5, 10}, 64, 4, 7)["edges_per_batch"] == r["edges_per_batch"]);
  CHECK(error_of([&] { (void)sampling_report(d, {5}, 0, 1, 1); }).find("--batch 0") != std::string::npos);
}
