"""Cross-sections of the built-in beam (:mod:`flexmbs.modal.fe.beam`): their constants,
their true outline and the points where the fibre stresses are taken (docs/beam_sections.md).

Kinds: ``rectangle``, ``box`` (hollow rectangle), ``circle``, ``tube``, ``i`` (I or H
beam), ``channel`` (C) and ``general`` (constants given, with an outline polygon or
explicit stress points). Section coordinates (y, z) are in the local section axes with
the origin at the centroid; y and z are principal axes for every built-in kind.

The outline is a tuple of closed loops of (y, z) vertices [m]: the first is the outer
boundary, the others holes (a box's or tube's inside). The stress points are where the
stress recovery evaluates σ = N/A + M_y z/I_y − M_z y/I_z: a linear function over the
section, so its extremes lie on the vertices of the outline's convex hull; those
vertices (in outline order) are the stress points of the polygonal kinds, and
:data:`CIRCLE_POINTS` points of the outer circle those of the round ones.

References
----------
* W. C. Young and R. G. Budynas, *Roark's Formulas for Stress and Strain*, 7th ed.,
  McGraw-Hill, 2002: Table A.1 (area and second moments), Table 10.1 (torsion
  constants: solid rectangle, Bredt's formula J = 4 A_m² t / s for thin-walled closed
  sections, J = Σ b t³/3 for thin-walled open sections).
* G. R. Cowper, "The shear coefficient in Timoshenko's beam theory", *J. Appl. Mech.*
  33 (1966) 335–340 (shear coefficients of the rectangle, circle and hollow circle).
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

from ...errors import ValidationError

#: Points taken on a round section's outer circle (drawn outline and stress points; the
#: largest stress between two of them is missed by at most 1 − cos(π/16) ≈ 1.9 %).
CIRCLE_POINTS = 16
KINDS = ("rectangle", "box", "circle", "tube", "i", "channel", "general")


# ---------------------------------------------------------------------- validation
def real(value, name: str) -> float:
    """``value`` as a finite float, or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValidationError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise ValidationError(f"{name} must be finite, got {out!r}")
    return out


def positive(value, name: str) -> float:
    """``value`` as a positive finite float, or raise naming ``name``."""
    out = real(value, name)
    if out <= 0.0:
        raise ValidationError(f"{name} must be positive, got {out!r}")
    return out


def _below(value: float, name: str, limit: float, what: str) -> None:
    if value >= limit:
        raise ValidationError(f"{name} must be less than {what} = {limit!r}, got {value!r}")


def _points(value, name: str, minimum: int) -> tuple[tuple[float, float], ...]:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"{name} must be a list of (y, z) points [m], got "
                              f"{value!r}") from exc
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] < minimum:
        raise ValidationError(f"{name} must be a list of at least {minimum} (y, z) points "
                              f"[m], got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValidationError(f"{name} must be finite, got {arr.tolist()}")
    return tuple((float(y), float(z)) for y, z in arr)


def outline_loops(value, name: str = "outline") -> tuple:
    """``value`` — one loop of (y, z) points or a list of loops (outer first, then
    holes) — as a tuple of loops of float pairs; ValidationError naming ``name``."""
    try:
        arr = np.asarray(value, dtype=float)
        single = arr.ndim == 2
    except (TypeError, ValueError):  # ragged: loops of different lengths
        single = False
    loops = [value] if single else list(value)
    if not loops:
        raise ValidationError(f"{name} must hold at least one loop of (y, z) points")
    out = tuple(_points(loop, f"{name}[{k}]" if not single else name, 3)
                for k, loop in enumerate(loops))
    for k, loop in enumerate(out):
        if abs(_loop_integrals(np.asarray(loop))[0]) <= 0.0:
            raise ValidationError(f"{name} loop {k} encloses no area: {list(loop)}")
    return out


# ---------------------------------------------------------------------- polygons
def _loop_integrals(loop: np.ndarray) -> np.ndarray:
    """Signed ∫dA, ∫y dA, ∫z dA, ∫y² dA, ∫z² dA, ∫yz dA over one polygon (Green's
    theorem; positive for counter-clockwise vertices)."""
    y, z = loop[:, 0], loop[:, 1]
    y1, z1 = np.roll(y, -1), np.roll(z, -1)
    c = y * z1 - y1 * z
    return np.array([c.sum() / 2.0,
                     ((y + y1) * c).sum() / 6.0,
                     ((z + z1) * c).sum() / 6.0,
                     ((y * y + y * y1 + y1 * y1) * c).sum() / 12.0,
                     ((z * z + z * z1 + z1 * z1) * c).sum() / 12.0,
                     ((y * z1 + 2 * y * z + 2 * y1 * z1 + y1 * z) * c).sum() / 24.0])


def polygon_properties(loops) -> dict:
    """Area, centroid and centroidal second moments of a polygon section with holes
    (first loop the outer boundary, the others holes, any orientation): ``A``,
    ``centroid`` (y, z), ``Iy`` = ∫z² dA, ``Iz`` = ∫y² dA, ``Iyz`` = ∫yz dA [m, m², m⁴]."""
    total = np.zeros(6)
    for k, loop in enumerate(outline_loops(loops)):
        part = _loop_integrals(np.asarray(loop))
        part = part * np.sign(part[0])  # as counter-clockwise
        total += part if k == 0 else -part
    area, sy, sz, iyy, izz, iyz = total
    yc, zc = sy / area, sz / area
    return {"A": area, "centroid": (yc, zc), "Iy": izz - area * zc**2,
            "Iz": iyy - area * yc**2, "Iyz": iyz - area * yc * zc}


def hull_points(loop) -> tuple[tuple[float, float], ...]:
    """The vertices of ``loop`` that are corners of its convex hull, in loop order
    (Andrew's monotone chain; collinear points dropped)."""
    pts = sorted(set(loop))

    def half(seq):
        out: list = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    hull = set(half(pts)[:-1] + half(pts[::-1])[:-1]) if len(pts) > 2 else set(pts)
    return tuple(p for p in dict.fromkeys(loop) if p in hull)


def _circle(radius: float) -> tuple[tuple[float, float], ...]:
    angle = 2.0 * np.pi * np.arange(CIRCLE_POINTS) / CIRCLE_POINTS
    return tuple((float(radius * math.cos(a)), float(radius * math.sin(a))) for a in angle)


def _rect(half_y: float, half_z: float, centre_y: float = 0.0):
    return ((centre_y - half_y, -half_z), (centre_y + half_y, -half_z),
            (centre_y + half_y, half_z), (centre_y - half_y, half_z))


# ---------------------------------------------------------------------- shear factors
def cowper_rectangle(nu: float = 0.0) -> float:
    """Cowper's shear coefficient of a solid rectangle: 10 (1 + ν) / (12 + 11 ν)."""
    return 10.0 * (1.0 + nu) / (12.0 + 11.0 * nu)


def cowper_tube(ratio: float, nu: float = 0.0) -> float:
    """Cowper's shear coefficient of a hollow circle with inner/outer diameter ``ratio``
    m: 6 (1 + ν)(1 + m²)² / ((7 + 6ν)(1 + m²)² + (20 + 12ν) m²) (m = 0: solid circle,
    6 (1 + ν)/(7 + 6 ν))."""
    m2 = ratio**2
    return 6.0 * (1.0 + nu) * (1.0 + m2) ** 2 / ((7.0 + 6.0 * nu) * (1.0 + m2) ** 2
                                                 + (20.0 + 12.0 * nu) * m2)


def _nu(nu) -> float:
    value = real(nu, "nu")
    if not -1.0 < value <= 0.5:
        raise ValidationError(f"nu must satisfy -1 < nu <= 0.5, got {value!r}")
    return value


# ---------------------------------------------------------------------- kinds
def rectangle(width_y, height_z, nu=0.0) -> dict:
    """Solid rectangle b × h. Roark Table A.1: A = b h, I_y = b h³/12, I_z = h b³/12;
    Table 10.1 case 4 (a = max, c = min side): J = a c³ (1/3 − 0.21 (c/a)(1 − c⁴/(12 a⁴)));
    Cowper's k in both directions."""
    b = positive(width_y, "width_y")
    h = positive(height_z, "height_z")
    a, c = max(b, h), min(b, h)
    k = cowper_rectangle(_nu(nu))
    outline = (_rect(b / 2, h / 2),)
    return dict(A=b * h, Iy=b * h**3 / 12.0, Iz=h * b**3 / 12.0,
                J=a * c**3 * (1.0 / 3.0 - 0.21 * (c / a) * (1.0 - c**4 / (12.0 * a**4))),
                ky=k, kz=k, kind="rectangle", outline=outline,
                dimensions=(("width_y", b), ("height_z", h)))


def box(width_y, height_z, wall) -> dict:
    """Hollow rectangle b × h with a uniform ``wall`` t (outer dimensions). A, I_y, I_z
    exact (outer minus inner rectangle); J by Bredt's formula on the median line,
    J = 4 A_m² t / s with A_m = (b − t)(h − t), s = 2 (b − t + h − t); shear factors
    thin-walled: the area of the walls along the shear over A (k_y = 2 (b − t) t / A,
    k_z = 2 (h − t) t / A)."""
    b = positive(width_y, "width_y")
    h = positive(height_z, "height_z")
    t = positive(wall, "wall")
    _below(t, "wall", 0.5 * min(b, h), "min(width_y, height_z)/2 (a solid section is "
           "a rectangle)")
    bi, hi = b - 2 * t, h - 2 * t
    area = b * h - bi * hi
    a_m = (b - t) * (h - t)
    outline = (_rect(b / 2, h / 2), _rect(bi / 2, hi / 2))
    return dict(A=area, Iy=(b * h**3 - bi * hi**3) / 12.0, Iz=(h * b**3 - hi * bi**3) / 12.0,
                J=4.0 * a_m**2 * t / (2.0 * (b - t + h - t)),
                ky=2.0 * (b - t) * t / area, kz=2.0 * (h - t) * t / area, kind="box",
                outline=outline, dimensions=(("width_y", b), ("height_z", h), ("wall", t)))


def circle(diameter, nu=0.0) -> dict:
    """Solid circle: A = π d²/4, I_y = I_z = π d⁴/64, J = I_p = π d⁴/32; Cowper's k."""
    d = positive(diameter, "diameter")
    inertia = math.pi * d**4 / 64.0
    k = cowper_tube(0.0, _nu(nu))
    pts = _circle(d / 2)
    return dict(A=math.pi * d**2 / 4.0, Iy=inertia, Iz=inertia, J=2 * inertia,
                Ip=2 * inertia, ky=k, kz=k, kind="circle", outline=(pts,),
                stress_points=pts, dimensions=(("diameter", d),))


def tube(outer_diameter, wall_thickness, nu=0.0) -> dict:
    """Circular tube D, wall t (d = D − 2t; t = D/2 is the solid circle): A = π (D² − d²)/4,
    I_y = I_z = π (D⁴ − d⁴)/64, J = I_p = 2 I_y (exact); Cowper's hollow-circle k."""
    outer = positive(outer_diameter, "outer_diameter")
    wall = positive(wall_thickness, "wall_thickness")
    if wall > 0.5 * outer:
        raise ValidationError(f"wall_thickness must be at most outer_diameter/2 = "
                              f"{0.5 * outer!r}, got {wall!r}")
    inner = max(outer - 2.0 * wall, 0.0)
    k = cowper_tube(inner / outer, _nu(nu))
    inertia = math.pi * (outer**4 - inner**4) / 64.0
    pts = _circle(outer / 2)
    loops = (pts, _circle(inner / 2)) if inner > 0 else (pts,)
    return dict(A=math.pi * (outer**2 - inner**2) / 4.0, Iy=inertia, Iz=inertia,
                J=2 * inertia, Ip=2 * inertia, ky=k, kz=k, kind="tube", outline=loops,
                stress_points=pts,
                dimensions=(("outer_diameter", outer), ("wall_thickness", wall)))


def _flanged(kind, width_y, height_z, flange_thickness, web_thickness) -> dict:
    b = positive(width_y, "width_y")
    h = positive(height_z, "height_z")
    tf = positive(flange_thickness, "flange_thickness")
    tw = positive(web_thickness, "web_thickness")
    _below(2 * tf, "2 flange_thickness", h, "height_z")
    _below(tw, "web_thickness", b, "width_y")
    hw = h - 2 * tf  # clear web depth
    area = 2 * b * tf + hw * tw
    iy = (b * h**3 - (b - tw) * hw**3) / 12.0
    lo, up = -h / 2, h / 2
    if kind == "i":
        iz = (2 * tf * b**3 + hw * tw**3) / 12.0
        y0, y1, w0, w1 = -b / 2, b / 2, -tw / 2, tw / 2
        outline = ((y0, lo), (y1, lo), (y1, lo + tf), (w1, lo + tf), (w1, up - tf),
                   (y1, up - tf), (y1, up), (y0, up), (y0, up - tf), (w0, up - tf),
                   (w0, lo + tf), (y0, lo + tf))
    else:  # channel: web at −y, flanges towards +y, origin at the centroid
        yc = (tf * b**2 + hw * tw**2 / 2) / area  # centroid from the web's back
        iz = (2 * tf * b**3 + hw * tw**3) / 3.0 - area * yc**2
        y0, y1, w1 = -yc, b - yc, tw - yc
        outline = ((y0, lo), (y1, lo), (y1, lo + tf), (w1, lo + tf), (w1, up - tf),
                   (y1, up - tf), (y1, up), (y0, up))
    return dict(A=area, Iy=iy, Iz=iz, J=(2 * b * tf**3 + hw * tw**3) / 3.0,
                ky=2 * b * tf / area, kz=(h - tf) * tw / area, kind=kind,
                outline=(outline,),
                dimensions=(("width_y", b), ("height_z", h), ("flange_thickness", tf),
                            ("web_thickness", tw)))


def i_beam(width_y, height_z, flange_thickness, web_thickness) -> dict:
    """I (H) section: flanges ``width_y`` b × t_f at z = ±(h − t_f)/2, web t_w along z.
    A = 2 b t_f + (h − 2 t_f) t_w, I_y = (b h³ − (b − t_w)(h − 2 t_f)³)/12,
    I_z = (2 t_f b³ + (h − 2 t_f) t_w³)/12; J = Σ b t³/3 = (2 b t_f³ + (h − 2 t_f) t_w³)/3;
    shear factors thin-walled: k_z = (h − t_f) t_w / A (the web between the flanges'
    median lines), k_y = 2 b t_f / A (the flanges)."""
    return _flanged("i", width_y, height_z, flange_thickness, web_thickness)


def channel(width_y, height_z, flange_thickness, web_thickness) -> dict:
    """C (channel) section: web t_w along z at the −y side, flanges b × t_f towards +y.
    A, I_y, J and shear factors as the I section; I_z about the centroid, which lies
    ȳ = (t_f b² + (h − 2 t_f) t_w²/2)/A from the web's back. The shear centre lies
    outside the web and is not modelled (loads through the centroid twist a real
    channel)."""
    return _flanged("channel", width_y, height_z, flange_thickness, web_thickness)


def check_outline_centroid(outline, name: str = "outline") -> None:
    """ValidationError when the polygon's centroid is not at the section origin (the
    outline must be given in the centroidal section axes)."""
    props = polygon_properties(outline)
    size = max(float(np.ptp(np.asarray(outline[0]), axis=0).max()), 1e-300)
    yc, zc = props["centroid"]
    if math.hypot(yc, zc) > 1e-3 * size:
        raise ValidationError(f"{name}: its centroid (y, z) = ({yc:.6g}, {zc:.6g}) m is not "
                              "at the section origin; give the outline in the section's "
                              "centroidal axes")


# ---------------------------------------------------------------------- specs
#: Keys of a section spec (case files, ``flexmbs beam``) per kind: (required, optional).
SPEC_KEYS = {
    "rectangle": (("width", "height"), ("nu",)),
    "box": (("width", "height", "wall"), ()),
    "circle": (("diameter",), ("nu",)),
    "tube": (("diameter", "wall"), ("nu",)),
    "i": (("width", "height", "flange", "web"), ()),
    "channel": (("width", "height", "flange", "web"), ()),
    "general": (("A", "Iy", "Iz", "J"), ("Ip", "ky", "kz", "outline", "stress_points")),
}
ALIASES = {"rect": "rectangle", "rectangular": "rectangle", "hollow-rectangle": "box",
           "rhs": "box", "pipe": "tube", "chs": "tube", "round": "circle", "I": "i",
           "h": "i", "i-beam": "i", "c": "channel", "C": "channel", "u": "channel"}


def section_kind(value, where: str = "section") -> str:
    text = str(value).strip()
    key = ALIASES.get(text, ALIASES.get(text.lower(), text.lower()))
    if key not in KINDS:
        raise ValidationError(f"{where}: kind must be one of {list(KINDS)} (or I, C), "
                              f"got {value!r}")
    return key


# ---------------------------------------------------------------------- drawn outline
