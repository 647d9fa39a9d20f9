"""Argument checks shared by the helper modules, with messages that say what to pass.

One function for each kind of argument: :func:`whole_number` for counts,
:func:`real_number` for sizes, times and scales, and :func:`is_number` to ask
whether a value (a learner's answer, say) is a number at all. A refused
argument raises :class:`ArgumentError`, which is both a ``TypeError`` and a
``ValueError``, so callers may catch either.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["ArgumentError", "is_number", "whole_number", "real_number"]


class ArgumentError(TypeError, ValueError):
    """An argument of the wrong type or out of range; the message says what to pass."""


def is_number(value: Any) -> bool:
    """True for a real number in any of its usual forms, never for ``True``/``False``.

    Python ``int`` and ``float``, NumPy scalars and 0-d arrays (NumPy or JAX)
    of an integer or floating type all count.

    Parameters
    ----------
    value : Any
        The value to ask about.

    Returns
    -------
    bool
        Whether ``value`` is a real number.
    """
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (int, float, np.integer, np.floating)):
        return True
    shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
    if shape == () and dtype is not None:
        return np.issubdtype(np.dtype(dtype), np.integer) or np.issubdtype(np.dtype(dtype), np.floating)
    return False


def whole_number(name: str, value: Any, least: int, of: str = "") -> int:
    """Return ``value`` as an ``int`` if it is a whole number >= ``least``; raise :class:`ArgumentError` otherwise.

    ``True`` and ``False`` are refused, although Python counts them as integers.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : Any
        The argument.
    least : int
        The smallest value allowed.
    of : str, optional
        Names the unit in the message (``" of devices"``).

    Returns
    -------
    int
        ``value`` as an ``int``.

    Raises
    ------
    ArgumentError
        If ``value`` is not a whole number >= ``least``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ArgumentError(f"{name} must be a whole number{of} >= {least}, got {value!r}.")
    return int(value)


def real_number(name: str, value: Any, *, above: float | None = None, least: float | None = None, of: str = "") -> float:
    """Return ``value`` as a ``float`` if it is a finite number > ``above`` (or >= ``least``).

    Raise :class:`ArgumentError` naming the argument and the bound otherwise.

    Parameters
    ----------
    name, value, of
        As for :func:`whole_number` (``of`` naming a unit such as ``" of seconds"``).
    above : float or None, optional
        A bound ``value`` must exceed.
    least : float or None, optional
        A bound ``value`` must reach.

    Returns
    -------
    float
        ``value`` as a ``float``.

    Raises
    ------
    ArgumentError
        If ``value`` is not a finite number within the bound.
    """
    bound = f" > {above:g}" if above is not None else f" >= {least:g}" if least is not None else ""
    ok = is_number(value) and math.isfinite(float(value))
    if ok and above is not None:
        ok = float(value) > above
    if ok and least is not None:
        ok = float(value) >= least
    if not ok:
        kind = "positive number" if above == 0 else "non-negative number" if least == 0 else "number"
        shown = "" if kind != "number" else bound
        raise ArgumentError(f"{name} must be a {kind}{shown}{of}, got {value!r}.")
    return float(value)
