"""Train the Star-Transformer on the masked-summation probe (Guo et al. 2019, §5.1) in a plain PyTorch loop.

An example is X in R^{n x d}: feature 0 of each position is a mask with exactly k ones, features 1..d-1 are
U[0, 1); the target is the (d-1)-vector sum of the value features over the masked positions, scored by MSE
against the baseline "always guess k/2 per output". The data are apps/tasks/masked_sum/'s exactly (the same
counter-based splitmix64 stream per (seed, split, index), so the same examples topo-train draws), and the
settings are topo-train's masked-sum recipe for Star (models/star_transformer/registration.cpp): n = 50, k = 5,
d = 10, 4000 training and 1000 test examples, 2 layers, hidden 100, 10 heads, residual, MLP head of 100,
Adam lr 1e-3 with 300 warm-up steps, gradient norm clipped at 5, batches of 16, 20 epochs.

    build/python-venv/bin/python python/examples/star_masked_sum.py            # the recipe
    build/python-venv/bin/python python/examples/star_masked_sum.py --epochs 3 --train-size 1000
"""
from __future__ import annotations

import argparse
import time

import topograph  # before torch: both OpenMP pools then wait briefly (python/README.md, "Threads")

import numpy as np
import torch

TRAIN, DEV, TEST = 0, 1, 2  # apps/tasks/task.hpp's Split


# --- the generator of apps/tasks/masked_sum/masked_sum.cpp, vectorised over examples (numpy uint64 arithmetic
# wraps modulo 2^64 as C++'s does; every constant is a np.uint64 so nothing is promoted to float)
def _u64(x) -> np.uint64:
    return np.uint64(x)


_GOLDEN = _u64(0x9E3779B97F4A7C15)


def _mix64(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> _u64(30))) * _u64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> _u64(27))) * _u64(0x94D049BB133111EB)
    return z ^ (z >> _u64(31))


class _SplitMix64:
    """apps/tasks/rng.hpp's SplitMix64, one stream per key (seed, split, index), all examples at once."""

    def __init__(self, seed: int, split: int, indices: np.ndarray):
        with np.errstate(over="ignore"):
            s = np.full(indices.shape, 0x6A09E667F3BCC909, dtype=np.uint64)
            for word in (np.full(indices.shape, seed, dtype=np.uint64), np.full(indices.shape, split, dtype=np.uint64),
                         indices.astype(np.uint64)):
                s = _mix64(s ^ _mix64(word + _GOLDEN))
        self.state = s

    def next(self) -> np.ndarray:
        with np.errstate(over="ignore"):
            self.state = self.state + _GOLDEN
            return _mix64(self.state)

    def uniform(self) -> np.ndarray:  # U[0, 1) with 24 random bits, as float32
        return (self.next() >> _u64(40)).astype(np.float32) * np.float32(1.0 / 16777216.0)

    def below(self, bound: np.ndarray) -> np.ndarray:  # uniform in [0, bound), Lemire's multiply-shift
        with np.errstate(over="ignore"):
            return (((self.next() >> _u64(32)) * bound.astype(np.uint64)) >> _u64(32)).astype(np.int64)


def masked_sum_examples(split: int, count: int, n: int = 50, k: int = 5, d: int = 10, seed: int = 1):
    """Examples [0, count) of `split`: x [count, n, d] (mask feature, then d - 1 values), y [count, d - 1]."""
    rng = _SplitMix64(seed, split, np.arange(count))
    x = np.zeros((count, n, d), dtype=np.float32)
    for i in range(n):
        for f in range(1, d):
            x[:, i, f] = rng.uniform()
    # exactly k distinct masked positions: the first k of a partial Fisher-Yates shuffle
    positions = np.tile(np.arange(n), (count, 1))
    rows = np.arange(count)
    for j in range(k):
        pick = j + rng.below(np.full(count, n - j))
        positions[rows, j], positions[rows, pick] = positions[rows, pick], positions[rows, j].copy()
        x[rows, positions[rows, j], 0] = 1.0
    y = (x[:, :, 1:].astype(np.float64) * x[:, :, :1]).sum(axis=1).astype(np.float32)  # summed in double
    return torch.from_numpy(x), torch.from_numpy(y)


# --- the model: Star-Transformer encoder and topo-train's regression head (an MLP on the sentence feature)
class StarRegressor(torch.nn.Module):
    def __init__(self, n: int, d: int, hidden: int = 100, heads: int = 10, layers: int = 2, head_hidden: int = 100):
        super().__init__()
        self.encoder = topograph.models.StarTransformer(hidden, heads, layers, input_dim=d, max_length=n,
                                                        residual=True)
        self.head = torch.nn.Sequential(torch.nn.Linear(hidden, head_hidden), torch.nn.ReLU(),
                                        torch.nn.Linear(head_hidden, d - 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, n, d] (fixed length n: the sentences are packed as B x n rows) -> [B, d - 1]."""
        batch, n, d = x.shape
        _, sentences = self.encoder(x.reshape(batch * n, d), [n] * batch)
        return self.head(sentences)


def evaluate(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 256) -> float:
    """MSE per output element over all examples."""
    model.eval()
    total = 0.0
    with torch.no_grad():
        for begin in range(0, x.shape[0], batch):
            total += float(((model(x[begin:begin + batch]) - y[begin:begin + batch]) ** 2).sum())
    model.train()
    return total / y.numel()


def train(n=50, k=5, d=10, train_size=4000, test_size=1000, epochs=20, batch=16, lr=1e-3, warmup=300, clip=5.0,
          seed=1, log=print) -> dict:
    """The recipe's run; returns the test MSE, the k/2 baseline's and the wall time."""
    torch.manual_seed(seed)
    start = time.perf_counter()
    x_train, y_train = masked_sum_examples(TRAIN, train_size, n, k, d, seed)
    x_test, y_test = masked_sum_examples(TEST, test_size, n, k, d, seed)
    baseline = float(((y_test.double() - k / 2) ** 2).mean())  # "always guess k/2 per output", measured
    model = StarRegressor(n, d)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / warmup) if warmup else 1.0)
    step = 0
    for epoch in range(epochs):
        order = torch.randperm(train_size)
        loss_sum = 0.0
        for begin in range(0, train_size, batch):
            pick = order[begin:begin + batch]
            loss = torch.nn.functional.mse_loss(model(x_train[pick]), y_train[pick])
            opt.zero_grad()
            loss.backward()
            if clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            schedule.step()
            loss_sum += float(loss) * pick.numel()
            step += 1
        log(f"epoch {epoch + 1}/{epochs}: train MSE {loss_sum / train_size:.4f} ({step} steps, "
            f"{time.perf_counter() - start:.0f} s)")
    test_mse = evaluate(model, x_test, y_test)
    return {"test_mse": test_mse, "baseline_mse": baseline, "ratio": test_mse / baseline, "steps": step,
            "seconds": time.perf_counter() - start}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, default in [("n", 50), ("k", 5), ("d", 10), ("train-size", 4000), ("test-size", 1000), ("epochs", 20),
                          ("batch", 16), ("warmup", 300), ("seed", 1), ("threads", 2)]:
        parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--clip", type=float, default=5.0)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    topograph.set_num_threads(args.threads)
    result = train(args.n, args.k, args.d, args.train_size, args.test_size, args.epochs, args.batch, args.lr,
                   args.warmup, args.clip, args.seed)
    print(f"test MSE {result['test_mse']:.4f}, baseline (always guess k/2) {result['baseline_mse']:.4f}: "
          f"{100 * result['ratio']:.1f}% of the baseline after {result['steps']} steps, {result['seconds']:.0f} s")


if __name__ == "__main__":
    main()
