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
