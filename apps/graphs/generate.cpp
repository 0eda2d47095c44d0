// Generated graphs: the spec, the two edge generators (CSBM, R-MAT), the planted features, the splits, the
// measured statistics and the .npz writer's layout.
#include "apps/graphs/generate.hpp"

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "apps/graphs/npz.hpp"
#include "apps/tasks/rng.hpp"
#include "kernels/error.hpp"

namespace topo::apps {
namespace {

// Stream keys: each part of a graph draws from its own streams, keyed (seed, part, chunk or node).
enum Part : std::uint64_t { kLabels = 1, kEdges = 2, kShuffle = 3, kNoise = 4, kMeans = 5, kSplit = 6 };
constexpr std::int64_t kDrawsPerChunk = 1 << 16;  // fixed chunks: the result does not depend on the threads
constexpr std::int64_t kMaxNodes = std::int64_t{1} << 31;  // ids below 2^31: the graph's int32 indices

// U[0, 1) with 53 random bits.
double uniform53(SplitMix64& rng) { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }

// Two independent N(0, 1) draws (Box-Muller; 1 - u keeps the logarithm's argument above 0).
std::pair<double, double> normal_pair(SplitMix64& rng) {
  const double r = std::sqrt(-2.0 * std::log(1.0 - uniform53(rng))), t = 2.0 * M_PI * uniform53(rng);
  return {r * std::cos(t), r * std::sin(t)};
}

// Uniform integer in [0, bound) for any bound below 2^62 (SplitMix64::below takes 32-bit bounds).
std::int64_t below64(SplitMix64& rng, std::int64_t bound) {
  return static_cast<std::int64_t>(static_cast<unsigned __int128>(rng.next()) * static_cast<std::uint64_t>(bound) >> 64);
}

double parse_number(const std::string& key, const std::string& value, const std::string& spec) {
  double v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  TOPO_CHECK(!value.empty() && ec == std::errc() && end == value.data() + value.size() && std::isfinite(v),
             "invalid generated graph '{}': {}='{}' is not a number", spec, key, value);
  return v;
}

std::int64_t parse_count(const std::string& key, const std::string& value, const std::string& spec) {
  const double v = parse_number(key, value, spec);
  TOPO_CHECK(v == std::floor(v) && v >= 1 && v <= 9.0e15, "invalid generated graph '{}': {}={} must be a whole number >= 1",
             spec, key, value);
  return static_cast<std::int64_t>(v);
}

// Each undirected edge once, as the key min * N + max; the draws that were self loops are kNone.
constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

std::uint64_t edge_key(std::int64_t u, std::int64_t v, std::int64_t n) {
  if (u == v) return kNone;
  return static_cast<std::uint64_t>(std::min(u, v)) * static_cast<std::uint64_t>(n) +
         static_cast<std::uint64_t>(std::max(u, v));
}

// Draws `count` edges in parallel: draw(rng) -> key, chunk k from its stream (seed, kEdges, k).
template <class Draw>
std::vector<std::uint64_t> draw_edges(std::int64_t count, std::uint64_t seed, Draw&& draw) {
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(count));
  const std::int64_t chunks = (count + kDrawsPerChunk - 1) / kDrawsPerChunk;
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t k = 0; k < chunks; ++k) {
    SplitMix64 rng({seed, kEdges, static_cast<std::uint64_t>(k)});
    const std::int64_t end = std::min(count, (k + 1) * kDrawsPerChunk);
    for (std::int64_t i = k * kDrawsPerChunk; i < end; ++i) keys[static_cast<std::size_t>(i)] = draw(rng);
  }
  return keys;
}

// The distinct edges of `keys`, each listed in both directions: all (min, max) pairs in order, then all
// (max, min), as PyG's to_undirected concatenates them.
std::vector<std::pair<std::int64_t, std::int64_t>> both_directions(std::vector<std::uint64_t> keys, std::int64_t n) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (!keys.empty() && keys.back() == kNone) keys.pop_back();
  const std::size_t m = keys.size();
  std::vector<std::pair<std::int64_t, std::int64_t>> edges(2 * m);
  const auto un = static_cast<std::uint64_t>(n);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(m); ++i) {
    const auto u = static_cast<std::int64_t>(keys[static_cast<std::size_t>(i)] / un);
    const auto v = static_cast<std::int64_t>(keys[static_cast<std::size_t>(i)] % un);
    edges[static_cast<std::size_t>(i)] = {u, v};
    edges[m + static_cast<std::size_t>(i)] = {v, u};
  }
  return edges;
}

std::int64_t undirected_draws(const GeneratedGraphSpec& s) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(s.nodes) * s.degree / 2));
}

// CSBM: labels uniform over the classes; each draw picks its first end uniformly, then a second end in the
// same class (probability homophily) or in another one.
std::vector<std::uint64_t> csbm_edges(const GeneratedGraphSpec& s, const std::vector<std::int64_t>& labels) {
  const std::int64_t n = s.nodes, classes = s.classes;
  std::vector<std::int64_t> offsets(static_cast<std::size_t>(classes + 1), 0), members(static_cast<std::size_t>(n));
  for (const std::int64_t y : labels) ++offsets[static_cast<std::size_t>(y + 1)];
  for (std::int64_t c = 0; c < classes; ++c) offsets[c + 1] += offsets[c];
  std::vector<std::int64_t> fill(offsets.begin(), offsets.end() - 1);
  for (std::int64_t v = 0; v < n; ++v) members[static_cast<std::size_t>(fill[labels[v]]++)] = v;
  return draw_edges(undirected_draws(s), s.seed, [&](SplitMix64& rng) {
    const std::int64_t u = below64(rng, n), cu = labels[static_cast<std::size_t>(u)];
    const std::int64_t size_u = offsets[cu + 1] - offsets[cu];
    if (uniform53(rng) < s.homophily) return edge_key(u, members[offsets[cu] + below64(rng, size_u)], n);
    if (size_u == n) return kNone;  // one class holds every node: no edge across classes exists
    for (;;) {  // a uniform node of another class: expected classes / (classes - 1) tries
      const std::int64_t v = below64(rng, n);
      if (labels[static_cast<std::size_t>(v)] != cu) return edge_key(u, v, n);
    }
  });
}

// R-MAT over the 2^scale >= N ids (draws past N are redrawn), then the ids shuffled by `shuffle`.
std::vector<std::uint64_t> rmat_edges(const GeneratedGraphSpec& s, const std::vector<std::int64_t>& shuffle) {
  const std::int64_t n = s.nodes;
  int scale = 0;
  while ((std::int64_t{1} << scale) < n) ++scale;
  const double ab = s.a + s.b, abc = s.a + s.b + s.c;
  return draw_edges(undirected_draws(s), s.seed, [&](SplitMix64& rng) {
    for (;;) {
      std::int64_t u = 0, v = 0;
      for (int level = 0; level < scale; ++level) {
        const double r = uniform53(rng);
        u = 2 * u + (r >= ab ? 1 : 0);
        v = 2 * v + ((r >= s.a && r < ab) || r >= abc ? 1 : 0);
      }
      if (u < n && v < n) return edge_key(shuffle[static_cast<std::size_t>(u)], shuffle[static_cast<std::size_t>(v)], n);
    }
  });
}

// A random permutation of [0, n) (Fisher-Yates from one stream).
std::vector<std::int64_t> permutation(std::int64_t n, std::uint64_t seed, Part part) {
  std::vector<std::int64_t> p(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = i;
  SplitMix64 rng({seed, part});
  for (std::int64_t i = n - 1; i > 0; --i) std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(below64(rng, i + 1))]);
  return p;
}

// x_v = m_{y_v} + N(0, (sqrt(2) / snr)^2 I): the class means orthonormal (Gram-Schmidt over Gaussian draws).
Tensor planted_features(const GeneratedGraphSpec& s, const std::vector<std::int64_t>& labels) {
  const std::int64_t n = s.nodes, f = s.features;
  std::vector<double> means(static_cast<std::size_t>(s.classes * f));
  SplitMix64 mean_rng({s.seed, kMeans});
  for (std::size_t i = 0; i < means.size(); i += 2) {
    const auto [z0, z1] = normal_pair(mean_rng);
    means[i] = z0;
    if (i + 1 < means.size()) means[i + 1] = z1;
  }
  for (std::int64_t c = 0; c < s.classes; ++c) {
    double* m = means.data() + c * f;
    for (std::int64_t p = 0; p < c; ++p) {
      const double* q = means.data() + p * f;
      double dot = 0;
      for (std::int64_t k = 0; k < f; ++k) dot += m[k] * q[k];
      for (std::int64_t k = 0; k < f; ++k) m[k] -= dot * q[k];
    }
    double norm = 0;
    for (std::int64_t k = 0; k < f; ++k) norm += m[k] * m[k];
    norm = std::sqrt(norm);
    for (std::int64_t k = 0; k < f; ++k) m[k] /= norm;
  }
  const double sigma = std::sqrt(2.0) / s.snr;
  Tensor x = Tensor::empty({n, f});
  float* out = x.data<float>();
#pragma omp parallel for schedule(static)
  for (std::int64_t v = 0; v < n; ++v) {
    SplitMix64 rng({s.seed, kNoise, static_cast<std::uint64_t>(v)});
    const double* m = means.data() + labels[static_cast<std::size_t>(v)] * f;
    float* row = out + v * f;
    for (std::int64_t k = 0; k < f; k += 2) {
      const auto [z0, z1] = normal_pair(rng);
      row[k] = static_cast<float>(m[k] + sigma * z0);
      if (k + 1 < f) row[k + 1] = static_cast<float>(m[k + 1] + sigma * z1);
    }
  }
  return x;
}

}  // namespace

std::string GeneratedGraphSpec::str() const {
  std::string out = fmt::format("{}:nodes={},degree={:g},classes={},features={}", kind, nodes, degree, classes, features);
  if (kind == "csbm") out += fmt::format(",homophily={:g}", homophily);
  else out += fmt::format(",a={:g},b={:g},c={:g}", a, b, c);
  return out + fmt::format(",snr={:g},train={:g},dev={:g},test={:g},seed={}", snr, train, dev, test, seed);
}

std::int64_t GeneratedGraphSpec::split_count(double share) const {
  return share < 1 ? static_cast<std::int64_t>(std::llround(share * static_cast<double>(nodes)))
                   : static_cast<std::int64_t>(share);
}

bool is_generated_graph_spec(const std::string& text) { return text.rfind("csbm:", 0) == 0 || text.rfind("rmat:", 0) == 0; }

GeneratedGraphSpec parse_generated_graph_spec(const std::string& text) {
  TOPO_CHECK(is_generated_graph_spec(text), "invalid generated graph '{}': a generated graph is csbm:KEY=VALUE,... or rmat:KEY=VALUE,...",
             text);
  GeneratedGraphSpec s;
  s.kind = text.substr(0, 4);
  const bool csbm = s.kind == "csbm";
  std::stringstream items(text.substr(5));
  std::map<std::string, bool> seen;
  for (std::string item; std::getline(items, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    TOPO_CHECK(eq != std::string::npos, "invalid generated graph '{}': '{}' is not KEY=VALUE", text, item);
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    TOPO_CHECK(!seen[key], "invalid generated graph '{}': {} is given twice", text, key);
    seen[key] = true;
    if (key == "nodes") s.nodes = parse_count(key, value, text);
    else if (key == "degree") s.degree = parse_number(key, value, text);
    else if (key == "classes") s.classes = parse_count(key, value, text);
    else if (key == "features") s.features = parse_count(key, value, text);
    else if (key == "snr") s.snr = parse_number(key, value, text);
    else if (key == "train") s.train = parse_number(key, value, text);
    else if (key == "dev") s.dev = parse_number(key, value, text);
    else if (key == "test") s.test = parse_number(key, value, text);
    else if (key == "seed") s.seed = static_cast<std::uint64_t>(parse_count(key, value, text));
    else if (csbm && key == "homophily") s.homophily = parse_number(key, value, text);
    else if (!csbm && key == "a") s.a = parse_number(key, value, text);
    else if (!csbm && key == "b") s.b = parse_number(key, value, text);
    else if (!csbm && key == "c") s.c = parse_number(key, value, text);
    else
      fail("invalid generated graph '{}': unknown key '{}' for {} (keys: nodes, degree, classes, features, {}, snr, train, dev, "
           "test, seed)",
           text, key, s.kind, csbm ? "homophily" : "a, b, c");
  }
  auto bad = [&](const std::string& why) { fail("invalid generated graph '{}': {}", text, why); };
  if (s.nodes < 2 || s.nodes >= kMaxNodes) bad(fmt::format("nodes={} must be in [2, 2^31)", s.nodes));
  if (!(s.degree > 0) || s.degree > static_cast<double>(s.nodes - 1))
    bad(fmt::format("degree={:g} must be > 0 and below nodes={}", s.degree, s.nodes));
  if (static_cast<double>(s.nodes) * s.degree / 2 > 4.0e9)
    bad(fmt::format("nodes * degree / 2 = {:.3g} edges: at most 4e9", static_cast<double>(s.nodes) * s.degree / 2));
  if (s.classes < 2 || s.classes > s.nodes) bad(fmt::format("classes={} must be in [2, nodes={}]", s.classes, s.nodes));
  if (s.features < s.classes || s.features > (1 << 20))
    bad(fmt::format("features={} must be >= classes={} (the class means are orthonormal) and <= 2^20", s.features,
                    s.classes));
  if (!(s.snr > 0)) bad(fmt::format("snr={:g} must be > 0", s.snr));
  if (csbm && !(s.homophily >= 0 && s.homophily <= 1)) bad(fmt::format("homophily={:g} must be in [0, 1]", s.homophily));
  if (!csbm && !(s.a >= 0 && s.b >= 0 && s.c >= 0 && s.a + s.b + s.c <= 1 + 1e-12 && s.a + s.b + s.c > 0))
    bad(fmt::format("a={:g}, b={:g}, c={:g} must be >= 0 with a + b + c <= 1 (d = 1 - a - b - c)", s.a, s.b, s.c));
  for (const auto& [name, share] : {std::pair{"train", s.train}, std::pair{"dev", s.dev}, std::pair{"test", s.test}})
    if (!(share >= 0) || (share >= 1 && share != std::floor(share)) || (share != 0 && s.split_count(share) < 1))
      bad(fmt::format("{}={:g} must be a fraction in [0, 1) of the nodes or a whole count", name, share));
  if (s.split_count(s.train) < 1 || s.split_count(s.dev) < 1) bad("train and dev need at least one node each");
  const std::int64_t labelled = s.split_count(s.train) + s.split_count(s.dev) + s.split_count(s.test);
  if (labelled > s.nodes) bad(fmt::format("train + dev + test = {} nodes, more than nodes={}", labelled, s.nodes));
  return s;
}

std::int64_t generation_bytes(const GeneratedGraphSpec& s) {
  const std::int64_t draws = undirected_draws(s);
  // keys (8 B a draw; sorted in place), both directions as int64 pairs (32 B a draw), features, labels and the
  // class lists or shuffle (8 B a node each).
  return draws * (8 + 32) + s.nodes * s.features * 4 + s.nodes * 24;
}

NodeDataset generate_node_dataset(const GeneratedGraphSpec& s) {
  const std::int64_t n = s.nodes;
  NodeDataset d;
  d.num_nodes = n;
  d.num_classes = s.classes;
  d.directed = true;  // both directions listed
  d.labels.resize(static_cast<std::size_t>(n));
  if (s.kind == "csbm") {
#pragma omp parallel for schedule(static)
    for (std::int64_t v = 0; v < n; ++v)
      d.labels[static_cast<std::size_t>(v)] = SplitMix64({s.seed, kLabels, static_cast<std::uint64_t>(v)}).below(s.classes);
    d.edges = both_directions(csbm_edges(s, d.labels), n);
  } else {
    const std::vector<std::int64_t> shuffle = permutation(n, s.seed, kShuffle);
    for (std::int64_t id = 0; id < n; ++id)  // R-MAT's blocks: class by the id before the shuffle
      d.labels[static_cast<std::size_t>(shuffle[static_cast<std::size_t>(id)])] =
          static_cast<std::int64_t>(static_cast<unsigned __int128>(id) * static_cast<std::uint64_t>(s.classes) /
                                    static_cast<std::uint64_t>(n));
    d.edges = both_directions(rmat_edges(s, shuffle), n);
  }
  d.features = planted_features(s, d.labels);
  const std::vector<std::int64_t> order = permutation(n, s.seed, kSplit);
  std::int64_t at = 0;
  for (const auto& [share, nodes] : {std::pair{s.train, &d.splits.train}, std::pair{s.dev, &d.splits.dev},
                                     std::pair{s.test, &d.splits.test}}) {
    const std::int64_t count = share == 0 ? 0 : s.split_count(share);
    nodes->assign(order.begin() + at, order.begin() + at + count);
    std::sort(nodes->begin(), nodes->end());
    at += count;
  }
  return d;
}

NodeDatasetStats node_dataset_stats(const NodeDataset& data) {
  NodeDatasetStats s;
  s.nodes = data.num_nodes;
  std::vector<std::int64_t> degree(static_cast<std::size_t>(data.num_nodes), 0);
  std::int64_t same = 0, labelled = 0;
  for (const auto& [u, v] : data.edges) {
    ++degree[static_cast<std::size_t>(u)];
    if (!data.directed) ++degree[static_cast<std::size_t>(v)];
    s.self_loops += u == v;
    const std::int64_t yu = data.labels[static_cast<std::size_t>(u)], yv = data.labels[static_cast<std::size_t>(v)];
    if (yu >= 0 && yv >= 0) ++labelled, same += yu == yv;
  }
  s.edges = static_cast<std::int64_t>(data.edges.size()) * (data.directed ? 1 : 2);
  s.mean_degree = static_cast<double>(s.edges) / static_cast<double>(std::max<std::int64_t>(1, s.nodes));
  for (const std::int64_t k : degree) s.max_degree = std::max(s.max_degree, k), s.isolated_nodes += k == 0;
  s.edge_homophily = labelled > 0 ? static_cast<double>(same) / static_cast<double>(labelled) : 0.0;
  return s;
}

void write_npz_node_dataset(const std::string& path, const NodeDataset& data) {
  const std::int64_t n = data.num_nodes, e = static_cast<std::int64_t>(data.edges.size());
  TOPO_CHECK(data.directed, "{}: only a graph whose edges are listed in both directions (an .npz's or a generated "
             "one's) can be written", path);
  TOPO_CHECK(data.features.defined(), "{}: the graph has no node features to write", path);
  std::vector<std::int64_t> edge_index(static_cast<std::size_t>(2 * e));
  for (std::int64_t i = 0; i < e; ++i) {
    edge_index[static_cast<std::size_t>(i)] = data.edges[static_cast<std::size_t>(i)].first;
    edge_index[static_cast<std::size_t>(e + i)] = data.edges[static_cast<std::size_t>(i)].second;
  }
  std::vector<std::uint8_t> masks[3];
  const std::vector<std::int64_t>* splits[3] = {&data.splits.train, &data.splits.dev, &data.splits.test};
  for (int m = 0; m < 3; ++m) {
    masks[m].assign(static_cast<std::size_t>(n), 0);
    for (const std::int64_t v : *splits[m]) masks[m][static_cast<std::size_t>(v)] = 1;
  }
  const Tensor x = data.features.to(Device::cpu());
  const auto un = static_cast<std::size_t>(n);
  write_npz(path, {{"edge_index", "i8", {2, e}, edge_index.data(), edge_index.size() * 8},
                   {"x", "f4", {n, x.size(1)}, x.data<float>(), static_cast<std::size_t>(x.numel()) * 4},
                   {"y", "i8", {n}, data.labels.data(), un * 8},
                   {"train_mask", "b1", {n}, masks[0].data(), un},
                   {"val_mask", "b1", {n}, masks[1].data(), un},
                   {"test_mask", "b1", {n}, masks[2].data(), un}});
}

}  // namespace topo::apps
