"""DGLGraph's methods that DGL 0.5+ kept from the old DGLGraph for older scripts (dgl/heterograph.py's deprecated
section): add_edge, has_node, has_edge_between, edge_id, in_degree, out_degree forward to their plural
replacements with DGL's deprecation warning; readonly() is a warning only (a graph is always mutable);
set_n_initializer / set_e_initializer take dgl.init.zero_initializer (what topograph does anyway: rows an update
does not reach are zeros). The APIs DGL removed (send, recv, register_*_func, group_apply_edges, ...) raise
DGL's DGLError naming the replacement instead of an AttributeError."""
from __future__ import annotations

import warnings

from ._base import DGLError
from ._graph import DGLGraph
from .init import zero_initializer


def _warn(old: str, new: str):
    warnings.warn(f"DGLGraph.{old} is deprecated. Please use DGLGraph.{new}", DeprecationWarning, stacklevel=3)


def add_edge(g: DGLGraph, u, v, data=None, etype=None):
    _warn("add_edge", "add_edges")
    g.add_edges(u, v, data, etype)


def has_node(g: DGLGraph, vid, ntype=None):
    _warn("has_node", "has_nodes")
    return g.has_nodes(vid, ntype)


def has_edge_between(g: DGLGraph, u, v, etype=None):
    _warn("has_edge_between", "has_edges_between")
    return g.has_edges_between(u, v, etype)


def edge_id(g: DGLGraph, u, v, force_multi=None, return_uv=False, etype=None):
    _warn("edge_id", "edge_ids")
    return g.edge_ids(u, v, return_uv=return_uv, etype=etype)


def in_degree(g: DGLGraph, v, etype=None):
    _warn("in_degree", "in_degrees")
    return g.in_degrees(v, etype)


def out_degree(g: DGLGraph, u, etype=None):
    _warn("out_degree", "out_degrees")
    return g.out_degrees(u, etype)


def readonly(g: DGLGraph, readonly_state=True):
    warnings.warn("DGLGraph.readonly is deprecated in v0.5.\nDGLGraph now always supports mutable operations like "
                  "add_nodes and add_edges.", DeprecationWarning, stacklevel=2)


def _initializer(what: str):
    def set_initializer(g: DGLGraph, initializer, field=None, **type_kw):
        if initializer is not zero_initializer:
            raise DGLError(f"{what}: topograph fills the rows an update does not reach with zeros, which is "
                           f"dgl.init.zero_initializer; another initializer ({initializer!r}) is not supported")
    set_initializer.__name__ = what
    return set_initializer


def _removed(name: str, hint: str):
    def removed(g: DGLGraph, *args, **kwargs):
        raise DGLError(f"DGLGraph.{name} is deprecated. {hint}")
    removed.__name__ = name
    return removed


_REMOVED = {
    "send": "As a replacement, use DGLGraph.apply_edges API to compute messages as edge data. Then use "
            "DGLGraph.send_and_recv and set the message function as dgl.function.copy_e to conduct message "
            "aggregation.",
    "recv": "As a replacement, use DGLGraph.apply_edges API to compute messages as edge data. Then use "
            "DGLGraph.send_and_recv and set the message function as dgl.function.copy_e to conduct message "
            "aggregation.",
    "multi_recv": "As a replacement, use DGLGraph.apply_edges and DGLGraph.multi_send_and_recv / "
                  "DGLGraph.multi_update_all.",
    "register_message_func": "Please directly call update_all (or send_and_recv, pull, push) with the function "
                             "as the argument.",
    "register_reduce_func": "Please directly call update_all (or send_and_recv, pull, push) with the function "
                            "as the argument.",
    "register_apply_node_func": "Please directly call apply_nodes with func as the argument.",
    "register_apply_edge_func": "Please directly call apply_edges with func as the argument.",
    "group_apply_edges": "Please use DGLGraph.apply_edges, or dgl.ops.edge_softmax / segment ops for grouped "
                         "computations.",
    "from_networkx": "Please call dgl.from_networkx(nx_graph, node_attrs, edge_attrs), which creates a new "
                     "DGLGraph from the networkx graph.",
    "from_scipy_sparse_matrix": "Please call dgl.from_scipy(spmat), which creates a new DGLGraph from the "
                                "scipy matrix.",
}

for _f in (add_edge, has_node, has_edge_between, edge_id, in_degree, out_degree, readonly):
    setattr(DGLGraph, _f.__name__, _f)
DGLGraph.set_n_initializer = _initializer("set_n_initializer")
DGLGraph.set_e_initializer = _initializer("set_e_initializer")
for _name, _hint in _REMOVED.items():
    if not hasattr(DGLGraph, _name):
        setattr(DGLGraph, _name, _removed(_name, _hint))
