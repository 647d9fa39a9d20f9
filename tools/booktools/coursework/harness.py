"""What runs in the learner's kernel when a submission is graded: it observes, it does not judge.

The grader sends the source of this module into the sandboxed kernel as a cell
(the package ``coursework`` itself cannot be imported there), followed by a call
of :func:`observe` for each check of the chapter. :func:`observe` evaluates the
check's arguments in the learner's namespace, replaces the learner's functions
by recorders, runs the check once (its output is the learner's feedback), calls
the learner's functions on the grader's unseen inputs, and writes everything as
plain JSON data (:func:`encode`) into the scratch folder. The grader reads that
file and the trusted verdict runner (:mod:`booktools.coursework.verdict_runner`) decides; nothing in it is
executed, and nothing the learner's code prints or stores counts.

It uses only the standard library, NumPy and (when present) JAX, and holds no
answer: the unseen inputs come in the call, without their answers.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import io
import json
import math
import pickle
import sys
import traceback
from typing import Any

import numpy as np

__all__ = ["encode", "key_of", "Argument", "Recorder", "observe", "plain"]

_MAX_DEPTH = 40


def _jax():
    return sys.modules.get("jax")


def _importable(value: Any) -> bool:
    from parallel_mcmc.exercises import importable

    return importable(value)


def _error(err: BaseException) -> dict:
    return {"kind": "raised", "ename": type(err).__name__, "emodule": type(err).__module__ or "",
            "evalue": str(err)[:4000]}


def _sharding(a: Any) -> dict:
    jax = _jax()
    s = a.sharding
    if isinstance(s, jax.sharding.NamedSharding):
        mesh = s.mesh
        return {"type": "named", "mesh": _mesh(mesh), "spec": [_spec_entry(e) for e in tuple(s.spec)]}
    if isinstance(s, jax.sharding.SingleDeviceSharding):
        (device,) = tuple(s.device_set)
        return {"type": "single", "device": int(device.id), "committed": bool(getattr(a, "committed", True))}
    return {"type": "other", "name": type(s).__name__, "devices": sorted(int(d.id) for d in s.device_set)}


def _spec_entry(entry: Any) -> Any:
    if entry is None or isinstance(entry, str):
        return entry
    if isinstance(entry, (tuple, list)):
        return [str(e) for e in entry]
    return str(entry)


def _mesh(mesh: Any) -> dict:
    return {"shape": [int(n) for n in mesh.devices.shape], "names": [str(n) for n in mesh.axis_names],
            "types": [str(getattr(t, "name", t)) for t in getattr(mesh, "axis_types", ())],
            "devices": [int(d.id) for d in mesh.devices.flat]}


def _array(values: np.ndarray) -> dict:
    values = np.asarray(values)
    if values.dtype == object:
        raise TypeError("object arrays are not data")
    data = values.tolist()
    if values.dtype.kind == "f" or values.dtype.kind == "c":
        data = _floats(data)
    return {"dtype": str(values.dtype), "shape": list(values.shape), "data": data}


def _floats(data: Any) -> Any:
    if isinstance(data, list):
        return [_floats(d) for d in data]
    if isinstance(data, float) and not math.isfinite(data):
        return {"float": repr(data)}
    return data


class Argument:
    """In an unseen call (:data:`booktools.coursework.references.CALLS`): the check's own argument at ``index``.

    The learner's function is then called on the value the chapter passed to
    the check (its sharded data, say), next to inputs of the grader's.
    """

    def __init__(self, index: int) -> None:
        self.index = int(index)


def encode(value: Any, recorders: dict | None = None, depth: int = 0) -> Any:
    """``value`` as JSON data. Learner functions become recorders (added to ``recorders`` by id) when given."""
    if depth > _MAX_DEPTH:
        return {"kind": "opaque", "type": "too deeply nested", "repr": ""}
    jax = _jax()
    if value is None or isinstance(value, (bool, str)):
        return value
    if value is Ellipsis:  # an unanswered stub
        return {"kind": "ellipsis"}
    if type(value) is Argument:
        return {"kind": "argument", "index": value.index}
    if isinstance(value, int):
        return value if abs(value) < 2**53 else {"kind": "bigint", "value": str(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"kind": "float", "value": repr(value)}
    if getattr(type(value), "coursework_stands_for", None) == "callable":  # a Recorder, or the verdict runner's Replay
        return {"kind": "callable", "id": value.id, "name": value.name, "module": value.module,
                "picklable": value.picklable}
    if isinstance(value, np.generic):
        return {"kind": "npscalar", **_array(np.asarray(value))}
    if isinstance(value, np.ndarray):
        return {"kind": "ndarray", **_array(value)}
    if jax is not None and isinstance(value, jax.Array):
        out = {"kind": "jax", "sharding": _sharding(value)}
        if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
            impl = jax.random.key_impl(value)
            out["key_impl"] = str(getattr(impl, "name", impl))
            out.update(_array(np.asarray(jax.random.key_data(value))))
        else:
            out.update(_array(np.asarray(value)))
        return out
    if jax is not None and isinstance(value, jax.sharding.PartitionSpec):
        return {"kind": "pspec", "entries": [_spec_entry(e) for e in tuple(value)]}
    if jax is not None and isinstance(value, jax.sharding.Mesh):
        return {"kind": "mesh", **_mesh(value)}
    if jax is not None and isinstance(value, jax.Device):
        return {"kind": "device", "id": int(value.id)}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {"kind": "namedtuple", "type": type(value).__qualname__,
                "fields": [[f, encode(getattr(value, f), recorders, depth + 1)] for f in value._fields]}
    if isinstance(value, tuple):
        return {"kind": "tuple", "items": [encode(v, recorders, depth + 1) for v in value]}
    if isinstance(value, list):
        return {"kind": "list", "items": [encode(v, recorders, depth + 1) for v in value]}
    if isinstance(value, (set, frozenset)):
        items = [encode(v, recorders, depth + 1) for v in value]
        return {"kind": "set", "items": sorted(items, key=lambda v: json.dumps(v, sort_keys=True))}
    if isinstance(value, dict):
        return {"kind": "dict", "items": [[encode(k, recorders, depth + 1), encode(v, recorders, depth + 1)]
                                          for k, v in value.items()]}
    if isinstance(value, functools.partial):
        return {"kind": "partial", "func": encode(value.func, recorders, depth + 1),
                "args": [encode(v, recorders, depth + 1) for v in value.args],
                "keywords": [[k, encode(v, recorders, depth + 1)] for k, v in value.keywords.items()]}
    module = getattr(value, "__module__", None) or ""
    qualname = getattr(value, "__qualname__", None) or ""
    if (module.startswith("parallel_mcmc.") and qualname and _importable(value)
            and (isinstance(value, type) or callable(value) and not hasattr(value, "__dataclass_fields__"))):
        return {"kind": "ref", "module": module, "qualname": qualname}
    if hasattr(type(value), "__dataclass_fields__") and type(value).__module__.startswith("parallel_mcmc."):
        cls = type(value)
        return {"kind": "dataclass", "module": cls.__module__, "qualname": cls.__qualname__,
                "fields": [[f, encode(getattr(value, f), recorders, depth + 1)] for f in cls.__dataclass_fields__]}
    if callable(value) and not isinstance(value, type) and recorders is not None:
        recorder = Recorder(value, len(recorders))
        recorders[recorder.id] = recorder
        return encode(recorder)
    return {"kind": "opaque", "type": f"{type(value).__module__}.{type(value).__qualname__}", "repr": repr(value)[:200]}


def plain(value: Any) -> Any:
    """The inverse of :func:`encode` for plain data only (numbers, strings, lists, tuples, dicts, NumPy arrays)."""
    if not isinstance(value, dict):
        return value
    kind = value.get("kind")
    if kind in ("ndarray", "npscalar"):
        data = _unfloat(value["data"])
        out = np.array(data, dtype=np.dtype(value["dtype"])).reshape(value["shape"])
        return out[()] if kind == "npscalar" else out
    if kind == "float":
        return float(value["value"])
    if kind == "bigint":
        return int(value["value"])
    if kind == "tuple":
        return tuple(plain(v) for v in value["items"])
    if kind == "list":
        return [plain(v) for v in value["items"]]
    if kind == "dict":
        return {plain(k): plain(v) for k, v in value["items"]}
    raise TypeError(f"not plain data: {kind!r}")


def _unfloat(data: Any) -> Any:
    if isinstance(data, list):
        return [_unfloat(d) for d in data]
    if isinstance(data, dict) and "float" in data:
        return float(data["float"])
    return data


def key_of(args: tuple, kwargs: dict) -> str:
    """The canonical text of a call's arguments: how a recorded call is found again."""
    return json.dumps([encode(tuple(args)), encode(dict(sorted(kwargs.items())))], sort_keys=True)


class Recorder:
    """Stands in for a learner's function: calls it and records each call's result, printed text,
    raised exception or traced program, by the call's arguments."""

    coursework_stands_for = "callable"

    def __init__(self, fn: Any, ident: int) -> None:
        self.fn, self.id = fn, ident
        self.name = str(getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__)
        self.module = str(getattr(fn, "__module__", None) or "__main__")
        try:
            pickle.dumps(fn)
            self.picklable = True
        except Exception:  # noqa: BLE001 - a lambda or a local function cannot be pickled
            self.picklable = False
        self.calls: dict[str, Any] = {}
        self.programs: dict[str, Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = key_of(args, kwargs)
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                result = self.fn(*args, **kwargs)
        except BaseException as err:
            self.calls[key] = {"printed": printed.getvalue()[-20000:], **_error(err)}
            sys.stdout.write(printed.getvalue())
            raise
        sys.stdout.write(printed.getvalue())
        self.calls[key] = {"printed": printed.getvalue()[-20000:], "kind": "returned", "value": encode(result)}
        return result

    def traced_program(self, *args: Any) -> Any:
        from parallel_mcmc.exercises import program_structure

        key = key_of(args, {})
        try:
            structure = program_structure(_jax().make_jaxpr(self.fn)(*args))
        except BaseException as err:
            self.programs[key] = _error(err)
            raise
        self.programs[key] = {"kind": "returned", "value": structure}
        return structure


def _register_recorder() -> None:
    from parallel_mcmc.exercises import record_type

    record_type(Recorder)  # parallel_mcmc.exercises.traced_program asks the recorder


_register_recorder()


def observe(path: str, label: str, module: str, function: str, args: list, kwargs: dict,
            unseen: list, namespace: dict) -> None:
    """Observe one check call and write the observation as JSON to ``path``.

    ``args``/``kwargs`` hold the source of each argument expression, evaluated
    in ``namespace`` (the learner's); ``unseen`` lists ``[argument index, [encoded
    argument tuples]]``: the learner's function at that argument is called on each.
    """
    out: dict = {"label": label, "devices": None, "args": [], "kwargs": [], "records": {}, "outcome": None}
    jax = _jax()
    if jax is not None:
        with contextlib.suppress(Exception):
            out["devices"] = len(jax.devices())
    recorders: dict[int, Recorder] = {}
    values: list = []
    named: dict = {}
    try:
        for source in args:
            values.append(eval(source, namespace))
        for name, source in kwargs.items():
            named[name] = eval(source, namespace)
    except BaseException as err:  # noqa: BLE001 - reported as data; the verdict runner decides
        out["outcome"] = {"stage": "arguments", **_error(err)}
        _write(path, out)
        print(f"{type(err).__name__}: {err}")
        return
    encoded = [encode(v, recorders) for v in values]
    encoded_kw = [[k, encode(v, recorders)] for k, v in named.items()]
    out["args"], out["kwargs"] = encoded, encoded_kw
    wrapped = [_swap(v, encoded_v, recorders) for v, encoded_v in zip(values, encoded)]
    wrapped_kw = {k: _swap(named[k], e, recorders) for k, e in encoded_kw}
    try:
        check = getattr(importlib.import_module(module), function)
        check(*wrapped, **wrapped_kw)
        out["outcome"] = {"stage": "check", "kind": "returned"}
    except BaseException as err:  # noqa: BLE001 - the learner's feedback; the verdict runner decides
        out["outcome"] = {"stage": "check", **_error(err)}
        print("".join(traceback.format_exception_only(type(err), err)).strip())
    for index, calls in unseen:
        target = wrapped[index] if index < len(wrapped) else None
        if not isinstance(target, Recorder):
            continue
        for call_args in calls:
            with contextlib.suppress(BaseException), contextlib.redirect_stdout(io.StringIO()):
                target(*_unseen_call(call_args, values))
    out["records"] = {str(i): {"calls": r.calls, "programs": r.programs} for i, r in recorders.items()}
    _write(path, out)


def _unseen_call(call_args: dict, values: list) -> tuple:
    """The arguments of one unseen call: plain data, or the check's own argument where an :class:`Argument` stood."""
    def one(item: Any) -> Any:
        if isinstance(item, dict) and item.get("kind") == "argument":
            return values[int(item["index"])]
        return plain(item)

    return tuple(one(item) for item in call_args["items"])


def _swap(value: Any, encoded: Any, recorders: dict) -> Any:
    """``value`` with each learner function replaced by its recorder (as :func:`encode` numbered them)."""
    if isinstance(encoded, dict) and encoded.get("kind") == "callable":
        return recorders[encoded["id"]]
    if isinstance(encoded, dict) and encoded.get("kind") in ("tuple", "list") and isinstance(value, (tuple, list)):
        items = [_swap(v, e, recorders) for v, e in zip(value, encoded["items"])]
        if hasattr(value, "_fields"):
            return type(value)(*items)
        return type(value)(items) if isinstance(value, list) else tuple(items)
    if isinstance(encoded, dict) and encoded.get("kind") == "dict" and isinstance(value, dict):
        return {k: _swap(v, e[1], recorders) for (k, v), e in zip(value.items(), encoded["items"])}
    if isinstance(encoded, dict) and encoded.get("kind") == "partial" and isinstance(value, functools.partial):
        return functools.partial(_swap(value.func, encoded["func"], recorders), *value.args, **value.keywords)
    return value


def _write(path: str, out: dict) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f)
