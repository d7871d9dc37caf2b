"""The contacts' part of the steps (docs/contact.md, "Impacts and step size"): the step
limit while a contact is closed, the samples at a step's ends (the compiled kernels'
or the NumPy path's), the location of impact onsets, the state switches with their
dissipation, and the restitution impulses."""

from __future__ import annotations

import numpy as np

from ..contact.element import OPEN
from ..contact.events import apply_impulses, commit, contacts_of, onset_fraction, samples
from ..errors import ModelError, ValidationError


class ContactSteps:
    """The contacts of ``system`` over one run (their states are reset here).

    ``tol`` [m]: the depth within which an onset is located (``contact_tol``);
    ``h_contact`` [s]: the largest step while a contact is closed (None: no limit).
    ``compiled``: the run's CompiledSystem once the engine is chosen (None: NumPy)."""

    def __init__(self, system, tol: float, h_contact: float | None):
        if not (np.isfinite(tol) and tol > 0):
            raise ValidationError(f"contact_tol must be a positive length, got {tol!r}")
        if h_contact is not None and not (np.isfinite(h_contact) and h_contact > 0):
            raise ValidationError(f"h_contact must be a positive step, got {h_contact!r}")
        self.system, self.tol, self.h_contact = system, float(tol), h_contact
        self.contacts = contacts_of(system)
        for contact in self.contacts:
            contact.reset()
            for name in contact.markers:
                body = system.marker_info(name)[0]
                if getattr(body, "coupling", None) is not None and \
                        body.coupling.value == "one-way":
                    raise ModelError(
                        f"contact {contact.name!r} touches flexible body {body.name!r} in "
                        f"one-way coupling, where the joints and contacts see the "
                        f"undeformed body but forces excite the modes: the contact could "
                        f"not see the deflection it loads; use two-way, no-Mrf or rigid")
        self.compiled = None
        self.onsets_located = 0  # steps shortened to locate a contact onset
        self.start = None  # the samples at the accepted state, where known

    def step_size(self, h: float) -> float:
        """``h``, at most ``h_contact`` while a contact is closed."""
        if self.h_contact is not None and any(c.state.mode != OPEN for c in self.contacts):
            return min(h, self.h_contact)
        return h

    def samples(self, q, qd, at_state: bool = False) -> list:
        """The contacts' samples at (q, q̇) under their current states
        (:class:`~flexmbs.contact.sample.Sample`); ``at_state``: (q, q̇) is the accepted
        state, whose samples may be at hand."""
        if at_state and self.start is not None:
            return self.start
        if self.compiled is not None:  # (the workspace holds the current states)
            return self.compiled.contact_samples(q, qd, self.contacts, load=False)
        return samples(self.system, self.contacts, q, qd)

    def end_samples(self, q1, qd1) -> list:
        """The contacts' samples at the end (q1, q̇1) of the step just taken."""
        if self.compiled is not None:  # taken by the step kernel
            return self.compiled.step_samples()
        return samples(self.system, self.contacts, q1, qd1)

    def onset(self, q, qd, end, h: float) -> float | None:
        """The fraction of the step from the accepted (q, q̇) to retry it with, where an
        open contact closed inside it (``end``: the samples at its end); None: keep it."""
        if self.start is None:
            self.start = self.samples(q, qd)
        return onset_fraction(self.contacts, self.start, end, h, self.tol)

    def after_step(self, q, qd, t: float, h: float, end):
        """After the step of size ``h`` to (q, q̇, t) was accepted: dissipation and state
        switches from the samples at its start and ``end``, then restitution impulses;
        the new q̇ if an impulse changed it, else None."""
        changed = commit(self.contacts, self.start, end, h)
        new_qd, lost = apply_impulses(self.system, self.contacts, q, qd, t, self.tol,
                                      found=end)
        # the samples at the new state: those at the step's end while nothing changed
        self.start = None if (changed or lost) else end
        if changed and self.compiled is not None:
            self.compiled.load_contact_states(self.contacts)
        return new_qd if lost else None
