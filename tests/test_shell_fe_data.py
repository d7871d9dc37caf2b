"""Shells of FE data: geometric stiffening, modal derivatives and stress modes from their
quadrilaterals, thickness and material (docs/theory_shells.md), against independent
references:

* the geometric stiffness: a simply supported square plate under uniaxial compression
  buckles at N = 4π²D/a² (the classical plate-buckling coefficient k = 4);
* stiffening: a strip spinning about its clamped root stiffens its first flap mode by
  the Southwell coefficient of a uniform cantilever, ω² = ω₀² + 1.1933 Ω², and agrees with
  the built-in beam of the same strip;
* modal derivatives: the strip's reduced cubic and quartic energy against the built-in
  beam's (a second implementation with its own theory: the strip at ν = 0 is a beam);
* stress modes: the clamped strip's surface stress under a tip load against beam theory;
* refusals, by name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from test_shell_elements import grid_plate

from flexmbs.errors import ValidationError
from flexmbs.modal import clamped_modes
from flexmbs.modal.derivatives import with_modal_derivatives
from flexmbs.modal.fe import shell_elements as se
from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam
from flexmbs.modal.femodel import FEModel
from flexmbs.modal.stiffening import effective_stiffness, geometric_matrix, with_stiffening
from flexmbs.modal.stress import shell_nodal_stress, stress_fields, von_mises

E_STEEL, RHO = 2.1e11, 7850.0
DATA = Path(__file__).parent / "data" / "nastran_real"


def shell_model(nodes, cells, thickness, nu, sets, **meta):
    """FE data with shells, as a reader gives them (mass and stiffness from the element
    code, the mesh, the material and the thickness as metadata); ``cells`` the
    quadrilaterals, or cell type → connectivity."""
    cells = cells if isinstance(cells, dict) else {"quad": np.asarray(cells)}
    k = m = 0
    for conn in cells.values():
        k_c, m_c = se.assemble(nodes, conn, thickness, E_STEEL, nu, RHO)
        k, m = k + k_c, m + m_c
    metadata = {"material": {"E": E_STEEL, "nu": nu, "rho": RHO},
                "shell_thickness": thickness, "source": "test shells", **meta}
    return FEModel(nodes, m, k, dofs_per_node=6, node_sets=sets, cells=cells,
                   metadata=metadata)


def mixed_strip(nx=40, nu=0.0):
    """The strip (LENGTH × WIDTH × THICK), its first half meshed with quadrilaterals and
    its second half with triangles (each quadrilateral cut along a diagonal), with node
    sets root (x = 0) and tip (x = LENGTH)."""
    nodes, quads = grid_plate(LENGTH, WIDTH, nx, 2)
    nodes[:, 1] -= WIDTH / 2
    half = len(quads) // 2
    cells = {"quad": quads[:half],
             "triangle": np.concatenate([quads[half:, [0, 1, 2]], quads[half:, [0, 2, 3]]])}
    sets = {"root": np.nonzero(np.isclose(nodes[:, 0], 0.0))[0],
            "tip": np.nonzero(np.isclose(nodes[:, 0], LENGTH))[0]}
    return shell_model(nodes, cells, THICK, nu, sets)


def test_square_plate_buckles_at_the_classical_load():
    """Uniaxial compression N_x of a simply supported square plate (a/t = 1000): the
    smallest λ with K + λ K_G singular gives N_cr = 4π²D/a², within 0.6 % on a 16 × 16
    mesh and converging at second order."""
    a, t, nu, strain = 1.0, 1e-3, 0.3, 1e-6
    d_plate = E_STEEL * t ** 3 / (12 * (1 - nu ** 2))
    errors = []
    for n in (8, 16):
        nodes, quads = grid_plate(a, a, n, n)
        fe = shell_model(nodes, quads, t, nu, {})
        u = np.zeros((len(nodes), 6))
        u[:, 0] = -strain * nodes[:, 0]       # uniaxial stress: N_x = −E t ε, N_y = 0
        u[:, 1] = nu * strain * nodes[:, 1]
        k_g = geometric_matrix(fe, u.ravel()).toarray()
        x, y = nodes[:, 0], nodes[:, 1]
        edge = np.isclose(x, 0) | np.isclose(x, a) | np.isclose(y, 0) | np.isclose(y, a)
        every = 6 * np.arange(len(nodes))
        fixed = np.concatenate([every, every + 1, every + 5, 6 * np.nonzero(edge)[0] + 2])
        free = np.setdiff1d(np.arange(6 * len(nodes)), fixed)
        k = fe.stiffness.toarray()[np.ix_(free, free)]
        lam = np.linalg.eigvals(np.linalg.solve(k, -k_g[np.ix_(free, free)]))
        critical = 1.0 / np.max(lam.real)   # the smallest positive load factor
        errors.append(critical * E_STEEL * t * strain / (4 * np.pi ** 2 * d_plate / a ** 2)
                      - 1)
    assert 0 < errors[1] < 6e-3
    assert 3.5 < errors[0] / errors[1] < 4.5, errors


LENGTH, WIDTH, THICK = 1.0, 0.04, 0.004


def _strip(nx=40, ny=2, nu=0.0):
    nodes, quads = grid_plate(LENGTH, WIDTH, nx, ny)
    nodes[:, 1] -= WIDTH / 2
    root = np.nonzero(np.isclose(nodes[:, 0], 0.0))[0]
    tip = np.nonzero(np.isclose(nodes[:, 0], LENGTH))[0]
    return shell_model(nodes, quads, THICK, nu, {"root": root, "tip": tip})


def _beam():
    section = BeamSection.rectangle(WIDTH, THICK)
    return straight_beam(LENGTH, 40, section, Material(E=E_STEEL, nu=0.0, rho=RHO),
                         theory="euler-bernoulli")


def _flap_frequency(data, omega):
    """The first flap frequency [rad/s] of clamped modal data spinning at ``omega``
    [rad/s] about the body z axis (normal to the strip: the flap is along the axis, so
    only the stiffening acts)."""
    k = effective_stiffness(np.asarray(data.K_ff), data.stiffening, omega=(0, 0, omega))
    lam = np.linalg.eigvals(np.linalg.solve(np.asarray(data.M_ff), k)).real
    return np.sqrt(np.min(lam))


def test_spinning_strip_stiffens_by_the_southwell_coefficient():
    """A strip (1 m × 40 mm × 4 mm, ν = 0) clamped at the hub (radius 0) spinning about
    the normal to its plane: at small spin (Ω = ω₀/10) (ω² − ω₀²)/Ω² = 1.1933 for the
    first flap mode, the Southwell coefficient of a uniform cantilever (Wright et al.,
    1982), within 0.2 %; at Ω = ω₀ the strip and the built-in beam agree within 0.1 %."""
    strip = with_stiffening(clamped_modes(_strip(), "root", 2), _strip())
    beam_fe = _beam()
    beam = with_stiffening(clamped_modes(beam_fe, "root", 2), beam_fe)
    w0 = _flap_frequency(strip, 0.0)
    slow = 0.1 * w0
    southwell = (_flap_frequency(strip, slow) ** 2 - w0 ** 2) / slow ** 2
    assert southwell == pytest.approx(1.1933, rel=2e-3)
    assert _flap_frequency(strip, w0) == pytest.approx(_flap_frequency(beam, w0), rel=1e-3)


def _condensed_energy(data, tip):
    """The elastic energy [J] of ``data``'s first mode at a tip deflection ``tip`` [m]
    with its modal derivatives' coordinates relaxed (minimized over them, Newton):
    U(η) = ½ ηᵀ K η + C₃ η³/6 + C₄ η⁴/24 of the enriched basis. Independent of how the
    derivatives are scaled."""
    md = data.derivatives
    k, c3, c4 = md.stiffness, md.cubic, md.quartic
    eta = np.zeros(k.shape[0])
    eta[0] = tip / np.abs(np.asarray(data.phi)).max()
    rest = np.arange(1, k.shape[0])

    def energy(e):
        return (0.5 * e @ k @ e + np.einsum("ijk,i,j,k", c3, e, e, e) / 6
                + np.einsum("ijkl,i,j,k,l", c4, e, e, e, e) / 24)

    for _ in range(30):
        grad = k @ eta + np.einsum("ijk,j,k", c3, eta, eta) / 2 + np.einsum(
            "ijkl,j,k,l", c4, eta, eta, eta) / 6
        hess = k + np.einsum("ijk,k", c3, eta) + np.einsum("ijkl,k,l", c4, eta, eta) / 2
        step = np.linalg.solve(hess[np.ix_(rest, rest)], grad[rest])
        eta[rest] -= step
        if np.abs(step).max() < 1e-14 * max(1.0, np.abs(eta).max()):
            break
    return energy(eta), 0.5 * k[0, 0] * eta[0] ** 2


def test_strip_modal_derivatives_match_the_built_in_beam(monkeypatch):
    """The first flap mode with its modal derivative, deflected 0.2 m at the tip (20 % of
    the length), the derivative's coordinate relaxed: the nonlinear part of the energy of
    the ν = 0 strip against the built-in Euler–Bernoulli beam's.

    * With the beam's membrane strain alone, the same theory as the shells' (the
      Green–Lagrange axial strain u′ + ½(u′² + v′² + w′²)), in a second implementation:
      within 3 %.
    * With the beam's whole energy, which adds the curvature of the inextensible centre
      line, ½EI w″²(1 + w′²): the shells' membrane theory leaves that out, and gives
      about three quarters of the beam's nonlinear energy (docs/theory_shells.md).
    """
    from flexmbs.modal.fe import nonlinear_energy

    def relaxed(fe):
        data = with_modal_derivatives(clamped_modes(fe, "root", 1), fe)
        total, linear = _condensed_energy(data, 0.2)
        return total - linear, linear

    strip_extra, strip_linear = relaxed(_strip())
    beam_extra, beam_linear = relaxed(_beam())
    whole = nonlinear_energy.strain_points

    def membrane_only(fe):
        points = whole(fe)
        return nonlinear_energy.StrainPoints(groups=points.groups[:1],
                                             description="beam membrane")

    monkeypatch.setattr(nonlinear_energy, "strain_points", membrane_only)
    membrane_extra, _ = relaxed(_beam())
    assert strip_linear == pytest.approx(beam_linear, rel=1e-2)
    assert membrane_extra > 1e-2 * beam_linear   # a real effect
    assert strip_extra == pytest.approx(membrane_extra, rel=3e-2)
    assert 0.6 < strip_extra / beam_extra < 0.85


def test_strip_stress_under_a_tip_load_is_beam_theory():
    """The clamped strip under a 1 N tip load: the top and bottom surface stresses σ_xx
    at mid-span are ∓ M c/I of beam theory within 1e-6 (a linear moment: the bilinear
    shells' curvature and their extrapolation to the nodes hold it exactly), and the
    first mode's stress mode peaks at the clamp and vanishes at the free end."""
    fe = _strip()
    tip, root = fe.node_sets["tip"], fe.node_sets["root"]
    load = np.zeros(fe.n_dof)
    load[6 * tip + 2] = 1.0 / len(tip)
    free = np.setdiff1d(np.arange(fe.n_dof), fe.node_dofs(root))
    u = np.zeros(fe.n_dof)
    u[free] = spla.spsolve(fe.stiffness[free][:, free].tocsc(), load[free])
    static = shell_nodal_stress(fe, u[:, None])[:, :, 0]           # (N, 12)
    mid = np.nonzero(np.isclose(fe.nodes[:, 0], 0.5 * LENGTH))[0]
    expected = 1.0 * 0.5 * LENGTH * (THICK / 2) / (WIDTH * THICK ** 3 / 12)
    top, bottom = static[mid, 0].mean(), static[mid, 6].mean()
    assert -top == pytest.approx(expected, rel=1e-6)    # w up: the top surface shortens
    assert bottom == pytest.approx(-top, rel=1e-9)
    assert von_mises("shell_stress", static[mid]).max() == pytest.approx(expected, rel=1e-6)
    data = clamped_modes(fe, "root", 2)
    fields = stress_fields(fe, data)["shell_stress"]          # (N, 12, 2)
    first = von_mises("shell_stress", fields[:, :, 0])   # the first flap mode: its
    assert np.isclose(fe.nodes[np.argmax(first), 0], 0.0)  # bending stress peaks at the
    x = fe.nodes[:, 0]                                      # clamp and vanishes at the tip
    assert first[np.isclose(x, LENGTH)].max() < 1e-2 * first.max()


def test_shell_refusals_name_what_is_missing():
    fe = _strip()
    no_thickness = FEModel(fe.nodes, fe.mass, fe.stiffness, dofs_per_node=6,
                           node_sets=fe.node_sets, cells=fe.cells,
                           metadata={"material": {"E": E_STEEL, "nu": 0.0},
                                     "source": "part.bdf"})
    with pytest.raises(ValidationError, match=r"'part\.bdf' has shell elements but no "
                                              "thickness"):
        with_stiffening(clamped_modes(no_thickness, "root", 1), no_thickness)
    lines = FEModel(fe.nodes, fe.mass, fe.stiffness, dofs_per_node=6,
                    node_sets=fe.node_sets, cells={**fe.cells, "line": [[0, 1]]},
                    metadata={**fe.metadata})
    with pytest.raises(ValidationError, match=r"cell type\(s\) \['line'\] .*shells with 6"):
        with_modal_derivatives(clamped_modes(lines, "root", 1), lines)


def test_nastran_shell_deck_end_to_end(tmp_path):
    """The NX Nastran plate deck of pyNastran's repository (200 CQUAD4, PSHELL 0.125 in,
    MAT1 steel in lbf-in-s): its thickness and material come from the deck, and
    ``flexmbs reduce`` of its mass and stiffness (assembled here from the deck's shells
    and written as OP4 in the deck's units) with --stiffening --stress
    --modal-derivatives gives free modes at NX Nastran's frequencies (its OP2) within
    1.5 %, in SI."""
    pytest.importorskip("pyNastran")
    from pyNastran.op2.op2 import read_op2
    from pyNastran.op2.result_objects.matrix import Matrix
    from pyNastran.op4.op4 import write_op4

    from flexmbs.cli.main import main as cli
    from flexmbs.modal import read_modal
    from flexmbs.modal.io.nastran import read_bdf
    from flexmbs.modal.io.nastran.element_properties import element_material, shell_thickness

    deck = DATA / "plate_py.dat"
    geo = read_bdf(deck)
    thickness = shell_thickness(geo)
    material, why = element_material(geo)
    assert thickness.shape == (200,) and np.all(thickness == 0.125) and why == ""
    assert material == {"E": 2.9e7, "nu": 0.32, "rho": 7.3315e-4}
    k, m = se.assemble(geo.coords, geo.cells["quad"], thickness, material["E"],
                       material["nu"], material["rho"])
    op4 = tmp_path / "plate.op4"
    write_op4(str(op4), {"MGG": Matrix("MGG", 6, m.toarray()),
                         "KGG": Matrix("KGG", 6, k.toarray())}, is_binary=False)
    out = tmp_path / "plate.fmd.h5"
    assert cli(["reduce", "--mass", f"{op4}:MGG", "--stiffness", f"{op4}:KGG",
                "--nodes", str(deck), "--units", "in-lbf-s", "--free", "--modes", "4",
                "--stiffening", "--stress", "--modal-derivatives", "-o", str(out)]) == 0
    data = read_modal(out)
    nx = np.asarray(read_op2(str(DATA / "plate_py.op2"), debug=None)
                    .eigenvectors[1].mode_cycles)[6:10]
    ours = np.sqrt(np.diag(data.K_ff) / np.diag(data.M_ff)) / (2 * np.pi)
    assert np.abs(ours / nx - 1).max() < 0.015, (ours, nx)
    assert set(data.stiffening) and data.derivatives is not None
    assert data.modal_fields["shell_stress"].shape == (231, 12, 4)
    assert "shells of" in data.derivatives.energy


def test_nastran_deck_shell_thickness_of_each_card():
    """The MSC deck of pyNastran's repository with every element kind: the CQUAD4 and
    CTRIA3 of PSHELL 4 take its T = 0.25; laminates (PCOMP, PCOMPG), the CSHEAR panel,
    the CQUADR/CTRIAR of a PCOMPG and the CQUAD8/CTRIA6 drawn by their corners have no
    thickness (NaN), and its one MAT1 is the material."""
    pytest.importorskip("pyNastran")
    from flexmbs.modal.io.nastran import read_bdf
    from flexmbs.modal.io.nastran.element_properties import element_material, shell_thickness

    geo = read_bdf(DATA / "modes_elements.bdf")
    expected = {"quad": {6: 0.25, 7: 0.25}, "triangle": {8: 0.25, 9: 0.25, 10: 0.25,
                                                         11: 0.25}}
    for kind, known in expected.items():
        labels = geo.cell_labels[kind]
        got = dict(zip(labels.tolist(), shell_thickness(geo, kind).tolist(), strict=True))
        assert {k: v for k, v in got.items() if np.isfinite(v)} == known
        assert len(got) > len(known)   # the others are there, without a thickness
    material, why = element_material(geo)
    assert why == "" and material["E"] == 2.9e7 and material["nu"] == 0.32


def test_mixed_quadrilateral_and_triangle_strip_spins_like_the_beam():
    """The spinning strip meshed half with quadrilaterals, half with triangles: the
    Southwell coefficient 1.1933 within 0.3 %, and its stress modes and modal
    derivatives are computed over both cell types."""
    fe = mixed_strip()
    data = with_stiffening(clamped_modes(fe, "root", 2), fe)
    w0 = _flap_frequency(data, 0.0)
    slow = 0.1 * w0
    southwell = (_flap_frequency(data, slow) ** 2 - w0 ** 2) / slow ** 2
    assert southwell == pytest.approx(1.1933, rel=3e-3)
    assert stress_fields(fe, data)["shell_stress"].shape == (fe.n_nodes, 12, 2)
    assert with_modal_derivatives(data, fe).derivatives.cubic.shape == (5, 5, 5)


def _write_inp(path, nodes, quads, tris, sections=True):
    """An Abaqus input file of the plate in mm: S4R and S3 elements in two sets, each
    with its *SHELL SECTION (thickness in mm)."""
    lines = ["*HEADING", "plate", "*NODE, NSET=ALLN"]
    lines += [f"{k + 1}, {float(1e3 * x)!r}, {float(1e3 * y)!r}, {float(1e3 * z)!r}"
              for k, (x, y, z) in enumerate(nodes)]
    lines.append("*ELEMENT, TYPE=S4R, ELSET=QUADS")
    lines += [f"{e + 1}, " + ", ".join(str(v + 1) for v in q) for e, q in enumerate(quads)]
    lines.append("*ELEMENT, TYPE=S3")
    first = len(quads) + 1
    lines += [f"{first + e}, " + ", ".join(str(v + 1) for v in t) for e, t in enumerate(tris)]
    lines += ["*ELSET, ELSET=TRIS, GENERATE", f"{first}, {first + len(tris) - 1}"]
    root = [k + 1 for k in np.nonzero(np.isclose(nodes[:, 0], 0.0))[0]]
    lines += ["*NSET, NSET=ROOT", ", ".join(map(str, root))]
    if sections:
        lines += ["*SHELL SECTION, ELSET=QUADS, MATERIAL=STEEL", f"{1e3 * THICK}, 5",
                  "*SHELL SECTION, ELSET=TRIS, MATERIAL=STEEL", f"{1e3 * THICK}, 5"]
    path.write_text("\n".join(lines) + "\n")


def test_abaqus_shells_and_their_sections(tmp_path, capsys):
    """An Abaqus .inp in mm with S4R and S3 elements and *SHELL SECTIONs over an *ELEMENT
    set and a GENERATEd *ELSET: the reader makes them quad and triangle cells with their
    thickness in metres, and the strip's stiffening from Matrix Market matrices in
    mm-t-s gives the Southwell coefficient; without sections the refusal says what is
    missing and --thickness supplies it, where the file gives the thickness --thickness
    is refused, and a section with an OFFSET gives none."""
    import scipy.io

    from flexmbs.cli.main import main as cli
    from flexmbs.modal import read_modal
    from flexmbs.modal.io.matrix_market import read_matrix_market

    nodes, quads = grid_plate(LENGTH, WIDTH, 40, 2)
    half = len(quads) // 2
    tris = np.concatenate([quads[half:, [0, 1, 2]], quads[half:, [0, 2, 3]]])
    k = m = 0
    for conn in (quads[:half], tris):
        k_c, m_c = se.assemble(nodes, conn, THICK, E_STEEL, 0.0, RHO)
        k, m = k + k_c, m + m_c
    # SI → mm-t-s: K_file = W⁻¹ K W⁻¹ / 1e3 with W = diag(1, 1e-3 m/mm per rotation),
    # so that the reader's K = 1e3 W K_file W (t/s² = 1e3 N/m) is K again
    scale = np.tile([1.0, 1.0, 1.0, 1e3, 1e3, 1e3], len(nodes))
    import scipy.sparse as sp
    w = sp.diags(scale)
    scipy.io.mmwrite(str(tmp_path / "k.mtx"), (w @ k @ w) * 1e-3)   # N/mm, N, N mm
    scipy.io.mmwrite(str(tmp_path / "m.mtx"), (w @ m @ w) * 1e-3)   # t, t mm, t mm²
    inp = tmp_path / "plate.inp"
    _write_inp(inp, nodes, quads[:half], tris)
    fe = read_matrix_market(tmp_path / "m.mtx", tmp_path / "k.mtx", inp, units="mm-t-s",
                            material={"E": E_STEEL * 1e-6, "nu": 0.0})
    assert sorted(fe.cells) == ["quad", "triangle"]
    for kind in ("quad", "triangle"):
        np.testing.assert_allclose(fe.metadata["shell_thickness"][kind], THICK, rtol=1e-12)
    data = with_stiffening(clamped_modes(fe, "ROOT", 2), fe)
    w0 = _flap_frequency(data, 0.0)
    southwell = (_flap_frequency(data, 0.1 * w0) ** 2 - w0 ** 2) / (0.1 * w0) ** 2
    assert southwell == pytest.approx(1.1933, rel=3e-3)

    bare = tmp_path / "bare.inp"
    _write_inp(bare, nodes, quads[:half], tris, sections=False)
    args = ["reduce", "--mass", str(tmp_path / "m.mtx"), "--stiffness",
            str(tmp_path / "k.mtx"), "--nodes", str(bare), "--units", "mm-t-s",
            "--material", "E=210000,nu=0", "--clamp-nodes", "ROOT", "--modes", "2",
            "--stiffening", "-o", str(tmp_path / "out.fmd.h5")]
    assert cli(args) != 0
    err = capsys.readouterr().err
    assert "has shell elements but no thickness" in err and "bare.inp" in err
    assert "--thickness" in err
    assert cli([*args, "--thickness", str(1e3 * THICK)]) == 0
    sectioned = [a if a != str(bare) else str(inp) for a in args]
    assert cli([*sectioned, "--thickness", "4"]) != 0   # the file gives it
    assert "the mesh file gives its shells' thickness" in capsys.readouterr().err
    offset = tmp_path / "offset.inp"
    offset.write_text(inp.read_text().replace("ELSET=QUADS, MATERIAL=STEEL",
                                              "ELSET=QUADS, MATERIAL=STEEL, OFFSET=SPOS"))
    shifted = read_matrix_market(tmp_path / "m.mtx", tmp_path / "k.mtx", offset,
                                 units="mm-t-s", material={"E": E_STEEL * 1e-6, "nu": 0.0})
    assert np.all(np.isnan(shifted.metadata["shell_thickness"]["quad"]))
    with pytest.raises(ValidationError, match="offset mid-surface"):
        with_stiffening(clamped_modes(shifted, "ROOT", 2), shifted)
    stiffened = read_modal(tmp_path / "out.fmd.h5")
    np.testing.assert_allclose(stiffened.stiffening["ww_zz"], data.stiffening["ww_zz"],
                               rtol=1e-6, atol=1e-9 * np.abs(data.stiffening["ww_zz"]).max())


def test_nastran_corner_thicknesses_and_offsets(tmp_path):
    """A CQUAD4 with TFLAG = 1 takes its corner thicknesses as fractions of the PSHELL's
    (blank corners 1), one with TFLAG = 0 as lengths (blank corners the PSHELL's); a
    ZOFFS offset leaves an element without a thickness (refused by its ID)."""
    pytest.importorskip("pyNastran")
    from pyNastran.bdf.bdf import BDF

    from flexmbs.modal.io.nastran import read_bdf
    from flexmbs.modal.io.nastran.element_properties import shell_thickness

    model = BDF(debug=None)
    for nid, (x, y) in enumerate([(0, 0), (1, 0), (1, 1), (0, 1), (2, 0), (2, 1)], 1):
        model.add_grid(nid, [float(x), float(y), 0.0])
    model.add_pshell(1, mid1=1, t=0.2, mid2=1)
    model.add_mat1(1, 2.0e11, None, 0.3, rho=7800.0)
    model.add_cquad4(10, 1, [1, 2, 3, 4], tflag=1, T1=0.5, T2=0.5, T3=1.0, T4=1.0)
    model.add_cquad4(11, 1, [2, 5, 6, 3], tflag=0, T1=0.1, T2=0.1, T3=0.3, T4=0.3)
    model.add_cquad4(12, 1, [2, 5, 6, 3], zoffset=0.05)
    path = tmp_path / "t.bdf"
    model.write_bdf(str(path))
    geo = read_bdf(path)
    got = dict(zip(geo.cell_labels["quad"].tolist(), shell_thickness(geo).tolist(),
                   strict=True))
    assert got[10] == pytest.approx(0.2 * 0.75) and got[11] == pytest.approx(0.2)
    assert np.isnan(got[12])
