"""Built-in 3-D straight beam finite element (Euler–Bernoulli or Timoshenko).

Lets users without an external FE code build a flexible body: :func:`straight_beam`
meshes a prismatic beam into two-node, 12-DOF elements and returns an
:class:`~flexmbs.modal.femodel.FEModel` (SI units, 6 DOFs per node, node-major order
``[ux, uy, uz, rx, ry, rz]``, rotations in radians).

Conventions
-----------
Local element frame (right-handed, orthonormal):

* local **x** (``e1``) runs along the beam axis from node 1 to node 2;
* local **z** (``e3``) is the component of the user's ``up`` vector perpendicular to the
  axis, normalised;
* local **y** (``e2``) = ``e3 × e1`` so that ``e1 × e2 = e3``.

With the defaults ``axis=(1, 0, 0)`` and ``up=(0, 0, 1)`` the local frame coincides with
the global one. ``Iy`` / ``Iz`` are the second moments of area about local y / z:
``Iz`` resists bending in the local x–y plane (deflection ``uy``, rotation ``rz = +duy/dx``)
and ``Iy`` resists bending in the local x–z plane (deflection ``uz``,
rotation ``ry = -duz/dx``). Element DOFs are
``[u1x, u1y, u1z, r1x, r1y, r1z, u2x, u2y, u2z, r2x, r2y, r2z]``.

References
----------
* J. S. Przemieniecki, *Theory of Matrix Structural Analysis*, McGraw-Hill, 1968
  (shear-deformable beam stiffness and consistent mass).
* Z. Friedman and J. B. Kosmatka, "An improved two-node Timoshenko beam finite
  element", *Computers & Structures* 47 (1993) 473–481.
* G. R. Cowper, "The shear coefficient in Timoshenko's beam theory", *J. Appl. Mech.*
  33 (1966) 335–340.
* W. C. Young and R. G. Budynas, *Roark's Formulas for Stress and Strain*, 7th ed.
  (torsion constant of a solid rectangle).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from numbers import Integral
from typing import TYPE_CHECKING

import numpy as np

from ...errors import ValidationError
from . import sections
from .sections import positive as _positive
from .sections import real as _real

if TYPE_CHECKING:
    import scipy.sparse as sp

    from ..femodel import FEModel

__all__ = [
    "BeamSection",
    "Material",
    "beam_element_matrices",
    "beam_local_frame",
    "straight_beam",
]

THEORIES = ("euler-bernoulli", "timoshenko")
GENERATOR = "flexmbs.modal.fe.beam"


# ---------------------------------------------------------------------- validation
def _vector3(value, name: str) -> np.ndarray:
    """``value`` as a finite float array of shape (3,), or raise naming ``name``."""
    try:
        vec = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{name} must be a 3-vector of numbers, got {value!r}") from exc
    if vec.shape != (3,):
        raise ValidationError(f"{name} must be a 3-vector, got shape {vec.shape}: {value!r}")
    if not np.all(np.isfinite(vec)):
        raise ValidationError(f"{name} must be finite, got {vec.tolist()}")
    return vec


def _theory(theory) -> str:
    key = str(theory).strip().lower().replace("_", "-").replace(" ", "-")
    if key not in THEORIES:
        raise ValidationError(f"theory must be one of {THEORIES}, got {theory!r}")
    return key


def _flag(value, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise ValidationError(f"{name} must be True or False, got {value!r}")
    return bool(value)


# ---------------------------------------------------------------------- section, material
@dataclass(frozen=True)
class BeamSection:
    """Cross-section of a prismatic beam (SI units, local section axes, origin at the
    centroid; docs/beam_sections.md).

    Attributes
    ----------
    A : float
        Cross-section area [m^2].
    Iy, Iz : float
        Second moments of area about the local y and z axes through the centroid [m^4]
        (principal axes). ``Iy`` governs bending in the local x–z plane, ``Iz`` in the
        local x–y plane.
    J : float
        Saint-Venant torsion constant [m^4] (torsional stiffness is ``G J``).
    Ip : float, optional
        Polar second moment of area [m^4] used for the torsional rotary mass
        ``rho Ip``; defaults to ``Iy + Iz``.
    ky, kz : float, optional
        Timoshenko shear correction factors [-] for shear along local y (bending in the
        x–y plane, with ``Iz``) and along local z (x–z plane, with ``Iy``). Used only by
        ``theory="timoshenko"``. Default 5/6.
    kind : str
        ``rectangle``, ``box``, ``circle``, ``tube``, ``i``, ``channel`` or ``general``
        (constants given directly).
    outline : tuple of loops of (y, z) [m], optional
        The true section outline (outer loop first, then holes), drawn by renders.
    stress_points : tuple of (y, z) [m], optional
        Where the fibre stresses are taken; by default the corners of the outline's
        convex hull (:func:`~flexmbs.modal.fe.sections.hull_points`).
    dimensions : tuple of (name, value)
        The dimensions a built-in kind was made from (recorded in metadata).

    Notes
    -----
    The shear centre is assumed to coincide with the centroid; warping and
    bending–torsion coupling are not modelled (exact for doubly symmetric sections).
    Build sections with the constructors (:meth:`rectangle`, :meth:`box`, :meth:`circle`,
    :meth:`tube`, :meth:`i_beam`, :meth:`channel`, :meth:`general`); a section given by
    its constants alone has no outline and its fibre stresses fall back on the
    equivalent rectangle √(12 I_z/A) × √(12 I_y/A), with a warning.
    """

    A: float
    Iy: float
    Iz: float
    J: float
    Ip: float | None = None
    ky: float = 5.0 / 6.0
    kz: float = 5.0 / 6.0
    kind: str = "general"
    outline: tuple | None = None
    stress_points: tuple | None = None
    dimensions: tuple = ()

    def __post_init__(self) -> None:
        values = {}
        for name in ("A", "Iy", "Iz", "J", "ky", "kz"):
            values[name] = _positive(getattr(self, name), f"BeamSection.{name}")
        if self.Ip is None:
            values["Ip"] = values["Iy"] + values["Iz"]
        else:
            values["Ip"] = _positive(self.Ip, "BeamSection.Ip")
        values["kind"] = sections.section_kind(self.kind, "BeamSection.kind")
        if self.outline is not None:
            values["outline"] = sections.outline_loops(self.outline, "BeamSection.outline")
            if values["kind"] == "general":
                sections.check_outline_centroid(values["outline"], "BeamSection.outline")
        if self.stress_points is not None:
            values["stress_points"] = sections._points(self.stress_points,
                                                       "BeamSection.stress_points", 1)
        values["dimensions"] = tuple((str(k), _real(v, f"BeamSection.dimensions {k}"))
                                     for k, v in self.dimensions)
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def fibre_points(self) -> np.ndarray | None:
        """(k, 2) points (y, z) [m] where fibre stresses are taken: ``stress_points``, or
        the corners of the outline's convex hull in outline order; None without either."""
        if self.stress_points is not None:
            return np.asarray(self.stress_points, dtype=float)
        if self.outline is not None:
            return np.asarray(sections.hull_points(self.outline[0]), dtype=float)
        return None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def rectangle(cls, width_y: float, height_z: float, *, ky: float | None = None,
                  kz: float | None = None, nu: float = 0.0) -> BeamSection:
        """Solid rectangle ``width_y`` [m] along local y by ``height_z`` [m] along local z
        (formulas in :func:`flexmbs.modal.fe.sections.rectangle`; J by Roark's
        approximation, within 0.5 % of the exact series). Shear factors default to
        Cowper's rectangle value at Poisson's ratio ``nu`` (5/6 at nu = 0)."""
        return cls(**_given(sections.rectangle(width_y, height_z, nu), ky=ky, kz=kz))

    @classmethod
    def box(cls, width_y: float, height_z: float, wall: float, *, ky: float | None = None,
            kz: float | None = None) -> BeamSection:
        """Hollow rectangle (outer ``width_y`` × ``height_z``, uniform ``wall`` [m]); J by
        Bredt's formula, thin-walled shear factors
        (:func:`flexmbs.modal.fe.sections.box`)."""
        return cls(**_given(sections.box(width_y, height_z, wall), ky=ky, kz=kz))

    @classmethod
    def circle(cls, d: float, *, k: float | None = None, nu: float = 0.0) -> BeamSection:
        """Solid circle of diameter ``d`` [m]; shear factor ``k`` (both directions)
        defaults to Cowper's circle value 6 (1 + nu)/(7 + 6 nu) (6/7 at nu = 0)."""
        return cls(**_given(sections.circle(d, nu), ky=k, kz=k))

    @classmethod
    def tube(cls, outer_diameter: float, wall_thickness: float, *, k: float | None = None,
             nu: float = 0.0) -> BeamSection:
        """Circular tube of ``outer_diameter`` D [m] and ``wall_thickness`` t [m]
        (``t = D/2`` gives a solid circle); ``k`` defaults to Cowper's hollow-circle
        value at ``nu`` (:func:`flexmbs.modal.fe.sections.cowper_tube`), from 6/7
        (solid) to 1/2 (thin-walled) at nu = 0."""
        return cls(**_given(sections.tube(outer_diameter, wall_thickness, nu), ky=k, kz=k))

    @classmethod
    def i_beam(cls, width_y: float, height_z: float, flange_thickness: float,
               web_thickness: float, *, ky: float | None = None,
               kz: float | None = None) -> BeamSection:
        """I (H) section: flanges ``width_y`` × ``flange_thickness`` top and bottom, web
        of ``web_thickness`` along z, overall ``height_z`` [m]
        (:func:`flexmbs.modal.fe.sections.i_beam`)."""
        return cls(**_given(sections.i_beam(width_y, height_z, flange_thickness,
                                            web_thickness), ky=ky, kz=kz))

    @classmethod
    def channel(cls, width_y: float, height_z: float, flange_thickness: float,
                web_thickness: float, *, ky: float | None = None,
                kz: float | None = None) -> BeamSection:
        """C (channel) section, web at −y, flanges towards +y, origin at the centroid
        (:func:`flexmbs.modal.fe.sections.channel`; the shear-centre offset is not
        modelled)."""
        return cls(**_given(sections.channel(width_y, height_z, flange_thickness,
                                             web_thickness), ky=ky, kz=kz))

    @classmethod
    def general(cls, A: float, Iy: float, Iz: float, J: float, *, Ip: float | None = None,
                ky: float = 5.0 / 6.0, kz: float = 5.0 / 6.0, outline=None,
                stress_points=None) -> BeamSection:
        """A section given by its constants (principal centroidal axes) with its
        ``outline`` (one loop of (y, z) points [m], or loops: outer first, then holes;
        centroid at the origin) and/or explicit ``stress_points`` (y, z) [m]; one of the
        two is required so that the fibre stresses sit on the true section."""
        if outline is None and stress_points is None:
            raise ValidationError("BeamSection.general needs an outline or stress_points "
                                  "(the (y, z) points where fibre stresses are taken)")
        return cls(A=A, Iy=Iy, Iz=Iz, J=J, Ip=Ip, ky=ky, kz=kz, kind="general",
                   outline=outline, stress_points=stress_points)


def _given(props: dict, **factors) -> dict:
    """``props`` with the shear factors the caller gave (None: keep the kind's own)."""
    return {**props, **{k: v for k, v in factors.items() if v is not None}}


@dataclass(frozen=True)
class Material:
    """Linear isotropic elastic material.

    Attributes
    ----------
    E : float
        Young's modulus [Pa].
    nu : float
        Poisson's ratio [-], -1 < nu <= 0.5.
    rho : float
        Density [kg/m^3].
    name : str, optional
        Label stored in model metadata.
    """

    E: float
    nu: float
    rho: float
    name: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "E", _positive(self.E, "Material.E"))
        object.__setattr__(self, "rho", _positive(self.rho, "Material.rho"))
        nu = _real(self.nu, "Material.nu")
        if not -1.0 < nu <= 0.5:
            raise ValidationError(f"Material.nu must satisfy -1 < nu <= 0.5, got {nu!r}")
        object.__setattr__(self, "nu", nu)
        object.__setattr__(self, "name", str(self.name))

    @property
    def G(self) -> float:
        """Shear modulus ``E / (2 (1 + nu))`` [Pa]."""
        return self.E / (2.0 * (1.0 + self.nu))

    @classmethod
    def steel(cls) -> Material:
        """Structural steel: E = 210 GPa, nu = 0.3, rho = 7850 kg/m^3."""
        return cls(E=210e9, nu=0.3, rho=7850.0, name="steel")

    @classmethod
    def aluminium(cls) -> Material:
        """Aluminium alloy: E = 70 GPa, nu = 0.33, rho = 2700 kg/m^3."""
        return cls(E=70e9, nu=0.33, rho=2700.0, name="aluminium")


# ---------------------------------------------------------------------- element matrices
def _bending_stiffness(ei: float, length: float, phi: float) -> np.ndarray:
    """4x4 bending stiffness for DOFs ``[v1, t1, v2, t2]`` with ``t = +dv/dx`` [N/m, N, N m].

    ``phi = 12 EI / (k G A L^2)`` (0 gives Euler–Bernoulli).
    """
    L = length
    c = ei / ((1.0 + phi) * L**3)
    return c * np.array([
        [12.0, 6.0 * L, -12.0, 6.0 * L],
        [6.0 * L, (4.0 + phi) * L**2, -6.0 * L, (2.0 - phi) * L**2],
        [-12.0, -6.0 * L, 12.0, -6.0 * L],
        [6.0 * L, (2.0 - phi) * L**2, -6.0 * L, (4.0 + phi) * L**2],
    ])


def _bending_mass(rho_a: float, rho_i: float, length: float, phi: float) -> np.ndarray:
    """4x4 consistent bending mass for ``[v1, t1, v2, t2]`` with ``t = +dv/dx``.

    Translational part ``rho A`` plus rotary part ``rho I`` (pass ``rho_i = 0`` to omit
    it); ``phi = 0`` reduces to the Hermite-cubic matrices ``rho A L / 420 [156, 22L,
    ...]`` and ``rho I / (30 L) [36, 3L, ...]``.
    """
    L, f = length, phi
    m11 = 13.0 / 35.0 + 7.0 / 10.0 * f + f**2 / 3.0
    m12 = (11.0 / 210.0 + 11.0 / 120.0 * f + f**2 / 24.0) * L
    m13 = 9.0 / 70.0 + 3.0 / 10.0 * f + f**2 / 6.0
    m14 = -(13.0 / 420.0 + 3.0 / 40.0 * f + f**2 / 24.0) * L
    m22 = (1.0 / 105.0 + f / 60.0 + f**2 / 120.0) * L**2
    m24 = -(1.0 / 140.0 + f / 60.0 + f**2 / 120.0) * L**2
    trans = np.array([
        [m11, m12, m13, m14],
        [m12, m22, -m14, m24],
        [m13, -m14, m11, -m12],
        [m14, m24, -m12, m22],
    ]) * (rho_a * L / (1.0 + f) ** 2)
    r12 = (1.0 / 10.0 - f / 2.0) * L
    r22 = (2.0 / 15.0 + f / 6.0 + f**2 / 3.0) * L**2
    r24 = (-1.0 / 30.0 - f / 6.0 + f**2 / 6.0) * L**2
    rot = np.array([
        [6.0 / 5.0, r12, -6.0 / 5.0, r12],
        [r12, r22, -r12, r24],
        [-6.0 / 5.0, -r12, 6.0 / 5.0, -r12],
        [r12, r24, -r12, r22],
    ]) * (rho_i / ((1.0 + f) ** 2 * L))
    return trans + rot


def _bar(k: float, length: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-node linear bar: stiffness ``k/L [[1,-1],[-1,1]]`` and mass ``L/6 [[2,1],[1,2]]``."""
    return (k / length * np.array([[1.0, -1.0], [-1.0, 1.0]]),
            length / 6.0 * np.array([[2.0, 1.0], [1.0, 2.0]]))


def beam_element_matrices(length: float, section: BeamSection, material: Material,
                          theory: str = "euler-bernoulli",
                          rotary_inertia: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Local 12x12 stiffness and consistent mass matrices of one straight beam element.

    Parameters
    ----------
    length : float
        Element length L [m].
    section : BeamSection
        Cross-section properties (local y/z axes).
    material : Material
        Elastic material.
    theory : {"euler-bernoulli", "timoshenko"}
        Bending theory. ``"timoshenko"`` uses the shear-deformable element with
        interdependent interpolation (Przemieniecki; Friedman & Kosmatka),
        ``Phi = 12 E I / (k G A L^2)`` per bending plane; it is free of shear locking
        and reduces to Euler–Bernoulli as ``Phi -> 0``.
    rotary_inertia : bool
        Add the rotary inertia ``rho I`` of the cross-section in bending. Full
        Timoshenko beam theory includes it, so set it True with ``theory="timoshenko"``
        to reproduce that theory; the default False keeps the classic Hermite mass.

    Returns
    -------
    Ke, Me : ndarray, shape (12, 12)
        Symmetric stiffness [N/m, N, N m] and mass [kg, kg m, kg m^2] in the local
        element frame, DOFs ``[u1x, u1y, u1z, r1x, r1y, r1z, u2x, ..., r2z]`` with local
        x from node 1 to node 2, ``rz = +duy/dx`` and ``ry = -duz/dx``.

    Notes
    -----
    Axial: linear bar (``EA/L``, mass ``rho A L/6 [2, 1; 1, 2]``). Torsion: linear
    (``GJ/L``, mass ``rho Ip L/6 [2, 1; 1, 2]``). Bending: cubic Hermite (Euler–Bernoulli)
    or its shear-deformable generalisation, consistent mass in both planes.
    """
    L = _positive(length, "length")
    if not isinstance(section, BeamSection):
        raise ValidationError(f"section must be a BeamSection, got {type(section).__name__}")
    if not isinstance(material, Material):
        raise ValidationError(f"material must be a Material, got {type(material).__name__}")
    kind = _theory(theory)
    rotary = _flag(rotary_inertia, "rotary_inertia")
    E, G, rho = material.E, material.G, material.rho

    if kind == "timoshenko":
        phi_y = 12.0 * E * section.Iz / (section.ky * G * section.A * L**2)  # x-y plane
        phi_z = 12.0 * E * section.Iy / (section.kz * G * section.A * L**2)  # x-z plane
    else:
        phi_y = phi_z = 0.0

    ke = np.zeros((12, 12))
    me = np.zeros((12, 12))

    def put(idx: list[int], k_blk: np.ndarray, m_blk: np.ndarray) -> None:
        ix = np.ix_(idx, idx)
        ke[ix] += k_blk
        me[ix] += m_blk

    k_ax, m_ax = _bar(E * section.A, L)
    put([0, 6], k_ax, rho * section.A * m_ax)
    k_t, m_t = _bar(G * section.J, L)
    put([3, 9], k_t, rho * section.Ip * m_t)
    # x-y plane: v = uy, theta = rz = +dv/dx, bending about local z.
    put([1, 5, 7, 11], _bending_stiffness(E * section.Iz, L, phi_y),
        _bending_mass(rho * section.A, rho * section.Iz if rotary else 0.0, L, phi_y))
    # x-z plane: w = uz, ry = -dw/dx, bending about local y: flip the rotation signs.
    flip = np.array([1.0, -1.0, 1.0, -1.0])
    sign = np.outer(flip, flip)
    put([2, 4, 8, 10], sign * _bending_stiffness(E * section.Iy, L, phi_z),
        sign * _bending_mass(rho * section.A, rho * section.Iy if rotary else 0.0, L, phi_z))
    return ke, me


# ---------------------------------------------------------------------- geometry
def beam_local_frame(axis=(1.0, 0.0, 0.0), up=(0.0, 0.0, 1.0)) -> np.ndarray:
    """Rotation matrix whose rows are the local beam axes ``e1, e2, e3`` in global coordinates.

    ``e1 = axis/|axis|``; ``e3`` = the part of ``up`` perpendicular to ``e1``,
    normalised; ``e2 = e3 × e1`` (right-handed, ``e1 × e2 = e3``). A global vector ``g``
    has local components ``R @ g``.

    Raises
    ------
    ValidationError
        If ``axis`` is zero or ``up`` is zero or (nearly) parallel to ``axis``.
    """
    a = _vector3(axis, "axis")
    u = _vector3(up, "up")
    norm_a = float(np.linalg.norm(a))
    if norm_a == 0.0:
        raise ValidationError(f"axis must be a non-zero vector, got {a.tolist()}")
    norm_u = float(np.linalg.norm(u))
    if norm_u == 0.0:
        raise ValidationError(f"up must be a non-zero vector, got {u.tolist()}")
    e1 = a / norm_a
    perp = u / norm_u - np.dot(u / norm_u, e1) * e1
    norm_p = float(np.linalg.norm(perp))
    if norm_p < 1e-8:
        raise ValidationError(
            f"up {u.tolist()} is parallel to axis {a.tolist()}; it must have a component "
            "perpendicular to the beam axis to define local z"
        )
    e3 = perp / norm_p
    e2 = np.cross(e3, e1)
    return np.vstack([e1, e2, e3])


def _to_global(mat: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """``T^T mat T`` with ``T = blockdiag(rot, rot, rot, rot)`` (12x12)."""
    t = np.kron(np.eye(4), rot)
    return t.T @ mat @ t


def _assemble_chain(elem: np.ndarray, n_nodes: int) -> sp.csr_matrix:
    """Assemble identical 12x12 two-node elements (node i to i+1) into a 6N x 6N CSR matrix.

    Vectorised: the global matrix is block-tridiagonal with 6x6 blocks, built as BSR.
    """
    import scipy.sparse as sp  # (assembly only: docs/compiled.md, "What a run imports")

    n_el = n_nodes - 1
    k11, k12, k21, k22 = elem[:6, :6], elem[:6, 6:], elem[6:, :6], elem[6:, 6:]
    rows = np.arange(n_nodes)
    cols = rows[:, None] + np.array([-1, 0, 1])[None, :]
    valid = (cols >= 0) & (cols < n_nodes)
    blocks = np.empty((n_nodes, 3, 6, 6))
    blocks[:, 0] = k21  # (i, i-1) from element i-1
    blocks[:, 2] = k12  # (i, i+1) from element i
    diag = np.zeros((n_nodes, 6, 6))
    diag[:n_el] += k11
    diag[1:] += k22
    blocks[:, 1] = diag
    indptr = np.concatenate([[0], np.cumsum(valid.sum(axis=1))])
    bsr = sp.bsr_matrix((blocks[valid], cols[valid], indptr),
                        shape=(6 * n_nodes, 6 * n_nodes))
    return bsr.tocsr()


def straight_beam(length: float, n_elements: int, section: BeamSection, material: Material,
                  *, start=(0.0, 0.0, 0.0), axis=(1.0, 0.0, 0.0), up=(0.0, 0.0, 1.0),
                  theory: str = "euler-bernoulli", rotary_inertia: bool = False,
                  point_masses=()) -> FEModel:
    """Mesh a straight prismatic beam into equal two-node beam elements.

    Parameters
    ----------
    length : float
        Beam length [m].
    n_elements : int
        Number of elements (>= 1); the model has ``n_elements + 1`` equally spaced nodes.
    section : BeamSection
        Cross-section, its y/z axes being the local beam axes below.
    material : Material
        Elastic material.
    start : 3-vector, optional
        Global position of node 0 (the root) [m].
    axis : 3-vector, optional
        Direction from root to tip (any non-zero length); local x.
    up : 3-vector, optional
        Defines local z as its part perpendicular to ``axis``; must not be parallel to
        ``axis``. Local y = z × x (see :func:`beam_local_frame`).
    theory : {"euler-bernoulli", "timoshenko"}
        Bending theory, see :func:`beam_element_matrices`.
    rotary_inertia : bool
        Include bending rotary inertia, see :func:`beam_element_matrices`.
    point_masses : iterable, optional
        Payloads added to the mass before it is returned (nodes by label 1..n+1 or the
        sets ``"root"``/``"tip"``; mass [kg], inertia [kg m²], offset [m] in the global
        (body) axes), as :func:`~flexmbs.modal.preparation.add_point_masses` takes them.

    Returns
    -------
    FEModel
        Global (body-frame) coordinates, 6 DOFs per node ``[ux, uy, uz, rx, ry, rz]``,
        node sets ``"root"`` (node 0), ``"tip"`` (last node) and ``"all"``, cells
        ``{"line": [[i, i+1], ...]}`` and metadata recording every parameter.
    """
    L = _positive(length, "length")
    if isinstance(n_elements, bool) or not isinstance(n_elements, Integral):
        raise ValidationError(f"n_elements must be an integer, got {n_elements!r}")
    n_el = int(n_elements)
    if n_el < 1:
        raise ValidationError(f"n_elements must be at least 1, got {n_el}")
    origin = _vector3(start, "start")
    rot = beam_local_frame(axis, up)
    kind = _theory(theory)
    rotary = _flag(rotary_inertia, "rotary_inertia")

    ke, me = beam_element_matrices(L / n_el, section, material, kind, rotary)
    n_nodes = n_el + 1
    stations = np.linspace(0.0, L, n_nodes)
    nodes = origin[None, :] + stations[:, None] * rot[0][None, :]
    stiffness = _assemble_chain(_to_global(ke, rot), n_nodes)
    mass = _assemble_chain(_to_global(me, rot), n_nodes)
    conn = np.column_stack([np.arange(n_el), np.arange(1, n_nodes)])
    metadata = {
        "generator": GENERATOR,
        "length": L,
        "n_elements": n_el,
        "element_length": L / n_el,
        "section": asdict(section),
        "material": {**asdict(material), "G": material.G},
        "theory": kind,
        "rotary_inertia": rotary,
        "start": origin.tolist(),
        "axis": rot[0].tolist(),
        "up": _vector3(up, "up").tolist(),
        "local_frame": rot.tolist(),
        "units": "SI",
    }
    from ..femodel import FEModel  # (here: reading a section needs neither)
    from ..preparation import add_point_masses

    fe = FEModel(
        nodes=nodes,
        mass=mass,
        stiffness=stiffness,
        dofs_per_node=6,
        node_sets={"root": np.array([0]), "tip": np.array([n_nodes - 1]),
                   "all": np.arange(n_nodes)},
        cells={"line": conn},
        metadata=metadata,
    )
    return add_point_masses(fe, point_masses, what="straight_beam point mass")
