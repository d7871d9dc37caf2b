"""Each fuzz property of the suite twice: a few dozen to a few hundred examples in the
default suite (the same ones at every run), and several thousand drawn at random in a
test marked ``long``, which runs only with ``pytest -m long`` (tests/conftest.py).

``FLEXMBS_FUZZ_EXAMPLES`` sets the number of examples of the default tests and draws
them at random as well.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings

#: Examples of each property in the long run.
LONG_EXAMPLES = int(os.environ.get("FLEXMBS_LONG_FUZZ_EXAMPLES", "3000"))
_QUIET = [HealthCheck.too_slow, HealthCheck.filter_too_much,
          HealthCheck.function_scoped_fixture]


def fuzz_pair(check, examples: int, **strategies):
    """(the default test, the long test) of the property ``check`` over ``strategies``
    (its other arguments are pytest fixtures)."""
    chosen = int(os.environ.get("FLEXMBS_FUZZ_EXAMPLES", examples))
    suite = settings(max_examples=chosen, deadline=None, database=None,
                     derandomize="FLEXMBS_FUZZ_EXAMPLES" not in os.environ,
                     suppress_health_check=_QUIET)(given(**strategies)(check))
    long = settings(max_examples=LONG_EXAMPLES, deadline=None, database=None,
                    derandomize=False, suppress_health_check=_QUIET)(
                        given(**strategies)(check))
    return suite, pytest.mark.long(long)
