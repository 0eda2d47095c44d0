"""dgl.data.tree, the module DGL's TreeLSTM example imports SSTDataset from (`from dgl.data.tree import
SSTDataset`): the names of sst.py."""
from .sst import SST, SSTDataset

__all__ = ["SST", "SSTDataset"]
