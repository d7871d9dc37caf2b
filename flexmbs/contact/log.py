"""What a run keeps of its contacts at the outputs (docs/contact.md, "Results"): each
contact's sample, mode and dissipated energy per output, turned into the result
records and the energy balance's totals in one vectorized pass after the run."""

from __future__ import annotations

import numpy as np

from .element import OPEN
from .sample import N_SAMPLE, S_DISSIPATION, S_ENERGY, S_FN, S_FT, S_GAP, S_VN

#: What the results hold per contact and output time.
CONTACT_FIELDS = ("gap", "penetration", "normal_force", "tangential_force",
                  "normal_velocity", "state", "dissipated")


class ContactLog:
    """The contacts' samples (:class:`~flexmbs.contact.sample.Sample`), modes and
    dissipated energies [J] at every output."""

    def __init__(self, contacts):
        self.contacts = list(contacts)
        # flat lists (one extend per output) since the last block, and stacked blocks
        # (samples (k, n_contacts, N_SAMPLE), modes, dissipated (k, n_contacts)) in
        # order; one concatenation after the run
        self._rows: list = []
        self._modes: list = []
        self._dissipated: list = []
        self._blocks: list = []
        self._cache = None

    def add(self, samples) -> None:
        """Keep the contacts' ``samples`` at a new output with their states now."""
        for s in samples:
            self._rows.extend(s.row)
        for c in self.contacts:
            self._modes.append(c.state.mode)
            self._dissipated.append(c.state.dissipated)
        self._cache = None

    def add_block(self, rows, dissipated) -> None:
        """Keep several outputs at once, the contacts' states unchanged over them:
        ``rows`` (n, n_contacts, N_SAMPLE) their samples, ``dissipated`` (n, n_contacts)
        their dissipated energies [J] (arrays the caller no longer writes, or lists)."""
        n_c = len(self.contacts)
        rows = np.asarray(rows, dtype=float).reshape(-1, n_c, N_SAMPLE)
        self._stack_rows()
        modes = np.array([c.state.mode for c in self.contacts], dtype=np.int64)
        self._blocks.append((rows, np.broadcast_to(modes, (rows.shape[0], n_c)),
                             np.asarray(dissipated, dtype=float).reshape(-1, n_c)))
        self._cache = None

    def _stack_rows(self) -> None:
        if self._modes:
            n_c = len(self.contacts)
            self._blocks.append((np.array(self._rows, dtype=float).reshape(-1, n_c, N_SAMPLE),
                                 np.array(self._modes, dtype=np.int64).reshape(-1, n_c),
                                 np.array(self._dissipated, dtype=float).reshape(-1, n_c)))
            self._rows, self._modes, self._dissipated = [], [], []

    def _arrays(self):
        if self._cache is None:
            n_c = len(self.contacts)
            self._stack_rows()
            empty = (np.zeros((0, n_c, N_SAMPLE)), np.zeros((0, n_c), np.int64),
                     np.zeros((0, n_c)))
            self._cache = tuple(
                np.concatenate([block[k] for block in self._blocks]) if self._blocks
                else empty[k] for k in range(3))
        return self._cache

    def totals(self) -> dict:
        """Over all contacts per output: ``contact_power`` (minus the dissipated power
        [W]), ``contact_energy`` (stored [J]) and ``dissipated`` (cumulative [J]); empty
        without contacts."""
        if not self.contacts:
            return {}
        rows, _, dissipated = self._arrays()
        return {"contact_power": -rows[:, :, S_DISSIPATION].sum(axis=1),
                "contact_energy": rows[:, :, S_ENERGY].sum(axis=1),
                "dissipated": dissipated.sum(axis=1)}

    def records(self) -> dict:
        """{contact: {field: (n_out,) array, "impacts": int}} (:data:`CONTACT_FIELDS`)."""
        if not self.contacts:
            return {}
        rows, modes, dissipated = self._arrays()
        out = {}
        for k, c in enumerate(self.contacts):
            gap = rows[:, k, S_GAP]
            out[c.name] = {
                "gap": gap, "penetration": np.maximum(0.0, -gap),
                "normal_force": rows[:, k, S_FN],
                "tangential_force": np.linalg.norm(rows[:, k, S_FT:S_FT + 3], axis=1),
                "normal_velocity": rows[:, k, S_VN],
                "state": np.where(gap < 0, modes[:, k], OPEN),
                "dissipated": dissipated[:, k], "impacts": int(c.state.impacts)}
        return out
