"""MBDyn's ASCII modal FEM file (``.fem``): the input of MBDyn's ``modal`` joint.

The format is written by MBDyn's ``femgen`` (from NASTRAN), by Code_Aster and by the
Octave tools of mboct-mbdyn-pkg (``mbdyn_pre_write_fem_data``). It is described in the
MBDyn input manual, "Modal Element / FEM File Format", and defined in practice by the
parser ``ReadModal`` in MBDyn's ``mbdyn/struct/modal.cc``. A file is a sequence of
record groups, each introduced by a comment line ``** RECORD GROUP <n>, <any text>``;
other lines starting with ``**`` are comments; values are whitespace separated and
may run over any number of lines::

    ** RECORD GROUP 1, HEADER
    **   REVISION, NODE, NORMAL, ATTACHMENT, CONSTRAINT, REJECTED MODES
         REV0      8     2       0           0           0
    ** RECORD GROUP 2, FINITE ELEMENT NODE LIST        NNODES labels
    ** RECORD GROUP 3, INITIAL MODAL DISPLACEMENTS     NMODES values (optional)
    ** RECORD GROUP 4, INITIAL MODAL VELOCITIES        NMODES values (optional)
    ** RECORD GROUP 5/6/7, NODAL X/Y/Z COORDINATES     NNODES values each
    ** RECORD GROUP 8, MODE SHAPES                     per mode: a "**" line, then
                                                       NNODES rows  X Y Z RX RY RZ
    ** RECORD GROUP 9, MODAL MASS MATRIX               NMODES x NMODES
    ** RECORD GROUP 10, MODAL STIFFNESS MATRIX         NMODES x NMODES
    ** RECORD GROUP 11, DIAGONAL OF LUMPED MASS MATRIX NNODES rows  m m m Jx Jy Jz
    ** RECORD GROUP 12, RIGID BODY INERTIA             mass, CM (3), J about CM (3x3)
    ** RECORD GROUP 13, MODAL DAMPING MATRIX           NMODES x NMODES (optional)
    ** END OF FILE

with ``NMODES = NNORMAL + NATTACHED + NCONSTRAINT - NREJECTED``. Record group 8 holds
``NNORMAL + NATTACHED + NCONSTRAINT`` shapes, the ``NREJECTED`` rejected ones first
(MBDyn skips them). Groups 3, 4, 11, 12 and 13 are optional for MBDyn; flexmbs needs
group 11, the nodal masses, for the inertia invariants. Matrices are read row by row
(as MBDyn does). Groups numbered above 13 (the mboct fork writes inertia invariants
and stress-stiffening matrices there) are skipped and listed in the metadata.
Anything before ``RECORD GROUP 1`` is ignored, as by MBDyn.

Beyond what MBDyn accepts, numbers may use Fortran exponents (``1.0D+03``).

The file carries no units and no statement of the reference frame: give ``units``
(the unit system of the numbers) and, unless the modes tell it clearly, the frame
(see :func:`read_mbdyn_fem`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..._files import write_text
from ...errors import FlexmbsError, ReadError, ValidationError
from ..data import MEAN_AXIS_RTOL, ModalData, ModeKind, ReferenceFrame
from ..units import get_units

#: A node is "at rest" when every mode-shape entry of it is at most this fraction of the
#: largest entry (separately for translations and rotations).
ZERO_ROW_RTOL = 1e-12
#: The three translational lumped masses of a node must agree to this relative tolerance.
LUMPED_ISOTROPY_RTOL = 1e-6
#: Record groups MBDyn requires (3 and 4 became optional in MBDyn 1.3).
REQUIRED_GROUPS = (1, 2, 5, 6, 7, 8, 9, 10)
#: The last record group MBDyn's reader knows.
LAST_KNOWN_GROUP = 13

_GROUP_NAMES = {
    1: "HEADER", 2: "FINITE ELEMENT NODE LIST", 3: "INITIAL MODAL DISPLACEMENTS",
    4: "INITIAL MODAL VELOCITIES", 5: "NODAL X COORDINATES", 6: "NODAL Y COORDINATES",
    7: "NODAL Z COORDINATES", 8: "MODE SHAPES", 9: "MODAL MASS MATRIX",
    10: "MODAL STIFFNESS MATRIX", 11: "DIAGONAL OF LUMPED MASS MATRIX",
    12: "RIGID BODY INERTIA MATRIX", 13: "MODAL DAMPING MATRIX",
}
_GROUP_RE = re.compile(r"^\*\*\s*RECORD\s+GROUP\b\s*(\S*)", re.IGNORECASE)
_END_RE = re.compile(r"^\*\*\s*END\s+OF\s+FILE", re.IGNORECASE)


# ---------------------------------------------------------------------------- scanning
@dataclass
class _Group:
    number: int
    line: int  # line number of the "** RECORD GROUP" line
    tokens: list[str] = field(default_factory=list)
    token_lines: list[int] = field(default_factory=list)

    def where(self) -> str:
        name = _GROUP_NAMES.get(self.number, "?")
        return f"RECORD GROUP {self.number} ({name}, line {self.line})"


def _scan(path: Path) -> tuple[dict[int, _Group], list[int]]:
    """Split the file into record groups of whitespace-separated tokens with line numbers."""
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        raise ReadError(f"{path}: not a text file ({exc}); expected an MBDyn ASCII .fem "
                        "file") from exc
    except OSError as exc:
        raise ReadError(f"{path}: cannot read ({exc})") from exc
    groups: dict[int, _Group] = {}
    ignored: list[int] = []
    current: _Group | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("**"):
            if _END_RE.match(line):
                break
            match = _GROUP_RE.match(line)
            if match is None:
                continue  # a comment
            number_text = match.group(1).rstrip(",")
            if not number_text.isdigit():
                raise ReadError(f"{path}, line {lineno}: cannot read the RECORD GROUP number "
                                f"{number_text!r} in {line!r}")
            number = int(number_text)
            if number == 0:
                raise ReadError(f"{path}, line {lineno}: RECORD GROUP 0 does not exist "
                                "(groups are numbered from 1)")
            if not groups and number != 1:
                raise ReadError(f"{path}, line {lineno}: RECORD GROUP {number} comes before "
                                "RECORD GROUP 1 (the header must come first)")
            if number > LAST_KNOWN_GROUP:
                ignored.append(number)
                current = None
                continue
            if number in groups:
                raise ReadError(f"{path}, line {lineno}: RECORD GROUP {number} appears twice "
                                f"(first at line {groups[number].line})")
            current = _Group(number, lineno)
            groups[number] = current
            continue
        if current is None:
            continue  # text before group 1 (ignored by MBDyn) or inside a skipped group
        parts = line.split()
        current.tokens.extend(parts)
        current.token_lines.extend([lineno] * len(parts))
    if 1 not in groups:
        raise ReadError(f"{path}: no '** RECORD GROUP 1' header line found; not an MBDyn "
                        "modal FEM file")
    missing = [g for g in REQUIRED_GROUPS if g not in groups]
    if missing:
        raise ReadError(f"{path}: incomplete MBDyn FEM file, RECORD GROUP(s) "
                        f"{', '.join(f'{g} ({_GROUP_NAMES[g]})' for g in missing)} missing")
    return groups, ignored


def _floats(path: Path, group: _Group, count: int, what: str) -> np.ndarray:
    """The group's tokens as ``count`` finite floats (Fortran D exponents accepted)."""
    if len(group.tokens) != count:
        where = ""
        if len(group.tokens) > count:
            where = f"; the first extra value is {group.tokens[count]!r} at line " \
                    f"{group.token_lines[count]}"
        raise ReadError(f"{path}: {group.where()} holds {len(group.tokens)} value(s), expected "
                        f"{count} ({what}){where}")
    try:
        values = np.asarray(group.tokens, dtype=float)
    except ValueError:
        values = np.empty(count)
        for k, tok in enumerate(group.tokens):
            try:
                values[k] = float(tok.replace("D", "E").replace("d", "e"))
            except ValueError:
                raise ReadError(f"{path}, line {group.token_lines[k]}: {group.where()}: "
                                f"{tok!r} is not a number ({what})") from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        k = int(bad[0])
        raise ReadError(f"{path}, line {group.token_lines[k]}: {group.where()}: value "
                        f"{group.tokens[k]!r} is not finite ({what})")
    return values


def _header(path: Path, group: _Group) -> tuple[str, list[int]]:
    names = ("NNODES", "NNORMAL", "NATTACHED", "NCONSTRAINT", "NREJECTED")
    if len(group.tokens) != 6:
        raise ReadError(f"{path}: {group.where()} holds {len(group.tokens)} value(s) "
                        f"{group.tokens[:8]}, expected 6: REV {' '.join(names)}")
    counts = []
    for name, tok, line in zip(names, group.tokens[1:], group.token_lines[1:], strict=True):
        if not re.fullmatch(r"\+?\d+", tok):
            raise ReadError(f"{path}, line {line}: header field {name} is {tok!r}; expected a "
                            "non-negative integer")
        counts.append(int(tok))
    return group.tokens[0], counts


def _node_labels(group: _Group, n_nodes: int) -> tuple[np.ndarray, list[str] | None]:
    """Integer node labels, or 1..N plus the original strings when labels are not integers."""
    try:
        ids = np.array([int(t) for t in group.tokens], dtype=np.int64)
    except ValueError:
        return np.arange(1, n_nodes + 1, dtype=np.int64), list(group.tokens)
    return ids, None


# ---------------------------------------------------------------------------- frames
def _rest_nodes(phi: np.ndarray, psi: np.ndarray | None) -> np.ndarray:
    """Indices of nodes whose translations (and rotations) vanish in every mode."""
    n_nodes = phi.shape[0] // 3
    rest = np.ones(n_nodes, dtype=bool)
    for shapes in (phi, psi):
        if shapes is None or shapes.size == 0:
            continue
        scale = float(np.max(np.abs(shapes)))
        per_node = np.abs(shapes).reshape(n_nodes, -1).max(axis=1)
        rest &= per_node <= ZERO_ROW_RTOL * scale
    return np.flatnonzero(rest)


def _rigid_content(nodes: np.ndarray, phi: np.ndarray, lumped: np.ndarray) -> np.ndarray:
    """Rigid-body content of each mode with lumped masses (as InertiaInvariants.rigid_content)."""
    n_nodes = nodes.shape[0]
    m3 = np.repeat(lumped, 3)
    basis = np.zeros((3 * n_nodes, 6))
    basis[:, :3] = np.tile(np.eye(3), (n_nodes, 1))
    x, y, z = nodes.T
    rot = np.zeros((n_nodes, 3, 3))  # -skew(x_k)
    rot[:, 0, 1], rot[:, 0, 2] = z, -y
    rot[:, 1, 0], rot[:, 1, 2] = -z, x
    rot[:, 2, 0], rot[:, 2, 1] = y, -x
    basis[:, 3:] = rot.reshape(3 * n_nodes, 3)
    m_r = basis.T @ (m3[:, None] * basis)
    c = basis.T @ (m3[:, None] * phi)
    sol = np.linalg.lstsq(m_r, c, rcond=1e-12)[0]
    diag = np.einsum("ij,i,ij->j", phi, m3, phi)
    return np.einsum("aj,aj->j", c, sol) / np.where(diag > 0, diag, 1.0)


def _labels_text(ids: np.ndarray, idx: np.ndarray, limit: int = 10) -> str:
    shown = ", ".join(str(int(ids[i])) for i in idx[:limit])
    return shown + (f", ... ({idx.size} in all)" if idx.size > limit else "")


def _decide_frame(path: Path, *, reference_frame, attach_set, nodes, phi, psi, lumped,
                  ids, node_sets) -> tuple[ReferenceFrame, str | None, str]:
    """Return (frame, attach set name, how it was decided); may add a set to node_sets."""
    rest = _rest_nodes(phi, psi)
    if rest.size == nodes.shape[0]:
        raise ReadError(f"{path}: every mode shape is zero at every node (RECORD GROUP 8); "
                        "the file holds no deformation modes")
    if rest.size:
        node_sets["attached"] = rest
    if reference_frame is not None:
        try:
            frame = ReferenceFrame(reference_frame)
        except ValueError:
            raise ValidationError(
                f"read_mbdyn_fem: reference_frame {reference_frame!r} is not one of "
                f"{[f.value for f in ReferenceFrame]}") from None
        if frame is ReferenceFrame.MEAN_AXIS:
            if attach_set is not None:
                raise ValidationError("read_mbdyn_fem: attach_set applies only to "
                                      "reference_frame='attached', not 'mean-axis'")
            return frame, None, "stated by caller"
        if attach_set is None:
            if not rest.size:
                raise ReadError(
                    f"{path}: reference_frame='attached' was stated without attach_set, and no "
                    "node is at rest in every mode, so no attachment set can be inferred; pass "
                    "attach_set=<node set name or list of node labels>")
            return frame, "attached", ("stated by caller; attach set 'attached' = nodes at "
                                       f"rest in every mode: {_labels_text(ids, rest)}")
        if isinstance(attach_set, str):
            if attach_set not in node_sets:
                raise ReadError(f"{path}: attach_set {attach_set!r} is not a node set of this "
                                f"file; known: {sorted(node_sets)} (or pass a list of node "
                                "labels)")
            return frame, attach_set, "stated by caller"
        labels = np.asarray(attach_set, dtype=np.int64).ravel()
        lookup = {int(v): i for i, v in enumerate(ids)}
        unknown = [int(v) for v in labels if int(v) not in lookup]
        if unknown or labels.size == 0:
            raise ReadError(f"{path}: attach_set names node label(s) {unknown or '(none)'} "
                            f"that RECORD GROUP 2 does not list")
        node_sets["attach"] = np.array([lookup[int(v)] for v in labels], dtype=np.int64)
        return frame, "attach", "stated by caller (attach set from node labels)"
    if attach_set is not None:
        raise ValidationError("read_mbdyn_fem: attach_set was given without reference_frame; "
                              "pass reference_frame='attached' as well")
    if rest.size:
        return (ReferenceFrame.ATTACHED, "attached",
                f"detected: node(s) {_labels_text(ids, rest)} are at rest in every mode "
                f"(|entry| <= {ZERO_ROW_RTOL:g} x largest); node set 'attached'")
    content = _rigid_content(nodes, phi, lumped)
    worst = float(np.max(content))
    if worst <= MEAN_AXIS_RTOL:
        return (ReferenceFrame.MEAN_AXIS, None,
                f"detected: no node at rest and rigid-body content at most {worst:.2e} of "
                f"each mode's modal mass (limit {MEAN_AXIS_RTOL:g}); mean axes")
    k = int(np.argmax(content))
    raise ReadError(
        f"{path}: cannot tell the reference frame of these modes. No node is at rest in every "
        f"mode (so they are not attached-frame modes), and mode {k + 1} carries rigid-body "
        f"content {worst:.3g} of its modal mass (above {MEAN_AXIS_RTOL:g}, so not mean-axis "
        "modes). State it: read_mbdyn_fem(..., reference_frame='attached', attach_set=<node "
        "labels where the modes vanish>) or reference_frame='mean-axis' for free-free modes "
        "orthogonal to rigid motion.")


# ---------------------------------------------------------------------------- reader
def read_mbdyn_fem(path: str | os.PathLike, *, units: str | None = None,
                   reference_frame: str | None = None, attach_set=None,
                   damping_ratio=None) -> ModalData:
    """Read an MBDyn modal FEM file (``.fem``) into SI :class:`ModalData`.

    Parameters
    ----------
    path : path-like
        The ``.fem`` file.
    units : str, optional
        Unit system of the file's numbers (e.g. ``"mm-t-s"``); default SI. Coordinates and
        translational shapes scale by length, rotational shapes stay (radians), M_ff by
        mass*length², K_ff by mass*length²/time², D_ff by mass*length²/time, nodal masses
        by mass, nodal rotary inertia by mass*length², initial modal velocities by 1/time.
    reference_frame : {"attached", "mean-axis"}, optional
        State the frame. Default: detect it. Nodes at rest in every mode (all six
        components at most 1e-12 of the largest entry) form the node set ``"attached"``
        and make the frame attached to it; otherwise modes without rigid-body content are
        mean-axis modes; otherwise a :class:`ReadError` asks the caller to state it.
    attach_set : str or sequence of int, optional
        With ``reference_frame="attached"``: a node set name (``"attached"``, ``"all"``)
        or node labels, which become the node set ``"attach"``.
    damping_ratio : float or array_like, optional
        Modal damping ratios; they replace a damping matrix of RECORD GROUP 13.

    Returns
    -------
    ModalData
        Lumped nodal masses (group 11), node labels as ``node_ids``, node sets ``"all"``
        (and ``"attached"``); rotational shapes as ``psi`` unless they are all zero.
        ``metadata`` holds the source, header counts, how the frame was decided
        (``reference_frame_source``), initial modal displacements/velocities, nodal
        rotary inertia, the rigid-body inertia of group 12 and skipped groups.

    Raises
    ------
    ReadError
        Missing file or record group, wrong value counts, unreadable numbers (naming the
        line), anisotropic lumped masses, an undecidable frame, or data that ModalData
        rejects (the message names the file).
    """
    path = Path(path)
    if not path.exists():
        raise ReadError(f"MBDyn FEM file {str(path)!r} does not exist")
    system = get_units(units)
    length, mass_u, time_u = system.length, system.mass, system.time
    groups, ignored = _scan(path)

    rev, (n_nodes, n_normal, n_attached, n_constraint, n_rejected) = _header(path, groups[1])
    n_total = n_normal + n_attached + n_constraint
    n_modes = n_total - n_rejected
    if n_nodes < 1:
        raise ReadError(f"{path}: {groups[1].where()}: NNODES = {n_nodes}; a body needs nodes")
    if n_modes < 1:
        raise ReadError(f"{path}: {groups[1].where()}: NMODES = NNORMAL + NATTACHED + "
                        f"NCONSTRAINT - NREJECTED = {n_normal} + {n_attached} + "
                        f"{n_constraint} - {n_rejected} = {n_modes}; need at least one mode")

    g2 = groups[2]
    if len(g2.tokens) != n_nodes:
        raise ReadError(f"{path}: {g2.where()} lists {len(g2.tokens)} node label(s), but the "
                        f"header says NNODES = {n_nodes}")
    ids, string_labels = _node_labels(g2, n_nodes)
    if string_labels is None and np.unique(ids).size != n_nodes:
        values, counts = np.unique(ids, return_counts=True)
        raise ReadError(f"{path}: {g2.where()}: node label {int(values[counts > 1][0])} "
                        "appears more than once")

    nodes = np.column_stack([
        _floats(path, groups[g], n_nodes, f"one {axis} coordinate per node")
        for g, axis in ((5, "X"), (6, "Y"), (7, "Z"))
    ]) * length

    shapes = _floats(path, groups[8], n_total * n_nodes * 6,
                     f"{n_total} shape(s) incl. {n_rejected} rejected x {n_nodes} nodes x 6")
    shapes = shapes.reshape(n_total, n_nodes, 6)[n_rejected:]  # rejected modes come first
    phi = np.ascontiguousarray(shapes[:, :, :3].transpose(1, 2, 0)).reshape(3 * n_nodes,
                                                                           n_modes) * length
    psi = np.ascontiguousarray(shapes[:, :, 3:].transpose(1, 2, 0)).reshape(3 * n_nodes, n_modes)
    if not np.any(psi):
        psi = None

    square = f"{n_modes} x {n_modes} matrix, row by row"
    m_ff = _floats(path, groups[9], n_modes**2, square).reshape(n_modes, n_modes)
    k_ff = _floats(path, groups[10], n_modes**2, square).reshape(n_modes, n_modes)
    m_ff = m_ff * mass_u * length**2
    k_ff = k_ff * mass_u * length**2 / time_u**2

    if 11 not in groups:
        raise ReadError(f"{path}: RECORD GROUP 11 (DIAGONAL OF LUMPED MASS MATRIX) is missing; "
                        "flexmbs needs the nodal masses for the inertia invariants")
    g11 = groups[11]
    diag = _floats(path, g11, n_nodes * 6, "6 values per node: m m m Jx Jy Jz")
    diag = diag.reshape(n_nodes, 6)
    trans = diag[:, :3]
    scale = max(float(np.max(np.abs(trans))), np.finfo(float).tiny)
    spread = np.max(np.abs(trans - trans[:, :1]), axis=1)
    bad = np.flatnonzero(spread > LUMPED_ISOTROPY_RTOL * np.maximum(np.abs(trans[:, 0]),
                                                                    1e-12 * scale))
    if bad.size:
        k = int(bad[0])
        label = string_labels[k] if string_labels else int(ids[k])
        raise ReadError(
            f"{path}, line {g11.token_lines[6 * k]}: RECORD GROUP 11: node {label} has "
            f"translational lumped masses {trans[k, 0]:.9g}, {trans[k, 1]:.9g}, "
            f"{trans[k, 2]:.9g}; flexmbs needs equal x/y/z masses per node (anisotropic "
            f"lumped mass is not supported; {bad.size} node(s) differ)")
    lumped = trans[:, 0] * mass_u
    rotary = diag[:, 3:] * mass_u * length**2

    metadata: dict = {
        "source": str(path),
        "format": "mbdyn-fem",
        "revision": rev,
        "header": {"NNODES": n_nodes, "NNORMAL": n_normal, "NATTACHED": n_attached,
                   "NCONSTRAINT": n_constraint, "NREJECTED": n_rejected},
    }
    if np.any(rotary):
        metadata["lumped_rotary_inertia"] = rotary.tolist()
    if string_labels is not None:
        metadata["node_labels"] = string_labels
    per_mode = {}
    if 3 in groups:
        per_mode["initial_modal_displacements"] = _floats(
            path, groups[3], n_modes, "one value per mode").tolist()
    if 4 in groups:
        per_mode["initial_modal_velocities"] = (_floats(
            path, groups[4], n_modes, "one value per mode") / time_u).tolist()
    if per_mode:
        metadata["per_mode"] = per_mode
    if 12 in groups:
        g12 = _floats(path, groups[12], 13, "mass, centre of mass (3), inertia about it (3x3)")
        metadata["rigid_body_inertia"] = {
            "mass": float(g12[0] * mass_u),
            "center_of_mass": (g12[1:4] * length).tolist(),
            "inertia_cm": (g12[4:].reshape(3, 3) * mass_u * length**2).tolist(),
        }
    damping_matrix = None
    if 13 in groups:
        d_ff = _floats(path, groups[13], n_modes**2, square).reshape(n_modes, n_modes)
        d_ff = d_ff * mass_u * length**2 / time_u
        if damping_ratio is None:
            damping_matrix = d_ff
            metadata["damping_source"] = "RECORD GROUP 13 (modal damping matrix)"
        else:
            metadata["damping_source"] = ("damping_ratio stated by caller; RECORD GROUP 13 "
                                          "damping matrix ignored")
    elif damping_ratio is not None:
        metadata["damping_source"] = "damping_ratio stated by caller"
    if ignored:
        metadata["ignored_record_groups"] = ignored

    node_sets: dict[str, np.ndarray] = {"all": np.arange(n_nodes, dtype=np.int64)}
    frame, attach, how = _decide_frame(
        path, reference_frame=reference_frame, attach_set=attach_set, nodes=nodes, phi=phi,
        psi=psi, lumped=lumped, ids=ids, node_sets=node_sets)
    metadata["reference_frame_source"] = how

    kinds = ModeKind.NORMAL if n_attached == n_constraint == 0 else ModeKind.IMPORTED
    # with rotational shapes, the nodal rotary inertia (Jx, Jy, Jz of group 11) belongs to
    # the mass description: a 6N diagonal mass, so that M_ff can be checked mode by mode
    mass = lumped
    if psi is not None and np.any(rotary):
        mass = sp.diags(np.column_stack([np.repeat(lumped[:, None], 3, axis=1),
                                         rotary]).ravel()).tocsr()
    try:
        return ModalData(
            nodes=nodes, phi=phi, M_ff=m_ff, K_ff=k_ff, mass=mass,
            reference_frame=frame, attach_set=attach, psi=psi,
            damping_ratio=damping_ratio, damping_matrix=damping_matrix,
            node_sets=node_sets, node_ids=ids, mode_kinds=(kinds,) * n_modes,
            units=system.name, metadata=metadata,
        )
    except ReadError:
        raise
    except FlexmbsError as exc:
        raise ReadError(f"{path}: {exc}") from exc


# ---------------------------------------------------------------------------- writer
def _rows(values: np.ndarray, per_line: int) -> str:
    flat = np.asarray(values, dtype=float).ravel()
    lines = []
    for start in range(0, flat.size, per_line):
        lines.append(" ".join(f"{v:.16e}" for v in flat[start:start + per_line]))
    return "\n".join(lines) + "\n"


def _lumped_diagonal(data: ModalData, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Translational masses (N,) and rotary inertias (N, 3) of a diagonal mass description."""
    n_nodes = data.n_nodes
    refuse = ValidationError(
        f"write_mbdyn_fem({str(path)!r}): the body has a consistent (non-diagonal) mass "
        "matrix; the MBDyn FEM format stores lumped nodal masses only (RECORD GROUP 11)")
    if data.is_lumped:
        rotary = np.zeros((n_nodes, 3))
        candidate = np.asarray(data.metadata.get("lumped_rotary_inertia", rotary), float)
        return data.mass, candidate if candidate.shape == (n_nodes, 3) else rotary
    mat = sp.csr_matrix(data.mass)
    diag = mat.diagonal()
    if abs(mat - sp.diags(diag)).max() > 0:
        raise refuse
    per = diag.reshape(n_nodes, -1)
    if not np.allclose(per[:, :3], per[:, :1], rtol=LUMPED_ISOTROPY_RTOL, atol=0):
        raise refuse
    rotary = per[:, 3:6] if per.shape[1] == 6 else np.zeros((n_nodes, 3))
    return per[:, 0], rotary


def write_mbdyn_fem(data: ModalData, path: str | os.PathLike, *, units: str | None = None,
                    ) -> None:
    """Write ``data`` as an MBDyn modal FEM file (readable by MBDyn and :func:`read_mbdyn_fem`).

    Needs lumped nodal masses (the format stores a diagonal mass, group 11). All modes
    are written as normal modes (REV0 header, no rejected modes). Values are converted
    from SI to ``units`` (default SI) and written with 17 significant digits, so reading
    back with the same ``units`` reproduces the data. Rotary inertia of group 11 and the
    initial modal state come from ``metadata`` when present (else zero); group 12 holds
    the rigid-body inertia of the lumped masses (plus rotary inertia); group 13 the
    modal damping matrix D_ff when damping is nonzero. The file states no units or frame.
    """
    path = Path(path)
    if data.generalized_shapes is not None:
        from ...errors import WriteError

        raise WriteError(f"cannot write {str(path)!r}: the mass description has "
                         f"{data.generalized_shapes.shape[0]} coordinates without a position "
                         "(a Nastran superelement), which a .fem file does not hold; write "
                         "the native format (.fmd.h5)")
    system = get_units(units)
    length, mass_u, time_u = system.length, system.mass, system.time
    n_nodes, n = data.n_nodes, data.n_modes
    meta = data.metadata
    trans_mass, rotary = _lumped_diagonal(data, path)
    q0 = np.zeros(n)
    qd0 = np.zeros(n)
    for key, target in (("initial_modal_displacements", q0),
                        ("initial_modal_velocities", qd0)):
        values = meta.get("per_mode", {}).get(key)
        if values is not None:
            target[:] = np.asarray(values, dtype=float)

    phi = data.phi.reshape(n_nodes, 3, n) / length
    psi = (np.zeros_like(phi) if data.psi is None else data.psi.reshape(n_nodes, 3, n))
    shapes = np.concatenate([phi, psi], axis=1)  # (N, 6, n)

    total = float(np.sum(trans_mass))
    com = data.center_of_mass if total > 0 else np.zeros(3)
    # a 6N mass already carries the rotary inertia in the invariants' inertia tensor
    j_cm = data.inertia_tensor + (np.diag(rotary.sum(axis=0)) if data.is_lumped else 0.0)

    out = [
        "** MBDyn MODAL DATA FILE\n",
        f"** written by flexmbs (write_mbdyn_fem); units {system.name}; "
        f"reference frame {data.reference_frame.value}"
        + (f" (attach set {data.attach_set!r})" if data.attach_set else "") + "\n",
        "**\n** RECORD GROUP 1, HEADER\n",
        "**   REVISION, NODE, NORMAL, ATTACHMENT, CONSTRAINT, REJECTED MODES.\n",
        f"      REV0 {n_nodes} {n} 0 0 0\n",
        "**\n** RECORD GROUP 2, FINITE ELEMENT NODE LIST\n",
        "\n".join(" ".join(str(int(v)) for v in data.node_ids[s:s + 10])
                  for s in range(0, n_nodes, 10)) + "\n",
        "**\n** RECORD GROUP 3, INITIAL MODAL DISPLACEMENTS\n", _rows(q0, 6),
        "**\n** RECORD GROUP 4, INITIAL MODAL VELOCITIES\n", _rows(qd0 * time_u, 6),
    ]
    for k, axis in enumerate("XYZ"):
        out += [f"**\n** RECORD GROUP {5 + k}, NODAL {axis} COORDINATES\n",
                _rows(data.nodes[:, k] / length, 1)]
    out.append("**\n** RECORD GROUP 8, MODE SHAPES\n")
    for j in range(n):
        out += [f"**    NORMAL MODE SHAPE #  {j + 1}\n", _rows(shapes[:, :, j], 6)]
    out += ["**\n** RECORD GROUP 9, MODAL MASS MATRIX\n",
            "".join(_rows(row, n) for row in data.M_ff / (mass_u * length**2)),
            "**\n** RECORD GROUP 10, MODAL STIFFNESS MATRIX\n",
            "".join(_rows(row, n) for row in data.K_ff / (mass_u * length**2 / time_u**2))]
    diag = np.column_stack([np.repeat(trans_mass[:, None], 3, axis=1) / mass_u,
                            rotary / (mass_u * length**2)])
    out += ["**\n** RECORD GROUP 11, DIAGONAL OF LUMPED MASS MATRIX\n", _rows(diag, 6),
            "**\n** RECORD GROUP 12, RIGID BODY INERTIA MATRIX\n",
            _rows([total / mass_u], 1), _rows(com / length, 3),
            _rows(j_cm / (mass_u * length**2), 3)]
    d_ff = data.D_ff
    if np.any(d_ff):
        out += ["**\n** RECORD GROUP 13, MODAL DAMPING MATRIX\n",
                "".join(_rows(row, n) for row in d_ff / (mass_u * length**2 / time_u))]
    out.append("**\n** END OF FILE\n")
    write_text(path, "".join(out), "MBDyn modal file")


#: This format's entry in flexmbs.modal.io.registry (registered when a format is needed):
#: name, extensions, description, reader, writer.
MODAL_FORMAT = ("mbdyn-fem", (".fem",), "MBDyn modal FEM file (ASCII)", read_mbdyn_fem,
                write_mbdyn_fem)
