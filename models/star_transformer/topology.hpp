#pragma once
// The Star-Transformer's topology (Guo et al., NAACL 2019; ../shared/docs/models.md §1) as a graph:
// per sentence n satellites h_i, n token embeddings e_i (keys/values only) and one relay s.
//   satellite phase: h_i attends over C_i = [h_{i-1}, h_i, h_{i+1}, e_i, s]   (closed ring)
//   relay phase:     s attends over [s; H]
// Ablations (paper Table 6): no-radical drops the relay -> satellite edges (satellites never read s; the relay
// still reads them, so the readout is unchanged); no-ring drops the ring edges (C_i = [h_i, e_i, s]).
#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace topo::models {

enum class StarVariant { Full, NoRadical, NoRing };
StarVariant parse_star_variant(const std::string& name);  // "full", "no-radical", "no-ring"
std::string star_variant_name(StarVariant variant);

struct StarTopology {
  std::vector<std::int64_t> lengths;
  // Node types sat, emb, relay; relations ring (sat->sat), self (sat->sat), token (emb->sat),
  // from_relay (relay->sat), to_relay (sat->relay), relay_self (relay->relay), each kept only when used.
  HeteroGraph graph;
  Block satellite;  // dst sat; sources [sat; emb; relay] (no relay under no-radical)
  Block relay;      // dst relay; sources [sat; relay]
  std::int64_t num_tokens() const { return satellite.num_dst; }
  std::int64_t num_sentences() const { return relay.num_dst; }
};

// One batched topology for sentences of the given lengths (each >= 1), built by the batched builders in one
// pass and moved to `device`.
StarTopology star_topology(const std::vector<std::int64_t>& lengths, StarVariant variant,
                           Device device = Device::cpu());

}  // namespace topo::models
