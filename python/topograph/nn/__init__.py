"""topograph.nn: as dgl.nn, the functional ops (topograph.nn.functional.edge_softmax) and the layers as
torch.nn.Modules: GraphMultiHeadAttention (Topograph's fused attention); DGL's convolutions GraphConv, SAGEConv,
GATConv, GINConv, SGConv and APPNPConv, and EdgeWeightNorm (conv.py); DGL's graph pooling SumPooling,
AvgPooling, MaxPooling, SortPooling, GlobalAttentionPooling and Set2Set (glob.py)."""
from . import functional
from .attention import GraphMultiHeadAttention
from .conv import APPNPConv, EdgeWeightNorm, GATConv, GINConv, GraphConv, SAGEConv, SGConv
from .glob import AvgPooling, GlobalAttentionPooling, MaxPooling, Set2Set, SortPooling, SumPooling

__all__ = ["functional", "GraphMultiHeadAttention", "GraphConv", "SAGEConv", "GATConv", "GINConv", "SGConv",
           "APPNPConv", "EdgeWeightNorm", "SumPooling", "AvgPooling", "MaxPooling", "SortPooling",
           "GlobalAttentionPooling", "Set2Set"]
