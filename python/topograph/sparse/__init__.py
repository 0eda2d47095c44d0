"""dgl.sparse (DGL 2.1) over Topograph's kernels: `import topograph.sparse as dglsp`.

SparseMatrix and its constructors are in _matrix.py; spmm / bspmm, sddmm / bsddmm and softmax run on
Topograph's gspmm, gsddmm and edge_softmax over the matrix's structure as a graph; sparse x sparse, sums and
reductions are torch ops (_ops.py). g.adj() / g.adjacency_matrix() return a SparseMatrix (rows: sources).
"""
from ._matrix import (SparseMatrix, diag, from_coo, from_csc, from_csr, from_torch_sparse, identity, is_scalar,
                      spmatrix, to_torch_sparse_coo, to_torch_sparse_csc, to_torch_sparse_csr, val_like)
from ._ops import (add, bsddmm, bspmm, div, inv, matmul, mul, neg, power, reduce, sddmm, smax, smean, smin, softmax,
                   sp_add_v, sp_broadcast_v, sp_div_v, sp_mul_v, sp_sub_v, spmm, sprod, spspmm, sub, sum)

# DGL 2.1's names of the element-wise ops by operand kinds (dgl.sparse.elementwise_op_sp): the same functions
sp_add, sp_sub, sp_mul, sp_div, sp_power = add, sub, mul, div, power
spsp_add, spsp_mul, spsp_div = add, mul, div

__all__ = ["SparseMatrix", "spmatrix", "from_coo", "from_csr", "from_csc", "from_torch_sparse", "val_like", "diag",
           "identity", "to_torch_sparse_coo", "to_torch_sparse_csr", "to_torch_sparse_csc", "is_scalar", "spmm",
           "bspmm", "spspmm", "matmul", "sddmm", "bsddmm", "softmax", "reduce", "sum", "smax", "smin", "smean",
           "sprod", "add", "sub", "mul", "div", "power", "neg", "inv", "sp_broadcast_v", "sp_add_v", "sp_sub_v",
           "sp_mul_v", "sp_div_v", "sp_add", "sp_sub", "sp_mul", "sp_div", "sp_power", "spsp_add", "spsp_mul",
           "spsp_div"]
