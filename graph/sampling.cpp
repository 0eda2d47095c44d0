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

std::vector<std::int64_t> sample_distinct(std::int64_t n, std::int64_t k, std::uint64_t state) {
  std::vector<std::int64_t> chosen;
  if (k >= n) {
    for (std::int64_t i = 0; i < n; ++i) chosen.push_back(i);
    return chosen;
  }
  for (std::int64_t j = n - k; j < n; ++j) {
    state = splitmix64(state);
    const std::int64_t t = static_cast<std::int64_t>(state % static_cast<std::uint64_t>(j + 1));
    chosen.push_back(std::find(chosen.begin(), chosen.end(), t) == chosen.end() ? t : j);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

namespace {

// One relation's sampled in-edges of `seeds`: (src, dst, eid), seed by seed.
struct Sampled {
  std::vector<std::int64_t> src, dst, eid;
};

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
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t degree = indptr[seeds[i] + 1] - indptr[seeds[i]];
    offset[i + 1] = offset[i] + (fanout < 0 ? degree : std::min(fanout, degree));
  }
  Sampled out;
  out.src.resize(static_cast<std::size_t>(offset[n]));
  out.dst.resize(out.src.size());
  out.eid.resize(out.src.size());
  parallel_for(n, 4 * std::max<std::int64_t>(fanout, 8), [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t v = seeds[i], first = indptr[v], degree = indptr[v + 1] - first;
      const std::int64_t k = offset[i + 1] - offset[i];
      const std::vector<std::int64_t> picks =
          sample_distinct(degree, k, splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(v))));
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t at = first + picks[j];  // CSC rows list edges by increasing edge id
        out.src[offset[i] + j] = indices[at];
        out.dst[offset[i] + j] = v;
        out.eid[offset[i] + j] = eids[at];
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
    std::vector<char> seen(static_cast<std::size_t>(h.num_nodes(t)), 0);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      TOPO_CHECK(ids[i] >= 0 && ids[i] < h.num_nodes(t), "sample_neighbors: seed nodes['{}'][{}] = {} is outside "
                 "[0, {})", type, i, ids[i], h.num_nodes(t));
      TOPO_CHECK(!seen[ids[i]], "sample_neighbors: seed nodes['{}'][{}] = {} is repeated", type, i, ids[i]);
      seen[ids[i]] = 1;
    }
    by_type[t] = ids;
  }
  std::vector<NodeTypeSpec> types;
  for (int t = 0; t < h.num_node_types(); ++t) types.push_back({h.node_types()[t], h.num_nodes(t), {}});
  std::vector<RelationSpec> relations;
  std::vector<std::vector<std::int64_t>> parent_eids;
  for (int r = 0; r < h.num_relations(); ++r) {
    const CanonicalEType& et = h.canonical_etype(r);
    const auto& dst_seeds = by_type[h.node_type_id(et.dst_type)];
    const std::uint64_t key = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(r) + 1));
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

}  // namespace topo
