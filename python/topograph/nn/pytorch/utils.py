"""dgl.nn.pytorch.utils: Sequential, JumpingKnowledge, LabelPropagation, WeightBasis (topograph.nn's utils.py),
and Identity (DGL's returns its input: torch's Identity, which does the same)."""
from torch.nn import Identity  # noqa: F401

from ..utils import JumpingKnowledge, LabelPropagation, Sequential, WeightBasis  # noqa: F401
