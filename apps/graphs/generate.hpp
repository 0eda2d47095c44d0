#pragma once
// Generated node-classification graphs, so that a run can be as big as a user wants without a download and
// accuracy still means something: the labels are planted and the features carry them at a chosen
// signal-to-noise ratio.
//
//   csbm: the contextual stochastic block model (Deshpande et al. 2018): C classes of about N/C nodes; each edge
//         joins two nodes of one class with probability `homophily` (edge homophily, Zhu et al. 2020), else two
//         of different classes, its first end uniform (degrees near Poisson(degree)).
//   rmat: R-MAT power-law graphs (Chakrabarti et al. 2004): each edge descends log2(N) levels of the adjacency
//         matrix's quadrants with probabilities a, b, c, d = 1 - a - b - c (Graph500's 0.57, 0.19, 0.19, 0.05
//         by default); ids are then shuffled (as Graph500 does) so that the hubs are not nodes 0, 1, 2. The classes
//         are R-MAT's own top-level blocks: class = floor(id * C / N) of the id before the shuffle, so a and d
//         (the diagonal quadrants) make the graph mildly homophilous, as they make it clustered.
//
// Both: `degree` edges per node on average (nodes * degree / 2 undirected draws, each listed in both
// directions, as Planetoid's edge_index lists them); draws that are self loops or repeat an earlier edge are
// dropped, so the graph has a little fewer (R-MAT's skew makes repeats common: `topo-graph stats` says how
// many are left). Node features: x_v = m_{y_v} + noise, the C class means orthonormal (so any two are sqrt(2)
// apart) and the noise N(0, s^2 I) with s = sqrt(2) / snr: `snr` is the distance between two class means over
// the noise's standard deviation, and the features alone tell two classes apart with error Phi(-snr / 2).
// Splits: `train`, `dev`, `test` nodes drawn at random, each a fraction of N (below 1) or a count (1 or more).
//
// Deterministic: the same spec (seed included) gives the same graph bit for bit, whatever the thread count;
// generation runs in parallel (OpenMP over fixed chunks of draws and nodes, each with its own keyed stream) in
// O(N * features + edges) memory.
#include <cstdint>
#include <string>

#include "apps/tasks/node_classify/node_classify.hpp"

namespace topo::apps {

struct GeneratedGraphSpec {
  std::string kind = "csbm";  // csbm | rmat
  std::int64_t nodes = 10000;
  double degree = 10;          // average neighbours per node (before dropped repeats)
  std::int64_t classes = 8;
  std::int64_t features = 128;
  double homophily = 0.8;      // csbm: share of edges within a class
  double a = 0.57, b = 0.19, c = 0.19;  // rmat: quadrant probabilities (d = 1 - a - b - c)
  double snr = 1.0;
  double train = 0.1, dev = 0.1, test = 0.2;  // below 1: a fraction of the nodes; 1 or more: a count
  std::uint64_t seed = 1;

  // The spec as `--data` spells it, every key given: "csbm:nodes=10000,degree=10,...".
  std::string str() const;
  // Nodes per split, from the fractions or counts.
  std::int64_t split_count(double share) const;
};

// True for "csbm:..." and "rmat:..." (a generator spec, not a file name).
bool is_generated_graph_spec(const std::string& text);
// "csbm:nodes=1000000,degree=20,classes=8,features=128,homophily=0.8,snr=1,train=0.1,dev=0.1,test=0.2,seed=1"
// (any subset of the keys; the rest keep their defaults). An unknown key, a bad number or an impossible value
// (homophily outside [0, 1], rmat probabilities that do not sum to at most 1, more train + dev + test nodes than
// nodes, fewer features than classes) is a topo::Error naming the key and saying what is allowed.
GeneratedGraphSpec parse_generated_graph_spec(const std::string& text);

// Bytes generate_node_dataset holds at its peak (the draws, the edge list, the features), for the memory check
// that runs before it.
std::int64_t generation_bytes(const GeneratedGraphSpec& spec);

// The graph, its labels, features float32 [N, features] and split. Labelled: every node.
NodeDataset generate_node_dataset(const GeneratedGraphSpec& spec);

// What a graph is, measured: for `topo-graph stats` and the tests.
struct NodeDatasetStats {
  std::int64_t nodes = 0, edges = 0;  // edges as listed (both directions of an undirected one)
  double mean_degree = 0;             // edges / nodes
  std::int64_t max_degree = 0, isolated_nodes = 0;  // out-degree as listed; nodes without an edge
  double edge_homophily = 0;          // share of listed edges whose ends have one label (both labelled)
  std::int64_t self_loops = 0;
};
NodeDatasetStats node_dataset_stats(const NodeDataset& data);

// Writes `data` as an .npz in the layout read_npz_node_dataset reads (edge_index int64 [2, E], dense x float32
// [N, F], y int64 [N], train_mask / val_mask / test_mask bool [N]): stored (uncompressed) members, which
// numpy.load reads too, so a Python user and the DGL / PyG peers load the same graph. Written atomically.
void write_npz_node_dataset(const std::string& path, const NodeDataset& data);

}  // namespace topo::apps
