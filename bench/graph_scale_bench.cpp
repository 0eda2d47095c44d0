// Suite `graph_scale` (issue item "cost growth against edges"): how a full-graph node-classification training
// step's time and memory grow with the graph. GCN, GraphSAGE (mean) and GAT with their node-classify recipes
// (models/graph_nets/registration.cpp: GCN and SAGE 2 layers of 16, dropout 0.5; GAT 8 heads x 8 then one
// head, dropout 0.6; Adam at each recipe's lr and L2) train on
// contextual SBM graphs (apps/graphs/generate.hpp: degree 20, 8 classes, 128 Gaussian features, homophily 0.8)
// of 10,000, 30,000, 100,000, 300,000 and 1,000,000 nodes (--sizes replaces the list; --quick: the first three
// and 3 timed steps). With node-classify's self loops that is about 21 edges a node: 0.2M to 21M edges.
// A step is what topo-train's full-graph step is (apps/train/trainer.cpp): the whole graph forward, the cross
// entropy over the training nodes, backward, Adam's update; the batch (features [N, 128], targets [N], the graph)
// is built once per size, as it is the same every step. Each graph is generated once and both models run on it.
//
// Per row: 2 untimed warm-up steps (the first builds the CSR and CSC the aggregations walk), then at least 5
// timed steps (more up to a 2 s budget, at most 20): the median step, ns per edge (edges with self loops), and
// from one more step measured apart, the allocator's peak above what was live before it (host_memory::stats,
// reset_peak: the step's activations, gradients and scratch; parameters and Adam's moments are live before)
// and the process's RSS growth in it (kernels/memory.hpp, high-water mark reset before). The graph's bytes:
// the feature table, the COO edge list and the CSR + CSC (indptr, indices, edge ids); the per-step working set
// is the feature table plus the CSR + CSC, what a step reads besides its own activations. Each model's largest
// row gets the least-squares slope of log(step time) and log(allocator step peak) over log(edges)
// (bench/loglog.hpp; 1 = linear, the goal 1.0 +- 0.1), and with --json FILE two log-log plots go next to it
// (FILE-time.svg, FILE-memory.svg) with the slopes in the legend and a line where the working set passes the
// last-level cache (interpolated between the rows around it, or extrapolated: at a fixed degree the working
// set is proportional to the edges).
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <numeric>

#include "apps/graphs/generate.hpp"
#include "apps/tasks/node_classify/node_classify.hpp"
#include "bench/harness.hpp"
#include "bench/loglog.hpp"
#include "bench/machine.hpp"
#include "bench/svg_plot.hpp"
#include "kernels/memory.hpp"
#include "kernels/storage.hpp"
#include "models/registry.hpp"
#include "nn/optim.hpp"

namespace {

using namespace topo;
using bench::crossing, bench::loglog_slope;
using Points = std::vector<std::pair<double, double>>;

constexpr std::int64_t kDegree = 20, kClasses = 8, kFeatures = 128;
constexpr double kMiB = 1 << 20;

struct GraphModel {
  const char* model;  // the registered model (models/registry.hpp), its node-classify recipe
  const char* name;   // in result names
  const char* label;  // in plots
};
// SAGE's declared default aggregator is mean (models/graph_nets/registration.cpp).
constexpr GraphModel kModels[] = {{"gcn", "gcn", "GCN"}, {"sage", "sage-mean", "SAGE-mean"}, {"gat", "gat", "GAT"}};

// A model as topo-train builds it for the task (apps/train/model_factory.cpp): the registered encoder at its
// node-classify recipe's sizes, the task's output stage, Adam with the recipe's lr and L2.
struct Trainee {
  std::shared_ptr<models::SequenceModel> model;
  std::unique_ptr<nn::Adam> optimizer;
  nlohmann::json recipe;
};

Trainee make_trainee(const GraphModel& m, const apps::NodeClassification& task) {
  const models::ModelRegistration& reg = models::find_model(m.model);
  Trainee t;
  t.recipe = models::model_recipe(m.model, "node-classify");
  models::EncoderSpec spec;
  spec.hidden = t.recipe.at("hidden").get<std::int64_t>();
  spec.layers = t.recipe.at("layers").get<std::int64_t>();
  spec.dropout = t.recipe.at("dropout").get<float>();
  spec.input_dim = task.input_dim();
  spec.max_length = task.max_length();
  spec.output_dim = task.encoder_output_dim();  // the last layer is the class layer: scores [N, classes]
  for (const models::ModelOption& o : reg.options) spec.options[o.name] = o.default_value;
  t.model = task.make_model(reg.make(spec), {});
  t.model->reset_parameters(1);
  t.model->train();  // dropout on, as in training
  t.optimizer = std::make_unique<nn::Adam>(t.model->parameters(), nn::AdamOptions{.lr = t.recipe.at("lr").get<float>()},
                                           t.recipe.at("weight_decay").get<float>());
  return t;
}

// One training step (apps/train/trainer.cpp's, on the CPU); returns the loss.
float train_step(Trainee& t, const apps::NodeClassification& task, const apps::TaskBatch& batch) {
  t.optimizer->zero_grad();
  nn::Var loss = task.batch_loss(*t.model, t.model->forward(batch.inputs), batch);
  const float value = loss.item();
  loss.backward();
  t.optimizer->step();
  return value;
}

struct StepMemory {
  double rss_before = 0, rss_peak = 0;         // resident bytes before the step and its high-water mark
  double live_before = 0, allocator_peak = 0;  // the allocator's live bytes before the step and its peak
  bool rss_reset = false;
};

// A step with the memory probes around it. The allocator's cache is emptied and the C heap trimmed first, so
// the RSS mark starts from what is in use, not from what an earlier, larger step left parked.
StepMemory measured_step(const std::function<void()>& step) {
  StepMemory m;
  host_memory::empty_cache();
  malloc_trim(0);
  m.rss_reset = reset_peak_rss();
  host_memory::reset_peak();
  m.rss_before = double(rss_bytes());
  m.live_before = double(host_memory::stats().bytes_in_use);
  step();
  m.allocator_peak = double(host_memory::stats().peak_bytes_in_use);
  m.rss_peak = double(peak_rss_bytes());
  return m;
}

// The graph's bytes, once a step has built its formats: node features [N, F] float32, the COO lists (src, dst)
// and the CSR + CSC (indptr [N + 1], indices [E], and edge ids [E] where the model built them: GAT does, GCN
// and SAGE do not; int32 ids: 4 B each).
struct GraphBytes {
  double features = 0, coo = 0, formats = 0;
  double total() const { return features + coo + formats; }
  double working_set() const { return features + formats; }  // what a step reads besides its activations
};
GraphBytes graph_bytes(const HeteroGraph& g, const Tensor& features) {
  const auto view = [](const CsrView& v) {
    return double(v.indptr.nbytes() + v.indices.nbytes() + (v.has_edge_ids() ? v.eids.nbytes() : 0));
  };
  const EdgeList coo = g.edges(0);
  const HeteroGraph::BuiltFormats built = g.built_formats(0);
  return {double(features.nbytes()), double(coo.src.nbytes() + coo.dst.nbytes()),
          view(built.csr_edge_ids ? g.out_csr(0) : g.out_csr_structure(0)) +
              view(built.csc_edge_ids ? g.in_csc(0) : g.in_csc_structure(0))};
}

// The edges at which the working set passes the last-level cache: interpolated between the rows around it,
// else extrapolated from the nearest row (proportional to the edges at a fixed degree).
double working_set_leaves_llc(const Points& ws, double llc) {
  if (ws.front().second >= llc) return ws.front().first * llc / ws.front().second;
  if (ws.back().second < llc) return ws.back().first * llc / ws.back().second;
  return crossing(ws, llc);
}

}  // namespace

TOPO_BENCH_SUITE(graph_scale, "full-graph GCN / GraphSAGE / GAT training steps on csbm graphs of 10k..1M nodes: "
                              "time and memory against edges, log-log slopes") {
  const std::vector<std::int64_t> sizes =
      !bench.sizes().empty() ? bench.sizes()
      : bench.quick()        ? std::vector<std::int64_t>{10000, 30000, 100000}
                             : std::vector<std::int64_t>{10000, 30000, 100000, 300000, 1000000};
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    TOPO_CHECK(sizes[i] >= 100, "topo-bench graph_scale: --sizes must be node counts >= 100, got {}", sizes[i]);
    TOPO_CHECK(i == 0 || sizes[i] > sizes[i - 1], "topo-bench graph_scale: --sizes must be increasing, got {}",
               fmt::join(sizes, ","));
  }
  const int warmup = 2;
  const std::size_t min_reps = bench.quick() ? 3 : 5, max_reps = bench.quick() ? 3 : 20;
  const double budget_ms = bench.quick() ? 0 : 2000;
  const double llc = double(bench.machine().llc_bytes());
  fmt::print("graph_scale: csbm degree {}, {} classes, {} features; GCN, GraphSAGE-mean and GAT at their node-classify "
             "recipes; full-graph steps (forward, cross entropy, backward, Adam); {} warm-up, >= {} timed; "
             "L3 {:.0f} MiB\n",
             kDegree, kClasses, kFeatures, warmup, min_reps, llc / kMiB);

  std::map<std::string, Points> time_pts, memory_pts, rss_pts;  // model -> (edges, figure)
  std::map<std::string, std::string> last_row;                   // model -> its largest row's name
  std::map<std::string, double> first_ns, first_peak;            // model -> its first row's per-edge figures
  Points ws_pts;                                                 // (edges, working-set bytes), one per size
  std::vector<double> edge_counts;
  std::map<std::string, std::string> widths;  // model label -> its recipe's sizes, for the plots' titles

  for (const std::int64_t nodes : sizes) {
    const apps::GeneratedGraphSpec spec = apps::parse_generated_graph_spec(
        fmt::format("csbm:nodes={},degree={},classes={},features={},homophily=0.8,snr=1", nodes, kDegree, kClasses,
                    kFeatures));
    std::fprintf(stderr, "  generating %s\n", spec.str().c_str());
    // load_node_dataset checks the generation against the memory first; Gaussian features: no row normalisation
    // (node-classify's --feature-norm auto says the same).
    const apps::NodeClassification task(apps::load_node_dataset(spec.str()), spec.str(), {}, /*row_normalize=*/false);
    std::vector<std::int64_t> train(static_cast<std::size_t>(task.size(apps::Split::Train)));
    std::iota(train.begin(), train.end(), std::int64_t{0});
    const apps::TaskBatch batch = task.batch(apps::Split::Train, train);  // the whole graph, training targets
    const HeteroGraph& graph = *batch.inputs.graph;
    const std::int64_t edges = graph.total_num_edges();  // both directions and the self loops
    edge_counts.push_back(double(edges));

    for (const GraphModel& m : kModels) {
      const std::string name = fmt::format("{} nodes={}", m.name, nodes);
      std::fprintf(stderr, "  running graph_scale/%s (%lld edges)\n", name.c_str(), static_cast<long long>(edges));
      Trainee t = make_trainee(m, task);
      if (!widths.count(m.label)) {
        const int heads = t.recipe.contains("heads") ? t.recipe.at("heads").get<int>() : 1;
        widths[m.label] = fmt::format("{} {}x{}{}", m.label, t.recipe.at("layers").get<int>(),
                                      t.recipe.at("hidden").get<int>(), heads > 1 ? fmt::format(" ({} heads)", heads) : "");
      }
      task.check_step_memory(*t.model, Device::cpu());  // an error naming the sizes, not an OOM kill
      float loss = 0;
      for (int i = 0; i < warmup; ++i) loss = train_step(t, task, batch);
      std::vector<double> ms;
      double total = 0;
      while (ms.size() < min_reps || (total < budget_ms && ms.size() < max_reps)) {
        const auto t0 = std::chrono::steady_clock::now();
        loss = train_step(t, task, batch);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        total += ms.back();
      }
      // After the timed steps: emptying the allocator's cache would make the next step fault its pages again.
      const StepMemory mem = measured_step([&] { loss = train_step(t, task, batch); });
      TOPO_CHECK(std::isfinite(loss), "topo-bench graph_scale: {}: loss {} after {} steps", name, loss,
                 warmup + int(ms.size()) + 1);
      const GraphBytes gb = graph_bytes(graph, batch.inputs.features);  // both formats built by the warm-up
      if (&m == &kModels[0]) ws_pts.push_back({double(edges), gb.working_set()});

      const nlohmann::json extra = {{"model", m.model},      {"nodes", nodes},       {"edges", edges},
                                    {"degree", kDegree},     {"classes", kClasses},  {"features", kFeatures},
                                    {"recipe", t.recipe},    {"graph", spec.str()}};
      const bench::Result res =
          bench.record(name, bench::summarize(ms), {.working_set_bytes = gb.working_set()}, extra);
      const double step_ms = res.stats.median_ms, ns_per_edge = 1e6 * step_ms / double(edges);
      const double step_peak = mem.allocator_peak - mem.live_before, rss_step = mem.rss_peak - mem.rss_before;
      first_ns.emplace(m.name, ns_per_edge);
      first_peak.emplace(m.name, step_peak / double(edges));
      bench.annotate("ns_per_edge", ns_per_edge);
      bench.annotate("loss", loss);
      bench.annotate("allocator_step_peak_bytes", step_peak);
      bench.annotate("allocator_peak_bytes", mem.allocator_peak);
      bench.annotate("allocator_live_before_step_bytes", mem.live_before);
      bench.annotate("rss_step_bytes", rss_step);
      bench.annotate("peak_rss_bytes", mem.rss_peak);
      bench.annotate("rss_before_step_bytes", mem.rss_before);
      bench.annotate("rss_peak_was_reset", mem.rss_reset);
      bench.annotate("graph_bytes", {{"features", gb.features}, {"coo", gb.coo}, {"csr_csc", gb.formats},
                                     {"total", gb.total()}, {"per_edge", gb.total() / double(edges)}});
      bench.annotate("working_set_bytes", gb.working_set());
      bench.annotate("working_set_over_llc", gb.working_set() / llc);
      bench.annotate("ratio_to_first", {{"first_nodes", sizes.front()},
                                        {"ns_per_edge", ns_per_edge / first_ns[m.name]},
                                        {"allocator_step_peak_per_edge",
                                         step_peak / double(edges) / first_peak[m.name]}});
      fmt::print("graph_scale: {:<22} {:>9} edges  step {:9.2f} ms  {:6.1f} ns/edge  step peak {:8.1f} MiB  RSS step "
                 "{:8.1f} MiB  graph {:8.1f} MiB  loss {:.3f}\n",
                 name, edges, step_ms, ns_per_edge, step_peak / kMiB, rss_step / kMiB, gb.total() / kMiB, loss);
      time_pts[m.name].push_back({double(edges), step_ms});
      memory_pts[m.name].push_back({double(edges), step_peak / kMiB});
      rss_pts[m.name].push_back({double(edges), std::max(1.0, rss_step)});
      last_row[m.name] = name;
    }
  }

  // Slopes over the sizes, on each model's largest row; the plots carry them in their legends.
  const double ws_leaves = working_set_leaves_llc(ws_pts, llc);
  std::vector<bench::Series> time_series, memory_series;
  for (const GraphModel& m : kModels) {
    const double st = loglog_slope(time_pts[m.name]), sm = loglog_slope(memory_pts[m.name]),
                 sr = loglog_slope(rss_pts[m.name]);
    const double peak_leaves = crossing(memory_pts[m.name], llc / kMiB);
    bench.annotate_result(last_row[m.name], "loglog_slope",
                          {{"step_time", st}, {"allocator_step_peak", sm}, {"rss_step", sr},
                           {"from_edges", edge_counts.front()}, {"to_edges", edge_counts.back()},
                           {"points", time_pts[m.name].size()}});
    bench.annotate_result(last_row[m.name], "working_set_passes_llc_at_edges", ws_leaves);
    bench.annotate_result(last_row[m.name], "step_peak_passes_llc_at_edges",
                          peak_leaves > 0 ? nlohmann::json(peak_leaves) : nullptr);
    fmt::print("graph_scale: {:<14} log-log slope over edges ({:.3g}..{:.3g}): step time {:.2f}, allocator step peak "
               "{:.2f}, RSS step {:.2f} (goal 1.0 +- 0.1)\n",
               m.label, edge_counts.front(), edge_counts.back(), st, sm, sr);
    time_series.push_back({fmt::format("{}, slope {:.2f}", m.label, st), time_pts[m.name]});
    memory_series.push_back({fmt::format("{}, slope {:.2f}", m.label, sm), memory_pts[m.name]});
  }
  fmt::print("graph_scale: the working set (features + CSR + CSC) passes L3 ({:.0f} MiB) at about {:.3g} edges\n",
             llc / kMiB, ws_leaves);
  const std::vector<bench::XMark> marks = {
      {ws_leaves, fmt::format("features + CSR/CSC > L3 ({:.0f} MiB)", llc / kMiB)}};
  std::vector<std::string> sizes_of;
  for (const GraphModel& m : kModels)
    if (widths.count(m.label)) sizes_of.push_back(widths[m.label]);
  const std::string what = fmt::format("(csbm degree {}, {} features; {})", kDegree, kFeatures, fmt::join(sizes_of, ", "));
  if (const std::string path = bench.artifact_path("time.svg"); !path.empty())
    bench::write_log_log_svg(path, "Full-graph training step " + what, "edges (with self loops)", "step time (ms)",
                             time_series, marks);
  if (const std::string path = bench.artifact_path("memory.svg"); !path.empty())
    bench::write_log_log_svg(path, "Allocator step peak " + what, "edges (with self loops)",
                             "allocator peak - live before (MiB)", memory_series, marks);
}
