"""Traversals and propagation (_traversal.py): BFS frontiers against a Python BFS, topological frontiers against
Kahn's algorithm in Python, a cycle named, a Tree-LSTM-style child-sum up a tree with user-defined functions
against a recursive reference, and every frontier and propagated value equal to DGL 2.1's where dgl imports."""
import collections

import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

EDGES = ([0, 0, 1, 2, 3, 4, 2, 5], [2, 1, 3, 3, 4, 1, 5, 4])  # a cycle 1 -> 3 -> 4 -> 1; node 6 alone
DAG = ([5, 0, 1, 2, 3, 2, 5, 6], [2, 1, 3, 3, 4, 4, 4, 1])


def graph(lib, edges, n):
    return lib.graph((torch.tensor(edges[0]), torch.tensor(edges[1])), num_nodes=n)


def python_bfs(edges, sources):
    out = collections.defaultdict(list)
    for u, v in zip(*edges):
        out[u].append(v)
    seen, frontier, levels = set(sources), list(sources), []
    while frontier:
        levels.append(frontier)
        nxt = []
        for u in frontier:
            for v in out[u]:
                if v not in seen:
                    seen.add(v)
                    nxt.append(v)
        frontier = nxt
    return levels


def test_bfs_frontiers():
    g = graph(topograph, EDGES, 7)
    for sources in ([0], [5, 0], [6]):
        got = [f.tolist() for f in topograph.bfs_nodes_generator(g, torch.tensor(sources))]
        assert got == python_bfs(EDGES, sources)
    reverse = python_bfs((EDGES[1], EDGES[0]), [4])
    assert [f.tolist() for f in topograph.bfs_nodes_generator(g, 4, reverse=True)] == reverse
    tree = topograph.bfs_edges_generator(g, 0)
    assert [len(t) for t in tree] == [2, 2, 1]  # one edge per node reached after the source
    with pytest.raises(topograph.DGLError, match="outside"):
        topograph.bfs_nodes_generator(g, 9)


def test_topological_frontiers():
    g = graph(topograph, DAG, 8)
    levels = [f.tolist() for f in topograph.topological_nodes_generator(g)]
    assert sorted(sum(levels, [])) == list(range(8))
    position = {x: i for i, level in enumerate(levels) for x in level}
    assert all(position[u] < position[v] for u, v in zip(*DAG))  # every edge goes forward
    assert levels[0] == [0, 5, 6, 7]  # the sources, by id
    with pytest.raises(topograph.DGLError, match="cycle"):
        topograph.topological_nodes_generator(graph(topograph, EDGES, 7))


def test_child_sum_up_a_tree_with_udfs():
    """The Tree-LSTM pattern: children -> parent edges, prop_nodes_topo with a mailbox reduce and an apply
    function; each node ends with 1 + the sum over its children, recursively (its subtree's size)."""
    parent = [-1, 0, 0, 1, 1, 1, 2, 6, 6]
    src = [c for c, p in enumerate(parent) if p >= 0]
    g = topograph.graph((torch.tensor(src), torch.tensor([parent[c] for c in src])), num_nodes=9)
    g.ndata["h"] = torch.zeros(9, 1)
    topograph.prop_nodes_topo(g, lambda edges: {"m": edges.src["h"]},
                              lambda nodes: {"h": nodes.mailbox["m"].sum(1)},
                              apply_node_func=lambda nodes: {"h": nodes.data["h"] + 1})

    def size(node):
        return 1 + sum(size(c) for c, p in enumerate(parent) if p == node)

    assert g.ndata["h"].view(-1).tolist() == [size(x) for x in range(9)]


def test_against_dgl():
    dgl = pytest.importorskip("dgl")
    for edges, n in ((EDGES, 7), (DAG, 8)):
        t, d = graph(topograph, edges, n), graph(dgl, edges, n)
        for f in ("bfs_nodes_generator", "bfs_edges_generator"):
            for args in ((0,), (torch.tensor([5, 0]),), (4, True)):
                assert [x.tolist() for x in getattr(topograph, f)(t, *args)] == \
                    [x.tolist() for x in getattr(dgl, f)(d, *args)]
    t, d = graph(topograph, DAG, 8), graph(dgl, DAG, 8)
    for reverse in (False, True):
        assert [x.tolist() for x in topograph.topological_nodes_generator(t, reverse)] == \
            [x.tolist() for x in dgl.topological_nodes_generator(d, reverse)]
    results = []
    for lib, g in ((topograph, t), (dgl, d)):
        fn, out = lib.function, []
        for run in (lambda: lib.prop_nodes_topo(g, fn.copy_u("x", "m"), fn.sum("m", "x"),
                                                apply_node_func=lambda nodes: {"x": nodes.data["x"] + 1}),
                    lambda: lib.prop_edges(g, lib.bfs_edges_generator(g, 5), fn.copy_u("x", "m"), fn.sum("m", "x"),
                                           apply_node_func=None),
                    lambda: lib.prop_nodes_bfs(g, 5, fn.copy_u("x", "m"),
                                               lambda nodes: {"x": nodes.mailbox["m"].max(1).values})):
            g.ndata["x"] = torch.arange(8.0).view(-1, 1) + 1
            run()
            out.append(g.ndata["x"].view(-1).tolist())
        results.append(out)
    assert results[0] == results[1]
