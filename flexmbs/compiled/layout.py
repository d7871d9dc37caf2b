"""The layout of the packed model and workspace: which buffer and offset each field of
the model's tables (:class:`flexmbs.elements.registry.Tables`) and of the
:class:`~flexmbs.compiled.workspace.Workspace` lives at (docs/compiled.md, "Where the
arrays come from").

:func:`pack` lays the fields of a named tuple into one float and one integer buffer with
a header. The header row of a field is its index in the tuple: the workspace's are the
``W_*`` constants below, the tables' come from the element kinds' declarations
(:func:`flexmbs.elements.registry.header_rows`, ``T_*`` in the kernel modules). Plain
NumPy: the run side packs with it without importing numba.

Header row k of a tuple: (kind, offset, ndim, shape[0..4]); kind 0 float64 in ``F``,
1 int64 in ``IN``, 2 a Python int stored at ``IN[offset]``.
"""

from __future__ import annotations

import numpy as np

from .workspace import Workspace

#: Field order of the packed workspace (the header row of a field is its index here).
WORK_FIELDS = Workspace._fields

# Header rows of the workspace's fields, for the kernels' views.
W_ROT = 0
W_GBAR = 1
W_GGLOB = 2
W_BASIS = 3
W_MK_V = 4
W_MK_J = 5
W_S4 = 6
W_COEF = 7
W_OFFSET = 8
W_WGT = 9
W_QCUR = 10
W_V3A = 11
W_V3B = 12
W_V3C = 13
W_V3D = 14
W_V3E = 15
W_V3F = 16
W_V3G = 17
W_V3H = 18
W_V3I = 19
W_OM3 = 20
W_FULL = 21
W_MASS = 22
W_RIGID = 23
W_NLIN = 24
W_QS = 25
W_Y6 = 26
W_W6 = 27
W_Z6 = 28
W_Q6 = 29
W_H6 = 30
W_WR6 = 31
W_QR6 = 32
W_Q1 = 33
W_QD1 = 34
W_QDD1 = 35
W_LAM1 = 36
W_R = 37
W_PHI = 38
W_RHS = 39
W_MATRIX = 40
W_JAC = 41
W_A1 = 42
W_COUNTERS = 43
W_FLOATS = 44
W_SOLVE = 45
W_ANGLES = 46
W_SDM = 47
W_SDMM = 48
W_SDDM = 49
W_SVEC = 50
W_SMAT = 51
W_SD2 = 52
W_SMODES = 53
W_SP4 = 54
W_S34 = 55
W_RVEC = 56
W_RMAT = 57
W_RP4 = 58
W_R34 = 59
W_RBASIS = 60
W_RPC = 61
W_RJC = 62
W_RMKC = 63
W_HCS = 64
W_HV = 65
W_HHESS = 66
W_HJAC = 67
W_HSW = 68
W_HBASIS = 69
W_HUNIT = 70
W_FMAT = 71
W_FMODES = 72
W_FP4 = 73
W_FGCOL = 74
W_FVEC = 75
W_FMKC = 76
W_XBLK = 77
W_X3N = 78
W_X3 = 79
W_X34 = 80
W_XBASIS = 81
W_XP = 82
W_OVEC = 83
W_OCON = 84
W_BU_VEC = 85
W_BU_E = 86
W_BU_GRAD = 87
W_BU_RATE = 88
W_BU_BLK = 89
W_CT_STATE = 90
W_CT_OUT = 91
W_CT_VEC = 92
W_CT_JAC = 93
W_CT_GEN = 94
W_CT_BLK = 95
W_CT_Q = 96
W_CB_DU = 97
W_CB_G = 98
W_CB_V = 99
W_MK_W = 100
W_MK_VD = 101
W_CT_START = 102


def pack(parts):
    """(F, IN, H, views): the fields of the named tuple ``parts`` in two buffers, their
    header, and the same named tuple rebuilt from views into the buffers."""
    n_f = sum(int(np.asarray(v).size) for v in parts
              if isinstance(v, np.ndarray) and v.dtype.kind == "f")
    n_i = sum(int(v.size) for v in parts if isinstance(v, np.ndarray) and v.dtype.kind == "i")
    n_i += sum(1 for v in parts if not isinstance(v, np.ndarray))
    F = np.zeros(max(n_f, 1))
    IN = np.zeros(max(n_i, 1), dtype=np.int64)
    H = np.zeros((len(parts), 8), dtype=np.int64)
    views, o_f, o_i = [], 0, 0
    for k, v in enumerate(parts):
        if not isinstance(v, np.ndarray):
            IN[o_i] = int(v)
            H[k, :2] = (2, o_i)
            o_i += 1
            views.append(int(v))
            continue
        if v.ndim > 5:
            raise ValueError(f"field {parts._fields[k]} has {v.ndim} dimensions (at most 5)")
        buf, off = (F, o_f) if v.dtype.kind == "f" else (IN, o_i)
        view = buf[off:off + v.size].reshape(v.shape)
        view[...] = v
        H[k, 0] = 0 if v.dtype.kind == "f" else 1
        H[k, 1], H[k, 2] = off, v.ndim
        H[k, 3:3 + v.ndim] = v.shape
        views.append(view)
        if v.dtype.kind == "f":
            o_f += v.size
        else:
            o_i += v.size
    return F, IN, H, type(parts)(*views)


def _check_constants() -> None:
    """The header-row constants above follow the tuples' field order."""
    for i, name in enumerate(WORK_FIELDS):
        if globals()["W_" + name.upper()] != i:
            raise AssertionError(f"packing constant W_{name.upper()} is stale")


_check_constants()

#: What the kernel modules take from here (through :mod:`flexmbs.compiled.packing`):
#: the field orders, the header-row constants and :func:`pack`.
__all__ = ["WORK_FIELDS", "pack", *(name for name in tuple(globals()) if name[:2] == "W_")]
