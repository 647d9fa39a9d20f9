"""Checks for the exercises of the part "Beyond one machine": many processes as one JAX program, and SLURM jobs."""

from __future__ import annotations

import math
import shlex
from typing import Any, Callable, Sequence

import numpy as np

from . import as_float, call, expect, passed

__all__ = ["my_chains", "best_group", "combine_chains", "job_header", "sbatch_header_options", "slurm_seconds"]


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


# ((draws per chain, start-up that any group pays, start-up per process, seconds of a draw in one process, cores,
# the most processes to consider), the best group): cases whose best group is neither the largest nor 1, and ones
# where it is.
_GROUP_CASES = [
    ((40_000, 2.0, 1.0, 1e-4, 8, 16), 2),
    ((1_000, 2.0, 1.0, 1e-4, 8, 16), 1),
    ((200_000, 1.0, 0.5, 2e-4, 4, 16), 4),
    ((100_000, 3.0, 2.0, 1e-3, 16, 32), 7),
    ((5_000, 1.0, 3.0, 1e-3, 2, 8), 1),
]


def _group_time(p: int, draws: int, base: float, per_process: float, per_draw: float, cores: float) -> float:
    """The job's time with ``p`` processes, as the exercise states it (for the messages)."""
    return base + per_process * p + draws * per_draw / min(p, cores)


def best_group(fn: Callable[..., Any], cases: Sequence[tuple[tuple, int]] | None = None) -> None:
    """Check ``fn(num_draws, start_up_base, start_up_per_process, seconds_per_draw, cores, max_processes)``.

    A job of ``p`` processes takes ``start_up_base + p * start_up_per_process`` to start and then
    ``num_draws * seconds_per_draw / min(p, cores)`` to sample (``seconds_per_draw`` is one process's time for a
    draw of all the chains; the chains are shared out, at most one process a core). The answer is the ``p`` from
    1 to ``max_processes`` with the shortest job, the smallest of equals. ``cases`` (default: a fixed table)
    lists ``((num_draws, start_up_base, start_up_per_process, seconds_per_draw, cores, max_processes), p)``.
    """
    expect(callable(fn), "Pass your function itself, `best_group`, not the group size it returns.")
    for (draws, base, per_process, per_draw, cores, most), want in cases if cases is not None else _GROUP_CASES:
        want = int(want)
        where = f"best_group({draws}, {base:g}, {per_process:g}, {per_draw:g}, {cores:g}, {most})"
        got = as_float(call(fn, draws, base, per_process, per_draw, cores, most, what=where), where)
        if got == want:
            continue
        times = {p: _group_time(p, draws, base, per_process, per_draw, cores) for p in range(1, most + 1)}
        if got not in times:
            raise AssertionError(f"{where} returned {got:g}; a group has a whole number of processes, 1 to {most}.")
        got = int(got)
        # the answer's job beats the right one's in a world the exercise does not describe: the mistake's name
        without_per_process = {p: _group_time(p, draws, base, 0.0, per_draw, cores) for p in (got, want)}
        without_cores = {p: _group_time(p, draws, base, per_process, per_draw, math.inf) for p in (got, want)}
        if got > want and without_per_process[got] < without_per_process[want]:
            raise AssertionError(f"{where} returned {got:g}, as if more processes started no slower. Each one adds "
                                 f"{per_process:g} s of start-up: {got:g} processes take {times[got]:.2f} s, "
                                 f"{want} take {times[want]:.2f} s.")
        if got > cores and without_cores[got] <= without_cores[want]:
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


# ----------------------------------------------------------------------------- the #SBATCH header of a GPU job

_SHORT = {"-N": "--nodes", "-n": "--ntasks", "-c": "--cpus-per-task", "-t": "--time", "-G": "--gpus",
          "-p": "--partition", "-J": "--job-name", "-o": "--output", "-A": "--account"}


def sbatch_header_options(text: str) -> dict[str, str]:
    """The options of the ``#SBATCH`` lines of ``text`` as ``sbatch`` reads them: up to the first command.

    ``--name=value``, ``--name value`` and the usual short forms (``-N 2``, ``-c 8``, ``-t 90``) all count;
    short forms are returned under their long names.
    """
    options: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#SBATCH"):
            words = shlex.split(stripped[len("#SBATCH"):])
            i = 0
            while i < len(words):
                word = words[i]
                name, eq, value = word.partition("=")
                if not eq and i + 1 < len(words) and not words[i + 1].startswith("-"):
                    value, i = words[i + 1], i + 1
                options[_SHORT.get(name, name)] = value
                i += 1
        elif stripped and not stripped.startswith("#"):
            break  # sbatch stops reading options at the first command
    return options


def slurm_seconds(value: str) -> int:
    """Seconds of a SLURM time limit: ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
    ``days-hours``, ``days-hours:minutes`` or ``days-hours:minutes:seconds``."""
    text = str(value).strip()
    days, dash, rest = text.partition("-")
    if not dash:
        days, rest = "0", text
    parts = rest.split(":")
    if not all(p.isdigit() for p in [days, *parts]) or len(parts) > 3:
        raise ValueError(f"{value!r} is not a SLURM time limit: write minutes, HH:MM:SS or D-HH:MM:SS.")
    numbers = [int(p) for p in parts]
    if dash:  # days-hours[:minutes[:seconds]]
        hours, minutes, seconds = (numbers + [0, 0])[:3]
    elif len(numbers) == 3:
        hours, minutes, seconds = numbers
    else:  # minutes[:seconds]
        hours, (minutes, seconds) = 0, (numbers + [0])[:2]
    return ((int(days) * 24 + hours) * 60 + minutes) * 60 + seconds


# (nodes, GPUs a node, cores a node, draws per chain, seconds a draw, start-up seconds, margin) and what the header
# must ask for: --nodes, --ntasks-per-node, GPUs a node, --cpus-per-task and the time limit in minutes.
_JOB_CASES = [
    ((2, 4, 64, 2_000_000, 2e-3, 90.0, 0.2),
     {"nodes": 2, "ntasks_per_node": 4, "gpus_per_node": 4, "cpus_per_task": 16, "minutes": 82}),
    ((1, 8, 96, 500_000, 1.5e-3, 120.0, 0.25),
     {"nodes": 1, "ntasks_per_node": 8, "gpus_per_node": 8, "cpus_per_task": 12, "minutes": 19}),
    ((4, 2, 30, 10_000_000, 1e-2, 300.0, 0.1),
     {"nodes": 4, "ntasks_per_node": 2, "gpus_per_node": 2, "cpus_per_task": 15, "minutes": 1839}),
    ((3, 4, 18, 100_000, 4e-4, 45.0, 0.5),
     {"nodes": 3, "ntasks_per_node": 4, "gpus_per_node": 4, "cpus_per_task": 4, "minutes": 3}),
]


def _whole(options: dict[str, str], name: str, where: str) -> int | None:
    if name not in options:
        return None
    value = options[name]
    expect(value.isdigit(), f"{where} asks for {name}={value}; SLURM takes a whole number there.")
    return int(value)


def _gpus_per_node(options: dict[str, str], where: str) -> int | None:
    if "--gpus-per-node" in options:
        return _whole(options, "--gpus-per-node", where)
    gres = options.get("--gres", "")
    for item in gres.split(","):
        fields = item.split(":")
        if fields[0] == "gpu" and len(fields) >= 2 and fields[-1].isdigit():
            return int(fields[-1])
    return None


def job_header(fn: Callable[..., Any], cases: Sequence[tuple[tuple, dict]] | None = None) -> None:
    """Check ``fn(nodes, gpus_per_node, cores_per_node, num_draws, seconds_per_draw, start_up, margin)``: the
    ``#SBATCH`` lines of a chains job with one process per GPU, as JAX's SLURM detection expects.

    The header must ask for ``nodes`` nodes, one task per GPU on each (``--ntasks-per-node``), every GPU of
    the node for the node's tasks (``--gpus-per-node`` or ``--gres=gpu:N``; not ``--gpus-per-task``), an equal
    whole share of the node's cores for each task (``--cpus-per-task``), and a time limit of
    ``(start_up + num_draws * seconds_per_draw) * (1 + margin)`` rounded up to whole minutes, in any of
    SLURM's formats. ``cases`` (default: a fixed table) lists ``(arguments, expected)`` with ``expected``
    holding ``nodes``, ``ntasks_per_node``, ``gpus_per_node``, ``cpus_per_task`` and ``minutes``.
    """
    expect(callable(fn), "Pass your function itself, `job_header`, not the header it returns.")
    for args, want in cases if cases is not None else _JOB_CASES:
        nodes, gpus, cores, draws, per_draw, start_up, margin = args
        where = f"job_header({', '.join(f'{a:g}' if isinstance(a, float) else str(a) for a in args)})"
        text = call(fn, *args, what=where)
        expect(isinstance(text, str), f"{where} returned {type(text).__name__}; return the #SBATCH lines as one "
                                      "string, one option or more on each line.")
        options = sbatch_header_options(text)
        later = [line for line in text.splitlines()[1:] if line.strip().startswith("#SBATCH")]
        expect(bool(options) or not later,
               f"{where}: sbatch reads #SBATCH lines only before the script's first command; yours come after one.")
        expect(bool(options), f"{where} returned no #SBATCH line; each line of the header starts with #SBATCH.")
        if "--gpus-per-task" in options:
            raise AssertionError(
                f"{where} asks for --gpus-per-task. JAX's SLURM detection gives each process the GPU numbered by its "
                "SLURM_LOCALID among those it sees, so every task must see all the GPUs of its node; "
                "--gpus-per-task shows each task its own GPU only. Ask for the node's GPUs: --gpus-per-node.")
        if "--gpus" in options:
            raise AssertionError(f"{where} asks for --gpus={options['--gpus']}, the job's GPUs in all, which SLURM "
                                 "may spread unevenly over the nodes; ask for the GPUs of each node: --gpus-per-node.")
        got_nodes = _whole(options, "--nodes", where)
        expect(got_nodes == want["nodes"], f"{where} asks for --nodes={options.get('--nodes', '(none)')}; the job "
                                           f"runs on {want['nodes']} node(s).")
        per_node = _whole(options, "--ntasks-per-node", where)
        if per_node is None and "--ntasks" in options:
            raise AssertionError(f"{where} gives --ntasks but not --ntasks-per-node: SLURM may then put more tasks on "
                                 "one node than it has GPUs. Say how many tasks each node runs.")
        expect(per_node is not None, f"{where} does not say --ntasks-per-node; JAX runs one process per GPU, "
                                     f"{want['ntasks_per_node']} on each node.")
        if per_node == 1 and want["ntasks_per_node"] > 1:
            raise AssertionError(f"{where} runs one task per node: JAX's SLURM detection gives each process one GPU, "
                                 f"so {want['ntasks_per_node'] - 1} GPU(s) of every node would stay idle. Run one "
                                 "task per GPU.")
        expect(per_node == want["ntasks_per_node"],
               f"{where} asks for --ntasks-per-node={per_node}; one process per GPU is {want['ntasks_per_node']}.")
        total = _whole(options, "--ntasks", where)
        expect(total is None or total == nodes * per_node,
               f"{where} asks for --ntasks={total}, which does not match {nodes} node(s) of {per_node} task(s).")
        got_gpus = _gpus_per_node(options, where)
        expect(got_gpus is not None, f"{where} asks for no GPU: add --gpus-per-node={want['gpus_per_node']}.")
        expect(got_gpus == want["gpus_per_node"], f"{where} asks for {got_gpus} GPU(s) a node; every task must see "
                                                  f"all {want['gpus_per_node']} of its node.")
        cpus = _whole(options, "--cpus-per-task", where)
        if cpus is None or (cpus == 1 and want["cpus_per_task"] > 1):
            raise AssertionError(f"{where} leaves each task one core (SLURM's default); give each of the node's "
                                 f"{per_node} tasks its share of the {cores} cores with --cpus-per-task.")
        if cpus * per_node > cores:
            raise AssertionError(f"{where} asks for {cpus} cores for each of {per_node} tasks on nodes of {cores} "
                                 "cores: the job would never start. Share the node's cores out.")
        expect(cpus == want["cpus_per_task"], f"{where} asks for --cpus-per-task={cpus}; an equal whole share of "
                                              f"{cores} cores among {per_node} tasks is {want['cpus_per_task']}.")
        expect("--time" in options, f"{where} sets no --time: the cluster's default limit may stop the job early, "
                                    "or hold it in the queue longer.")
        try:
            seconds = slurm_seconds(options["--time"])
        except ValueError as err:
            raise AssertionError(f"{where}: {err}") from None
        want_seconds = 60 * want["minutes"]
        if seconds == want_seconds:
            continue
        run = start_up + draws * per_draw
        slips = {
            "rounded down instead of up: the job would be stopped before it ends":
                60 * math.floor(run * (1 + margin) / 60),
            "without the margin": 60 * math.ceil(run / 60 - 1e-9),
            "without the start-up": 60 * math.ceil(draws * per_draw * (1 + margin) / 60 - 1e-9),
            "with the margin on the sampling only": 60 * math.ceil((start_up + draws * per_draw * (1 + margin)) / 60
                                                                   - 1e-9),
            "in seconds, not rounded to whole minutes": round(run * (1 + margin)),
        }
        for slip, value in slips.items():
            if seconds == value and value != want_seconds:
                raise AssertionError(f"{where} asks for --time={options['--time']} ({seconds} s), the limit "
                                     f"{slip}; the job needs {want['minutes']} minute(s).")
        more = "more than it needs: a longer limit waits longer in the queue" if seconds > want_seconds else \
            "less than it needs: SLURM would stop the job before it ends"
        raise AssertionError(f"{where} asks for --time={options['--time']} ({seconds} s), {more}. "
                             f"(start-up + draws x seconds a draw) x (1 + margin), rounded up to whole minutes, is "
                             f"{want['minutes']} minute(s).")
    passed("job_header")
