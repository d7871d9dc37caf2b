"""ModelBuilder → finalize() → immutable Model, kept separate from the mutable state.

The builder records declarations; ``finalize()`` checks everything at once and raises a
single :class:`~flexmbs.errors.ModelError` listing every problem (unknown bodies or
markers, duplicate names, non-positive mass, inertia not symmetric positive definite,
zero-length axes, joints whose two markers sit on one body).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..elements.bushing import Bushing
from ..errors import ModelError, problem_report
from ..frame.rotations import g_global, quaternion_from_matrix
from .bodies import Ground, RigidBody
from .declarations import (
    ProfileValue,
    _floats,
    _name_problem,
    _orientation,
    _shape,
    _vec3,
    distributed_loads,
    initial_problems,
    reference_problems,
    resolve_markers,
    sensor_target_problems,
)
from .drives import Constant, Profile, as_profile
from .flexible import FlexibleBody, nonlinear_coordinates, padded
from .forces import (
    JointActuator,
    PointLoad,
    RotationalSpringDamper,
    SpringDamperActuator,
    warn_negative_coefficients,
)
from .joints import JOINT_EQUATIONS
from .nonlinear_beam import (
    beam_distributed_loads,
    beam_markers,
    declare_beam,
    rename_markers,
)
from .sensors import FRAMES as SENSOR_FRAMES
from .sensors import (
    TARGET_KEY,
    Sensor,
    sensor_problems,
)
from .servos import servo_for_joint
from .specs import DriveSpec, JointInitial, JointSpec, Model

DRIVE_KINDS = ("rotation", "translation", "coordinate")

__all__ = ["DRIVE_KINDS", "DriveSpec", "JointInitial", "JointSpec", "Model", "ModelBuilder",
           "ProfileValue"]


def _shown(value):
    """``value`` as the user wrote it: arrays the loader made back into lists."""
    return value.tolist() if isinstance(value, np.ndarray) else value


@dataclass
class ModelBuilder:
    """Declare bodies, markers, joints, drives and forces; then :meth:`finalize`.

    Parameters
    ----------
    gravity : 3-vector
        Gravitational acceleration [m/s²]; default off (docs/multibody.md).
    """

    gravity: Any = (0.0, 0.0, 0.0)
    _bodies: dict = field(default_factory=dict)
    _markers: list = field(default_factory=list)
    _joints: list = field(default_factory=list)
    _drives: list = field(default_factory=list)
    _forces: list = field(default_factory=list)
    _distributed: list = field(default_factory=list)
    _sensors: list = field(default_factory=list)
    _initial: list = field(default_factory=list)
    _problems: list = field(default_factory=list)
    _beams: dict = field(default_factory=dict)

    def __post_init__(self):
        self._bodies["ground"] = Ground()

    # ------------------------------------------------------------------ bodies
    def _pose(self, what, position, orientation, velocity, angular_velocity, fixed,
              extra_names):
        """Initial R, p, Ṙ, ṗ (= ¼ Gᵀ ω) and the indices of the ``fixed`` coordinates."""
        problems = self._problems
        p = quaternion_from_matrix(_orientation(orientation, f"{what}.orientation",
                                                problems))
        pos = _vec3(position, f"{what}.position", problems)
        vel = _vec3(velocity, f"{what}.velocity", problems)
        omega = _vec3(angular_velocity, f"{what}.angular_velocity", problems)
        names = ("x", "y", "z", "e0", "e1", "e2", "e3", *extra_names)
        fixed_idx = []
        for c in ([fixed] if isinstance(fixed, str) else fixed):
            if c not in names:
                problems.append(f"{what}.fixed names unknown coordinate {c!r}; use {names}")
            else:
                fixed_idx.append(names.index(c))
        return pos, p, vel, 0.25 * g_global(p).T @ omega, fixed_idx

    def add_rigid_body(self, name: str, mass: float, inertia, *, position=(0, 0, 0),
                       orientation=None, velocity=(0, 0, 0), angular_velocity=(0, 0, 0),
                       inertia_axes=None, fixed=(), com=(0, 0, 0), shape=None) -> str:
        """Add a rigid body; its frame is at the centre of mass unless ``com`` is given.

        Parameters
        ----------
        mass : float
            [kg] > 0.
        inertia : 3x3 or 3-vector (principal moments)
            Inertia about the centre of mass [kg m²], in the axes ``inertia_axes``
            (columns, body-frame components; default: the body axes).
        position, orientation
            Initial centre-of-mass position [m] and attitude (3x3 rotation, Euler
            parameters, or a z-axis) in the global frame.
        velocity, angular_velocity
            Initial Ṙ [m/s] and global ω [rad/s].
        fixed : iterable of str
            Coordinates to hold during assembly, e.g. ``("x", "e0")``.
        com : 3-vector
            Centre of mass in the body frame [m]; then ``position`` places the body-frame
            origin (a reference point, e.g. a joint), and ``inertia`` is still about the
            centre of mass.
        shape : SurfaceShape or path, optional
            Drawing geometry in the body frame (a mesh file is read with
            :func:`~flexmbs.model.shapes.read_shape`, in metres); only renders and
            exports use it.
        """
        problems = self._problems
        what = f"RigidBody({name!r})"
        if (problem := _name_problem("body", name)) is not None:
            problems.append(problem)
        if name in self._bodies:
            problems.append(f"duplicate body name {name!r}")
        try:
            m = float(mass)
        except (TypeError, ValueError):
            m = float("nan")
        if not (np.isfinite(m) and m > 0):
            problems.append(f"{what}.mass must be positive, got {mass!r}")
        inertia_arr = _floats(inertia)
        if inertia_arr.shape == (3,):
            inertia_arr = np.diag(inertia_arr)
        if inertia_arr.shape != (3, 3) or not np.all(np.isfinite(inertia_arr)):
            problems.append(f"{what}.inertia must be a finite 3x3 matrix or 3 principal "
                            f"moments, got {_shown(inertia)!r}")
            inertia_arr = np.eye(3)
        axes = _orientation(inertia_axes, f"{what}.inertia_axes", problems)
        inertia_arr = axes @ inertia_arr @ axes.T
        if np.max(np.abs(inertia_arr - inertia_arr.T)) > 1e-9 * np.max(np.abs(inertia_arr)):
            problems.append(f"{what}.inertia is not symmetric")
        eig = np.linalg.eigvalsh(0.5 * (inertia_arr + inertia_arr.T))
        if not eig[0] > 0:
            problems.append(f"{what}.inertia is not positive definite (eigenvalues "
                            f"{np.array2string(eig, precision=4)})")
        elif eig[2] > eig[0] + eig[1] + 1e-9 * eig[2]:
            problems.append(f"{what}.inertia violates the triangle inequality "
                            f"(I3 > I1 + I2: {np.array2string(eig, precision=4)})")
        pos, p, vel, pdot, fixed_idx = self._pose(what, position, orientation, velocity,
                                                  angular_velocity, fixed, ())
        self._bodies[name] = RigidBody(name, m if np.isfinite(m) else 1.0,
                                       0.5 * (inertia_arr + inertia_arr.T),
                                       np.concatenate([pos, p]), np.concatenate([vel, pdot]),
                                       tuple(fixed_idx), com=_vec3(com, f"{what}.com",
                                                                   problems),
                                       shape=_shape(shape, f"{what}.shape", problems))
        return name

    def add_flexible_body(self, name: str, data, *, position=(0, 0, 0), orientation=None,
                          velocity=(0, 0, 0), angular_velocity=(0, 0, 0), xi=None,
                          xi_dot=None, coupling: str = "two-way", fixed=(),
                          stiffening: bool | None = None, nonlinear: bool = False) -> str:
        """Add a flexible body (floating frame + modal coordinates) from a ModalData.

        ``position``/``orientation`` place the body frame (the frame of the modal data's
        node coordinates); ``xi``/``xi_dot`` are initial modal coordinates and rates
        (default zero); ``coupling`` is "two-way", "one-way", "rigid" or "no-Mrf";
        ``stiffening``: geometric stiffening (docs/theory_stiffening.md), default on when
        the modal data carry the stiffening matrices and ``nonlinear`` is off;
        ``nonlinear``: the modes enriched with the data's modal derivatives, with
        polynomial elastic forces (docs/theory_modal_derivatives.md; ``xi``, ``xi_dot``
        may then also give the derivative coordinates, zero by default).
        """
        from ..frame.coupling import Coupling
        from ..modal.data import ModalData

        problems = self._problems
        what = f"FlexibleBody({name!r})"
        if (problem := _name_problem("body", name)) is not None:
            problems.append(problem)
        if name in self._bodies:
            problems.append(f"duplicate body name {name!r}")
        if not isinstance(data, ModalData):
            problems.append(f"{what}: data must be a ModalData (flexmbs.read_modal(...)), "
                            f"got {type(data).__name__}")
            return name
        try:
            mode = Coupling(coupling)
        except ValueError:
            problems.append(f"{what}: coupling {coupling!r} is not one of "
                            f"{[c.value for c in Coupling]}")
            mode = Coupling.TWO_WAY
        stiff = data.has_stiffening and nonlinear is not True if stiffening is None else stiffening
        if not isinstance(stiff, (bool, np.bool_)):
            problems.append(f"{what}: stiffening must be true or false, got {stiffening!r}")
            stiff = False
        elif stiff and not data.has_stiffening:
            problems.append(f"{what}: stiffening is on but its modal data carry no "
                            f"stiffening matrices (flexmbs.modal.stiffening."
                            f"with_stiffening(data, fe), or flexmbs beam)")
            stiff = False
        data, elastic = nonlinear_coordinates(what, data, nonlinear, stiff, problems)
        n = data.n_modes
        if n == 0:
            problems.append(f"{what}: its modal data have no modes; keep at least one, or "
                            f"add the body as a rigid body (add_rigid_body) with the data's "
                            f"mass and inertia")
        xi0, xid0 = (padded(v, n, elastic) for v in (xi, xi_dot))
        if mode is Coupling.RIGID and (np.any(xi0) or np.any(xid0)):
            problems.append(f"{what}: coupling 'rigid' keeps ξ = 0; xi and xi_dot must be "
                            f"zero")
        for label, arr in (("xi", xi0), ("xi_dot", xid0)):
            if arr.shape != (n,) or not np.all(np.isfinite(arr)):
                problems.append(f"{what}.{label} must be {n} finite numbers (one per "
                                f"mode), got {arr.tolist()}")
        pos, p, vel, pdot, fixed_idx = self._pose(
            what, position, orientation, velocity, angular_velocity, fixed,
            tuple(f"xi{j + 1}" for j in range(n)))
        self._bodies[name] = FlexibleBody(
            name, data, np.concatenate([pos, p, xi0 if xi0.shape == (n,) else np.zeros(n)]),
            np.concatenate([vel, pdot, xid0 if xid0.shape == (n,) else np.zeros(n)]), mode,
            tuple(fixed_idx), stiffening=stiff, elastic=elastic)
        return name

    def add_nonlinear_beam(self, name: str, length: float, elements: int, section,
                           material="steel", **placement) -> str:
        """A geometrically exact beam of ``elements`` Simo–Reissner elements: node bodies
        ``name/1`` … ``name/n+1`` and the element force ``name``; ``section`` a
        BeamSection or section table, ``material`` a Material, "steel", "aluminium" or
        {E, nu, rho}; ``placement``: position, axis, up, velocity, angular_velocity, and
        the constants stiffness and inertia that replace the section's and material's
        (:func:`flexmbs.model.nonlinear_beam.declare_beam`, docs/nonlinear_beam.md)."""
        beam = declare_beam(self._bodies, self._forces, self._problems, name, length,
                            elements, section, material, **placement)
        if beam is not None:
            self._beams[name] = beam
        return name

    # ------------------------------------------------------------------ markers
    def add_marker(self, body: str, name: str, position=(0, 0, 0), orientation=None, *,
                   frame: str = "body", node=None, node_set=None, attach=None) -> str:
        """Add marker ``name`` on ``body``; returns ``"body.name"``.

        ``position``/``orientation`` are body-frame quantities, or global ones in the
        initial configuration with ``frame="global"``. ``orientation`` may be a 3x3
        rotation (columns = marker axes), Euler parameters, or just the z-axis.
        On a flexible body give ``node`` (a node label of its ModalData) or ``node_set``
        (an interface marker averaging that set: a set name of the ModalData, a list of
        node labels, or a geometric spec in the body frame such as ``"plane:x=0"`` or
        ``{"type": "box", "min": [..], "max": [..]}``, :mod:`flexmbs.modal.node_selection`),
        and the position is then the node's
        (or the set's mean); or a ``position`` anywhere, with ``attach``: "nearest" (the
        default for a point: carried by its nearest node, or by the least-squares motion
        of the nearest nodes of a mesh without nodal rotations) or "frame" (rigidly on
        the body frame; the default for the frame origin, position (0, 0, 0))
        (:func:`flexmbs.model.marker_modes.point_modes`, docs/flexible_bodies.md).
        """
        self._markers.append((body, name, position, orientation, frame, node, node_set,
                              attach))
        return f"{body}.{name}"

    # ------------------------------------------------------------------ joints
    def add_joint(self, name: str, kind: str, marker_i: str, marker_j: str) -> str:
        """Add a joint of ``kind`` (see ``JOINT_EQUATIONS``) between two markers."""
        if not isinstance(kind, str) or kind not in JOINT_EQUATIONS:
            self._problems.append(f"joint {name!r}: unknown joint type {kind!r}; known: "
                                  f"{sorted(JOINT_EQUATIONS)}")
        self._joints.append(JointSpec(name, kind, marker_i, marker_j))
        return name

    def add_revolute(self, name, marker_i, marker_j):
        return self.add_joint(name, "revolute", marker_i, marker_j)

    def add_prismatic(self, name, marker_i, marker_j):
        return self.add_joint(name, "prismatic", marker_i, marker_j)

    def add_spherical(self, name, marker_i, marker_j):
        return self.add_joint(name, "spherical", marker_i, marker_j)

    def add_drive(self, name: str, kind: str, profile, *, marker_i=None, marker_j=None,
                  coordinate=None) -> str:
        """Prescribe a relative angle (``rotation``, x_j about z_i) [rad], a displacement
        (``translation``, z_iᵀ(r_j − r_i)) [m] or an absolute ``coordinate``
        ("body.x", "body.e1", ...) over time with ``profile``."""
        if kind not in DRIVE_KINDS:
            self._problems.append(f"drive {name!r}: drive type {kind!r} is not one of "
                                  f"{DRIVE_KINDS}")
        try:
            prof = as_profile(profile)
        except Exception as exc:
            self._problems.append(f"drive {name!r}: {exc}")
            prof = None
        self._drives.append(DriveSpec(name, kind, prof, marker_i, marker_j, coordinate))
        return name

    # ------------------------------------------------------------------ forces
    def _number(self, owner, field_name, value, nonnegative=False) -> float:
        try:
            out = float(value)
        except (TypeError, ValueError):
            self._problems.append(f"{owner}: {field_name} must be a number, got {value!r}")
            return 0.0
        if not np.isfinite(out) or (nonnegative and out < 0):
            self._problems.append(f"{owner}: {field_name} must be a finite"
                                  f"{' non-negative' if nonnegative else ''} number, got "
                                  f"{value!r}")
            return 0.0
        return out

    def add_spring_damper(self, name, marker_i, marker_j, *, stiffness=0.0, damping=0.0,
                          free_length=0.0, actuator=None):
        """Translational spring [N/m], damper [N s/m], free length [m] and actuator
        (Profile or f(t, state) [N]) between two markers; tension positive."""
        who = f"spring-damper {name!r}"
        if actuator is not None and not (isinstance(actuator, Profile) or callable(actuator)):
            self._problems.append(f"{who}: actuator must be a Profile or f(t, state)")
        stiffness, damping = (self._number(who, "stiffness", stiffness),
                              self._number(who, "damping", damping))
        warn_negative_coefficients(who, stiffness, damping, "N/m", "N s/m")
        self._forces.append(SpringDamperActuator(
            name, marker_i, marker_j, stiffness, damping,
            self._number(who, "free_length", free_length, nonnegative=True), actuator))
        return name

    def add_rotational_spring_damper(self, name, marker_i, marker_j, *, stiffness=0.0,
                                     damping=0.0, angle0=0.0):
        """Torsion spring [N m/rad] and damper [N m s/rad] about z_i (markers of a hinge)."""
        who = f"rotational spring-damper {name!r}"
        stiffness, damping = (self._number(who, "stiffness", stiffness),
                              self._number(who, "damping", damping))
        warn_negative_coefficients(who, stiffness, damping, "N m/rad", "N m s/rad")
        self._forces.append(RotationalSpringDamper(
            name, marker_i, marker_j, stiffness, damping,
            self._number(who, "angle0", angle0)))
        return name

    def add_bushing(self, name, marker_i, marker_j, *, stiffness=0.0, damping=0.0,
                    rotational_stiffness=0.0, rotational_damping=0.0,
                    preload_force=(0.0, 0.0, 0.0), preload_torque=(0.0, 0.0, 0.0)):
        """Six-component spring–damper between two marker frames
        (:class:`~flexmbs.elements.bushing.Bushing`, docs/multibody.md "Bushings"): per
        axis of marker i, stiffness [N/m], damping [N s/m], rotational_stiffness
        [N m/rad], rotational_damping [N m s/rad] (3-vectors ≥ 0, or one number for all
        three), and the preload_force [N] and preload_torque [N m] that it exerts on
        marker j at zero deflection."""
        try:
            bushing = Bushing(name, marker_i, marker_j, stiffness=stiffness,
                              damping=damping, rotational_stiffness=rotational_stiffness,
                              rotational_damping=rotational_damping,
                              preload_force=preload_force, preload_torque=preload_torque)
        except ModelError as exc:
            self._problems.append(str(exc))
            return name
        return self.add_force(bushing)

    def add_force(self, force):
        """Add a force given as its declaration, an instance of the declaration class of
        a registered element kind with a case form (``Bushing(...)``; docs/compiled.md
        "Adding an element kind"): a declaration that checks itself, so nothing is left
        for the builder to do. Returns its name; its markers are checked with the rest
        of the model by :meth:`finalize`. The other forces have their own ``add_…``
        methods, which check what their declarations do not."""
        from ..elements.registry import CASE_FORMS  # the kinds' tables, at first use

        classes = tuple(form.declaration for form in CASE_FORMS.values())
        if not isinstance(force, classes):
            names = ", ".join(cls.__name__ for cls in classes)
            raise ModelError(f"add_force takes a declaration of {names}; got "
                             f"{type(force).__name__} {force!r:.80}")
        self._forces.append(force)
        return force.name

    def add_joint_actuator(self, name, marker_i, marker_j, function, kind="torque"):
        """Torque about z_i [N m] (``kind="torque"``) or force along z_i [N] (``"force"``)
        on marker j's body, reaction on i, from ``function(t, state)``, or from a time
        profile (a :class:`~flexmbs.model.drives.Profile` or a number: its value s(t))."""
        profile = None
        if isinstance(function, (int, float)) and not isinstance(function, bool):
            function = Constant(float(function))
        if isinstance(function, Profile):
            profile = function
            function = ProfileValue(profile)
        if kind not in ("torque", "force"):
            self._problems.append(f"actuator {name!r}: actuator type must be 'torque' or "
                                  f"'force', got {kind!r}")
        if not callable(function):
            self._problems.append(f"actuator {name!r}: function must be callable f(t, state)")
        self._forces.append(JointActuator(name, marker_i, marker_j, function, kind, profile))
        return name

    def add_joint_servo(self, name, joint, *, reference, kp=0.0, kd=0.0, ki=0.0,
                        torque_limit=None, motor=None, coordinate=None):
        """PD(+I) servo on the angle of a revolute or the displacement of a prismatic
        ``joint`` (declared before it; ``coordinate`` picks one of a cylindrical joint's),
        tracking ``reference`` (a Profile of θ_ref [rad or m], or a number) through an
        optional ``motor`` (a :class:`~flexmbs.model.servos.Motor` or {inertia,
        gear_ratio, efficiency}); gains and ``torque_limit`` [N m] on the motor side
        (docs/servos.md)."""
        try:
            self._forces.append(servo_for_joint(
                name, self._joints, joint, kp=kp, kd=kd, reference=reference, ki=ki,
                torque_limit=torque_limit, motor=motor, coordinate=coordinate))
        except ModelError as exc:
            self._problems.append(str(exc))
        return name

    def _point_load(self, name, marker, value, kind, frame):
        who = f"point {kind} {name!r}"
        if frame not in ("global", "marker"):
            self._problems.append(f"{who}: frame must be 'global' or 'marker', got {frame!r}")
        if not callable(value):
            arr = np.asarray(value, dtype=float) if np.size(value) == 3 else None
            if arr is None or not np.all(np.isfinite(arr)):
                self._problems.append(f"{who}: value must be 3 finite numbers or "
                                      f"f(t, state), got {value!r}")
            else:
                value = arr
        self._forces.append(PointLoad(name, marker, value, kind, frame))
        return name

    def add_distributed_load(self, name, body, load, *, weights="mass", frame="global"):
        """A load field over a flexible body's nodes, f_k = w_k · load
        (:class:`~flexmbs.model.forces.DistributedLoad`; ``weights`` "mass": per kg,
        "uniform", or an (N,) array; ``frame`` "global" or "body"), or along a nonlinear
        beam (weights "length": per metre, "mass", "uniform" or per node; ``frame``
        "body": along the nodes' section axes; docs/nonlinear_beam.md)."""
        self._distributed.append((name, body, load, weights, frame))
        return name

    # ------------------------------------------------------------------ initial state
    def set_initial(self, joint: str, *, angle=None, angle_deg=None, displacement=None,
                    rate=None) -> str:
        """Start ``joint`` at a joint coordinate: ``angle`` [rad] or ``angle_deg`` [deg]
        (revolute, cylindrical) or ``displacement`` [m] (prismatic, cylindrical), with
        ``rate`` [rad/s or m/s] if given; assembly then places the bodies, so a chain
        needs no hand-computed positions (its bodies' given poses are the first guess)."""
        who = f"initial condition of joint {joint!r}"
        given = {k: v for k, v in (("angle", angle), ("angle_deg", angle_deg),
                                   ("displacement", displacement)) if v is not None}
        if len(given) != 1:
            self._problems.append(f"{who}: give exactly one of angle, angle_deg, "
                                  f"displacement (got {sorted(given) or 'none'})")
            return joint
        key, value = next(iter(given.items()))
        for name, number in ((key, value), ("rate", rate)):
            if number is not None and (isinstance(number, bool)
                                       or not isinstance(number, (int, float, np.number))
                                       or not np.isfinite(number)):
                self._problems.append(f"{who}: {name} must be a finite number, got "
                                      f"{number!r}")
                return joint
        quantity = "displacement" if key == "displacement" else "angle"
        value = float(np.radians(value)) if key == "angle_deg" else float(value)
        self._initial.append(JointInitial(joint, quantity, value,
                                          None if rate is None else float(rate)))
        return joint

    # ------------------------------------------------------------------ sensors
    def add_sensor(self, name: str, kind: str, quantity: str, *, marker=None, body=None,
                   node=None, joint=None, drive=None, force=None, contact=None,
                   frame=None) -> str:
        """Record ``quantity`` of ``kind`` at every output (flexmbs.model.sensors, e.g.
        ``add_sensor("theta", "joint", "angle", joint="shoulder")``, ``add_sensor("tau",
        "drive", "torque", drive="motor")``); the target is ``marker``, ``body`` (with
        ``node`` for node sensors), ``joint``, ``drive``, ``force`` or ``contact`` as the
        kind needs. ``frame``: "body"/"global" for node sensors (default "body"),
        "joint"/"global" for reactions (default "joint")."""
        given = {"marker": marker, "body": body, "joint": joint, "drive": drive,
                 "force": force, "contact": contact}
        need = TARGET_KEY.get(kind)
        if frame is None and kind in SENSOR_FRAMES:
            frame = SENSOR_FRAMES[kind][1]
        sensor = Sensor(name, kind, quantity, given.get(need) if need else None, node, frame)
        problems = [] if (problem := _name_problem("sensor", name)) is None else [problem]
        problems += sensor_problems(sensor)
        extra = sorted(k for k, v in given.items() if v is not None and k != need)
        if need and given[need] is None:
            problems.append(f"sensor {name!r}: {kind} sensors need {need}=")
        if extra:
            problems.append(f"sensor {name!r}: {kind} sensors take {need}=, not "
                            f"{', '.join(e + '=' for e in extra)}")
        self._problems.extend(problems)
        if not problems and kind == "node":  # a marker of its own on the node
            self._markers.append((body, f"@{name}", (0, 0, 0), None, "body", node, None,
                                  None))
        self._sensors.append(sensor)
        return name

    def add_point_force(self, name, marker, force, frame="global"):
        """Force [N] at a marker: constant 3-vector or f(t, state); global or marker axes."""
        return self._point_load(name, marker, force, "force", frame)

    def add_point_torque(self, name, marker, torque, frame="global"):
        """Torque [N m] on a marker's body: constant or f(t, state); global or marker axes."""
        return self._point_load(name, marker, torque, "torque", frame)

    # ------------------------------------------------------------------ contact
    def add_contact(self, name: str, kind: str, marker_a: str, marker_b: str, law, *,
                    friction=None, radius_a: float = 0.0, radius_b: float = 0.0) -> str:
        """Contact between two markers (``flexmbs.contact``, docs/contact.md).

        ``kind``: ``"sphere-plane"`` (a: plane marker, normal its z axis; b: sphere
        centre, ``radius_b``), ``"point-plane"`` (the same with radius 0),
        ``"sphere-sphere"`` (radii ``radius_a``, ``radius_b``) or ``"journal-bearing"``
        (a: bearing axis marker, hole radius ``radius_a``; b: journal, ``radius_b``).
        ``law``: Penalty, Hertz, HuntCrossley, LankaraniNikravesh or Impulse;
        ``friction``: a Friction or None.
        """
        from ..contact import Contact
        from ..contact.geometry import contact_geometry

        who = f"contact {name!r}"
        try:
            geometry = contact_geometry(who, kind, marker_a, marker_b, radius_a, radius_b)
        except ModelError as exc:
            self._problems.append(str(exc))
            return name
        if not hasattr(law, "force") or not hasattr(law, "energy"):
            self._problems.append(f"{who}: law must be a contact law (flexmbs.contact: "
                                  f"Penalty, Hertz, HuntCrossley, LankaraniNikravesh, "
                                  f"Impulse), got {law!r}")
            return name
        if friction is not None and not hasattr(friction, "regularized"):
            self._problems.append(f"{who}: friction must be a flexmbs.contact.Friction, "
                                  f"got {friction!r}")
            return name
        self._forces.append(Contact(name, geometry, law, friction))
        return name

    def add_clearance_revolute(self, name: str, bearing: str, journal: str, *,
                               clearance: float, journal_radius: float, law,
                               friction=None, keep_in_plane: bool = True) -> str:
        """A revolute joint with radial clearance: the journal (marker ``journal``) moves
        inside the bearing (marker ``bearing``, axis z), its radial position free within
        ``clearance`` [m] and held by the journal–bearing contact ``<name>.contact``
        instead of the ideal joint's two radial equations. ``keep_in_plane``: a planar
        joint ``<name>.plane`` keeps the axes parallel and the journal in the bearing's
        plane (3 equations); set it False when the rest of the mechanism already does
        (a planar mechanism modelled in 3D), or the equations would be redundant."""
        if not (np.isfinite(clearance) and clearance > 0):
            self._problems.append(f"clearance revolute {name!r}: clearance must be a "
                                  f"positive length, got {clearance!r}")
            return name
        if keep_in_plane:
            self.add_joint(f"{name}.plane", "planar", bearing, journal)
        self.add_contact(f"{name}.contact", "journal-bearing", bearing, journal, law,
                         friction=friction, radius_a=journal_radius + clearance,
                         radius_b=journal_radius)
        return name

    # ------------------------------------------------------------------ finalize
    def finalize(self) -> Model:
        """Validate everything and return the immutable :class:`Model`."""
        problems = list(self._problems)
        gravity = _vec3(self.gravity, "gravity", problems)
        flexible_loads, beam_load_markers, beam_loads = beam_distributed_loads(
            self._distributed, self._beams, self._forces, problems)
        declared, aliases = beam_markers([*self._markers, *beam_load_markers],
                                         self._beams, problems)
        markers, flex_modes = resolve_markers(declared, self._bodies, problems)
        markers = rename_markers(markers, aliases, problems)
        self._forces.extend([*beam_loads, *distributed_loads(flexible_loads, self._bodies,
                                                             problems)])
        self._distributed.clear()
        reference_problems(self._joints, self._drives, self._forces, markers,
                           self._bodies, problems)
        sensor_target_problems(self._sensors, markers, self._bodies, self._joints,
                               self._forces, problems, drives=self._drives)
        initial_problems(self._initial, self._joints, problems)
        if problems:
            raise ModelError(problem_report(problems))
        bodies = dict(self._bodies)
        for body, modes in flex_modes.items():
            bodies[body] = replace(bodies[body], marker_modes=modes)
        return Model(bodies, markers, tuple(self._joints), tuple(self._drives),
                     tuple(self._forces), gravity, tuple(self._sensors),
                     tuple(self._initial))
