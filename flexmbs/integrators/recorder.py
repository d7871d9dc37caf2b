"""What a run records beside its states (docs/results_file.md): the model description
the results file carries (markers, joints, bodies with their nodes, shapes and drawing
geometry), Hermite interpolation to output times, the sensors' histories and the output
quantities (energies [J], constraint violations, non-conservative work [J]).
"""

from __future__ import annotations

import numpy as np

from ..assembly.system import System

#: What the results hold per contact and output time.
CONTACT_FIELDS = ("gap", "penetration", "normal_force", "tangential_force",
                  "normal_velocity", "state", "dissipated")


def _describe_model(system: System) -> dict:
    """Markers (body-frame origin; modal rows of flexible-body markers) and joints."""
    markers = {}
    for full, marker in system.model.markers.items():
        entry = {"body": marker.body, "position": [float(v) for v in marker.position]}
        body = system.model.bodies.get(marker.body)
        modes = getattr(body, "marker_modes", {}).get(marker.name)
        if modes is not None:
            entry["position"] = [float(v) for v in modes.u0]
            entry["phi"] = np.asarray(modes.phi).tolist()
        markers[full] = entry
    joints = [{"name": j.name, "kind": j.kind, "i": j.marker_i, "j": j.marker_j}
              for j in system.model.joints]
    return {"markers": markers, "joints": joints}


def _describe_bodies(system: System) -> dict:
    """Per body: kind, coordinate range and what post-processing needs so results stand
    on their own: for flexible bodies nodes, shapes, cells, node labels and a beam's
    section outline; for rigid bodies mass, inertia and the drawing geometry."""
    from ..modal.fe.beam import section_outline

    out = {}
    for body, sl in zip(system.bodies, system.slices, strict=True):
        info = {"kind": type(body).__name__, "start": sl.start, "n_coords": body.n_coords}
        if hasattr(body, "data"):
            info.update(n_modes=body.n_modes, coupling=body.coupling.value,
                        nodes=body.data.nodes, phi=body.data.phi,
                        node_ids=body.data.node_ids, cells=dict(body.data.cells))
            if body.data.modal_fields:  # stress modes and other per-node fields
                info["fields"] = dict(body.data.modal_fields)
            outline = section_outline(body.data.metadata)
            if outline is not None and "line" in body.data.cells:
                info.update(section_size=[outline["width_y"], outline["height_z"]],
                            section_axes=[outline["y_axis"], outline["z_axis"]])
        elif hasattr(body, "inertia"):  # rigid: what its drawing needs
            info.update(mass=float(body.mass), com=np.asarray(body.com, float),
                        inertia=np.asarray(body.inertia, float))
            if getattr(body, "shape", None) is not None:
                info.update(shape_points=body.shape.points,
                            shape_triangles=body.shape.triangles)
        out[body.name] = info
    return out


class Recording:
    """The recorded outputs (t, q, q̇, q̈, λ) in rows of arrays allocated for the outputs
    expected (grown by doubling when a run takes more), so an output costs one copy
    into each array and the histories need no stacking after the run.
    ``recording["q"]`` is the filled rows (a view: ``[-1]`` is the newest output)."""

    KEYS = ("t", "q", "qd", "qdd", "lam")

    #: the largest first allocation [bytes] (a longer run grows its arrays)
    FIRST_BYTES = 1 << 28

    def __init__(self, n_q: int, n_c: int, capacity: int):
        capacity = max(min(int(capacity), self.FIRST_BYTES // (8 * (3 * n_q + n_c + 1))), 1)
        self.n = 0
        self.t = np.empty(capacity)
        self.q, self.qd, self.qdd = (np.empty((capacity, n_q)) for _ in range(3))
        self.lam = np.empty((capacity, n_c))

    def add(self, t, q, qd, qdd, lam) -> None:
        """Record one output (copied)."""
        n = self.n
        if n == self.t.shape[0]:
            self._grow(2 * n)
        self.t[n] = t
        self.q[n] = q
        self.qd[n] = qd
        self.qdd[n] = qdd
        self.lam[n] = lam
        self.n = n + 1

    def extend(self, t, q, qd, qdd, lam) -> None:
        """Record the outputs of stacked histories (a restart's), copied."""
        m = len(t)
        if self.n + m > self.t.shape[0]:
            self._grow(self.n + m + self.t.shape[0])
        for key, rows in zip(self.KEYS, (t, q, qd, qdd, lam), strict=True):
            getattr(self, key)[self.n:self.n + m] = np.asarray(rows, dtype=float).reshape(
                (m, *getattr(self, key).shape[1:]))
        self.n += m

    def _grow(self, capacity: int) -> None:
        for key in self.KEYS:
            old = getattr(self, key)
            new = np.empty((capacity, *old.shape[1:]))
            new[:self.n] = old[:self.n]
            setattr(self, key, new)

    def __getitem__(self, key: str) -> np.ndarray:
        return getattr(self, key)[:self.n]

    def __len__(self) -> int:
        return self.n

    def histories(self) -> tuple[np.ndarray, ...]:
        """(t, q, q̇, q̈, λ) of the outputs, trimmed to their own arrays when the
        allocation was much larger than the run needed."""
        if 4 * self.n >= 3 * self.t.shape[0]:
            return tuple(self[key] for key in self.KEYS)
        return tuple(self[key].copy() for key in self.KEYS)


def expected_outputs(t0: float, t_end: float, h: float, output_every: int,
                     outputs) -> int:
    """Rows to allocate for a run's outputs: the output times given, or a fixed-step
    run's outputs (a run that steps smaller, adaptive or at contacts, grows them)."""
    if outputs is not None:
        return outputs.size + 1
    steps = int(np.ceil((t_end - t0) / h)) if h > 0 else 0
    return steps // output_every + 3


def _hermite(t0, t1, y0, y1, d0, d1, t):
    """Cubic Hermite interpolation of y (with derivatives d) at t in [t0, t1]."""
    h = t1 - t0
    s = (t - t0) / h
    h00, h10 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s
    h01, h11 = -2 * s**3 + 3 * s**2, s**3 - s**2
    return h00 * y0 + h10 * h * d0 + h01 * y1 + h11 * h * d1


def _sensor_records(system, t, q, qd, qdd, lam, contacts, statistics, refs) -> dict:
    """The sensors' histories as result records; a sensor that cannot be evaluated is
    recorded as NaN and named in ``statistics["sensor_errors"]`` (the run is kept).
    ``refs``: the forces' angles at the outputs (:func:`output_angles`)."""
    from ..assembly.sensors import sensor_history

    out, shared = {}, {}
    for sensor in getattr(system.model, "sensors", ()):
        try:
            hist = sensor_history(system, sensor, t, q, qd, qdd, lam, contacts,
                                  angle_refs=refs, shared=shared)
            values, units, comps = hist.values, hist.units, list(hist.components)
        except Exception as exc:  # keep the run: say which sensor failed and why
            statistics.setdefault("sensor_errors", {})[sensor.name] = (
                f"{type(exc).__name__}: {exc}")
            values, units, comps = np.full((len(t), 1), np.nan), "-", ["value"]
        out[sensor.name] = {"values": values, "units": units, "components": comps,
                            "kind": sensor.kind, "quantity": sensor.quantity,
                            "target": sensor.target, "frame": sensor.frame,
                            "node": sensor.node}
    return out


def _output_quantities(system, integ, histories, derived, refs):
    """Energies (n_t, 2) [J], violations (n_t, 2) and the non-conservative work (n_t,)
    [J] at the recorded outputs ``histories`` (t, q, q̇, λ), after the run (one kernel
    call on the compiled path).
    ``refs`` ({force: (n_t,) angle}, :func:`output_angles`) give each rotational
    spring's turns at every output, so a spring wound several turns has its potential
    however far apart the outputs; the System's memory is left as the run left it."""
    t, q, qd, lam_hist = histories
    if integ.compiled is not None:  # one kernel call for every output
        names = integ.compiled.torsion_names
        outs = integ.compiled.outputs(t, q, qd, lam_hist, np.column_stack(
            [refs[n] for n in names]) if names else np.zeros((t.size, 0)))
        energies, viol = outs[:, :2], outs[:, 3:]
        derived["power"] = outs[:, 2]
    else:
        after_run, system.angle_memory = system.angle_memory, {}
        try:
            energies = np.empty((t.size, 2))
            for k in range(t.size):
                system.angle_memory.update({name: float(v[k]) for name, v in refs.items()})
                energies[k] = system.energy(q[k], qd[k])
            viol = np.array([system.violations(a, b, tt)
                             for a, b, tt in zip(q, qd, t, strict=True)])
            if not integ.contacts:
                derived["power"] = [system.nonconservative_power(a, b, c, float(tt))
                                    for a, b, c, tt in zip(q, qd, lam_hist, t, strict=True)]
        finally:
            system.angle_memory = after_run
    # contacts' dissipation is integrated step by step (it lasts a few steps), the rest
    # trapezoidally over the outputs
    power = np.asarray(derived["power"], dtype=float)
    work = np.zeros(t.size)
    if integ.contacts:
        power = power - np.array(derived["contact_power"])
        work -= np.array(derived["dissipated"])
    work += np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(t))])
    return energies, viol, work
