"""topograph.nn: as dgl.nn, the functional ops (topograph.nn.functional.edge_softmax) and the layers as
torch.nn.Modules: GraphMultiHeadAttention (Topograph's fused attention); DGL's convolutions GraphConv, SAGEConv,
GATConv, GINConv, GINEConv, SGConv and APPNPConv, and EdgeWeightNorm (conv.py); GATv2Conv (gatv2.py); DotGatConv,
AGNNConv, EGATConv and HGTConv (attention_conv.py); TAGConv, ChebConv, EdgeConv, GatedGraphConv, NNConv, GCN2Conv
and GMMConv (conv_extra.py); RelGraphConv and TypedLinear (relgraph.py); HeteroGraphConv, a module per relation
of a heterograph, HeteroLinear and HeteroEmbedding (hetero.py); Sequential, JumpingKnowledge and LabelPropagation
(utils.py); EdgePredictor, TransE and TransR (link.py); DenseGraphConv, DenseSAGEConv and DenseChebConv
(dense_conv.py); GatedGCNConv, EGNNConv and CFConv (edge_feature_conv.py); PNAConv (pna.py); GNNExplainer
(explain.py); NodeEmbedding (sparse_emb.py, for topograph.optim's sparse optimisers); DeepWalk
(network_emb.py);
DGL's graph pooling SumPooling, AvgPooling, MaxPooling, SortPooling, GlobalAttentionPooling, Set2Set and WeightAndSum
(glob.py), SetTransformerEncoder and SetTransformerDecoder (set_transformer.py: the attention as a graph); the graph
transformer blocks DegreeEncoder, SpatialEncoder(3d), PathEncoder, LapPosEncoder, BiasedMHA, GraphormerLayer and
EGTLayer (graph_transformer.py: dense over padded batches, as DGL's)."""
from . import functional
from .attention import GraphMultiHeadAttention
from .conv import APPNPConv, EdgeWeightNorm, GATConv, GINConv, GINEConv, GraphConv, SAGEConv, SGConv
from .attention_conv import AGNNConv, DotGatConv, EGATConv, HGTConv
from .conv_extra import ChebConv, EdgeConv, GatedGraphConv, GCN2Conv, GMMConv, NNConv, TAGConv
from .gatv2 import GATv2Conv
from .graph_transformer import (BiasedMHA, DegreeEncoder, EGTLayer, GraphormerLayer, LapPosEncoder, PathEncoder,
                                SpatialEncoder, SpatialEncoder3d)
from .glob import AvgPooling, GlobalAttentionPooling, MaxPooling, Set2Set, SortPooling, SumPooling, WeightAndSum
from .hetero import HeteroEmbedding, HeteroGraphConv, HeteroLinear
from .relgraph import RelGraphConv, TypedLinear
from .set_transformer import SetTransformerDecoder, SetTransformerEncoder
from .dense_conv import DenseChebConv, DenseGraphConv, DenseSAGEConv
from .link import EdgePredictor, TransE, TransR
from .edge_feature_conv import CFConv, EGNNConv, GatedGCNConv, ShiftedSoftplus
from .explain import GNNExplainer
from .network_emb import DeepWalk
from .pna import PNAConv
from .sparse_emb import NodeEmbedding
from .utils import JumpingKnowledge, LabelPropagation, Sequential

__all__ = ["functional", "GraphMultiHeadAttention", "GraphConv", "SAGEConv", "GATConv", "GATv2Conv", "GINConv",
           "GINEConv", "SGConv", "APPNPConv", "EdgeWeightNorm", "TAGConv", "ChebConv", "EdgeConv", "GatedGraphConv",
           "NNConv", "GCN2Conv", "DotGatConv", "AGNNConv", "EGATConv", "HGTConv", "RelGraphConv", "TypedLinear",
           "HeteroGraphConv", "HeteroLinear", "HeteroEmbedding", "GMMConv",
           "Sequential", "EdgePredictor", "JumpingKnowledge", "LabelPropagation", "TransE", "TransR",
           "DenseGraphConv", "DenseSAGEConv", "DenseChebConv", "PNAConv", "GNNExplainer", "NodeEmbedding",
           "GatedGCNConv", "EGNNConv", "CFConv", "ShiftedSoftplus", "DeepWalk",
           "SumPooling", "AvgPooling", "MaxPooling", "SortPooling", "GlobalAttentionPooling", "Set2Set", "WeightAndSum",
           "SetTransformerEncoder", "SetTransformerDecoder", "DegreeEncoder", "SpatialEncoder", "SpatialEncoder3d",
           "PathEncoder", "LapPosEncoder", "BiasedMHA", "GraphormerLayer", "EGTLayer"]
