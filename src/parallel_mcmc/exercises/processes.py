"""Checks for the exercises of the chapter "Many processes, one JAX program"."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import expect, passed

__all__ = ["my_chains", "combine_chains"]


def my_chains(fn: Callable[[int, int, int], Any]) -> None:
    """Check ``fn(process_id, num_processes, num_chains)``: the chains a process holds."""
    expect(callable(fn), "Pass your function itself, `my_chains`, not the result of calling it.")
    for num_processes, num_chains in ((1, 4), (2, 8), (4, 8), (3, 12), (8, 8)):
        per = num_chains // num_processes
        seen: list[int] = []
        for pid in range(num_processes):
            got = fn(pid, num_processes, num_chains)
            try:
                got_list = [int(i) for i in got]
            except TypeError:
                raise AssertionError(
                    f"my_chains({pid}, {num_processes}, {num_chains}) returned {got!r}; return a list of chain indices."
                ) from None
            want = list(range(pid * per, (pid + 1) * per))
            if got_list != want and sorted(got_list) == list(range(pid, num_chains, num_processes)):
                raise AssertionError(
                    f"my_chains({pid}, {num_processes}, {num_chains}) returned every {num_processes}-th chain "
                    f"({got_list}). A sharding gives each device one contiguous block, in order: process {pid} "
                    f"holds chains {want}."
                )
            expect(
                got_list == want,
                f"my_chains({pid}, {num_processes}, {num_chains}) returned {got_list}; process {pid} holds "
                f"the {pid}-th block of {per} chains, {want}.",
            )
            seen += got_list
        expect(sorted(seen) == list(range(num_chains)), "Some chains are held twice or by no process.")
    for pid, num_processes, num_chains in ((0, 3, 8), (1, 2, 5)):
        try:
            got = fn(pid, num_processes, num_chains)
        except ValueError:
            continue
        raise AssertionError(
            f"my_chains({pid}, {num_processes}, {num_chains}) returned {got!r}, but {num_chains} chains cannot be "
            f"split evenly over {num_processes} processes: raise a ValueError that says so."
        )
    passed("my_chains")


def combine_chains(fn: Callable[[list], Any]) -> None:
    """Check ``fn(parts)``: per-process chain arrays joined into one (chains, draws, parameters) array."""
    expect(callable(fn), "Pass your function itself, `combine`, not the result of calling it.")
    rng = np.random.default_rng(0)
    for sizes in ((2, 2), (3, 1, 2), (4,)):
        parts = [rng.normal(size=(k, 7, 3)) for k in sizes]
        want = np.concatenate(parts, axis=0)
        got = np.asarray(fn([p.copy() for p in parts]))
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
        expect(
            got.shape == want.shape,
            f"combine returned shape {got.shape} for parts of shapes {[p.shape for p in parts]}; "
            f"expected {want.shape} (chains, draws, parameters).",
        )
        expect(
            np.array_equal(got, want),
            "combine has the right shape but the chains are out of order or mixed: keep the processes' "
            "order and every chain's draws as they are.",
        )
    passed("combine_chains")
