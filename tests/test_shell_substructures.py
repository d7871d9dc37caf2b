"""Substructured shell parts (flexmbs.modal.solid_substructures on a 6-DOF shell model,
docs/flexible_bodies.md): the parts add up to the parent, and the joined parts deflect as
the shell FE model with the same rigid cut sections, solved directly; the part
stiffening of shells; the command line."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from test_shell_fe_data import E_STEEL, LENGTH, RHO, THICK, WIDTH, mixed_strip
from test_solid_substructures import joined_tip, rigid_section_fe_tip

from flexmbs.errors import ValidationError
from flexmbs.modal.solid_substructures import (
    reduce_solid_parts,
    split_solid_model,
    surfaces_along,
)


def _strip(nx=24):
    """The 1 m × 40 mm × 4 mm steel strip (ν = 0.3), half quadrilaterals and half
    triangles, with node sets root (x = 0) and tip (x = L)."""
    return mixed_strip(nx, nu=0.3)


def _split(fe, k, modes=4):
    split = split_solid_model(fe, surfaces_along(fe, k, root="root", tip="tip"),
                              root="root", ends=("tip",))
    return split, reduce_solid_parts(split, modes)


def test_shell_parts_add_up_to_the_parent():
    fe = _strip()
    split, _ = _split(fe, 3)
    assert split.k == 3
    for name in ("stiffness", "mass"):
        total = sp.csr_matrix((fe.n_dof, fe.n_dof))
        for part in split.parts:
            assert part.fe.dofs_per_node == 6
            idx = np.searchsorted(fe.node_ids, part.fe.node_ids)
            dofs = (6 * idx[:, None] + np.arange(6)).ravel()
            sub = getattr(part.fe, name).tocoo()
            total = total + sp.csr_matrix((sub.data, (dofs[sub.row], dofs[sub.col])),
                                          shape=total.shape)
        parent = getattr(fe, name)
        assert abs(total - parent).max() <= 1e-12 * abs(parent).max()


@pytest.mark.parametrize("k", [1, 2, 4])
def test_joined_shell_parts_deflect_as_the_shell_model_with_rigid_sections(k):
    """Under a small tip load (flap and edgewise) the joined parts deflect as the whole
    shell model whose cut sections and tip move rigidly, to 1e-6 of the deflection plus
    its second-order shortening. (No axial load: its tension would stiffen the joined
    parts' relative rotations, a geometric effect the linear FE model has not.)"""
    fe = _strip()
    load = np.array([0.0, 0.5, -0.2])
    split, datas = _split(fe, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = joined_tip(split, datas, load, "root", {"node_set": "tip"})
    cuts = [np.searchsorted(fe.node_ids, np.asarray(c.nodes)) for c in split.cuts]
    expected = rigid_section_fe_tip(fe, [*cuts, fe.node_sets["tip"]], load, clamped="root")
    origin = (fe.nodes[fe.node_sets["tip"]].mean(axis=0)
              - fe.nodes[fe.node_sets["root"]].mean(axis=0))
    scale = np.abs(expected).max()
    np.testing.assert_allclose(found - origin, expected, rtol=0,
                               atol=1e-6 * scale + scale ** 2 / LENGTH)


def test_shell_parts_take_the_whole_parts_stiffening_and_tied_cuts_are_refused():
    """Each shell part is stiffened by the whole strip's stresses. The outermost part
    carries its own load only: its matrices are its own unit cases' within 1 % (not
    exactly: its own cases clamp the cut's section, which the whole strip leaves free to
    contract; measured 3e-3 at most); the inner part's spin matrix is ten times its own
    (asserted: five)
    (the outer part's pull). 'tied' cuts, whose spherical joints would free a shell's
    rotations, are refused."""
    from flexmbs.modal.part_stiffening import with_parts_stiffening
    from flexmbs.modal.stiffening import with_stiffening

    fe = _strip()
    split, datas = _split(fe, 2)
    stiffened = with_parts_stiffening(split, datas)
    own = with_stiffening(datas[-1], split.parts[-1].fe)
    for case, matrix in own.stiffening.items():
        gap = np.linalg.norm(stiffened[-1].stiffening[case] - matrix)
        assert gap <= 1e-2 * np.linalg.norm(matrix), case
    inner_whole = np.abs(stiffened[0].stiffening["ww_zz"]).max()
    inner_own = np.abs(with_stiffening(datas[0], split.parts[0].fe).stiffening["ww_zz"]).max()
    assert inner_whole > 5 * inner_own   # the outer part's pull (measured 9.6 times)
    with pytest.raises(ValidationError, match=r"tied' cuts .* shell"):
        split_solid_model(fe, surfaces_along(fe, 2, root="root", tip="tip"), root="root",
                          ends=("tip",), cuts="tied")


def test_cli_reduce_splits_a_shell_part_read_from_abaqus(tmp_path, capsys):
    """``flexmbs reduce --substructures 2 --stiffening --stress`` on the strip written as
    Matrix Market matrices in mm-t-s and an .inp with S4R and S3 shells and their
    *SHELL SECTIONs: two 6-DOF parts, each with its stiffening and shell stress modes,
    the first part's flap stiffness that of the API's split in SI."""
    import json

    import scipy.io
    from test_shell_fe_data import _write_inp

    from flexmbs.cli.main import main
    from flexmbs.modal import read_modal

    fe = _strip()
    quads, tris = fe.cells["quad"], fe.cells["triangle"]
    _write_inp(tmp_path / "strip.inp", fe.nodes, quads, tris)
    with open(tmp_path / "strip.inp", "a") as fh:  # the sets --substructures reads
        for name, x in (("root", 0.0), ("tip", LENGTH)):
            labels = np.flatnonzero(np.isclose(fe.nodes[:, 0], x)) + 1
            fh.write(f"*NSET, NSET={name}\n" + ", ".join(map(str, labels)) + "\n")
    w = sp.diags(np.tile([1.0, 1.0, 1.0, 1e3, 1e3, 1e3], fe.n_nodes))  # SI → mm-t-s
    for name, mat in (("M", fe.mass), ("K", fe.stiffness)):
        scipy.io.mmwrite(str(tmp_path / f"{name}.mtx"), sp.coo_matrix(w @ mat @ w * 1e-3),
                         symmetry="symmetric", precision=17)
    out = tmp_path / "strip.fmd.h5"
    args = ["reduce", "--mass", str(tmp_path / "M.mtx"), "--stiffness",
            str(tmp_path / "K.mtx"), "--nodes", str(tmp_path / "strip.inp"),
            "--units", "mm-t-s", "--modes", "3", "--material",
            f"E={E_STEEL / 1e6!r},nu=0.3,rho={RHO * 1e-12!r}", "--substructures", "2",
            "--stiffening", "--stress", "-o", str(out)]
    assert main(args) == 0, capsys.readouterr().err
    info = json.loads((tmp_path / "strip.substructures.json").read_text())
    assert info["files"] == ["strip.1.fmd.h5", "strip.2.fmd.h5"]
    datas = [read_modal(tmp_path / f) for f in info["files"]]
    assert all(d.stiffening and "shell_stress" in d.modal_fields for d in datas)
    _, api = _split(fe, 2, modes=3)
    np.testing.assert_allclose(np.sort(np.diag(datas[0].K_ff)),
                               np.sort(np.diag(api[0].K_ff)), rtol=1e-6)


def test_a_marker_on_a_line_of_six_dof_nodes_turns_with_the_nodes():
    """An interface marker on collinear 6-DOF nodes (a shell's cut line, two beam nodes):
    for modes that are rigid rotations about the three axes, the marker's rotation is
    each axis exactly: about the line from the nodes' rotations, across it from their
    translations. Without nodal rotations the set is still refused by name."""
    from types import SimpleNamespace

    from flexmbs.errors import ModelError
    from flexmbs.model.marker_modes import interface_modes

    for wave in (0.0, 1e-9):  # a straight line, and one wavy by 1e-7 of its length
        nodes = np.column_stack([wave * np.array([1.0, -1.0, 1.0, -1.0]),
                                 np.linspace(-0.02, 0.02, 4), np.zeros(4)])
        phi = np.zeros((4, 3, 3))
        psi = np.zeros((4, 3, 3))
        for axis in range(3):
            phi[:, :, axis] = np.cross(np.eye(3)[axis], nodes - [0.0, 0.01, 0.0])
            psi[:, :, axis] = np.eye(3)[axis]
        kwargs = dict(nodes=nodes, phi=phi.reshape(12, 3), n_nodes=4, n_modes=3)
        marker = interface_modes(SimpleNamespace(**kwargs, psi=psi.reshape(12, 3)),
                                 np.arange(4))
        np.testing.assert_allclose(marker.psi, np.eye(3), atol=1e-9)
    with pytest.raises(ModelError, match="collinear"):
        interface_modes(SimpleNamespace(**{**kwargs, "nodes": nodes * [0, 1, 1]},
                                        psi=None), np.arange(4))


def test_a_run_of_a_shell_body_reports_its_surface_stress(tmp_path):
    """A clamped strip of shells with stress modes, released under gravity for 0.1 s:
    the stress report names the shells' criterion, and its peak lies at the root, near
    twice the static root stress of beam theory (a sudden load) at most."""
    import flexmbs as fm
    from flexmbs.assembly import System
    from flexmbs.integrators.simulate import simulate
    from flexmbs.modal import clamped_modes
    from flexmbs.modal.stress import with_stress
    from flexmbs.results.stress import stress_report

    fe = _strip(nx=16)
    data = with_stress(clamped_modes(fe, "root", 3), fe)
    b = fm.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_flexible_body("strip", data)
    b.add_marker("strip", "root", node_set="root")
    b.add_marker("ground", "O")
    b.add_joint("clamp", "fixed", "ground.O", "strip.root")
    result = simulate(System(b.finalize()), 0.1, 1e-3, "generalized-alpha")
    report = stress_report(result)
    assert report["criterion"].startswith("von Mises, the larger of the top and bottom")
    static = RHO * 9.81 * THICK * WIDTH * LENGTH ** 2 / 2 * (THICK / 2) / (
        WIDTH * THICK ** 3 / 12)
    assert 0.5 * static < report["peak_von_mises_pa"] < 2.2 * static
    assert fe.nodes[np.searchsorted(fe.node_ids, report["peak_node"]), 0] < 0.1 * LENGTH
