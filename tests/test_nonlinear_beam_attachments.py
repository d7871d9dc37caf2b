"""Force elements, contacts and sensors on the nodes of a geometrically exact beam
(issue 35, docs/nonlinear_beam.md): a slender cantilever (EI = 1 N m², L = 1 m) under a
small tip load P, propped at its tip by a spring–damper, a bushing or a point–plane
penalty contact of stiffness k. Its static tip deflection is the beam-theory
w = P / (k + 3 EI/L³); a run started at rest there stays there on both engines, and the
element's force sensor reads k w while the tip's marker sensor reads the node."""

import numpy as np
import pytest

from flexmbs.analysis import static_equilibrium
from flexmbs.assembly import System
from flexmbs.contact.laws import Penalty
from flexmbs.integrators.simulate import simulate
from flexmbs.modal.fe.beam import BeamSection, Material
from flexmbs.model import ModelBuilder

SECTION = BeamSection(A=1.0, Iy=1e-6, Iz=2e-6, J=2e-6, ky=1.0, kz=1.0)
MATERIAL = Material(E=1e6, nu=0.0, rho=1.0)  # EI_y = 1 N m², EA = 1e6 N, GA = 5e5 N
K, P, N = 2.0, 1e-4, 16  # prop stiffness [N/m], tip load [N], elements


def propped(kind: str) -> System:
    b = ModelBuilder()
    b.add_nonlinear_beam("arm", 1.0, N, SECTION, MATERIAL)
    b.add_marker("ground", "clamp")
    b.add_marker("ground", "below", position=[1.0, 0.0, 0.0])  # normal +z
    b.add_marker("arm", "root", node="root")
    b.add_marker("arm", "tip", node="tip")
    b.add_joint("clamp", "fixed", "ground.clamp", "arm.root")
    b.add_point_force("load", "arm.tip", [0.0, 0.0, -P])
    if kind == "spring-damper":
        b.add_spring_damper("prop", "ground.below", "arm.tip", stiffness=K, damping=0.1)
        b.add_sensor("force", "force", "value", force="prop")
    elif kind == "bushing":
        b.add_bushing("prop", "ground.below", "arm.tip", stiffness=[0.0, 0.0, K],
                      damping=0.1)
        b.add_sensor("force", "force", "force", force="prop")
    else:
        b.add_contact("prop", "point-plane", "ground.below", "arm.tip", Penalty(K, 0.1))
        b.add_sensor("force", "contact", "normal_force", contact="prop")
    b.add_sensor("tip", "marker", "position", marker="arm.tip")
    return System(b.finalize())


@pytest.mark.parametrize("kind", ["spring-damper", "bushing", "contact"])
def test_a_prop_on_the_beams_tip_node_carries_its_share_and_its_sensors_read_it(kind):
    system = propped(kind)
    rest = static_equilibrium(system)
    tip = system.slices[system.body_index(f"arm/{N + 1}")]
    w = -rest.q[tip][2]
    # beam theory (shear and stretching add 3.6e-6 for this section)
    np.testing.assert_allclose(w, P / (K + 3.0), rtol=1e-5)
    for engine in ("auto", "python"):
        res = simulate(system, 0.02, 1e-3, engine=engine, q0=rest.q,
                       qd0=np.zeros(system.n_q))
        assert res.success, res.message
        assert res.statistics["engine"] == ("compiled" if engine == "auto" else "python")
        np.testing.assert_allclose(res.q[:, tip][:, :3], np.tile(rest.q[tip][:3],
                                                                 (len(res.t), 1)),
                                   atol=1e-12)
        force = res.sensor("force")
        force = force[:, -1] if force.shape[1] == 3 else force[:, 0]  # a bushing's z
        np.testing.assert_allclose(force, K * w, rtol=1e-7)
        np.testing.assert_allclose(res.sensor("tip"), res.q[:, tip][:, :3], atol=1e-15)
