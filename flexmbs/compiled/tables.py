"""The compiled form of a System: flat arrays for the numba kernels (docs/compiled.md).

:func:`compile_tables` turns a :class:`~flexmbs.assembly.system.System` into a
:class:`Tables` named tuple of NumPy arrays (struct of arrays, padded to the largest mode
count), once per run. Names stay in Python; the kernels see numbers only:

* bodies by kind (0 rigid, 1 flexible), their coordinate offsets, coupling codes
  (:data:`COUPLING_CODES`), rigid mass data and the flexible bodies' invariants
  (M̄(0), N_j, Q_ij, S̄, M_ff, K_ff, D_ff) — docs/theory_ffrf.md;
* markers: body, body-frame point and axes at ξ = 0 with their ξ-derivatives (the
  ``marker_shapes`` of the body) and the rotational shapes Ψ of the angular Jacobian;
* the constraint equations as bilinear forms in their markers' vectors (the arrays of
  :class:`~flexmbs.assembly.constraints.ConstraintPlan`, which the NumPy path uses too),
  coordinate drives and the Euler-parameter normalization rows;
* joint actuators whose value is a function of time only;
* translational spring–damper–actuators (constant k, c, L0; an actuator force given by
  a time profile or none) and point forces and torques of constant value (global or
  marker axes), distributed loads of constant value on flexible bodies, and rotational
  spring–dampers (constant k, c, θ0).

A model the kernels cannot evaluate gets ``None`` and the reason
(:func:`unsupported_reason`): it runs on the NumPy path.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..frame.coupling import Coupling, _flat

#: Coupling mode → integer code used by the kernels.
COUPLING_CODES = {Coupling.TWO_WAY: 0, Coupling.ONE_WAY: 1, Coupling.RIGID: 2,
                  Coupling.NO_MRF: 3}

#: Equation kinds of the bilinear constraint table.
EQ_JOINT, EQ_ROTATION, EQ_TRANSLATION = 0, 1, 2


class Tables(NamedTuple):
    """Flat arrays of one System (shapes: nb bodies, nf flexible, M = max modes (≥ 1),
    nk markers, ne bilinear equations, nd drives, na actuators)."""

    n_q: int
    n_c: int
    gravity: np.ndarray  # (3,) [m/s²]
    # bodies
    b_kind: np.ndarray  # (nb,) 0 rigid, 1 flexible
    b_start: np.ndarray  # (nb,) first coordinate
    b_nm: np.ndarray  # (nb,) modes (0 for rigid bodies)
    b_mode: np.ndarray  # (nb,) coupling code
    b_flex: np.ndarray  # (nb,) row in the flexible tables, -1 for rigid bodies
    b_norm: np.ndarray  # (nb,) row of the normalization equation pᵀp − 1
    r_mass: np.ndarray  # (nb,) [kg]
    r_io: np.ndarray  # (nb, 3, 3) inertia about the body-frame origin [kg m²]
    r_s: np.ndarray  # (nb, 3) first moment m c [kg m]
    r_offset: np.ndarray  # (nb,) 1 when the centre of mass is off the origin
    f_m0: np.ndarray  # (nf, 6+M, 6+M) M̄(0) (flattened-invariant layout)
    f_inv_m0: np.ndarray  # (nf, 6+M, 6+M) invariant M0 (gravity rows of one-way/rigid)
    f_N: np.ndarray  # (nf, M, 6+M, 3)
    f_Q: np.ndarray  # (nf, M, M, 3, 3)
    f_S: np.ndarray  # (nf, 3, M)
    f_mff: np.ndarray  # (nf, M, M)
    f_kff: np.ndarray  # (nf, M, M)
    f_dff: np.ndarray  # (nf, M, M)
    f_mass: np.ndarray  # (nf,) total mass [kg] (potential energy)
    # markers
    k_body: np.ndarray  # (nk,) body index, -1 for ground
    k_base: np.ndarray  # (nk, 4, 3) point and axes at ξ = 0, body frame
    k_shapes: np.ndarray  # (nk, 4, 3, M) their ξ-derivatives (zero where not seen)
    k_psi: np.ndarray  # (nk, 3, M) rotational shapes of the angular Jacobian
    k_phi: np.ndarray  # (nk, 3, M) translational shapes of the force Jacobian
    # bilinear equations
    e_coef: np.ndarray  # (ne, 8, 8) C_k (rotation drives: filled per call from θ_d)
    e_lin: np.ndarray  # (ne, 8, 3)
    e_row: np.ndarray  # (ne,) constraint row
    e_mark: np.ndarray  # (ne, 2) markers i, j
    e_kind: np.ndarray  # (ne,) EQ_JOINT, EQ_ROTATION, EQ_TRANSLATION
    e_drive: np.ndarray  # (ne,) drive index (−1 for joints)
    e_npairs: np.ndarray  # (ne,) nonzero entries of C_k (at most 4)
    e_pairs: np.ndarray  # (ne, 4, 2) their positions (a, b)
    # coordinate drives
    c_row: np.ndarray  # (ncd,)
    c_coord: np.ndarray  # (ncd,)
    c_drive: np.ndarray  # (ncd,)
    # joint actuators with a time profile
    a_kind: np.ndarray  # (na,) 0 torque about z_i, 1 force along z_i
    a_mark: np.ndarray  # (na, 2) markers i, j
    # sparsity of the iteration matrix (entries that can be nonzero)
    p_row: np.ndarray  # (np,) rows of the n_q x n_q block M + C_t/… + K_t/…
    p_col: np.ndarray  # (np,) its columns
    j_row: np.ndarray  # (nj,) rows of Φ_q
    j_col: np.ndarray  # (nj,) its columns
    # geometric stiffening (docs/theory_stiffening.md; compiled/stiffening.py)
    f_stiff: np.ndarray  # (nf,) 1 when the body has stiffening on
    f_ska: np.ndarray  # (nf, 3, M, M) K_{a_x}, K_{a_y}, K_{a_z}
    f_skd: np.ndarray  # (nf, 3, M, M) K_{ω̇_x}, K_{ω̇_y}, K_{ω̇_z}
    f_sxc: np.ndarray  # (nf, 3, 3, M, M) Ξ_ab(ξ) = ξᵀ f_sxc[a, b] ξ
    # spring–damper–actuators (docs/compiled.md)
    s_mark: np.ndarray  # (ns, 2) markers i, j
    s_par: np.ndarray  # (ns, 3) stiffness k [N/m], damping c [N s/m], free length L0 [m]
    s_act: np.ndarray  # (ns,) column of its actuator force in u, −1 without one
    # point loads of constant value
    l_mark: np.ndarray  # (nl,) marker
    l_kind: np.ndarray  # (nl,) 0 torque, 1 force
    l_frame: np.ndarray  # (nl,) 0 global axes, 1 the marker's axes
    l_vec: np.ndarray  # (nl, 3) value [N] or [N m]
    # distributed loads of constant value on flexible bodies
    d_body: np.ndarray  # (ndl,) body index
    d_frame: np.ndarray  # (ndl,) 0 global axes, 1 body axes
    d_vec: np.ndarray  # (ndl, 3) load per unit weight
    d_total: np.ndarray  # (ndl,) Σw
    d_first: np.ndarray  # (ndl, 3) Σw ū0 [m]
    d_shapes: np.ndarray  # (ndl, 3, M) Σw Φ
    # rotational spring–dampers (torque about z_i on j, reaction on i)
    t_mark: np.ndarray  # (nt, 2) markers i, j
    t_par: np.ndarray  # (nt, 3) stiffness k [N m/rad], damping c [N m s/rad], angle θ0 [rad]


def force_elements(system):
    """(joint actuators with a time profile, spring–damper–actuators, point loads,
    distributed loads, rotational spring–dampers) of ``system`` in model order, or None
    when a force the kernels cannot evaluate is present (see :func:`unsupported_reason`)."""
    if _force_reason(system) is not None:
        return None
    from ..model.forces import (
        DistributedLoad,
        JointActuator,
        PointLoad,
        RotationalSpringDamper,
        SpringDamperActuator,
    )

    forces = system.model.forces
    return ([f for f in forces if isinstance(f, JointActuator)],
            [f for f in forces if isinstance(f, SpringDamperActuator)],
            [f for f in forces if isinstance(f, PointLoad)],
            [f for f in forces if isinstance(f, DistributedLoad)],
            [f for f in forces if isinstance(f, RotationalSpringDamper)])


def torsion_springs(system) -> list:
    """The rotational spring–dampers in the order of the kernels' tables (their angle
    memories, ``System.unwrap``, follow this order in the workspace)."""
    return (force_elements(system) or ([],) * 5)[4]


def time_inputs(system) -> list:
    """The forces whose value the kernels take as a number per time level (the columns
    of ``u``): the joint actuators, then the spring–damper–actuators with an actuator
    profile, in model order."""
    acts, springs = (force_elements(system) or ([], []))[:2]
    return [*acts, *[s for s in springs if s.actuator is not None]]


def _force_reason(system) -> str | None:
    from ..contact.element import Contact
    from ..model.drives import Profile
    from ..model.forces import (
        DistributedLoad,
        JointActuator,
        PointLoad,
        RotationalSpringDamper,
        SpringDamperActuator,
    )

    for force in system.model.forces:
        if isinstance(force, RotationalSpringDamper):
            continue
        if type(force).__name__ == "Bushing":  # NumPy reference only, for now
            return f"bushing {force.name!r} (no compiled kernel yet; it runs on the NumPy path)"
        if isinstance(force, Contact):
            return f"contact {force.name!r}"
        if isinstance(force, JointActuator):
            if getattr(force, "profile", None) is None:
                return f"joint actuator {force.name!r} has a state-dependent callable"
            continue
        if isinstance(force, SpringDamperActuator):
            if force.actuator is not None and not isinstance(force.actuator, Profile):
                return (f"spring-damper {force.name!r} has a state-dependent actuator "
                        f"callable")
            continue
        if isinstance(force, (PointLoad, DistributedLoad)):
            if callable(force.value):
                return f"load {force.name!r} has a callable value"
            continue
        return f"force {force.name!r} ({type(force).__name__})"
    return None


def unsupported_reason(system) -> str | None:
    """Why the kernels cannot evaluate ``system`` (None: they can): contacts, forces
    other than time-profile joint actuators, spring–damper–actuators (constant or
    time-profile actuator), rotational spring–dampers, constant point loads and constant
    distributed loads, or
    flexible data without the general invariant set."""
    reason = _force_reason(system)
    if reason is not None:
        return reason
    for body in system.bodies:
        if hasattr(body, "data") and body.data.invariants.N is None:
            return f"flexible body {body.name!r} has no general invariant set"
    return None


def drive_specs(system) -> list:
    """Drive specs in the order of the kernels' profile array (one row (s, ṡ, s̈) each)."""
    return list(system.model.drives)


def compile_tables(system) -> Tables:
    """Flat arrays of ``system`` (call :func:`unsupported_reason` first)."""
    plan = system._plan
    bodies = system.bodies
    nb = len(bodies)
    modes = [getattr(b, "n_modes", 0) for b in bodies]
    big_m = max([1, *modes])
    flex = [k for k, b in enumerate(bodies) if hasattr(b, "data")]
    nf = max(len(flex), 1)
    t = dict(
        n_q=int(system.n_q), n_c=int(system.n_c),
        gravity=np.asarray(system.model.gravity, dtype=float).copy(),
        b_kind=np.zeros(nb, np.int64), b_start=np.array([s.start for s in system.slices],
                                                        np.int64).reshape(nb),
        b_nm=np.array(modes, np.int64).reshape(nb), b_mode=np.zeros(nb, np.int64),
        b_flex=np.full(nb, -1, np.int64), b_norm=np.zeros(nb, np.int64),
        r_mass=np.zeros(nb), r_io=np.zeros((nb, 3, 3)), r_s=np.zeros((nb, 3)),
        r_offset=np.zeros(nb, np.int64),
        f_m0=np.zeros((nf, 6 + big_m, 6 + big_m)), f_inv_m0=np.zeros((nf, 6 + big_m, 6 + big_m)),
        f_N=np.zeros((nf, big_m, 6 + big_m, 3)), f_Q=np.zeros((nf, big_m, big_m, 3, 3)),
        f_S=np.zeros((nf, 3, big_m)), f_mff=np.zeros((nf, big_m, big_m)),
        f_kff=np.zeros((nf, big_m, big_m)), f_dff=np.zeros((nf, big_m, big_m)),
        f_mass=np.zeros(nf), f_stiff=np.zeros(nf, np.int64),
        f_ska=np.zeros((nf, 3, big_m, big_m)), f_skd=np.zeros((nf, 3, big_m, big_m)),
        f_sxc=np.zeros((nf, 3, 3, big_m, big_m)))
    for row in system._rows:
        if row.kind == "norm":
            t["b_norm"][row.body_i] = row.rows.start
    for k, body in enumerate(bodies):
        if not hasattr(body, "data"):
            t["r_mass"][k] = body.mass
            t["r_io"][k] = body.inertia_origin
            t["r_s"][k] = body.mass * np.asarray(body.com, dtype=float)
            t["r_offset"][k] = int(body._offset)
            continue
        f = flex.index(k)
        n = body.n_modes
        inv = body.data.invariants
        t["b_kind"][k] = 1
        t["b_flex"][k] = f
        t["b_mode"][k] = COUPLING_CODES[body.coupling]
        t["f_m0"][f, :6 + n, :6 + n] = _flat(inv).m0
        t["f_inv_m0"][f, :6 + n, :6 + n] = inv.M0
        t["f_N"][f, :n, :6 + n] = inv.N
        t["f_Q"][f, :n, :n] = inv.Q
        t["f_S"][f, :, :n] = inv.S
        t["f_mff"][f, :n, :n] = body.data.M_ff
        t["f_kff"][f, :n, :n] = body.data.K_ff
        t["f_dff"][f, :n, :n] = body.data.D_ff
        t["f_mass"][f] = inv.mass
        if getattr(body, "stiffening", False):
            _stiffening_tables(t, f, n, body.data.stiffening)
    # markers: the constraint plan's stacks first (its global marker numbering), then
    # those of the actuators
    k_body, k_base, k_shapes, k_psi, k_phi = [], [], [], [], []

    def add_marker(body_index, base, shapes, psi=None, phi=None):
        k_body.append(body_index)
        k_base.append(base)
        pad = np.zeros((4, 3, big_m))
        pad[..., :shapes.shape[2]] = shapes
        k_shapes.append(pad)
        ps = np.zeros((3, big_m))
        if psi is not None:
            ps[:, :psi.shape[1]] = psi
        k_psi.append(ps)
        ph = np.zeros((3, big_m))
        if phi is not None:
            ph[:, :phi.shape[1]] = phi
        k_phi.append(ph)
        return len(k_body) - 1

    for k, _sl, base, shapes in plan.bodies:
        for s_ in range(base.shape[0]):
            add_marker(k, base[s_], shapes[s_])  # Ψ, Φ unused by constraints
    def add_load_marker(name):  # with the shapes of its force and torque Jacobians
        body, marker, _ = system.marker_info(name)
        base, shapes = body.marker_shapes(marker)
        psi = phi = None
        if hasattr(body, "data") and body.coupling is not Coupling.RIGID:
            psi, phi = body._modes(marker).psi, body._modes(marker).phi
        return add_marker(system._marker_body(name), base, shapes, psi, phi)

    acts, springs, loads, fields, torsions = force_elements(system) or ([],) * 5
    a_kind, a_mark = [], []
    for act in acts:
        a_kind.append(0 if act.kind == "torque" else 1)
        a_mark.append([add_load_marker(act.marker_i), add_load_marker(act.marker_j)])
    inputs = {id(f): k for k, f in enumerate(time_inputs(system))}
    s_mark = [[add_load_marker(f.marker_i), add_load_marker(f.marker_j)] for f in springs]
    s_par = [[f.stiffness, f.damping, f.free_length] for f in springs]
    s_act = [inputs.get(id(f), -1) for f in springs]
    t_mark = [[add_load_marker(f.marker_i), add_load_marker(f.marker_j)] for f in torsions]
    t_par = [[f.stiffness, f.damping, f.angle0] for f in torsions]
    l_mark = [add_load_marker(f.marker) for f in loads]
    l_kind = [0 if f.kind == "torque" else 1 for f in loads]
    l_frame = [1 if f.frame == "marker" else 0 for f in loads]
    l_vec = [np.asarray(f.value, dtype=float) for f in loads]
    d_shapes = np.zeros((len(fields), 3, big_m))
    for k, f in enumerate(fields):
        shapes = np.asarray(f.integrals[2], dtype=float)
        d_shapes[k, :, :shapes.shape[1]] = shapes
    nk = len(k_body)
    drives = drive_specs(system)
    index = {id(d): i for i, d in enumerate(drives)}
    ne = plan.pos.size
    e_kind = np.zeros(ne, np.int64)
    e_drive = np.full(ne, -1, np.int64)
    for spec, e in plan.rotation_drives:
        e_kind[e], e_drive[e] = EQ_ROTATION, index[id(spec)]
    for spec, e in plan.translation_drives:
        e_kind[e], e_drive[e] = EQ_TRANSLATION, index[id(spec)]
    coef = plan.coef.reshape(ne, 8, 8)
    e_npairs = np.zeros(ne, np.int64)
    e_pairs = np.zeros((ne, 4, 2), np.int64)
    for e in range(ne):
        where = [(5, 1), (5, 2)] if e_kind[e] == EQ_ROTATION else [
            (int(a), int(b)) for a, b in zip(*np.nonzero(coef[e]), strict=True)]
        if len(where) > 4:
            raise ValueError(f"constraint equation {e} has {len(where)} bilinear terms; "
                             f"the kernels take at most 4")
        e_npairs[e] = len(where)
        for p_, pair in enumerate(where):
            e_pairs[e, p_] = pair
    k_body_arr = np.array(k_body, np.int64).reshape(nk)
    e_row = plan.pos.astype(np.int64)
    e_mark = plan.markers.astype(np.int64).reshape(ne, 2)
    c_row = np.array([r for _, r, _ in plan.coordinate_drives], np.int64)
    c_coord = np.array([c for _, _, c in plan.coordinate_drives], np.int64)
    a_mark = np.array(a_mark, np.int64).reshape(-1, 2)
    s_mark = np.array(s_mark, np.int64).reshape(-1, 2)
    t_mark = np.array(t_mark, np.int64).reshape(-1, 2)
    spans = [(int(start), 7 + int(nm)) for start, nm in zip(t["b_start"], t["b_nm"],
                                                             strict=True)]
    top, jac = iteration_pattern(spans, k_body_arr, e_row, e_mark, t["b_norm"], c_row,
                                 c_coord, np.concatenate([a_mark, s_mark, t_mark]))
    stiff = {k: t.pop(k) for k in ("f_stiff", "f_ska", "f_skd", "f_sxc")}
    return Tables(
        **t,
        k_body=k_body_arr,
        k_base=np.array(k_base, float).reshape(nk, 4, 3),
        k_shapes=np.array(k_shapes, float).reshape(nk, 4, 3, big_m),
        k_psi=np.array(k_psi, float).reshape(nk, 3, big_m),
        k_phi=np.array(k_phi, float).reshape(nk, 3, big_m),
        e_coef=np.ascontiguousarray(plan.coef.reshape(ne, 8, 8)),
        e_lin=np.ascontiguousarray(plan.lin), e_row=e_row, e_mark=e_mark, e_kind=e_kind,
        e_drive=e_drive, e_npairs=e_npairs, e_pairs=e_pairs, c_row=c_row, c_coord=c_coord,
        c_drive=np.array([index[id(s)] for s, _, _ in plan.coordinate_drives], np.int64),
        a_kind=np.array(a_kind, np.int64), a_mark=a_mark,
        p_row=top[0], p_col=top[1], j_row=jac[0], j_col=jac[1], **stiff,
        s_mark=s_mark, s_par=np.array(s_par, float).reshape(-1, 3),
        s_act=np.array(s_act, np.int64), l_mark=np.array(l_mark, np.int64),
        l_kind=np.array(l_kind, np.int64), l_frame=np.array(l_frame, np.int64),
        l_vec=np.array(l_vec, float).reshape(-1, 3),
        d_body=np.array([system._body_index[f.body] for f in fields], np.int64),
        d_frame=np.array([1 if f.frame == "body" else 0 for f in fields], np.int64),
        d_vec=np.array([np.asarray(f.value, float) for f in fields], float).reshape(-1, 3),
        d_total=np.array([float(f.integrals[0]) for f in fields], float),
        d_first=np.array([np.asarray(f.integrals[1], float) for f in fields],
                         float).reshape(-1, 3),
        d_shapes=d_shapes, t_mark=t_mark, t_par=np.array(t_par, float).reshape(-1, 3))


def _stiffening_tables(t, f, n, stiffening) -> None:
    """Row f of the stiffening tables from ``ModalData.stiffening`` (the arrays of
    :class:`flexmbs.frame.stiffening.StiffeningTerms`)."""
    from ..frame.stiffening import StiffeningTerms

    terms = StiffeningTerms(stiffening)
    t["f_stiff"][f] = 1
    t["f_ska"][f, :, :n, :n] = terms.ka
    t["f_skd"][f, :, :n, :n] = terms.kd
    t["f_sxc"][f, :, :, :n, :n] = terms.xi_coef


def iteration_pattern(spans, k_body, e_row, e_mark, b_norm, c_row, c_coord, a_mark):
    """((rows, cols) of the n_q x n_q block, (rows, cols) of Φ_q): every entry the
    kernels can write, column-major order.

    ``spans[b]`` = (first coordinate, 7 + modes) of body b. The block holds each body's
    own coordinates against themselves (M, C_t, K_t of the body) and, for every joint,
    drive, actuator and spring–damper, translational or rotational (``a_mark``), the
    coordinates of its two bodies against each other (the constraint Hessians and the
    force tangents). A row of Φ_q
    holds its two bodies' coordinates (joints and drives), the Euler parameters of one
    body (normalization) or one coordinate (coordinate drives)."""
    def coords(b):
        start, size = spans[b]
        return np.arange(start, start + size)

    pairs = {(b, b) for b in range(len(spans))}
    for ki, kj in [*e_mark, *a_mark]:
        bi, bj = int(k_body[ki]), int(k_body[kj])
        if bi >= 0 and bj >= 0:
            pairs.update(((bi, bj), (bj, bi)))
    top = [np.stack(np.meshgrid(coords(bi), coords(bj), indexing="ij")).reshape(2, -1)
           for bi, bj in sorted(pairs)]
    jac = []
    for row, (ki, kj) in zip(e_row, e_mark, strict=True):
        for k in (ki, kj):
            if k_body[k] >= 0:
                cols = coords(int(k_body[k]))
                jac.append(np.stack([np.full(cols.size, row), cols]))
    for b, row in enumerate(b_norm):
        start = spans[b][0]
        jac.append(np.array([[row] * 4, range(start + 3, start + 7)]))
    if c_row.size:
        jac.append(np.stack([c_row, c_coord]))
    return _column_major(top), _column_major(jac)


def _column_major(parts):
    """Unique (rows, cols) of the stacked (2, k) index arrays, sorted by column."""
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rows, cols = np.concatenate(parts, axis=1).astype(np.int64)
    width = int(rows.max()) + 1
    keys = np.unique(cols * width + rows)
    return np.ascontiguousarray(keys % width), np.ascontiguousarray(keys // width)
