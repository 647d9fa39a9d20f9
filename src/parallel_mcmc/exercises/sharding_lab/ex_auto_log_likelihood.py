"""The exercise ``ex-auto-log-likelihood`` of the chapter ``chapters/sharding_lab/automatic_parallelism.md``: its check, :func:`data_parallel_log_likelihood`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable

from parallel_mcmc.exercises.common import passed
from ._shared import check_lab_inputs, check_program, check_replicated_outputs, require_array, value_and_grad

__all__ = ["data_parallel_log_likelihood", "WRONG_ANSWERS"]


def data_parallel_log_likelihood(value: Any, grad: Any, beta: Any, X: Any, y: Any, program: str) -> None:
    """The log-likelihood and its gradient from ``X`` and ``y`` split by rows, ``beta`` replicated; ``program`` the
    compiled program of the jitted function on those arguments.

    Both results should be replicated on the data's devices, equal the log-likelihood and gradient at ``beta``,
    and the program should add the devices' sums with an all-reduce.

    Parameters
    ----------
    value, grad
        The learner's answers, as the chapter's exercise asks for them.
    beta, X, y, program
        As for :func:`explicit_log_likelihood`.

    Returns
    -------
    None
        Prints ``✔ data-parallel log-likelihood: rows split, beta replicated, the sums all-reduced onto every device: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a result is wrong or not replicated, or the program moves the data; the message says which.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When a result is not a ``jax.Array`` (a Python float, ``None``) or ``program`` is not the program's text
        (the function, the compiled object).
    """
    mesh, _, devices = check_lab_inputs(beta, X, y)
    for name, got in (("value", value), ("grad", grad)):
        require_array(got, name)
    value_and_grad((value, grad), beta, X, y, mesh.size, "(value, grad)")
    check_replicated_outputs((("log-likelihood `value`", value), ("gradient `grad`", grad)), devices,
                              "a jitted call on the sharded arguments gives that")
    check_program(program, "value_and_grad", "the data (or the residuals of every row) went to every device, where "
                   "only the partial sums need to travel. Keep `X` and `y` split by rows.")
    passed("data-parallel log-likelihood: rows split, beta replicated, the sums all-reduced onto every device")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
