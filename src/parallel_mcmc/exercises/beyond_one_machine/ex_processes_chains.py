"""The exercise ``ex-processes-chains`` of the chapter ``chapters/beyond_one_machine/multi_process_jax.md``: its check, :func:`my_chains`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from parallel_mcmc.exercises.common import call, expect, passed

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
        When ``fn`` gives a process other chains than its own share.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect(callable(fn), "Pass your function itself, `my_chains`, not the result of calling it.")
    for (pid, num_processes, num_chains), want in cases if cases is not None else CASES:
        want = [int(c) for c in want]
        where = f"my_chains({pid}, {num_processes}, {num_chains})"
        got = call(fn, pid, num_processes, num_chains, what=where)
        try:
            got_list = [int(i) for i in got]
        except TypeError:
            raise AssertionError(f"{where} returned {got!r}; return a list of chain indices.") from None
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
        except Exception as err:  # noqa: BLE001 - the wrong kind of error, reported with its type
            raise AssertionError(
                f"{where} raised {type(err).__name__}: {err}. {num_chains} chains cannot be split evenly over "
                f"{num_processes} processes, but say so with a ValueError."
            ) from None
        raise AssertionError(
            f"{where} returned {got!r}, but {num_chains} chains cannot be split evenly over "
            f"{num_processes} processes: raise a ValueError that says so."
        )
    passed("my_chains")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('chains dealt out in turn, not in blocks',
     lambda right: lambda pid, n, c: list(range(pid, c, n)),
     'every'),
    ('an uneven split not refused',
     lambda right: lambda pid, n, c: list(range(pid * (c // n), (pid + 1) * (c // n))),
     'cannot be split evenly'),
]
