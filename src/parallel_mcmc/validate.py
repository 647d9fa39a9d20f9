"""Argument checks shared by the helper modules, with messages that say what to pass."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["whole_number"]


def whole_number(name: str, value: Any, least: int) -> int:
    """Return ``value`` as an ``int`` if it is a whole number >= ``least``; raise ``ValueError`` otherwise.

    ``True`` and ``False`` are refused, although Python counts them as integers.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}.")
    return int(value)
