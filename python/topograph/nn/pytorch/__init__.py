"""dgl.nn.pytorch, DGL's backend path to the same layers (scripts write `import dgl.nn.pytorch as dglnn` or
`from dgl.nn.pytorch.conv import SAGEConv`): topograph.nn's names, edge_softmax, and DGL's submodules conv, glob,
hetero, gt, softmax, link, explain, network_emb, sparse_emb, factory and utils over topograph.nn's modules."""
from .. import *  # noqa: F401,F403 (every layer of topograph.nn)
from .. import __all__ as _layers
from . import conv, explain, factory, glob, gt, hetero, link, network_emb, softmax, sparse_emb, utils
from .softmax import edge_softmax

__all__ = list(_layers) + ["conv", "glob", "gt", "hetero", "softmax", "link", "explain", "network_emb",
                           "sparse_emb", "factory", "utils", "edge_softmax"]
