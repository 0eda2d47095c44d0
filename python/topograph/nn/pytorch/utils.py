"""dgl.nn.pytorch.utils: Sequential, JumpingKnowledge, LabelPropagation, WeightBasis (topograph.nn's utils.py),
and Identity (DGL's returns its input, as torch's Identity does; it is one, with DGL 2.1's forward(x))."""
import torch

from ..utils import JumpingKnowledge, LabelPropagation, Sequential, WeightBasis  # noqa: F401


class Identity(torch.nn.Identity):
    """DGL 2.1's Identity: forward(x) returns x. A torch.nn.Identity whose forward's parameter is named x, as
    DGL's (torch's is `input`), so module(x=h) runs."""

    def forward(self, x):
        return x
