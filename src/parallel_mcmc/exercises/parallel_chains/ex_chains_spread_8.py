"""The exercise ``ex-chains-spread-8`` of the chapter ``chapters/parallel_chains/more_chains_than_devices.md``: its check, :func:`spread_chains`, its fixed cases, and the wrong answers it must reject."""

from __future__ import annotations

from typing import Any, Callable, Mapping

import jax
import numpy as np

from parallel_mcmc._validate import whole_number
from parallel_mcmc.exercises.common import call, expect, expect_type, passed, program_structure, traced_program

__all__ = ["spread_chains", "WRONG_ANSWERS"]


def _loops(structure: list[dict], primitive: str) -> list[dict]:
    """Every node of a traced program's structure whose primitive is ``primitive``, outermost first."""
    found = []
    for node in structure:
        if node["primitive"] == primitive:
            found.append(node)
        for inner in node.get("inner", []):
            found += _loops(inner, primitive)
    return found


#: The module of the book's runners (sequential_runner, vmap_runner, shard_map_runner, ...), as a path's end.
_RUNNERS_FILE = "parallel_mcmc/sample/chains.py"


def _runner_code_in(jaxpr: Any) -> set[str]:
    """The functions of the book's runners' module whose code traced some operation of ``jaxpr``, at any depth.

    Every operation of a traced program remembers the Python stack that made it, even one a jitted runner
    traced earlier and JAX took from its cache; a runner wrapped in the learner's own function shows there.
    """
    found: set[str] = set()
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    for eqn in jaxpr.eqns:
        traceback = getattr(eqn.source_info, "traceback", None)
        for frame in getattr(traceback, "frames", None) or ():
            if str(frame.file_name).replace("\\", "/").endswith(_RUNNERS_FILE):
                found.add(str(frame.function_name))
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(item, "eqns") or hasattr(getattr(item, "jaxpr", None), "eqns"):
                    found |= _runner_code_in(item)
    return found


def spread_chains(positions: Any, reference: Mapping[str, Any], spread: Callable[..., Any] | None = None,
                  inputs: tuple = (), num_devices: int = 2, num_draws: int | None = None) -> None:
    """Check draws of 8 chains run with ``shard_map``: same values as ``reference``, split over devices,
    and each device's chains run one after another (``lax.map``), not in lockstep.

    ``positions`` is the dict of ``(chain, draw)`` arrays the answer produced;
    ``reference`` the same chains run one after another; ``spread`` the function
    that produced ``positions`` from ``inputs`` (its program is traced, not run).

    Parameters
    ----------
    positions, reference
        The learner's answers, as the chapter's exercise asks for them.
    spread : callable, optional
        The learner's function that spread the chains, whose traced program is checked.
    inputs, num_devices, num_draws
        The learner's answers, as the chapter's exercise asks for them.

    Returns
    -------
    None
        Prints ``✔ 8 chains over 2 devices, one after another on each device: correct.`` when the answer is right.

    Raises
    ------
    AssertionError
        When the positions are not the eight chains' laid out over the two devices, or ``spread`` uses one of the
        book's runners (passed as it is or called inside the learner's function) or runs the chains in lockstep.
    TypeError
        A ``WrongType``, also an ``AssertionError``.
        When ``positions`` is not a dict of ``jax.Array``, or ``spread`` is not a function.
    NotImplementedError
        Passed on from the learner's function while it is still the stub.
    """
    expect_type(
        isinstance(positions, Mapping),
        f"Expected the positions dict of the run, with keys {sorted(reference)}; got {type(positions).__name__}. "
        "Return the draws (the first item a runner returns), not the states or the info.",
    )
    expect(
        set(positions) == set(reference),
        f"Expected the positions dict of the run, with keys {sorted(reference)}; got {type(positions).__name__}"
        + (f" with keys {sorted(positions)}" if isinstance(positions, Mapping) else "")
        + ". Return the draws (the first item a runner returns), not the states or the info.",
    )
    num_devices = whole_number("num_devices", num_devices, 1)
    for name, ref in reference.items():
        got = positions[name]
        ref = np.asarray(ref)
        expect_type(isinstance(got, jax.Array),
                    f"positions[{name!r}] is a {type(got).__name__}, not a jax.Array straight from the run.")
        if got.shape == ref.shape[::-1]:
            raise AssertionError(
                f"positions[{name!r}] has shape {got.shape}: (draw, chain). Return (chain, draw), "
                f"{ref.shape}, like the reference (swap the axes of a scan over draws)."
            )
        expect(got.shape == ref.shape, f"positions[{name!r}] has shape {got.shape}; expected {ref.shape} (chain, draw).")
        expect(
            len(got.devices()) == num_devices,
            f"positions[{name!r}] lives on {len(got.devices())} device(s); the chains should be split over "
            f"{num_devices}. Use jax.shard_map over a mesh of {num_devices} devices.",
        )
        shard_shapes = {s.data.shape for s in got.addressable_shards}
        expect(
            shard_shapes == {(ref.shape[0] // num_devices,) + ref.shape[1:]},
            f"Each device holds a block of shape {sorted(shard_shapes)}; with the chains split over the mesh it "
            f"should hold {ref.shape[0] // num_devices} chains, shape {(ref.shape[0] // num_devices,) + ref.shape[1:]}. "
            "Use in_specs/out_specs P('chains').",
        )
        if not np.allclose(np.asarray(got), ref, rtol=1e-5, atol=1e-6):
            raise AssertionError(
                f"positions[{name!r}] differ from the chains run one after another. Give chain c the key "
                "keys[c] and its state states[c], and inside each device run the chain loop on each chain."
            )
    if spread is not None:
        expect_type(callable(spread), "`spread` should be the function you ran (spread(keys, states)), not its "
                                      f"result (got {type(spread).__name__}).")
        expect(
            getattr(spread, "__module__", None) != "parallel_mcmc.sample.chains",
            "`spread` is one of the book's runners (parallel_mcmc.sample); the exercise is to write the shard_map "
            "and the loop over each device's chains yourself.",
        )
        if callable(getattr(spread, "traced_program", None)):  # the grader's record: the structure it recorded
            program = traced_program(spread, tuple(inputs), "spread(keys, states)")
        else:
            jaxpr = call(lambda *a: jax.make_jaxpr(spread)(*a), *inputs, what="spread(keys, states)")
            program = program_structure(jaxpr)
            runner_code = _runner_code_in(jaxpr)
            expect(
                not runner_code,
                "`spread` runs one of the book's runners (parallel_mcmc.sample: shard_map_runner, "
                "sequential_runner, ...) inside your function: part of its program was traced by their code "
                f"({_RUNNERS_FILE}). The exercise is to write the shard_map and the loop over each device's chains "
                "yourself, with jax.shard_map and jax.lax.map.",
            )
        num_chains = next(iter(reference.values())).shape[0]
        draws = num_draws if num_draws is not None else next(iter(reference.values())).shape[1]
        per_device = num_chains // num_devices
        expect(
            _loops(program, "shard_map"),
            "`spread` does not use jax.shard_map; write the per-device function and wrap it with "
            "jax.shard_map(f, mesh=mesh, in_specs=..., out_specs=...).",
        )
        scans = _loops(program, "scan")
        over_chains = [s for s in scans if s.get("length") == per_device
                       and any(t.get("length") == draws for inner in s.get("inner", []) for t in _loops(inner, "scan"))]
        expect(
            bool(over_chains),
            f"Your chains run in lockstep: no device loops over its {per_device} chains one after another "
            f"(a scan of length {per_device} around the {draws} draws); the {per_device} chains advance together, "
            "as with vmap, and wait for the slowest at every draw. Run each device's chains with "
            "jax.lax.map(chain_loop, ...) inside shard_map.",
        )
    passed("8 chains over 2 devices, one after another on each device")


#: Plausible wrong answers the check must reject: (what is wrong, a function of the grader's reference answer
#: that gives the wrong answer, a regular expression its message matches).
WRONG_ANSWERS: list[tuple[str, Callable[[Callable[..., Any]], Any], str]] = []
