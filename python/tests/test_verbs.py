"""DGL's verbs on some edges and nodes (send_and_recv, pull, push, apply_nodes, apply_edges on ids, filter_nodes,
filter_edges) and the id queries edge_ids / has_nodes, against Python loops over the edge list (float64, torch's
autograd for the gradients): which rows are written, which keep their values, what UDFs see, and the errors.
tests/test_against_dgl.py runs the same calls through DGL 2.1."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build

TOL = dict(rtol=1e-4, atol=1e-4)  # float32 kernels against float64 references
FD = dict(eps=1e-2, atol=2e-2, rtol=2e-2, nondet_tol=0.0)  # float32 finite differences, as test_gradcheck.py
REDUCE = {"sum": lambda m: m.sum(0), "mean": lambda m: m.mean(0), "max": lambda m: m.amax(0),
          "min": lambda m: m.amin(0)}

pytestmark = pytest.mark.filterwarnings("ignore:Input #[0-9] requires gradient and is not a double")


def ref_receive(dst, eids, receivers, old, message, reduce):
    """`old` ([N, ...], float64) with each receiver's row replaced by `reduce` over message(e) for every listed edge
    e into it, once per listing (0 for a receiver with none): a loop over the edges."""
    rows = list(old)
    for v in receivers:
        msgs = [message(e) for e in eids if int(dst[e]) == v]
        rows[v] = REDUCE[reduce](torch.stack(msgs)) if msgs else torch.zeros_like(old[0])
    return torch.stack(rows)


def check_grads(out, ref, pairs):
    """Gradients of sum(out * w) and sum(ref * w) for one random w: each (float32 leaf, float64 leaf) pair agrees."""
    w = torch.randn(ref.shape, dtype=torch.float64)
    grads = torch.autograd.grad((out.double() * w).sum(), [a for a, _ in pairs], allow_unused=True)
    refs = torch.autograd.grad((ref * w).sum(), [b for _, b in pairs], allow_unused=True)
    for got, want, (a, _) in zip(grads, refs, pairs):
        got = torch.zeros_like(a) if got is None else got
        want = torch.zeros_like(a, dtype=torch.float64) if want is None else want
        torch.testing.assert_close(got.double(), want, **TOL)


def leaves(*shapes):
    xs = [torch.randn(s, requires_grad=True) for s in shapes]
    return xs, [x.detach().double().requires_grad_() for x in xs]


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_send_and_recv_writes_only_the_destinations_of_the_edges(graph_name, idtype, reduce):
    g, src, dst, n = build(graph_name, idtype)
    e = src.numel()
    (x, w, old), (rx, rw, rold) = leaves((n, 2, 3), (e, 2, 1), (n, 2, 3))
    g.ndata["x"], g.edata["w"], g.ndata["out"] = x, w, old
    eids = torch.tensor([e - 1, 0, 0, e // 2]) if e else torch.tensor([], dtype=torch.int64)  # edge 0 named twice
    g.send_and_recv(eids.to(idtype), fn.u_mul_e("x", "w", "m"), getattr(fn, reduce)("m", "out"))
    if e == 0:  # nothing to send: nothing runs
        assert g.ndata["out"] is old
        return
    receivers = sorted(set(dst[eids].tolist()))
    ref = ref_receive(dst, eids.tolist(), receivers, rold, lambda i: rx[src[i]] * rw[i], reduce)
    torch.testing.assert_close(g.ndata["out"].double(), ref.detach(), **TOL)
    check_grads(g.ndata["out"], ref, [(x, rx), (w, rw), (old, rold)])


def test_send_and_recv_by_pairs_and_all_and_into_a_new_feature():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    x = torch.randn(n, 4)
    g.ndata["x"] = x
    # (0, 1) is joined by edges 0 and 1: a pair names one edge, the lowest id (edge_ids)
    g.send_and_recv((torch.tensor([0, 3]), torch.tensor([1, 4])), fn.copy_u("x", "m"), fn.sum("m", "new"))
    want = torch.zeros(n, 4)
    want[1], want[4] = x[0], x[3]
    torch.testing.assert_close(g.ndata["new"], want)  # a new feature: 0 on the nodes that got nothing
    g.ndata["kept"] = torch.full((n, 4), 7.0)
    g.send_and_recv(topograph.ALL, fn.copy_u("x", "m"), fn.sum("m", "kept"))
    full = topograph.ops.copy_u_sum(g, x)
    has_in = g.in_degrees() > 0  # nodes without in-edges keep their rows (update_all would write 0 there)
    torch.testing.assert_close(g.ndata["kept"][has_in], full[has_in])
    assert (g.ndata["kept"][~has_in] == 7.0).all()
    g.send_and_recv(2, fn.copy_u("x", "m"), fn.max("m", "one"))  # one edge id, an int
    assert torch.equal(g.ndata["one"][2], x[1]) and g.ndata["one"].abs().sum() == x[1].abs().sum()


def test_messages_reading_destinations_and_edges_on_some_edges():
    g, src, dst, n = build("random", torch.int32)
    (q, k, b), (rq, rk, rb) = leaves((n, 2, 4), (n, 2, 4), (src.numel(), 2, 1))
    g.ndata["q"], g.ndata["k"], g.edata["b"] = q, k, b
    eids = torch.tensor([5, 3, 17, 3, 30, 8])
    g.send_and_recv(eids, fn.u_dot_v("k", "q", "s"), fn.mean("s", "o"))
    receivers = sorted(set(dst[eids].tolist()))
    ref = ref_receive(dst, eids.tolist(), receivers, torch.zeros(n, 2, 1, dtype=torch.float64),
                      lambda i: (rk[src[i]] * rq[dst[i]]).sum(-1, keepdim=True), "mean")
    torch.testing.assert_close(g.ndata["o"].double(), ref.detach(), **TOL)
    check_grads(g.ndata["o"], ref, [(q, rq), (k, rk)])
    g.send_and_recv(eids, fn.e_sub_v("b", "q", "d"), fn.min("d", "o2"))
    ref = ref_receive(dst, eids.tolist(), receivers, torch.zeros(n, 2, 4, dtype=torch.float64),
                      lambda i: rb[i] - rq[dst[i]], "min")
    torch.testing.assert_close(g.ndata["o2"].double(), ref.detach(), **TOL)
    check_grads(g.ndata["o2"], ref, [(q, rq), (b, rb)])


def test_udfs_see_only_the_edges_sent_and_the_graphs_own_ids(idtype):
    g, src, dst, n = build("multi_loop_isolated", idtype)
    x = torch.randn(n, 3)
    g.ndata["x"], g.edata["w"] = x, torch.arange(float(src.numel())).view(-1, 1)
    seen = {}

    def message(edges):
        seen["edges"] = [t.tolist() for t in edges.edges()]
        seen["dtypes"] = {t.dtype for t in edges.edges()}
        return {"m": edges.src["x"] * edges.data["w"] + edges.dst["x"]}

    def reduce(nodes):
        seen.setdefault("buckets", []).append((nodes.nodes().tolist(), tuple(nodes.mailbox["m"].shape)))
        return {"s": nodes.mailbox["m"].sum(1)}

    eids = [9, 4, 1, 0]  # into 3, 0, 1, 1
    g.send_and_recv(torch.tensor(eids), message, reduce)
    assert seen["edges"] == [src[eids].tolist(), dst[eids].tolist(), eids] and seen["dtypes"] == {idtype}
    assert sorted(seen["buckets"]) == [([0, 3], (2, 1, 3)), ([1], (1, 2, 3))]
    g.send_and_recv(torch.tensor(eids), fn.u_mul_e("x", "w", "m"), fn.sum("m", "b"))
    in_deg = torch.zeros(n).index_add(0, dst[eids], torch.ones(4)).view(-1, 1)
    torch.testing.assert_close(g.ndata["s"], g.ndata["b"] + x * in_deg)  # each message adds its destination's x


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min"])
def test_pull_reduces_all_in_edges_of_the_nodes_named_once(idtype, reduce):
    g, src, dst, n = build("multi_loop_isolated", idtype)
    (x, old), (rx, rold) = leaves((n, 3), (n, 3))
    g.ndata["x"], g.ndata["h"] = x, old
    v = [5, 1, 0, 1]  # node 5 has no in-edges; node 1 is named twice and counted once
    g.pull(torch.tensor(v, dtype=idtype), fn.copy_u("x", "m"), getattr(fn, reduce)("m", "h"))
    ref = ref_receive(dst, range(src.numel()), sorted(set(v)), rold, lambda i: rx[src[i]], reduce)
    torch.testing.assert_close(g.ndata["h"].double(), ref.detach(), **TOL)
    assert (g.ndata["h"][5] == 0).all()  # 0 under max / min too (DGL's documented rule)
    check_grads(g.ndata["h"], ref, [(x, rx), (old, rold)])


def test_push_sends_along_the_out_edges_of_the_nodes_named_once():
    g, src, dst, n = build("random", torch.int64)
    x = torch.randn(n, 2)
    g.ndata["x"] = x
    g.push([3, 3, 1], fn.copy_u("x", "m"), fn.sum("m", "p"))
    eids = [i for i in range(src.numel()) if int(src[i]) in (1, 3)]
    ref = ref_receive(dst, eids, sorted(set(dst[eids].tolist())), torch.zeros(n, 2, dtype=torch.float64),
                      lambda i: x[src[i]].double(), "sum")
    torch.testing.assert_close(g.ndata["p"].double(), ref, **TOL)


def test_apply_node_func_runs_on_the_receivers_and_its_output_is_what_is_stored():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    x = torch.randn(n, 2)
    g.ndata["x"] = x
    seen = []

    def apply(nodes):
        seen.append(nodes.nodes().tolist())
        return {"y": nodes.data["r"] * 2 + nodes.data["x"]}  # the reduce's output and the node's own feature

    g.pull([4, 5], fn.copy_u("x", "m"), fn.sum("m", "r"), apply)
    assert seen == [[4, 5]] and "r" not in g.ndata  # as DGL: what apply returns replaces the reduce's output
    sums = topograph.ops.copy_u_sum(g, x)
    want = torch.zeros(n, 2)
    want[[4, 5]] = sums[[4, 5]] * 2 + x[[4, 5]]
    torch.testing.assert_close(g.ndata["y"], want)
    g.update_all(fn.copy_u("x", "m"), fn.sum("m", "r"), lambda nodes: {"z": nodes.data["r"] + 1})
    assert "r" not in g.ndata
    torch.testing.assert_close(g.ndata["z"], sums + 1)
    g.send_and_recv(topograph.ALL, fn.copy_u("x", "m"), fn.sum("m", "r"), apply)  # every node with an in-edge
    has_in = (g.in_degrees() > 0).nonzero().flatten().tolist()
    assert seen[-1] == has_in and 5 not in has_in
    want[has_in] = sums[has_in] * 2 + x[has_in]
    torch.testing.assert_close(g.ndata["y"], want)


def test_nothing_to_send_runs_nothing():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    g.ndata["x"] = torch.randn(n, 2)
    calls = []

    def apply(nodes):
        calls.append(1)
        return {"y": nodes.data["x"]}

    g.send_and_recv([], fn.copy_u("x", "m"), fn.sum("m", "s"), apply)
    g.pull(torch.tensor([], dtype=torch.int64), fn.copy_u("x", "m"), fn.sum("m", "s"), apply)
    g.push(5, fn.copy_u("x", "m"), fn.sum("m", "s"), apply)  # node 5 has no out-edges
    edgeless, *_ = build("no_edges", torch.int64)
    edgeless.ndata["x"] = torch.randn(4, 2)
    edgeless.send_and_recv(topograph.ALL, fn.copy_u("x", "m"), fn.sum("m", "s"))
    edgeless.send_and_recv(topograph.ALL, fn.copy_u("x", "m"), fn.sum("m", "s"), apply)
    assert not calls and set(g.ndata) == {"x"} and set(edgeless.ndata) == {"x"}
    g.pull(5, fn.copy_u("x", "m"), lambda nodes: {"u": nodes.mailbox["m"].sum(1)})  # a UDF reduce never runs
    assert set(g.ndata) == {"x"}
    g.pull(5, fn.copy_u("x", "m"), fn.max("m", "b"))  # a built-in gives the node 0
    assert g.ndata["b"].abs().sum() == 0


def test_apply_nodes_on_every_node_or_some_in_the_order_given(idtype):
    g, src, dst, n = build("random", idtype)
    (x,), (rx,) = leaves((n, 3))
    g.ndata["x"] = x
    order = []

    def double(nodes):
        order.append(nodes.nodes().tolist())
        return {"y": nodes.data["x"] * 2}

    g.apply_nodes(double)
    torch.testing.assert_close(g.ndata["y"], x * 2)
    g.apply_nodes(double, v=torch.tensor([7, 2, 11], dtype=idtype))
    assert order == [list(range(n)), [7, 2, 11]]
    g.apply_nodes(lambda nodes: {"z": nodes.data["x"] + 1}, v=[3, 0])
    want = torch.zeros(n, 3, dtype=torch.float64)
    want[[3, 0]] = rx[[3, 0]] + 1
    torch.testing.assert_close(g.ndata["z"].double(), want.detach())
    check_grads(g.ndata["z"], want, [(x, rx)])


def test_apply_edges_on_some_edges_keeps_the_others():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    x = torch.randn(n, 2)
    g.ndata["x"], g.edata["s"] = x, torch.full((src.numel(), 2), -1.0)
    g.apply_edges(fn.u_sub_v("x", "x", "s"), edges=torch.tensor([6, 2]))
    want = torch.full((src.numel(), 2), -1.0)
    want[[6, 2]] = x[src[[6, 2]]] - x[dst[[6, 2]]]
    torch.testing.assert_close(g.edata["s"], want)
    g.apply_edges(lambda edges: {"id": edges.edges()[2].view(-1, 1).float()}, edges=([4, 3], [4, 1]))  # pairs
    assert g.edata["id"].flatten().tolist() == [0, 0, 0, 0, 0, 0, 6, 0, 8, 0]


def test_filter_nodes_and_edges_as_python_filters(idtype):
    g, src, dst, n = build("random", idtype)
    x = torch.randn(n)
    g.ndata["x"] = x
    got = g.filter_nodes(lambda nodes: nodes.data["x"] > 0)
    assert got.dtype == idtype and got.tolist() == [i for i in range(n) if x[i] > 0]
    some = [9, 0, 4, 13]
    assert g.filter_nodes(lambda nodes: nodes.data["x"] > 0, nodes=some).tolist() == [i for i in some if x[i] > 0]
    up = [i for i in range(src.numel()) if x[src[i]] < x[dst[i]]]
    assert g.filter_edges(lambda edges: edges.src["x"] < edges.dst["x"]).tolist() == up
    some = [30, 2, 17, 5]
    assert g.filter_edges(lambda edges: edges.src["x"] < edges.dst["x"], edges=some).tolist() == \
        [i for i in some if i in up]


def test_edge_ids_against_a_search_of_the_edge_list(graph_name, idtype):
    g, src, dst, n = build(graph_name, idtype)
    pairs = sorted(set(zip(src.tolist(), dst.tolist())))
    if not pairs:
        assert g.edge_ids([], []).numel() == 0
        return
    u, v = torch.tensor([p[0] for p in pairs], dtype=idtype), torch.tensor([p[1] for p in pairs], dtype=idtype)
    lowest = [min(i for i in range(src.numel()) if (src[i], dst[i]) == p) for p in pairs]
    got = g.edge_ids(u, v)
    assert got.dtype == idtype and got.tolist() == lowest
    assert g.edge_ids(*pairs[0]) == lowest[0] and isinstance(g.edge_ids(*pairs[0]), int)
    eu, ev, eid = g.edge_ids(u, v, return_uv=True)
    every = [(a, b, i) for a, b in pairs for i in range(src.numel()) if (src[i], dst[i]) == (a, b)]
    assert list(zip(eu.tolist(), ev.tolist(), eid.tolist())) == every and eid.dtype == idtype
    first_dst = [i for i in range(src.numel()) if src[i] == pairs[0][0]]
    assert g.edge_ids(pairs[0][0], dst[first_dst]).tolist() == \
        [min(i for i in first_dst if dst[i] == dst[j]) for j in first_dst]  # one source against many


def test_has_nodes():
    g = topograph.heterograph({("user", "plays", "game"): ([0, 1], [1, 1])}, num_nodes_dict={"user": 3, "game": 2})
    assert g.has_nodes(2, "user") is True and g.has_nodes(2, "game") is False
    assert g.has_nodes(torch.tensor([0, 5, 1]), ntype="game").tolist() == [True, False, True]
    assert g.has_nodes([1], "user").tolist() == [True]


def hetero():
    return topograph.heterograph({("user", "follows", "user"): ([0, 1, 2], [1, 2, 1]),
                                  ("user", "plays", "game"): ([0, 1, 2, 2], [0, 0, 1, 0])},
                                 num_nodes_dict={"user": 3, "game": 3})


def test_verbs_on_a_relation_of_a_heterograph_and_on_a_block():
    g = hetero()
    xu = torch.randn(3, 2)
    g.nodes["user"].data["x"] = xu
    g.send_and_recv([3, 0], fn.copy_u("x", "m"), fn.sum("m", "s"), etype="plays")  # 2 -> 0, 0 -> 0
    assert torch.equal(g.nodes["game"].data["s"], torch.stack([xu[2] + xu[0], torch.zeros(2), torch.zeros(2)]))
    g.pull([1, 2], fn.copy_u("x", "m"), fn.max("m", "p"), etype=("user", "plays", "game"))
    assert torch.equal(g.nodes["game"].data["p"][1], xu[2]) and (g.nodes["game"].data["p"][2] == 0).all()
    g.apply_edges(lambda edges: {"d": edges.src["x"][:, :1]}, edges=[2], etype="follows")
    assert g.edges["follows"].data["d"].flatten().tolist() == [0.0, 0.0, xu[2, 0].item()]
    assert g.edge_ids(2, 1, etype="plays") == 2
    # a block: its destinations' rows (dstdata) are written from its sources' (srcdata)
    plain, src, dst, n = build("random", torch.int64)
    block = topograph.to_block(plain)
    x = torch.randn(block.num_src_nodes(), 3)
    block.srcdata["x"] = x
    picked = torch.tensor([0, 2, 4])
    block.pull(picked, fn.copy_u("x", "m"), fn.sum("m", "h"))
    want = torch.zeros(block.num_dst_nodes(), 3)
    want[picked] = topograph.ops.copy_u_sum(block, x)[picked]
    torch.testing.assert_close(block.dstdata["h"], want)
    assert "h" not in block.srcdata


def test_finite_differences_of_the_verbs():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    eids = torch.tensor([7, 0, 3, 3, 9])

    def udfs(x, w, old):  # UDFs only: plain torch ops, so float64
        with g.local_scope():
            g.ndata["x"], g.edata["w"], g.ndata["h"] = x, w, old
            g.send_and_recv(eids, lambda edges: {"m": edges.src["x"] * edges.data["w"]},
                            lambda nodes: {"h": nodes.mailbox["m"].prod(1)})
            g.pull([0, 5], lambda edges: {"m": edges.dst["h"] - edges.src["x"]},
                   lambda nodes: {"p": nodes.mailbox["m"].amax(1)})
            g.apply_nodes(lambda nodes: {"p": nodes.data["p"].tanh()}, v=[0])
            return torch.cat([g.ndata["h"], g.ndata["p"]])

    double = [torch.randn(n, 2, dtype=torch.float64, requires_grad=True),
              torch.randn(src.numel(), 1, dtype=torch.float64, requires_grad=True),
              torch.randn(n, 2, dtype=torch.float64, requires_grad=True)]
    assert torch.autograd.gradcheck(udfs, double)

    def builtins(x, w):  # Topograph's kernels: float32
        with g.local_scope():
            g.ndata["x"], g.edata["w"] = x, w
            g.send_and_recv(eids, fn.u_mul_e("x", "w", "m"), fn.sum("m", "h"))
            g.pull([1, 4], fn.u_dot_v("x", "x", "m"), fn.mean("m", "dot"))
            return torch.cat([g.ndata["h"], g.ndata["dot"]], 1)

    assert torch.autograd.gradcheck(builtins, (torch.randn(n, 3, requires_grad=True),
                                               torch.randn(src.numel(), 1, requires_grad=True)), **FD)


def test_verb_errors_name_the_id_the_feature_or_the_argument():
    g, src, dst, n = build("multi_loop_isolated", torch.int64)
    g.ndata["x"], g.ndata["wide"] = torch.randn(n, 2), torch.randn(n, 5)
    msg, red = fn.copy_u("x", "m"), fn.sum("m", "s")
    assert issubclass(topograph.DGLError, ValueError)
    with pytest.raises(topograph.DGLError, match=r"send_and_recv: edge id 10 out of range \[0, 10\)"):
        g.send_and_recv([0, 10], msg, red)
    with pytest.raises(topograph.DGLError, match=r"send_and_recv: \(1, 0\) is not an edge"):
        g.send_and_recv(([0, 1], [1, 0]), msg, red)
    with pytest.raises(topograph.DGLError, match=r"pull: v node id 6 out of range \[0, 6\)"):
        g.pull([6], msg, red)
    with pytest.raises(topograph.DGLError, match=r"push: u node id -1 out of range"):
        g.push(-1, msg, red)
    with pytest.raises(topograph.DGLError, match=r"feature 'wide' has torch.float32 rows of shape \(5,\)"):
        g.send_and_recv([0], msg, fn.sum("m", "wide"))
    with pytest.raises(topograph.DGLError, match=r"apply_nodes: v node id 9"):
        g.apply_nodes(lambda nodes: {"y": nodes.data["x"]}, v=[9])
    with pytest.raises(topograph.DGLError, match=r"filter_nodes: the predicate must return a bool tensor of shape"):
        g.filter_nodes(lambda nodes: nodes.data["x"][:, 0])
    with pytest.raises(topograph.DGLError, match=r"filter_edges: edge id 12"):
        g.filter_edges(lambda edges: edges.src["x"][:, 0] > 0, edges=[12])
    with pytest.raises(topograph.DGLError, match=r"edge_ids: \(2, 1\) is not an edge of \('_N', '_E', '_N'\)"):
        g.edge_ids(torch.tensor([0, 2]), torch.tensor([1, 1]))
    with pytest.raises(topograph.DGLError, match=r"edge_ids: destination node id 7"):
        g.edge_ids(0, 7)
    with pytest.raises(topograph.DGLError, match="3 source ids but 2 destination ids"):
        g.edge_ids([0, 1, 2], [1, 2])
    with pytest.raises(topograph.DGLError, match="node id -2 is negative"):
        g.has_nodes([0, -2])
    with pytest.raises(KeyError, match="no feature 'nope'"):
        g.send_and_recv([0], fn.copy_u("nope", "m"), red)
    with pytest.raises(topograph.DGLError, match="name one"):
        hetero().send_and_recv([0], msg, red)  # two relations: etype= is needed
    with pytest.raises(TypeError, match="integers"):
        g.has_nodes(torch.tensor([0.5]))
    with pytest.raises(topograph.DGLError, match=r"node id 8 out of range"):  # the existing queries raise it too
        g.in_degrees(torch.tensor([8]))

