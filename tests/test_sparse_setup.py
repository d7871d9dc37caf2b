"""Large models' set-up in sparse form: the model check's rank of Φ_q
(flexmbs.assembly.rank) and the consistent initial accelerations
(flexmbs.integrators.reference.accelerations) give what the dense forms give."""

import numpy as np

from flexmbs.assembly import System, model_check, rank
from flexmbs.assembly.rank import SPARSE_BLOCK_FROM, dense_rank, sparse_rank
from flexmbs.integrators.reference import SPARSE_FROM, accelerations
from flexmbs.model import ModelBuilder

INERTIA = [1e-3, 1e-2, 1e-2]


def link(b, name, start, end, mass=1.0):
    start, end = np.asarray(start, float), np.asarray(end, float)
    b.add_rigid_body(name, mass, INERTIA, position=(start + end) / 2)
    b.add_marker(name, "A", start, frame="global")
    b.add_marker(name, "B", end, frame="global")


def chain(b, n_links, prefix="l", closed=False, y=0.0):
    """A planar chain of ``n_links`` rigid links along x hinged to ground about z; with
    ``closed`` its free end is hinged to ground too (a planar loop modelled in 3D: three
    redundant equations)."""
    b.add_marker("ground", f"{prefix}O", (0, y, 0))
    prev = f"ground.{prefix}O"
    for k in range(n_links):
        # a slight zigzag, so that the closed chain is not a straight line
        start = (k * 0.3, y + 0.05 * (k % 2), 0)
        end = ((k + 1) * 0.3, y + 0.05 * ((k + 1) % 2), 0)
        link(b, f"{prefix}{k}", start, end)
        b.add_revolute(f"{prefix}r{k}", prev, f"{prefix}{k}.A")
        prev = f"{prefix}{k}.B"
    if closed:
        end = (n_links * 0.3, y + 0.05 * (n_links % 2), 0)
        b.add_marker("ground", f"{prefix}E", end)
        b.add_revolute(f"{prefix}close", prev, f"ground.{prefix}E")
    return b


def four_bar(b):
    pts = [(0, 5, 0), (0.2, 5.3, 0), (0.7, 5.35, 0), (0.8, 5, 0)]
    b.add_marker("ground", "P0", pts[0])
    b.add_marker("ground", "P3", pts[3])
    link(b, "crank", pts[0], pts[1])
    link(b, "coupler", pts[1], pts[2])
    link(b, "rocker", pts[2], pts[3])
    b.add_revolute("A", "ground.P0", "crank.A")
    b.add_revolute("B", "crank.B", "coupler.A")
    b.add_revolute("C", "coupler.B", "rocker.A")
    b.add_revolute("D", "rocker.B", "ground.P3")


def both(system):
    q = system.assemble()
    jac = system.jacobian(q, 0.0, sparse=True)
    names = system.constraint_names
    dense = dense_rank(jac.toarray())
    sparse = sparse_rank(jac)
    return (dense[0], [names[i] for i in dense[1]]), (sparse[0], [names[i] for i in sparse[1]])


N_LINKS = 45  # 315 coordinates, 270 rows in one block: the sparse check runs


def test_open_chain_full_rank_sparse_as_dense(monkeypatch):
    system = System(chain(ModelBuilder(gravity=(0, -9.81, 0)), N_LINKS).finalize())
    assert system.n_q >= model_check.SPARSE_RANK_FROM and system.n_c >= SPARSE_BLOCK_FROM
    dense, sparse = both(system)
    assert sparse == dense == (system.n_c, [])

    def no_dense(*args, **kwargs):
        raise AssertionError("the dense QR ran")

    monkeypatch.setattr(rank, "dense_rank", no_dense)  # decided by the sparse check alone
    assert model_check.rank_of(system, system.assemble()) == (system.n_c, ())
    assert system.check().dof == N_LINKS


def test_closed_chain_redundant_rows_named_as_the_dense_qr():
    """One large block with three redundant rows: the sparse check is in doubt and the
    dense QR of the block names them, as the QR of the whole Φ_q does."""
    system = System(chain(ModelBuilder(), N_LINKS, closed=True).finalize())
    dense, sparse = both(system)
    assert len(dense[1]) == 3
    assert sparse == dense
    assert model_check.rank_of(system, system.assemble()) == (dense[0], tuple(dense[1]))


def test_separate_four_bar_redundancy_in_a_small_block():
    """A large open chain and a separate redundant four-bar: blocks decided apart, the
    four-bar's three rows named as the QR of the whole Φ_q names them."""
    b = chain(ModelBuilder(), N_LINKS)
    four_bar(b)
    b.add_rigid_body("free", 1.0, INERTIA, position=(0, -3, 0))  # no constraints
    system = System(b.finalize())
    dense, sparse = both(system)
    assert len(dense[1]) == 3 and all(n.split("[")[0] in "ABCD" for n in dense[1])
    assert sparse == dense
    # the model check's own route (without the advice, which builds up to 40 models)
    assert model_check.rank_of(system, system.assemble()) == (dense[0], tuple(dense[1]))


def test_zero_rows_are_redundant_in_both():
    import scipy.sparse as sp

    rng = np.random.default_rng(1)
    jac = sp.random(250, 400, density=0.02, random_state=rng, format="csr")
    jac = sp.vstack([jac, sp.csr_matrix((1, 400)), jac[3]], format="csr")
    assert sparse_rank(jac) == dense_rank(jac.toarray())


def test_initial_accelerations_sparse_as_dense():
    system = System(chain(ModelBuilder(gravity=(0, -9.81, 0)), N_LINKS).finalize())
    assert system.n_q >= SPARSE_FROM
    q = system.assemble()
    qd = system.project_velocity(q, np.linspace(-1, 1, system.n_q), 0.0)
    a_s, l_s = accelerations(system, q, qd, 0.0, sparse=True)
    a_d, l_d = accelerations(system, q, qd, 0.0, sparse=False)
    assert np.max(np.abs(a_s - a_d)) <= 1e-12 * np.max(np.abs(a_d))
    assert np.max(np.abs(l_s - l_d)) <= 1e-12 * np.max(np.abs(l_d))
    a_b, _ = accelerations(system, q, qd, 0.0, alpha=5.0, beta=5.0)  # the default: sparse
    a_bd, _ = accelerations(system, q, qd, 0.0, alpha=5.0, beta=5.0, sparse=False)
    assert np.max(np.abs(a_b - a_bd)) <= 1e-12 * np.max(np.abs(a_bd))


def test_initial_accelerations_with_redundant_rows_fall_back_to_least_squares():
    """A singular KKT matrix (the closed chain's redundant rows): the sparse form gives
    way to the dense least squares, the same q̈ as the dense form."""
    system = System(chain(ModelBuilder(gravity=(0, -9.81, 0)), N_LINKS,
                          closed=True).finalize())
    q = system.assemble()
    qd = np.zeros(system.n_q)
    a_s, _ = accelerations(system, q, qd, 0.0, sparse=True)
    a_d, _ = accelerations(system, q, qd, 0.0, sparse=False)
    assert np.all(np.isfinite(a_s))
    assert np.max(np.abs(a_s - a_d)) <= 1e-8 * max(np.max(np.abs(a_d)), 1.0)
