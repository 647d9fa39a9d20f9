"""parallel_mcmc.exercises (its common module, re-exported by its __init__): the helpers every part's checks share: the confirmation, expect,
call (which names the learner's own exception), importable, the structure of a traced program, and the
records of a learner's function that traced_program asks instead of tracing (record_type)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from parallel_mcmc import exercises, pools
from parallel_mcmc.exercises import common


def test_passed_prints_one_line(capsys):
    exercises.passed("my_chains")
    assert capsys.readouterr().out == "✔ my_chains: correct.\n"


def test_expect_raises_the_message_unless_the_condition_holds():
    assert exercises.expect(True, "never shown") is None
    with pytest.raises(AssertionError) as info:
        exercises.expect(0 > 1, "zero is not above one")
    assert str(info.value) == "zero is not above one"



def test_expect_type_raises_a_type_error_the_grader_reports_as_a_failed_check():
    assert exercises.expect_type(True, "never shown") is None
    with pytest.raises(TypeError, match="^return a number, got dict$") as info:
        exercises.expect_type(False, "return a number, got dict")
    assert isinstance(info.value, AssertionError) and isinstance(info.value, exercises.WrongType)
    from booktools.coursework.verdict_runner import _failure

    assert _failure("ex-a", info.value) == {"label": "ex-a", "status": "failed", "message": "return a number, got dict"}
    with pytest.raises(TypeError, match=r"f\(1\) returned None \(NoneType\); it should return one number"):
        exercises.as_float(None, "f(1)")

def test_expect_also_runs_under_python_O():
    code = "from parallel_mcmc.exercises import expect\nexpect(False, 'still checked')"
    done = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "AssertionError: still checked" in done.stderr


# ---------------------------------------------------------------- call


def test_call_passes_the_arguments_and_returns_the_answer():
    assert exercises.call(lambda a, b=0: a - b, 5, b=2, what="f(5, b=2)") == 3


def test_call_names_the_learners_exception():
    def broken(steps):
        raise KeyError("chain 3")

    with pytest.raises(AssertionError, match=r"^efficiency\(steps\) raised KeyError: 'chain 3'$") as info:
        exercises.call(broken, 1, what="efficiency(steps)")
    assert info.value.__cause__ is None and info.value.__suppress_context__  # the learner's error, not the check's

    def silent():
        raise ValueError()

    with pytest.raises(AssertionError, match=r"^g\(\) raised ValueError: with no message, at line \d+: "
                                             r"raise ValueError\(\); an assert without a message"):
        exercises.call(silent, what="g()")

    def empty_assertion(x):  # what a bare `assert` raises in a notebook (pytest rewrites the asserts here)
        if x < 0:
            raise AssertionError
        return x

    with pytest.raises(AssertionError, match=r"raised AssertionError: with no message, at line \d+: "
                                             r"raise AssertionError;"):
        exercises.call(empty_assertion, -1, what="h(-1)")


def test_call_shortens_a_long_message_to_six_lines():
    def chatty():
        raise RuntimeError("\n".join(f"line {i}" for i in range(10)))

    with pytest.raises(AssertionError) as info:
        exercises.call(chatty, what="chatty()")
    message = str(info.value)
    assert message.startswith("chatty() raised RuntimeError: line 0\nline 1")
    assert "line 5 ..." in message and "line 6" not in message


def test_call_names_an_error_replayed_by_the_grader():
    class Replayed(Exception):  # the grader's stand-in for an exception raised in the learner's kernel
        ename, evalue = "ZeroDivisionError", "division by zero"

    def replay():
        raise Replayed("a record of it")

    with pytest.raises(AssertionError, match=r"^f\(\) raised ZeroDivisionError: division by zero$"):
        exercises.call(replay, what="f()")


def test_call_passes_an_unanswered_stub_on():
    def stub(x):
        raise NotImplementedError("your answer here")

    with pytest.raises(NotImplementedError, match="your answer here"):
        exercises.call(stub, 1, what="stub(1)")


def test_call_explains_jax_tracing_errors():
    def python_if(x):
        return x if x > 0 else -x  # a Python `if` on a tracer

    with pytest.raises(AssertionError, match="failed while JAX traced it: TracerBoolConversionError") as info:
        exercises.call(jax.jit(python_if), jnp.float32(2.0), what="abs(x)")
    assert "use jnp functions and lax control flow" in str(info.value)
    with pytest.raises(AssertionError, match="failed while JAX traced it: ConcretizationTypeError"):
        exercises.call(jax.jit(lambda x: jnp.zeros(int(x))), 3, what="zeros(n)")


def test_call_reads_a_look_alike_name_outside_jax_as_an_ordinary_error():
    ConcretizationTypeError = type("ConcretizationTypeError", (Exception,), {})  # noqa: N806 - not JAX's

    def learner():
        raise ConcretizationTypeError("mine")

    with pytest.raises(AssertionError, match="^h\\(\\) raised ConcretizationTypeError: mine$"):
        exercises.call(learner, what="h()")


# ---------------------------------------------------------------- importable


def module_level(theta):
    return theta


def test_importable_for_what_a_spawned_worker_can_import():
    assert exercises.importable(pools.busy_log_prob)
    assert exercises.importable(functools.partial(pools.log_prob_worker_data, cost=0.0))
    assert exercises.importable(pools.CountingPool.map)  # a method, found through its class
    assert exercises.importable(np.sum)
    assert exercises.importable(module_level)  # this test module is importable by its name


def test_importable_refuses_what_a_spawned_worker_cannot_import():
    def nested(theta):
        return theta

    assert not exercises.importable(lambda theta: theta)
    assert not exercises.importable(nested)  # <locals> in its qualified name
    assert not exercises.importable(functools.partial(lambda theta, c: theta, c=1))
    notebook = functools.wraps(module_level)(lambda theta: theta)
    notebook.__module__ = "__main__"  # what a notebook defines
    assert not exercises.importable(notebook)
    copy = functools.wraps(pools.busy_log_prob)(lambda theta: theta)  # named like it, but another object
    assert not exercises.importable(copy)
    gone = functools.wraps(module_level)(lambda theta: theta)
    gone.__module__ = "no_such_module_here"
    assert not exercises.importable(gone)
    assert not exercises.importable(3)


# ---------------------------------------------------------------- the structure of a traced program


def scanned(x):
    return jax.lax.scan(lambda c, _: (jnp.sin(c), c), x, None, length=5)[1]


def test_program_structure_is_plain_data_with_loops_and_their_lengths():
    structure = exercises.program_structure(jax.make_jaxpr(scanned)(1.0))
    (scan,) = [node for node in structure if node["primitive"] == "scan"]
    assert scan["length"] == 5
    assert [node["primitive"] for node in scan["inner"][0]] == ["sin"]
    assert exercises.program_structure(jax.make_jaxpr(scanned)(1.0).jaxpr) == structure  # a Jaxpr as well
    assert json.loads(json.dumps(structure)) == structure


@pytest.fixture(scope="module")
def summed_over_devices():
    mesh = jax.make_mesh((8,), ("data",))
    block = jax.shard_map(lambda x: jax.lax.psum(jnp.sum(x**2), "data"), mesh=mesh, in_specs=P("data"), out_specs=P())
    return jax.make_jaxpr(jax.jit(block))(jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("data"))))


def test_program_structure_names_the_axes_of_collectives(summed_over_devices):
    structure = exercises.program_structure(summed_over_devices)

    def find(program, name):
        for node in program:
            if node["primitive"] == name:
                return node
            for inner in node.get("inner", []):
                if (found := find(inner, name)) is not None:
                    return found
        return None

    assert find(structure, "psum_invariant")["axes"] == ["data"]  # psum, with the varying-axes check on
    assert find(structure, "integer_pow") is not None and "axes" not in find(structure, "integer_pow")


def test_uses_looks_inside_nested_programs(summed_over_devices):
    structure = exercises.program_structure(summed_over_devices)
    assert [node["primitive"] for node in structure] == ["jit"]  # psum sits inside jit and shard_map
    assert exercises.uses(structure, "psum") and exercises.uses(structure, "shard_map")
    assert exercises.uses(structure, "pow")  # part of a primitive's name
    assert not exercises.uses(structure, "all_gather") and not exercises.uses([], "psum")


def test_traced_program_traces_a_plain_function():
    assert exercises.traced_program(scanned, (1.0,), "scanned(x)") == exercises.program_structure(
        jax.make_jaxpr(scanned)(1.0))


def test_traced_program_names_the_learners_error_while_tracing():
    with pytest.raises(AssertionError, match="spread\\(x\\) failed while JAX traced it: TracerBoolConversionError"):
        exercises.traced_program(lambda x: x if x > 0 else -x, (1.0,), "spread(x)")
    with pytest.raises(AssertionError, match="spread\\(x\\) raised RuntimeError: forgot the mesh"):
        exercises.traced_program(lambda x: (_ for _ in ()).throw(RuntimeError("forgot the mesh")), (1.0,), "spread(x)")


# ---------------------------------------------------------------- record_type


RECORDED = [{"primitive": "shard_map", "inner": [[{"primitive": "psum", "axes": ["data"]}]]}]


class Record:
    """A record of a learner's function, as the grader replays it: not traceable, but it knows its program."""

    def __init__(self):
        self.asked = []

    def __call__(self, *args):
        raise RuntimeError("a record cannot run again")

    def traced_program(self, *args):
        self.asked.append(args)
        return RECORDED


@pytest.fixture
def no_records(monkeypatch):
    """An empty registry, so that registering here leaves the grader's own records (if loaded) alone."""
    monkeypatch.setattr(common, "_RECORD_TYPES", [])


def test_a_registered_record_gives_its_program_instead_of_being_traced(no_records):
    assert exercises.record_type(Record) is Record  # usable as a class decorator
    record = Record()
    assert exercises.traced_program(record, (1.0, "X"), "spread(keys, states)") == RECORDED
    assert record.asked == [(1.0, "X")]
    assert exercises.uses(exercises.traced_program(record, (), "f()"), "psum")


def test_registering_twice_registers_once(no_records):
    exercises.record_type(Record)
    exercises.record_type(Record)
    assert common._RECORD_TYPES == [Record]


def test_a_records_failure_is_named_like_the_learners(no_records):
    @exercises.record_type
    class Failing:
        def traced_program(self, *args):
            raise KeyError("no program recorded")

    with pytest.raises(AssertionError, match="f\\(x\\) raised KeyError: 'no program recorded'"):
        exercises.traced_program(Failing(), (1.0,), "f(x)")


@pytest.mark.parametrize("attribute", [None, 3])
def test_record_type_refuses_a_class_without_traced_program(no_records, attribute):
    cls = type("NoProgram", (), {} if attribute is None else {"traced_program": attribute})
    with pytest.raises(TypeError, match="NoProgram has no traced_program method"):
        exercises.record_type(cls)
    assert common._RECORD_TYPES == []


def test_an_unregistered_look_alike_is_traced_as_usual(no_records):
    class LookAlike:  # a traced_program method, but not a registered record
        def __call__(self, x):
            return jnp.sin(x) * 2.0

        def traced_program(self, *args):
            raise AssertionError("asked instead of traced")

    structure = exercises.traced_program(LookAlike(), (1.0,), "f(x)")
    assert [node["primitive"] for node in structure] == ["sin", "mul"]
    with pytest.raises(AssertionError, match="raised RuntimeError: a record cannot run again"):
        exercises.traced_program(Record(), (1.0,), "f(x)")  # nor is the record's class, while unregistered


# ---------------------------------------------------------------- as_float


@pytest.mark.parametrize("value", [3, 2.5, np.int64(3), np.float32(2.5), np.array(2.5), jnp.float32(2.5), jnp.array(3)])
def test_as_float_takes_one_number_in_any_form(value):
    got = exercises.as_float(value, "ideal_speedup(2, 4)")
    assert type(got) is float and got == float(np.asarray(value))


@pytest.mark.parametrize("value", [True, np.bool_(False), "2", None, [2.0], np.array([2.0]), jnp.ones(2), 1 + 2j])
def test_as_float_refuses_anything_else(value):
    with pytest.raises(AssertionError, match=r"^ideal_speedup\(2, 4\) returned .*; it should return one number\.$"):
        exercises.as_float(value, "ideal_speedup(2, 4)")
