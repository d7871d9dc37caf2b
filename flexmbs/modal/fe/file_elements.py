"""The element information of FE data read from files: what stiffening, modal derivatives
and stress modes need beyond the mass and stiffness matrices (docs/theory_stiffening.md,
docs/theory_shells.md).

An FE model read from files carries its mesh (``FEModel.cells``, meshio cell types, node
indices) and, when the user or the file gives them, an isotropic material
(``metadata["material"]``: E [Pa], ν) and the shells' thickness
(``metadata["shell_thickness"]``: one value [m], or cell type → one value per cell).
Two kinds of model have element information here:

* **solids** (3 DOFs per node): the cells of
  :data:`~flexmbs.modal.fe.solid_elements.STRESS_CELLS`;
* **shells** (6 DOFs per node): the quadrilaterals and triangles of
  :data:`~flexmbs.modal.fe.shell_elements.SHELL_CELLS` with a thickness.

:func:`file_elements_of` gathers them and says by name what is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ...errors import ValidationError
from . import shell_elements, solid_elements


@dataclass(frozen=True)
class FileElements:
    """The solid or shell elements of an FE model read from files.

    Attributes
    ----------
    cells : dict[str, ndarray]
        Solid cell type → connectivity (node indices); empty for shells.
    labels : dict[str, ndarray]
        Cell type → element labels (for messages).
    young, nu : float
        The isotropic material: E [Pa] and ν.
    shells : dict[str, ndarray]
        Shell cell type (``quad``, ``triangle``) → connectivity (node indices); empty for
        solids.
    thickness : dict[str, ndarray]
        Shell cell type → the thickness of each cell [m].
    """

    cells: dict
    labels: dict
    young: float
    nu: float
    shells: dict = field(default_factory=dict)
    thickness: dict = field(default_factory=dict, repr=False)

    @property
    def lame(self) -> tuple[float, float]:
        """(λ, μ) [Pa] of the material."""
        return solid_elements.isotropic_lame(self.young, self.nu)

    def geometric_stiffness(self, nodes: np.ndarray, u: np.ndarray) -> sp.csr_matrix:
        """The geometric stiffness (n_dof, n_dof) of the stresses of the displacement
        ``u`` (n_dof,) in these elements."""
        if self.shells:
            return sum((shell_elements.geometric_stiffness(
                nodes, conn, self.thickness[kind], self.young, self.nu, u,
                self.labels.get(kind)) for kind, conn in self.shells.items()),
                sp.csr_matrix((len(u), len(u))))
        return solid_elements.geometric_stiffness(nodes, self.cells, u, self.lame,
                                                  self.labels)


def _thickness(fe, kind: str, conn: np.ndarray, what: str, source: str) -> np.ndarray:
    """The thickness (E,) [m] of the shells ``kind`` from ``metadata["shell_thickness"]``."""
    given = fe.metadata.get("shell_thickness")
    if given is None:
        raise ValidationError(
            f"{what}: {source!r} has shell elements but no thickness: give it as "
            f"metadata['shell_thickness'] (metres, one value or one per element; "
            f"flexmbs reduce --thickness T, or PSHELL/SECDATA/*SHELL SECTION in the mesh "
            f"file)")
    if isinstance(given, dict):
        if kind not in given:
            raise ValidationError(f"{what}: metadata['shell_thickness'] of {source!r} has "
                                  f"no entry for its {kind!r} cells (it has "
                                  f"{sorted(given)})")
        given = given[kind]
    t = np.asarray(given, float)
    if t.ndim == 0:
        t = np.full(len(conn), float(t))
    if t.shape != (len(conn),):
        raise ValidationError(f"{what}: metadata['shell_thickness'] of {source!r} has "
                              f"{t.size} values for {len(conn)} {kind} cells")
    bad = np.nonzero(~(np.isfinite(t) & (t > 0)))[0]
    if bad.size:
        k = int(bad[0])
        labels = (fe.metadata.get("cell_labels") or {}).get(kind)
        label = int(labels[k]) if labels is not None else k + 1
        if not np.isfinite(t[k]):
            raise ValidationError(
                f"{what}: {kind} element {label} of {source!r} has no shell thickness: no "
                f"*SHELL SECTION or PSHELL gives it one, or it is a shell these flat "
                f"isotropic facets do not stand for (a laminate, an offset mid-surface, a "
                f"CSHEAR panel, a CQUAD8/CTRIA6 drawn by its corners): its stresses are "
                f"not computed here (docs/theory_shells.md, 'Not yet')")
        raise ValidationError(f"{what}: shell thickness must be positive [m]; element "
                              f"{label} of {source!r} has {t[k]!r}")
    return t


def file_elements_of(fe, what: str = "stiffening") -> FileElements:
    """The :class:`FileElements` of an FE model read from files. Raises ValidationError
    naming what is missing: the elements, the material, the shells' thickness, cell types
    with no stresses here, or elements that were not read."""
    files = fe.metadata.get("source_files") or {}
    source = (fe.metadata.get("generator") or fe.metadata.get("source")
              or files.get("geometry") or files.get("nodes") or "this FE model")
    kinds = sorted(fe.cells)
    known = (solid_elements.STRESS_CELLS if fe.dofs_per_node == 3
             else shell_elements.SHELL_CELLS)
    if not kinds:
        raise ValidationError(
            f"{what}: no element information in {source!r}: it needs the elements (solid "
            f"cells {list(solid_elements.STRESS_CELLS)} or shells "
            f"{list(shell_elements.SHELL_CELLS)} with an isotropic material, e.g. flexmbs "
            f"reduce --nodes part.inp with *ELEMENT blocks and --material E=...,nu=...), "
            f"or the built-in beam or hexahedral FE")
    skipped = fe.metadata.get("skipped_elements")
    if skipped:
        raise ValidationError(
            f"{what}: {source!r} has elements that were not read ({skipped}): the "
            f"stress field would miss their part of the structure")
    other = [k for k in kinds if k not in known]
    if other:
        kind = "solid" if fe.dofs_per_node == 3 else "shell"
        raise ValidationError(
            f"{what}: cell type(s) {other} of {source!r} ({fe.dofs_per_node} DOFs per "
            f"node) have no stresses here; the {kind} cells with them are {list(known)} "
            f"(solids with 3 DOFs per node, shells with 6)")
    material = fe.metadata.get("material")
    if not isinstance(material, dict) or "E" not in material or "nu" not in material:
        why = (fe.metadata.get("file_material_not_used")
               or fe.metadata.get("archive_material_not_used"))
        raise ValidationError(
            f"{what}: {source!r} has elements but no material"
            + (f" (the file's is not used: {why})" if why else "")
            + ": give the isotropic material as metadata['material'] = "
            "{'E': Pa, 'nu': -} (flexmbs reduce --material E=...,nu=...)")
    young, nu = float(material["E"]), float(material["nu"])
    solid_elements.isotropic_lame(young, nu)  # (refuses a bad E or ν by name)
    labels = fe.metadata.get("cell_labels") or {}
    if fe.dofs_per_node == 3:
        return FileElements(cells=dict(fe.cells), labels=labels, young=young, nu=nu)
    shells = {kind: np.asarray(conn, np.int64) for kind, conn in fe.cells.items()}
    return FileElements(cells={}, labels=labels, young=young, nu=nu, shells=shells,
                        thickness={kind: _thickness(fe, kind, conn, what, source)
                                   for kind, conn in shells.items()})


def strain_groups(fe, elements: FileElements) -> tuple:
    """The :class:`~flexmbs.modal.fe.nonlinear_energy.StrainGroup` s of the elements'
    cubic and quartic energy: St Venant–Kirchhoff solids, or the shells' membrane
    Green–Lagrange strain."""
    from .nonlinear_energy import solid_strain_points

    if elements.shells:
        return tuple(shell_elements.membrane_strain_group(
            fe.nodes, conn, elements.thickness[kind], elements.young, elements.nu,
            elements.labels.get(kind)) for kind, conn in elements.shells.items())
    return solid_strain_points(fe.nodes, elements.cells, elements.lame,
                               elements.labels).groups
