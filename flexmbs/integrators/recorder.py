"""What a run records beside its states (docs/results_file.md): the model description
the results file carries (markers, joints, bodies with their nodes, shapes and drawing
geometry), Hermite interpolation to output times, the sensors' histories and the output
quantities (energies [J], constraint violations, non-conservative work [J]).
"""

from __future__ import annotations

import numpy as np

from ..assembly.system import System
from ..contact.log import CONTACT_FIELDS  # noqa: F401  (what the results hold per contact)


def describe_model(system: System) -> dict:
    """Markers (body-frame origin; modal rows of flexible-body markers), joints, the
    gravity vector [m/s²] (global frame; renders take their up direction from it) and
    the nonlinear beams' node bodies, root to tip (renders draw a beam through them),
    and their elements (section forces and stresses are recomputed from them)."""
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
    gravity = [float(v) for v in np.asarray(system.model.gravity, dtype=float)]
    elements = [f for f in system.model.forces
                if getattr(f, "element_kind", None) == "nonlinear_beam"]
    out = {"markers": markers, "joints": joints, "gravity": gravity}
    if elements:
        out["beams"] = {f.name: list(f.nodes) for f in elements}
        out["beam_elements"] = {f.name: _beam_elements(f) for f in elements
                                if f.section is not None}
    return out


def _beam_elements(force) -> dict:
    """What post-processing needs for a nonlinear beam's section forces and fibre
    stresses (:mod:`flexmbs.post.beam_forces`): element lengths [m], section stiffnesses,
    area [m²], second moments [m⁴] and fibre points (y, z) [m]."""
    from ..elements.nonlinear_beam import fibre_points

    section = force.section
    return {"lengths": [float(v) for v in force.lengths],
            "stiffness": [float(v) for v in force.stiffness],
            "area": float(section.A), "iy": float(section.Iy), "iz": float(section.Iz),
            "fibres": fibre_points(section).tolist()}


def _section_outline(metadata):
    """:func:`~flexmbs.modal.fe.section_tables.section_outline` of a flexible body's
    metadata; None at once, without importing the FE beam modules, when the metadata
    holds neither an outline nor a built-in beam's section (modal data from elsewhere)."""
    if not isinstance(metadata, dict):
        return None
    source = metadata.get("source")
    if not (isinstance(metadata.get("section_outline_m"), dict)
            or (isinstance(source, dict) and isinstance(source.get("section"), dict))):
        return None
    from ..modal.fe.section_tables import section_outline

    return section_outline(metadata)


def describe_bodies(system: System) -> dict:
    """Per body: kind, coordinate range and what post-processing needs so results stand
    on their own: for flexible bodies nodes, shapes, cells, node labels and a beam's
    section outline; for rigid bodies mass, inertia and the drawing geometry."""
    out = {}
    for body, sl in zip(system.bodies, system.slices, strict=True):
        info = {"kind": type(body).__name__, "start": sl.start, "n_coords": body.n_coords}
        if hasattr(body, "data"):
            info.update(n_modes=body.n_modes, coupling=body.coupling.value,
                        nodes=body.data.nodes, phi=body.data.phi,
                        node_ids=body.data.node_ids, cells=dict(body.data.cells))
            if body.data.modal_fields:  # stress modes and other per-node fields
                info["fields"] = dict(body.data.modal_fields)
            outline = _section_outline(body.data.metadata)
            if outline is not None and "line" in body.data.cells:
                loops = outline["polygon"]
                info.update(section_size=[outline["width_y"], outline["height_z"]],
                            section_axes=[outline["y_axis"], outline["z_axis"]],
                            section_polygon=np.concatenate(loops),
                            section_loops=np.array([len(loop) for loop in loops]))
        elif hasattr(body, "inertia"):  # rigid: what its drawing needs
            info.update(mass=float(body.mass), com=np.asarray(body.com, float),
                        inertia=np.asarray(body.inertia, float))
            if getattr(body, "shape", None) is not None:
                info.update(shape_points=body.shape.points,
                            shape_triangles=body.shape.triangles)
        out[body.name] = info
    return out


class Recording:
    """The recorded outputs (t, q, q̇, q̈, λ): references to the integrator's state arrays,
    which it replaces at every step (never writes into), stacked once after the run.
    ``copy``: copy them instead (real-time mode, whose steps write into two alternating
    sets of arrays). ``on_output``: called with the output's time at each output
    :meth:`add` records.

    Single outputs are kept as rows; a batch's outputs (:meth:`add_block`) as the
    batch's own arrays, so stacking costs one concatenation per batch rather than one
    row per output."""

    KEYS = ("t", "q", "qd", "qdd", "lam")

    def __init__(self, n_q: int, n_c: int, copy: bool = False, on_output=None):
        self.n_q, self.n_c, self.copy, self.on_output = n_q, n_c, copy, on_output
        self._rows: dict[str, list] = {key: [] for key in self.KEYS}  # since the last block
        self._blocks: list[tuple] = []  # stacked outputs, in order: (t, q, q̇, q̈, λ)
        self._count = 0

    def add(self, t, q, qd, qdd, lam) -> None:
        """Record one output."""
        if self.copy:
            q, qd, qdd, lam = q.copy(), qd.copy(), qdd.copy(), lam.copy()
        for key, value in zip(self.KEYS, (t, q, qd, qdd, lam), strict=True):
            self._rows[key].append(value)
        self._count += 1
        if self.on_output is not None:
            self.on_output(t)

    def add_block(self, t, q, qd, qdd, lam) -> None:
        """Record consecutive outputs at once: ``t`` a sequence, the others (n, ·) arrays
        the integrator no longer writes into (a batch's copies); ``on_output`` is not
        called (the caller keeps what it would)."""
        self.add_states(t, np.stack([q, qd, qdd], axis=1), lam)

    def add_states(self, t, states, lam) -> None:
        """:meth:`add_block` of the states (n, ≥ 3, n_q): rows q, q̇, q̈ (then any),
        a batch's own array, kept as it is."""
        self._stack_rows()
        self._blocks.append((np.asarray(t, dtype=float), states, lam))
        self._count += len(t)

    def extend(self, t, q, qd, qdd, lam) -> None:
        """Record the outputs of stacked histories (a restart's)."""
        self.add_block(*(np.asarray(v, dtype=float) for v in (t, q, qd, qdd, lam)))

    def newest(self, key: str):
        """The newest output's ``key`` ("t", "q", "qd", "qdd" or "lam")."""
        rows = self._rows[key]
        if rows:
            return rows[-1]
        t, states, lam = self._blocks[-1]
        return {"t": t, "lam": lam}[key][-1] if key in ("t", "lam") else \
            states[-1, self.KEYS.index(key) - 1]

    def set_newest_time(self, t: float) -> None:
        """Give the newest output the time ``t`` [s] (an output time met by a step)."""
        if self._rows["t"]:
            self._rows["t"][-1] = float(t)
        else:
            self._blocks[-1][0][-1] = float(t)

    def __len__(self) -> int:
        return self._count

    def _stack_rows(self) -> None:
        if not self._rows["t"]:
            return
        n = len(self._rows["t"])
        rows = self._rows
        states = np.empty((n, 3, self.n_q))
        for k, key in enumerate(("q", "qd", "qdd")):
            states[:, k] = np.array(rows[key], dtype=float).reshape(n, self.n_q)
        self._blocks.append((np.array(rows["t"], dtype=float).reshape(n), states,
                             np.array(rows["lam"], dtype=float).reshape(n, self.n_c)))
        self._rows = {key: [] for key in self.KEYS}

    def histories(self) -> tuple[np.ndarray, ...]:
        """(t (n_t,), q, q̇, q̈ (n_t, n_q), λ (n_t, n_c)) of the outputs, new arrays."""
        self._stack_rows()
        if not self._blocks:
            return (np.zeros(0), *(np.zeros((0, self.n_q)) for _ in range(3)),
                    np.zeros((0, self.n_c)))
        t = np.concatenate([block[0] for block in self._blocks])
        lam = np.concatenate([np.asarray(block[2], dtype=float).reshape(len(block[0]),
                                                                        self.n_c)
                              for block in self._blocks])
        # q, q̇, q̈ each written once, block by block (no stacked copy of all the rows)
        out = [np.empty((t.size, self.n_q)) for _ in range(3)]
        row = 0
        for block in self._blocks:
            states, count = block[1], len(block[0])
            for k in range(3):
                out[k][row:row + count] = states[:, k]
            row += count
        return (t, *out, lam)


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
    sensors = getattr(system.model, "sensors", ())
    if not sensors:
        return {}
    from ..assembly.sensors import sensor_history

    out, shared = {}, {}
    for sensor in sensors:
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


def _output_quantities(system, integ, histories, derived, refs, known=None):
    """Energies (n_t, 2) [J], violations (n_t, 2) and the non-conservative work (n_t,)
    [J] at the recorded outputs ``histories`` (t, q, q̇, λ), after the run (one kernel
    call on the compiled path).
    ``refs`` ({force: (n_t,) angle}, :func:`output_angles`) give each rotational
    spring's turns at every output, so a spring wound several turns has its potential
    however far apart the outputs; the System's memory is left as the run left it.
    ``known``: (outputs, mask) of the rows evaluated during the run
    (:mod:`flexmbs.engine.concurrent_outputs`, compiled path); the rest are evaluated
    here."""
    t, q, qd, lam_hist = histories
    if integ.compiled is not None:  # one kernel call for every output not yet known
        names = integ.compiled.torsion_names
        ref_cols = (np.column_stack([refs.get(n, np.full(t.size, np.nan)) for n in names])
                    if names else np.zeros((t.size, 0)))
        if known is None:
            outs = integ.compiled.outputs(t, q, qd, lam_hist, ref_cols)
        else:  # (each output stands alone: the springs' turns are in its refs)
            outs, done = known
            rest = ~done
            if rest.any():
                outs[rest] = integ.compiled.outputs(t[rest], q[rest], qd[rest],
                                                    lam_hist[rest], ref_cols[rest])
        energies, viol = outs[:, :2], outs[:, 3:]
        derived["power"] = outs[:, 2]
    else:
        after_run, system.angle_memory = system.angle_memory, {}
        try:
            energies = np.empty((t.size, 2))
            for k in range(t.size):
                system.angle_memory.update({name: float(v[k]) for name, v in refs.items()})
                energies[k] = system.energy(q[k], qd[k], leave_out=integ.contacts)
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
        if integ.compiled is None:
            power = power - np.array(derived["contact_power"])
        # both engines leave the contacts out of the energies above: their stored energy
        # from the samples, taken under each output's contact state
        energies = energies.copy()
        energies[:, 1] += np.array(derived["contact_energy"])
        work -= np.array(derived["dissipated"])
    work += np.concatenate([[0.0], np.cumsum(0.5 * (power[1:] + power[:-1]) * np.diff(t))])
    return energies, viol, work
