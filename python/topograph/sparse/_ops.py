"""dgl.sparse's operators: products on Topograph's kernels, reductions, arithmetic, broadcasts.

The products run on the structure's bipartite graph (col -> row, edge id = entry index; _matrix.py):
- spmm / bspmm:   A [L, N] @ X [N, ...] is gspmm 'mul' 'sum' of X's rows (sources: columns) by A's values
                  (edges) into the rows: out [L, ...]. Empty rows get 0.
- sddmm / bsddmm: (X1 @ X2) at A's entries is gsddmm 'dot' of X2's columns (sources) and X1's rows
                  (destinations): one dot product per entry, never the dense L x N product.
- softmax:        edge_softmax over each row's entries (a destination's in-edges; dim 1) or each column's
                  (a source's out-edges; dim 0).
so they take float16 / bfloat16 / float32 / float64 values and features, as every Topograph op (the result in the
operands' promoted dtype, computed in float32 by the kernels, or in float64 by plain torch when that promotion is
float64: topograph/ops.py), and differentiate through Topograph's backward kernels (torch's autograd in float64).
Sparse x sparse, sums of two matrices and reductions are torch ops on the index tensors (any dtype),
differentiable in the values.
"""
from __future__ import annotations

import operator
from typing import Optional, Union

import torch

from .. import ops
from .._base import DGLRuntimeError
from ._matrix import SparseMatrix, _Structure, coalesced, diag, gather_lines, is_scalar, val_like

_REDUCTIONS = {"sum": "sum", "smax": "amax", "smin": "amin", "smean": "mean", "sprod": "prod"}


def _need_matrix(x, what: str, position: str = "A") -> SparseMatrix:
    if not isinstance(x, SparseMatrix):
        raise TypeError(f"{what}: {position} must be a SparseMatrix, got {type(x).__name__}")
    return x


# --- products
def spmm(A: SparseMatrix, X: torch.Tensor) -> torch.Tensor:
    """A [L, N] @ X: X [N] -> [L], [N, D] -> [L, D]; with vector values [nnz, K], X [N, D, K] -> [L, D, K]
    (bspmm). Duplicate entries sum."""
    _need_matrix(A, "spmm")
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"spmm: X must be a torch.Tensor, got {type(X).__name__}")
    val = A.val
    N = A.shape[1]
    if val.dim() == 1:
        ok = X.dim() in (1, 2, 3) and X.shape[0] == N
    else:
        ok = X.dim() == 3 and X.shape[0] == N and X.shape[2] == val.shape[1]
    if not ok:
        wanted = f"[{N}], [{N}, D] or [{N}, D, K]" if val.dim() == 1 else f"[{N}, D, {val.shape[1]}]"
        raise DGLRuntimeError(f"spmm: a matrix of shape {A.shape} with values {tuple(val.shape)} multiplies "
                              f"{wanted}, got {tuple(X.shape)}")
    ops._need_float(val, "spmm: A's values")
    ops._need_float(X, "spmm: X")
    g = A._s.graph()
    if X.dim() == 3:
        # DGL's layout [N, D, K] puts a head's features K apart; the kernels' is [N, K, D] with one value per
        # (entry, head) [nnz, K, 1]: 8.5x faster than broadcasting [K] against [D, K] (1M entries, D 16,
        # K 4: 93 against 797 ms; python/benchmarks/sparse_matrix.py), for two copies of N x D x K.
        per_head = val.view(-1, 1, 1) if val.dim() == 1 else val.unsqueeze(-1)
        return ops.gspmm(g, "mul", "sum", X.permute(0, 2, 1), per_head).permute(0, 2, 1).contiguous()
    # gspmm reads a 1-D operand as [rows, 1], which broadcasts against X's row shape.
    return ops.gspmm(g, "mul", "sum", X, val)


def bspmm(A: SparseMatrix, X: torch.Tensor) -> torch.Tensor:
    """A [L, N] with values [nnz, K] @ X [N, D, K] -> [L, D, K]: one spmm per K (e.g. per attention head)."""
    return spmm(A, X)


def spspmm(A: SparseMatrix, B: SparseMatrix) -> SparseMatrix:
    """A [L, M] @ B [M, N], both with scalar values: a sparse [L, N], entries sorted by (row, col). Each entry
    (i, k) of A meets the entries of B's row k (one torch gather over B's rows); equal (i, j) then sum."""
    _need_matrix(A, "spspmm")
    _need_matrix(B, "spspmm", "B")
    if A.shape[1] != B.shape[0]:
        raise DGLRuntimeError(f"spspmm: shapes {A.shape} and {B.shape} do not chain")
    if A.val.dim() != 1 or B.val.dim() != 1:
        raise DGLRuntimeError("spspmm: both matrices must have scalar values ([nnz])")
    a_entry, b_entry = gather_lines(B.row, B.shape[0], A.col)
    shape = (A.shape[0], B.shape[1])
    return coalesced(A.row[a_entry], B.col[b_entry], A.val[a_entry] * B.val[b_entry], shape,
                     A.is_diag() and B.is_diag())


def matmul(A: Union[torch.Tensor, SparseMatrix], B: Union[torch.Tensor, SparseMatrix]):
    """A @ B: dense @ dense (torch.matmul), sparse @ dense (spmm), sparse @ sparse (spspmm)."""
    if isinstance(A, torch.Tensor) and isinstance(B, torch.Tensor):
        return torch.matmul(A, B)
    if isinstance(A, SparseMatrix) and isinstance(B, torch.Tensor):
        return spmm(A, B)
    if isinstance(A, SparseMatrix) and isinstance(B, SparseMatrix):
        return spspmm(A, B)
    raise TypeError(f"matmul: takes (SparseMatrix or Tensor, SparseMatrix or Tensor) with a SparseMatrix first "
                    f"when the other is sparse, got ({type(A).__name__}, {type(B).__name__})")


def sddmm(A: SparseMatrix, X1: torch.Tensor, X2: torch.Tensor) -> SparseMatrix:
    """(X1 @ X2) * A at A's entries only: X1 [L, K], X2 [K, N] (or X1 [L], X2 [N]: their outer product);
    X1 [L, K, H], X2 [K, N, H] give values [nnz, H] (bsddmm). The result shares A's structure."""
    _need_matrix(A, "sddmm")
    if not isinstance(X1, torch.Tensor) or not isinstance(X2, torch.Tensor):
        raise TypeError("sddmm: X1 and X2 must be torch.Tensors")
    L, N = A.shape
    dims = (X1.dim(), X2.dim())
    shapes_ok = (X1.shape[0] == L and (
        (dims == (1, 1) and X2.shape[0] == N) or
        (dims == (2, 2) and X2.shape == (X1.shape[1], N)) or
        (dims == (3, 3) and X2.shape[0] == X1.shape[1] and X2.shape[1] == N and X2.shape[2] == X1.shape[2])))
    if not shapes_ok:
        raise DGLRuntimeError(f"sddmm: a matrix of shape {A.shape} takes X1 [{L}, K] and X2 [K, {N}] ([{L}] and "
                              f"[{N}], or [{L}, K, H] and [K, {N}, H]), got {tuple(X1.shape)} and {tuple(X2.shape)}")
    if A.val.dim() == 2 and dims == (3, 3) and A.val.shape[1] != X1.shape[2]:
        raise DGLRuntimeError(f"bsddmm: values {tuple(A.val.shape)} against H = {X1.shape[2]} batches")
    for t, name in ((A.val, "A's values"), (X1, "X1"), (X2, "X2")):
        ops._need_float(t, f"sddmm: {name}")
    g = A._s.graph()
    if dims == (1, 1):
        prod = ops.gsddmm(g, "mul", X2, X1, "u", "v")                               # [nnz]
    elif dims == (2, 2):
        prod = ops.gsddmm(g, "dot", X2.t(), X1, "u", "v").squeeze(-1)               # [nnz]
    else:  # per H: columns of X2 [N, H, K] against rows of X1 [L, H, K]
        prod = ops.gsddmm(g, "dot", X2.permute(1, 2, 0), X1.permute(0, 2, 1), "u", "v").squeeze(-1)  # [nnz, H]
    val = A.val
    if prod.dim() == 2 and val.dim() == 1:
        val = val.unsqueeze(-1)
    elif prod.dim() == 1 and val.dim() == 2:
        prod = prod.unsqueeze(-1)
    return val_like(A, prod * val)


def bsddmm(A: SparseMatrix, X1: torch.Tensor, X2: torch.Tensor) -> SparseMatrix:
    """sddmm per batch H (the last dim): X1 [L, K, H], X2 [K, N, H] -> values [nnz, H]."""
    return sddmm(A, X1, X2)


def softmax(input: SparseMatrix, dim: int = 1) -> SparseMatrix:  # noqa: A002 (DGL's name)
    """Softmax of the values over each row's entries (dim 1) or each column's (dim 0); per value column when
    the values are [nnz, D]. The result shares the structure."""
    _need_matrix(input, "softmax", "input")
    if dim not in (0, 1):
        raise ValueError(f"softmax: dim must be 0 (columns) or 1 (rows), got {dim!r}")
    ops._need_float(input.val, "softmax: the values")
    out = ops.edge_softmax(input._s.graph(), input.val, norm_by="dst" if dim == 1 else "src")
    return val_like(input, out)


# --- reductions (DGL's rule: over the entries only; a row or column without entries gives 0)
def reduce(input: SparseMatrix, dim: Optional[int] = None, rtype: str = "sum") -> torch.Tensor:  # noqa: A002
    """rtype ('sum', 'smax', 'smin', 'smean', 'sprod') of the values: over all entries (dim None) -> val's
    trailing shape; per column (dim 0) -> [N, ...]; per row (dim 1) -> [L, ...]."""
    _need_matrix(input, "reduce", "input")
    if rtype not in _REDUCTIONS:
        raise DGLRuntimeError(f"reduce: rtype must be one of {sorted(_REDUCTIONS)}, got {rtype!r}")
    val = input.val
    how = _REDUCTIONS[rtype]
    if dim is None:
        if input.nnz == 0:
            return torch.zeros(val.shape[1:], dtype=val.dtype, device=val.device)
        return {"sum": torch.sum, "amax": torch.amax, "amin": torch.amin, "mean": torch.mean,
                "prod": torch.prod}[how](val, 0)
    if dim not in (0, 1):
        raise ValueError(f"reduce: dim must be None, 0 (per column) or 1 (per row), got {dim!r}")
    index = input.col if dim == 0 else input.row
    out = torch.zeros((input.shape[1 - dim],) + tuple(val.shape[1:]), dtype=val.dtype, device=val.device)
    index = index.view((-1,) + (1,) * (val.dim() - 1)).expand_as(val)
    return out.scatter_reduce(0, index, val, how, include_self=False)


def sum(input: SparseMatrix, dim: Optional[int] = None) -> torch.Tensor:  # noqa: A001,A002 (DGL's names)
    return reduce(input, dim, "sum")


def smax(input: SparseMatrix, dim: Optional[int] = None) -> torch.Tensor:  # noqa: A002
    return reduce(input, dim, "smax")


def smin(input: SparseMatrix, dim: Optional[int] = None) -> torch.Tensor:  # noqa: A002
    return reduce(input, dim, "smin")


def smean(input: SparseMatrix, dim: Optional[int] = None) -> torch.Tensor:  # noqa: A002
    return reduce(input, dim, "smean")


def sprod(input: SparseMatrix, dim: Optional[int] = None) -> torch.Tensor:  # noqa: A002
    return reduce(input, dim, "sprod")


# --- arithmetic
def add(A: SparseMatrix, B: SparseMatrix) -> SparseMatrix:
    """A + B over the union of their entries (coalesced: sorted, duplicates summed)."""
    _same_shape(A, B, "add")
    val_a, val_b = _matching_values(A, B, "add")
    return coalesced(torch.cat([A.row, B.row]), torch.cat([A.col, B.col]), torch.cat([val_a, val_b]), A.shape,
                     A.is_diag() and B.is_diag())


def sub(A: SparseMatrix, B: SparseMatrix) -> SparseMatrix:
    return add(A, neg(_need_matrix(B, "sub", "B")))


def mul(A: SparseMatrix, B) -> SparseMatrix:
    """A * a scalar, or A * B over the entries both have (neither may hold duplicates, as DGL's)."""
    _need_matrix(A, "mul")
    if is_scalar(B):
        return val_like(A, A.val * B)
    _same_shape(A, B, "mul")
    if A.has_duplicate() or B.has_duplicate():
        raise ValueError("mul: A * B of two sparse matrices needs matrices without duplicate entries (coalesce() "
                         "them first)")
    A, B = A.coalesce(), B.coalesce()
    a_at, b_at = _matches(A, B)
    val_a, val_b = _matching_values(A, B, "mul")
    return SparseMatrix(_sub_structure(A, a_at, A.is_diag() or B.is_diag()), val_a[a_at] * val_b[b_at])


def div(A: SparseMatrix, B) -> SparseMatrix:
    """A / a scalar, or A / B where B has exactly A's entries (in any order; no duplicates): values in A's
    order."""
    _need_matrix(A, "div")
    if is_scalar(B):
        return val_like(A, A.val / B)
    _same_shape(A, B, "div")
    val_a, _ = _matching_values(A, B, "div")
    Bc = B.coalesce()
    a_at, b_at = _matches(A, Bc)
    if A.nnz != B.nnz or a_at.numel() != A.nnz or A.has_duplicate() or B.has_duplicate():
        raise ValueError("div: A / B of two sparse matrices needs B to have exactly A's entries, each once")
    return val_like(A, val_a / Bc.val[b_at])


def power(A: SparseMatrix, scalar) -> SparseMatrix:
    """Each value to the power `scalar`."""
    _need_matrix(A, "power")
    if not is_scalar(scalar):
        raise TypeError(f"power: the exponent must be a scalar, got {type(scalar).__name__}")
    return val_like(A, A.val ** scalar)


def neg(A: SparseMatrix) -> SparseMatrix:
    return val_like(_need_matrix(A, "neg"), -A.val)


def inv(A: SparseMatrix) -> SparseMatrix:
    """The inverse of a square diagonal matrix with scalar values."""
    _need_matrix(A, "inv")
    if not A.is_diag() or A.shape[0] != A.shape[1] or A.val.dim() != 1:
        raise ValueError(f"inv: only a square diagonal matrix with scalar values is inverted here, got shape "
                         f"{A.shape}, values {tuple(A.val.shape)}, diagonal {A.is_diag()}")
    return diag(1.0 / A.val, A.shape)


# --- a vector broadcast over the entries (dgl.sparse.sp_*_v)
def sp_broadcast_v(A: SparseMatrix, v: torch.Tensor, op: str) -> SparseMatrix:
    """op ('add', 'sub', 'mul', 'truediv') of each entry's value and v's element for its column (v [N] or
    [1, N]) or its row (v [L, 1]); a [1, N] matrix reads a [1, N] v by column, as DGL's."""
    _need_matrix(A, "sp_broadcast_v")
    if op not in ("add", "sub", "mul", "truediv"):
        raise ValueError(f"sp_broadcast_v: op must be 'add', 'sub', 'mul' or 'truediv', got {op!r}")
    v2 = v.view(1, -1) if v.dim() == 1 else v
    L, N = A.shape
    if v2.dim() != 2 or tuple(v2.shape) not in ((1, N), (L, 1)):
        raise ValueError(f"sp_broadcast_v: v must be [{N}], [1, {N}] or [{L}, 1] for a matrix of shape {A.shape}, "
                         f"got {tuple(v.shape)}")
    by_column = tuple(v2.shape) == (1, N)
    per_entry = v2.reshape(-1)[A.col if by_column else A.row]
    if A.val.dim() > 1:
        per_entry = per_entry.unsqueeze(-1)
    return val_like(A, getattr(operator, op)(A.val, per_entry))


def sp_add_v(A: SparseMatrix, v: torch.Tensor) -> SparseMatrix:
    return sp_broadcast_v(A, v, "add")


def sp_sub_v(A: SparseMatrix, v: torch.Tensor) -> SparseMatrix:
    return sp_broadcast_v(A, v, "sub")


def sp_mul_v(A: SparseMatrix, v: torch.Tensor) -> SparseMatrix:
    return sp_broadcast_v(A, v, "mul")


def sp_div_v(A: SparseMatrix, v: torch.Tensor) -> SparseMatrix:
    return sp_broadcast_v(A, v, "truediv")


# --- helpers
def _same_shape(A, B, what: str) -> None:
    _need_matrix(A, what)
    _need_matrix(B, what, "B")
    if A.shape != B.shape:
        raise DGLRuntimeError(f"{what}: shapes {A.shape} and {B.shape} differ")


def _matching_values(A: SparseMatrix, B: SparseMatrix, what: str):
    if A.val.shape[1:] != B.val.shape[1:]:
        raise DGLRuntimeError(f"{what}: values of shapes {tuple(A.val.shape)} and {tuple(B.val.shape)} do not match")
    return A.val, B.val


def _matches(A: SparseMatrix, B: SparseMatrix):
    """(entries of A, entries of B) at the positions both coalesced matrices have, in (row, col) order."""
    keys_a = A.row * A.shape[1] + A.col
    keys_b = B.row * B.shape[1] + B.col
    if keys_b.numel() == 0:
        empty = torch.empty(0, dtype=torch.int64, device=keys_a.device)
        return empty, empty
    at = torch.searchsorted(keys_b, keys_a).clamp(max=keys_b.numel() - 1)
    hit = keys_b[at] == keys_a
    return torch.nonzero(hit).reshape(-1), at[hit]


def _sub_structure(A: SparseMatrix, entries: torch.Tensor, diag_flag: bool) -> _Structure:
    return _Structure(A.row[entries], A.col[entries], A.shape, diag_flag)


# DGL's operators: a non-sparse operand gives NotImplemented, so Python raises its TypeError.
def _operator(f, scalar_ok: bool):
    def method(self, other):
        if isinstance(other, SparseMatrix) or (scalar_ok and is_scalar(other)):
            return f(self, other)
        return NotImplemented
    return method


SparseMatrix.__add__ = _operator(add, scalar_ok=False)
SparseMatrix.__sub__ = _operator(sub, scalar_ok=False)
SparseMatrix.__mul__ = SparseMatrix.__rmul__ = _operator(mul, scalar_ok=True)
SparseMatrix.__truediv__ = _operator(div, scalar_ok=True)
SparseMatrix.__pow__ = lambda self, s: power(self, s) if is_scalar(s) else NotImplemented
SparseMatrix.__neg__ = neg
SparseMatrix.__matmul__ = lambda self, other: (matmul(self, other) if isinstance(other, (SparseMatrix, torch.Tensor))
                                               else NotImplemented)
for _name in ("neg", "inv", "softmax", "reduce", "sum", "smax", "smin", "smean", "sprod"):
    setattr(SparseMatrix, _name, globals()[_name])
