"""What a sixth round of DGL-style scripts (heterograph mutation with features, k-hop and in/out subgraphs,
dgl.sampling with prob / exclude_edges / fan-out dicts, select_topk, ...) found unlike DGL 2.1. Each case states
DGL 2.1's behaviour, checked with the real DGL 2.1.0."""
import topograph  # before torch: then both OpenMP pools wait briefly (topograph/__init__.py)

import pytest
import torch

DGLError = topograph.DGLError


# --- dgl.sampling.sample_neighbors
def test_a_fanout_dict_missing_a_relation_is_a_dgl_error():
    # DGL 2.1: DGLError "Fan-out must be specified for each edge type if a dict is provided."
    g = topograph.heterograph({("u", "f", "u"): ([0, 1], [1, 1]), ("g", "r", "u"): ([0], [1])})
    with pytest.raises(DGLError, match=r"fanout names no value for \[\('g', 'r', 'u'\)\]"):
        topograph.sampling.sample_neighbors(g, {"u": [1]}, {"f": 1})
    # a bad value is the same kind of mistake; DGL 2.1 aborts the process on fanout=-2
    with pytest.raises(DGLError, match="fanout must be >= -1"):
        topograph.sampling.sample_neighbors(g, {"u": [1]}, -2)
    with pytest.raises(topograph.DGLTypeError, match=r"fanout\['f'\] must be an int"):
        topograph.sampling.sample_neighbors(g, {"u": [1]}, {"f": 1.5, "r": 1})
