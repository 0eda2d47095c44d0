"""torch.autograd.Functions over Topograph's differentiable ops (nn/sparse_ops.hpp).

Each forward calls the C++ op, which borrows the input tensors (no copy) and records its backward on
Topograph's own tape; the returned ``_C.Tape`` lives in ctx. Each backward hands torch's output gradient to
that tape, which runs Topograph's backward kernels (gspmm/gsddmm on the reverse graph, edge softmax
backward, ...) and returns the input gradients. No derivative is written in Python.

The tape reads the inputs' memory in place during backward, so they are also saved with
``ctx.save_for_backward``: torch's version counter then raises if one was modified in place in between.
Double backward is not supported (``once_differentiable``).
"""
from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from . import _C


def _grads(tape, grad):
    return tape.backward(grad.contiguous())


class GSpMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, relation, op, reduce, u, e):
        out, tape = _C.gspmm(g, relation, op, reduce, u, e, ctx.needs_input_grad[4], ctx.needs_input_grad[5])
        ctx.tape = tape
        ctx.save_for_backward(u, e)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        ctx.saved_tensors  # the in-place check
        gu, ge = _grads(ctx.tape, grad)
        return None, None, None, None, gu, ge


class GSDDMM(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, relation, op, lhs, rhs, lhs_target, rhs_target):
        out, tape = _C.gsddmm(g, relation, op, lhs, rhs, lhs_target, rhs_target, ctx.needs_input_grad[3],
                              ctx.needs_input_grad[4])
        ctx.tape = tape
        ctx.save_for_backward(lhs, rhs)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        ctx.saved_tensors
        gl, gr = _grads(ctx.tape, grad)
        return None, None, None, gl, gr, None, None


class EdgeSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, g, relation, logits, by_src):
        out, tape = _C.edge_softmax(g, relation, logits, by_src, ctx.needs_input_grad[2])
        ctx.tape = tape
        ctx.save_for_backward(logits)
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        ctx.saved_tensors
        (gl,) = _grads(ctx.tape, grad)
        return None, None, gl, None


def wants_grad(*tensors) -> bool:
    """Whether torch would record this call: grad mode on and some input requiring grad."""
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)
