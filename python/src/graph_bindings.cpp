// topograph._C.HeteroGraph: Topograph's graph store (graph/heterograph.hpp) as a Python object. The Python
// class topograph.DGLGraph wraps it with DGL's names; this layer speaks in node-type and relation indices.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "graph/batch.hpp"
#include "graph/builders.hpp"
#include "graph/heterograph.hpp"
#include "graph/sampling.hpp"
#include "graph/to_block.hpp"
#include "graph/structure.hpp"
#include "kernels/sparse/format.hpp"
#include "tensors.hpp"

namespace topo::py {

namespace {

using Triple = std::tuple<std::string, std::string, std::string>;

Triple triple(const CanonicalEType& c) { return {c.src_type, c.etype, c.dst_type}; }
CanonicalEType canonical(const Triple& t) { return {std::get<0>(t), std::get<1>(t), std::get<2>(t)}; }

// node_types: [(name, count)]; relations: [((src type, etype, dst type), src ids [E], dst ids [E])].
// The ids are copied into the graph: it is immutable, so it must not share memory a caller can still write.
HeteroGraph make_graph(const std::vector<std::pair<std::string, std::int64_t>>& node_types,
                       const std::vector<std::tuple<Triple, nb::ndarray<>, nb::ndarray<>>>& relations) {
  std::vector<NodeTypeSpec> types;
  for (const auto& [name, count] : node_types) types.push_back({name, count, {}});
  std::vector<RelationSpec> specs;
  for (const auto& [etype, src, dst] : relations) {
    EdgeList edges;
    edges.src = borrow_ids(src, "graph: source ids").clone();
    edges.dst = borrow_ids(dst, "graph: destination ids").clone();
    specs.push_back({canonical(etype), std::move(edges)});
  }
  nb::gil_scoped_release release;
  return HeteroGraph(types, specs);
}

std::string device_str(const HeteroGraph& g) { return g.device().str(); }

// graph/structure.hpp names a relation by its edge-type name ("" when the graph has one relation).
std::string etype_name(const HeteroGraph& g, int relation) { return g.canonical_etype(relation).etype; }

// Host id vector -> torch tensor of the graph's id dtype.
nb::object id_tensor(const std::vector<std::int64_t>& ids, DType dtype) {
  const Tensor t = Tensor::from_vector(ids, {static_cast<std::int64_t>(ids.size())});
  if (dtype == DType::I64) return to_torch(t);
  std::vector<std::int32_t> narrow(ids.begin(), ids.end());
  return to_torch(Tensor::from_vector(narrow, {static_cast<std::int64_t>(ids.size())}));
}

// (src, dst, eid) of the in- (out-) edges of `nodes`, grouped by node in the order given.
nb::tuple edge_ids(const HeteroGraph& g, int relation, const std::vector<std::int64_t>& nodes, bool in) {
  const EdgeIds e = in ? in_edges(g, nodes, etype_name(g, relation)) : out_edges(g, nodes, etype_name(g, relation));
  return nb::make_tuple(id_tensor(e.src, g.id_dtype()), id_tensor(e.dst, g.id_dtype()), id_tensor(e.eid, g.id_dtype()));
}

// Per node type, int64 ids from id tensors (a host copy: to_block reads them as parent ids).
std::vector<std::vector<std::int64_t>> ids_per_type(const std::vector<nb::ndarray<>>& arrays, const char* what) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& a : arrays) {
    const Tensor t = borrow_ids(a, what).to(Device::cpu());
    if (t.dtype() == DType::I64) {
      out.push_back(t.to_vector<std::int64_t>());
    } else {
      const auto narrow = t.to_vector<std::int32_t>();
      out.emplace_back(narrow.begin(), narrow.end());
    }
  }
  return out;
}

// graph/sampling.hpp's options from the Python layer's: edge_dir "in" or "out"; prob one float32 [E] tensor or
// None per relation (None: drawn uniformly), or no entry at all for uniform draws everywhere; exclude one id
// tensor per relation (edge ids never drawn), or no entry at all.
SamplingOptions sampling_options(const std::string& edge_dir, bool replace,
                                 const std::vector<std::optional<nb::ndarray<>>>& prob,
                                 const std::vector<nb::ndarray<>>& exclude) {
  SamplingOptions options;
  TOPO_CHECK(edge_dir == "in" || edge_dir == "out", "sampling: edge_dir must be 'in' or 'out', got '{}'", edge_dir);
  options.edge_dir = edge_dir == "out" ? EdgeDir::out : EdgeDir::in;
  options.replace = replace;
  for (const auto& weights : prob) options.prob.push_back(weights ? borrow_float(*weights, "prob") : Tensor());
  options.exclude = ids_per_type(exclude, "exclude_edges");
  return options;
}

}  // namespace

void bind_graph(nb::module_& m) {
  nb::class_<HeteroGraph>(m, "HeteroGraph")
      .def_prop_ro("ntypes", [](const HeteroGraph& g) { return g.node_types(); })
      .def_prop_ro("canonical_etypes",
                   [](const HeteroGraph& g) {
                     std::vector<Triple> out;
                     for (const auto& c : g.canonical_etypes()) out.push_back(triple(c));
                     return out;
                   })
      .def_prop_ro("idtype", [](const HeteroGraph& g) { return std::string(dtype_name(g.id_dtype())); })
      .def_prop_ro("device", &device_str)
      .def("ntype_id", [](const HeteroGraph& g, const std::string& n) { return g.node_type_id(n); })
      .def("relation_id", [](const HeteroGraph& g, const std::string& e) { return g.relation_id(e); })
      .def("relation_id", [](const HeteroGraph& g, const Triple& e) { return g.relation_id(canonical(e)); })
      .def("num_nodes", [](const HeteroGraph& g, int ntype) { return g.num_nodes(ntype); })
      .def("num_edges", [](const HeteroGraph& g, int relation) { return g.num_edges(relation); })
      .def("total_num_nodes", &HeteroGraph::total_num_nodes)
      .def("total_num_edges", &HeteroGraph::total_num_edges)
      // (src ids, dst ids) by edge id: copies, so a caller writing into them cannot change the graph.
      .def("edges",
           [](const HeteroGraph& g, int relation) {
             const EdgeList e = g.edges(relation);
             return std::make_pair(to_torch(e.src.clone()), to_torch(e.dst.clone()));
           })
      // Copies: the graph keeps its degree tensors, and torch shares the memory it is handed.
      .def("in_degrees", [](const HeteroGraph& g, int relation) { return to_torch(g.in_degrees(relation).clone()); })
      .def("out_degrees", [](const HeteroGraph& g, int relation) { return to_torch(g.out_degrees(relation).clone()); })
      // (csr, csc, csr_edge_ids, csc_edge_ids): which formats of the relation exist (DGL's formats()).
      .def("built_formats",
           [](const HeteroGraph& g, int relation) {
             const HeteroGraph::BuiltFormats b = g.built_formats(relation);
             return std::make_tuple(b.csr, b.csc, b.csr_edge_ids, b.csc_edge_ids);
           })
      // (indptr, indices, edge ids) of the relation's CSR by source (by_source) or CSC by destination, edges by
      // edge id within a row; built and kept on first use. Copies, so a caller writing into them cannot change
      // the graph; copy=false shares the graph's arrays, for the package's own readers that only read them.
      .def("adjacency",
           [](const HeteroGraph& g, int relation, bool by_source, bool copy) {
             const CsrView& v = by_source ? g.out_csr(relation) : g.in_csc(relation);
             const auto out = [copy](const Tensor& t) { return to_torch(copy ? t.clone() : t); };
             return std::make_tuple(out(v.indptr), out(v.indices), out(v.eids));
           })
      // Every relation's CSR and CSC with their edge ids, now (DGL's create_formats_).
      .def("create_formats",
           [](const HeteroGraph& g) {
             for (int r = 0; r < g.num_relations(); ++r) {
               (void)g.out_csr(r);
               (void)g.in_csc(r);
             }
           })
      .def("reverse", &HeteroGraph::reverse)
      .def("in_edges",
           [](const HeteroGraph& g, int r, const std::vector<std::int64_t>& v) { return edge_ids(g, r, v, true); })
      .def("out_edges",
           [](const HeteroGraph& g, int r, const std::vector<std::int64_t>& u) { return edge_ids(g, r, u, false); })
      .def("predecessors",
           [](const HeteroGraph& g, int r, std::int64_t v) {
             return id_tensor(predecessors(g, v, etype_name(g, r)), g.id_dtype());
           })
      .def("successors",
           [](const HeteroGraph& g, int r, std::int64_t u) {
             return id_tensor(successors(g, u, etype_name(g, r)), g.id_dtype());
           })
      .def("add_self_loop", [](const HeteroGraph& g, int r) { return add_self_loop(g, etype_name(g, r)); })
      .def("remove_self_loop", [](const HeteroGraph& g, int r) { return remove_self_loop(g, etype_name(g, r)); })
      // Subgraphs (graph/structure.hpp): nodes as {stored node type: ids}, edges as {relation index: ids}; the
      // result holds the parent ids as the C++ graph's kNID / kEID features (parent_ids reads them back).
      .def("node_subgraph",
           [](const HeteroGraph& g, const NodeSets& nodes) {
             nb::gil_scoped_release release;
             return node_subgraph(g, nodes);
           })
      .def("edge_subgraph",
           [](const HeteroGraph& g, const std::map<int, std::vector<std::int64_t>>& edges, bool relabel_nodes) {
             EdgeSets named;
             for (const auto& [r, ids] : edges) named[etype_name(g, r)] = ids;
             nb::gil_scoped_release release;
             return edge_subgraph(g, named, relabel_nodes);
           })
      // graph/sampling.hpp: the frontier of `seeds` ({stored node type: ids}), fanouts one per relation;
      // edge_dir, replace, prob, exclude: sampling_options above.
      .def("sample_neighbors",
           [](const HeteroGraph& g, const NodeSets& seeds, const std::vector<std::int64_t>& fanouts,
              std::uint64_t seed, const std::string& edge_dir, bool replace,
              const std::vector<std::optional<nb::ndarray<>>>& prob, const std::vector<nb::ndarray<>>& exclude) {
             const SamplingOptions options = sampling_options(edge_dir, replace, prob, exclude);
             nb::gil_scoped_release release;
             return sample_neighbors(g, seeds, fanouts, seed, options);
           })
      // graph/sampling.hpp's sample_blocks, input layer first: per layer (the block with node types SRC/t then
      // DST/t, the DGLBlock layout; source ids per type; destination ids per type; g's edge id per relation).
      // By out-edges the blocks are g.reverse()'s: relation r turned round, the drawn edges neighbour -> seed.
      .def("sample_blocks",
           [](const HeteroGraph& g, const std::vector<nb::ndarray<>>& seeds,
              const std::vector<std::vector<std::int64_t>>& fanouts, std::uint64_t seed, const std::string& edge_dir,
              bool replace, const std::vector<std::optional<nb::ndarray<>>>& prob,
              const std::vector<nb::ndarray<>>& exclude) {
             const auto seed_ids = ids_per_type(seeds, "sample_blocks: seed nodes");
             const SamplingOptions options = sampling_options(edge_dir, replace, prob, exclude);
             std::vector<SampledBlock> layers;
             std::vector<HeteroGraph> graphs;
             {
               nb::gil_scoped_release release;
               layers = sample_blocks(g, seed_ids, fanouts, seed, options);
               const HeteroGraph oriented = options.edge_dir == EdgeDir::out ? g.reverse() : g;
               for (const SampledBlock& l : layers)
                 graphs.push_back(block_graph(oriented, l.parts, l.dst_nodes, "SRC/", "DST/"));
             }
             std::vector<nb::tuple> out;
             for (std::size_t i = 0; i < layers.size(); ++i) {
               std::vector<nb::object> src, dst, eids;
               for (const auto& ids : layers[i].parts.src_nodes) src.push_back(id_tensor(ids, DType::I64));
               for (const auto& ids : layers[i].dst_nodes) dst.push_back(id_tensor(ids, DType::I64));
               for (const EdgeIds& e : layers[i].parts.edges) eids.push_back(id_tensor(e.eid, DType::I64));
               out.push_back(nb::make_tuple(graphs[i], src, dst, eids));
             }
             return out;
           })
      // graph/to_block.hpp: (source parent ids per node type, (src position, dst position, parent eid) per
      // relation), int64; dst_nodes / src_nodes: one id tensor per node type.
      .def("to_block_parts",
           [](const HeteroGraph& g, const std::vector<nb::ndarray<>>& dst,
              const std::optional<std::vector<nb::ndarray<>>>& src, bool include_dst_in_src) {
             const auto dst_ids = ids_per_type(dst, "to_block: dst_nodes");
             std::optional<std::vector<std::vector<std::int64_t>>> src_ids;
             if (src) src_ids = ids_per_type(*src, "to_block: src_nodes");
             BlockParts parts;
             {
               nb::gil_scoped_release release;
               parts = to_block(g, dst_ids, include_dst_in_src, src_ids);
             }
             std::vector<nb::object> sources;
             for (const auto& ids : parts.src_nodes) sources.push_back(id_tensor(ids, DType::I64));
             std::vector<nb::tuple> edges;
             for (const EdgeIds& e : parts.edges)
               edges.push_back(nb::make_tuple(id_tensor(e.src, DType::I64), id_tensor(e.dst, DType::I64),
                                              id_tensor(e.eid, DType::I64)));
             return std::make_pair(sources, edges);
           })
      // The parent ids a subgraph keeps for node type `index` (nodes) or relation `index` (edges); None when
      // it keeps none (every node kept, as DGL stores none then).
      .def("parent_ids",
           [](const HeteroGraph& g, bool nodes, int index) -> nb::object {
             if (nodes) {
               (void)g.num_nodes(index);  // a topo::Error naming the index when it is out of range
               const std::string& t = g.node_types()[static_cast<std::size_t>(index)];
               return g.has_ndata(t, kNID) ? to_torch(g.ndata(t, kNID)) : nb::none();
             }
             const auto& data = g.edata_map(index);
             const auto it = data.find(kEID);
             return it != data.end() ? to_torch(it->second) : nb::none();
           })
      // node_types: the (stored) node types kept, in that order (None: every type), as a relation slice keeps
      // only those its relations touch; the relations' arrays and formats are shared either way.
      .def("edge_type_subgraph",
           [](const HeteroGraph& g, const std::vector<Triple>& etypes,
              const std::optional<std::vector<std::string>>& node_types) {
             std::vector<CanonicalEType> c;
             for (const auto& t : etypes) c.push_back(canonical(t));
             return node_types ? g.edge_type_subgraph(c, *node_types) : g.edge_type_subgraph(c);
           },
           nb::arg("etypes"), nb::arg("node_types") = nb::none())
      .def("to",
           [](const HeteroGraph& g, const std::string& type, int index) { return g.to(device_from(type, index)); })
      .def_prop_ro("batch_size", &HeteroGraph::batch_size)
      .def("batch_num_nodes", [](const HeteroGraph& g, int ntype) { return g.batch_num_nodes(ntype); })
      .def("batch_num_edges", [](const HeteroGraph& g, int relation) { return g.batch_num_edges(relation); });

  // graph/builders.hpp's batched edge builders: (src, dst) of one relation over graphs of `lengths` nodes,
  // numbered as a disjoint union (graph b's nodes after those of graphs 0..b-1). `widths`: window only,
  // one per graph. id dtype: int32 or int64.
  m.def("builder_edges",
        [](const std::string& name, const std::vector<std::int64_t>& lengths, const std::vector<std::int64_t>& widths,
           bool closed, bool int64) {
          const DType dtype = int64 ? DType::I64 : DType::I32;
          EdgeList e;
          if (name == "ring") e = builders::ring_batch(lengths, closed, dtype);
          else if (name == "window") e = builders::window_batch(lengths, widths, dtype);
          else if (name == "full") e = builders::full_batch(lengths, dtype);
          else if (name == "self_loops") e = builders::self_loops_batch(lengths, dtype);
          else if (name == "to_one") e = builders::to_one_batch(lengths, dtype);
          else if (name == "from_one") e = builders::from_one_batch(lengths, dtype);
          else fail("builder_edges: no builder named '{}'", name);
          return std::make_pair(to_torch(e.src), to_torch(e.dst));
        });
  // builders::bipartite_spans_batch: words given as inclusive character spans [(start, end)] per sentence ->
  // ((in: char -> word src, dst), (contains: word -> char src, dst)), words numbered sentence by sentence.
  m.def("span_edges", [](const std::vector<std::int64_t>& lengths,
                         const std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>>& spans, bool int64) {
    std::vector<std::vector<builders::Span>> words(spans.size());
    for (std::size_t b = 0; b < spans.size(); ++b)
      for (const auto& [start, end] : spans[b]) words[b].push_back({start, end});
    const builders::SpanEdges e = builders::bipartite_spans_batch(lengths, words, int64 ? DType::I64 : DType::I32);
    return std::make_pair(std::make_pair(to_torch(e.in.src), to_torch(e.in.dst)),
                          std::make_pair(to_torch(e.contains.src), to_torch(e.contains.dst)));
  });
  m.def("make_graph", &make_graph, nb::arg("node_types"), nb::arg("relations"));
  m.def("batch", [](const std::vector<HeteroGraph>& graphs) {
    nb::gil_scoped_release release;
    return batch(graphs);
  });
  m.def("unbatch", [](const HeteroGraph& g) { return unbatch(g); });
}

}  // namespace topo::py
