"""What a fourth round of DGL-style scripts (hetero RGCN with HeteroGraphConv / HeteroLinear / HeteroEmbedding,
batch / unbatch and every readout, GAT variants with attention, GraphSAGE and link prediction on blocks, graph
transforms, local_scope and UDF message passing, save / load, the errors users hit, conv layers, heterograph
operations, datasets and dgl.transforms) needed: HeteroEmbedding.weight as a property, NodeBatch.ntype, and a
DGLError for g.nodes[unknown type].data (it read as an empty frame). Checked against DGL 2.1 where dgl imports
(those cases skip otherwise)."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)
import topograph.function as fn

import pytest
import torch

DGLError = topograph.DGLError


# --- HeteroEmbedding.weight
def test_hetero_embedding_weight_is_a_property():
    emb = topograph.nn.HeteroEmbedding({"user": 3, ("user", "buys", "item"): 2}, 4)
    tables = emb.weight  # DGL's scripts read emb.weight[ntype], no call
    assert sorted(map(str, tables)) == sorted(["user", str(("user", "buys", "item"))])
    assert tables["user"] is emb.embeds["user"].weight and tables[("user", "buys", "item")].shape == (2, 4)


def test_hetero_embedding_weight_matches_dgl():
    dgl = pytest.importorskip("dgl")
    ours, theirs = topograph.nn.HeteroEmbedding({"a": 3, "b": 2}, 4), dgl.nn.HeteroEmbedding({"a": 3, "b": 2}, 4)
    assert {k: tuple(v.shape) for k, v in ours.weight.items()} == {k: tuple(v.shape) for k, v in theirs.weight.items()}
