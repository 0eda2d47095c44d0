"""DGL 2.1's SVD positional encoding of a homogeneous graph: dgl.svd_pe and the transform dgl.SVDPE, exported by
topograph.transforms and at the top level.

The adjacency is made dense and decomposed exactly (torch.linalg.svd in float64, as DGL's SciPy svd of the
int64 matrix): O(N^3) time and O(N^2) memory, for the small graphs positional encodings are used on.

Where these differ from DGL 2.1, on purpose:
  * random_flip draws its N signs from torch's generator (torch.rand(N) > 0.5); DGL draws them from NumPy's
    (np.random.rand), so torch.manual_seed does not repeat DGL's signs (np.random.seed does, in DGL only);
  * the encoding is on g's device (DGL's on the CPU), and k must be an int >= 1 (DGL returns [N, 0] for k = 0);
  * each singular pair's sign is LAPACK's choice through torch (DGL's through SciPy): the two may differ by a
    sign per pair (columns i and m + i together), and within a repeated singular value by any rotation.
"""
from __future__ import annotations

import torch

from ._base import DGLError
from ._graph import DGLGraph
from ._positional import _count, _dense_adjacency
from ._structure_ops import _homogeneous
from .transforms import BaseTransform

__all__ = ["svd_pe", "SVDPE"]


def svd_pe(g: DGLGraph, k: int, padding: bool = False, random_flip: bool = True) -> torch.Tensor:
    """dgl.svd_pe: float32 [N, 2k], [U_m sqrt(S_m), V_m sqrt(S_m)] for A = U S V^T (A[u, v] the number of
    edges u -> v) and its m = min(N, k) largest singular values, so that a node's row i and another's row j
    give A's best rank-m approximation at (i, j) as the dot product of i's first half and j's second.
    random_flip multiplies each node's row by a random sign (one torch.rand draw per node, as DGL draws one per
    node from NumPy), an augmentation for training. With N < k: padding=True appends 2 (k - N) zero columns
    (after the 2N, so the halves are U_N sqrt(S_N) and V_N sqrt(S_N) then zeros); padding=False is a DGLError
    (a ValueError, as DGL raises)."""
    _homogeneous(g, "svd_pe")
    k = _count(k, "svd_pe: k", 1)
    n = g.num_nodes()
    if n < k and not padding:
        raise DGLError(f"svd_pe: k={k} singular values need at least k nodes and the graph has {n}; pass "
                       f"padding=True for zero columns past the {n} it has")
    left, singular, right_t = torch.linalg.svd(_dense_adjacency(g, torch.float64))
    m = min(n, k)
    root = singular[:m].sqrt()
    encoding = torch.cat([left[:, :m] * root, right_t[:m].T * root], dim=1)
    if random_flip:
        sign = (torch.rand(n) > 0.5).to(torch.float64) * 2 - 1
        encoding = encoding * sign.to(encoding.device)[:, None]
    encoding = encoding.to(torch.float32)
    if n < k:
        encoding = torch.cat([encoding, encoding.new_zeros((n, 2 * (k - n)))], dim=1)
    return encoding


class SVDPE(BaseTransform):
    """dgl.SVDPE: g.ndata[feat_name] = svd_pe(g, k, padding, random_flip) (float32 [N, 2k]); as DGL's, g itself
    gets it and is returned."""

    def __init__(self, k: int, feat_name: str = "svd_pe", padding: bool = False, random_flip: bool = True):
        self.k = _count(k, "SVDPE: k", 1)
        if not isinstance(feat_name, str):
            raise DGLError(f"SVDPE: feat_name must be a str, got {feat_name!r}")
        self.feat_name, self.padding, self.random_flip = feat_name, padding, random_flip

    def __call__(self, g):
        g.ndata[self.feat_name] = svd_pe(g, self.k, self.padding, self.random_flip).to(g.device)
        return g
