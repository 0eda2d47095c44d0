#include "graph/sampling.hpp"

#include <algorithm>

#include "graph/sampling_draws.hpp"
#include "kernels/error.hpp"

namespace topo {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<std::int64_t> sample_distinct(std::int64_t n, std::int64_t k, std::uint64_t state) {
  std::vector<std::int64_t> chosen(static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(n, k))));
  detail::sample_distinct_into(n, k, state, chosen.data());
  return chosen;
}

namespace {

// The draws of relation r under a call's seed.
std::uint64_t relation_key(std::uint64_t seed, int r) {
  return splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(r) + 1));
}

// Seed ids of one type: in range and distinct (topo::Error naming the type and the position).
void check_seeds(const HeteroGraph& g, int type, const std::vector<std::int64_t>& ids, const char* what) {
  const std::string& name = g.node_types()[type];
  std::vector<char> seen(static_cast<std::size_t>(g.num_nodes(type)), 0);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    TOPO_CHECK(ids[i] >= 0 && ids[i] < g.num_nodes(type), "{}: seed nodes['{}'][{}] = {} is outside [0, {})", what,
               name, i, ids[i], g.num_nodes(type));
    TOPO_CHECK(!seen[ids[i]], "{}: seed nodes['{}'][{}] = {} is repeated", what, name, i, ids[i]);
    seen[ids[i]] = 1;
  }
}

// options.prob checked against the host graph h: per relation its weights on the host, undefined where the
// relation is drawn uniformly (every relation when prob is empty).
std::vector<Tensor> host_weights(const HeteroGraph& h, const SamplingOptions& options, const char* what) {
  std::vector<Tensor> out(static_cast<std::size_t>(h.num_relations()));
  if (options.prob.empty()) return out;
  TOPO_CHECK(static_cast<int>(options.prob.size()) == h.num_relations(),
             "{}: prob has {} weight tensors for a graph of {} relations", what, options.prob.size(),
             h.num_relations());
  for (int r = 0; r < h.num_relations(); ++r) {
    const Tensor& w = options.prob[r];
    if (!w.defined()) continue;
    const std::int64_t edges = h.num_edges(r);
    TOPO_CHECK(w.dtype() == DType::F32, "{}: prob of relation {} must be float32, got {}", what,
               h.canonical_etype(r).str(), dtype_name(w.dtype()));
    TOPO_CHECK(w.numel() == edges && (w.ndim() == 1 || (w.ndim() == 2 && w.size(1) == 1)),
               "{}: prob of relation {} must hold one weight per edge ([{}] or [{}, 1]), got {}", what,
               h.canonical_etype(r).str(), edges, edges, w.str());
    out[r] = w.to(Device::cpu());
  }
  return out;
}

// options.exclude checked against h: per relation the set of its excluded edge ids (empty: none).
std::vector<detail::EdgeIdSet> exclusion_sets(const HeteroGraph& h, const SamplingOptions& options, const char* what) {
  std::vector<detail::EdgeIdSet> out(static_cast<std::size_t>(h.num_relations()));
  if (options.exclude.empty()) return out;
  TOPO_CHECK(static_cast<int>(options.exclude.size()) == h.num_relations(),
             "{}: exclude has {} edge lists for a graph of {} relations", what, options.exclude.size(),
             h.num_relations());
  for (int r = 0; r < h.num_relations(); ++r) {
    const std::vector<std::int64_t>& ids = options.exclude[r];
    const std::int64_t edges = h.num_edges(r);
    for (std::size_t i = 0; i < ids.size(); ++i)
      TOPO_CHECK(ids[i] >= 0 && ids[i] < edges, "{}: exclude of relation {}: [{}] = {} is outside [0, {})", what,
                 h.canonical_etype(r).str(), i, ids[i], edges);
    out[r] = detail::EdgeIdSet(ids);
  }
  return out;
}

// How relation r is drawn: its fan-out and key, the call's replace, its weights (nullptr: uniform) and exclusions.
detail::RowDraw row_draw(std::int64_t fanout, std::uint64_t key, bool replace, const Tensor& weights,
                         const detail::EdgeIdSet& excluded) {
  return {fanout, key, replace, weights.defined() ? weights.data<float>() : nullptr,
          excluded.empty() ? nullptr : &excluded};
}

// One relation's draws (rows: its CSC, or its CSR with EdgeDir::out); a bad weight on the seeds' rows is a
// topo::Error naming the relation (as the caller's g names it) and the edge.
detail::SampledEdges draw_relation(const CsrView& rows, const CanonicalEType& relation,
                                   const std::vector<std::int64_t>& seeds, const detail::RowDraw& how,
                                   const char* what) {
  detail::SampledEdges s = detail::draw_rows(rows, seeds, how);
  if (s.bad_weight_edge >= 0)
    fail("{}: prob of relation {} has weight {} at edge {}: weights must be finite and >= 0", what, relation.str(),
         how.weights[s.bad_weight_edge], s.bad_weight_edge);
  return s;
}

// One fan-out per relation, each a count >= 0 or -1 (every edge): DGL's fanout. Another negative has no
// meaning (the draws read any negative as -1), so it is refused by position.
void check_fanouts(const std::vector<std::int64_t>& fanouts, int relations, const std::string& what) {
  TOPO_CHECK(static_cast<int>(fanouts.size()) == relations, "{}: {} fan-outs for a graph of {} relations", what,
             fanouts.size(), relations);
  for (std::size_t r = 0; r < fanouts.size(); ++r)
    TOPO_CHECK(fanouts[r] >= -1, "{}: fan-out [{}] = {} must be >= 0, or -1 for every edge", what, r, fanouts[r]);
}

}  // namespace

HeteroGraph sample_neighbors(const HeteroGraph& g, const NodeSets& seeds, const std::vector<std::int64_t>& fanouts,
                             std::uint64_t seed, const SamplingOptions& options) {
  check_fanouts(fanouts, g.num_relations(), "sample_neighbors");
  const HeteroGraph h = g.to(Device::cpu());
  const std::vector<Tensor> weights = host_weights(h, options, "sample_neighbors");
  const auto excluded = exclusion_sets(h, options, "sample_neighbors");
  std::vector<std::vector<std::int64_t>> by_type(static_cast<std::size_t>(h.num_node_types()));
  for (const auto& [type, ids] : seeds) {
    const int t = h.node_type_id(type);
    check_seeds(h, t, ids, "sample_neighbors");
    by_type[t] = ids;
  }
  const bool out_edges = options.edge_dir == EdgeDir::out;
  std::vector<NodeTypeSpec> types;
  for (int t = 0; t < h.num_node_types(); ++t) types.push_back({h.node_types()[t], h.num_nodes(t), {}});
  std::vector<RelationSpec> relations;
  std::vector<std::vector<std::int64_t>> parent_eids;
  for (int r = 0; r < h.num_relations(); ++r) {
    const CanonicalEType& et = h.canonical_etype(r);
    const auto& relation_seeds = by_type[h.node_type_id(out_edges ? et.src_type : et.dst_type)];
    detail::SampledEdges s;
    if (!relation_seeds.empty() && fanouts[r] != 0)
      s = draw_relation(out_edges ? h.out_csr(r) : h.in_csc(r), et, relation_seeds,
                        row_draw(fanouts[r], relation_key(seed, r), options.replace, weights[r], excluded[r]),
                        "sample_neighbors");
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs(s.eid.size());
    for (std::size_t e = 0; e < pairs.size(); ++e)
      pairs[e] = out_edges ? std::make_pair(s.node[e], s.neighbor[e]) : std::make_pair(s.neighbor[e], s.node[e]);
    relations.push_back({et, EdgeList::from_pairs(pairs, h.id_dtype())});
    parent_eids.push_back(std::move(s.eid));
  }
  HeteroGraph out(types, relations);
  for (int r = 0; r < out.num_relations(); ++r) {
    const auto n = static_cast<std::int64_t>(parent_eids[r].size());
    out.set_edata(r, kEID, Tensor::from_vector(parent_eids[r], {n}));
  }
  return g.device().is_cuda() ? out.to(g.device()) : out;
}

std::vector<SampledBlock> sample_blocks(const HeteroGraph& g, const std::vector<std::vector<std::int64_t>>& seeds,
                                        const std::vector<std::vector<std::int64_t>>& fanouts, std::uint64_t seed,
                                        const SamplingOptions& options) {
  // Out-edges of g are the in-edges of its reverse (which shares g's formats, CSR and CSC swapped), and the
  // reverse's relations are the blocks' (neighbour -> seed): so one path below, in-edges of h.
  const HeteroGraph host = g.to(Device::cpu());
  const HeteroGraph h = options.edge_dir == EdgeDir::out ? host.reverse() : host;
  const int types = h.num_node_types();
  TOPO_CHECK(static_cast<int>(seeds.size()) == types, "sample_blocks: seeds for {} node types, the graph has {}",
             seeds.size(), types);
  for (int t = 0; t < types; ++t) check_seeds(h, t, seeds[t], "sample_blocks");
  for (std::size_t l = 0; l < fanouts.size(); ++l)
    check_fanouts(fanouts[l], h.num_relations(), fmt::format("sample_blocks: layer {}", l));
  const std::vector<Tensor> weights = host_weights(host, options, "sample_blocks");
  const auto excluded = exclusion_sets(host, options, "sample_blocks");  // g.reverse() keeps the edge ids
  // Each sampled edge list is already a block's order (grouped by destination position, by edge id within),
  // so a layer needs no frontier graph: only its sources numbered, destinations first. src_at: a source's
  // position in the layer being built, -1 elsewhere (reset after each layer, so it is filled once per call).
  std::vector<std::vector<std::int64_t>> src_at(static_cast<std::size_t>(types));
  for (int t = 0; t < types; ++t) src_at[t].assign(static_cast<std::size_t>(h.num_nodes(t)), -1);
  std::vector<SampledBlock> layers(fanouts.size());
  std::vector<std::vector<std::int64_t>> dst = seeds;
  for (std::size_t l = fanouts.size(); l-- > 0;) {
    SampledBlock& out = layers[l];
    out.parts.src_nodes = dst;
    out.dst_nodes = std::move(dst);
    out.parts.edges.resize(static_cast<std::size_t>(h.num_relations()));
    for (int t = 0; t < types; ++t)
      for (std::size_t i = 0; i < out.dst_nodes[t].size(); ++i) src_at[t][out.dst_nodes[t][i]] = static_cast<std::int64_t>(i);
    const std::uint64_t layer_seed = splitmix64(seed + l);
    for (int r = 0; r < h.num_relations(); ++r) {
      const CanonicalEType& et = h.canonical_etype(r);
      const int s = h.node_type_id(et.src_type), d = h.node_type_id(et.dst_type);
      const std::vector<std::int64_t>& dst_d = out.dst_nodes[d];
      if (dst_d.empty() || fanouts[l][r] == 0) continue;
      detail::SampledEdges drawn =
          draw_relation(h.in_csc(r), host.canonical_etype(r), dst_d,
                        row_draw(fanouts[l][r], relation_key(layer_seed, r), options.replace, weights[r],
                                 excluded[r]),
                        "sample_blocks");
      EdgeIds& e = out.parts.edges[r];
      e.eid = std::move(drawn.eid);
      e.dst = std::move(drawn.seed_index);
      e.src = std::move(drawn.neighbor);
      number_sources(e.src, out.parts.src_nodes[s], src_at[s], false, nullptr);
    }
    for (int t = 0; t < types; ++t)
      for (const std::int64_t u : out.parts.src_nodes[t]) src_at[t][u] = -1;
    if (l > 0) dst = out.parts.src_nodes;
  }
  return layers;
}

}  // namespace topo
