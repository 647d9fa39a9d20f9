"""The trusted verdict runner: runs the book's checks on what the sandbox observed, and nothing else.

``python -m booktools.coursework.verdict_runner`` reads one job as JSON on stdin and writes the
verdicts as JSON on stdout. It runs as a separate process of the grader's own
user, started fresh for each submission, with the book's ``src`` on its path;
no code of the submission runs in it. The values come from
:func:`booktools.coursework.codec.decode` (data only; a learner's function is a
:class:`~booktools.coursework.codec.Replay` of its recorded calls), the checks from the
book's ``parallel_mcmc.exercises``, and the unseen inputs with their reference
answers from :mod:`booktools.coursework.references`.

The job: ``{"devices": n, "seed": s, "checks": [{"label", "module", "function",
"observation", "literals": {"args": {index: value}, "kwargs": {name: value}}}]}``.
The answer: one ``{"label", "status", "message"}`` per check, status ``passed``,
``failed`` (an ``AssertionError`` of the check) or ``error``. A check that passes on the chapter's
inputs but fails on its unseen ``cases`` is run again on each case alone, and its ``failed`` verdict
carries ``"fraction"``: the share of the cases passed (partial credit).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

__all__ = ["run_check", "main"]


def _verdict(label: str, status: str, message: str = "") -> dict:
    return {"label": label, "status": status, "message": message}


def _failure(label: str, err: BaseException, prefix: str = "") -> dict:
    from .codec import ForgedData

    if isinstance(err, AssertionError):
        return _verdict(label, "failed", prefix + (str(err) or "the check failed"))
    if isinstance(err, NotImplementedError):
        return _verdict(label, "error", f"not answered: {err or 'the stub is still there'}")
    if isinstance(err, ForgedData):
        return _verdict(label, "error", f"the sandbox's observation was refused ({err}); nothing of it was used")
    return _verdict(label, "error", prefix + f"{type(err).__name__}: {err}")


def run_check(item: dict, devices: int | None, seed: int) -> dict:
    """The verdict of one check call on its observation.

    Parameters
    ----------
    item
        One check of the job: ``{"label", "module", "function", "observation", "literals"}``.
    devices
        The chapter's device count, which values with a layout are rebuilt on.
    seed
        The seed the unseen inputs are drawn from.

    Returns
    -------
    dict
        ``{"label", "status", "message"}``, status ``passed``, ``failed`` or ``error``; a check that
        failed on unseen inputs only carries ``"fraction"``, the share of them passed.
    """
    from . import references, registry
    from .codec import ForgedData, decode

    label = str(item.get("label"))
    module, function = str(item.get("module")), str(item.get("function"))
    if not registry.is_check(module, function):
        return _verdict(label, "error", f"{module}.{function} is not a check of the book")
    obs = item.get("observation")
    if not isinstance(obs, dict):
        return _verdict(label, "error", "the check never ran: no observation came back from the sandbox")
    outcome = obs.get("outcome") or {}
    if outcome.get("stage") == "arguments":
        name, text = outcome.get("ename", "Exception"), outcome.get("evalue", "")
        if name == "NotImplementedError":
            return _verdict(label, "error", f"not answered: {text or 'the stub is still there'}")
        return _verdict(label, "error", f"{name}: {text}")
    try:
        records = obs.get("records") or {}
        args = [decode(a, devices, records) for a in obs.get("args", [])]
        kwargs = {str(k): decode(v, devices, records) for k, v in obs.get("kwargs", [])}
    except ForgedData as err:
        return _failure(label, err)
    except Exception as err:  # noqa: BLE001 - a value the verdict runner cannot rebuild is the submission's problem
        return _verdict(label, "error", f"the observed values could not be read back ({type(err).__name__}: {err})")
    literals = item.get("literals") or {}
    for index, value in (literals.get("args") or {}).items():
        if int(index) < len(args):
            args[int(index)] = value
    kwargs.update(literals.get("kwargs") or {})
    import importlib

    check = getattr(importlib.import_module(module), function)
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            check(*args, **kwargs)
        except (Exception, ForgedData) as err:  # noqa: BLE001 - every failure is a verdict
            return _failure(label, err)
        extra = references.unseen(f"{module}.{function}", seed)
        if extra:
            try:
                check(*args, **{**kwargs, **extra})
            except (Exception, ForgedData) as err:  # noqa: BLE001 - every failure is a verdict
                verdict = _failure(label, err, "On inputs the notebook does not show: ")
                share = _share_of_cases(check, args, kwargs, extra)
                if verdict["status"] == "failed" and share is not None:
                    passed, n = share
                    verdict["fraction"] = passed / n
                    verdict["message"] += f" ({passed} of {n} unseen cases passed)"
                return verdict
    return _verdict(label, "passed")


def _share_of_cases(check, args: list, kwargs: dict, extra: dict) -> tuple[int, int] | None:
    """(cases passed, cases) when the check's unseen inputs are lists of independent cases (``cases=``,
    ``uneven=``...), each run alone with the other lists empty; None when there are fewer than two
    (partial credit is given only where the cases can be told apart)."""
    from .codec import ForgedData

    lists = {key: list(value) for key, value in extra.items() if isinstance(value, (list, tuple))}
    if sum(map(len, lists.values())) < 2:
        return None
    passed = total = 0
    for key, items in lists.items():
        for item in items:
            total += 1
            alone = {**kwargs, **extra, **{k: [] for k in lists}, key: [item]}
            try:
                check(*args, **alone)
                passed += 1
            except (Exception, ForgedData):  # noqa: BLE001 - a case that fails or cannot be judged earns nothing
                pass
    return passed, total


def main() -> int:
    """The command: one job as JSON on stdin, its verdicts as JSON on stdout; the exit status, 0."""
    job = json.loads(sys.stdin.read())
    devices = job.get("devices")
    if isinstance(devices, int) and 1 <= devices <= 256:
        from parallel_mcmc.devices import use_cpu_devices

        with contextlib.suppress(Exception):
            use_cpu_devices(devices)
    seed = int(job.get("seed", 0))
    verdicts = [run_check(item, devices, int(item.get("seed", seed))) for item in job.get("checks", [])]
    sys.stdout.write(json.dumps(verdicts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
