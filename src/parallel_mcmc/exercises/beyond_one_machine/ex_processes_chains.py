"""The exercise ``ex-processes-chains`` of the chapter ``chapters/beyond_one_machine/multi_process_jax.md``: its check, :func:`my_chains`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from parallel_mcmc.exercises.common import call, expect, expect_type, passed

__all__ = ["my_chains", "WRONG_ANSWERS"]


# ((process_id, num_processes, num_chains), the chains that process holds): one full split per size.
CASES = [
    ((0, 1, 4), [0, 1, 2, 3]),
    ((0, 2, 8), [0, 1, 2, 3]), ((1, 2, 8), [4, 5, 6, 7]),
    ((0, 4, 8), [0, 1]), ((1, 4, 8), [2, 3]), ((2, 4, 8), [4, 5]), ((3, 4, 8), [6, 7]),
    ((0, 3, 12), [0, 1, 2, 3]), ((1, 3, 12), [4, 5, 6, 7]), ((2, 3, 12), [8, 9, 10, 11]),
    *[((p, 8, 8), [p]) for p in range(8)],
]


# (process_id, num_processes, num_chains) that cannot be split evenly: the answer must raise ValueError.
UNEVEN = [(0, 3, 8), (1, 2, 5)]


def _chain_list(got: Any, where: str) -> list[int]:
    """``got`` as a list of ints if it is a sequence of whole chain indices; :class:`WrongType` otherwise."""
    if hasattr(got, "__array__") and not isinstance(got, (list, tuple, range)):  # a NumPy or JAX array
        array = np.asarray(got)
        expect_type(array.ndim == 1 and (array.size == 0 or np.issubdtype(array.dtype, np.integer)),
                    f"{where} returned an array of shape {array.shape} and dtype {array.dtype}; return a list of "
                    "chain indices (whole numbers), list(range(start, stop)).")
        return [int(i) for i in array]
    expect_type(isinstance(got, (list, tuple, range)),
                f"{where} returned {got!r:.80} ({type(got).__name__}); return a list of chain indices, "
                "list(range(start, stop)).")
    bad = [i for i in got if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer))]
    expect_type(not bad, f"{where} returned {list(got)!r:.80}, with {bad[0]!r:.40} ({type(bad[0]).__name__}) among "
                         "the chains; a chain index is a whole number (an int)." if bad else "")
    return [int(i) for i in got]


def my_chains(fn: Callable[[int, int, int], Any], cases: Sequence[tuple[tuple[int, int, int], Any]] | None = None,
              uneven: Sequence[tuple[int, int, int]] | None = None) -> None:
    """Check ``fn(process_id, num_processes, num_chains)``: the chains a process holds.

    ``cases`` (default: a fixed table) lists ``((process_id, num_processes, num_chains), chains)``;
    ``uneven`` the arguments for which ``fn`` must raise ``ValueError``.

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.
    uneven : sequence of tuple, optional
        Splits that cannot be even, which the function must refuse; by default the module's ``UNEVEN``.

    Returns
    -------
    None
        Prints ``✔ my_chains: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When ``fn`` gives a process other chains than its own share, or does not refuse an uneven split with a
        ``ValueError``.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than a list of whole chain indices.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `my_chains`, not the result of calling it (got a "
                              f"{type(fn).__name__}).")
    for (pid, num_processes, num_chains), want in cases if cases is not None else CASES:
        want = [int(c) for c in want]
        where = f"my_chains({pid}, {num_processes}, {num_chains})"
        got = call(fn, pid, num_processes, num_chains, what=where)
        got_list = _chain_list(got, where)
        if len(want) != 2 and (isinstance(got, tuple) or len(want) > 2) and got_list == [want[0], want[-1] + 1]:
            raise AssertionError(
                f"{where} returned {got_list}, the bounds of the block (start, stop); return the chain indices "
                f"themselves, {want}: list(range(start, stop)).")
        if got_list != want and sorted(got_list) == list(range(pid, num_chains, num_processes)):
            raise AssertionError(
                f"{where} returned every {num_processes}-th chain ({got_list}). A sharding gives each device "
                f"one contiguous block, in order: process {pid} holds chains {want}."
            )
        if got_list != want and num_processes != pid and num_processes < num_chains:
            swapped = num_chains // pid if pid else None
            if swapped and got_list == list(range(num_processes * swapped, (num_processes + 1) * swapped)):
                raise AssertionError(
                    f"{where} returned {got_list}: it read the process id as the number of processes and the other "
                    "way round. The arguments are (process_id, num_processes, num_chains)."
                )
        expect(
            got_list == want,
            f"{where} returned {got_list}; process {pid} holds the {pid}-th block of "
            f"{num_chains // num_processes} chains, {want}.",
        )
    for pid, num_processes, num_chains in uneven if uneven is not None else UNEVEN:
        where = f"my_chains({pid}, {num_processes}, {num_chains})"
        try:
            got = fn(pid, num_processes, num_chains)
        except ValueError:
            continue
        except NotImplementedError:
            raise
        except AssertionError as err:
            text = str(err).strip()
            raise AssertionError(
                f"{where} raised AssertionError" + (f": {text}" if text else ", with no message")
                + f" (an `assert`, probably). {num_chains} chains cannot be split evenly over {num_processes} "
                "processes: say so with `raise ValueError(...)`, which a caller can catch and which runs under "
                "python -O too, where asserts are skipped."
            ) from None
        except Exception as err:  # noqa: BLE001 - the wrong kind of error, reported with its type
            text = str(err).strip()
            raise AssertionError(
                f"{where} raised {type(err).__name__}" + (f": {text}" if text else " with no message")
                + f". {num_chains} chains cannot be split evenly over {num_processes} processes, but say so "
                "with a ValueError."
            ) from None
        raise AssertionError(
            f"{where} returned {got!r}, but {num_chains} chains cannot be split evenly over "
            f"{num_processes} processes: raise a ValueError that says so."
        )
    passed("my_chains")


def _asserting(right: Callable[..., Any], pid: int, n: int, c: int) -> Any:
    """``right``'s answer, refusing an uneven split with a bare ``assert`` (an ``AssertionError`` with no message)."""
    if c % n:
        raise AssertionError()  # what `assert c % n == 0` raises
    return right(pid, n, c)


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('chains dealt out in turn, not in blocks',
     lambda right: lambda pid, n, c: list(range(pid, c, n)),
     'every'),
    ('an uneven split not refused',
     lambda right: lambda pid, n, c: list(range(pid * (c // n), (pid + 1) * (c // n))),
     'cannot be split evenly'),
    ('one chain too many: the block runs to stop + 1',
     lambda right: lambda pid, n, c: right(pid, n, c) + [right(pid, n, c)[-1] + 1],
     'block of'),
    ('the block of process id + 1 (processes counted from 1)',
     lambda right: lambda pid, n, c: [i + c // n for i in right(pid, n, c)],
     'block of'),
    ('the bounds of the block, not its chains',
     lambda right: lambda pid, n, c: (right(pid, n, c)[0], right(pid, n, c)[-1] + 1),
     'bounds of the block|block of'),
    ('an uneven split refused with an assert',
     lambda right: lambda pid, n, c: _asserting(right, pid, n, c),
     'raised AssertionError, with no message.*ValueError'),
]
