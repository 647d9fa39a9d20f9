"""The check ``combine_chains``, asked by no chapter (the grader's own tests grade it): its check, :func:`combine_chains`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import WrongType, call, expect, expect_type, passed

__all__ = ["combine_chains", "WRONG_ANSWERS"]


# Joining each process's chains into one array (the grader's toy chapter in the tests uses this check too).
CASES = [(2, 2), (3, 1, 2), (4,)]


def _one_array(got: Any, num_parts: int, where: str) -> np.ndarray:
    """``got`` as a NumPy array if it is one array of numbers (NumPy or JAX); :class:`WrongType` otherwise."""
    if isinstance(got, (list, tuple)):
        raise WrongType(
            f"{where} returned a {type(got).__name__} of {len(got)} item(s), not one array"
            + (": the parts as they came, not joined" if len(got) == num_parts else "")
            + ". Join them into one (chains, draws, parameters) array: np.concatenate(parts, axis=0).")
    expect_type(hasattr(got, "__array__") and hasattr(got, "shape"),
                f"{where} returned {type(got).__name__}; return one array of shape (chains, draws, parameters).")
    array = np.asarray(got)
    expect_type(np.issubdtype(array.dtype, np.number),
                f"{where} returned an array of dtype {array.dtype}; the chains' draws are numbers.")
    return array


def combine_chains(fn: Callable[[list], Any], cases: Sequence[Sequence[int]] | None = None, seed: int = 0) -> None:
    """Check ``fn(parts)``: per-process chain arrays joined into one (chains, draws, parameters) array.

    ``cases`` (default: a fixed list) gives the number of chains of each process's part.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.
    seed : int, optional
        The seed the parts of the cases are drawn from.

    Returns
    -------
    None
        Prints ``✔ combine_chains: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the joined array has another shape or order than the chains.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one array of numbers (a list of the
        parts, ``None``).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `combine`, not the result of calling it (got a "
                              f"{type(fn).__name__}).")
    rng = np.random.default_rng(seed)
    for sizes in cases if cases is not None else CASES:
        parts = [rng.normal(size=(int(k), 7, 3)) for k in sizes]
        where = f"combine(parts) for parts of shapes {[p.shape for p in parts]}"
        got = _one_array(call(fn, [p.copy() for p in parts], what=where), len(parts), where)
        if got.ndim == 4:
            raise AssertionError(
                f"combine returned shape {got.shape}: it added an axis for the process. Chains from "
                "different processes are just more chains: join them along the chain axis."
            )
        if got.shape == (parts[0].shape[0], 7 * len(parts), 3) and len(set(sizes)) == 1 and len(parts) > 1:
            raise AssertionError(
                f"combine returned shape {got.shape}: it joined the parts along the draws axis, which glues "
                "different chains end to end into one. R-hat then compares pieces of unrelated chains; join "
                "along the chain axis (axis 0)."
            )
        total = sum(int(k) for k in sizes)
        expect(
            got.shape == (total, 7, 3),
            f"{where} returned shape {got.shape}; expected {(total, 7, 3)} (chains, draws, parameters).",
        )
        # float32 (jnp) results are right to float32 precision
        tol = 1e-6 if got.dtype == np.float32 else 0.0
        start = 0
        for k, part in zip(sizes, parts):
            block = got[start:start + int(k)]
            expect(
                np.allclose(block, part, rtol=tol, atol=tol),
                "combine has the right shape but the chains are out of order or mixed: keep the processes' "
                "order and every chain's draws as they are.",
            )
            start += int(k)
    passed("combine_chains")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
