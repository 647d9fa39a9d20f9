"""Checks for the book's exercises: one package per part of the book, one module per exercise.

A chapter imports its part as ``check`` and calls one function per exercise,
for example ``check.steps_to_pay(steps_to_pay)``; the part's ``__init__``
declares its checks, each living in the module named after its exercise's
label (``getting_started.ex_devices_pay``) beside its fixed cases and the
wrong answers it must reject. A check prints a one-line confirmation when the
answer is right and raises :class:`AssertionError` with a message that says
what is wrong otherwise; an answer of the wrong type gets
:class:`~parallel_mcmc.exercises.common.WrongType`, both an ``AssertionError``
and a ``TypeError``, whose message says what was expected.

The checks hold no reference answer: they test properties of the answer, or
compare it with expected values for a few fixed inputs, written out as data.
Grading does not rely on them running in the learner's kernel: the book's
grader (a build tool, outside this package) runs the same checks in a
separate process, on the values the learner's code produced, for inputs of
its own as well (the ``cases`` argument of the checks that take one). It
tells :func:`~parallel_mcmc.exercises.common.traced_program` about its records of a learner's function with
:func:`~parallel_mcmc.exercises.common.record_type`.

Helpers the checks share live in :mod:`parallel_mcmc.exercises.common` and are
re-exported here: :func:`~parallel_mcmc.exercises.common.passed`, :func:`~parallel_mcmc.exercises.common.expect`, :func:`~parallel_mcmc.exercises.common.call` (run a
learner's function and name its own exception), :func:`~parallel_mcmc.exercises.common.traced_program` (the
program JAX traces from a learner's function) and :func:`~parallel_mcmc.exercises.common.as_float`.
"""

from parallel_mcmc.exercises.common import (WrongType, as_float, call, expect, expect_type, importable, passed,
                                            program_structure, record_type, traced_program, uses)

__all__ = ["passed", "expect", "expect_type", "WrongType", "call", "importable", "program_structure", "uses",
           "traced_program", "record_type", "as_float"]
