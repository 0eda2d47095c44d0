// Generated graphs (apps/graphs/generate.hpp): the same spec gives the same graph whatever the thread count, the
// graphs have the degree, homophily and feature signal asked for, they survive the .npz round trip, bad specs
// name their key, and GraphSAGE learns a planted partition through topo-train's trainer.
#include <doctest/doctest.h>

#include <omp.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "apps/graphs/generate.hpp"
#include "apps/graphs/npz.hpp"
#include "apps/train/config.hpp"
#include "apps/train/trainer.hpp"
#include "models/registry.hpp"
#include "tests/support/testing.hpp"

using namespace topo;
using namespace topo::apps;
using topo::testing::error_of;

namespace {

NodeDataset generate(const std::string& spec) { return generate_node_dataset(parse_generated_graph_spec(spec)); }

void check_same(const NodeDataset& a, const NodeDataset& b) {
  CHECK(a.num_nodes == b.num_nodes);
  CHECK(a.num_classes == b.num_classes);
  CHECK(a.edges == b.edges);
  CHECK(a.labels == b.labels);
  CHECK(a.features.to_vector<float>() == b.features.to_vector<float>());
  CHECK(a.splits.train == b.splits.train);
  CHECK(a.splits.dev == b.splits.dev);
  CHECK(a.splits.test == b.splits.test);
}

}  // namespace

TEST_CASE("generated graphs: one spec, one graph, whatever the thread count; another seed, another graph") {
  for (const std::string spec : {"csbm:nodes=3000,degree=8,classes=3,features=16", "rmat:nodes=3000,degree=8,classes=3,features=16"}) {
    CAPTURE(spec);
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const NodeDataset one = generate(spec);
    omp_set_num_threads(std::max(2, threads));
    const NodeDataset many = generate(spec);
    omp_set_num_threads(threads);
    check_same(one, many);
    const NodeDataset other = generate(spec + ",seed=2");
    CHECK(other.edges != one.edges);
    CHECK(other.labels != one.labels);
    // Every edge listed in both directions, no self loop, none twice.
    REQUIRE(one.edges.size() % 2 == 0);
    const std::size_t half = one.edges.size() / 2;
    for (std::size_t i = 0; i < half; ++i) {
      CHECK(one.edges[i].first < one.edges[i].second);
      CHECK(one.edges[half + i] == std::make_pair(one.edges[i].second, one.edges[i].first));
      if (i > 0) CHECK(one.edges[i - 1] < one.edges[i]);
    }
  }
}

TEST_CASE("generated graphs: degree, homophily, class sizes, splits and feature signal as asked") {
  const GeneratedGraphSpec spec =
      parse_generated_graph_spec("csbm:nodes=20000,degree=12,classes=4,features=32,homophily=0.7,snr=2,train=0.05,dev=500,test=0.25");
  const NodeDataset d = generate_node_dataset(spec);
  const NodeDatasetStats s = node_dataset_stats(d);
  CHECK(s.nodes == 20000);
  CHECK(s.self_loops == 0);
  // Repeated draws are dropped: with 5,000 nodes per class they are ~0.1% of the edges.
  CHECK(s.mean_degree == doctest::Approx(12).epsilon(0.01));
  CHECK(s.mean_degree <= 12);
  CHECK(s.edge_homophily == doctest::Approx(0.7).epsilon(0.02));
  CHECK(s.isolated_nodes < 20);  // Poisson(12) leaves a node alone with probability e^-12
  std::vector<std::int64_t> per_class(4, 0);
  for (const std::int64_t y : d.labels) ++per_class[static_cast<std::size_t>(y)];
  for (const std::int64_t c : per_class) CHECK(c == doctest::Approx(5000).epsilon(0.05));
  CHECK(d.splits.train.size() == 1000);
  CHECK(d.splits.dev.size() == 500);
  CHECK(d.splits.test.size() == 5000);
  // Features: each class's mean is a unit vector, orthogonal to the others; the noise's std is sqrt(2) / snr.
  const std::int64_t f = 32;
  const std::vector<float> x = d.features.to_vector<float>();
  std::vector<double> mean(4 * f, 0.0);
  for (std::int64_t v = 0; v < s.nodes; ++v)
    for (std::int64_t k = 0; k < f; ++k) mean[d.labels[v] * f + k] += x[v * f + k] / double(per_class[d.labels[v]]);
  double spread = 0;
  for (std::int64_t v = 0; v < s.nodes; ++v)
    for (std::int64_t k = 0; k < f; ++k) spread += std::pow(x[v * f + k] - mean[d.labels[v] * f + k], 2);
  CHECK(std::sqrt(spread / double(s.nodes * f)) == doctest::Approx(std::sqrt(2.0) / 2).epsilon(0.02));
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      double dot = 0;
      for (std::int64_t k = 0; k < f; ++k) dot += mean[a * f + k] * mean[b * f + k];
      CHECK(dot == doctest::Approx(a == b ? 1.0 : 0.0).epsilon(0.05).scale(1.0));
    }

  // R-MAT: a skewed degree distribution, and R-MAT's blocks as classes make it homophilous (a + d > 1/2).
  const NodeDataset r = generate("rmat:nodes=16384,degree=16,classes=4,features=8");
  const NodeDatasetStats rs = node_dataset_stats(r);
  CHECK(rs.self_loops == 0);
  CHECK(rs.mean_degree > 10);  // repeats of the hubs' edges dropped
  CHECK(rs.mean_degree <= 16);
  CHECK(rs.max_degree > 30 * rs.mean_degree);
  CHECK(rs.isolated_nodes > 1000);  // a power law: many nodes R-MAT's quadrants rarely reach
  CHECK(rs.edge_homophily > 0.35);  // random labels would give 0.25
}

TEST_CASE("generated graphs: written as .npz, read back as the same graph") {
  const NodeDataset d = generate("csbm:nodes=500,degree=6,classes=3,features=8,test=0");
  const auto dir = topo::testing::fresh_temp_dir("generated_npz");
  const std::string path = (dir / "csbm.npz").string();
  write_npz_node_dataset(path, d);
  const auto arrays = read_npz(path);
  CHECK(arrays.at("x").dtype == "f4");
  CHECK(arrays.at("train_mask").dtype == "b1");
  CHECK(arrays.at("edge_index").shape == std::vector<std::int64_t>{2, static_cast<std::int64_t>(d.edges.size())});
  const NodeDataset back = read_node_dataset(path);
  check_same(d, back);
  CHECK(back.directed);
  // Through the task as a file and as the spec: the same data either way.
  CHECK(load_node_dataset(path).edges == load_node_dataset("csbm:nodes=500,degree=6,classes=3,features=8,test=0").edges);
  std::filesystem::remove_all(dir);
}

TEST_CASE("generated graphs: a bad spec is an error naming the key and what is allowed") {
  auto bad = [](const std::string& spec) { return error_of([&] { (void)parse_generated_graph_spec(spec); }); };
  CHECK(bad("csbm:nodes=100,colour=3").find("unknown key 'colour' for csbm") != std::string::npos);
  CHECK(bad("csbm:nodes=100,a=0.5").find("unknown key 'a' for csbm") != std::string::npos);
  CHECK(bad("csbm:homophily=1.5").find("homophily=1.5 must be in [0, 1]") != std::string::npos);
  CHECK(bad("rmat:a=0.6,b=0.3,c=0.3").find("a + b + c <= 1") != std::string::npos);
  CHECK(bad("csbm:nodes=100,train=50,dev=40,test=20").find("train + dev + test = 110 nodes, more than nodes=100") !=
        std::string::npos);
  CHECK(bad("csbm:classes=8,features=4").find("features=4 must be >= classes=8") != std::string::npos);
  CHECK(bad("csbm:nodes=ten").find("nodes='ten' is not a number") != std::string::npos);
  CHECK(bad("csbm:nodes=2.5").find("nodes=2.5 must be a whole number") != std::string::npos);
  CHECK(bad("csbm:degree=0").find("degree=0 must be > 0") != std::string::npos);
  CHECK(bad("csbm:nodes").find("'nodes' is not KEY=VALUE") != std::string::npos);
  CHECK(bad("csbm:nodes=10,nodes=20").find("nodes is given twice") != std::string::npos);
  CHECK(bad("csbm:train=1.5").find("train=1.5 must be a fraction") != std::string::npos);
  // Through topo-train's config: the task's validation names --data before anything is generated.
  TrainConfig c;
  c.set("task", "node-classify").set("model", "sage").set("data", "rmat:d=0.1");
  CHECK(error_of([&] { c.validate(); }).find("unknown key 'd' for rmat") != std::string::npos);
}

TEST_CASE("GraphSAGE (mean and pool) learns a planted partition through the trainer; the run reports time and memory") {
  // Features alone separate two classes with error Phi(-1 / 2) = 31% (four classes: about half right); the
  // neighbourhood, 85% of it in the node's class, is what makes the accuracy: with homophily at chance (0.25)
  // the same model stays near what the features give.
  const std::string data = "csbm:nodes=3000,degree=10,classes=4,features=32,snr=1,train=0.1,dev=0.1,test=0.3";
  auto train = [&](const std::string& aggregator, const std::string& homophily) {
    const auto dir = topo::testing::fresh_temp_dir("sage_" + aggregator + homophily);
    TrainConfig c;
    c.set("task", "node-classify").set("model", "sage");
    apply_config_json(c, models::model_recipe("sage", "node-classify"), "recipe");
    c.set("data", data + ",homophily=" + homophily).set("aggregator", aggregator).set("epochs", 100).set("hidden", 32);
    c.progress = "none";
    c.out = dir.string();
    const TrainResult r = Trainer(c).run();
    std::ifstream in(Trainer::result_path(c.out));
    const auto result = nlohmann::json::parse(in);
    std::filesystem::remove_all(dir);
    return std::make_pair(r, result);
  };
  for (const std::string aggregator : {"mean", "pool"}) {
    CAPTURE(aggregator);
    const auto run = train(aggregator, "0.85");
    const TrainResult& r = run.first;
    const nlohmann::json& result = run.second;
    REQUIRE(r.has_test);
    CHECK(r.test_metric >= 0.85);
    CHECK(r.baseline.at("majority_acc").get<double>() < 0.35);
    CHECK(result.at("aggregator") == aggregator);
    CHECK(result.at("epoch_train_seconds").at("epochs") == 100);
    CHECK(result.at("epoch_train_seconds").at("median").get<double>() > 0);
    // The features alone are 3000 x 32 floats: the allocator held at least them, the process more.
    CHECK(result.at("memory").at("allocator_peak_bytes").get<std::int64_t>() >= 3000 * 32 * 4);
    CHECK(result.at("memory").at("peak_rss_bytes").get<std::int64_t>() >=
          result.at("memory").at("allocator_peak_bytes").get<std::int64_t>());
  }
  CHECK(train("mean", "0.25").first.test_metric < 0.75);
}
