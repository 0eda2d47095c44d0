#include "models/star_transformer/topology.hpp"

namespace topo::models {

StarVariant parse_star_variant(const std::string& name) {
  if (name == "full") return StarVariant::Full;
  if (name == "no-radical") return StarVariant::NoRadical;
  if (name == "no-ring") return StarVariant::NoRing;
  fail("unknown Star-Transformer variant '{}': expected full, no-radical or no-ring", name);
}

std::string star_variant_name(StarVariant variant) {
  switch (variant) {
    case StarVariant::Full: return "full";
    case StarVariant::NoRadical: return "no-radical";
    case StarVariant::NoRing: return "no-ring";
  }
  return "?";
}

StarTopology star_topology(const std::vector<std::int64_t>& lengths, StarVariant variant, Device device) {
  TOPO_CHECK(!lengths.empty(), "star_topology: empty batch");
  for (std::size_t i = 0; i < lengths.size(); ++i)
    TOPO_CHECK(lengths[i] >= 1, "star_topology: sentence {} has length {} (must be >= 1)", i, lengths[i]);
  const auto sentences = builders::ones(static_cast<std::int64_t>(lengths.size()));
  std::vector<RelationSpec> relations = {
      {{"sat", "self", "sat"}, builders::self_loops_batch(lengths)},
      {{"emb", "token", "sat"}, builders::self_loops_batch(lengths)},
      {{"sat", "to_relay", "relay"}, builders::to_one_batch(lengths)},
      {{"relay", "relay_self", "relay"}, builders::self_loops_batch(sentences)},
  };
  std::vector<std::string> satellite_context = {"self", "token"};
  if (variant != StarVariant::NoRing) {
    relations.push_back({{"sat", "ring", "sat"}, builders::ring_batch(lengths, /*closed=*/true)});
    satellite_context.push_back("ring");
  }
  if (variant != StarVariant::NoRadical) {
    relations.push_back({{"relay", "from_relay", "sat"}, builders::from_one_batch(lengths)});
    satellite_context.push_back("from_relay");
  }
  StarTopology t;
  t.lengths = lengths;
  t.graph = HeteroGraph({builders::node_type("sat", lengths), builders::node_type("emb", lengths),
                         builders::node_type("relay", sentences)},
                        relations)
                .to(device);
  t.satellite = to_block(t.graph, "sat", satellite_context);
  t.relay = to_block(t.graph, "relay", {"to_relay", "relay_self"});
  return t;
}

}  // namespace topo::models
