"""dgl.nn.pytorch.utils: Sequential, JumpingKnowledge, LabelPropagation (topograph.nn's utils.py)."""
from ..utils import JumpingKnowledge, LabelPropagation, Sequential  # noqa: F401
