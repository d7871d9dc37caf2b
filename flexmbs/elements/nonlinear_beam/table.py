"""The nonlinear beams' element table (docs/compiled.md, docs/nonlinear_beam.md): each
element's two node bodies and its length and stiffnesses, the shear stiffnesses with the
residual bending flexibility in series (reference.element_stiffness). One marker at the
origin of every node body records the pairs of node bodies an element couples (the
iteration matrix's pattern); the kernels do not read the markers."""

from __future__ import annotations

import numpy as np

from ..declaration import FLOAT, INT, Field, KindTables
from .reference import element_stiffness, hermite_mass_difference

KIND = "nonlinear_beam"

#: A marker at a node body's origin, along its axes: rows point, x, y, z (body axes).
_ORIGIN = np.vstack([np.zeros(3), np.eye(3)])


def _build(system, ctx):
    nodes, params, masses, marks = [], [], [], []
    for beam in ctx.forces(KIND):
        bodies = [system.body_index(name) for name in beam.nodes]
        markers = [ctx.add_marker(b, _ORIGIN, np.zeros((4, 3, 0))) for b in bodies]
        stiffness = element_stiffness(beam.lengths, beam.stiffness)
        mass = hermite_mass_difference(beam.lengths, beam.mass_per_length)
        for e in range(len(beam.lengths)):
            nodes.append(bodies[e:e + 2])
            marks.append(markers[e:e + 2])
            params.append([beam.lengths[e], *stiffness[e]])
            masses.append(mass[e].ravel())
    return dict(nb_node=np.array(nodes, np.int64).reshape(-1, 2),
                nb_par=np.array(params, float).reshape(-1, 7),
                nb_mass=np.array(masses, float).reshape(-1, 16),
                nb_mark=ctx.couple(marks))


TABLE = KindTables(KIND, (
    Field("nb_node", INT, "(ne, 2) body indices of the element's node bodies a, b"),
    Field("nb_par", FLOAT, "(ne, 7) length L [m], EA, S_y, S_z [N], GJ, EI_y, EI_z "
                           "[N m²] (S: shear with the residual bending flexibility)"),
    Field("nb_mass", FLOAT, "(ne, 16) m_D [kg, kg m, kg m²] over (r_a, t_a, r_b, t_b), "
                            "row by row: the consistent inertia less the lumped masses"),
    Field("nb_mark", INT, "(ne, 2) markers at the origins of nodes a, b (the pattern)"),
), _build, claims=lambda force: getattr(force, "element_kind", None) == KIND)
