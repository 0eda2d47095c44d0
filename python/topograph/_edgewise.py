"""The top-level dgl.copy_u, dgl.copy_v and dgl.u_{add,sub,mul,div,dot}_v. DGL 2.1 defines these apart from dgl.ops's
(dgl/mpops/edgewise.py) with their own parameter names, (g, x_node, etype=None) and (g, x_node, y_node,
etype=None), so that a script's dgl.u_dot_v(g, x_node=h, y_node=h) reaches them by DGL's keywords; each is the
topograph.ops op of that name (whose parameters stay dgl.ops's x / y)."""
from __future__ import annotations

from . import ops


def copy_u(g, x_node, etype=None):
    """Per edge (of relation etype, when given), its source's row of x_node: [E, ...]."""
    return ops.copy_u(g, x_node, etype)


def copy_v(g, x_node, etype=None):
    """Per edge (of relation etype, when given), its destination's row of x_node: [E, ...]."""
    return ops.copy_v(g, x_node, etype)


def _node_pair(name: str):
    op = getattr(ops, name)

    def f(g, x_node, y_node, etype=None):
        return op(g, x_node, y_node, etype)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"Per edge (of relation etype, when given), its source's row of x_node {name[2:-2]} its "
                 "destination's row of y_node, as topograph.ops." + name)
    return f


u_add_v = _node_pair("u_add_v")
u_sub_v = _node_pair("u_sub_v")
u_mul_v = _node_pair("u_mul_v")
u_div_v = _node_pair("u_div_v")
u_dot_v = _node_pair("u_dot_v")
