"""topograph.nn, as dgl.nn: the functional ops (topograph.nn.functional.edge_softmax) and the layers as
torch.nn.Modules, a file per family:
  conv.py            GraphConv, SAGEConv, GATConv, GINConv, GINEConv, SGConv, APPNPConv, EdgeWeightNorm
  gatv2.py           GATv2Conv
  attention_conv.py  DotGatConv, AGNNConv, EGATConv, EdgeGATConv, HGTConv
  attention.py       GraphMultiHeadAttention (Topograph's fused attention)
  conv_extra.py      TAGConv, ChebConv, EdgeConv, GatedGraphConv, NNConv, GCN2Conv, GMMConv
  edge_feature_conv  GatedGCNConv, EGNNConv, CFConv (ShiftedSoftplus)
  dense_conv.py      DenseGraphConv, DenseSAGEConv, DenseChebConv
  pna.py             PNAConv
  conv_more.py       DGNConv, AtomicConv, TWIRLSConv, TWIRLSUnfoldingAndAttention, GroupRevRes
  relgraph.py        RelGraphConv, TypedLinear
  hetero.py          HeteroGraphConv, HeteroLinear, HeteroEmbedding
  glob.py            SumPooling, AvgPooling, MaxPooling, SortPooling, GlobalAttentionPooling, Set2Set, WeightAndSum
  set_transformer.py SetTransformerEncoder, SetTransformerDecoder (the attention as a graph)
  graph_transformer  DegreeEncoder, SpatialEncoder(3d), PathEncoder, LapPosEncoder, BiasedMHA, GraphormerLayer,
                     EGTLayer (dense over padded batches, as DGL's)
  link.py            EdgePredictor, TransE, TransR
  utils.py           Sequential, JumpingKnowledge, LabelPropagation, WeightBasis
  explain.py         GNNExplainer, HeteroGNNExplainer
  pgexplainer.py     PGExplainer, HeteroPGExplainer
  subgraphx.py       SubgraphX, HeteroSubgraphX
  sparse_emb.py      NodeEmbedding (for topograph.optim's sparse optimisers)
  network_emb.py     DeepWalk, MetaPath2Vec
  factory.py         KNNGraph, SegmentedKNNGraph, RadiusGraph
"""
from . import functional
from .attention import GraphMultiHeadAttention
from .conv import APPNPConv, EdgeWeightNorm, GATConv, GINConv, GINEConv, GraphConv, SAGEConv, SGConv
from .attention_conv import AGNNConv, DotGatConv, EdgeGATConv, EGATConv, HGTConv
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
from .explain import GNNExplainer, HeteroGNNExplainer
from .pgexplainer import HeteroPGExplainer, PGExplainer
from .subgraphx import HeteroSubgraphX, SubgraphX
from .factory import KNNGraph, RadiusGraph, SegmentedKNNGraph
from .network_emb import DeepWalk, MetaPath2Vec
from .pna import PNAConv
from .conv_more import AtomicConv, DGNConv, GroupRevRes, TWIRLSConv, TWIRLSUnfoldingAndAttention
from .sparse_emb import NodeEmbedding
from .utils import JumpingKnowledge, LabelPropagation, Sequential, WeightBasis

__all__ = ["functional", "GraphMultiHeadAttention", "GraphConv", "SAGEConv", "GATConv", "GATv2Conv", "GINConv",
           "GINEConv", "SGConv", "APPNPConv", "EdgeWeightNorm", "TAGConv", "ChebConv", "EdgeConv", "GatedGraphConv",
           "NNConv", "GCN2Conv", "DotGatConv", "AGNNConv", "EGATConv", "EdgeGATConv", "HGTConv", "RelGraphConv",
           "TypedLinear",
           "HeteroGraphConv", "HeteroLinear", "HeteroEmbedding", "GMMConv",
           "Sequential", "EdgePredictor", "JumpingKnowledge", "LabelPropagation", "WeightBasis", "TransE", "TransR",
           "DenseGraphConv", "DenseSAGEConv", "DenseChebConv", "PNAConv", "GNNExplainer", "HeteroGNNExplainer",
           "NodeEmbedding",
           "PGExplainer", "HeteroPGExplainer", "SubgraphX", "HeteroSubgraphX",
           "GatedGCNConv", "EGNNConv", "CFConv", "ShiftedSoftplus", "DeepWalk", "MetaPath2Vec", "KNNGraph",
           "SegmentedKNNGraph", "RadiusGraph",
           "SumPooling", "AvgPooling", "MaxPooling", "SortPooling", "GlobalAttentionPooling", "Set2Set", "WeightAndSum",
           "SetTransformerEncoder", "SetTransformerDecoder", "DegreeEncoder", "SpatialEncoder", "SpatialEncoder3d",
           "PathEncoder", "LapPosEncoder", "BiasedMHA", "GraphormerLayer", "EGTLayer", "DGNConv", "AtomicConv",
           "TWIRLSConv", "TWIRLSUnfoldingAndAttention", "GroupRevRes"]
