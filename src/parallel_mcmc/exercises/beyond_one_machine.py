"""Checks for the exercises of the chapter "Many processes, one JAX program"."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from . import as_float, call, expect, passed

__all__ = ["my_chains", "best_group", "combine_chains"]


# ((process_id, num_processes, num_chains), the chains that process holds): one full split per size.
_SPLITS = [
    ((0, 1, 4), [0, 1, 2, 3]),
    ((0, 2, 8), [0, 1, 2, 3]), ((1, 2, 8), [4, 5, 6, 7]),
    ((0, 4, 8), [0, 1]), ((1, 4, 8), [2, 3]), ((2, 4, 8), [4, 5]), ((3, 4, 8), [6, 7]),
    ((0, 3, 12), [0, 1, 2, 3]), ((1, 3, 12), [4, 5, 6, 7]), ((2, 3, 12), [8, 9, 10, 11]),
    *[((p, 8, 8), [p]) for p in range(8)],
]
# (process_id, num_processes, num_chains) that cannot be split evenly: the answer must raise ValueError.
_UNEVEN = [(0, 3, 8), (1, 2, 5)]


def my_chains(fn: Callable[[int, int, int], Any], cases: Sequence[tuple[tuple[int, int, int], Any]] | None = None,
              uneven: Sequence[tuple[int, int, int]] | None = None) -> None:
    """Check ``fn(process_id, num_processes, num_chains)``: the chains a process holds.

    ``cases`` (default: a fixed table) lists ``((process_id, num_processes, num_chains), chains)``;
    ``uneven`` the arguments for which ``fn`` must raise ``ValueError``.
    """
    expect(callable(fn), "Pass your function itself, `my_chains`, not the result of calling it.")
    for (pid, num_processes, num_chains), want in cases if cases is not None else _SPLITS:
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
    for pid, num_processes, num_chains in uneven if uneven is not None else _UNEVEN:
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


# (draws per chain, start-up that any group pays, start-up per process, seconds of a draw in one process, cores,
# the most processes to consider): cases whose best group is neither the largest nor 1, and ones where it is.
_GROUP_CASES = [
    (40_000, 2.0, 1.0, 1e-4, 8, 16),
    (1_000, 2.0, 1.0, 1e-4, 8, 16),
    (200_000, 1.0, 0.5, 2e-4, 4, 16),
    (100_000, 3.0, 2.0, 1e-3, 16, 32),
    (5_000, 1.0, 3.0, 1e-3, 2, 8),
]


def _group_time(p: int, draws: int, base: float, per_process: float, per_draw: float, cores: float) -> float:
    return base + per_process * p + draws * per_draw / min(p, cores)


def _best_group(draws: int, base: float, per_process: float, per_draw: float, cores: float, most: int) -> int:
    times = [_group_time(p, draws, base, per_process, per_draw, cores) for p in range(1, most + 1)]
    return int(np.argmin(times)) + 1  # the smallest group among equals


def best_group(fn: Callable[..., Any], cases: Sequence[tuple] | None = None) -> None:
    """Check ``fn(num_draws, start_up_base, start_up_per_process, seconds_per_draw, cores, max_processes)``.

    A job of ``p`` processes takes ``start_up_base + p * start_up_per_process`` to start and then
    ``num_draws * seconds_per_draw / min(p, cores)`` to sample (``seconds_per_draw`` is one process's time for a
    draw of all the chains; the chains are shared out, at most one process a core). The answer is the ``p`` from
    1 to ``max_processes`` with the shortest job, the smallest of equals. ``cases`` (default: a fixed table)
    lists the arguments.
    """
    expect(callable(fn), "Pass your function itself, `best_group`, not the group size it returns.")
    for draws, base, per_process, per_draw, cores, most in cases if cases is not None else _GROUP_CASES:
        want = _best_group(draws, base, per_process, per_draw, cores, most)
        where = f"best_group({draws}, {base:g}, {per_process:g}, {per_draw:g}, {cores:g}, {most})"
        got = as_float(call(fn, draws, base, per_process, per_draw, cores, most, what=where), where)
        if got == want:
            continue
        times = {p: _group_time(p, draws, base, per_process, per_draw, cores) for p in range(1, most + 1)}
        if got not in times:
            raise AssertionError(f"{where} returned {got:g}; a group has a whole number of processes, 1 to {most}.")
        if got == _best_group(draws, base, 0.0, per_draw, cores, most):
            raise AssertionError(f"{where} returned {got:g}, as if more processes started no slower. Each one adds "
                                 f"{per_process:g} s of start-up: {got:g} processes take {times[got]:.2f} s, "
                                 f"{want} take {times[want]:.2f} s.")
        if got > cores and got == _best_group(draws, base, per_process, per_draw, 1e12, most):
            raise AssertionError(f"{where} returned {got:g}, more processes than the {cores:g} cores: beyond one "
                                 "process a core, sampling gets no faster, and start-up still grows.")
        raise AssertionError(f"{where} returned {got:g} ({times[got]:.2f} s); {want} processes take "
                             f"{times[want]:.2f} s.")
    passed("best_group")


# Joining each process's chains into one array (the grader's toy chapter in the tests uses this check too).
_PART_SIZES = [(2, 2), (3, 1, 2), (4,)]


def combine_chains(fn: Callable[[list], Any], cases: Sequence[Sequence[int]] | None = None, seed: int = 0) -> None:
    """Check ``fn(parts)``: per-process chain arrays joined into one (chains, draws, parameters) array.

    ``cases`` (default: a fixed list) gives the number of chains of each process's part.
    """
    expect(callable(fn), "Pass your function itself, `combine`, not the result of calling it.")
    rng = np.random.default_rng(seed)
    for sizes in cases if cases is not None else _PART_SIZES:
        parts = [rng.normal(size=(int(k), 7, 3)) for k in sizes]
        where = f"combine(parts) for parts of shapes {[p.shape for p in parts]}"
        got = np.asarray(call(fn, [p.copy() for p in parts], what=where))
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
