"""The state-dependent callables' part of the force kinds' tangents in compiled code
(docs/compiled.md, "Callables"): a force whose value u is a callable of the state adds
g ⊗ du/dq to K and g ⊗ du/dq̇ to C, g = −∂Q/∂u its load at a unit input, with the
derivative rows du/dq, du/dq̇ Python writes into the workspace (``cb_du``)."""

from __future__ import annotations

from ..compiled._jit import njit
from ..compiled.packing import W_CB_DU, W_CB_G, floats1, floats3


@njit(cache=True)
def _input_load(WF, WH):
    """The workspace's cb_g zeroed: a kind's −∂Q/∂u of one column of u goes there (its
    load at a unit input, through :func:`_apply_load`), for :func:`_input_tangent_into`."""
    g = floats1(WF, WH, W_CB_G)
    for i in range(g.size):
        g[i] = 0.0
    return g


@njit(cache=True)
def _input_tangent_into(WF, WH, col, top, k_scale, c_scale):
    """top += k_scale g ⊗ du/dq + c_scale g ⊗ du/dq̇ for the state-dependent callable's
    column ``col`` of u: g = −∂Q/∂u (cb_g, :func:`_input_load`), du/dq and du/dq̇ its
    derivative rows over all of q (cb_du, written by Python; docs/compiled.md,
    "Callables"). The rows are those g loads, every column (a callable may read any
    coordinate)."""
    g = floats1(WF, WH, W_CB_G)
    du = floats3(WF, WH, W_CB_DU)
    for i in range(g.size):
        gi = g[i]
        if gi != 0.0:
            for j in range(g.size):
                top[i, j] += gi * (k_scale * du[0, col, j] + c_scale * du[1, col, j])
