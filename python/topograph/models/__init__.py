"""topograph.models: the seed papers' encoders as torch.nn.Modules (models/ in C++, the same equations; spec
in ../shared/docs/models.md). Each is a topology built per batch from topograph.builders plus the shared
GraphMultiHeadAttention, exactly as the C++ models are:

    StarTransformer        ring + relay: satellite phase, then relay phase, per layer (star.py)
    MultiScaleTransformer  per-head-group scale windows, as bands of one fused kernel (multiscale.py)
    BigTransformer         char-word bipartite graph + a sentence node, post-LN blocks (big.py)

An encoder takes a batch of sentences packed without padding, ``tokens`` (token ids [N] or features
[N, input_dim], sentence b's tokens after those of sentences 0..b-1) and ``lengths`` [B], and returns
(token states [N, hidden], sentence features [B, hidden]); a task head (an MLP) goes on top.
"""
from .big import BigTransformer, big_topology, lexicon_spans
from .multiscale import MultiScaleTransformer, head_distribution, parse_scales
from .sequence import SequenceEmbedding
from .star import StarTransformer, star_topology

__all__ = ["StarTransformer", "star_topology", "MultiScaleTransformer", "head_distribution", "parse_scales",
           "BigTransformer", "big_topology", "lexicon_spans", "SequenceEmbedding"]
