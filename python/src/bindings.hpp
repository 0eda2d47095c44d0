#pragma once
// The parts of the topograph._C module, each binding one layer's objects (module.cpp assembles them).
#include <nanobind/nanobind.h>

namespace topo::py {

void bind_graph(nanobind::module_& m);  // graph_bindings.cpp: HeteroGraph, batch
void bind_ops(nanobind::module_& m);    // op_bindings.cpp: gspmm, gsddmm, edge_softmax with their tapes
void bind_topology(nanobind::module_& m);  // topology_bindings.cpp: a topology file's positional builders

}  // namespace topo::py
