"""The batches' test for a contact step that Python must handle
(:func:`flexmbs.elements.contact.kernels.needs_python`, docs/compiled.md "Batches of
steps") against the integrator's own contact handling, written independently in
:mod:`flexmbs.contact.events` and :meth:`flexmbs.contact.element.Contact.commit`: it
may send a step to Python needlessly, never keep one that Python would have shortened
to an onset, switched or kicked with an impulse."""

from __future__ import annotations

import copy

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from flexmbs.contact import Friction, Hertz, Impulse, Penalty
from flexmbs.contact.element import OPEN, SLIP, STICK, Contact, ContactState
from flexmbs.contact.events import onset_fraction
from flexmbs.contact.geometry import JournalBearing
from flexmbs.contact.sample import (
    C_ANCHORED,
    C_LA,
    C_MODE,
    C_V_ONSET,
    N_SAMPLE,
    N_STATE,
    S_FN,
    S_FT,
    S_GAP,
    S_VN,
    S_VT,
    Sample,
)
from flexmbs.elements.contact.kernels import _onset_possible, _switch_possible
from flexmbs.elements.contact.table import _row

TOL = 1e-6  # contact_tol [m]
V_REG = 1e-3  # [m/s]
MU_S = 0.3

LAWS = {"penalty": Penalty(k=1e6, c=10.0), "hertz": Hertz(K=1e9, n=1.5),
        "impulse": Impulse(e=0.5)}
FRICTIONS = {"none": None, "regularized": Friction(mu_static=MU_S, v_reg=V_REG),
             "stick-slip": Friction(mu_static=MU_S, v_reg=V_REG, model="stick-slip",
                                    stick_stiffness=1e5)}

# numbers near every threshold the decisions compare with, and ordinary ones
near = st.sampled_from([0.0, TOL, -TOL, TOL * (1 + 1e-12), -TOL * (1 + 1e-12), 5e-7,
                        -5e-7, 1e-3, -1e-3])
lengths = st.one_of(near, st.floats(-2e-3, 2e-3, allow_nan=False))
speeds = st.one_of(st.sampled_from([0.0, V_REG, -V_REG, V_REG * (1 - 1e-12), 0.5, -0.5]),
                   st.floats(-2.0, 2.0, allow_nan=False))
forces = st.one_of(st.sampled_from([0.0, 10.0, 3.0, 3.0 * (1 + 1e-12)]),
                   st.floats(0.0, 100.0))


@st.composite
def samples(draw):
    row = [0.0] * N_SAMPLE
    row[S_GAP], row[S_VN] = draw(lengths), draw(speeds)
    row[S_VT] = draw(speeds)
    row[S_VT + 1] = draw(st.sampled_from([0.0, 1e-4]))
    row[S_FN], row[S_FT] = draw(forces), draw(st.floats(-50.0, 50.0))
    return row


@st.composite
def cases(draw):
    law, friction = draw(st.sampled_from(sorted(LAWS))), draw(st.sampled_from(
        sorted(FRICTIONS)))
    contact = Contact("c", JournalBearing("a", 0.0105, "b", 0.01), LAWS[law],
                      FRICTIONS[friction])
    mode = draw(st.sampled_from([OPEN, STICK, SLIP]))
    anchored = friction == "stick-slip" and mode == STICK and draw(st.booleans())
    contact.state = ContactState(
        mode=mode, v_onset=None if mode == OPEN else draw(st.floats(1e-9, 2.0)),
        anchor=(np.zeros(3), np.zeros(3), np.zeros(3)) if anchored else None)
    h = draw(st.sampled_from([1e-5, 1e-4, 1e-3]))
    return contact, draw(samples()), draw(samples()), h


def _state_row(state: ContactState) -> np.ndarray:
    """The kernels' state row, as CompiledSystem.load_contact_states writes it."""
    row = np.zeros(N_STATE)
    row[C_MODE] = state.mode
    row[C_V_ONSET] = np.nan if state.v_onset is None else state.v_onset
    row[C_ANCHORED] = 0.0 if state.anchor is None else 1.0
    if state.anchor is not None:
        row[C_LA:C_LA + 9] = np.concatenate(state.anchor)
    return row


def _python_acts(contact, start, end, h) -> bool:
    """Whether the per-step path would do anything after this step: shorten it to an
    onset, switch the contact's state, or apply an impulse."""
    if onset_fraction([contact], [Sample(start)], [Sample(end)], h, TOL) is not None:
        return True
    saved = copy.deepcopy(contact.state)
    mode, v_onset, anchor = (contact.state.mode, contact.state.v_onset,
                             contact.state.anchor)
    contact.commit(Sample(end))  # as flexmbs.contact.events.commit judges a change
    now = contact.state
    switched = now.mode != mode or now.v_onset != v_onset or now.anchor is not anchor
    contact.state = saved
    kick = contact.law.impulsive and end[S_GAP] <= TOL and end[S_VN] < 0
    return switched or kick


@settings(max_examples=600, deadline=None)
@given(cases())
def test_a_step_python_would_handle_never_stays_in_the_batch(case):
    contact, start, end, h = case
    kind, par = _row(contact)
    state = _state_row(contact.state)
    kernel = (_onset_possible(state, np.array(start), np.array(end), h, TOL)
              or _switch_possible(np.array(kind, np.int64), par, state, np.array(end), TOL))
    if _python_acts(contact, start, end, h):
        assert kernel


def test_quiet_steps_stay_in_the_batch():
    """The test is not all-true: an open contact far from the surface, a closed one
    sliding fast, an impulse contact flying away, and one stuck well inside its cone."""
    def decide(law, friction, mode, gap, v_n, v_t=0.0, f_n=0.0, f_t=0.0):
        contact = Contact("c", JournalBearing("a", 0.0105, "b", 0.01), LAWS[law],
                          FRICTIONS[friction])
        contact.state = ContactState(mode=mode, v_onset=None if mode == OPEN else 0.3,
                                     anchor=(np.zeros(3),) * 3 if mode == STICK and
                                     friction == "stick-slip" else None)
        row = [0.0] * N_SAMPLE
        row[S_GAP], row[S_VN], row[S_VT], row[S_FN], row[S_FT] = gap, v_n, v_t, f_n, f_t
        kind, par = _row(contact)
        state = _state_row(contact.state)
        assert not _python_acts(contact, row, row, 1e-4)
        return (_onset_possible(state, np.array(row), np.array(row), 1e-4, TOL)
                or _switch_possible(np.array(kind, np.int64), par, state, np.array(row), TOL))

    assert not decide("hertz", "none", OPEN, 1e-3, -0.1)
    assert not decide("hertz", "regularized", SLIP, -1e-5, 0.0, v_t=0.5, f_n=10.0)
    assert not decide("impulse", "none", OPEN, 1e-3, 0.5)
    assert not decide("penalty", "stick-slip", STICK, -1e-5, 0.0, v_t=0.0, f_n=10.0,
                      f_t=1.0)


def test_steps_at_the_thresholds_go_to_python():
    """Every pair of gaps from the thresholds' neighbourhood (one part in 10¹² around
    ±contact_tol and 0) on an open contact, and sliding speeds around v_reg on a closed
    one: wherever Python acts, so does the kernel."""
    values = [0.0, TOL, -TOL, TOL * (1 + 1e-12), -TOL * (1 + 1e-12), -TOL * (1 - 1e-12),
              -1e-3, 1e-3]
    acted = 0
    for law in sorted(LAWS):
        for friction in sorted(FRICTIONS):
            for mode in (OPEN, SLIP, STICK):
                contact = Contact("c", JournalBearing("a", 0.0105, "b", 0.01), LAWS[law],
                                  FRICTIONS[friction])
                for g0 in values:
                    for g1 in values:
                        for v_t in (V_REG * (1 - 1e-12), V_REG, V_REG * (1 + 1e-12)):
                            contact.state = ContactState(
                                mode=mode, v_onset=None if mode == OPEN else 0.3)
                            start, end = [0.0] * N_SAMPLE, [0.0] * N_SAMPLE
                            start[S_GAP], end[S_GAP], end[S_VT] = g0, g1, v_t
                            end[S_FN] = 10.0
                            kind, par = _row(contact)
                            state = _state_row(contact.state)
                            if _python_acts(contact, start, end, 1e-4):
                                acted += 1
                                assert (_onset_possible(state, np.array(start),
                                                        np.array(end), 1e-4, TOL)
                                        or _switch_possible(np.array(kind, np.int64), par,
                                                            state, np.array(end), TOL))
    assert acted > 100
