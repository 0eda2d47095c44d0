#pragma once
// Graphviz DOT export for inspecting a topology (`dot -Tsvg g.dot > g.svg`).
#include <cstdint>
#include <string>

#include "graph/heterograph.hpp"

namespace topo {

struct DotOptions {
  // Refuse graphs with more nodes than this (a picture of 10^5 nodes helps nobody); 0 = no limit.
  std::int64_t max_nodes = 2000;
};

// Every node as `"<type>:<id>"` labelled `<type> <id>`, its type drawn with its own shape and fill colour;
// every edge `"a:i" -> "b:j" [label="<etype>", color=...]`, one colour per relation.
std::string to_dot(const HeteroGraph& g, const DotOptions& options = {});

// The schema only: one node per node type (labelled with its count), one edge per relation.
std::string schema_to_dot(const HeteroGraph& g);

}  // namespace topo
