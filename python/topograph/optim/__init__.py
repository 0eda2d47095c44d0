"""dgl.optim (DGL 2.1's names and updates, one process): SparseAdam and SparseAdagrad over topograph.nn's
NodeEmbedding. step() gathers the rows the traced reads touched and their gradients, averages a row's gradient
over its reads (DGL's rule, not a sum), and updates only those rows and their per-row state (Adam: step count,
first and second moments with bias correction per row; Adagrad: the sum of squares). zero_grad() marks the
traces to drop after the next step, as DGL's."""
from __future__ import annotations

import torch

from .._base import DGLError
from ..nn.sparse_emb import NodeEmbedding

__all__ = ["SparseAdam", "SparseAdagrad"]


class _SparseOptimizer:
    def __init__(self, params, lr: float):
        params = list(params)
        if not params:
            raise DGLError("sparse optimiser: empty parameter list")
        for emb in params:
            if not isinstance(emb, NodeEmbedding):
                raise DGLError(f"{type(self).__name__} takes topograph.nn.NodeEmbedding objects, got "
                               f"{type(emb).__name__} (use torch.optim for torch.nn parameters)")
        self._params, self._lr, self._clean_grad = params, lr, False
        for emb in params:
            emb.set_optm_state(self._new_state(emb))

    def zero_grad(self) -> None:
        self._clean_grad = True

    @torch.no_grad()
    def step(self) -> None:
        for emb in self._params:
            reads = [(ids, rows.grad) for ids, rows in emb.trace if rows.grad is not None]
            if self._clean_grad:
                emb.reset_trace()
            if not reads:
                continue
            ids = torch.cat([i for i, _ in reads]).to(emb.weight.device)
            grads = torch.cat([g for _, g in reads]).to(emb.weight.device)
            rows, inverse, counts = torch.unique(ids, return_inverse=True, return_counts=True)
            grad = torch.zeros(rows.numel(), grads.shape[1], device=grads.device).index_add_(0, inverse, grads)
            self._update(emb, rows, grad / counts.unsqueeze(1))
        self._clean_grad = False

    def state_dict(self) -> dict:
        return {"state": {emb.name: emb.optm_state for emb in self._params}, "param_groups": self.param_groups}

    def load_state_dict(self, state_dict: dict) -> None:
        for emb in self._params:
            for mine, saved in zip(emb.optm_state, state_dict["state"][emb.name]):
                mine.copy_(saved)
        self._set_param_groups(state_dict["param_groups"])


class SparseAdagrad(_SparseOptimizer):
    """Adagrad per row: state += g^2; row -= lr g / sqrt(state + eps)."""

    def __init__(self, params, lr: float, eps: float = 1e-10):
        self._eps = eps
        super().__init__(params, lr)

    def _new_state(self, emb):
        return (torch.zeros_like(emb.weight),)

    def _update(self, emb, rows, grad):
        (state,) = emb.optm_state
        state[rows] += grad * grad
        emb.weight[rows] -= self._lr * grad / (state[rows] + self._eps).sqrt()

    @property
    def param_groups(self):
        return [{"lr": self._lr, "eps": self._eps}]

    def _set_param_groups(self, groups):
        self._lr, self._eps = groups[0]["lr"], groups[0]["eps"]


class SparseAdam(_SparseOptimizer):
    """Adam per row, each row with its own step count for the bias correction (a row read in fewer steps is
    corrected as fewer steps); dtype float16 keeps the moments in half precision, as DGL's."""

    def __init__(self, params, lr: float, betas=(0.9, 0.999), eps: float = 1e-8, use_uva=None,
                 dtype=torch.float32):
        if dtype not in (torch.float16, torch.float32):
            raise DGLError(f"SparseAdam: dtype must be torch.float16 or torch.float32, got {dtype}")
        self._beta1, self._beta2, self._eps, self._dtype = betas[0], betas[1], eps, dtype
        super().__init__(params, lr)

    def _new_state(self, emb):
        shape, device = emb.weight.shape, emb.weight.device
        moments = [torch.zeros(shape, dtype=self._dtype, device=device) for _ in range(2)]
        return (torch.zeros(shape[0], dtype=torch.int32, device=device), *moments)

    def _update(self, emb, rows, grad):
        step, mem, power = emb.optm_state
        step[rows] += 1
        steps = step[rows].to(grad.dtype).unsqueeze(1)
        new_mem = self._beta1 * mem[rows].to(grad.dtype) + (1 - self._beta1) * grad
        new_power = self._beta2 * power[rows].to(grad.dtype) + (1 - self._beta2) * grad * grad
        mem[rows], power[rows] = new_mem.to(self._dtype), new_power.to(self._dtype)
        corrected_mem = new_mem / (1 - self._beta1 ** steps)
        corrected_power = new_power / (1 - self._beta2 ** steps)
        emb.weight[rows] -= self._lr * corrected_mem / (corrected_power.sqrt() + self._eps)

    @property
    def param_groups(self):
        return [{"lr": self._lr, "betas": (self._beta1, self._beta2), "eps": self._eps}]

    def _set_param_groups(self, groups):
        self._lr, (self._beta1, self._beta2), self._eps = groups[0]["lr"], groups[0]["betas"], groups[0]["eps"]
