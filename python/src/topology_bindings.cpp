// Topology-file builders (models/topology_transformer) for topograph.builders: the positional patterns a
// topology file names (dilated, block, global, random), one relation over a batch of token sequences. The
// relation is handed over as the JSON object a file would hold, so the file parser checks its parameters and
// its errors read as they do for a file; relation_edges gives each sentence's edges, which are renumbered
// as a disjoint union (sentence b's nodes after those of sentences 0..b-1).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "kernels/tensor.hpp"
#include "kernels/error.hpp"
#include "models/topology_transformer/topology_graph.hpp"
#include "tensors.hpp"

namespace topo::py {

namespace {

// relation: one entry of a file's "relations" (src and dst "tok"); source: the caller, for errors.
std::pair<nb::object, nb::object> relation_batch_edges(const std::string& relation, const std::string& source,
                                                       const std::vector<std::int64_t>& lengths, bool int64) {
  nlohmann::ordered_json file;
  try {
    file["relations"] = nlohmann::ordered_json::array({nlohmann::ordered_json::parse(relation)});
  } catch (const nlohmann::json::exception& e) {
    fail("{}: the relation is not JSON: {}", source, e.what());
  }
  models::TopologySpec spec;
  try {
    spec = models::parse_topology(file, source);
  } catch (const Error& e) {  // the file's JSON path of a field means nothing to a caller of a function
    std::string message = e.what();
    if (const auto at = message.find("relations[0]."); at != std::string::npos) message.erase(at, 13);
    throw Error(message);
  }
  std::int64_t nodes = 0;  // checked before any edge is made: int32 ids refuse a long batch at once
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    TOPO_CHECK(lengths[b] >= 0, "{}: lengths[{}] = {} is negative", source, b, lengths[b]);
    TOPO_CHECK(!__builtin_add_overflow(nodes, lengths[b], &nodes), "{}: the lengths overflow int64 at [{}]", source,
               b);
  }
  TOPO_CHECK(int64 || nodes <= INT32_MAX, "{}: {} nodes do not fit int32 ids; use idtype=torch.int64", source, nodes);
  std::vector<std::int64_t> src, dst;
  std::int64_t first = 0;
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const models::SentenceEdges e = models::relation_edges(spec, spec.relations[0], lengths[b]);
    for (std::size_t i = 0; i < e.size(); ++i) src.push_back(first + e.src[i]), dst.push_back(first + e.dst[i]);
    first += lengths[b];
  }
  const auto n = static_cast<std::int64_t>(src.size());
  if (int64) return {to_torch(Tensor::from_vector(src, {n})), to_torch(Tensor::from_vector(dst, {n}))};
  const auto narrow = [&](const std::vector<std::int64_t>& ids) {
    return to_torch(Tensor::from_vector(std::vector<std::int32_t>(ids.begin(), ids.end()), {n}));
  };
  return {narrow(src), narrow(dst)};
}

}  // namespace

void bind_topology(nb::module_& m) {
  m.def("relation_batch_edges", &relation_batch_edges, nb::arg("relation"), nb::arg("source"), nb::arg("lengths"),
        nb::arg("int64"));
}

}  // namespace topo::py
