"""dgl.nn.pytorch.glob: topograph.nn's graph pooling (glob.py)."""
from ..glob import (AvgPooling, GlobalAttentionPooling, MaxPooling, Set2Set, SortPooling, SumPooling,  # noqa: F401
                    WeightAndSum)
