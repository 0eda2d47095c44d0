"""A DGL script's ``except dgl.DGLError`` catches what topograph raises for the same bad input. Each case below
raises DGLError under DGL 2.1 (the type noted beside it, checked with the real DGL 2.1.0); topograph raised a bare
ValueError or TypeError for all of them before. The ValueErrors are now DGLError (itself a ValueError); the
TypeErrors are DGLTypeError, a DGLError and still a TypeError, since tests and scripts catch TypeError for float
ids and a bad idtype (test_errors.py, test_block.py, test_subgraph.py, test_verbs.py). The messages are unchanged
and still name the argument."""
import topograph  # noqa: F401 (before torch: topograph/__init__.py)

import numpy as np
import pytest
import torch

import topograph as dgl

T = torch.tensor


def g0():
    return dgl.graph((T([0, 1, 2]), T([1, 2, 3])))


def hg():
    return dgl.heterograph({("user", "follows", "user"): (T([0, 1]), T([1, 2])),
                            ("user", "plays", "game"): (T([0, 2]), T([0, 1]))})


# (name, call, message pattern): were ValueError, DGL 2.1 raises DGLError for each
VALUE_CASES = [
    # DGL 2.1: DGLError (unit_graph.cc "Check failed: src->shape[0] == dst->shape[0]")
    ("graph src/dst lengths", lambda: dgl.graph((T([0, 1, 2]), T([1, 2]))), "3 source ids but 2 destination ids"),
    # DGL 2.1: DGLError (same check)
    ("graph ('coo', ...) lengths", lambda: dgl.graph(("coo", (T([0, 1]), T([0])))), "2 source ids but 1"),
    # DGL 2.1: DGLError (same check)
    ("heterograph lengths", lambda: dgl.heterograph({("a", "r", "b"): (T([0, 1]), T([0]))}),
     r"heterograph \('a', 'r', 'b'\): 2 source ids but 1"),
    # DGL 2.1: DGLError "The input list of graphs cannot be empty."
    ("batch([])", lambda: dgl.batch([]), "batch: no graphs given"),
    # DGL 2.1: DGLError "Batching a MFG is not supported."
    ("batch of a block", lambda: dgl.batch([dgl.to_block(g0())]), "a block cannot be batched"),
    # DGL 2.1: DGLError 'Invalid form: bad. Must be "all", "uv" or "eid".'
    ("edges(form='bad')", lambda: g0().edges(form="bad"), "form must be 'uv', 'eid' or 'all'"),
    # DGL 2.1: DGLError "Expect order to be one of None, 'srcdst', 'eid', got bad"
    ("edges(order='bad')", lambda: g0().edges(order="bad"), "order must be 'eid' or 'srcdst'"),
    # DGL 2.1: DGLError (spmat.h "Sparse format not recognized")
    ("formats('xyz')", lambda: g0().formats("xyz"), r"unknown format\(s\) \['xyz'\]"),
    # DGL 2.1: DGLError "Graph has more than one node type; please specify a dict for dst_nodes."
    ("to_block plain dst on a heterograph", lambda: dgl.to_block(hg(), T([0])), "give dst_nodes as"),
]

# (name, call, message pattern): were TypeError, DGL 2.1 raises DGLError for each
TYPE_CASES = [
    # DGL 2.1: DGLError "Expect idtype to be a framework object of int32/int64, got torch.float32"
    ("graph idtype=float32", lambda: dgl.graph((T([0, 1]), T([1, 2])), idtype=torch.float32),
     "idtype must be torch.int32 or torch.int64, got torch.float32"),
    # DGL 2.1: DGLError (same message, torch.int16)
    ("graph idtype=int16", lambda: dgl.graph((T([0, 1]), T([1, 2])), idtype=torch.int16), "got torch.int16"),
    # DGL 2.1: DGLError (same message, "got int32")
    ("graph idtype='int32'", lambda: dgl.graph((T([0, 1]), T([1, 2])), idtype="int32"), "idtype must be"),
    # DGL 2.1: DGLError (same message)
    ("heterograph idtype=float32",
     lambda: dgl.heterograph({("a", "r", "b"): (T([0, 1]), T([0, 1]))}, idtype=torch.float32), "idtype must be"),
    # DGL 2.1: DGLError (unit_graph.cc "Check failed: aten::IsValidIdArray(src)")
    ("graph float ids", lambda: dgl.graph((T([0., 1.]), T([1., 2.]))),
     "graph: src: node ids must be an integer tensor, got torch.float32"),
    # DGL 2.1: DGLError (same check)
    ("graph bool ids", lambda: dgl.graph((T([True, False]), T([False, True]))), "got torch.bool"),
    # DGL 2.1: DGLError (same check)
    ("heterograph float ids", lambda: dgl.heterograph({("a", "r", "b"): (T([0., 1.]), T([0., 1.]))}),
     "node ids must be an integer tensor"),
    # DGL 2.1: DGLError "('Unsupported graph data type:', <class 'int'>)"
    ("graph(5)", lambda: dgl.graph(5), "data must be a pair"),
    # DGL 2.1: DGLError (same)
    ("heterograph bad data", lambda: dgl.heterograph({("a", "r", "b"): 5}), "data must be a pair"),
    # DGL 2.1: DGLError 'Invalid argument ndata: must be a string list but got <class 'int'>.'
    ("batch(ndata=5)", lambda: dgl.batch([g0()], ndata=5), "ndata must be ALL"),
    # DGL 2.1: DGLError 'Expect argument "v" to have data type torch.int64. But got torch.float32.'
    ("in_degrees float ids", lambda: g0().in_degrees(T([0.])), "node ids must be an integer tensor"),
    # DGL 2.1: DGLError (argument "u")
    ("out_degrees float ids", lambda: g0().out_degrees(T([0.])), "node ids must be an integer tensor"),
    # DGL 2.1: DGLError (argument "v")
    ("in_edges float ids", lambda: g0().in_edges(T([0.])), "node ids must be an integer tensor"),
    # DGL 2.1: DGLError (argument "eid")
    ("find_edges float ids", lambda: g0().find_edges(T([0.])), "find_edges: edge: node ids must be"),
    # DGL 2.1: DGLError (argument "u")
    ("edge_ids float ids", lambda: g0().edge_ids(T([0.]), T([1.])), "edge_ids: source node"),
    # DGL 2.1: DGLError (argument "u")
    ("has_edges_between float ids", lambda: g0().has_edges_between(T([0.]), T([1.])), "has_edges_between: u"),
    # DGL 2.1: DGLError (argument "vid")
    ("has_nodes float ids", lambda: g0().has_nodes(T([0.5])), "has_nodes: ids must be integers"),
    # DGL 2.1: DGLError (argument "u")
    ("g.nodes[float ids].data", lambda: g0().nodes[T([0.])].data, "g.nodes\\[ids\\].data"),
    # DGL 2.1: DGLError 'Expect argument "nodes["_N"]" to have data type torch.int64. But got torch.float32.'
    ("node_subgraph float ids", lambda: dgl.node_subgraph(g0(), T([0., 1.])), "node_subgraph: nodes\\['_N'\\]"),
    # DGL 2.1: DGLError (argument "edges[...]")
    ("edge_subgraph float ids", lambda: dgl.edge_subgraph(g0(), T([0.5])), "edge_subgraph"),
    # DGL 2.1: DGLError (argument "nodes["_N"]")
    ("in_subgraph float ids", lambda: dgl.in_subgraph(g0(), T([0.])), "in_subgraph"),
    # DGL 2.1: DGLError (argument "nodes["_N"]")
    ("out_subgraph float ids", lambda: dgl.out_subgraph(g0(), T([0.])), "out_subgraph"),
    # DGL 2.1: InconsistentDtypeException, a DGLError subclass ("the same dtype as the graph index's dtype")
    ("to_block float dst", lambda: dgl.to_block(g0(), T([1., 2.])), "to_block: dst_nodes"),
    # DGL 2.1: DGLError (argument "edges")
    ("apply_edges float ids", lambda: g0().apply_edges(lambda e: {}, edges=T([0.])), "apply_edges: edge"),
    # DGL 2.1: DGLError (argument "edges")
    ("send_and_recv float ids",
     lambda: g0().send_and_recv(T([0.]), dgl.function.copy_u("h", "m"), dgl.function.sum("m", "h")),
     "send_and_recv: edge"),
    # DGL 2.1: DGLError (argument "u")
    ("remove_edges float ids", lambda: g0().remove_edges(T([0.])), "remove_edges: edge"),
    # DGL 2.1: DGLError (argument "u")
    ("remove_nodes float ids", lambda: g0().remove_nodes(T([0.])), "remove_nodes"),
]


@pytest.mark.parametrize("name, call, message", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_dgl_error_where_dgl_raises_it(name, call, message):
    with pytest.raises(dgl.DGLError, match=message):
        call()


@pytest.mark.parametrize("name, call, message", TYPE_CASES, ids=[c[0] for c in TYPE_CASES])
def test_wrong_types_are_dgl_errors_and_still_type_errors(name, call, message):
    with pytest.raises(dgl.DGLError, match=message) as info:
        call()
    assert isinstance(info.value, TypeError)  # what topograph raised before, which its own tests catch


@pytest.mark.parametrize("method", ["successors", "predecessors"])
def test_successors_refuse_a_float_node_id(method):
    """DGL 2.1 raises DGLError for successors(1.7) / successors(torch.tensor(1.7)) ('Expect argument "vid" to have
    data type int32 or int64'); topograph took int(v), so 1.7 answered for node 1, a wrong result."""
    g = g0()
    for bad in (1.7, T(1.7), True):
        with pytest.raises(dgl.DGLError, match=f"{method}: expected one integer node id") as info:
            getattr(g, method)(bad)
        assert isinstance(info.value, TypeError)
    # integer forms still work, as in DGL: a Python or numpy int, a 0-d or one-element integer tensor
    expected = [2] if method == "successors" else [0]
    for ok in (1, np.int64(1), T(1), T([1]), T([1], dtype=torch.int32), np.array([1])):
        assert getattr(g, method)(ok).tolist() == expected


def test_except_dgl_error_in_a_dgl_script():
    """The pattern of a DGL script: one ``except dgl.DGLError`` around its graph building."""
    caught = []
    for build in (lambda: dgl.graph((T([0, 1]), T([1, 2])), idtype=torch.float32),
                  lambda: dgl.graph((T([0., 1.]), T([1., 2.]))),
                  lambda: dgl.graph((T([0, 1, 2]), T([1, 2]))),
                  lambda: dgl.batch([])):
        try:
            build()
        except dgl.DGLError as e:
            caught.append(type(e).__name__)
    assert len(caught) == 4


def test_float_ids_in_lists_and_numpy_arrays_are_refused_not_truncated():
    """DGL 2.1 raises DGLError for in_degrees([1.7]), find_edges([0.6]), apply_edges(f, [0.4]) ('Expect argument
    ... to have data type int32 or int64'); topograph converted lists straight to int64, which truncated: node 1,
    edge 0, a wrong answer with nothing said."""
    g = g0()
    for call in (lambda: g.in_degrees([1.7]), lambda: g.out_degrees(np.array([0.5])), lambda: g.find_edges([0.6]),
                 lambda: g.apply_edges(lambda e: {}, [0.4]), lambda: g.has_nodes([1.5]), lambda: g.in_degrees([True])):
        with pytest.raises(dgl.DGLError) as info:
            call()
        assert isinstance(info.value, TypeError)
    # integer lists, numpy integer arrays and empty lists still work
    assert g.in_degrees([1]).tolist() == g.in_degrees(T([1])).tolist()
    assert g.in_degrees(np.array([1], dtype=np.int32)).tolist() == g.in_degrees(T([1])).tolist()
    assert g.find_edges([]).__len__() == 2
    assert g.has_nodes([0, 1]).tolist() == [True, True]
