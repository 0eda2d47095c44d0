"""dgl.nn.pytorch.conv: the graph convolutions of topograph.nn (conv.py, conv_extra.py, attention_conv.py, gatv2.py,
relgraph.py, conv_more.py)."""
from ..conv import APPNPConv, EdgeWeightNorm, GATConv, GINConv, GINEConv, GraphConv, SAGEConv, SGConv  # noqa: F401
from ..attention_conv import AGNNConv, DotGatConv, EdgeGATConv, EGATConv, HGTConv  # noqa: F401
from ..conv_extra import ChebConv, EdgeConv, GatedGraphConv, GCN2Conv, GMMConv, NNConv, TAGConv  # noqa: F401
from ..gatv2 import GATv2Conv  # noqa: F401
from ..relgraph import RelGraphConv, TypedLinear  # noqa: F401
from ..dense_conv import DenseChebConv, DenseGraphConv, DenseSAGEConv  # noqa: F401
from ..pna import PNAConv  # noqa: F401
from ..edge_feature_conv import CFConv, EGNNConv, GatedGCNConv  # noqa: F401
from ..conv_more import AtomicConv, DGNConv, GroupRevRes, TWIRLSConv, TWIRLSUnfoldingAndAttention  # noqa: F401
