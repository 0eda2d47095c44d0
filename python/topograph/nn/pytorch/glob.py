"""dgl.nn.pytorch.glob: topograph.nn's graph pooling (glob.py) and the Set Transformer's blocks
(set_transformer.py)."""
from ..glob import (AvgPooling, GlobalAttentionPooling, MaxPooling, Set2Set, SortPooling, SumPooling,  # noqa: F401
                    WeightAndSum)
from ..set_transformer import (InducedSetAttentionBlock, MultiHeadAttention, PMALayer,  # noqa: F401
                               SetAttentionBlock, SetTransformerDecoder, SetTransformerEncoder)
