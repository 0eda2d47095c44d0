"""topograph.readout (dgl.readout) against plain PyTorch per graph: each graph of the batch, as it was before
topograph.batch, has its own rows reduced with torch's own sum / mean / amax / amin / softmax / topk,
a graph without nodes (edges) giving 0. Batches hold empty graphs, single nodes and graphs with no edges;
features are [N], [N, D] and [N, H, D]; gradients are checked by torch.autograd.gradcheck in float64 (the
readouts are torch ops, so double works), and max / min's by where DGL sends them (the first maximum)."""
import pytest
import torch

import topograph
from topograph.ops import segment_reduce, segment_softmax

# (num_nodes, src, dst) per graph: empty graphs first, last and in the middle; a graph with nodes but no edges
GRAPH_SPECS = [(0, [], []), (3, [0, 1, 2, 2], [1, 2, 0, 2]), (1, [0], [0]), (0, [], []), (4, [], []),
               (5, [0, 0, 3, 4, 1], [1, 1, 2, 2, 4]), (2, [1], [0]), (0, [], [])]
ROW_SHAPES = [(), (3,), (2, 3)]
OPS = ["sum", "mean", "max", "min"]


def make_batch(specs, row_shape, dtype=torch.float64, seed=0):
    gen = torch.Generator().manual_seed(seed)
    graphs = []
    for n, u, v in specs:
        g = topograph.graph((torch.tensor(u, dtype=torch.int64), torch.tensor(v, dtype=torch.int64)), num_nodes=n)
        g.ndata["h"] = torch.randn((n,) + row_shape, generator=gen, dtype=dtype)
        g.ndata["w"] = torch.rand((n,) + (1,) * len(row_shape), generator=gen, dtype=dtype) + 0.5
        g.edata["e"] = torch.randn((len(u),) + row_shape, generator=gen, dtype=dtype)
        g.edata["w"] = torch.rand((len(u),) + (1,) * len(row_shape), generator=gen, dtype=dtype) + 0.5
        graphs.append(g)
    return topograph.batch(graphs), graphs


def reference(x, op):
    """One graph's readout of x [n, *] by torch's own reduction; 0 for n = 0 (DGL's rule)."""
    if x.shape[0] == 0:
        return torch.zeros(x.shape[1:], dtype=x.dtype)
    return {"sum": lambda: x.sum(0), "mean": lambda: x.mean(0), "max": lambda: x.amax(0),
            "min": lambda: x.amin(0)}[op]()


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("row_shape", ROW_SHAPES, ids=str)
@pytest.mark.parametrize("weighted", [False, True], ids=["plain", "weighted"])
def test_readout_nodes_and_edges_per_graph(op, row_shape, weighted):
    bg, graphs = make_batch(GRAPH_SPECS, row_shape)
    w = "w" if weighted else None
    want_nodes = torch.stack([reference(g.ndata["h"] * (g.ndata["w"] if weighted else 1), op) for g in graphs])
    want_edges = torch.stack([reference(g.edata["e"] * (g.edata["w"] if weighted else 1), op) for g in graphs])
    got_nodes = topograph.readout_nodes(bg, "h", w, op=op)
    got_edges = topograph.readout_edges(bg, "e", w, op=op)
    assert got_nodes.shape == (len(graphs),) + row_shape
    torch.testing.assert_close(got_nodes, want_nodes)
    torch.testing.assert_close(got_edges, want_edges)
    shorthand = {"sum": topograph.sum_nodes, "mean": topograph.mean_nodes, "max": topograph.max_nodes}.get(op)
    if shorthand is not None:  # DGL has no min_nodes
        torch.testing.assert_close(shorthand(bg, "h", w), want_nodes)
        edge_shorthand = getattr(topograph, f"{op}_edges")
        torch.testing.assert_close(edge_shorthand(bg, "e", w), want_edges)


def test_an_unbatched_graph_is_a_batch_of_one_and_the_readout_module_is_dgls():
    _, graphs = make_batch(GRAPH_SPECS, (3,))
    g = graphs[5]
    for op in OPS:
        torch.testing.assert_close(topograph.readout.readout_nodes(g, "h", op=op), reference(g.ndata["h"], op)[None])
    assert topograph.sum_nodes(graphs[0], "h").shape == (1, 3)  # no nodes: one row of 0
    assert torch.equal(topograph.max_nodes(graphs[0], "h"), torch.zeros(1, 3, dtype=torch.float64))
    assert set(topograph.readout.__all__) <= set(topograph.__all__)
    assert not hasattr(topograph, "min_nodes")  # as DGL 2.1: min only through op='min'


def test_every_graph_empty_and_a_single_node():
    bg, _ = make_batch([(0, [], []), (0, [], [])], (2,))
    x = bg.ndata["h"].clone().requires_grad_()
    bg.ndata["h"] = x
    for op in OPS:
        out = topograph.readout_nodes(bg, "h", op=op)
        assert torch.equal(out, torch.zeros(2, 2, dtype=torch.float64))
        out.sum().backward()  # stays differentiable though nothing flows
    one, _ = make_batch([(1, [], [])], (2,))
    for op in OPS:
        torch.testing.assert_close(topograph.readout_nodes(one, "h", op=op), one.ndata["h"])


@pytest.mark.parametrize("op", OPS)
def test_readout_gradcheck_float64(op):
    bg, _ = make_batch(GRAPH_SPECS, (2, 3))
    x, w = bg.ndata["h"].clone().requires_grad_(), bg.ndata["w"].clone().requires_grad_()

    def run(x, w):
        with bg.local_scope():
            bg.ndata["h"], bg.ndata["w"] = x, w
            return topograph.readout_nodes(bg, "h", "w", op=op)

    assert torch.autograd.gradcheck(run, (x, w))


@pytest.mark.parametrize("op,first_rows", [("max", [0, 0]), ("min", [1, 1])])
def test_max_and_min_send_the_gradient_to_the_first_extreme_as_dgl(op, first_rows):
    # column 0 ties: max 2.0 at rows 0 and 2 (min 1.0 at rows 1 and 2); column 1: max 5.0 at row 0, min 0.0 at
    # rows 1 and 2. torch's amax / amin would share the gradient among the tied rows; DGL gives it to the first.
    x = torch.tensor([[2.0, 5.0], [1.0, 0.0], [2.0 if op == "max" else 1.0, 0.0]], requires_grad=True)
    g = topograph.graph(([0], [1]), num_nodes=3)
    g.ndata["h"] = x
    topograph.readout_nodes(g, "h", op=op).sum().backward()
    want = torch.zeros(3, 2)
    for column, row in enumerate(first_rows):
        want[row, column] = 1.0
    assert torch.equal(x.grad, want)


def test_softmax_nodes_and_edges_per_graph_and_gradcheck():
    bg, graphs = make_batch(GRAPH_SPECS, (2, 3))
    want = torch.cat([torch.softmax(g.ndata["h"], 0) for g in graphs])
    torch.testing.assert_close(topograph.softmax_nodes(bg, "h"), want)
    want_e = torch.cat([torch.softmax(g.edata["e"], 0) for g in graphs])
    torch.testing.assert_close(topograph.softmax_edges(bg, "e"), want_e)
    x = bg.ndata["h"].clone().requires_grad_()

    def run(x):
        with bg.local_scope():
            bg.ndata["h"] = x
            return topograph.softmax_nodes(bg, "h")

    assert torch.autograd.gradcheck(run, (x,))
    big = torch.tensor([[1000.0], [1001.0]], dtype=torch.float64)  # shifted by the max: no overflow
    torch.testing.assert_close(segment_softmax([2], big), torch.softmax(big, 0))


def test_broadcast_nodes_and_edges():
    bg, graphs = make_batch(GRAPH_SPECS, (3,))
    feat = torch.randn(len(graphs), 2, 3, dtype=torch.float64, requires_grad=True)
    out = topograph.broadcast_nodes(bg, feat)
    want = torch.cat([feat[b].expand(g.num_nodes(), 2, 3) for b, g in enumerate(graphs)])
    torch.testing.assert_close(out, want)
    torch.testing.assert_close(topograph.broadcast_edges(bg, feat),
                               torch.cat([feat[b].expand(g.num_edges(), 2, 3) for b, g in enumerate(graphs)]))
    assert torch.autograd.gradcheck(lambda f: topograph.broadcast_nodes(bg, f), (feat,))
    # the normalisation idiom of DGL's docs: h / broadcast(sum(h)) sums to 1 per graph
    normed = bg.ndata["h"].abs() / topograph.broadcast_nodes(bg, topograph.sum_nodes(bg, "h").abs() + 0)
    g = graphs[5]
    torch.testing.assert_close(normed[8:13], g.ndata["h"].abs() / g.ndata["h"].sum(0).abs())
    with pytest.warns(UserWarning, match=r"\[1, \*\]"):  # DGL's deprecated [*] for a single graph
        single = topograph.broadcast_nodes(g, feat[0, 0])
    torch.testing.assert_close(single, feat[0, 0].expand(5, 3))
    with pytest.raises(ValueError, match="one row per graph"):
        topograph.broadcast_nodes(bg, feat[:3])


def reference_topk(x, k, descending, sortby):
    """One graph's topk_nodes by torch.topk on its own rows, padded with zero rows to k."""
    n, d = x.shape
    out = torch.zeros(k, d, dtype=x.dtype)
    take = min(k, n)
    if sortby is None:
        out[:take] = torch.topk(x, take, dim=0, largest=descending).values
        return out, None
    order = torch.topk(x[:, sortby], take, largest=descending).indices
    out[:take] = x[order]
    return out, order


@pytest.mark.parametrize("k", [1, 3, 6])
@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("sortby", [None, 0, -1])
def test_topk_nodes_per_graph(k, descending, sortby):
    bg, graphs = make_batch(GRAPH_SPECS, (4,))
    values, order = topograph.topk_nodes(bg, "h", k, descending=descending, sortby=sortby)
    assert values.shape == (len(graphs), k, 4)
    assert order.shape == ((len(graphs), k) if sortby is not None else (len(graphs), k, 4))
    for b, g in enumerate(graphs):
        want, want_order = reference_topk(g.ndata["h"], k, descending, sortby)
        torch.testing.assert_close(values[b], want)
        take = min(k, g.num_nodes())
        if sortby is not None:
            assert order[b, :take].tolist() == want_order.tolist()  # positions within the graph
        else:
            picked = torch.gather(g.ndata["h"], 0, order[b, :take]) if take else values[b, :0]
            torch.testing.assert_close(picked, values[b, :take])
    edge_values, _ = topograph.topk_edges(bg, "e", k, descending=descending, sortby=sortby)
    for b, g in enumerate(graphs):
        torch.testing.assert_close(edge_values[b], reference_topk(g.edata["e"], k, descending, sortby)[0])


def test_topk_gradcheck_and_integers():
    bg, _ = make_batch(GRAPH_SPECS, (3,))
    x = bg.ndata["h"].clone().requires_grad_()

    def run(x, sortby):
        with bg.local_scope():
            bg.ndata["h"] = x
            return topograph.topk_nodes(bg, "h", 3, sortby=sortby)[0]

    assert torch.autograd.gradcheck(lambda x: run(x, 1), (x,))
    assert torch.autograd.gradcheck(lambda x: run(x, None), (x,))
    g = topograph.graph(([0], [1]), num_nodes=3)
    g.ndata["i"] = torch.tensor([[3, -7], [9, 1], [-2, 4]])
    values, order = topograph.topk_nodes(g, "i", 4, sortby=0, descending=False)
    assert values[0].tolist() == [[-2, 4], [3, -7], [9, 1], [0, 0]] and order[0, :3].tolist() == [2, 0, 1]


def test_segment_ops_as_dgl_ops():
    value = torch.arange(10.0).view(5, 2)
    torch.testing.assert_close(segment_reduce(torch.tensor([2, 0, 3]), value, "max"),
                               torch.tensor([[2.0, 3.0], [0.0, 0.0], [8.0, 9.0]]))
    torch.testing.assert_close(segment_reduce([2, 0, 3], value, "mean"),
                               torch.tensor([[1.0, 2.0], [0.0, 0.0], [6.0, 7.0]]))
    torch.testing.assert_close(segment_softmax([1, 0, 4], torch.ones(5, 1)), torch.tensor([[1.0]] + [[0.25]] * 4))
    ints = segment_reduce([2, 1], torch.tensor([[1], [5], [-3]]), "sum")
    assert ints.dtype == torch.int64 and ints.flatten().tolist() == [6, -3]
    with pytest.raises(ValueError, match="add up to 4, but the value has 5 rows"):
        segment_reduce([2, 2], value)  # DGL 2.1 returns garbage here
    with pytest.raises(ValueError, match="reducer"):
        segment_reduce([5], value, "prod")


def test_readout_errors_name_what_is_wrong():
    bg, _ = make_batch(GRAPH_SPECS, (3,))
    with pytest.raises(KeyError, match="readout_nodes: .*no feature 'nope'"):
        topograph.sum_nodes(bg, "nope")
    with pytest.raises(KeyError, match="no feature 'nope'"):
        topograph.mean_nodes(bg, "h", "nope")
    with pytest.raises(KeyError, match="readout_edges: .*no feature 'h'"):
        topograph.sum_edges(bg, "h")
    with pytest.raises(ValueError, match="op must be one of"):
        topograph.readout_nodes(bg, "h", op="median")
    with pytest.raises(TypeError):  # op, ntype, etype are keyword-only, as DGL's
        topograph.readout_nodes(bg, "h", None, "max")
    bg.ndata["w1"] = torch.ones(bg.num_nodes(), dtype=torch.float64)  # [N] against [N, 3]: rows would not align
    with pytest.raises(ValueError, match="weight 'w1' .* as many dims as feature 'h'"):
        topograph.sum_nodes(bg, "h", "w1")
    bg.ndata["w2"] = torch.ones(bg.num_nodes(), 2, dtype=torch.float64)
    with pytest.raises(ValueError, match="does not broadcast"):
        topograph.sum_nodes(bg, "h", "w2")
    with pytest.raises(ValueError, match="must be \\[N, D\\]"):
        topograph.topk_nodes(bg, "w1", 2)
    with pytest.raises(ValueError, match="sortby"):
        topograph.topk_nodes(bg, "h", 2, sortby=3)
    with pytest.raises(ValueError, match="k must be"):
        topograph.topk_nodes(bg, "h", -1)
    with pytest.raises(TypeError, match="topograph graph"):
        topograph.sum_nodes("g", "h")
    hg = topograph.heterograph({("a", "r", "b"): ([0], [1]), ("b", "s", "a"): ([1], [0])})
    hg.nodes["a"].data["x"] = torch.ones(1, 2)
    with pytest.raises(ValueError, match="node types \\['a', 'b'\\]: name one"):
        topograph.sum_nodes(hg, "x")
    torch.testing.assert_close(topograph.sum_nodes(hg, "x", ntype="a"), torch.ones(1, 2))
    hg.edges["r"].data["y"] = torch.full((1, 1), 3.0)
    with pytest.raises(ValueError, match="relations .* name one"):
        topograph.sum_edges(hg, "y")
    torch.testing.assert_close(topograph.max_edges(hg, "y", etype="r"), torch.full((1, 1), 3.0))
