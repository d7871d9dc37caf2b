"""Nastran external superelements (EXTSEOUT): a Craig–Bampton body from the punch.

An EXTSEOUT run writes a punch (``.pch``: ``BEGIN SUPER`` section with the boundary
grids, their coordinate systems, EXTRN/ASET/QSET1/SPOINT, PLOTEL and the DTI TUG1 table
of the recovered grids), an assembly punch (``.asm``) and the reduced matrices, either as
an OP4 file (KAA, MAA, optional BAA/K4AA damping, MUG1 displacement recovery) or as DMIG
entries in the punch (DMIGPCH: KAAX, MAAX, ...). docs/modal_data_formats.md, "Nastran
external superelements", describes what is read; in short:

* **a-set**: the boundary grids' EXTRN components (each grid's components ascending), and
  the q-set scalar points (fixed-interface modal coordinates). Two orders are tried:
  Nastran's internal sort (grids and scalar points together by ID) and boundary grids
  first, then the scalar points; when they differ, the one whose stiffness is free of
  force under the rigid motions of the boundary grids is taken (recorded).
* **body**: the a-set is a Craig–Bampton basis (constraint modes + fixed-interface modes).
  It is orthonormalised as :func:`~flexmbs.modal.reduction.craig_bampton` does: mean axes
  (the six rigid modes of (KAA, MAA) found, checked and removed) or a frame attached to
  boundary grids (their DOFs fixed). Boundary DOFs without mass (zero rows of MAA, e.g.
  interface rotations) are condensed statically, exact for every finite-frequency mode.
  M_ff = I (mass normalised), K_ff = diag(ω²).
* **mass description**: the a-set mass itself, the boundary DOFs turned to the basic
  system, followed by the q-set coordinates, which carry no position
  (``ModalData.generalized_shapes``). Exact: total mass, first moment, inertia tensor,
  S̄, Ī_θf(0), M_ff (everything of M̄ at ξ = 0). Approximate: the ξ-dependent terms (the
  rotation of the deformation, N_j and Q_ij), in which the interior is represented by the
  constraint modes' interpolation of the boundary grids' deformation.
* **nodes**: the boundary grids and the grids recovered through MUG1 (DTI TUG1 rows), in
  ID order, with their shapes in basic; PLOTEL cards become line cells.

Units: Nastran has none; ``units`` states them (``"SI"`` default) and ``PARAM,WTMASS`` in
the punch scales the mass. Errors name the file, the card, the ID and the value.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ...errors import FlexmbsError, ReadError
from ..data import ModalData, ModeKind, ReferenceFrame
from ..eigen import dense_eigen
from ..units import get_units
from .nastran.dof_sets import force_residual, rigid_rows
from .nastran.matrices import read_op4_file
from .nastran_punch import Punch, check_assembly, dmig_matrix, read_punch

#: An eigenvalue below this fraction of the seventh counts as a rigid-body mode.
RIGID_EIG_RTOL = 1e-6
#: The rigid-body modes must lie in the span of the boundary grids' rigid motions to this
#: mass-norm residual (the matrices carry ~16 digits; a wrong DOF order gives O(1)).
RIGID_SPAN_RTOL = 1e-6
#: Stiffness rows whose force under a rigid motion exceeds this fraction of Σ|K_ij r_j|
#: mean the a-set order does not fit the matrices.
RIGID_FORCE_RTOL = 1e-6
#: Names of the matrices looked for, first found wins.
NAMES = {"stiffness": ("KAA", "KAAX", "KXX"), "mass": ("MAA", "MAAX", "MXX"),
         "damping": ("BAA", "BAAX", "BXX"), "structural": ("K4AA", "K4AAX", "K4XX")}


# ------------------------------------------------------------------------ matrices
def _read_op4(path: Path, punch: Punch) -> dict[str, np.ndarray]:
    """Every matrix of the OP4 file as a dense array (1 x 1 zero placeholders dropped)."""
    if not path.is_file():
        raise ReadError(f"{punch.path}: the superelement's matrices are neither DMIG entries "
                        f"in the punch nor in {str(path)!r} (no such OP4 file); give "
                        "matrices='FILE.op4' (--matrices)")
    raw = read_op4_file(path, "superelement matrices")
    block = _superelement_block(path, raw, punch.seid)
    out = {}
    for name, matrix in raw.items():
        data = matrix.data
        if block is not None:  # several superelements' matrices: this one's alone
            if not isinstance(data, list) or len(data) <= block:
                continue  # (written once, or not for every superelement: whose is unknown)
            data = data[block]
        arr = data.toarray() if sp.issparse(data) else np.asarray(data, dtype=float)
        if arr.shape == (1, 1) and arr[0, 0] == 0:
            continue
        out[name.upper()] = np.asarray(arr, dtype=float)
    return out


def _superelement_block(path: Path, raw: dict, seid: int) -> int | None:
    """Which of the repeated matrices of the OP4 ``raw`` (pyNastran gives a name written
    several times as a list) are superelement ``seid``'s: NAS2CAM writes each
    superelement's matrices after an SE_START matrix holding its ID. None when no name is
    repeated; ReadError naming the file when they are and SE_START does not say whose
    they are."""
    repeated = sorted(name for name, m in raw.items() if isinstance(m.data, list))
    if not repeated:
        return None
    starts = raw.get("SE_START") or raw.get("se_start")
    if starts is None:
        raise ReadError(f"{path}: the matrices {', '.join(repeated)} are written several "
                        f"times and no SE_START matrix says which superelement each is of")
    blocks = starts.data if isinstance(starts.data, list) else [starts.data]
    ids = [round(float(np.asarray(b.toarray() if sp.issparse(b) else b).ravel()[0]))
           for b in blocks]
    if seid not in ids:
        raise ReadError(f"{path}: the OP4 holds the matrices of superelements {ids} "
                        f"(SE_START), not of superelement {seid}")
    return ids.index(seid)


def _matrices(punch: Punch, matrices) -> tuple[dict[str, np.ndarray], str, str]:
    """(matrices by role, their source, the a-set order chosen) on the a-set."""
    dmig = {role: next((n for n in names if n in punch.dmig), None)
            for role, names in NAMES.items()}
    use_dmig = matrices is None and dmig["stiffness"] and dmig["mass"]
    layouts = punch.layouts()
    if use_dmig:
        labels = layouts[0][1]
        index = {lab: k for k, lab in enumerate(labels)}
        found = {role: dmig_matrix(punch, name, index) for role, name in dmig.items()
                 if name}
        return found, f"DMIG {dmig['stiffness']}/{dmig['mass']} in {punch.path.name}", \
            layouts[0][0]
    op4_path = Path(matrices) if matrices is not None else _beside(punch.path)
    arrays = _read_op4(op4_path, punch)
    found, used = {}, {}
    for role, names in NAMES.items():
        name = used[role] = next((n for n in names if n in arrays), None)
        if name is None:
            if role in ("stiffness", "mass"):
                raise ReadError(f"{op4_path}: no {role} matrix ({' or '.join(names)}); the "
                                f"file holds {', '.join(sorted(arrays)) or 'no matrix'}")
            continue
        found[role] = arrays[name]
    if "MUG1" in arrays:
        found["recovery"] = arrays["MUG1"]
    n = found["stiffness"].shape[0]
    for role in ("stiffness", "mass", "damping", "structural"):
        if role in found and found[role].shape != (n, n):
            raise ReadError(f"{op4_path}: the {role} matrix is {found[role].shape[0]} x "
                            f"{found[role].shape[1]}; expected {n} x {n} like the stiffness")
    sizes = {len(lab) for _, lab in layouts}
    if n not in sizes:
        raise ReadError(f"{op4_path}: {used['stiffness']} has {n} rows, but no a-set layout of "
                        f"{punch.path.name} (superelement {punch.seid}) has that size; tried: "
                        f"{punch.sizes_text()}")
    return found, str(op4_path), ""


def _beside(path: Path) -> Path:
    """The OP4 file of the same stem beside the punch (``.op4`` in any letter case)."""
    for candidate in path.parent.iterdir() if path.parent.is_dir() else ():
        if (candidate.stem.lower() == path.stem.lower()
                and candidate.suffix.lower() == ".op4"):
            return candidate
    return path.with_suffix(".op4")


# ---------------------------------------------------------------------------- body
def _rigid_rows(punch: Punch, labels, length: float = 1.0) -> np.ndarray:
    """(n_a, 6) the a-set values of the six rigid motions (translations [length], small
    rotations about the basic origin [rad]), components in each grid's CD axes; zero on
    the scalar points (the constraint modes carry a rigid boundary motion exactly)."""
    where = {int(g): k for k, g in enumerate(punch.grid_ids)}
    grid = np.array([where[pid] if comp else -1 for pid, comp in labels], dtype=np.int64)
    component = np.array([comp - 1 for _, comp in labels], dtype=np.int64)
    return rigid_rows(punch.coords * length, punch.frames, grid, component)


def _choose_layout(punch: Punch, k_mat: np.ndarray, source: str):
    """(description, labels, residuals) of the a-set order and displacement-system
    reading the stiffness fits: the one whose forces under the rigid motions of the
    boundary grids are smallest. Readings: every CD as punched (blank = basic), and, when
    some grid has a blank CD and a CP system, blank CD = the grid's CP axes (the
    se_test_n11 matrices fit only this one: their two grids without CD move in the axes
    of their CP system). ``punch.frames`` is set to the chosen reading."""
    as_punched = punch.frames.copy()
    readings = [("CD as punched (blank = basic)", as_punched)]
    alt = np.where(punch.blank_cd[:, None, None], punch.cp_frames, as_punched)
    if not np.array_equal(alt, as_punched):
        readings.append(("blank CD = the grid's CP axes", alt))
    tried = []
    for reading, frames in readings:
        punch.frames = frames
        for name, labels in punch.layouts():
            if len(labels) != k_mat.shape[0]:
                continue
            res = force_residual(k_mat, _rigid_rows(punch, labels))
            tried.append((res, f"{name}; {reading}", labels, frames))
    if not tried:
        raise ReadError(f"{source}: the stiffness has {k_mat.shape[0]} rows, but no a-set "
                        f"layout of {punch.path.name} has that size; tried: "
                        f"{punch.sizes_text()}")
    tried.sort(key=lambda t: t[0])
    punch.frames = tried[0][3]
    if tried[0][0] > RIGID_FORCE_RTOL:
        warnings.warn(f"{source}: no a-set order and displacement-system reading leaves "
                      f"the stiffness force-free under rigid motion (best "
                      f"{tried[0][0]:.2e}: {tried[0][1]}); the grids may not belong to these "
                      "matrices", UserWarning, stacklevel=3)
    return tried[0][1], tried[0][2], {name: res for res, name, _, _ in tried}


def _attach(punch: Punch, attach_set) -> tuple[str, list[int]]:
    """(set name, grid IDs) the frame is attached to."""
    if attach_set is None or attach_set == "boundary":
        return "boundary", sorted(punch.boundary)
    if isinstance(attach_set, str):
        raise ReadError(f"{punch.path}: attach_set = {attach_set!r}; give 'boundary' or a "
                        "list of boundary grid IDs")
    grids = [int(g) for g in np.atleast_1d(attach_set)]
    for g in grids:
        if g not in punch.boundary:
            raise ReadError(f"{punch.path}: attach_set grid {g} is not a boundary grid "
                            f"(EXTRN) of superelement {punch.seid}")
        if punch.boundary[g] != (1, 2, 3, 4, 5, 6):
            raise ReadError(f"{punch.path}: attach_set grid {g} has only components "
                            f"{''.join(map(str, punch.boundary[g]))} in the a-set; the frame "
                            "attaches to grids with all six")
    return "attach", sorted(set(grids))


def _reduce(k_mat, m_mat, fixed: np.ndarray, path: Path):
    """(vectors, λ, massless, unconnected): the eigenpairs of (KAA, MAA) with the DOFs
    ``fixed``, ascending, as a-set vectors (n_a x n_kept) mass-normalised; the free DOFs
    without mass (zero rows of M) condensed statically (modal.eigen.dense_eigen), those
    whose rows of K and M are both zero left out (they take no part in the motion)."""
    n = k_mat.shape[0]
    free = np.setdiff1d(np.arange(n), fixed)
    no_mass = np.max(np.abs(m_mat[free]), axis=1) == 0
    no_stiffness = np.max(np.abs(k_mat[free]), axis=1) == 0
    unconnected = free[no_mass & no_stiffness]  # e.g. rotations of grids on solids
    massless = free[no_mass & ~no_stiffness]
    active = np.setdiff1d(free, unconnected)
    sub = np.ix_(active, active)
    try:
        lam, vec = dense_eigen(sp.csr_matrix(0.5 * (k_mat + k_mat.T)[sub]),
                               sp.csr_matrix(0.5 * (m_mat + m_mat.T)[sub]),
                               f"{path}: the a-set")
    except (np.linalg.LinAlgError, sla.LinAlgError) as exc:
        raise ReadError(f"{path}: the a-set mass without its zero rows is not positive "
                        f"definite ({exc})") from None
    vectors = np.zeros((n, lam.size))
    vectors[active] = vec
    return vectors, lam, massless, unconnected


def read_nastran_superelement(path: str | os.PathLike, *, matrices=None,
                              units: str | None = None, reference_frame: str | None = None,
                              attach_set=None, superelement: int | None = None,
                              w4: float | None = None) -> ModalData:
    """A Craig–Bampton body from a Nastran EXTSEOUT punch (module docstring).

    Parameters
    ----------
    path : the punch (``.pch``); the assembly punch of the same stem (``.asm``) is checked
        against it when present. Or an OP2 file with the superelement's USET table (the
        NAS2CAM DMAP's or PARAM,POST,-1's, read with pyyeti: :mod:`.nastran.op2_uset`),
        which gives the a-set, the grids and their CD systems instead of the punch.
    matrices : the OP4 file (default: the punch's stem ``.op4`` beside it, unless the
        punch holds DMIG KAAX/MAAX entries).
    units : the unit system of the files (default SI); PARAM,WTMASS scales the mass.
    reference_frame : ``"mean-axis"`` (default) or ``"attached"`` to ``attach_set``
        (``"boundary"``, the default: every boundary grid; or a list of grid IDs).
    superelement : the BEGIN SUPER section (default: the only one).
    w4 : [rad/s] turns structural damping K4AA into viscous K4AA / w4 (PARAM,W4 in the
        punch does the same); without it K4AA is not applied (reported).

    Returns
    -------
    ModalData
        Nodes: boundary and MUG1 grids in basic [m]; M_ff = I [kg m²], K_ff = diag(ω²);
        mass: the a-set mass with the q-set as ``generalized_shapes``.
    """
    path = Path(path)
    if path.suffix.lower() == ".op2":  # the a-set from the OP2's USET table
        from .nastran.op2_uset import punch_from_op2

        punch = punch_from_op2(path, superelement)
        if matrices is None:
            matrices = _beside(path)
    else:
        punch = read_punch(path, superelement)
    check_assembly(punch)
    found, source, _ = _matrices(punch, matrices)
    k_raw, m_raw = found["stiffness"], found["mass"]
    order, labels, residuals = _choose_layout(punch, k_raw, source)
    index = {lab: k for k, lab in enumerate(labels)}
    system = get_units(units)
    length = system.length
    # Nastran applies WTMASS when it assembles the mass, so the MAA that EXTSEOUT writes
    # holds it already; a PARAM,WTMASS in the punch is reported, not applied again
    wtmass = 1.0
    wtmass_note = None
    if "WTMASS" in punch.params:
        wtmass_note = (f"PARAM,WTMASS,{punch.params['WTMASS']} in the punch is not applied: "
                       "the a-set mass Nastran wrote already holds it")
        warnings.warn(f"{path}: {wtmass_note}", UserWarning, stacklevel=2)
    weight = np.array([1.0 if 1 <= c <= 3 else length for _, c in labels])
    scale_m = system.mass * wtmass * np.outer(weight, weight)
    k_mat = system.mass / system.time**2 * np.outer(weight, weight) * k_raw
    m_mat = scale_m * m_raw
    for name, mat in (("stiffness", k_mat), ("mass", m_mat)):
        if np.max(np.abs(mat - mat.T)) > 1e-8 * max(float(np.max(np.abs(mat))), 1e-300):
            raise ReadError(f"{source}: the {name} matrix is not symmetric")
    frame = ReferenceFrame(reference_frame or "mean-axis")
    rigid = _rigid_rows(punch, labels, length)
    fixed = np.zeros(0, dtype=np.int64)
    attach_name, attach_grids = None, []
    if frame is ReferenceFrame.ATTACHED:
        attach_name, attach_grids = _attach(punch, attach_set)
        fixed = np.array([index[(g, c)] for g in attach_grids for c in range(1, 7)
                          if (g, c) in index], dtype=np.int64)
    elif attach_set is not None:
        raise ReadError(f"{path}: attach_set applies to reference_frame='attached'")
    vectors, lam, massless, unconnected = _reduce(k_mat, m_mat, fixed, path)
    if lam.size and lam[0] < -RIGID_EIG_RTOL * max(abs(lam[-1]), 1e-300):
        raise ReadError(f"{source}: (KAA, MAA) has a negative eigenvalue {lam[0]:.4g} "
                        "rad²/s²: the stiffness is not positive semidefinite")
    if frame is ReferenceFrame.ATTACHED:
        empty = np.flatnonzero(~np.any(k_mat != 0, axis=1) & ~np.any(m_mat != 0, axis=1))
        held = np.setdiff1d(fixed, empty)  # an empty row holds no rigid motion
        size = max(float(np.ptp(punch.coords, axis=0).max()) * length, 1e-300)
        basis = rigid[held] * np.r_[np.ones(3), np.full(3, size)]
        rank = int(np.linalg.matrix_rank(basis, tol=1e-9 * max(np.abs(basis).max(), 1e-300))
                   ) if held.size else 0
        if rank < 6:
            raise ReadError(
                f"{source}: the frame attached to grids {attach_grids[:6]} holds "
                f"{rank} of the six rigid motions (the connected components of those grids "
                f"do not fix the body: e.g. one grid whose rotations no element stiffens, "
                f"or grids on a line); attach to more grids")
    meta_frame = {}
    n_rigid = 0
    if frame is ReferenceFrame.MEAN_AXIS:
        ref = abs(lam[min(6, lam.size - 1)]) or 1.0
        n_rigid = int(np.sum(np.abs(lam) < RIGID_EIG_RTOL * ref))
        if n_rigid != 6:
            raise ReadError(f"{source}: (KAA, MAA) has {n_rigid} rigid-body modes, expected 6 "
                            "for a free superelement (lowest eigenvalues "
                            f"{np.array2string(lam[:8], precision=4)}); attach the frame "
                            "(reference_frame='attached')")
        vecs = vectors[:, :6]
        mr = m_mat @ rigid
        rest = vecs - rigid @ np.linalg.solve(rigid.T @ mr, mr.T @ vecs)
        span = float(np.max(np.sqrt(np.einsum("ij,ij->j", rest, m_mat @ rest))))
        if span > RIGID_SPAN_RTOL:
            raise ReadError(f"{source}: the six zero-frequency modes are not rigid motions "
                            f"of the boundary grids (residual {span:.3e}): the grids, their "
                            "CD systems or the a-set order do not fit the matrices")
        meta_frame["rigid_span_residual"] = span
    modes = vectors[:, n_rigid:]
    lam = np.clip(lam[n_rigid:], 0.0, None)
    if frame is ReferenceFrame.MEAN_AXIS:
        mr = m_mat @ rigid
        modes = modes - rigid @ np.linalg.solve(rigid.T @ mr, mr.T @ modes)
    q_rows = np.array([index[(s, 0)] for s in punch.qset], dtype=np.int64)
    b_rows = np.setdiff1d(np.arange(len(labels)), q_rows)
    kin_b = np.einsum("ij,ij->j", modes[b_rows], m_mat[np.ix_(b_rows, b_rows)] @ modes[b_rows])
    kin_q = np.einsum("ij,ij->j", modes[q_rows], m_mat[np.ix_(q_rows, q_rows)] @ modes[q_rows])
    fraction = np.clip(kin_b / np.maximum(kin_b + kin_q, 1e-300), 0.0, 1.0)
    nodes_ids, phi, psi, mass, recovery = _node_shapes(punch, labels, index, modes,
                                                       m_mat, found.get("recovery"), length)
    damping, damping_note = _damping(found, modes, weight, system, punch, w4)
    q_only = np.sqrt(np.clip(sla.eigvalsh(k_mat[np.ix_(q_rows, q_rows)],
                                          m_mat[np.ix_(q_rows, q_rows)]), 0, None)) \
        if q_rows.size else np.zeros(0)
    where = {int(g): k for k, g in enumerate(nodes_ids)}
    sets = {"boundary": np.array([where[g] for g in sorted(punch.boundary)])}
    if punch.tug1:
        sets["recovered"] = np.array([where[g] for g in sorted(punch.tug1)])
    if attach_name and attach_name != "boundary":
        sets[attach_name] = np.array([where[g] for g in attach_grids])
    cells = {"line": np.array([[where[a], where[b]] for a, b in punch.lines])} \
        if punch.lines else {}
    metadata = {
        "source": str(path), "format": "nastran-extse", "superelement": punch.seid,
        "matrices": source, "aset_order": order, "aset_rigid_force_residual": residuals,
        "n_boundary_dofs": int(b_rows.size), "n_qset": int(q_rows.size),
        "massless_dofs_condensed": [list(labels[i]) for i in massless],
        "unconnected_dofs": [list(labels[i]) for i in unconnected],
        "fixed_interface_frequencies_hz": (q_only / (2 * np.pi)).tolist(),
        "wtmass": wtmass_note or "none in the punch", "source_units": system.name,
        "normalization": "mass",
        "recovery": recovery, "damping": damping_note,
        **({"recovered_grids_without_position": punch.tug1_unplaced}
           if punch.tug1_unplaced else {}),
        "mass_description": "a-set mass: boundary grid DOFs (basic axes) and q-set "
                            "coordinates without position; M̄(0) exact, the ξ-dependent "
                            "inertia terms rotate only the boundary grids' deformation",
        **meta_frame,
    }
    try:
        return ModalData(nodes=punch.coords[[np.searchsorted(punch.grid_ids, g)
                                             for g in nodes_ids]] * length,
                         phi=phi, psi=psi, M_ff=np.eye(lam.size), K_ff=np.diag(lam),
                         mass=mass, generalized_shapes=modes[q_rows],
                         reference_frame=frame, attach_set=attach_name,
                         damping_matrix=damping, cells=cells, node_sets=sets,
                         node_ids=nodes_ids,
                         mode_kinds=[ModeKind.CONSTRAINT if f > 0.5 else ModeKind.NORMAL
                                     for f in fraction],
                         constraint_fraction=fraction, units=system.name, metadata=metadata)
    except FlexmbsError as exc:
        raise ReadError(f"{path}: {exc}") from exc


def _node_shapes(punch: Punch, labels, index, modes, m_mat, mug1, length):
    """(node IDs, phi, psi, the (6N + n_q) mass, recovery note): the boundary grids and
    the MUG1-recovered grids in ID order; each grid's a-set components from the modes,
    the others from MUG1 (file units undone), all turned from CD to basic."""
    use_mug1 = mug1 is not None and bool(punch.tug1)
    ids = sorted(set(punch.boundary) | (set(punch.tug1) if use_mug1 else set()))
    n_nodes, n = len(ids), modes.shape[1]
    to_file = np.array([1.0 / length if 1 <= c <= 3 else 1.0 for _, c in labels])
    cd = np.zeros((n_nodes, 6, n))
    note = "none: the nodes are the boundary grids"
    mismatch = 0.0
    if use_mug1:
        if mug1.shape[1] != len(labels) or (punch.tug1_shape is not None
                                            and mug1.shape != punch.tug1_shape):
            raise ReadError(f"{punch.path}: MUG1 is {mug1.shape[0]} x {mug1.shape[1]}, but "
                            f"DTI TUG1 states {punch.tug1_shape} and the a-set has "
                            f"{len(labels)} DOFs")
        out_scale = np.array([length] * 3 + [1.0] * 3)
        for k, gid in enumerate(ids):
            if gid in punch.tug1:
                row = punch.tug1[gid]
                if row + 6 > mug1.shape[0]:
                    raise ReadError(f"{punch.path}: DTI TUG1 puts grid {gid} at MUG1 row "
                                    f"{row + 1}, beyond its {mug1.shape[0]} rows")
                cd[k] = out_scale[:, None] * (mug1[row:row + 6] @ (to_file[:, None] * modes))
        note = f"MUG1 rows of {len(punch.tug1)} grid(s) (DTI TUG1)"
    scale = max(float(np.max(np.abs(modes))), 1e-300)
    where = {g: k for k, g in enumerate(ids)}
    for gid, comps in punch.boundary.items():
        for c in comps:
            row = modes[index[(gid, c)]]
            if use_mug1 and gid in punch.tug1:
                mismatch = max(mismatch, float(np.max(np.abs(cd[where[gid], c - 1] - row))))
            cd[where[gid], c - 1] = row
    if use_mug1:
        note += f"; at the boundary components MUG1 and the a-set differ by " \
                f"{mismatch / scale:.2e} of the largest entry"
    grid_pos = np.searchsorted(punch.grid_ids, ids)
    frames = punch.frames[grid_pos]
    phi = np.einsum("kab,kbn->kan", frames, cd[:, :3]).reshape(3 * n_nodes, n)
    psi = np.einsum("kab,kbn->kan", frames, cd[:, 3:]).reshape(3 * n_nodes, n)
    n_q = len(punch.qset)
    rows, cols, vals = [], [], []
    for j, (pid, c) in enumerate(labels):
        if c == 0:
            rows.append(j)
            cols.append(6 * n_nodes + punch.qset.index(pid))
            vals.append(1.0)
            continue
        k = where[pid]
        axis = frames[k][:, (c - 1) % 3]
        base = 6 * k + (0 if c <= 3 else 3)
        rows += [j] * 3
        cols += [base, base + 1, base + 2]
        vals += axis.tolist()
    select = sp.csr_matrix((vals, (rows, cols)), shape=(len(labels), 6 * n_nodes + n_q))
    mass = (select.T @ sp.csr_matrix(m_mat) @ select).tocsr()
    mass.eliminate_zeros()
    return np.array(ids, dtype=np.int64), phi, psi, 0.5 * (mass + mass.T), note


def _damping(found, modes, weight, system, punch: Punch, w4):
    """(D_ff or None, what was done): viscous BAA projected on the modes; structural K4AA
    as K4AA / w4 when w4 (or PARAM,W4) is given, else left out with a warning."""
    scale = system.mass / system.time * np.outer(weight, weight)
    total = np.zeros((modes.shape[1],) * 2)
    notes = []
    if "damping" in found and np.any(found["damping"]):
        total += modes.T @ (scale * found["damping"]) @ modes
        notes.append("viscous BAA projected on the modes")
    if "structural" in found and np.any(found["structural"]):
        if w4 is None and "W4" in punch.params:
            w4 = float(punch.params["W4"].replace("D", "E"))
        if w4:
            total += modes.T @ (scale * found["structural"] / float(w4)) @ modes
            notes.append(f"structural K4AA as viscous K4AA / W4, W4 = {w4:g} rad per time "
                         "unit of the files")
        else:
            text = (f"{punch.path}: structural damping K4AA is not applied: a time-domain "
                    "run needs it as viscous damping; give w4 (rad per time unit) or "
                    "PARAM,W4")
            warnings.warn(text, UserWarning, stacklevel=3)
            notes.append("structural K4AA not applied (no W4)")
    if not notes:
        return None, "none (zero damping; the default)"
    if not np.any(total):  # nothing applied: no damping matrix (zero damping)
        return None, "; ".join(notes)
    return 0.5 * (total + total.T), "; ".join(notes)


#: This format's entry in flexmbs.modal.io.registry (registered when a format is needed):
#: name, extensions, description, reader, writer.
MODAL_FORMAT = ("nastran-extse", [".pch"],
                "Nastran external superelement (EXTSEOUT punch + OP4 or DMIG matrices)",
                read_nastran_superelement)
