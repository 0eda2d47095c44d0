// Node classification: the data reader, the splits, the full-graph batch, the loss and the accuracy.
#include "apps/tasks/node_classify/node_classify.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "apps/graphs/generate.hpp"
#include "apps/graphs/npz.hpp"
#include "apps/text/decode.hpp"
#include "kernels/memory.hpp"
#include "graph/sampling.hpp"
#include "graph/structure.hpp"
#include "graph/to_block.hpp"
#include "kernels/dense/indexing.hpp"
#include "models/heads.hpp"
#include "nn/ops.hpp"

#ifndef TOPO_NODE_DATA_DEFAULT
#define TOPO_NODE_DATA_DEFAULT "apps/data/karate_club.txt"
#endif

namespace topo::apps {

// ---- data

NodeDataset read_node_dataset(const std::string& path) {
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npz") == 0) return read_npz_node_dataset(path);
  std::ifstream in(path);
  TOPO_CHECK(in.good(), "node-classify: cannot open data file {}", path);
  TOPO_CHECK(!std::filesystem::is_directory(path), "node-classify: {} is a directory, not a graph file", path);
  NodeDataset d;
  std::vector<char> has_label;
  std::error_code size_error;
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, size_error));
  std::string line;
  for (std::int64_t lineno = 1; std::getline(in, line); ++lineno) {
    if (lineno == 1) line = std::string(text::without_utf8_bom(line));
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream s(line);
    std::string kind;
    std::int64_t a = -1, b = -1;
    s >> kind;
    auto bad = [&](const std::string& why) { fail("{}:{}: {} (line: '{}')", path, lineno, why, line); };
    if (kind == "nodes") {
      if (!(s >> a) || a <= 0) bad("'nodes' needs a positive count");
      if (d.num_nodes > 0) bad("'nodes' given twice");
      // Checked before the per-node arrays (9 bytes a node) are sized by it: the graph's node ids are int32, and
      // every node needs a 'label NODE CLASS' line of at least 10 bytes ("label 0 0\n"), so a count the file
      // cannot label is a typo (99999999999999 asked for 900 TB). Up to kSmallGraph nodes the arrays are cheap and
      // the end of the file names the first node left unlabelled; a pipe has no size: only the int32 bound there.
      constexpr std::int64_t kSmallGraph = std::int64_t{1} << 20;
      if (a > INT32_MAX) bad(fmt::format("{} nodes do not fit the graph's int32 node ids (at most {})", a, INT32_MAX));
      if (!size_error && a > std::max(kSmallGraph, (file_bytes + 1) / 10))
        bad(fmt::format("{} nodes, but every node needs a 'label NODE CLASS' line, and this file of {} bytes has room "
                        "for at most {}",
                        a, file_bytes, (file_bytes + 1) / 10));
      d.num_nodes = a;
      d.labels.assign(static_cast<std::size_t>(a), -1);
      has_label.assign(static_cast<std::size_t>(a), 0);
    } else if (kind == "label" || kind == "edge") {
      if (d.num_nodes == 0) bad("'nodes N' must come first");
      if (!(s >> a >> b)) bad("expected two integers");
      if (a < 0 || a >= d.num_nodes) bad(fmt::format("node {} is outside [0, {})", a, d.num_nodes));
      if (kind == "label") {
        if (b < 0) bad(fmt::format("class {} is negative", b));
        // The model has a score per class up to the largest id: N nodes hold at most N classes, so an id past
        // that is a typo or a foreign id (2000000 on a 34-node graph trained 34M parameters).
        if (b >= d.num_nodes)
          bad(fmt::format("class {} of node {} is not below the node count {} (class ids are 0, 1, ...: a graph of "
                          "N nodes has at most N classes)",
                          b, a, d.num_nodes));
        if (has_label[a]) bad(fmt::format("node {} is labelled twice", a));
        has_label[a] = 1;
        d.labels[a] = b;
        d.num_classes = std::max(d.num_classes, b + 1);
      } else {
        if (b < 0 || b >= d.num_nodes) bad(fmt::format("node {} is outside [0, {})", b, d.num_nodes));
        d.edges.emplace_back(a, b);
      }
    } else if (kind == "split") {
      if (d.num_nodes == 0) bad("'nodes N' must come first");
      std::string which;
      if (!(s >> a >> which)) bad("expected 'split NODE train|dev|test'");
      if (a < 0 || a >= d.num_nodes) bad(fmt::format("node {} is outside [0, {})", a, d.num_nodes));
      if (which == "train") d.splits.train.push_back(a);
      else if (which == "dev") d.splits.dev.push_back(a);
      else if (which == "test") d.splits.test.push_back(a);
      else bad(fmt::format("unknown split '{}' (expected train, dev or test)", which));
    } else {
      bad(fmt::format("unknown record '{}' (expected nodes, label, edge or split)", kind));
    }
    std::string rest;
    if (s >> rest) bad(fmt::format("unexpected '{}' after the record", rest));
  }
  TOPO_CHECK(d.num_nodes > 0, "node-classify: {} has no 'nodes N' line", path);
  for (std::int64_t v = 0; v < d.num_nodes; ++v)
    TOPO_CHECK(has_label[v], "node-classify: {}: node {} has no label", path, v);
  TOPO_CHECK(d.num_classes >= 2, "node-classify: {}: needs at least two classes, found {}", path, d.num_classes);
  return d;
}

NodeDataset read_npz_node_dataset(const std::string& path, std::int64_t max_feature_bytes) {
  // One member at a time, each released before the next is read, the features before the edges: the peak is
  // the feature table beside its member's bytes, or the edge list beside its member's, never the whole archive
  // (a 1M-node csbm graph: 1.2 GB instead of 2.7).
  const NpzReader npz(path);
  auto array = [&](const std::string& name) {
    if (!npz.contains(name))
      fail("node-classify: {} has no array '{}' (it holds {}; the layout: apps/tasks/node_classify/node_classify.hpp)",
           path, name, fmt::join(npz.names(), ", "));
    return npz.read(name);
  };
  auto check_shape = [&](const NpyArray& a, const std::string& name, const std::vector<std::int64_t>& shape) {
    TOPO_CHECK(a.shape == shape, "node-classify: {}: '{}' has shape ({}), expected ({})", path, name,
               fmt::join(a.shape, ", "), fmt::join(shape, ", "));
  };
  NodeDataset d;
  d.directed = true;
  {
    const NpyArray y = array("y");
    TOPO_CHECK(y.shape.size() == 1 && y.shape[0] > 0, "node-classify: {}: 'y' must be [N], got ({})", path,
               fmt::join(y.shape, ", "));
    d.num_nodes = y.shape[0];
    d.labels = y.as_int64(path + ": y");
  }
  const std::int64_t n = d.num_nodes;
  // As in the text format: N nodes hold at most N classes, so a larger id is a typo or a foreign id (the model
  // would score every class up to it: y[0] = 1000000 on Cora asked for 121 GiB).
  const std::int64_t class_bound = std::min(n, std::int64_t{1} << 20);
  for (std::int64_t v = 0; v < n; ++v) {
    const std::int64_t c = d.labels[static_cast<std::size_t>(v)];
    TOPO_CHECK(c >= -1 && c < class_bound,
               "node-classify: {}: y[{}] = {} is not a class id: expected -1 (no label) or 0 .. {} (below the node "
               "count {}{})",
               path, v, c, class_bound - 1, n, class_bound < n ? ", and below 2^20" : "");
    d.num_classes = std::max(d.num_classes, c + 1);
  }
  TOPO_CHECK(d.num_classes >= 2, "node-classify: {}: needs at least two classes, found {}", path, d.num_classes);
  // Features: CSR (x_indptr, x_indices, x_data, x_shape) or dense x [N, F].
  if (npz.contains("x")) {
    const NpyArray x = array("x");
    TOPO_CHECK(x.shape.size() == 2 && x.shape[0] == n, "node-classify: {}: 'x' must be [{}, F], got ({})", path, n,
               fmt::join(x.shape, ", "));
    d.features = Tensor::empty({n, x.shape[1]});
    if (x.dtype == "f4")  // straight from the member's bytes, no float vector between
      std::memcpy(d.features.data<float>(), x.bytes.data(), x.bytes.size());
    else {
      const std::vector<float> values = x.as_float(path + ": x");
      std::copy(values.begin(), values.end(), d.features.data<float>());
    }
    // A NaN or inf feature spreads through every layer's aggregation and trains silently to uniform scores; an
    // f8 value past float32's range arrives here as inf.
    const float* values = d.features.data<float>();
    const std::int64_t f = x.shape[1];
    for (std::int64_t i = 0; i < n * f; ++i)
      TOPO_CHECK(std::isfinite(values[i]), "node-classify: {}: x[{}, {}] = {} is not a finite float32 feature", path,
                 i / f, i % f, values[i]);
  } else {
    const std::vector<std::int64_t> dims = [&] {
      const NpyArray a = array("x_shape");
      check_shape(a, "x_shape", {2});
      return a.as_int64(path + ": x_shape");
    }();
    TOPO_CHECK(dims[0] == n && dims[1] >= 1, "node-classify: {}: x_shape ({}, {}) does not fit {} nodes", path, dims[0],
               dims[1], n);
    TOPO_CHECK(dims[1] <= max_feature_bytes / 4 / n,
               "node-classify: {}: {} x {} features would take {:.1f} GiB as a dense table (the limit is {:.1f} GiB)",
               path, n, dims[1], static_cast<double>(n) * static_cast<double>(dims[1]) * 4 / (1 << 30),
               static_cast<double>(max_feature_bytes) / (1 << 30));
    const std::vector<std::int64_t> indptr = [&] {
      const NpyArray a = array("x_indptr");
      check_shape(a, "x_indptr", {n + 1});
      return a.as_int64(path + ": x_indptr");
    }();
    const NpyArray indices_array = array("x_indices");
    const std::int64_t nnz = indices_array.numel();
    check_shape(indices_array, "x_indices", {nnz});
    const std::vector<std::int64_t> indices = indices_array.as_int64(path + ": x_indices");
    const NpyArray values_array = array("x_data");
    check_shape(values_array, "x_data", {nnz});
    const std::vector<float> values = values_array.as_float(path + ": x_data");
    TOPO_CHECK(indptr.front() == 0 && indptr.back() == nnz, "node-classify: {}: x_indptr runs {} .. {}, expected 0 .. {}",
               path, indptr.front(), indptr.back(), nnz);
    d.features = Tensor::zeros({n, dims[1]});
    float* x = d.features.data<float>();
    for (std::int64_t v = 0; v < n; ++v) {
      const std::int64_t begin = indptr[static_cast<std::size_t>(v)], end = indptr[static_cast<std::size_t>(v) + 1];
      TOPO_CHECK(begin <= end, "node-classify: {}: x_indptr decreases at node {}", path, v);
      for (std::int64_t k = begin; k < end; ++k) {
        const std::int64_t f = indices[static_cast<std::size_t>(k)];
        TOPO_CHECK(f >= 0 && f < dims[1], "node-classify: {}: x_indices[{}] = {} is outside [0, {})", path, k, f, dims[1]);
        TOPO_CHECK(std::isfinite(values[static_cast<std::size_t>(k)]),
                   "node-classify: {}: x_data[{}] = {} (node {}, feature {}) is not a finite float32 feature", path, k,
                   values[static_cast<std::size_t>(k)], v, f);  // as for dense x
        x[v * dims[1] + f] = values[static_cast<std::size_t>(k)];
      }
    }
  }
  {
    const NpyArray e = array("edge_index");
    TOPO_CHECK(e.shape.size() == 2 && e.shape[0] == 2, "node-classify: {}: 'edge_index' must be [2, E], got ({})", path,
               fmt::join(e.shape, ", "));
    const std::int64_t edges = e.shape[1];
    const char kind = e.dtype[0];
    TOPO_CHECK(kind == 'i' || kind == 'u', "node-classify: {}: 'edge_index' holds dtype {}, expected integers", path,
               e.dtype);
    const std::string what = path + ": edge_index";
    d.edges.reserve(static_cast<std::size_t>(edges));
    for (std::int64_t i = 0; i < edges; ++i) {
      const std::int64_t u = e.int64_at(i, what), v = e.int64_at(edges + i, what);  // in place: no int64 copy
      TOPO_CHECK(u >= 0 && u < n && v >= 0 && v < n, "node-classify: {}: edge {} ({} -> {}) has a node outside [0, {})",
                 path, i, u, v, n);
      d.edges.emplace_back(u, v);
    }
  }
  // The split: the masks (nodes in order).
  const std::pair<const char*, std::vector<std::int64_t>*> masks[] = {
      {"train_mask", &d.splits.train}, {"val_mask", &d.splits.dev}, {"test_mask", &d.splits.test}};
  for (const auto& [name, nodes] : masks) {
    if (!npz.contains(name)) continue;
    const NpyArray a = array(name);
    check_shape(a, name, {n});
    const std::vector<std::int64_t> m = a.as_int64(path + ": " + name);
    for (std::int64_t v = 0; v < n; ++v)
      if (m[static_cast<std::size_t>(v)] != 0) nodes->push_back(v);
  }
  return d;
}

std::string default_node_dataset_path() { return TOPO_NODE_DATA_DEFAULT; }

std::int64_t node_graph_bytes(std::int64_t nodes, std::int64_t listed_edges, bool directed) {
  const std::int64_t edges = (directed ? 1 : 2) * listed_edges + nodes;  // self loops added
  // The int32 edge list, CSR and CSC with their edge ids (24 B an edge, kept; node_classify_graph writes the
  // list in place, so nothing more at the peak); per node the offset and degree arrays. GCN and SAGE build no
  // edge ids (16 B an edge): the bound is GAT's, which reads them.
  return edges * 24 + nodes * 32;
}

void check_memory_fits(std::int64_t needed, const std::string& what, const std::string& lower_with, std::int64_t limit) {
  if (limit < 0) return;
  const AvailableMemory available = available_memory(limit);
  TOPO_CHECK(needed <= available.bytes,
             "node-classify: not enough memory: {} needs about {}, and {} is available ({}). Lower it with {}; "
             "--memory-limit off skips this check",
             what, format_bytes(static_cast<double>(needed)), format_bytes(static_cast<double>(available.bytes)),
             available.source, lower_with);
}

NodeDataset load_node_dataset(const std::string& data, std::int64_t memory_limit) {
  if (is_generated_graph_spec(data)) {
    const GeneratedGraphSpec spec = parse_generated_graph_spec(data);
    const auto listed = static_cast<std::int64_t>(std::llround(static_cast<double>(spec.nodes) * spec.degree));
    check_memory_fits(generation_bytes(spec) + node_graph_bytes(spec.nodes, listed, true),
                      fmt::format("generating {} ({} nodes, ~{} edges, {} features) and its graph", spec.kind,
                                  spec.nodes, listed, spec.features),
                      "fewer nodes=, a lower degree= or fewer features= in --data", memory_limit);
    return generate_node_dataset(spec);
  }
  const std::string path = data.empty() ? default_node_dataset_path() : data;
  std::error_code error;
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path, error));
  // Reading holds the file, its arrays and the converted edge list and features: about four times the file.
  if (!error)
    check_memory_fits(4 * file_bytes, fmt::format("reading {} ({})", path, format_bytes(double(file_bytes))),
                      "a smaller graph file", memory_limit);
  return read_node_dataset(path);
}

HeteroGraph node_classify_graph(const NodeDataset& data) {
  // The listed edges (and each undirected one's reverse after it), then one self loop per node: the edges and
  // ids add_self_loop gives, written straight into the int32 lists. (add_self_loop's host pairs and row map,
  // beside the graph it copies, took ~60 B more an edge at the peak: 1.3 GiB at 21M edges.)
  std::int64_t listed = 0;
  for (const auto& [u, v] : data.edges) listed += data.directed || u == v ? 1 : 2;
  const std::int64_t n = data.num_nodes, total = listed + n;
  TOPO_CHECK(n <= INT32_MAX && total <= INT32_MAX, "node-classify: {} nodes and {} edges do not fit int32 ids", n,
             total);
  EdgeList list;
  list.src = Tensor::empty({total}, DType::I32);
  list.dst = Tensor::empty({total}, DType::I32);
  std::int32_t* src = list.src.data<std::int32_t>();
  std::int32_t* dst = list.dst.data<std::int32_t>();
  std::int64_t e = 0;
  for (const auto& [u, v] : data.edges) {
    src[e] = static_cast<std::int32_t>(u);
    dst[e++] = static_cast<std::int32_t>(v);
    if (!data.directed && u != v) {
      src[e] = static_cast<std::int32_t>(v);
      dst[e++] = static_cast<std::int32_t>(u);
    }
  }
  for (std::int64_t v = 0; v < n; ++v, ++e) src[e] = dst[e] = static_cast<std::int32_t>(v);
  return HeteroGraph::from_edges(list, n);
}

std::vector<std::int64_t> parse_node_list(const std::string& text, const std::string& field) {
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto first = item.find_first_not_of(' '), last = item.find_last_not_of(' ');
    const std::string id = first == std::string::npos ? "" : item.substr(first, last - first + 1);
    std::int64_t v = -1;
    const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), v);
    TOPO_CHECK(!id.empty() && ec == std::errc() && end == id.data() + id.size() && v >= 0,
               "invalid config field '{}' = '{}': '{}' is not a node id (comma-separated integers >= 0)", field, text,
               id);
    out.push_back(v);
  }
  return out;
}

namespace {

// The node classifier: the encoder's node states are the class scores.
class NodeClassifier final : public models::SequenceModel {
 public:
  explicit NodeClassifier(std::shared_ptr<models::SequenceEncoder> encoder) : SequenceModel(std::move(encoder)) {}
  nn::Var forward(const models::SequenceBatch& batch) override { return encoder_->encode(batch).tokens; }
};

}  // namespace

NodeClassification::NodeClassification(NodeDataset data, std::string path, NodeSplits splits, bool row_normalize,
                                       std::int64_t memory_limit, std::vector<std::int64_t> fanouts)
    : data_(std::move(data)), path_(std::move(path)), splits_(std::move(splits)), memory_limit_(memory_limit),
      fanouts_(std::move(fanouts)) {
  const std::int64_t n = data_.num_nodes;
  for (const std::int64_t f : fanouts_)
    TOPO_CHECK(f >= 1 || f == -1, "node-classify: --fanouts {} must be >= 1 or -1 (every in-edge)", f);
  // A split the options leave empty is the file's; errors name where each split came from, the option or the
  // file (a node in two of the file's own splits is the file's fault, not an option the user never typed).
  const auto take = [&](std::vector<std::int64_t>& split, const std::vector<std::int64_t>& file_split,
                        const char* option, const char* name) {
    if (!split.empty()) return fmt::format("--{}", option);
    split = file_split;
    return fmt::format("the {} split of {}", name, path_);
  };
  const std::string train_from = take(splits_.train, data_.splits.train, "labelled", "train");
  std::string dev_from = take(splits_.dev, data_.splits.dev, "dev-nodes", "dev");
  const std::string test_from = take(splits_.test, data_.splits.test, "test-nodes", "test");
  std::vector<const std::string*> owner(static_cast<std::size_t>(n), nullptr);
  auto claim = [&](const std::vector<std::int64_t>& nodes, const std::string& from) {
    for (const std::int64_t v : nodes) {
      TOPO_CHECK(v >= 0 && v < n, "node-classify: {} names node {}, outside [0, {}) of {}", from, v, n, path_);
      TOPO_CHECK(owner[v] == nullptr, "node-classify: node {} is in {} and in {}", v, *owner[v], from);
      owner[v] = &from;
    }
  };
  claim(splits_.train, train_from);
  claim(splits_.test, test_from);
  if (splits_.dev.empty()) {
    dev_from = "the dev nodes (every node in no other split)";
    for (std::int64_t v = 0; v < n; ++v)
      if (owner[v] == nullptr) splits_.dev.push_back(v);
  }
  claim(splits_.dev, dev_from);
  TOPO_CHECK(!splits_.train.empty(),
             "node-classify: no training node: {} has no train split, and --labelled names none", path_);
  TOPO_CHECK(!splits_.dev.empty(), "node-classify: no dev node left (every node is labelled or a test node)");
  using Named = std::pair<const std::vector<std::int64_t>*, const std::string*>;
  for (const auto& [nodes, from] : {Named{&splits_.train, &train_from}, Named{&splits_.dev, &dev_from},
                                    Named{&splits_.test, &test_from}})
    for (const std::int64_t v : *nodes)
      TOPO_CHECK(data_.labels[static_cast<std::size_t>(v)] >= 0, "node-classify: node {} of {} has no label in {}", v,
                 *from, path_);
  graph_ = std::make_shared<const HeteroGraph>(node_classify_graph(data_));
  // The graph holds the edges now: the listed int64 pairs (16 B an edge; 0.3 GiB at 21M edges) would only
  // sit beside it for the whole run.
  num_listed_edges_ = static_cast<std::int64_t>(data_.edges.size());
  std::vector<std::pair<std::int64_t, std::int64_t>>().swap(data_.edges);
  if (data_.features.defined()) {
    features_ = data_.features;
  } else {
    check_memory_fits(n * n * 4, fmt::format("one-hot node ids for {} nodes (a graph without features)", n),
                      "a graph file with node features", memory_limit_);
    features_ = Tensor::zeros({n, n});
    for (std::int64_t v = 0; v < n; ++v) features_.data<float>()[v * n + v] = 1.f;
  }
  if (row_normalize) {  // each row over its sum (rows of zeros stay zero), as Kipf's preprocess_features
    const std::int64_t f = features_.size(1);
    float* x = features_.data<float>();
    for (std::int64_t v = 0; v < n; ++v) {
      double sum = 0;
      for (std::int64_t k = 0; k < f; ++k) sum += x[v * f + k];
      if (sum != 0)
        for (std::int64_t k = 0; k < f; ++k) x[v * f + k] = static_cast<float>(x[v * f + k] / sum);
    }
  }
}

std::shared_ptr<models::SequenceModel> NodeClassification::make_model(std::shared_ptr<models::SequenceEncoder> encoder,
                                                                      const models::HeadOptions& /*head*/) const {
  return std::make_shared<NodeClassifier>(std::move(encoder));
}

const std::vector<std::int64_t>& NodeClassification::nodes(Split split) const {
  return split == Split::Train ? splits_.train : split == Split::Dev ? splits_.dev : splits_.test;
}

std::int64_t NodeClassification::size(Split split) const { return static_cast<std::int64_t>(nodes(split).size()); }

std::vector<std::vector<std::int64_t>> NodeClassification::epoch_batches(std::int64_t batch, std::uint64_t seed,
                                                                         std::int64_t epoch) const {
  if (!fanouts_.empty()) return Task::epoch_batches(batch, seed, epoch);
  std::vector<std::int64_t> all(static_cast<std::size_t>(size(Split::Train)));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  return {all};
}

TaskBatch NodeClassification::batch(Split split, const std::vector<std::int64_t>& indices) const {
  return split == Split::Train && !fanouts_.empty() ? sampled_batch(indices) : full_batch(split, indices);
}

TaskBatch NodeClassification::sampled_batch(const std::vector<std::int64_t>& indices) const {
  std::vector<std::int64_t> seeds, targets;
  std::uint64_t key = 0x6e6f6465u;  // the draw: a function of the batch's nodes in their order
  for (const std::int64_t i : indices) {
    TOPO_CHECK(i >= 0 && i < size(Split::Train), "node-classify: train index {} outside [0, {})", i, size(Split::Train));
    const std::int64_t v = splits_.train[static_cast<std::size_t>(i)];
    seeds.push_back(v);
    targets.push_back(data_.labels[static_cast<std::size_t>(v)]);
    key = splitmix64(key ^ static_cast<std::uint64_t>(v));
  }
  models::SequenceBatch inputs;
  std::vector<std::vector<std::int64_t>> per_layer;  // one relation: the fan-out of each layer
  for (const std::int64_t f : fanouts_) per_layer.push_back({f});
  const std::vector<SampledBlock> layers = sample_blocks(*graph_, {seeds}, per_layer, key);
  for (const SampledBlock& layer : layers)
    inputs.blocks.push_back(
        std::make_shared<const HeteroGraph>(block_graph(*graph_, layer.parts, layer.dst_nodes, "SRC/", "DST/")));
  const std::vector<std::int64_t>& dst = layers.front().parts.src_nodes[0];  // the input layer's sources
  inputs.lengths = {static_cast<std::int64_t>(seeds.size())};
  inputs.features = index_select(features_, Tensor::from_vector(dst, {static_cast<std::int64_t>(dst.size())}));
  return {inputs, Tensor::from_vector(targets, {static_cast<std::int64_t>(targets.size())})};
}

TaskBatch NodeClassification::full_batch(Split split, const std::vector<std::int64_t>& indices) const {
  const std::vector<std::int64_t>& split_nodes = nodes(split);
  std::vector<std::int64_t> targets(static_cast<std::size_t>(data_.num_nodes), -100);
  for (const std::int64_t i : indices) {
    TOPO_CHECK(i >= 0 && i < static_cast<std::int64_t>(split_nodes.size()), "node-classify: {} index {} outside [0, {})",
               split_name(split), i, split_nodes.size());
    const std::int64_t v = split_nodes[static_cast<std::size_t>(i)];
    targets[static_cast<std::size_t>(v)] = data_.labels[static_cast<std::size_t>(v)];
  }
  models::SequenceBatch inputs;
  inputs.lengths = {data_.num_nodes};
  inputs.features = features_;
  inputs.graph = graph_;
  return {inputs, Tensor::from_vector(targets, {data_.num_nodes})};
}

nn::Var NodeClassification::loss(const nn::Var& output, const Tensor& targets) const {
  return nn::cross_entropy(output, targets);  // -100: nodes outside the batch's split, not counted
}

Evaluation NodeClassification::evaluate(models::SequenceModel& model, Split split, Device device) const {
  const bool was_training = model.is_training();
  model.eval();
  std::vector<std::int64_t> all(static_cast<std::size_t>(size(split)));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
  const TaskBatch b = full_batch(split, all).to(device);
  const nn::Var out = model.forward(b.inputs);
  const double loss = all.empty() ? 0.0 : nn::cross_entropy(out, b.targets).item();
  const std::vector<float> scores = out.data().to(Device::cpu()).to_vector<float>();
  std::int64_t right = 0;
  for (const std::int64_t v : nodes(split)) {
    const float* row = scores.data() + v * data_.num_classes;
    if (std::max_element(row, row + data_.num_classes) - row == data_.labels[static_cast<std::size_t>(v)]) ++right;
  }
  if (was_training) model.train();
  const double acc = all.empty() ? 0.0 : static_cast<double>(right) / static_cast<double>(all.size());
  return {acc, {{"acc", acc}, {"loss", loss}, {"nodes", static_cast<std::int64_t>(all.size())}}};
}

void NodeClassification::check_step_memory(const models::SequenceModel& model, Device device) const {
  if (!device.is_cpu()) return;  // CUDA: the caching allocator's out-of-memory error names the size
  const TaskBatch b = full_batch(Split::Train, {});  // evaluation stays full-graph, sampled training or not
  const models::StepMemoryEstimate step = model.encoder()->step_memory(b.inputs);
  // Parameters, their gradients and Adam's two moments; the logits and their gradient, softmax, targets.
  const std::int64_t optimizer = 4 * 4 * model.num_parameters(true);
  const std::int64_t loss = data_.num_nodes * (4 * 4 * data_.num_classes + 16);
  check_memory_fits(step.bytes + optimizer + loss,
                    fmt::format("a full-graph training step ({})", step.detail.empty() ? "no estimate of the model's own" : step.detail),
                    step.lower_with.empty() ? "a smaller model or graph" : step.lower_with, memory_limit_);
}

nlohmann::json NodeClassification::baseline(Split split) const {
  std::vector<std::int64_t> count(static_cast<std::size_t>(data_.num_classes), 0);
  for (const std::int64_t v : splits_.train) ++count[static_cast<std::size_t>(data_.labels[static_cast<std::size_t>(v)])];
  const auto majority = std::max_element(count.begin(), count.end()) - count.begin();  // ties: the smaller class
  std::int64_t right = 0;
  for (const std::int64_t v : nodes(split)) right += data_.labels[static_cast<std::size_t>(v)] == majority;
  return {{"majority_class", majority},
          {"majority_acc", size(split) > 0 ? static_cast<double>(right) / static_cast<double>(size(split)) : 0.0}};
}

nlohmann::json NodeClassification::metadata() const {
  nlohmann::json meta = {{"graph_file", path_},
                         {"num_nodes", data_.num_nodes},
                         {"num_features", features_.size(1)},
                         {"num_edges", num_listed_edges_},
                         {"num_classes", data_.num_classes}};
  // A split's node ids when they are few; a big graph's (a generated one's, rebuilt from --data) as counts,
  // since every best.ckpt carries this.
  constexpr std::size_t kListedNodes = 10000;
  for (const auto& [key, nodes] : {std::pair{"labelled", &splits_.train}, std::pair{"dev_nodes", &splits_.dev},
                                   std::pair{"test_nodes", &splits_.test}})
    meta[key] = nodes->size() <= kListedNodes ? nlohmann::json(*nodes) : nlohmann::json(nodes->size());
  return meta;
}

}  // namespace topo::apps
