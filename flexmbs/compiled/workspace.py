"""Buffers the compiled kernels write into, owned by one run (docs/compiled.md, "Where
the arrays come from").

The workspace is declared, not written out: :data:`CORE` lists the buffers the engine
and the shared kernels use (the body frames, the marker vectors, the Newton state, the
bodies' and the tangents' scratch), each a :class:`Scratch` with its name, what it
holds and how big it is for a given model (:class:`Sizes`). An element kind declares
its own scratch beside its tables (``KindTables.scratch``, e.g. the bushing's
``bu_vec``); :mod:`flexmbs.elements.registry` appends those after :data:`CORE` and
builds the one named tuple the kernels read. The header row of a core field is its
place in :data:`CORE` (``W_ROT``, … in :mod:`flexmbs.compiled.layout`), that of a
kind's field comes from ``registry.work_rows``. Plain NumPy, no numba.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Sizes:
    """The dimensions of one model that the workspace's shapes are written in."""

    tables: Any  #: the model's tables (:class:`flexmbs.elements.registry.Tables`)
    nb: int  #: bodies
    nk: int  #: markers
    ne: int  #: constraint equations
    m: int  #: padded mode count M ≥ 1
    n_q: int  #: generalized coordinates
    n_c: int  #: constraint rows
    n_u: int  #: columns of the inputs u

    @property
    def n6(self) -> int:
        """6 + M: a flexible body's quasi-velocities."""
        return 6 + self.m

    @property
    def n7(self) -> int:
        """7 + M: a flexible body's coordinates."""
        return 7 + self.m

    @property
    def m1(self) -> int:
        """max(M, 1)."""
        return max(self.m, 1)

    @property
    def nqc(self) -> int:
        """n_q + n_c: the iteration matrix's rows."""
        return self.n_q + self.n_c

    @property
    def pair(self) -> int:
        """2(7 + M): the coordinates of a marker pair's two bodies."""
        return 2 * (7 + self.m)

    @classmethod
    def of(cls, T) -> Sizes:
        return cls(T, T.b_kind.size, T.k_body.size, T.e_row.size, T.f_N.shape[1], T.n_q,
                   T.n_c, T.u_call.size)


@dataclass(frozen=True)
class Scratch:
    """One workspace buffer: its name (header row ``W_<NAME>``), what it holds, and
    ``make(sizes)``, the zeroed (or initial) array for a model of those sizes."""

    name: str
    doc: str
    make: Callable[[Sizes], np.ndarray]


def _zeros(*dims: str | int) -> Callable[[Sizes], np.ndarray]:
    """``make`` of a zeroed float array whose dimensions are ints or names of
    :class:`Sizes`' attributes ("nb", "n6", "pair", …)."""
    named = tuple((k, d) for k, d in enumerate(dims) if isinstance(d, str))
    if not named:
        return lambda s: np.zeros(dims)

    def make(s):
        shape = list(dims)
        for k, d in named:
            shape[k] = getattr(s, d)
        return np.zeros(shape)

    return make


#: The engine's and the shared kernels' buffers, in header-row order.
CORE = (
    # the bodies' frames and the markers (elements.markers)
    Scratch("rot", "(nb, 3, 3) A(p) of each body", _zeros("nb", 3, 3)),
    Scratch("gbar", "(nb, 3, 4) Ḡ(p)", _zeros("nb", 3, 4)),
    Scratch("gglob", "(nb, 3, 4) G(p)", _zeros("nb", 3, 4)),
    Scratch("basis", "(nb, 3, 12) B(p) of ∂(A s)/∂p", _zeros("nb", 3, 12)),
    Scratch("mk_v", "(nk, 4, 3) the marker vectors", _zeros("nk", 4, 3)),
    Scratch("mk_j", "(nk, 4, 3, 7+M) the marker Jacobians", _zeros("nk", 4, 3, "n7")),
    Scratch("mk_load", "(3, 3) a marker load's scratch (elements.markers): Aᵀ times the "
            "load, the lever arm, arm × load", _zeros(3, 3)),
    Scratch("s4", "(4, 3)", _zeros(4, 3)),
    Scratch("coef", "(ne, 8, 8) equation coefficients (the drives' updated at each t)",
            lambda s: s.tables.e_coef.copy()),
    Scratch("offset", "(ne,) translation-drive values s(t)", _zeros("ne")),
    Scratch("wgt", "(ne, 8, 3) each equation's weights ∂Φ_e/∂V at the last residual",
            _zeros("ne", 8, 3)),
    Scratch("qcur", "(n_q,) the q of the last residual", _zeros("n_q")),
    # a body's inertia terms (elements.floating_frame, rigid_body, flexible_body)
    Scratch("qbar_vec", "(3, 3) Q̄'s scratch (floating_frame.general_qbar): M̄w's "
            "translational and rotational parts h_R, h_θ, and ω", _zeros(3, 3)),
    Scratch("rb_vec", "(9, 3) a rigid body's residual (rigid_body.kernels): ω̄, α̅, "
            "R̈ − g, I_O ω̄, the moment, ω̄×(ω̄×S) − S×α̅, ω̄×S, ω̄×(ω̄×S), S×α̅",
            _zeros(9, 3)),
    Scratch("body_gravity", "(3,) Aᵀg, gravity in a flexible body's axes (its residual)",
            _zeros(3)),
    Scratch("full", "(6+M, 6+M) M̄ of a body", _zeros("n6", "n6")),
    Scratch("mass", "(6+M, 6+M)", _zeros("n6", "n6")),
    Scratch("rigid", "(6+M, 6+M)", _zeros("n6", "n6")),
    Scratch("nlin", "(6+M, 3) N_jᵀ w", _zeros("n6", 3)),
    Scratch("qs", "(M, 3, 3) the mode products", _zeros("m", 3, 3)),
    Scratch("y6", "(6+M,)", _zeros("n6")),
    Scratch("w6", "(6+M,)", _zeros("n6")),
    Scratch("z6", "(6+M,)", _zeros("n6")),
    Scratch("q6", "(6+M,)", _zeros("n6")),
    Scratch("h6", "(6+M,)", _zeros("n6")),
    Scratch("wr6", "(6+M,)", _zeros("n6")),
    Scratch("qr6", "(6+M,)", _zeros("n6")),
    # the Newton state of the step being computed (engine.newton)
    Scratch("q1", "(n_q,)", _zeros("n_q")),
    Scratch("qd1", "(n_q,)", _zeros("n_q")),
    Scratch("qdd1", "(n_q,)", _zeros("n_q")),
    Scratch("lam1", "(n_c,)", _zeros("n_c")),
    Scratch("r", "(n_q,)", _zeros("n_q")),
    Scratch("phi", "(n_c,)", _zeros("n_c")),
    Scratch("rhs", "(n_q + n_c,)", _zeros("nqc")),
    Scratch("matrix", "(n_q + n_c, n_q + n_c) iteration matrix (before factoring)",
            _zeros("nqc", "nqc")),
    Scratch("jac", "(n_c, n_q)", _zeros("n_c", "n_q")),
    Scratch("a1", "(n_q,)", _zeros("n_q")),
    Scratch("counters", "int64 (4,): iteration, stale, residual at hand, inputs",
            lambda s: np.zeros(4, np.int64)),
    Scratch("floats", "(2,): last scaled correction, current one", _zeros(2)),
    Scratch("solve", "(n_q + n_c,) scratch of the sparse triangular solves", _zeros("nqc")),
    Scratch("angles", "(nt + nv,) last angle of each rotational spring–damper, then of "
            "each joint servo [rad], NaN: none",
            lambda s: np.full(s.tables.t_mark.shape[0] + s.tables.v_mark.shape[0], np.nan)),
    # geometric stiffening's scratch (flexible_body.stiffening)
    Scratch("sdm", "(6+M, 6+M) ΔM̄", _zeros("n6", "n6")),
    Scratch("sdmm", "(6+M, 6+M) its coupling mode's part", _zeros("n6", "n6")),
    Scratch("sddm", "(max(M, 1), 6+M, 6+M) ∂ΔM̄/∂ξ_j", _zeros("m1", "n6", "n6")),
    Scratch("svec", "(6, 6+M) y, w, Q̄_s, z, ḡ, ∂Q̄_s/∂ξ_j", _zeros(6, "n6")),
    Scratch("smat", "(3, 7+M, 7+M) ∂z/∂w, ∂ΔM̄_m/∂ξ_j, a product with C(p)",
            _zeros(3, "n7", "n7")),
    Scratch("sd2", "(max(M, 1), 6+M, 6+M) ∂²ΔM̄/∂ξ_j∂ξ_i", _zeros("m1", "n6", "n6")),
    Scratch("smodes", "(6+M, max(M, 1)) ∂z/∂ξ", _zeros("n6", "m1")),
    Scratch("sp4", "(3, 6+M, 4) ∂y/∂p, ∂w/∂p, ∂z/∂p", _zeros(3, "n6", 4)),
    Scratch("s34", "(3, 4)", _zeros(3, 4)),
    # a rigid body's matrices and their scratch (rigid_body.kernels)
    Scratch("rvec", "(6, 6) y, w, Q̄, z, Aᵀg (then Aᵀ(R̈ − g)), R̈ − g", _zeros(6, 6)),
    Scratch("rmat", "(2, 6, 6) M̄, ∂Q̄/∂w", _zeros(2, 6, 6)),
    Scratch("rp4", "(3, 6, 4) ∂y/∂p, ∂w/∂p, ∂z/∂p", _zeros(3, 6, 4)),
    Scratch("r34", "(2, 3, 4)", _zeros(2, 3, 4)),
    Scratch("rbasis", "(3, 12) B(p*) of the conjugate parameters", _zeros(3, 12)),
    Scratch("rpc", "(4,) p* = (e0, −e)", _zeros(4)),
    Scratch("rjc", "(6, 7)", _zeros(6, 7)),
    Scratch("rmkc", "(3, 7, 7) M, K, C", _zeros(3, 7, 7)),
    # the constraint Hessian of a marker pair (elements.markers.bilinear_hessian_into)
    Scratch("hcs", "(2, 8, 8) Σ λ C, its symmetric part", _zeros(2, 8, 8)),
    Scratch("hv", "(3, 8, 3) Σ λ l, the markers' vectors, their weights", _zeros(3, 8, 3)),
    Scratch("hhess", "(2(7+M), 2(7+M))", _zeros("pair", "pair")),
    Scratch("hjac", "(8, 3, 2(7+M)) the markers' Jacobians side by side",
            _zeros(8, 3, "pair")),
    Scratch("hsw", "(2, 4, 3) a marker's deformed vectors s_a, Σ_a s_a wᵀ (3x3)",
            _zeros(2, 4, 3)),
    Scratch("hbasis", "(3, 12)", _zeros(3, 12)),
    Scratch("hunit", "(4,)", _zeros(4)),
    # a flexible body's matrices and their scratch (flexible_body.kernels)
    Scratch("fmat", "(6, 7+M, 7+M) two-way M̄, its coupling mode's, the tangents' M̄, "
            "∂Q̄/∂w, (∂Q̄/∂w) C, M̄ C", _zeros(6, "n7", "n7")),
    Scratch("fmodes", "(4, 6+M, max(M, 1)) ∂Q̄/∂ξ, (∂M̄/∂ξ) w, (∂M̄/∂ξ)(ω̄ × v̄), ∂z/∂ξ",
            _zeros(4, "n6", "m1")),
    Scratch("fp4", "(3, 6+M, 4) ∂y/∂p, ∂w/∂p, ∂z/∂p", _zeros(3, "n6", 4)),
    Scratch("fgcol", "(6+M, 3) the gravity columns", _zeros("n6", 3)),
    Scratch("fvec", "(8, 7+M) y, w, Q̄, one Q̄ form, ω̄ × v̄, z, Aᵀg, a residual",
            _zeros(8, "n7")),
    Scratch("fmkc", "(3, (7+M)²) M, K, C, each viewed as (7+n, 7+n)",
            lambda s: np.zeros((3, s.n7 ** 2))),
    # the forces' scratch (actuators, spring–dampers, loads, rotational springs, servos)
    Scratch("force_vec", "(3, 3) a force's load vector, its lever arm (loads), its "
            "direction or moment", _zeros(3, 3)),
    Scratch("pair_rate", "(3,) the relative rate of a marker pair, ṙ_j − ṙ_i or "
            "ω_j − ω_i (elements.joint_coordinate; a spring–damper's ḋ)", _zeros(3)),
    Scratch("xblk", "(2, 2(7+M), 2(7+M)) K and C blocks of a marker pair",
            _zeros(2, "pair", "pair")),
    Scratch("x3n", "(6, 3, 2(7+M)) Jacobians and their derivatives over both markers",
            _zeros(6, 3, "pair")),
    Scratch("x3", "(4, 3) lever arm, Aᵀ·load, rates, the load vector", _zeros(4, 3)),
    Scratch("x34", "(3, 3, 4)", _zeros(3, 3, 4)),
    Scratch("xbasis", "(2, 3, 12)", _zeros(2, 3, 12)),
    Scratch("xp", "(4,)", _zeros(4)),
    # the outputs' scratch (engine.dispatch.outputs_entry, after the run)
    Scratch("ovec", "(2, n_q) Φ_qᵀλ, the loads", _zeros(2, "n_q")),
    Scratch("ocon", "(2, n_c) Φ, Φ_q q̇", _zeros(2, "n_c")),
    # the state-dependent callables (docs/compiled.md, "Callables"), n_u columns of u
    Scratch("cb_du", "(2, n_u, n_q) du/dq, du/dq̇ of each column (callables' only)",
            lambda s: np.zeros((2, s.n_u, s.n_q))),
    Scratch("cb_g", "(n_q,) −∂Q/∂u of one column (the load per unit input)", _zeros("n_q")),
    Scratch("cb_v", "(2, 3) a unit input's load vector, a load's value from u",
            _zeros(2, 3)),
)

#: The names of the core fields, in header-row order.
CORE_FIELDS = tuple(s.name for s in CORE)
