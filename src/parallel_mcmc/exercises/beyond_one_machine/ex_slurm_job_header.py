"""The exercise ``ex-slurm-job-header`` of the chapter ``chapters/beyond_one_machine/slurm_jobs.md``: its check, :func:`job_header`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

import math
import shlex
from typing import Any, Callable, Sequence

from parallel_mcmc.exercises.common import WrongType, call, expect, expect_type, passed

__all__ = ["job_header", "sbatch_header_options", "slurm_seconds", "WRONG_ANSWERS"]


# ----------------------------------------------------------------------------- the #SBATCH header of a GPU job

_SHORT = {"-N": "--nodes", "-n": "--ntasks", "-c": "--cpus-per-task", "-t": "--time", "-G": "--gpus",
          "-p": "--partition", "-J": "--job-name", "-o": "--output", "-A": "--account"}


def sbatch_header_options(text: str) -> dict[str, str]:
    """The options of the ``#SBATCH`` lines of ``text`` as ``sbatch`` reads them: up to the first command.

    ``--name=value``, ``--name value`` and the usual short forms (``-N 2``, ``-c 8``, ``-t 90``) all count;
    short forms are returned under their long names.

    Parameters
    ----------
    text : str
        A job script, or its header.

    Returns
    -------
    dict of str to str
        Each option's long name (``--nodes``) and its value (``""`` for a flag).
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
    ``days-hours``, ``days-hours:minutes`` or ``days-hours:minutes:seconds``.

    Parameters
    ----------
    value : str
        The limit as ``--time`` takes it.

    Returns
    -------
    int
        The limit in seconds.

    Raises
    ------
    ValueError
        When ``value`` is in none of those formats.
    """
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
CASES = [
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

    Parameters
    ----------
    fn : callable
        The learner's function, the answer; the check calls it on each case.
    cases : sequence, optional
        Cases in the same form as the fixed ones (the grader's unseen inputs); by default the module's ``CASES``.

    Returns
    -------
    None
        Prints ``✔ job_header: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When a header ``fn`` writes is wrong for its case; the message names the option.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``fn`` is not a function, or returns something other than one string (a list of lines, a dict of
        options, ``None``).
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(callable(fn), f"Pass your function itself, `job_header`, not the header it returns (got a "
                              f"{type(fn).__name__}).")
    for args, want in cases if cases is not None else CASES:
        nodes, gpus, cores, draws, per_draw, start_up, margin = args
        where = f"job_header({', '.join(f'{a:g}' if isinstance(a, float) else str(a) for a in args)})"
        text = call(fn, *args, what=where)
        if isinstance(text, (list, tuple)) and all(isinstance(line, str) for line in text):
            raise WrongType(f"{where} returned a {type(text).__name__} of {len(text)} line(s); return them as one "
                            "string: '\\n'.join(lines).")
        expect_type(isinstance(text, str), f"{where} returned {type(text).__name__}; return the #SBATCH lines as one "
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


def _with_minutes(header: str, minutes: int) -> str:
    """``header`` with its time limit set to ``minutes``."""
    return "\n".join(f"#SBATCH --time={minutes}" if "--time" in line else line for line in header.splitlines())


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = [
    ('the margin left out',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, c, d, pd, s, 0.0),
     'without the margin|less than'),
    ('GPUs per task instead of per node',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, c, d, pd, s, m).replace("gpus-per-node", "gpus-per-task"),
     'gpus-per-task'),
    ('more cores than a node has',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, g * c, d, pd, s, m),
     'would never start'),
    ('the time limit rounded down',
     lambda right: lambda n, g, c, d, pd, s, m: _with_minutes(right(n, g, c, d, pd, s, m),
                                                             math.floor((s + d * pd) * (1 + m) / 60)),
     'rounded down|less than'),
    ('the start-up left out of the time limit',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, c, d, pd, 0.0, m),
     'without the start-up|less than'),
    ('one task per node',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, c, d, pd, s, m).replace(
         f"--ntasks-per-node={g}", "--ntasks-per-node=1").replace(f"--cpus-per-task={c // g}", f"--cpus-per-task={c}"),
     'one task per node'),
    ('the job\'s tasks in all, not per node',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, c, d, pd, s, m).replace("--ntasks-per-node=", "--ntasks="),
     'not --ntasks-per-node|--ntasks='),
    ('the lines as a list',
     lambda right: lambda n, g, c, d, pd, s, m: right(n, g, c, d, pd, s, m).splitlines(),
     'one string'),
]
