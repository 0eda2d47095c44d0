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
    return lib.graph((torch.tensor(edges[0], dtype=torch.int64), torch.tensor(edges[1], dtype=torch.int64)),
                     num_nodes=n)


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


# --- depth-first traversal (dfs_edges_generator, dfs_labeled_edges_generator, prop_edges_dfs)
FORWARD, REVERSE, NONTREE = 0, 1, 2
DFS_EXAMPLE = ([0, 1, 1, 2, 2, 3], [1, 2, 3, 3, 4, 5])  # DGL's docstring graph: 2 - 4 over 0 - 1 - 3 - 5


def python_dfs(edges, source, reverse=False, has_reverse_edge=False, has_nontree_edge=False):
    """(edge id, label) in recursive DFS order: each node's edges by edge id; a tree edge is FORWARD on the way
    down and REVERSE on the way back, an edge to a node already seen NONTREE; nothing for a source without
    edges (DGL's rule)."""
    out = collections.defaultdict(list)
    for e, (u, v) in enumerate(zip(*edges)):
        out[v if reverse else u].append((u if reverse else v, e))
    trace, seen = [], {source}

    def visit(u):
        for v, e in out[u]:
            if v in seen:
                if has_nontree_edge:
                    trace.append((e, NONTREE))
                continue
            seen.add(v)
            trace.append((e, FORWARD))
            visit(v)
            if has_reverse_edge:
                trace.append((e, REVERSE))

    if out[source]:
        visit(source)
    return trace


def merged(traces):
    """Frontier k: the k-th step of every trace that long, in source order."""
    return [[t[k] for t in traces if k < len(t)] for k in range(max(map(len, traces), default=0))]


def labelled(result):
    edges, labels = result
    assert len(edges) == len(labels) and all(e.shape == x.shape for e, x in zip(edges, labels))
    return [list(zip(e.tolist(), x.tolist())) for e, x in zip(edges, labels)]


DFS_OPTIONS = [(r, hr, hn) for r in (False, True) for hr in (False, True) for hn in (False, True)]


def test_dfs_against_recursive_reference(graph_name, idtype):
    from conftest import build

    g, src, dst, n = build(graph_name, idtype)
    edges = (src.tolist(), dst.tolist())
    for sources in ([0], [n - 1], list(range(n))[::2][:3]):
        for reverse, has_reverse, has_nontree in DFS_OPTIONS:
            want = merged([python_dfs(edges, s, reverse, has_reverse, has_nontree) for s in sources])
            got = topograph.dfs_labeled_edges_generator(g, torch.tensor(sources), reverse, has_reverse, has_nontree)
            assert isinstance(got, tuple) and isinstance(got[0], tuple) and labelled(got) == want
            assert all(e.dtype == idtype for e in got[0]) and all(x.dtype == torch.int64 for x in got[1])
            only = topograph.dfs_labeled_edges_generator(g, sources, reverse, has_reverse, has_nontree,
                                                         return_labels=False)
            assert [e.tolist() for e in only] == [[e for e, _ in step] for step in want]
        tree = topograph.dfs_edges_generator(g, sources)
        assert [e.tolist() for e in tree] == [[e for e, _ in step] for step in merged(
            [python_dfs(edges, s) for s in sources])]
        assert all(e.dtype == idtype for e in tree)


def test_dfs_docstring_example_and_edge_cases():
    g = graph(topograph, DFS_EXAMPLE, 6)
    assert [e.tolist() for e in topograph.dfs_edges_generator(g, 0)] == [[0], [1], [3], [5], [4]]
    assert labelled(topograph.dfs_labeled_edges_generator(g, 0, has_nontree_edge=True)) == \
        [[(0, 0)], [(1, 0)], [(3, 0)], [(5, 0)], [(4, 0)], [(2, 2)]]
    # every tree edge comes back as REVERSE after its subtree: 5 is a leaf, so 3 -> 5 returns at once
    assert labelled(topograph.dfs_labeled_edges_generator(g, 0, has_reverse_edge=True))[:6] == \
        [[(0, 0)], [(1, 0)], [(3, 0)], [(5, 0)], [(5, 1)], [(3, 1)]]
    assert topograph.dfs_edges_generator(g, 5) == ()  # no out-edges: nothing, as DGL's
    assert topograph.dfs_labeled_edges_generator(g, 5) == ((), ())
    assert [e.tolist() for e in topograph.dfs_edges_generator(g, 5, reverse=True)] == [[5], [2], [0], [3]]
    # two sources walk apart (each its own visited set): the shorter trace drops out of later frontiers
    assert [e.tolist() for e in topograph.dfs_edges_generator(g, [2, 0])] == [[3, 0], [5, 1], [4, 3], [5], [4]]
    loop = topograph.graph(([0, 0, 0], [0, 1, 1]))  # a self loop and a multi-edge are NONTREE when met again
    assert labelled(topograph.dfs_labeled_edges_generator(loop, 0, has_nontree_edge=True)) == \
        [[(0, 2)], [(1, 0)], [(2, 2)]]
    for bad in (6, -1, [0, 7]):
        with pytest.raises(topograph.DGLError, match="outside"):
            topograph.dfs_edges_generator(g, bad)
    hetero = topograph.heterograph({("a", "r", "b"): ([0], [0]), ("b", "s", "a"): ([0], [0])})
    with pytest.raises(topograph.DGLError, match="one relation"):
        topograph.dfs_labeled_edges_generator(hetero, 0)


def test_prop_edges_dfs_against_reference():
    """copy_u / sum along each frontier in turn: one edge per frontier with one source, so node v takes u's
    value as the walk crosses u -> v (twice for a tree edge with has_reverse_edge); apply_node_func adds 1."""
    fn = topograph.function
    for source, reverse, has_reverse, has_nontree in [(0, False, False, False), (0, False, True, True),
                                                      (4, True, True, False), ([0, 6], False, False, True)]:
        g = graph(topograph, EDGES, 7)
        g.ndata["x"] = torch.arange(7.0).view(-1, 1) + 1
        topograph.prop_edges_dfs(g, source, fn.copy_u("x", "m"), fn.sum("m", "x"), reverse, has_reverse,
                                 has_nontree, apply_node_func=lambda nodes: {"x": nodes.data["x"] + 1})
        x = [float(i + 1) for i in range(7)]
        sources = source if isinstance(source, list) else [source]
        for step in merged([python_dfs(EDGES, s, reverse, has_reverse, has_nontree) for s in sources]):
            sums = collections.defaultdict(float)
            for e, _ in step:
                u, v = EDGES[0][e], EDGES[1][e]
                sums[v] += x[u]  # messages run along the edge, whichever way the walk went
            for node, total in sums.items():
                x[node] = total + 1
        assert g.ndata["x"].view(-1).tolist() == x


def test_dfs_against_dgl():
    dgl = pytest.importorskip("dgl")
    gen = torch.Generator().manual_seed(5)
    cases = [(EDGES, 7), (DAG, 8), (DFS_EXAMPLE, 6)]
    for _ in range(12):  # small random multigraphs with self loops and isolated nodes
        n = int(torch.randint(2, 9, (1,), generator=gen))
        m = int(torch.randint(0, 16, (1,), generator=gen))
        cases.append(((torch.randint(0, n, (m,), generator=gen).tolist(),
                       torch.randint(0, n, (m,), generator=gen).tolist()), n + 1))
    for edges, n in cases:
        t, d = graph(topograph, edges, n), graph(dgl, edges, n)
        for sources in ([0], [n - 1, 1], [1, 0, 1]):
            assert [e.tolist() for e in topograph.dfs_edges_generator(t, sources)] == \
                [e.tolist() for e in dgl.dfs_edges_generator(d, sources)]
            for options in DFS_OPTIONS:
                assert labelled(topograph.dfs_labeled_edges_generator(t, sources, *options)) == \
                    labelled(dgl.dfs_labeled_edges_generator(d, sources, *options))
    results = []
    for lib in (topograph, dgl):
        g, out = graph(lib, EDGES, 7), []
        for options in DFS_OPTIONS:
            g.ndata["x"] = torch.arange(7.0).view(-1, 1) + 1
            lib.prop_edges_dfs(g, [0, 6], lib.function.copy_u("x", "m"), lib.function.sum("m", "x"), *options,
                               apply_node_func=lambda nodes: {"x": nodes.data["x"] * 2})
            out.append(g.ndata["x"].view(-1).tolist())
        results.append(out)
    assert results[0] == results[1]
