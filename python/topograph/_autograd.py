"""Topograph's differentiable ops (nn/sparse_ops.hpp) as one torch.autograd.Function.

An op's forward is a call into _C that borrows the input tensors (no copy), runs the C++ op, which records
its backward on Topograph's own tape, and returns (output, ``_C.Tape`` or None). The tape lives in ctx; the
backward hands torch's output gradient to it, and Topograph runs its backward kernels (gspmm/gsddmm on the
reverse graph, the edge softmax backward, ...) and returns one gradient per input. No derivative is
written in Python.

The tape reads the inputs' memory in place during backward, so they are also saved with
``ctx.save_for_backward``: torch's version counter then raises if one was modified in place in between.
Double backward is not supported (``once_differentiable``).

The kernels are float32. When the inputs' torch promotion (torch.result_type's) is float64, an op that gives taped
a ``float64`` function (gspmm, gsddmm, edge_softmax, sparse_attention, gat_attention, band_attention: _float64.py,
plain torch over the graph's COO or per sequence) runs that instead, on its inputs cast to float64: computed in
float64, differentiated by torch's autograd (double backward too). Otherwise (float16 / bfloat16) taped casts each
input to float32 and the output to the inputs' promotion, both with Tensor.to, so torch's autograd hands each input
its gradient in its own dtype: float16 / bfloat16 accumulate in float32.
"""
from __future__ import annotations

import functools
from typing import Callable, Optional

import torch
from torch.autograd.function import once_differentiable

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)  # the features the ops take


class _Taped(torch.autograd.Function):
    @staticmethod
    def forward(ctx, run, *tensors):
        out, tape = run(*tensors, list(ctx.needs_input_grad[1:]))
        ctx.tape = tape
        ctx.save_for_backward(*tensors)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        ctx.saved_tensors  # raises if an input changed in place since the forward
        return (None, *ctx.tape.backward(grad.contiguous()))


def taped(run: Callable, *tensors: Optional[torch.Tensor], float64: Optional[Callable] = None) -> torch.Tensor:
    """``run(*tensors, needs)`` calls one _C op (needs[i]: whether tensors[i] wants a gradient) and returns
    (output, tape). Through autograd when torch would record the call, straight otherwise (no tape kept).
    ``float64(*tensors)``, when given, is the same op in plain torch: it runs instead, on the inputs cast to float64,
    when they promote to float64. Inputs of another float dtype run cast to float32, the output cast back (see
    above)."""
    dtypes = [t.dtype for t in tensors if t is not None]
    promoted = functools.reduce(torch.promote_types, dtypes)
    if promoted == torch.float64 and float64 is not None:
        return float64(*(None if t is None else t.to(torch.float64) for t in tensors))
    if any(d != torch.float32 for d in dtypes):
        out = taped(run, *(None if t is None else t.to(torch.float32) for t in tensors))
        return out.to(promoted)
    if torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors):
        return _Taped.apply(run, *tensors)
    out, _ = run(*tensors, [False] * len(tensors))
    return out
