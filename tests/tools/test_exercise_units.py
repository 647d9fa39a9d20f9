"""One exercise, one unit: every exercise the chapters label has a check module and a reference twin
(:mod:`booktools.coursework.registry`), the check accepts the twin's reference answer, on its fixed cases
and on unseen inputs, and rejects every entry of its module's catalogue of wrong answers.

Checks of values the chapter computed (a sharded array, a mesh, timings) have no reference answer; their
tests, with a wrong answer each, are in tests/helper/test_exercises_<part>.py, and those of the lab's
functions on sharded data in tests/tools/test_references.py.
"""

from __future__ import annotations

import importlib
import inspect
import re

import numpy as np
import pytest

from booktools.coursework import references, registry

SEEDS = (1, 7, 2024)
UNITS = registry.units()
#: Checks whose reference computes in floats: a float32 answer (a learner's jnp one) must pass too.
FLOATS = {"predict_sharded", "machine_speedup", "grouped_efficiency", "gaussian_consensus", "vectorized_log_prob",
          "pair_acceptance", "next_temperature"}
#: The check's arguments after the learner's function, as the chapter gives them (for the fixed cases).
GIVEN = {"next_temperature": (-50.0 * np.random.default_rng(2).chisquare(3, size=1024),)}


def twin(unit: registry.Unit):
    return importlib.import_module(unit.twin)


def check_of(unit: registry.Unit):
    return getattr(importlib.import_module(unit.module), unit.check)


ANSWERED = [pytest.param(u, id=u.label) for u in UNITS if twin(u).REFERENCE is not None]
WRONG = [pytest.param(u, description, wrong, message, id=f"{u.label}-{i}")
         for u in UNITS for i, (description, wrong, message) in enumerate(importlib.import_module(u.module).WRONG_ANSWERS)]


def in_float32(reference):
    """``reference`` fed and answering float32 arrays, as a learner's jnp answer would (JAX's default)."""
    def answer(*args):
        out = reference(*(np.asarray(a, np.float32) if isinstance(a, np.ndarray) else a for a in args))
        if out is None or isinstance(out, float) and out == 1.0:
            return out
        return tuple(np.asarray(o, np.float32) for o in out) if isinstance(out, tuple) else np.asarray(out, np.float32)

    return answer


def test_the_registry_pairs_every_chapter_exercise_with_its_module_and_twin():
    labels = [u.label for u in UNITS if u.chapter is not None]
    assert len(labels) == len(set(labels)) >= 30
    assert all(re.fullmatch(r"ex-[a-z0-9-]+", label) for label in labels)
    for unit in UNITS:
        assert unit.module.rsplit(".", 1)[1] == unit.twin.rsplit(".", 1)[1] == registry.module_name(unit.label)
        assert check_of(unit) is getattr(importlib.import_module(f"parallel_mcmc.exercises.{unit.part}"), unit.check)
        assert registry.is_check(f"parallel_mcmc.exercises.{unit.part}", unit.check)
    assert set(references.UNSEEN) <= {u.check_name for u in UNITS}
    assert not registry.is_check("parallel_mcmc.exercises.common", "call")
    assert not registry.is_check("parallel_mcmc.exercises.getting_started", "ex_devices_pay")


def _book(tmp_path, body: str):
    (tmp_path / "chapters" / "getting_started").mkdir(parents=True)
    (tmp_path / "chapters" / "getting_started" / "page.md").write_text(body)
    return tmp_path


EXERCISE = """```{{exercise-start}}
:label: {label}
```
Do it.
```{{exercise-end}}
```

```{{code-cell}} ipython3
from parallel_mcmc.exercises import getting_started as check
check.{check}(answer)
```
"""


def test_the_registry_names_what_is_missing(tmp_path):
    root = _book(tmp_path, EXERCISE.format(label="ex-devices-pay", check="steps_to_pay")
                 + EXERCISE.format(label="ex-devices-new", check="steps_to_pay"))
    with pytest.raises(registry.RegistryError) as err:
        registry.units(root)
    message = str(err.value)
    assert "exercise 'ex-devices-new' (chapters/getting_started/page.md) has no check module: write " \
           "parallel_mcmc/exercises/getting_started/ex_devices_new.py" in message
    assert "has no reference twin: write booktools/coursework/references/getting_started/ex_devices_new.py" in message
    # the chapters of this book ask for none of the other exercises: their modules have no exercise
    assert "parallel_mcmc.exercises.getting_started.ex_devices_place has no exercise in the chapters" in message
    assert "booktools.coursework.references.sharding_lab.ex_arrays_place has no exercise" in message


def test_the_registry_refuses_an_exercise_without_one_check(tmp_path):
    with pytest.raises(registry.RegistryError, match="calls no check"):
        registry.chapter_exercises(_book(tmp_path, EXERCISE.format(label="ex-a", check="x").replace("check.x", "x")))
    assert registry.chapter_exercises(_book(tmp_path / "b", EXERCISE.format(label="ex-a", check="x")))[0].check == "x"


@pytest.mark.parametrize("unit", ANSWERED)
def test_the_check_accepts_its_reference_on_the_fixed_cases_and_unseen_inputs(unit, capsys):
    check, reference = check_of(unit), twin(unit).REFERENCE
    given = GIVEN.get(unit.check, ())
    check(reference, *given)
    for seed in SEEDS:
        check(reference, *given, **references.unseen(unit.check_name, seed))
    if unit.check in FLOATS:
        for seed in SEEDS:
            check(in_float32(reference), *given, **references.unseen(unit.check_name, seed))
    assert capsys.readouterr().out.count("✔") == (1 + len(SEEDS) * (2 if unit.check in FLOATS else 1))


@pytest.mark.parametrize("unit, description, wrong, message", WRONG)
def test_the_check_rejects_its_catalogued_wrong_answers(unit, description, wrong, message):
    check, answer = check_of(unit), wrong(twin(unit).REFERENCE)
    given = GIVEN.get(unit.check, ())
    for seed in SEEDS:
        with pytest.raises(AssertionError, match=message):
            check(answer, *given, **references.unseen(unit.check_name, seed))


@pytest.mark.parametrize("unit", ANSWERED)
def test_a_check_with_a_reference_catalogues_wrong_answers(unit):
    assert importlib.import_module(unit.module).WRONG_ANSWERS, f"{unit.module}: catalogue its plausible wrong answers"


@pytest.mark.parametrize("unit", [pytest.param(u, id=u.label) for u in UNITS if twin(u).UNSEEN is not None])
def test_unseen_inputs_fit_their_check_and_change_with_the_seed(unit):
    name = unit.check_name
    made = references.unseen(name, 5)
    assert made and set(made) <= set(inspect.signature(check_of(unit)).parameters)
    assert name in references.CALLS
    np.testing.assert_equal(made, references.unseen(name, 5))  # one seed, one draw
    with pytest.raises(AssertionError):
        np.testing.assert_equal(made, references.unseen(name, 6))
    assert references.unseen(name.replace("exercises", "nowhere"), 5) == {}
