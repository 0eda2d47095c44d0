"""dgl.sparse's SparseMatrix: the matrix, its constructors and its structural methods.

A SparseMatrix of shape (L, N) is nnz entries (row, col, value) in the order they were given; duplicates are
allowed, as in DGL, and sum wherever the matrix is read as a matrix (to_dense, spmm, coalesce). Values are
[nnz] (scalars) or [nnz, D] (a vector per entry, e.g. one value per attention head).

The structure (rows, columns, shape) lives in a _Structure that every matrix made from it with val_like (and
the products that keep it: softmax, sddmm, scalar arithmetic) shares, so the bipartite graph that Topograph's
kernels run on is built once per structure: N column nodes, L row nodes and one edge col -> row per entry,
edge id = entry index (the products are in _ops.py). Everything else is torch ops on the index tensors,
differentiable in the values.
"""
from __future__ import annotations

from numbers import Number
from typing import Optional, Tuple

import torch

from .._base import DGLRuntimeError
from .._segment import pointer_ids


class _Structure:
    """Rows, columns and shape of a sparse matrix, with the Topograph graph of it built on first use."""

    __slots__ = ("row", "col", "shape", "diag", "_graph")

    def __init__(self, row: torch.Tensor, col: torch.Tensor, shape: Tuple[int, int], diag: bool = False):
        self.row, self.col, self.shape, self.diag = row, col, shape, diag
        self._graph = None

    def graph(self):
        """The bipartite graph col -> row (edge id = entry index) that spmm, sddmm and softmax run on."""
        if self._graph is None:
            from .._construct import heterograph

            self._graph = heterograph({("_col", "_entry", "_row"): (self.col, self.row)},
                                      num_nodes_dict={"_col": self.shape[1], "_row": self.shape[0]},
                                      device=self.row.device)  # the values' device (heterograph builds on CPU)
        return self._graph

    def transposed(self) -> "_Structure":
        return _Structure(self.col, self.row, (self.shape[1], self.shape[0]), self.diag)


class SparseMatrix:
    """dgl.sparse.SparseMatrix: made by spmatrix / from_coo / from_csr / from_csc / diag / identity / val_like,
    or by the graph (g.adj()). Products and arithmetic: topograph.sparse's functions and the operators
    (+, -, *, /, **, @, unary -)."""

    def __init__(self, structure: _Structure, val: torch.Tensor):
        self._s, self._val = structure, val

    # --- what it is
    @property
    def val(self) -> torch.Tensor:
        """The values, [nnz] or [nnz, D], in entry order."""
        return self._val

    @property
    def shape(self) -> Tuple[int, int]:
        return self._s.shape

    @property
    def nnz(self) -> int:
        return int(self._s.row.numel())

    @property
    def dtype(self) -> torch.dtype:
        return self._val.dtype

    @property
    def device(self) -> torch.device:
        return self._val.device

    @property
    def row(self) -> torch.Tensor:
        return self._s.row

    @property
    def col(self) -> torch.Tensor:
        return self._s.col

    def coo(self) -> Tuple[torch.Tensor, torch.Tensor]:
        """(row, col), entry order."""
        return self._s.row, self._s.col

    def indices(self) -> torch.Tensor:
        """[2, nnz]: rows over columns."""
        return torch.stack([self._s.row, self._s.col])

    def csr(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(indptr [L + 1], column of each entry by row, entry index of each). Entries keep their given order
        within a row, as DGL's."""
        return _compressed(self._s.row, self._s.col, self.shape[0])

    def csc(self) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(indptr [N + 1], row of each entry by column, entry index of each), as csr by columns."""
        return _compressed(self._s.col, self._s.row, self.shape[1])

    def to_dense(self) -> torch.Tensor:
        """[L, N] or [L, N, D]; duplicate entries sum. Differentiable in the values."""
        out = torch.zeros(self.shape + tuple(self._val.shape[1:]), dtype=self.dtype, device=self.device)
        return out.index_put((self._s.row, self._s.col), self._val, accumulate=True)

    def is_diag(self) -> bool:
        """Whether the matrix was made diagonal (diag, identity, and what scalar arithmetic, transposes and
        products of diagonal matrices give), as DGL tracks it; spmatrix of diagonal indices is not."""
        return self._s.diag

    def has_duplicate(self) -> bool:
        return int(torch.unique(_keys(self._s)).numel()) < self.nnz

    def __repr__(self) -> str:
        meta = f"shape={self.shape}, nnz={self.nnz}"
        if self._val.dim() > 1:
            meta += f", val_size={tuple(self._val.shape[1:])}"
        body = (f"indices={_indent(str(self.indices()), 8)},\nvalues={_indent(str(self._val), 7)},\n{meta})")
        return "SparseMatrix(" + _indent(body, len("SparseMatrix("))

    # --- new matrices of the same entries
    def transpose(self) -> "SparseMatrix":
        return SparseMatrix(self._s.transposed(), self._val)

    def t(self) -> "SparseMatrix":
        return self.transpose()

    @property
    def T(self) -> "SparseMatrix":  # noqa: N802 (DGL's name)
        return self.transpose()

    def to(self, device=None, dtype=None) -> "SparseMatrix":
        """The same matrix on `device` and/or with values of `dtype` (itself when both already hold)."""
        device = self.device if device is None else torch.device(device)
        dtype = self.dtype if dtype is None else dtype
        if device == self.device and dtype == self.dtype:
            return self
        if device == self.device:
            return SparseMatrix(self._s, self._val.to(dtype=dtype))
        s = _Structure(self._s.row.to(device), self._s.col.to(device), self.shape, self._s.diag)
        return SparseMatrix(s, self._val.to(device=device, dtype=dtype))

    def cuda(self) -> "SparseMatrix":
        return self.to(device="cuda")

    def cpu(self) -> "SparseMatrix":
        return self.to(device="cpu")

    def float(self) -> "SparseMatrix":
        return self.to(dtype=torch.float32)

    def double(self) -> "SparseMatrix":
        return self.to(dtype=torch.float64)

    def int(self) -> "SparseMatrix":
        return self.to(dtype=torch.int32)

    def long(self) -> "SparseMatrix":
        return self.to(dtype=torch.int64)

    def coalesce(self) -> "SparseMatrix":
        """Entries sorted by (row, col), duplicates summed (differentiable in the values, where DGL's is not)."""
        return coalesced(self._s.row, self._s.col, self._val, self.shape, self._s.diag)

    # --- selections (the values gathered: differentiable)
    def index_select(self, dim: int, index) -> "SparseMatrix":
        """The rows (dim 0) or columns (dim 1) `index` in that order (repeats allowed): shape (len(index), N) or
        (L, len(index)); a row's entries keep their order."""
        dim = _check_dim(dim, "index_select")
        if not isinstance(index, torch.Tensor):
            raise TypeError(f"index_select: index must be a torch.Tensor, got {type(index).__name__}")
        index = index.to(device=self._s.row.device, dtype=torch.int64).reshape(-1)
        extent = self.shape[dim]
        if index.numel() and (int(index.min()) < 0 or int(index.max()) >= extent):
            bad = index[(index < 0) | (index >= extent)][0]
            raise IndexError(f"index_select: {'row' if dim == 0 else 'column'} {int(bad)} is out of range for a "
                             f"matrix of shape {self.shape}")
        along, other = (self._s.row, self._s.col) if dim == 0 else (self._s.col, self._s.row)
        position, entry = gather_lines(along, extent, index)
        s = (_Structure(position, other[entry], (index.numel(), self.shape[1])) if dim == 0
             else _Structure(other[entry], position, (self.shape[0], index.numel())))
        return SparseMatrix(s, self._val[entry])

    def range_select(self, dim: int, index: slice) -> "SparseMatrix":
        """index_select of the rows or columns index.start (0 if None) .. index.stop; steps other than 1 are
        refused, as DGL's."""
        if not isinstance(index, slice):
            raise TypeError(f"range_select: index must be a slice, got {type(index).__name__}")
        if index.step not in (None, 1):
            raise NotImplementedError("range_select: slices with a step other than 1 are not supported")
        dim = _check_dim(dim, "range_select")
        stop = self.shape[dim] if index.stop is None else index.stop
        start = 0 if index.start is None else index.start
        return self.index_select(dim, torch.arange(start, stop, device=self._s.row.device))

    def sample(self, dim: int, fanout: int, ids=None, replace: bool = False, bias: bool = False) -> "SparseMatrix":
        """DGL 2.1's SparseMatrix.sample: the rows (dim 0) or columns (dim 1) `ids` (default every one) in that
        order, each keeping `fanout` of its entries drawn by the core's neighbour sampler (sample_neighbors'
        laws: min(fanout, entries) distinct ones, or fanout draws with replace, none from an empty line; -1
        keeps every entry; bias draws in proportion to the values, [nnz] and >= 0). Shape (len(ids), N) or
        (L, len(ids)); entries ordered by line, then by the other index (repeats adjacent). The values are
        gathered (differentiable, where DGL's is not). DGL 2.1's own default ids run one past the last line
        and fail; every line is meant and taken here. Draws come from torch's generator (DGL: its own)."""
        from .._construct import heterograph
        from ..sampling import sample_neighbors

        dim = _check_dim(dim, "sample")
        if isinstance(fanout, bool) or not isinstance(fanout, int) or fanout < -1:
            raise ValueError(f"sample: fanout must be an int >= 0, or -1 for every entry, got {fanout!r}")
        device = self._s.row.device
        if ids is None:
            ids = torch.arange(self.shape[dim], device=device)
        chosen = self.index_select(dim, ids)  # the lines in ids' order: line i of chosen is ids[i]
        along, other = (chosen.row, chosen.col) if dim == 0 else (chosen.col, chosen.row)
        lines = chosen.shape[dim]
        weights = None
        if bias:
            if chosen.val.dim() != 1 or not chosen.val.is_floating_point():
                raise ValueError(f"sample: bias draws by the values, which must be one float per entry, got "
                                 f"{chosen.val.dtype} {tuple(chosen.val.shape)}")
            weights = chosen.val.detach().float()
        # the entries as edges other -> line, so a line's entries are its in-edges (edge id = entry index)
        g = heterograph({("_O", "_E", "_L"): (other, along)},
                        num_nodes_dict={"_O": self.shape[1 - dim], "_L": lines}, device=device)
        if weights is not None:
            g.edata["w"] = weights
        frontier = sample_neighbors(g, {"_L": torch.arange(lines, device=device)}, fanout, replace=replace,
                                    prob="w" if bias else None, copy_ndata=False, copy_edata=False)
        entry = frontier.edata["_ID"].to(torch.int64)
        entry = entry[torch.argsort(along[entry] * max(self.shape[1 - dim], 1) + other[entry], stable=True)]
        return SparseMatrix(_Structure(chosen.row[entry], chosen.col[entry], chosen.shape), chosen.val[entry])

    def compact(self, dim: int, leading_indices=None) -> Tuple["SparseMatrix", torch.Tensor]:
        """Rows (dim 0) or columns (dim 1) relabelled: leading_indices first, in their order, then every other
        one that has an entry, in id order; the rest dropped. (matrix, the old id of each new one)."""
        dim = _check_dim(dim, "compact")
        along = self._s.row if dim == 0 else self._s.col
        extent = self.shape[dim]
        present = torch.zeros(extent, dtype=torch.bool, device=along.device)
        present[along] = True
        if leading_indices is None:
            leading = torch.empty(0, dtype=torch.int64, device=along.device)
        else:
            leading = torch.as_tensor(leading_indices, dtype=torch.int64, device=along.device).reshape(-1)
            if leading.numel() and (int(leading.min()) < 0 or int(leading.max()) >= extent):
                raise IndexError(f"compact: leading_indices must lie in [0, {extent}), got {leading.tolist()[:8]}")
            if int(torch.unique(leading).numel()) < leading.numel():
                raise ValueError("compact: leading_indices has repeats")
            present[leading] = False
        order = torch.cat([leading, torch.nonzero(present).reshape(-1)])
        new_id = torch.full((extent,), -1, dtype=torch.int64, device=along.device)
        new_id[order] = torch.arange(order.numel(), device=along.device)
        if dim == 0:
            s = _Structure(new_id[self._s.row], self._s.col, (order.numel(), self.shape[1]))
        else:
            s = _Structure(self._s.row, new_id[self._s.col], (self.shape[0], order.numel()))
        return SparseMatrix(s, self._val), order


# --- constructors (dgl.sparse's)
def spmatrix(indices: torch.Tensor, val: Optional[torch.Tensor] = None,
             shape: Optional[Tuple[int, int]] = None) -> SparseMatrix:
    """A matrix of the entries indices [2, nnz] (rows over columns) with values val ([nnz] or [nnz, D]; ones
    when None); shape defaults to (max row + 1, max column + 1). Ids outside the shape are an IndexError
    naming the entry (DGL keeps them)."""
    if not isinstance(indices, torch.Tensor) or indices.dim() != 2 or indices.shape[0] != 2:
        got = tuple(indices.shape) if isinstance(indices, torch.Tensor) else type(indices).__name__
        raise ValueError(f"spmatrix: indices must be a [2, nnz] tensor, got {got}")
    return from_coo(indices[0], indices[1], val, shape)


def from_coo(row: torch.Tensor, col: torch.Tensor, val: Optional[torch.Tensor] = None,
             shape: Optional[Tuple[int, int]] = None) -> SparseMatrix:
    """spmatrix of the entries (row[i], col[i])."""
    row, col = _ids(row, "row"), _ids(col, "col").to(row.device)
    if row.numel() != col.numel():
        raise ValueError(f"from_coo: row and col must be as long, got {row.numel()} and {col.numel()}")
    if shape is None:
        if row.numel() == 0:
            raise ValueError("spmatrix: shape is needed for a matrix without entries")
        shape = (int(row.max()) + 1, int(col.max()) + 1)
    shape = _shape(shape)
    for name, ids, extent in (("row", row, shape[0]), ("column", col, shape[1])):
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= extent):
            at = int(torch.nonzero((ids < 0) | (ids >= extent))[0])
            raise IndexError(f"spmatrix: entry {at} has {name} {int(ids[at])}, outside a matrix of shape {shape}")
    return SparseMatrix(_Structure(row, col, shape), _values(val, row.numel(), row.device))


def from_csr(indptr: torch.Tensor, indices: torch.Tensor, val: Optional[torch.Tensor] = None,
             shape: Optional[Tuple[int, int]] = None) -> SparseMatrix:
    """The matrix whose row i holds the columns indices[indptr[i]:indptr[i + 1]] (values val in that order)."""
    rows = _expand_indptr(indptr, indices, "from_csr")
    if shape is None:
        shape = (indptr.numel() - 1, int(indices.max()) + 1 if indices.numel() else 0)
    _check_indptr_length(indptr, _shape(shape)[0], "from_csr", "rows")
    return from_coo(rows, indices, val, shape)


def _check_indptr_length(indptr: torch.Tensor, count: int, what: str, of: str) -> None:
    # An indptr of the wrong length put every entry in the rows it did describe (2 entries for 2 rows: both
    # landed in row 0), a matrix other than the one meant, without a word.
    if indptr.numel() != count + 1:
        raise ValueError(f"{what}: indptr has {indptr.numel()} entries; a matrix of {count} {of} needs {count + 1}")


def from_csc(indptr: torch.Tensor, indices: torch.Tensor, val: Optional[torch.Tensor] = None,
             shape: Optional[Tuple[int, int]] = None) -> SparseMatrix:
    """The matrix whose column j holds the rows indices[indptr[j]:indptr[j + 1]]."""
    cols = _expand_indptr(indptr, indices, "from_csc")
    if shape is None:
        shape = (int(indices.max()) + 1 if indices.numel() else 0, indptr.numel() - 1)
    _check_indptr_length(indptr, _shape(shape)[1], "from_csc", "columns")
    return from_coo(indices, cols, val, shape)


def val_like(mat: SparseMatrix, val: torch.Tensor) -> SparseMatrix:
    """mat's entries with new values ([nnz] or [nnz, D]); the structure (and its graph) is shared."""
    if not isinstance(mat, SparseMatrix):
        raise TypeError(f"val_like: expected a SparseMatrix, got {type(mat).__name__}")
    return SparseMatrix(mat._s, _values(val, mat.nnz, mat.device, given=True))


def diag(val: torch.Tensor, shape: Optional[Tuple[int, int]] = None) -> SparseMatrix:
    """The diagonal matrix of val ([n] or [n, D]); shape (n, n) unless given, when n must be min(shape)."""
    if not isinstance(val, torch.Tensor) or val.dim() not in (1, 2):
        raise ValueError("diag: val must be a [n] or [n, D] tensor")
    n = val.shape[0]
    shape = (n, n) if shape is None else _shape(shape)
    if min(shape) != n:
        raise ValueError(f"diag: len(val) must be min(shape) = {min(shape)}, got {n}")
    ids = torch.arange(n, device=val.device)
    return SparseMatrix(_Structure(ids, ids, shape, diag=True), val)


def identity(shape: Tuple[int, int], d: Optional[int] = None, dtype: Optional[torch.dtype] = None,
             device=None) -> SparseMatrix:
    """diag of ones: scalar values, or [d] ones per entry."""
    shape = _shape(shape)
    n = min(shape)
    return diag(torch.ones((n,) if d is None else (n, d), dtype=dtype, device=device), shape)


def from_torch_sparse(torch_sparse_tensor: torch.Tensor) -> SparseMatrix:
    """From a torch sparse tensor of COO, CSR or CSC layout (its first two dims are the matrix)."""
    t = torch_sparse_tensor
    shape = tuple(t.shape[:2])
    if t.layout == torch.sparse_coo:
        return spmatrix(t._indices(), t._values(), shape)
    if t.layout == torch.sparse_csr:
        return from_csr(t.crow_indices(), t.col_indices(), t.values(), shape)
    if t.layout == torch.sparse_csc:
        return from_csc(t.ccol_indices(), t.row_indices(), t.values(), shape)
    raise ValueError(f"from_torch_sparse: layout {t.layout} is not a sparse COO, CSR or CSC layout")


def to_torch_sparse_coo(spmat: SparseMatrix) -> torch.Tensor:
    return torch.sparse_coo_tensor(spmat.indices(), spmat.val, spmat.shape + tuple(spmat.val.shape[1:]))


def to_torch_sparse_csr(spmat: SparseMatrix) -> torch.Tensor:
    indptr, cols, order = spmat.csr()
    val = spmat.val[order]
    return torch.sparse_csr_tensor(indptr, cols, val, spmat.shape + tuple(val.shape[1:]))


def to_torch_sparse_csc(spmat: SparseMatrix) -> torch.Tensor:
    indptr, rows, order = spmat.csc()
    val = spmat.val[order]
    return torch.sparse_csc_tensor(indptr, rows, val, spmat.shape + tuple(val.shape[1:]))


# --- helpers shared with _ops.py
def gather_lines(along: torch.Tensor, extent: int, wanted: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """Every entry of each line in `wanted` (a row when `along` holds the entries' rows, a column when their
    columns), lines in wanted's order, entries in their given order within a line: (position in wanted of
    each, entry index of each). The CSR walk of index_select and of sparse x sparse products."""
    order = torch.sort(along, stable=True).indices
    counts = torch.bincount(along, minlength=extent)
    starts = torch.cumsum(counts, 0) - counts
    per = counts[wanted]
    position = torch.repeat_interleave(torch.arange(wanted.numel(), device=along.device), per)
    first = torch.cumsum(per, 0) - per
    within = torch.arange(position.numel(), device=along.device) - first[position]
    return position, order[starts[wanted][position] + within]


def coalesced(row: torch.Tensor, col: torch.Tensor, val: torch.Tensor, shape, diag: bool = False) -> SparseMatrix:
    """The matrix of these entries sorted by (row, col) with duplicates summed (index_add: differentiable)."""
    keys = row * shape[1] + col
    unique, inverse = torch.unique(keys, sorted=True, return_inverse=True)
    summed = torch.zeros((unique.numel(),) + tuple(val.shape[1:]), dtype=val.dtype, device=val.device)
    summed = summed.index_add(0, inverse, val)
    return SparseMatrix(_Structure(unique // shape[1], unique % shape[1], shape, diag), summed)


def _keys(s: _Structure) -> torch.Tensor:
    return s.row * s.shape[1] + s.col


def _compressed(major: torch.Tensor, minor: torch.Tensor, extent: int):
    order = torch.sort(major, stable=True).indices
    indptr = torch.zeros(extent + 1, dtype=torch.int64, device=major.device)
    indptr[1:] = torch.cumsum(torch.bincount(major, minlength=extent), 0)
    # always the permutation, as DGL 2.1 gives it for a matrix built from COO (None only where it stores that
    # format itself): a script reads A.val[order], which None would silently turn into a [1, nnz] tensor
    return indptr, minor[order], order


def _expand_indptr(indptr: torch.Tensor, indices: torch.Tensor, what: str) -> torch.Tensor:
    indptr, indices = _ids(indptr, "indptr"), _ids(indices, "indices")
    return pointer_ids(indptr, indices.numel(), what)


def _ids(x, what: str) -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        x = torch.as_tensor(x)
    if x.dtype.is_floating_point or x.dtype == torch.bool or x.dim() != 1:
        raise ValueError(f"spmatrix: {what} must be a 1-D integer tensor, got {x.dtype} of shape {tuple(x.shape)}")
    return x.to(torch.int64)


def _shape(shape) -> Tuple[int, int]:
    try:
        rows, cols = (int(d) for d in shape)
    except (TypeError, ValueError):
        raise ValueError(f"spmatrix: shape must be (rows, columns), got {shape!r}") from None
    if rows < 0 or cols < 0:
        raise ValueError(f"spmatrix: shape must not be negative, got {(rows, cols)}")
    return rows, cols


def _values(val, nnz: int, device, given: bool = False) -> torch.Tensor:
    if val is None and not given:
        return torch.ones(nnz, device=device)
    if not isinstance(val, torch.Tensor):
        raise TypeError(f"spmatrix: val must be a torch.Tensor, got {type(val).__name__}")
    if val.dim() not in (1, 2) or val.shape[0] != nnz:
        raise DGLRuntimeError(f"spmatrix: val must be [nnz] or [nnz, D] with nnz = {nnz}, got "
                              f"{tuple(val.shape)}")
    return val


def _check_dim(dim, what: str) -> int:
    if dim not in (0, 1):
        raise ValueError(f"{what}: dim must be 0 (rows) or 1 (columns), got {dim!r}")
    return int(dim)


def _indent(text: str, width: int) -> str:
    return text.replace("\n", "\n" + " " * width)


def is_scalar(x) -> bool:
    """A Python number or a 0-d tensor: what scalar arithmetic takes."""
    return isinstance(x, Number) or (isinstance(x, torch.Tensor) and x.dim() == 0)
