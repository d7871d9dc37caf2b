"""The packed buffers and the kernels' views of them (flexmbs.compiled.packing,
docs/compiled.md "Where the arrays come from"): a view taken inside compiled code is
the field ``pack`` stored, element for element, for every rank and for empty fields."""

from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from flexmbs.compiled.packing import (
    floats1,
    floats2,
    floats3,
    floats4,
    floats5,
    ints1,
    ints2,
    ints3,
    pack,
)


class Fields(NamedTuple):
    a1: np.ndarray
    a2: np.ndarray
    a3: np.ndarray
    a4: np.ndarray
    a5: np.ndarray
    n1: np.ndarray
    n2: np.ndarray
    n3: np.ndarray
    count: int


@njit
def _sums(F, IN, H):
    """Σ value × (1 + flat index) of every field's view, and its shape and last entry,
    read inside compiled code."""
    out = np.zeros(8)
    for k, view in enumerate((floats1(F, H, 0).ravel(), floats2(F, H, 1).ravel(),
                              floats3(F, H, 2).ravel(), floats4(F, H, 3).ravel(),
                              floats5(F, H, 4).ravel())):
        for i in range(view.size):
            out[k] += view[i] * (1 + i)
    for k, view in enumerate((ints1(IN, H, 5).ravel(), ints2(IN, H, 6).ravel(),
                              ints3(IN, H, 7).ravel())):
        for i in range(view.size):
            out[5 + k] += view[i] * (1 + i)
    return out


@njit
def _writes(WF, H):
    """Write through a 3-D view and a row of it (the kernels' workspace pattern)."""
    v = floats3(WF, H, 2)
    if v.shape[0] > 0 and v.shape[1] > 0 and v.shape[2] > 0:
        row = v[v.shape[0] - 1]
        row[v.shape[1] - 1, v.shape[2] - 1] = -7.5
    return v.shape


def _weighted(a):
    flat = np.asarray(a, float).ravel()
    return float(np.sum(flat * (1 + np.arange(flat.size))))


dims = st.integers(0, 3)


@settings(max_examples=30, deadline=None)
@given(shapes=st.lists(st.lists(dims, min_size=5, max_size=5), min_size=8, max_size=8),
       seed=st.integers(0, 10_000))
def test_views_in_compiled_code_are_the_packed_fields(shapes, seed):
    rng = np.random.default_rng(seed)
    floats = [rng.normal(size=tuple(shapes[r - 1][:r])) for r in (1, 2, 3, 4, 5)]
    ints = [rng.integers(-9, 9, size=tuple(shapes[4 + r][:r])) for r in (1, 2, 3)]
    fields = Fields(*floats, *ints, 4)
    F, IN, H, views = pack(fields)
    got = _sums(F, IN, H)
    expected = [_weighted(v) for v in (*floats, *ints)]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    shape = _writes(F, H)
    assert tuple(shape) == floats[2].shape
    if all(floats[2].shape):  # the write landed in the buffer, where pack's view sees it
        assert views.a3[-1, -1, -1] == -7.5
    # the views made on first read (pack(lazy=True)): the same fields, by name, by place
    # and in order, and views into the same kind of buffers
    F2, IN2, H2, lazy = pack(fields, lazy=True)
    np.testing.assert_array_equal(H2, H)
    assert len(lazy) == len(fields)
    for k, name in enumerate(fields._fields):
        got, want = getattr(lazy, name), getattr(views, name)
        assert type(got) is type(want) and np.shape(got) == np.shape(want), name
        np.testing.assert_array_equal(got, getattr(fields, name), err_msg=name)
        assert lazy[k] is got  # made once
        if isinstance(got, np.ndarray) and got.size:
            assert np.shares_memory(got, F2 if got.dtype.kind == "f" else IN2), name
    for got, field in zip(lazy, fields, strict=True):
        np.testing.assert_array_equal(got, field)
    with pytest.raises(AttributeError, match="no packed field is named 'nope'"):
        lazy.nope  # noqa: B018


class _Large(NamedTuple):
    zeros: np.ndarray
    ones: np.ndarray
    sparse: np.ndarray
    small: np.ndarray


def test_large_fields_are_packed_element_for_element_zero_or_not():
    """Large all-zero fields are not copied (their buffer is zero already): every field
    still reads back exactly, including a large one that is zero but for one entry."""
    sparse = np.zeros((300, 300))
    sparse[299, 1] = -2.5
    parts = _Large(np.zeros((400, 300)), np.ones(70_000), sparse, np.arange(5.0))
    F, _, _, views = pack(parts)
    for field, view in zip(parts, views, strict=True):
        np.testing.assert_array_equal(view, field)
    assert F.size == sum(v.size for v in parts)
    assert not F[:120_000].any() and F[120_000:190_000].all()
