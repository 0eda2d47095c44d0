"""dgl.nn.NodeEmbedding (DGL 2.1's names and behaviour, one process): a [num_embeddings, embedding_dim] float32
table (on `device`) read by rows, emb(node_ids, device) -> rows that record their gradient, for the sparse
optimisers of topograph.optim (SparseAdam, SparseAdagrad), which update only the rows a step read. This is
how DeepWalk and metapath2vec train embeddings of millions of nodes without a dense gradient. DGL's
multi-process sharing (shared memory, NCCL) is not here: with torch.distributed at world size > 1 it is an
error, not a silent per-process copy."""
from __future__ import annotations

import torch

from .._base import DGLError


class NodeEmbedding:
    """NodeEmbedding(num_embeddings, embedding_dim, name, init_func=None, device=None, partition=None):
    init_func(tensor) fills the table (zeros otherwise, as DGL's new shared array). weight: the table."""

    def __init__(self, num_embeddings: int, embedding_dim: int, name: str, init_func=None, device=None,
                 partition=None):
        if torch.distributed.is_available() and torch.distributed.is_initialized() and \
                torch.distributed.get_world_size() > 1:
            raise DGLError("NodeEmbedding: one process only here (DGL's multi-process sharing is not implemented); "
                           "run one process, or keep a dense torch.nn.Embedding under DistributedDataParallel")
        table = torch.zeros(num_embeddings, embedding_dim, dtype=torch.float32,
                            device=torch.device("cpu") if device is None else torch.device(device))
        self._tensor = init_func(table) if init_func is not None else table
        self._name, self._num_embeddings, self._embedding_dim = name, num_embeddings, embedding_dim
        self._trace, self._optm_state, self._partition = [], None, partition

    def __call__(self, node_ids: torch.Tensor, device=torch.device("cpu")) -> torch.Tensor:
        """The rows of node_ids on `device`; while autograd records, they require grad and are traced for the
        sparse optimiser's next step."""
        rows = self._tensor[node_ids].to(device)
        if torch.is_grad_enabled():
            rows.requires_grad_(True)
            self._trace.append((node_ids.to(device), rows))
        return rows

    @property
    def weight(self) -> torch.Tensor:
        return self._tensor

    @property
    def name(self) -> str:
        return self._name

    @property
    def num_embeddings(self) -> int:
        return self._num_embeddings

    @property
    def embedding_dim(self) -> int:
        return self._embedding_dim

    @property
    def trace(self) -> list:
        return self._trace

    def reset_trace(self) -> None:
        self._trace = []

    def set_optm_state(self, state) -> None:
        self._optm_state = state

    @property
    def optm_state(self):
        return self._optm_state

    @property
    def partition(self):
        return self._partition

    @property
    def rank(self) -> int:
        return -1

    @property
    def world_size(self) -> int:
        return 0

    def all_set_embedding(self, values: torch.Tensor) -> None:
        self._tensor[:] = values.to(self._tensor.device)

    def all_get_embedding(self) -> torch.Tensor:
        return self._tensor
