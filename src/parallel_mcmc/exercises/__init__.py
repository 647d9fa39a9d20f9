"""Checks for the book's exercises, one module per part of the book.

A chapter imports its part's module as ``check`` and calls one function per
exercise, for example ``check.ideal_speedup(ideal_speedup)``. A check prints a
one-line confirmation when the answer is right and raises
:class:`AssertionError` with a message that says what is wrong otherwise.
"""

from __future__ import annotations

__all__ = ["passed", "expect"]


def passed(what: str) -> None:
    """Print the one-line confirmation of a passed check."""
    print(f"✔ {what}: correct.")


def expect(condition: bool, message: str) -> None:
    """Raise ``AssertionError(message)`` unless ``condition`` holds.

    Unlike a bare ``assert`` this also runs under ``python -O``.
    """
    if not condition:
        raise AssertionError(message)
