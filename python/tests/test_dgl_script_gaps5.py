"""What a fifth round of DGL-style scripts (dgl.sampling random walks, structure transforms, heterograph self
loops, dgl.function broadcasting, more conv layers, dgl.sparse chains, save / load, subgraphs and reordering,
heterograph batches, readouts, link-prediction and full-neighbour data loading) found unlike DGL 2.1. Each case
states DGL 2.1's behaviour, checked with the real DGL 2.1.0; where dgl imports, the comparison is also run."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

DGLError = topograph.DGLError


# --- dgl.sampling.random_walk
def test_random_walk_types_follow_the_graphs_idtype():
    # DGL 2.1 returns the node-type ids in the graph's idtype, as the traces
    g = topograph.graph((torch.tensor([0, 1]), torch.tensor([1, 0]))).int()
    traces, types = topograph.sampling.random_walk(g, torch.tensor([0], dtype=torch.int32), length=2)
    assert traces.dtype == torch.int32 and types.dtype == torch.int32
    traces, eids, types = topograph.sampling.random_walk(g.long(), [0], length=2, return_eids=True)
    assert types.dtype == torch.int64 and eids.dtype == torch.int64


def test_random_walk_scalar_restart_prob_of_one_is_an_error():
    # DGL 2.1 checks a float restart_prob in [0, 1): 1.0 would end every walk before its first step
    g = topograph.graph((torch.tensor([0, 1]), torch.tensor([1, 0])))
    with pytest.raises(DGLError, match="restart_prob"):
        topograph.sampling.random_walk(g, [0], length=2, restart_prob=1.0)
    traces, _ = topograph.sampling.random_walk(g, [0], length=2, restart_prob=0.0)
    assert traces.tolist() == [[0, 1, 0]]
