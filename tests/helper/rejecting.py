"""What the tests of the checks on sharded values share (imported by name: pytest puts tests/helper on the path).

``require_eight_devices()`` stops a module early with the fix when JAX shows another device count, and
``rejects`` asserts that a check refuses an answer with a message matching ``match``.
"""

from __future__ import annotations

import jax
import pytest


def require_eight_devices() -> None:
    """tests/conftest.py gives every in-process test 8 CPU devices; fail with the fix where JAX shows another count."""
    assert jax.device_count() == 8, "run these tests with pytest from the repository, which sets up 8 CPU devices"


def rejects(fn, *args, match: str, **kwargs) -> None:
    """``fn(*args, **kwargs)`` raises ``AssertionError`` whose message matches ``match``."""
    with pytest.raises(AssertionError, match=match):
        fn(*args, **kwargs)
