"""dgl.nn.pytorch.utils: Sequential, JumpingKnowledge, LabelPropagation, WeightBasis (topograph.nn's utils.py)."""
from ..utils import JumpingKnowledge, LabelPropagation, Sequential, WeightBasis  # noqa: F401
