#include "models/big_transformer/topology.hpp"

#include "kernels/error.hpp"

namespace topo::models {

BigVariant parse_big_variant(const std::string& name) {
  if (name == "full") return BigVariant::Full;
  if (name == "no-global") return BigVariant::NoGlobal;
  if (name == "no-local") return BigVariant::NoLocal;
  if (name == "radical") return BigVariant::Radical;
  fail("unknown BiG-Transformer variant '{}' (valid: full, no-global, no-local, radical)", name);
}

std::string big_variant_name(BigVariant variant) {
  switch (variant) {
    case BigVariant::Full: return "full";
    case BigVariant::NoGlobal: return "no-global";
    case BigVariant::NoLocal: return "no-local";
    case BigVariant::Radical: return "radical";
  }
  return "full";
}

bool uses_lexicon(BigVariant variant) { return variant == BigVariant::Full || variant == BigVariant::NoGlobal; }

std::vector<std::vector<builders::Span>> adjacent_pairs(const std::vector<std::int64_t>& lengths) {
  std::vector<std::vector<builders::Span>> spans(lengths.size());
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::int64_t i = 0; i + 1 < lengths[b]; ++i) spans[b].push_back({i, i + 1});
  return spans;
}

BigTopology big_topology(const std::vector<std::int64_t>& lengths, const std::vector<std::vector<builders::Span>>& given,
                         BigVariant variant, Device device) {
  TOPO_CHECK(!lengths.empty(), "big_topology: empty batch");
  for (std::size_t b = 0; b < lengths.size(); ++b)
    TOPO_CHECK(lengths[b] >= 1, "big_topology: sentence {} has {} characters (must be >= 1)", b, lengths[b]);
  BigTopology t;
  t.lengths = lengths;
  t.has_words = variant != BigVariant::NoLocal;
  t.has_sentence = variant != BigVariant::NoGlobal;
  const std::vector<std::vector<builders::Span>> spans =
      variant == BigVariant::Radical ? adjacent_pairs(lengths)
                                     : (t.has_words ? given : std::vector<std::vector<builders::Span>>(lengths.size()));
  TOPO_CHECK(spans.size() == lengths.size(), "big_topology: {} span lists for {} sentences", spans.size(),
             lengths.size());
  t.word_counts = builders::span_counts(spans);

  std::vector<NodeTypeSpec> types = {builders::node_type("char", lengths)};
  std::vector<RelationSpec> relations;
  std::vector<std::string> attended;  // the relations into char, in block order
  if (t.has_words) {
    const builders::SpanEdges edges = builders::bipartite_spans_batch(lengths, spans);  // checks every span
    types.push_back(builders::node_type("word", t.word_counts));
    relations.push_back({{"char", "in", "word"}, edges.in});
    relations.push_back({{"word", "contains", "char"}, edges.contains});
    attended.push_back("contains");
  }
  if (t.has_sentence) {
    types.push_back(builders::node_type("sent", builders::ones(static_cast<std::int64_t>(lengths.size()))));
    relations.push_back({{"sent", "from_sent", "char"}, builders::from_one_batch(lengths)});
    attended.push_back("from_sent");
  }
  t.graph = HeteroGraph(types, relations).to(device);
  if (t.has_words) t.word_sum = relation_block(t.graph, "in");
  t.chars = to_block(t.graph, "char", attended);
  return t;
}

}  // namespace topo::models
