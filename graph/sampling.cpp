#include "graph/sampling.hpp"

#include <algorithm>

#include "kernels/error.hpp"
#include "kernels/parallel.hpp"

namespace topo {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

namespace {

// sample_distinct into out[0 .. min(k, n)): no allocation, for the per-seed draws.
std::int64_t sample_distinct_into(std::int64_t n, std::int64_t k, std::uint64_t state, std::int64_t* out) {
  if (k >= n) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = i;
    return n;
  }
  for (std::int64_t m = 0, j = n - k; j < n; ++j, ++m) {
    state = splitmix64(state);
    const std::int64_t t = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(j + 1));
    out[m] = std::find(out, out + m, t) == out + m ? t : j;
  }
  std::sort(out, out + k);
  return k;
}

}  // namespace

std::vector<std::int64_t> sample_distinct(std::int64_t n, std::int64_t k, std::uint64_t state) {
  std::vector<std::int64_t> chosen(static_cast<std::size_t>(std::max<std::int64_t>(0, std::min(n, k))));
  sample_distinct_into(n, k, state, chosen.data());
  return chosen;
}

namespace {

// One relation's sampled in-edges of `seeds`: (src, dst, eid) and the seed's position (its index in `seeds`),
// seed by seed, by increasing edge id within a seed.
struct Sampled {
  std::vector<std::int64_t> src, dst, eid, seed_index;
};

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

// T: the graph's id type. The CSC is read in place (a host graph's, never copied: a batch of seeds touches
// only its own rows, so sampling costs what it draws, not the graph's size).
template <class T>
Sampled sample_relation(const CsrView& csc, const std::vector<std::int64_t>& seeds, std::int64_t fanout,
                        std::uint64_t key) {
  const T* indptr = csc.indptr.data<T>();
  const T* indices = csc.indices.data<T>();
  const T* eids = csc.eids.data<T>();
  const auto n = static_cast<std::int64_t>(seeds.size());
  // Two passes: the count per seed (its offset in the output), then each seed's draw into its own slots.
  std::vector<std::int64_t> offset(static_cast<std::size_t>(n) + 1, 0);
  // Seeds are scattered over the graph: each one's indptr entry, CSC row and edge ids are cache misses that
  // only a fetch issued seeds ahead overlaps (kAhead: ~ the misses a core keeps in flight).
  constexpr std::int64_t kAhead = 16;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(indptr + seeds[i + kAhead]);
    const std::int64_t degree = indptr[seeds[i] + 1] - indptr[seeds[i]];
    offset[i + 1] = offset[i] + (fanout < 0 ? degree : std::min(fanout, degree));
  }
  Sampled out;
  for (auto* v : {&out.src, &out.dst, &out.eid, &out.seed_index}) v->resize(static_cast<std::size_t>(offset[n]));
  // ~32 scalar operations a pick (the draw, the repeat check, three gathers): a 1,024-seed batch at fan-out
  // 10 is worth two threads.
  parallel_for(n, 32 * std::max<std::int64_t>(fanout, 8), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      if (i + kAhead / 2 < end) {  // the row's first line (a fan-out's picks land in a row of ~20 edges)
        const std::int64_t ahead = indptr[seeds[i + kAhead / 2]];
        __builtin_prefetch(indices + ahead);
        __builtin_prefetch(eids + ahead);
      }
      const std::int64_t v = seeds[i], first = indptr[v], degree = indptr[v + 1] - first, at = offset[i];
      // the picks (positions in v's CSC row) land in eid's slots, then become the edges
      const std::int64_t k = sample_distinct_into(degree, offset[i + 1] - at,
                                                  splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(v))),
                                                  out.eid.data() + at);
      for (std::int64_t j = at; j < at + k; ++j) {
        const std::int64_t e = first + out.eid[j];  // CSC rows list edges by increasing edge id
        out.src[j] = indices[e];
        out.dst[j] = v;
        out.eid[j] = eids[e];
        out.seed_index[j] = i;
      }
    }
  });
  return out;
}

}  // namespace

HeteroGraph sample_neighbors(const HeteroGraph& g, const NodeSets& seeds, const std::vector<std::int64_t>& fanouts,
                             std::uint64_t seed) {
  TOPO_CHECK(static_cast<int>(fanouts.size()) == g.num_relations(),
             "sample_neighbors: {} fan-outs for a graph of {} relations", fanouts.size(), g.num_relations());
  const HeteroGraph h = g.to(Device::cpu());
  std::vector<std::vector<std::int64_t>> by_type(static_cast<std::size_t>(h.num_node_types()));
  for (const auto& [type, ids] : seeds) {
    const int t = h.node_type_id(type);
    check_seeds(h, t, ids, "sample_neighbors");
    by_type[t] = ids;
  }
  std::vector<NodeTypeSpec> types;
  for (int t = 0; t < h.num_node_types(); ++t) types.push_back({h.node_types()[t], h.num_nodes(t), {}});
  std::vector<RelationSpec> relations;
  std::vector<std::vector<std::int64_t>> parent_eids;
  for (int r = 0; r < h.num_relations(); ++r) {
    const CanonicalEType& et = h.canonical_etype(r);
    const auto& dst_seeds = by_type[h.node_type_id(et.dst_type)];
    const std::uint64_t key = relation_key(seed, r);
    Sampled s;
    if (!dst_seeds.empty() && fanouts[r] != 0) {
      const CsrView& csc = h.in_csc(r);
      s = h.id_dtype() == DType::I64 ? sample_relation<std::int64_t>(csc, dst_seeds, fanouts[r], key)
                                     : sample_relation<std::int32_t>(csc, dst_seeds, fanouts[r], key);
    }
    std::vector<std::pair<std::int64_t, std::int64_t>> pairs(s.src.size());
    for (std::size_t e = 0; e < pairs.size(); ++e) pairs[e] = {s.src[e], s.dst[e]};
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
                                        const std::vector<std::vector<std::int64_t>>& fanouts, std::uint64_t seed) {
  const HeteroGraph h = g.to(Device::cpu());
  const int types = h.num_node_types();
  TOPO_CHECK(static_cast<int>(seeds.size()) == types, "sample_blocks: seeds for {} node types, the graph has {}",
             seeds.size(), types);
  for (int t = 0; t < types; ++t) check_seeds(h, t, seeds[t], "sample_blocks");
  for (std::size_t l = 0; l < fanouts.size(); ++l)
    TOPO_CHECK(static_cast<int>(fanouts[l].size()) == h.num_relations(),
               "sample_blocks: layer {} has {} fan-outs for a graph of {} relations", l, fanouts[l].size(),
               h.num_relations());
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
      const CsrView& csc = h.in_csc(r);
      Sampled drawn = h.id_dtype() == DType::I64
                          ? sample_relation<std::int64_t>(csc, dst_d, fanouts[l][r], relation_key(layer_seed, r))
                          : sample_relation<std::int32_t>(csc, dst_d, fanouts[l][r], relation_key(layer_seed, r));
      EdgeIds& e = out.parts.edges[r];
      e.eid = std::move(drawn.eid);
      e.dst = std::move(drawn.seed_index);
      e.src = std::move(drawn.src);
      number_sources(e.src, out.parts.src_nodes[s], src_at[s], false, nullptr);
    }
    for (int t = 0; t < types; ++t)
      for (const std::int64_t u : out.parts.src_nodes[t]) src_at[t][u] = -1;
    if (l > 0) dst = out.parts.src_nodes;
  }
  return layers;
}

}  // namespace topo
