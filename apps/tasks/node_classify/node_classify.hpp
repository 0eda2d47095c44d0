#pragma once
// `--task node-classify`: transductive semi-supervised node classification on one graph (the engine beyond
// sequences). Every step is one full-graph batch: the model (a graph encoder such as --model gcn or gat, which
// reads SequenceBatch::graph) scores every node, and the loss counts the training nodes only. Default data:
// Zachary's karate club (apps/data/karate_club.txt, 34 nodes, 78 ties, two factions), one labelled node per
// faction (0, the instructor, and 33, the officer), as in the usual GCN demo. Node features are one-hot ids:
// the graph's structure is all the model sees.
//
// Splits: train = --labelled; test = --test-nodes (none by default: karate has no held-out set, so the dev
// accuracy is the figure); dev = --dev-nodes, by default every node in neither. Selection is on dev, as for
// every task.
//
// Neighbour-sampled mini-batches (--fanouts, one per graph layer, input layer first; DGL's
// MultiLayerNeighborSampler): training batches of --batch training nodes, each with the blocks of a
// sample of its neighbourhood (graph/sampling.hpp, graph/to_block.hpp; SequenceBatch::blocks). A batch's draw
// is a function of its nodes in their (epoch-shuffled) order, so a run and its --resume draw alike.
// Evaluation stays full-graph.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/tasks/task.hpp"
#include "graph/heterograph.hpp"

namespace topo::apps {

struct NodeSplits {
  std::vector<std::int64_t> train, dev, test;  // node ids, disjoint
};

// A labelled graph: labels [num_nodes] in [0, num_classes), -1 for a node without one (it may be in no split).
struct NodeDataset {
  std::int64_t num_nodes = 0, num_classes = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;  // source, destination
  bool directed = false;  // true: the edges as listed (an .npz lists both directions); false: each one undirected
  std::vector<std::int64_t> labels;
  Tensor features = {};   // float32 [num_nodes, F]; undefined: one-hot node ids
  NodeSplits splits;      // the file's own split (karate: nodes 0 and 33 labelled; an .npz: its masks)
};
// A graph file, by its name: FILE.npz (NumPy arrays, read_npz_node_dataset) or the text format: 'nodes N',
// 'label NODE CLASS' (every node once, CLASS < N), 'edge U V' (undirected) and 'split NODE train|dev|test' lines ('#'
// comments, blank lines). A bad line is a topo::Error naming path:line.
NodeDataset read_node_dataset(const std::string& path);
// An .npz in Planetoid's layout (../shared/data/planetoid/SOURCE.txt; what PyG's Planetoid holds, exported with
// numpy.savez): edge_index int [2, E] (source row 0, destination row 1, every direction listed), node features
// as CSR (x_indptr [N + 1], x_indices [nnz], x_data [nnz], x_shape [2] = (N, F)) or dense (x [N, F]), y int [N]
// (-1: no label, else a class below N) and train_mask / val_mask / test_mask bool [N]; features are finite.
// Errors name the file and the array.
// Dense features of more than `max_feature_bytes` are an error saying how much they would take (the default:
// 1 GiB; Facebook pages' 22,470 x 4,714 take 424 MB).
NodeDataset read_npz_node_dataset(const std::string& path, std::int64_t max_feature_bytes = std::int64_t{1} << 30);
// The packaged karate-club file (its path in the source tree).
std::string default_node_dataset_path();

// Memory: a run that would not fit stops before it allocates, with an error that says how much it needs, how much
// there is and which flag lowers it, never an OOM kill. `limit` is --memory-limit in bytes: > 0 caps what the
// process may hold resident below what the machine (MemAvailable, the cgroup limit) allows; 0: the machine's;
// < 0: no check.
// The graph structures node_classify_graph builds (edge list, self loops, the CSR / CSC formats), at their peak,
// for `listed_edges` edges as listed (both directions of an undirected edge when !directed).
std::int64_t node_graph_bytes(std::int64_t nodes, std::int64_t listed_edges, bool directed);
// A topo::Error "node-classify: not enough memory: WHAT needs about X, and Y is available (SOURCE); lower it
// with LOWER_WITH ..." when `needed` bytes do not fit.
void check_memory_fits(std::int64_t needed, const std::string& what, const std::string& lower_with, std::int64_t limit);
// `--data`: a generated graph ("csbm:..." / "rmat:...", apps/graphs/generate.hpp), a file, or (empty) the karate
// club; what generating or reading it takes is checked against the memory first.
NodeDataset load_node_dataset(const std::string& data, std::int64_t memory_limit = 0);
// Both directions of every edge plus one self loop per node, single relation ("_N", "_E", "_N").
HeteroGraph node_classify_graph(const NodeDataset& data);
// "0,33" -> {0, 33}; empty -> {}. A bad entry is a topo::Error naming `field` and the entry.
std::vector<std::int64_t> parse_node_list(const std::string& text, const std::string& field);

class NodeClassification final : public Task {
 public:
  // `splits`: the options' node lists; each one given replaces the file's (data.splits). dev empty in both:
  // every node in neither train nor test. Ids outside the graph, a node in two splits, or a node without a
  // label in one, are topo::Errors naming the node and the option. `row_normalize`: each node's features
  // divided by their sum (Kipf & Welling's preprocessing; one-hot ids are unchanged).
  // `memory_limit`: as check_memory_fits takes it, for check_step_memory.
  // `fanouts`: per graph layer, input layer first (>= 1, or -1 for every in-edge); empty: full-graph training.
  NodeClassification(NodeDataset data, std::string path, NodeSplits splits, bool row_normalize = true,
                     std::int64_t memory_limit = 0, std::vector<std::int64_t> fanouts = {});

  std::int64_t input_dim() const override { return features_.size(1); }
  std::int64_t max_length() const override { return data_.num_nodes; }
  std::int64_t encoder_output_dim() const override { return data_.num_classes; }
  // The encoder's last layer is the class layer; the model returns its node scores [N, classes].
  std::shared_ptr<models::SequenceModel> make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                    const models::HeadOptions& head) const override;

  std::int64_t size(Split split) const override;
  // One full-graph batch per epoch (GCN's full-batch training), whatever --batch says; with --fanouts, the
  // training nodes shuffled per epoch in batches of `batch`.
  std::vector<std::vector<std::int64_t>> epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                       std::int64_t epoch) const override;
  // The whole graph; targets int64 [N]: the labels of the split's nodes at `indices` (positions in the
  // split's node list), -100 (not counted) elsewhere. Training with --fanouts: sampled_batch.
  TaskBatch batch(Split split, const std::vector<std::int64_t>& indices) const override;
  // The training nodes at `indices` with one sampled block per layer; features: the first block's sources';
  // targets int64 [indices]: their labels.
  TaskBatch sampled_batch(const std::vector<std::int64_t>& indices) const;
  nn::Var loss(const nn::Var& output, const Tensor& targets) const override;

  std::string metric() const override { return "acc"; }
  bool higher_is_better() const override { return true; }
  Evaluation evaluate(models::SequenceModel& model, Split split, Device device) const override;
  // On the CPU: the model's estimate of a full-graph step (StepMemoryEstimate) and the optimizer's state against
  // the memory left (check_memory_fits).
  void check_step_memory(const models::SequenceModel& model, Device device) const override;
  // The most frequent training label predicted for every node of the split.
  nlohmann::json baseline(Split split) const override;
  nlohmann::json metadata() const override;

  const NodeDataset& data() const { return data_; }
  const std::vector<std::int64_t>& nodes(Split split) const;

 private:
  NodeDataset data_;  // its edge list is released once graph_ holds the graph (num_listed_edges_ counts it)
  std::int64_t num_listed_edges_ = 0;
  std::string path_;
  NodeSplits splits_;
  std::shared_ptr<const HeteroGraph> graph_;
  Tensor features_;  // float32 [N, F], or [N, N] one-hot ids
  std::int64_t memory_limit_ = 0;
  std::vector<std::int64_t> fanouts_;
  TaskBatch full_batch(Split split, const std::vector<std::int64_t>& indices) const;
};

}  // namespace topo::apps
