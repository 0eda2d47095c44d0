"""dgl.nn.pytorch.glob: topograph.nn's graph pooling (glob.py), the Set Transformer's blocks
(set_transformer.py), and the node readouts that DGL 2.1's glob.py imports from dgl.readout (sum_nodes,
mean_nodes, max_nodes, softmax_nodes, broadcast_nodes, topk_nodes; not the edge versions): topograph.readout's."""
from ...readout import (broadcast_nodes, max_nodes, mean_nodes, softmax_nodes, sum_nodes,  # noqa: F401
                        topk_nodes)
from ..glob import (AvgPooling, GlobalAttentionPooling, MaxPooling, Set2Set, SortPooling, SumPooling,  # noqa: F401
                    WeightAndSum)
from ..set_transformer import (InducedSetAttentionBlock, MultiHeadAttention, PMALayer,  # noqa: F401
                               SetAttentionBlock, SetTransformerDecoder, SetTransformerEncoder)
