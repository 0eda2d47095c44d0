// topo-graph: node-classification graphs as files, so that a user, topo-train and the DGL / PyG peers load the
// same one (apps/graphs/generate.hpp).
//   topo-graph generate csbm:nodes=100000,degree=20,classes=8 --out csbm100k.npz   # Planetoid-layout .npz
//   topo-graph stats csbm:nodes=100000,degree=20          # nodes, edges, degrees, homophily of a generated graph
//   topo-graph stats ../shared/data/planetoid/cora.npz    # ... or of a file
//   topo-graph sample csbm1m.npz --fanouts 10,25 --batch 1024 --batches 50 --threads 2   # the sampler's throughput
// Exit codes: 0 done (or --help), 1 a bad argument or file (one line "topo-graph: ..."), 2 an internal error.
#include <cstdio>
#include <exception>
#include <iostream>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/graphs/generate.hpp"
#include "apps/graphs/sampling_report.hpp"
#include "apps/train/cli.hpp"
#include "apps/train/config.hpp"
#include "kernels/atomic_file.hpp"
#include "kernels/error.hpp"
#include "kernels/memory.hpp"
#include "kernels/threads.hpp"

namespace {

int run(int argc, char** argv) {
  using namespace topo::apps;
  CLI::App app("Generates node-classification graphs as .npz files, and measures graphs.", "topo-graph");
  app.require_subcommand(1);
  std::string spec, out, data;
  std::string memory_limit;
  CLI::App* generate = app.add_subcommand("generate", "write a generated graph as an .npz in Planetoid's layout");
  generate->add_option("SPEC", spec, "csbm:KEY=VALUE,... or rmat:KEY=VALUE,... (apps/README.md)")->required();
  generate->add_option("--out", out, "the .npz to write (replaced atomically)")->required();
  generate->add_option("--memory-limit", memory_limit, "the most memory generating may take (e.g. 8G; default: what "
                       "the machine has left; off: no check)");
  CLI::App* stats = app.add_subcommand("stats", "print a graph's nodes, edges, degrees and edge homophily");
  stats->add_option("DATA", data, "a generated graph's spec or a graph file (.npz, or the text format)")->required();
  CLI::App* sample = app.add_subcommand("sample", "time the neighbour sampler of topo-train --fanouts on a graph");
  std::vector<std::int64_t> fanouts{10, 25};
  std::int64_t batch = 1024, batches = 50;
  int threads = 0;
  std::uint64_t seed = 1;
  std::string json;
  sample->add_option("DATA", data, "a generated graph's spec or a graph file")->required();
  sample->add_option("--fanouts", fanouts, "in-edges drawn per node and layer, input layer first (default 10,25)")
      ->delimiter(',');
  // Ranges, so that -1 is an error naming the flag rather than OpenMP's default (threads) or 2^64 - 1 (seed).
  // Bounded below 2^63 - 1, where CLI11 clamps a longer number (10^20 batches ran for ever, naming nothing).
  constexpr std::int64_t kMaxTimedBatches = 1'000'000;
  sample->add_option("--batch", batch, "training nodes per batch (default 1024)")
      ->check(CLI::Range(std::int64_t{1}, kMaxBatch));
  sample->add_option("--batches", batches, "batches timed (default 50)")
      ->check(CLI::Range(std::int64_t{1}, kMaxTimedBatches));
  sample->add_option("--threads", threads, "threads (default: OpenMP's)")->check(CLI::Range(0, 4096));
  sample->add_option("--seed", seed, "the shuffle's and the draws' seed (default 1)")
      ->check(CLI::Range(std::int64_t{0}, std::numeric_limits<std::int64_t>::max()));
  sample->add_option("--json", json, "also write the report here (atomically)");
  if (!parse_command_line(app, argc, argv, std::cout)) return 0;
  if (threads > 0) topo::set_num_threads(threads);

  const std::int64_t limit = memory_limit.empty() ? 0 : memory_limit == "off" ? -1 : topo::parse_byte_size(memory_limit, "memory-limit");
  const std::string source = generate->parsed() ? spec : data;
  if (generate->parsed()) TOPO_CHECK(is_generated_graph_spec(spec), "generate: '{}' is not csbm:... or rmat:...", spec);
  const NodeDataset d = load_node_dataset(source, limit);
  if (sample->parsed()) {
    const nlohmann::json report = sampling_report(d, fanouts, batch, batches, seed);
    std::printf("%s\n", report.dump().c_str());
    if (!json.empty()) topo::write_file_atomically(json, report.dump(2) + "\n");
    return 0;
  }
  const NodeDatasetStats s = node_dataset_stats(d);
  std::printf("%s: %lld nodes, %lld edges as listed (%s), mean degree %.2f, max %lld, %lld isolated, %lld self loops; "
              "%lld classes, %lld features; edge homophily %.3f; split %zu / %zu / %zu\n",
              is_generated_graph_spec(source) ? parse_generated_graph_spec(source).str().c_str() : source.c_str(),
              static_cast<long long>(s.nodes), static_cast<long long>(s.edges),
              d.directed ? "both directions" : "each undirected edge once, counted twice", s.mean_degree,
              static_cast<long long>(s.max_degree), static_cast<long long>(s.isolated_nodes),
              static_cast<long long>(s.self_loops), static_cast<long long>(d.num_classes),
              static_cast<long long>(d.features.defined() ? d.features.size(1) : 0), s.edge_homophily,
              d.splits.train.size(), d.splits.dev.size(), d.splits.test.size());
  if (generate->parsed()) {
    write_npz_node_dataset(out, d);
    std::printf("-> %s; peak RSS %s\n", out.c_str(), topo::format_bytes(double(topo::peak_rss_bytes())).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return topo::apps::run_tool("topo-graph", run, argc, argv); }
