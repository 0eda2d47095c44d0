#pragma once
// A topology file (docs/topologies.md): which node attends to which, written as JSON instead of a C++ builder.
//
//   {"nodes": {"global": 1},
//    "relations": [{"name": "local", "src": "tok", "dst": "tok", "builder": "window", "radius": 1},
//                  {"name": "read", "src": "tok", "dst": "global", "builder": "all"},
//                  {"name": "bcast", "src": "global", "dst": "tok", "builder": "all"}],
//    "head_groups": [{"heads": 4, "relations": ["local", "bcast", "read"]}]}
//
// Node types per sentence: "tok" (its tokens, plus the nodes of types declared "in_sequence", which lead them),
// "emb" (the tokens' input embeddings, a source only, never updated: Star's e_i) and the types of "nodes".
// parse_topology checks everything that does not depend on a batch and throws topo::Error naming the file and
// the JSON path ("star.json: relations[2].radius: must be >= 0, got -1"); a field it does not know is an error
// too, never ignored. Whether every destination has an in-edge depends on the sentence length: build_topology
// (topology_graph.hpp) checks it for every batch, and check_topology_lengths for the short sentences up front.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace topo::models {

// "tok" and "emb": the node types every sentence has.
inline constexpr const char* kTokenType = "tok";
inline constexpr const char* kEmbeddingType = "emb";

enum class TopologyBuilderKind { Window, Dilated, Ring, Random, Block, All, Self, Full, Global };
std::string builder_name(TopologyBuilderKind kind);

struct TopologyNodeType {
  std::string name;
  std::int64_t count = 1;    // nodes per sentence
  bool learned = true;       // init "learned" (a trained vector per node) or "mean" (mean of the token embeddings)
  bool in_sequence = false;  // leads the token sequence ([CLS]): tok's first nodes, updated with tok's weights
};

struct TopologyRelation {
  std::string name, src, dst;  // src and dst: "tok", "emb" or a type of "nodes" (not an in_sequence one)
  TopologyBuilderKind builder = TopologyBuilderKind::All;
  std::int64_t radius = -1;         // window: |i - j| <= radius (-1: from width)
  std::int64_t width = 0;           // window: a constant odd width (0: from radius or divisor)
  std::int64_t width_divisor = 0;   // window: width "N/k", N the sentence's token count (builders::fractional_widths)
  std::int64_t dilation = 0, reach = 0;  // dilated: offsets +-dilation * m, m = 1..reach
  std::int64_t per_node = 0;        // random: sources per destination
  std::uint64_t seed = 0;           // random
  std::int64_t size = 0;            // block
  std::vector<std::int64_t> positions;  // global: the sequence positions that attend to, and are attended by, all
  std::string path;                 // "relations[2]", for errors
};

struct TopologyHeadGroup {
  std::vector<std::int64_t> heads;  // "heads": an integer (one entry, every layer) or a list, one per layer;
                                    // empty: every head (a file without head_groups)
  bool per_layer = false;           // "heads" is a list
  std::vector<int> relations;       // indices into TopologySpec::relations, in the order the group lists them
  std::string path;                 // "head_groups[1]"
  // Heads in layer l (0-based) of a run with `total` heads.
  std::int64_t heads_in_layer(std::size_t l, std::int64_t total) const;
  // False for a group with 0 heads in every layer (switched off, e.g. to ablate it): it attends nowhere, so its
  // relations need not reach every destination and its edges are no hop.
  bool attends() const;
};

// parallel: every destination type reads the previous layer's states; sequential: tok is updated first, then
// the other types in file order, each reading the newest states (Star's satellites, then its relay).
enum class UpdateSchedule { Parallel, Sequential };

struct TopologySpec {
  std::string source;                         // the file, for errors
  std::vector<TopologyNodeType> node_types;   // the types of "nodes", in file order
  std::vector<TopologyRelation> relations;    // in file order
  std::vector<TopologyHeadGroup> head_groups;  // never empty: no "head_groups" is one group of every relation
  UpdateSchedule schedule = UpdateSchedule::Parallel;

  // Nodes of in_sequence types leading each sentence's tokens (the tok sequence is lead_count() + n long).
  std::int64_t lead_count() const;
  // A type of "nodes" by name; nullptr for tok, emb and unknown names.
  const TopologyNodeType* node_type(const std::string& name) const;
  // Nodes of `type` (tok, emb or a non-sequence type) in a sentence of n tokens.
  std::int64_t nodes_in_sentence(const std::string& type, std::int64_t tokens) const;
  // The types some relation updates: tok first, then the others in file order.
  std::vector<std::string> destination_types() const;
  // The types a block of the graph holds: tok, then emb if a relation reads it, then the non-sequence types.
  std::vector<std::string> graph_types() const;
  // Per layer, the head groups' heads sum to `heads`; `layers` matches every per-layer list. Errors name the file.
  void check_heads(std::int64_t heads, std::int64_t layers) const;
};

// `file` parsed with its keys in file order (nlohmann::ordered_json); `source` names it in errors.
TopologySpec parse_topology(const nlohmann::ordered_json& file, const std::string& source);
// A file's JSON, keys in file order; a missing file or bad JSON (with its line) is an error naming the path.
nlohmann::ordered_json read_topology_json(const std::string& path);
// read_topology_json, then parse_topology: errors name the path (and the JSON path of a bad field).
TopologySpec read_topology_file(const std::string& path);

// Whether the band path (`--attention auto`: the fused band attention, no graph built) can run `spec`: tok the
// only destination, each group one window or full tok -> tok.
bool band_runs(const TopologySpec& spec);

}  // namespace topo::models
