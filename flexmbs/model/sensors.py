"""Sensors: named output requests recorded at every output time (docs/sensors.md).

A sensor names what to measure and on what; the values are computed after the run from
the recorded states (:mod:`flexmbs.assembly.sensors`) and stored with the results, each
with its units and component names. The kinds and their quantities:

=========  ===================================================  ============================
kind       quantities                                           on
=========  ===================================================  ============================
marker     position, velocity, acceleration (global, [m],       ``marker="body.name"``
           [m/s], [m/s²]), orientation (its x, y, z axes in
           global components, [-]), angular_velocity ([rad/s])
node       displacement, velocity, acceleration of a flexible   ``body``, ``node`` (label),
           body's node: ``frame="body"`` the elastic part       ``frame``
           relative to the body frame in body axes;
           ``frame="global"`` the elastic displacement A Φ ξ
           and the absolute velocity and acceleration, global
           axes
joint      angle, angle_rate (revolute, cylindrical; [rad],     ``joint``
           [rad/s], unwrapped over the run), displacement,
           displacement_rate (prismatic, cylindrical; [m],
           [m/s])
reaction   force [N], torque [N m] that the joint applies to     ``joint``, ``frame``
           the body of its marker j, at that marker's point;
           ``frame="joint"`` components along marker i's
           axes, ``"global"`` global
drive      torque [N m] (rotation drives), force [N]           ``drive``
           (translation drives; coordinate drives of x, y,
           z): what the drive applies to the body of its
           marker j about / along marker i's z axis (global
           x, y or z for a coordinate drive), from its
           multiplier
force      value: spring–damper tension [N], rotational         ``force``
           spring–damper torque [N m], joint actuator value;
           force [N], torque [N m] of a bushing: the load on
           its marker j, x, y, z along its marker i's axes
energy     kinetic, potential (gravity and elastic) of a body   ``body``
           [J]
modal      coordinates ξ of a flexible body                     ``body``
contact    gap, penetration, normal_force, tangential_force,    ``contact``
           normal_velocity, dissipated (as recorded for it)
=========  ===================================================  ============================
"""

from __future__ import annotations

from dataclasses import dataclass

XYZ = ("x", "y", "z")

#: kind → quantity → (units, components or None when they come from the target).
QUANTITIES: dict[str, dict[str, tuple[str, tuple[str, ...] | None]]] = {
    "marker": {"position": ("m", XYZ), "velocity": ("m/s", XYZ),
               "acceleration": ("m/s^2", XYZ),
               "orientation": ("-", tuple(f"{a}_{c}" for a in XYZ for c in XYZ)),
               "angular_velocity": ("rad/s", XYZ)},
    "node": {"displacement": ("m", XYZ), "velocity": ("m/s", XYZ),
             "acceleration": ("m/s^2", XYZ)},
    "joint": {"angle": ("rad", ("angle",)), "angle_rate": ("rad/s", ("angle_rate",)),
              "displacement": ("m", ("displacement",)),
              "displacement_rate": ("m/s", ("displacement_rate",))},
    "reaction": {"force": ("N", XYZ), "torque": ("N m", XYZ)},
    "drive": {"torque": ("N m", ("torque",)), "force": ("N", ("force",))},
    "force": {"value": (None, ("value",)), "force": ("N", XYZ), "torque": ("N m", XYZ)},
    "energy": {"kinetic": ("J", ("kinetic",)), "potential": ("J", ("potential",))},
    "modal": {"coordinates": ("-", None)},
    "contact": {q: (u, (q,)) for q, u in (("gap", "m"), ("penetration", "m"),
                                         ("normal_force", "N"), ("tangential_force", "N"),
                                         ("normal_velocity", "m/s"), ("dissipated", "J"))},
}

#: kind → the target key it needs (the name of a marker, body, joint, force or contact).
TARGET_KEY = {"marker": "marker", "node": "body", "joint": "joint", "reaction": "joint",
              "drive": "drive", "force": "force", "energy": "body", "modal": "body",
              "contact": "contact"}

#: kind → (allowed frames, default frame); kinds not listed take no frame.
FRAMES = {"node": (("body", "global"), "body"), "reaction": (("joint", "global"), "joint")}

#: Joint kinds with a rotation coordinate about z_i, and with a translation along z_i.
ROTATING_JOINTS = ("revolute", "cylindrical")
SLIDING_JOINTS = ("prismatic", "cylindrical")

#: Drive kinds → the quantity a drive sensor records on them; coordinate drives record a
#: force on the coordinates of :data:`FORCE_COORDINATES` only.
DRIVE_QUANTITY = {"rotation": "torque", "translation": "force", "coordinate": "force"}
FORCE_COORDINATES = ("x", "y", "z")


@dataclass(frozen=True)
class Sensor:
    """One output request: ``kind`` and ``quantity`` of :data:`QUANTITIES` measured on
    ``target`` (a marker "body.name", body, joint, drive, force or contact name), with the node
    label of ``node`` sensors and the frame of ``node`` and ``reaction`` sensors."""

    name: str
    kind: str
    quantity: str
    target: str
    node: int | None = None
    frame: str | None = None


def sensor_problems(sensor: Sensor) -> list[str]:
    """What is wrong with ``sensor`` on its own (names are checked against the model by
    the builder): unknown kind, quantity or frame, a missing node label."""
    who = f"sensor {sensor.name!r}"
    if not isinstance(sensor.kind, str) or sensor.kind not in QUANTITIES:
        return [f"{who}: unknown sensor type {sensor.kind!r}; known: {sorted(QUANTITIES)}"]
    out = []
    known = QUANTITIES[sensor.kind]
    if sensor.quantity not in known:
        out.append(f"{who}: quantity {sensor.quantity!r} is not one that "
                   f"{sensor.kind} sensors measure ({sorted(known)})")
    frames = FRAMES.get(sensor.kind)
    if frames is None and sensor.frame is not None:
        out.append(f"{who}: {sensor.kind} sensors take no frame (got {sensor.frame!r})")
    if frames is not None and sensor.frame not in frames[0]:
        out.append(f"{who}: frame must be one of {list(frames[0])}, got {sensor.frame!r}")
    if sensor.kind == "node" and (isinstance(sensor.node, bool)
                                  or not isinstance(sensor.node, int)):
        out.append(f"{who}: node must be an integer node label, got {sensor.node!r}")
    if sensor.kind != "node" and sensor.node is not None:
        out.append(f"{who}: only node sensors take a node (got {sensor.node!r})")
    return out
