"""The topology builders against edge lists written out in the test, and a Star-Transformer topology from them."""
import pytest
import torch

import topograph
from topograph import builders


def pairs(edges):
    u, v = edges
    return sorted(zip(u.tolist(), v.tolist()))


def test_ring_window_full_and_self_loops():
    assert pairs(builders.ring(4)) == sorted([(3, 0), (1, 0), (0, 1), (2, 1), (1, 2), (3, 2), (2, 3), (0, 3)])
    assert pairs(builders.ring(4, closed=False)) == sorted([(1, 0), (0, 1), (2, 1), (1, 2), (3, 2), (2, 3)])
    assert pairs(builders.window(4, 3)) == sorted(
        [(j, i) for i in range(4) for j in range(4) if abs(i - j) <= 1])
    assert pairs(builders.full(3)) == sorted([(j, i) for i in range(3) for j in range(3)])
    assert pairs(builders.self_loops(3)) == [(0, 0), (1, 1), (2, 2)]
    u, v = builders.ring([2, 3], idtype=torch.int32)
    assert u.dtype == torch.int32
    # the second graph's nodes follow the first's: 2, 3, 4
    assert pairs((u, v)) == sorted([(1, 0), (0, 1), (3, 2), (4, 2), (2, 3), (4, 3), (3, 4), (2, 4)])
    assert pairs(builders.window([3, 5], [1, 3]))[:3] == [(0, 0), (1, 1), (2, 2)]


def test_star_transformer_topology_from_builders():
    lens = [3, 5]
    g = topograph.heterograph({("sat", "ring", "sat"): builders.ring(lens),
                               ("sat", "to_relay", "relay"): builders.to_one(lens),
                               ("relay", "from_relay", "sat"): builders.from_one(lens)},
                              num_nodes_dict={"sat": sum(lens), "relay": len(lens)})
    assert g.in_degrees(etype="to_relay").tolist() == lens
    assert g.in_degrees(etype="from_relay").tolist() == [1] * sum(lens)
    assert pairs(builders.to_one(lens)) == sorted([(i, 0) for i in range(3)] + [(i, 1) for i in range(3, 8)])
    # satellites attend over ring neighbours and their relay with one softmax
    sat = topograph.edge_type_subgraph(g, ["ring", "from_relay"])
    out = topograph.ops.sparse_attention(sat, torch.randn(8, 2, 4), {"sat": torch.randn(8, 2, 4),
                                         "relay": torch.randn(2, 2, 4)}, {"sat": torch.randn(8, 2, 4),
                                         "relay": torch.randn(2, 2, 4)})
    assert out.shape == (8, 2, 4)


def test_builder_errors():
    with pytest.raises(ValueError):
        builders.window(4, 2)  # even width
    with pytest.raises(ValueError):
        builders.ring([3, -1])
    with pytest.raises(TypeError):
        builders.full(3, idtype=torch.float32)


def brute(lengths, sees):
    """Every (j, i) with sees(n, i, j) inside each graph of `lengths`, numbered as a disjoint union."""
    out, first = [], 0
    for n in lengths:
        out += [(first + j, first + i) for i in range(n) for j in range(n) if sees(n, i, j)]
        first += n
    return sorted(out)


@pytest.mark.parametrize("idtype", [torch.int32, torch.int64])
def test_topology_file_builders_against_their_definitions(idtype):
    lens = [1, 2, 7, 12]
    for dilation, reach in [(1, 1), (2, 2), (3, 5)]:
        edges = builders.dilated(lens, dilation, reach, idtype=idtype)
        assert edges[0].dtype == idtype
        assert pairs(edges) == brute(lens, lambda n, i, j: i != j and abs(i - j) % dilation == 0
                                     and abs(i - j) // dilation <= reach)
    for size in [1, 3, 20]:
        assert pairs(builders.block(lens, size, idtype=idtype)) == brute(lens, lambda n, i, j: i // size == j // size)
    assert pairs(builders.global_tokens(lens, [0, 5], idtype=idtype)) == brute(
        lens, lambda n, i, j: i in (0, 5) or j in (0, 5))


def test_random_keys_are_distinct_fixed_by_seed_and_within_the_graph():
    lens = [3, 10, 10]
    u, v = builders.random(lens, 4, seed=11)
    assert pairs((u, v)) == pairs(builders.random(lens, 4, seed=11))      # reproducible
    assert pairs((u, v)) != pairs(builders.random(lens, 4, seed=12))      # the seed matters
    first = [0, 3, 13]
    for b, n in enumerate(lens):
        for i in range(first[b], first[b] + n):
            src = u[v == i].tolist()
            assert len(src) == min(4, n) and len(set(src)) == len(src)
            assert all(first[b] <= s < first[b] + n for s in src)
    # the draw depends on the graph's length and the node, not on its place in the batch
    u2, v2 = builders.random([10], 4, seed=11)
    assert pairs((u2 + 3, v2 + 3)) == sorted(p for p in pairs((u, v)) if 3 <= p[1] < 13)


def test_bigbird_pattern_from_builders_attends():
    lens = [6, 9]
    n = sum(lens)
    g = topograph.heterograph({("tok", "local", "tok"): builders.window(lens, 3),
                               ("tok", "global", "tok"): builders.global_tokens(lens, [0]),
                               ("tok", "rand", "tok"): builders.random(lens, 2, seed=7)},
                              num_nodes_dict={"tok": n})
    assert g.num_edges(etype="global") == sum(2 * k - 1 for k in lens)  # node 0 reads all k, the others read 0
    x = torch.randn(n, 2, 4, requires_grad=True)
    out = topograph.ops.sparse_attention(topograph.edge_type_subgraph(g, ["local", "global", "rand"]), x, x, x)
    out.sum().backward()
    assert out.shape == (n, 2, 4) and torch.isfinite(x.grad).all()


def test_topology_file_builder_errors_name_the_function_and_field():
    with pytest.raises(ValueError, match=r"builders\.dilated: dilation: must be >= 1"):
        builders.dilated(5, 0, 1)
    with pytest.raises(ValueError, match=r"builders\.block: size"):
        builders.block(5, 0)
    with pytest.raises(ValueError, match=r"builders\.random: per_node"):
        builders.random(5, 0)
    with pytest.raises(ValueError, match=r"builders\.global_tokens: positions\[0\]"):
        builders.global_tokens(5, [-1])
    with pytest.raises(ValueError, match="expected an integer"):
        builders.dilated(5, 1.5, 1)
    with pytest.raises(ValueError, match="negative"):
        builders.block([3, -1], 2)
    with pytest.raises(TypeError):
        builders.random(5, 2, idtype=torch.float64)
    # lengths no ids or memory can hold fail at once (int32: before any edge is made; it generated them all
    # first), where a length of 2^40 grew its edge lists for minutes before
    with pytest.raises(ValueError, match="do not fit int32 ids"):
        builders.block([2**31], 2, idtype=torch.int32)
    with pytest.raises(ValueError, match="overflow int64"):
        builders.block([2**62, 2**62], 2)
    with pytest.raises(MemoryError):
        builders.dilated([2**40], 1, 1)
