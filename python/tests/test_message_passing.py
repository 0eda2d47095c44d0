"""ndata / edata, update_all and apply_edges with dgl.function's built-ins, lowered onto the ops: each result
equals the op (or the gsddmm -> gspmm pair) DGL would run, and gradients reach the stored features."""
import pytest
import torch

import topograph
import topograph.function as fn
from conftest import build, ref_gsddmm, ref_gspmm


@pytest.fixture
def g():
    graph, *_ = build("multi_loop_isolated", torch.int64)
    return graph


def test_update_all_lowers_to_one_gspmm(g):
    x, w = torch.randn(g.num_nodes(), 2, 3), torch.randn(g.num_edges(), 2, 1)
    g.ndata["h"], g.edata["w"] = x, w
    g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
    torch.testing.assert_close(g.ndata["s"], topograph.ops.copy_u_sum(g, x))
    g.update_all(fn.u_mul_e("h", "w", "m"), fn.max("m", "mx"))  # 0 without in-edges (DGL's update_all)
    torch.testing.assert_close(g.ndata["mx"], topograph.ops.gspmm_zero_empty(g, "mul", "max", x, w))
    assert g.ndata["mx"][5].abs().sum() == 0 and g.in_degrees(5) == 0
    g.update_all(fn.e_mul_u("w", "h", "m"), fn.mean("m", "mean"))  # commutative: swapped onto u_mul_e
    torch.testing.assert_close(g.ndata["mean"], topograph.ops.u_mul_e_mean(g, x, w))
    g.update_all(fn.copy_e("w", "m"), fn.min("m", "wmin"))
    torch.testing.assert_close(g.ndata["wmin"], topograph.ops.gspmm_zero_empty(g, "copy_rhs", "min", None, w))


def test_messages_that_read_the_destination_or_dot_go_through_gsddmm():
    graph, src, dst, n = build("random", torch.int32)
    q, k = torch.randn(n, 2, 4), torch.randn(n, 2, 4)
    graph.ndata["q"], graph.ndata["k"] = q, k
    graph.update_all(fn.u_dot_v("k", "q", "s"), fn.sum("s", "out"))
    want = ref_gspmm(src.long(), dst.long(), n, "copy_rhs", "sum", None,
                     ref_gsddmm(src.long(), dst.long(), "dot", k.double(), q.double(), "u", "v"))
    torch.testing.assert_close(graph.ndata["out"].double(), want, rtol=1e-4, atol=1e-4)
    graph.update_all(fn.copy_v("q", "m"), fn.sum("m", "vq"))  # each destination gets its own q, in-degree times
    deg = graph.in_degrees().to(torch.float32).view(-1, 1, 1)
    torch.testing.assert_close(graph.ndata["vq"], q * deg)


def test_apply_edges_and_gradients_through_stored_features(g):
    x = torch.randn(g.num_nodes(), 3, requires_grad=True)
    y = torch.randn(g.num_nodes(), 3, requires_grad=True)
    g.ndata["x"], g.ndata["y"] = x, y
    g.apply_edges(fn.u_add_v("x", "y", "e"))
    torch.testing.assert_close(g.edata["e"], topograph.ops.u_add_v(g, x, y))
    g.edata["a"] = topograph.nn.functional.edge_softmax(g, g.edata["e"])
    g.update_all(fn.u_mul_e("x", "a", "m"), fn.sum("m", "h"))
    g.ndata["h"].sum().backward()
    assert x.grad is not None and y.grad is not None and x.grad.shape == x.shape


def test_local_scope_drops_new_features_and_restores_replaced_ones(g):
    x = torch.randn(g.num_nodes(), 2)
    g.ndata["h"] = x
    with g.local_scope():
        g.ndata["h"] = x * 2
        g.ndata["tmp"] = x
        g.update_all(fn.copy_u("h", "m"), fn.sum("m", "s"))
    assert set(g.ndata) == {"h"} and g.ndata["h"] is x


def test_bipartite_src_and_dst_data():
    hg = topograph.heterograph({("user", "plays", "game"): ([0, 1, 2, 2], [0, 0, 1, 2])})
    hg.srcdata["h"] = torch.ones(3, 2)
    hg.update_all(fn.copy_u("h", "m"), fn.sum("m", "n"))
    assert hg.dstdata["n"][:, 0].tolist() == [2.0, 1.0, 1.0]
    # two node types: ndata is DGL's HeteroNodeDataView, {ntype: tensor} over the types holding the feature
    assert sorted(hg.ndata["h"]) == ["user"] and sorted(hg.ndata["n"]) == ["game"]
    hg.ndata["x"] = {"game": torch.zeros(3), "user": torch.ones(3)}
    assert hg.nodes["user"].data["x"].tolist() == [1.0] * 3 and sorted(hg.ndata) == ["h", "n", "x"]
    del hg.ndata["x"]
    assert hg.ndata["x"] == {} and "x" not in hg.nodes["game"].data
    with pytest.raises(ValueError, match="several node types"):
        hg.ndata["y"] = torch.ones(3)  # which type's?
    with pytest.raises(ValueError, match="no node type 'item'"):
        hg.ndata["y"] = {"item": torch.ones(3)}


def test_message_passing_errors(g):
    with pytest.raises(ValueError, match=r"expected a tensor of 6 rows, got \(5, 2\)"):
        g.ndata["h"] = torch.ones(5, 2)
    with pytest.raises(topograph.DGLError, match="expected a tensor of"):  # DGL's error type, as DGL raises
        g.edata["w"] = torch.ones(1)
    with pytest.raises(KeyError, match="no feature 'nope'"):
        g.update_all(fn.copy_u("nope", "m"), fn.sum("m", "h"))
    g.ndata["h"] = torch.ones(6, 2)
    with pytest.raises(ValueError, match="reads message 'x'"):
        g.update_all(fn.copy_u("h", "m"), fn.sum("x", "h"))
    with pytest.raises(TypeError, match="must return a dict"):
        g.update_all(lambda edges: edges.src["h"], fn.sum("m", "h"))
    hg = topograph.heterograph({("a", "r", "a"): ([0], [1]), ("a", "s", "a"): ([1], [0])})
    with pytest.raises(topograph.DGLError, match="built-in message and reduce functions only"):  # as DGL 2.1
        hg.update_all(lambda edges: {"m": edges.src["h"]}, fn.sum("m", "h"))


def hetero():
    """user <-follows- user, user <-played- game, game <-plays- user; user 0 has no follows in-edge, user 1 no
    played in-edge, game 0 no in-edge at all."""
    return topograph.heterograph({("user", "follows", "user"): ([0, 1, 1], [1, 2, 2]),
                                  ("game", "played", "user"): ([0, 1, 1], [0, 2, 0]),
                                  ("user", "plays", "game"): ([0, 2], [1, 1])})


@pytest.mark.parametrize("cross", ["sum", "mean", "max", "min", "stack"])
def test_multi_update_all_combines_relations_as_dgl(cross):
    g = hetero()
    hu = torch.randn(3, 2, requires_grad=True)
    hg = torch.randn(2, 2, requires_grad=True)
    g.nodes["user"].data["h"], g.nodes["game"].data["h"] = hu, hg
    g.multi_update_all({"follows": (fn.copy_u("h", "m"), fn.sum("m", "o")),
                        "played": (fn.copy_u("h", "m"), fn.max("m", "o")),
                        "plays": (fn.copy_u("h", "m"), fn.mean("m", "o"))}, cross)
    follows = ref_gspmm(torch.tensor([0, 1, 1]), torch.tensor([1, 2, 2]), 3, "copy_lhs", "sum", hu, None)
    played = ref_gspmm(torch.tensor([0, 1, 1]), torch.tensor([0, 2, 0]), 3, "copy_lhs", "max", hg, None)  # user 1: -inf
    parts = [played, follows]  # the graph's relation order: ('game', 'played', 'user') first
    expect = {"sum": lambda: parts[0] + parts[1], "mean": lambda: (parts[0] + parts[1]) / 2,
              "max": lambda: torch.maximum(*parts), "min": lambda: torch.minimum(*parts),
              "stack": lambda: torch.stack(parts, 1)}[cross]()
    expect = expect.masked_fill(expect.isinf(), 0.0)  # DGL: infinities left after the combination become 0
    user = g.nodes["user"].data["o"]
    torch.testing.assert_close(user, expect)
    # one relation into game: its result as it is (stack: a relation axis of 1)
    game = ref_gspmm(torch.tensor([0, 2]), torch.tensor([1, 1]), 2, "copy_lhs", "mean", hu, None)
    torch.testing.assert_close(g.nodes["game"].data["o"], game.unsqueeze(1) if cross == "stack" else game)
    # gradients reach both types' features, as through the reference
    (user.sum() + g.nodes["game"].data["o"].sum()).backward()
    got = hu.grad.clone(), hg.grad.clone()
    hu.grad = hg.grad = None
    (expect.sum() + game.sum()).backward()
    torch.testing.assert_close(got[0], hu.grad)
    torch.testing.assert_close(got[1], hg.grad)
    assert "m" not in g.nodes["user"].data and "o" not in g.edges["follows"].data  # no per-relation leftovers


def test_multi_update_all_apply_functions_and_errors():
    g = hetero()
    g.nodes["user"].data["h"], g.nodes["game"].data["h"] = torch.ones(3, 1), torch.ones(2, 1)
    g.multi_update_all({"follows": (fn.copy_u("h", "m"), fn.sum("m", "o"), lambda nodes: {"o": nodes.data["o"] + 10}),
                        "plays": (fn.copy_u("h", "m"), fn.sum("m", "o"))}, "sum",
                       lambda nodes: {"twice": 2 * nodes.data["o"]})
    assert g.nodes["user"].data["o"].flatten().tolist() == [10, 11, 12]  # per relation, before the combination
    assert g.nodes["game"].data["twice"].flatten().tolist() == [0, 4]     # after it, on every type that received
    with pytest.raises(ValueError, match="cross_reducer"):
        g.multi_update_all({"follows": (fn.copy_u("h", "m"), fn.sum("m", "o"))}, "prod")
    with pytest.raises(ValueError, match="expected \\(message_func, reduce_func\\)"):
        g.multi_update_all({"follows": fn.copy_u("h", "m")}, "sum")
    with pytest.raises(Exception, match="likes"):
        g.multi_update_all({"likes": (fn.copy_u("h", "m"), fn.sum("m", "o"))}, "sum")


def test_relation_subgraphs_share_the_graphs_features():
    g = hetero()
    g.nodes["user"].data["h"] = torch.randn(3, 2)
    g.edges["follows"].data["w"] = torch.randn(3, 1)
    follows = g["follows"]
    assert torch.equal(follows.ndata["h"] if follows.ntypes == ["user"] else follows.nodes["user"].data["h"],
                       g.nodes["user"].data["h"])
    follows.update_all(fn.u_mul_e("h", "w", "m"), fn.sum("m", "s"))  # DGL's g[etype].update_all idiom
    torch.testing.assert_close(g.nodes["user"].data["s"],
                               topograph.ops.u_mul_e_sum(follows, g.nodes["user"].data["h"], g.edges["follows"].data["w"]))
    sub = topograph.edge_type_subgraph(g, ["plays", "follows"])
    sub.edges["plays"].data["x"] = torch.ones(2, 1)
    assert "x" in g.edges["plays"].data and "w" in sub.edges["follows"].data
