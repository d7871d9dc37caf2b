"""The contacts' table (docs/contact.md, docs/compiled.md "Contacts"): the two markers,
the geometry, normal law and friction as codes, and their parameters.

The contact state (open, stick, slip; the approach speed at the impact onset; the stick
anchors) changes between steps: it is not a table but a row of the workspace
(``ct_state``) that the integrator writes before each step
(:meth:`flexmbs.engine.compiled_system.CompiledSystem.load_contact_states`)."""

from __future__ import annotations

import numpy as np

from ...compiled.workspace import Scratch
from ...contact.geometry import JournalBearing, SpherePlane, SphereSphere
from ...contact.laws import Hertz, HuntCrossley, Impulse, Penalty
from ...contact.sample import N_SAMPLE, N_STATE
from ..declaration import FLOAT, INT, Field, KindTables

KIND = "contact"

#: Geometry codes (``ct_kind[:, 0]``).
SPHERE_PLANE, SPHERE_SPHERE, JOURNAL_BEARING = 0, 1, 2
#: Normal-law codes (``ct_kind[:, 1]``): Hunt–Crossley and Lankarani–Nikravesh share the
#: form K δⁿ (1 + χ δ̇/v⁻) and differ in χ only.
PENALTY, HERTZ, DISSIPATIVE_HERTZ, IMPULSE = 0, 1, 2, 3
#: Friction codes (``ct_kind[:, 2]``).
NO_FRICTION, REGULARIZED, STICK_SLIP = 0, 1, 2

#: Columns of ``ct_par``.
P_R1, P_R2, P_K, P_N, P_CHI, P_MU_S, P_MU_K, P_V_S, P_V_REG, P_K_T, P_C_T = range(11)
N_PAR = 11


def geometry_code(geometry) -> tuple[int, float, float]:
    """(code, first radius, second radius) [m] of a contact geometry."""
    if isinstance(geometry, SpherePlane):
        return SPHERE_PLANE, geometry.radius, 0.0
    if isinstance(geometry, SphereSphere):
        return SPHERE_SPHERE, geometry.radius_a, geometry.radius_b
    if isinstance(geometry, JournalBearing):
        return JOURNAL_BEARING, geometry.bearing_radius, geometry.journal_radius
    raise TypeError(f"no kernel for the contact geometry {type(geometry).__name__}")


def law_code(law) -> tuple[int, float, float, float]:
    """(code, K or k, n or c, χ) of a normal law."""
    if isinstance(law, Impulse):
        return IMPULSE, 0.0, 0.0, 0.0
    if isinstance(law, Penalty):
        return PENALTY, law.k, law.c, 0.0
    if isinstance(law, HuntCrossley):  # and LankaraniNikravesh, its subclass
        return DISSIPATIVE_HERTZ, law.K, law.n, law.chi
    if isinstance(law, Hertz):
        return HERTZ, law.K, law.n, 0.0
    raise TypeError(f"no kernel for the normal law {type(law).__name__}")


def _row(contact):
    geo, r1, r2 = geometry_code(contact.geometry)
    law, k, n, chi = law_code(contact.law)
    par = np.zeros(N_PAR)
    par[[P_R1, P_R2, P_K, P_N, P_CHI]] = r1, r2, k, n, chi
    fr = contact.friction
    friction = NO_FRICTION
    if fr is not None:
        friction = STICK_SLIP if fr.model == "stick-slip" else REGULARIZED
        par[P_MU_S] = fr.mu_static
        par[P_MU_K] = fr.mu_static if fr.mu_kinetic is None else fr.mu_kinetic
        par[P_V_S] = 0.0 if fr.stribeck_velocity is None else fr.stribeck_velocity
        par[P_V_REG] = fr.v_reg
        par[P_K_T] = 0.0 if fr.stick_stiffness is None else fr.stick_stiffness
        par[P_C_T] = fr.stick_damping
    return (geo, law, friction), par


def _build(system, ctx):
    contacts = ctx.forces(KIND)
    ct_mark = ctx.couple([[ctx.load_marker(c.markers[0]), ctx.load_marker(c.markers[1])]
                          for c in contacts])
    rows = [_row(c) for c in contacts]
    return dict(
        ct_mark=ct_mark,
        ct_kind=np.array([r[0] for r in rows], np.int64).reshape(-1, 3),
        ct_par=np.array([r[1] for r in rows], float).reshape(-1, N_PAR))


def _refusal(contact) -> str | None:
    try:
        geometry_code(contact.geometry)
        law_code(contact.law)
    except TypeError as exc:
        return f"contact {contact.name!r}: {exc}"
    return None


def _count(sizes) -> int:
    """The model's contacts."""
    return sizes.tables.ct_mark.shape[0]


TABLE = KindTables(KIND, (
    Field("ct_mark", INT, "(nct, 2) markers of side A (plane, sphere a, bearing) and "
                          "side B (sphere, sphere b, journal)"),
    Field("ct_kind", INT, "(nct, 3) geometry, normal-law and friction codes"),
    Field("ct_par", FLOAT, "(nct, 11) radii [m], K [N/mⁿ] or k [N/m], n or c [N s/m], χ, "
                           "μ_s, μ_k, Stribeck speed [m/s] (0: none), v_reg [m/s], "
                           "stick stiffness [N/m] and damping [N s/m]"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND,
    refusal=_refusal, scratch=(
        Scratch("ct_state", "(nct, N_STATE) mode, v⁻ (NaN: none), anchored, anchors, "
                "offset", lambda s: np.full((_count(s), N_STATE), np.nan)),
        Scratch("ct_out", "(nct, N_SAMPLE) each contact's sample (flexmbs.contact.sample)",
                lambda s: np.zeros((_count(s), N_SAMPLE))),
        Scratch("ct_vec", "(4, 3) contact points on A and B, relative velocity, scratch",
                lambda s: np.zeros((4, 3))),
        Scratch("ct_jac", "(4, 3, 2(7+M)) a marker's force and torque Jacobians, J_cA, "
                "J_cB", lambda s: np.zeros((4, 3, s.pair))),
        Scratch("ct_gen", "(2, 2(7+M)) generalized force of a contact, unperturbed and "
                "perturbed", lambda s: np.zeros((2, s.pair))),
        Scratch("ct_blk", "(2, 2(7+M), 2(7+M)) the K and C blocks of a contact",
                lambda s: np.zeros((2, s.pair, s.pair))),
        Scratch("ct_q", "(2, n_q) the perturbed q and q̇ of the difference quotients",
                lambda s: np.zeros((2, s.n_q))),
        Scratch("ct_start", "(nct, N_SAMPLE) each contact's sample at the step's start "
                "(a batch of steps, engine.newton.run_steps)",
                lambda s: np.zeros((_count(s), N_SAMPLE)))))
