"""torch.compile over the package's models and DGL-style code: the package's calls run eagerly inside the compiled
function (topograph/_compile.py), so the results are the eager ones. Before, TorchDynamo failed on the first C++
object it met ("expected FunctionType found nb_method")."""
import pytest
import torch

import topograph
import topograph.function as fn
from topograph.models import MultiScaleTransformer, StarTransformer
from topograph.nn import GATConv, GraphConv, SAGEConv


def _tensors(x):
    return [t for t in (x if isinstance(x, (tuple, list)) else (x,)) if torch.is_tensor(t)]


def _same(eager_out, compiled_out):
    for a, b in zip(_tensors(eager_out), _tensors(compiled_out), strict=True):
        torch.testing.assert_close(b, a)


@pytest.mark.parametrize("model_class", [StarTransformer, MultiScaleTransformer])
def test_compiled_sequence_models_give_the_eager_outputs(model_class):
    torch.manual_seed(0)
    model = model_class(16, 4, 1, vocab_size=50).eval()
    ids = torch.randint(0, 50, (8,))
    _same(model(ids, [5, 3]), torch.compile(model)(ids, [5, 3]))


class _GNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = GraphConv(5, 8)
        self.gat = GATConv(8, 4, 2)
        self.sage = SAGEConv(8, 3, "mean")

    def forward(self, g, x):
        h = torch.relu(self.conv(g, x))
        return self.gat(g, h).flatten(1).sum(1) + self.sage(g, h).sum(1)


def test_compiled_gnn_gives_the_eager_outputs_and_gradients():
    torch.manual_seed(0)
    g = topograph.graph(([0, 1, 2, 3, 1], [1, 2, 3, 0, 0]), num_nodes=4)
    x = torch.randn(4, 5)
    model = _GNN()
    compiled = torch.compile(model)
    out = model(g, x)
    out.square().sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    out_compiled = compiled(g, x)
    out_compiled.square().sum().backward()
    torch.testing.assert_close(out_compiled, out)
    for p, grad in zip(model.parameters(), grads):
        torch.testing.assert_close(p.grad, grad)


def test_compiled_message_passing_function():
    g = topograph.graph(([0, 1, 2, 3], [1, 2, 3, 0]), num_nodes=4)

    def passing(g, x):
        with g.local_scope():
            g.ndata["h"] = x
            g.update_all(fn.copy_u("h", "m"), fn.sum("m", "o"))
            g.apply_edges(fn.u_dot_v("h", "h", "s"))
            return g.ndata["o"] * 2, g.edata["s"] + 1

    x = torch.randn(4, 5)
    _same(passing(g, x), torch.compile(passing)(g, x))
