"""dgl.random: seed (torch's generator, which every Topograph draw reads: topograph.seed) and choice."""
from __future__ import annotations

import torch

__all__ = ["seed", "choice"]


def seed(val: int) -> None:
    """dgl.random.seed: seeds torch's default generator (topograph.seed)."""
    torch.manual_seed(int(val))


def choice(a, size, replace: bool = True, prob=None) -> torch.Tensor:
    """dgl.random.choice: `size` draws (an int or a shape) from range(a) (an int) or from a's rows (a tensor),
    uniform or in proportion to prob [population], with or without replacement; from torch's generator."""
    population = a.shape[0] if isinstance(a, torch.Tensor) else int(a)
    shape = tuple(size) if isinstance(size, tuple) else (int(size),)
    count = 1
    for d in shape:
        count *= d
    if not replace and count > population:
        raise ValueError(f"choice: {count} draws without replacement from a population of {population}")
    weights = torch.ones(population) if prob is None else torch.as_tensor(prob, dtype=torch.float64).cpu()
    if weights.shape != (population,) or bool((weights < 0).any()) or not bool(weights.sum() > 0):
        raise ValueError(f"choice: prob must be {population} non-negative weights, not all 0")
    picked = torch.multinomial(weights, count, replacement=replace) if prob is not None or replace else \
        torch.randperm(population)[:count]
    if isinstance(a, torch.Tensor):
        picked = a[picked.to(a.device)]
    return picked.reshape(shape)
