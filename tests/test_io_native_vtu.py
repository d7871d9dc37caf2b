"""Round trips through the native HDF5 format and the VTU + sidecar format."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_modal_kwargs, native_header, set_native_header

from flexmbs.errors import ReadError
from flexmbs.modal import ModalData, read_modal, write_modal
from flexmbs.modal.shipped import seed_tip_beam


def assert_same(a: ModalData, b: ModalData, rtol=0.0, shapes_atol=0.0):
    for name in ("nodes", "phi", "M_ff", "K_ff", "node_ids", "constraint_fraction"):
        atol = shapes_atol if name == "phi" else 0
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=rtol, atol=atol,
                                   err_msg=name)
    for name in ("psi", "damping_ratio", "damping_matrix"):
        va, vb = getattr(a, name), getattr(b, name)
        assert (va is None) == (vb is None), name
        if va is not None:
            atol = shapes_atol * np.max(np.abs(va)) if name == "psi" else 0
            np.testing.assert_allclose(vb, va, rtol=rtol, atol=atol, err_msg=name)
    if a.is_lumped:
        np.testing.assert_allclose(b.mass, a.mass, rtol=rtol, atol=0)
    else:
        assert abs(b.mass - a.mass).max() <= rtol * abs(a.mass).max()
    assert b.reference_frame == a.reference_frame
    assert b.attach_set == a.attach_set
    assert b.mode_kinds == a.mode_kinds
    assert b.units == a.units
    assert set(b.node_sets) == set(a.node_sets)
    for key in a.node_sets:
        np.testing.assert_array_equal(b.node_sets[key], a.node_sets[key])
    for key in a.cells:
        np.testing.assert_array_equal(b.cells[key], a.cells[key])


def rich_data():
    """Consistent sparse mass, rotational shapes, damping matrix, cells and bookkeeping."""
    kwargs = make_modal_kwargs(n_nodes=6, n_modes=3, seed=2)
    kwargs["mass"] = sp.diags(np.repeat(kwargs["mass"], 3)).tocsr()
    kwargs["psi"] = np.random.default_rng(3).normal(size=(18, 3))
    kwargs["psi"][:3] = 0.0
    kwargs["damping_matrix"] = 0.01 * kwargs["K_ff"]
    kwargs["cells"] = {"line": np.column_stack([np.arange(5), np.arange(1, 6)])}
    kwargs["mode_kinds"] = ["normal", "constraint", "normal"]
    kwargs["constraint_fraction"] = [0.1, 0.8, 0.3]
    kwargs["node_ids"] = np.arange(101, 107)
    kwargs["metadata"] = {"source": "test", "nested": {"a": [1, 2]}}
    return ModalData(**kwargs)


@pytest.mark.parametrize("make", [rich_data, seed_tip_beam], ids=["rich", "seed"])
def test_native_round_trip_is_lossless(tmp_path, make):
    data = make()
    path = write_modal(data, tmp_path / "body.fmd.h5")
    back = read_modal(path)
    assert_same(data, back)
    assert back.metadata == json.loads(json.dumps(data.metadata))


@pytest.mark.parametrize("make", [rich_data, seed_tip_beam], ids=["rich", "seed"])
def test_vtu_round_trip(tmp_path, make):
    data = make()
    write_modal(data, tmp_path / "body.vtu")
    assert (tmp_path / "body.modal.json").exists()
    back = read_modal(tmp_path / "body.vtu")
    assert_same(data, back, rtol=1e-15)


def test_vtu_of_selected_modes_for_viewing(tmp_path):
    import meshio

    data = rich_data()
    write_modal(data, tmp_path / "mode2.vtu", modes=[1])
    mesh = meshio.read(tmp_path / "mode2.vtu")
    np.testing.assert_allclose(mesh.point_data["phi_1"].ravel(), data.phi[:, 1], rtol=0)
    assert "phi_2" not in mesh.point_data
    assert read_modal(tmp_path / "mode2.vtu").n_modes == 1


def test_vtu_units_conversion(tmp_path):
    """A sidecar declaring mm-t-s is converted to SI on reading."""
    data = rich_data()
    write_modal(data, tmp_path / "si.vtu")
    side = json.loads((tmp_path / "si.modal.json").read_text())
    import meshio

    mesh = meshio.read(tmp_path / "si.vtu")
    mesh.points = mesh.points * 1e3
    for key in list(mesh.point_data):
        if key.startswith("phi_"):
            mesh.point_data[key] = mesh.point_data[key] * 1e3
    meshio.write(tmp_path / "mm.vtu", mesh)
    side["units"] = "mm-t-s"
    side["M_ff"] = (np.array(side["M_ff"]) * 1e3).tolist()  # kg m² → t mm²: ×1e-3×1e6
    side["K_ff"] = (np.array(side["K_ff"]) * 1e3).tolist()
    side["damping_matrix"] = (np.array(side["damping_matrix"]) * 1e3).tolist()
    (tmp_path / "mm.modal.json").write_text(json.dumps(side))
    mass = sp.csr_matrix(__import__("scipy.io").io.mmread(str(tmp_path / "si.mass.mtx")))
    __import__("scipy.io").io.mmwrite(str(tmp_path / "mm.mass.mtx"), mass * 1e-3)
    side["mass"]["file"] = "mm.mass.mtx"
    (tmp_path / "mm.modal.json").write_text(json.dumps(side))
    back = read_modal(tmp_path / "mm.vtu")
    np.testing.assert_allclose(back.nodes, data.nodes, rtol=1e-12)
    np.testing.assert_allclose(back.phi, data.phi, rtol=1e-12)
    np.testing.assert_allclose(back.M_ff, data.M_ff, rtol=1e-12)
    np.testing.assert_allclose(back.K_ff, data.K_ff, rtol=1e-12)
    np.testing.assert_allclose(back.frequencies, data.frequencies, rtol=1e-12)
    # units given to the reader against the sidecar's: read so, and said (it was silent,
    # every value a thousand times off if the sidecar is right)
    from flexmbs.errors import UnitsWarning

    with pytest.warns(UnitsWarning, match=r"units 'SI' given to the reader; its sidecar "
                                          r"'mm.modal.json' states 'mm-t-s'"):
        read_modal(tmp_path / "mm.vtu", units="SI")
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnitsWarning)
        read_modal(tmp_path / "mm.vtu", units="mm-t-s")  # the same: nothing to say


def test_read_errors_name_the_file(tmp_path):
    with pytest.raises(ReadError, match="does not exist"):
        read_modal(tmp_path / "nope.fmd.h5")
    (tmp_path / "x.unknown").write_text("1")
    with pytest.raises(ReadError, match=r"cannot tell the modal format of .*x\.unknown.*Known"):
        read_modal(tmp_path / "x.unknown")
    (tmp_path / "bad.h5").write_text("not hdf5")
    with pytest.raises(ReadError, match=r"bad\.h5: not an HDF5 file"):
        read_modal(tmp_path / "bad.h5")
    import h5py

    with h5py.File(tmp_path / "other.h5", "w") as f:
        f.attrs["format"] = "something-else"
    with pytest.raises(ReadError, match="not a flexmbs modal data file"):
        read_modal(tmp_path / "other.h5")
    write_modal(rich_data(), tmp_path / "lonely.vtu")
    (tmp_path / "lonely.modal.json").unlink()
    with pytest.raises(ReadError, match=r"sidecar 'lonely\.modal\.json'"):
        read_modal(tmp_path / "lonely.vtu")
    with pytest.raises(ReadError, match="unknown modal format 'abc'"):
        read_modal(tmp_path / "lonely.vtu", format="abc")


def test_shipped_files_match_their_builders():
    """modal_data/*.fmd.h5 are what modal_data/build.py makes (regenerated, not typed)."""
    from pathlib import Path

    from flexmbs.modal.shipped import arm_steel_beam, steel_cantilever

    root = Path(__file__).resolve().parents[1] / "modal_data"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shipped_seed = read_modal(root / "seed_tip_beam.fmd.h5")
        shipped_steel = read_modal(root / "steel_cantilever.fmd.h5")
        shipped_arm = read_modal(root / "arm_steel_beam.fmd.h5")
        fresh_steel = steel_cantilever()
        fresh_arm = arm_steel_beam()
    assert_same(seed_tip_beam(), shipped_seed, rtol=1e-12)
    # the eigen solver's round-off differs between machines and BLAS builds: eigenvector
    # round-off is ~ ε λ_max(FE) / gap_j, about 3e-9 of the (unit) peak for the close
    # pair 1293 / 1319 Hz of the steel beam, so shapes are compared to 1e-8; eigenvalues
    # (K_ff) carry ~ ε κ(K) relative round-off (1.1e-9 seen between two machines), so 1e-8
    assert_same(fresh_steel, shipped_steel, rtol=1e-8, shapes_atol=1e-8)
    assert_same(fresh_arm, shipped_arm, rtol=1e-8, shapes_atol=1e-8)
    from flexmbs.modal.shipped import kane_beam

    fresh_kane, shipped_kane = kane_beam(), read_modal(root / "kane_beam.fmd.h5")
    assert_same(fresh_kane, shipped_kane, rtol=1e-8, shapes_atol=1e-8)
    assert sorted(shipped_kane.stiffening) == sorted(fresh_kane.stiffening)
    # relative to the largest matrix: the cases that vanish for a straight beam are
    # round-off of the others
    scale = max(np.abs(m).max() for m in fresh_kane.stiffening.values())
    for case, matrix in fresh_kane.stiffening.items():
        np.testing.assert_allclose(shipped_kane.stiffening[case], matrix, rtol=0,
                                   atol=1e-8 * scale, err_msg=case)


def test_arm_steel_beam_first_modes_are_euler_bernoulli_cantilever_modes():
    """In-plane (bending about z, EI_z = E h b³/12) and out-of-plane (EI_y = E b h³/12)
    first clamped–free frequencies f = (β₁L)²/(2π L²) √(EI/μ), β₁L = 1.8751."""
    from flexmbs.modal.shipped import ARM_BEAM_LENGTH, ARM_BEAM_SECTION, arm_steel_beam

    data = arm_steel_beam()
    b, h = ARM_BEAM_SECTION
    mu = 7850.0 * b * h
    beta_l = 1.8751040687
    f_in = beta_l**2 / (2 * np.pi * ARM_BEAM_LENGTH**2) * np.sqrt(210e9 * h * b**3 / 12 / mu)
    f_out = beta_l**2 / (2 * np.pi * ARM_BEAM_LENGTH**2) * np.sqrt(210e9 * b * h**3 / 12 / mu)
    np.testing.assert_allclose(data.frequencies[0], f_in, rtol=1e-4)
    np.testing.assert_allclose(data.frequencies[1], f_out, rtol=1e-4)
    # mode 1 moves the tip along body y (the arm's plane), mode 2 along z
    tip = data.phi[-3:]
    assert abs(tip[1, 0]) > 1e3 * max(abs(tip[0, 0]), abs(tip[2, 0]))
    assert abs(tip[2, 1]) > 1e3 * max(abs(tip[0, 1]), abs(tip[1, 1]))
    assert data.n_modes == 20


def test_seed_tip_beam_reproduces_the_seed_matrices():
    data = seed_tip_beam()
    np.testing.assert_array_equal(data.M_ff, np.diag([0.05, 0.03]))
    np.testing.assert_array_equal(data.K_ff, np.diag([120.0, 480.0]))
    # the shapes with the lumped mass give exactly those modal masses
    np.testing.assert_allclose(data.invariants.M_ff, np.diag([0.05, 0.03]), rtol=1e-13,
                               atol=1e-16)
    np.testing.assert_allclose(data.frequencies, np.sqrt([2400.0, 16000.0]) / (2 * np.pi),
                               rtol=1e-13)
    np.testing.assert_allclose(data.total_mass, 0.2, rtol=1e-13)


def test_native_keeps_odd_set_names_and_wraps_bad_content(tmp_path):
    import h5py

    kwargs = make_modal_kwargs()
    kwargs["node_sets"] = {"root": [0], "a/b.c": [1, 2]}
    data = ModalData(**kwargs)
    path = write_modal(data, tmp_path / "odd.fmd.h5")
    np.testing.assert_array_equal(read_modal(path).node_sets["a/b.c"], [1, 2])
    header = native_header(path)
    with h5py.File(path, "a") as f:
        set_native_header(f, "{not json")
    with pytest.raises(ReadError, match=r"odd\.fmd\.h5: the modal data file is damaged"):
        read_modal(path)  # the checksum sees the change first
    with h5py.File(path, "a") as f:  # without checksum (an older or hand-made file)
        del f.attrs["checksum"]
    with pytest.raises(ReadError, match=r"odd\.fmd\.h5: /header is not JSON text"):
        read_modal(path)
    with h5py.File(path, "a") as f:
        set_native_header(f, {**header, "metadata": {}})
        del f["M_ff"]
        f["M_ff"] = -np.eye(3)
    with pytest.raises(ReadError, match=r"odd\.fmd\.h5: ModalData\.M_ff is not positive"):
        read_modal(path)


def test_unreadable_vtu_is_a_read_error(tmp_path):
    write_modal(rich_data(), tmp_path / "x.vtu")
    (tmp_path / "x.vtu").write_text("")
    with pytest.raises(ReadError, match="meshio cannot read it"):
        read_modal(tmp_path / "x.vtu")


def test_vtu_six_dof_mass_in_other_units(tmp_path):
    """A 6N mass in mm-t-s: translations scale by t → kg, rotations by t·mm² → kg·m²."""
    import warnings

    from flexmbs.modal import clamped_modes
    from flexmbs.modal.fe.beam import BeamSection, Material, straight_beam

    fe = straight_beam(1.0, 6, BeamSection.rectangle(0.02, 0.01), Material.steel())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = clamped_modes(fe, "root", 3)
    write_modal(data, tmp_path / "si.vtu")
    side = json.loads((tmp_path / "si.modal.json").read_text())
    import meshio
    import scipy.io

    mesh = meshio.read(tmp_path / "si.vtu")
    mesh.points = mesh.points * 1e3
    for j in range(3):
        mesh.point_data[f"phi_{j + 1}"] = mesh.point_data[f"phi_{j + 1}"] * 1e3
    meshio.write(tmp_path / "mm.vtu", mesh)
    w = sp.diags(np.tile([1.0, 1, 1, 1e3, 1e3, 1e3], fe.n_nodes))
    mass = sp.csr_matrix(scipy.io.mmread(str(tmp_path / "si.mass.mtx")))
    scipy.io.mmwrite(str(tmp_path / "mm.mass.mtx"), 1e-3 * (w @ mass @ w))
    side.update(units="mm-t-s", M_ff=(np.array(side["M_ff"]) * 1e3).tolist(),
                K_ff=(np.array(side["K_ff"]) * 1e3).tolist(),
                mass={"kind": "consistent", "file": "mm.mass.mtx"})
    (tmp_path / "mm.modal.json").write_text(json.dumps(side))
    back = read_modal(tmp_path / "mm.vtu")
    assert abs(back.mass - data.mass).max() <= 1e-12 * abs(data.mass).max()
    np.testing.assert_allclose(back.inertia_tensor, data.inertia_tensor, rtol=1e-10,
                               atol=1e-15)


def test_vtu_sidecar_must_state_the_reference_frame(tmp_path):
    write_modal(rich_data(), tmp_path / "f.vtu")
    side = json.loads((tmp_path / "f.modal.json").read_text())
    del side["reference_frame"]
    (tmp_path / "f.modal.json").write_text(json.dumps(side))
    with pytest.raises(ReadError, match=r"missing key\(s\) \['reference_frame'\]"):
        read_modal(tmp_path / "f.vtu")
