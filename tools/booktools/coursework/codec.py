"""Values back from the JSON data :mod:`booktools.coursework.harness` writes, in the trusted verdict runner.

Reading never executes anything from the data: numbers, strings and containers
are rebuilt; arrays are rebuilt from their values (JAX arrays on a mesh of the
verdict runner's own devices, with the layout described); a function of the book's
helper package is imported by name (``parallel_mcmc.*`` only); a dataclass only
if it is one of the helper package's; a learner's function becomes a
:class:`Replay` that answers from the record of its calls. Anything else is
refused with :class:`ForgedData`, or kept as an inert placeholder.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import functools
import importlib
import sys
from typing import Any

import numpy as np

from parallel_mcmc.exercises import record_type

from .harness import key_of, plain

__all__ = ["ForgedData", "Replay", "decode", "LIMIT_BYTES"]

LIMIT_BYTES = 64 * 2**20  # an observation file larger than this is refused
_MAX_DEPTH = 40
_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "bfloat16", "float32", "float64", "complex64", "complex128"}


class ForgedData(BaseException):
    """The observation is not what the harness writes: it is refused, never executed.

    A ``BaseException``, so that no check's ``except Exception`` (nor
    :func:`parallel_mcmc.exercises.call`) mistakes it for the learner's own error.
    """


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise ForgedData(what)


def _exception(record: dict) -> BaseException:
    """An exception like the one the learner's code raised, of a class made here (never imported)."""
    name, module, text = str(record.get("ename", "Exception")), str(record.get("emodule", "")), str(record.get("evalue", ""))
    base = getattr(builtins, name, None)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = Exception
    cls = type(name, (base,), {"__str__": lambda self: text, "__module__": module or "builtins"})
    return cls(text)


class Replay:
    """A learner's function as recorded in the sandbox: answers each recorded call again, and only those."""

    coursework_stands_for = "callable"

    def __init__(self, ident: int, name: str, picklable: bool, record: dict, devices: Any,
                 module: str = "__main__") -> None:
        self.id, self.name, self.picklable, self.module = ident, name, picklable, module
        self.__qualname__ = self.__name__ = name
        self.__module__ = module
        self._calls = record.get("calls", {}) if isinstance(record, dict) else {}
        self._programs = record.get("programs", {}) if isinstance(record, dict) else {}
        self._devices = devices

    def _answer(self, found: Any, what: str) -> Any:
        if found is None:
            raise ForgedData(f"the sandbox has no record of {self.name}{what}: the submission changed how its "
                             "function was called, or the record was forged")
        if found.get("printed"):
            sys.stdout.write(str(found["printed"]))
        if found.get("kind") == "raised":
            raise _exception(found)
        _need(found.get("kind") == "returned", "a call record is neither a result nor an exception")
        return found.get("value")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return decode(self._answer(self._calls.get(key_of(args, kwargs)), "(...)"), self._devices)

    def traced_program(self, *args: Any) -> Any:
        program = self._answer(self._programs.get(key_of(args, {})), " traced")
        _need(isinstance(program, list), "a traced program must be a list of operations")
        return program

    def __reduce__(self):
        if not self.picklable:
            raise TypeError(f"cannot pickle {self.name!r}: a lambda or a function defined inside another one")
        return (str, (f"function {self.name} of the notebook",))

    def __repr__(self) -> str:
        return f"<function {self.name} (recorded in the sandbox)>"


record_type(Replay)  # parallel_mcmc.exercises.traced_program asks the replay


def _array(data: dict) -> np.ndarray:
    dtype = str(data.get("dtype"))
    _need(dtype in _DTYPES, f"unknown dtype {dtype!r}")
    shape = data.get("shape")
    _need(isinstance(shape, list) and all(isinstance(n, int) and 0 <= n < 2**31 for n in shape), "bad shape")
    _need(int(np.prod(shape, dtype=np.int64)) <= 50_000_000, "array too large")
    values = np.array(_unfloat(data.get("data")), dtype=np.float64 if dtype == "bfloat16" else np.dtype(dtype))
    _need(values.size == int(np.prod(shape, dtype=np.int64)), "array data does not fill its shape")
    values = values.reshape(shape)
    if dtype == "bfloat16":
        import jax.numpy as jnp

        values = np.asarray(jnp.asarray(values, dtype=jnp.bfloat16))
    return values


def _unfloat(data: Any) -> Any:
    if isinstance(data, list):
        return [_unfloat(d) for d in data]
    if isinstance(data, dict):
        _need(set(data) == {"float"} and data["float"] in ("nan", "inf", "-inf"), "bad float")
        return float(data["float"])
    _need(isinstance(data, (int, float, bool)), "array data must be numbers")
    return data


def _device(ident: Any):
    import jax

    by_id = {d.id: d for d in jax.devices()}
    _need(isinstance(ident, int) and ident in by_id, f"no device {ident!r} here")
    return by_id[ident]


def _mesh(data: dict):
    import jax

    shape, names, types = data.get("shape"), data.get("names"), data.get("types") or []
    _need(isinstance(names, list) and all(isinstance(n, str) for n in names), "bad mesh axis names")
    devices = np.array([_device(i) for i in data.get("devices", [])], dtype=object)
    _need(isinstance(shape, list) and devices.size == int(np.prod(shape)) and len(shape) == len(names), "bad mesh")
    kinds = {"Explicit": jax.sharding.AxisType.Explicit, "Auto": jax.sharding.AxisType.Auto,
             "Manual": jax.sharding.AxisType.Manual}
    _need(all(t in kinds for t in types) and len(types) in (0, len(names)), "bad mesh axis types")
    axis_types = tuple(kinds[t] for t in types) or None
    return jax.sharding.Mesh(devices.reshape(shape), tuple(names), axis_types=axis_types)


def _spec(entries: Any):
    import jax

    _need(isinstance(entries, list), "bad PartitionSpec")
    out = []
    for e in entries:
        _need(e is None or isinstance(e, str) or isinstance(e, list) and all(isinstance(x, str) for x in e), "bad spec entry")
        out.append(tuple(e) if isinstance(e, list) else e)
    return jax.P(*out)


def _jax_array(data: dict):
    import jax

    host = _array(data)
    sharding = data.get("sharding") or {}
    kind = sharding.get("type")
    if "key_impl" in data:
        _need(str(data["key_impl"]) in ("threefry2x32", "rbg", "unsafe_rbg"), "unknown PRNG implementation")
    if kind == "named":
        mesh = _mesh(sharding.get("mesh") or {})
        out = jax.device_put(host, jax.NamedSharding(mesh, _spec(sharding.get("spec"))))
    elif kind == "single":
        out = jax.device_put(host, _device(sharding.get("device"))) if sharding.get("committed", True) else jax.numpy.asarray(host)
    else:
        raise ForgedData(f"a layout the verdict runner cannot rebuild ({sharding.get('name', kind)})")
    if "key_impl" in data:
        out = jax.random.wrap_key_data(out, impl=str(data["key_impl"]))
    return out


# The helper package's modules whose functions and classes the verdict runner may call with values a submission chose
# (as a pool's initializer, say): pure functions of their arguments. Anything else named by a submission
# becomes a stand-in that refuses to run.
CALLABLE_MODULES = ("parallel_mcmc.pools.workers", "parallel_mcmc.models", "parallel_mcmc.measure.timing",
                    "parallel_mcmc.measure.cores", "parallel_mcmc.measure.prediction",
                    "parallel_mcmc.measure.model", "parallel_mcmc.measure.queue", "parallel_mcmc.measure.calibrate")


class _Refused:
    """A function of the helper package the verdict runner will not run on a submission's behalf."""

    def __init__(self, module: str, qualname: str) -> None:
        self.__module__, self.__qualname__, self.__name__ = module, qualname, qualname.rsplit(".", 1)[-1]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise ForgedData(f"the verdict runner does not run {self.__module__}.{self.__qualname__} for a submission")

    def __reduce__(self):
        raise TypeError(f"{self.__qualname__} is not run by the grader")


def _ref(data: dict) -> Any:
    """A function or class of the helper package, by name: only one defined where it is named, and only
    from :data:`CALLABLE_MODULES`; other names of the package give a :class:`_Refused` stand-in."""
    module, qualname = str(data.get("module", "")), str(data.get("qualname", ""))
    _need(module.startswith("parallel_mcmc.") and all(p.isidentifier() and not p.startswith("_") for p in qualname.split(".")),
          f"only the helper package's public functions are looked up by name, not {module}.{qualname}")
    if not any(module == m or module.startswith(m + ".") for m in CALLABLE_MODULES):
        return _Refused(module, qualname)
    found: Any = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    _need(found is not None and getattr(found, "__module__", None) == module
          and getattr(found, "__qualname__", None) == qualname,
          f"{module}.{qualname} is not defined there (only what a module defines is looked up, not what it imports)")
    return found


class _Opaque:
    """An object that was neither data nor a function: kept only by its type's name."""

    def __init__(self, type_name: str, text: str) -> None:
        self.type_name, self.text = type_name, text

    def __repr__(self) -> str:
        return self.text or f"<{self.type_name}>"


def decode(data: Any, devices: Any = None, records: dict | None = None, depth: int = 0) -> Any:
    """The value an observation describes (see the module's docstring); :class:`ForgedData` if malformed."""
    _need(depth <= _MAX_DEPTH, "too deeply nested")
    if data is None or isinstance(data, (bool, int, float, str)):
        return data
    _need(isinstance(data, dict) and isinstance(data.get("kind"), str), "unknown value")
    kind = data["kind"]
    again = functools.partial(decode, devices=devices, records=records, depth=depth + 1)
    if kind in ("float", "bigint", "ndarray", "npscalar"):
        if kind in ("ndarray", "npscalar"):
            values = _array(data)
            return values[()] if kind == "npscalar" else values
        try:
            return plain(data)
        except ValueError as err:
            raise ForgedData(str(err)) from None
    if kind == "jax":
        return _jax_array(data)
    if kind == "pspec":
        return _spec(data.get("entries"))
    if kind == "mesh":
        return _mesh(data)
    if kind == "device":
        return _device(data.get("id"))
    if kind in ("tuple", "list", "set"):
        items = [again(v) for v in data.get("items", [])]
        return tuple(items) if kind == "tuple" else set(items) if kind == "set" else items
    if kind == "dict":
        pairs = data.get("items", [])
        _need(all(isinstance(p, list) and len(p) == 2 for p in pairs), "bad dict")
        return {again(k): again(v) for k, v in pairs}
    if kind == "namedtuple":
        fields = data.get("fields", [])
        _need(all(isinstance(f, list) and len(f) == 2 and str(f[0]).isidentifier() for f in fields), "bad namedtuple")
        name = str(data.get("type", "Record")).split(".")[-1]
        cls = collections.namedtuple(name if name.isidentifier() else "Record", [f[0] for f in fields])
        cls.__qualname__ = str(data.get("type", name))
        return cls(*[again(v) for _, v in fields])
    if kind == "partial":
        return functools.partial(again(data.get("func")), *[again(v) for v in data.get("args", [])],
                                 **{str(k): again(v) for k, v in data.get("keywords", [])})
    if kind == "ref":
        return _ref(data)
    if kind == "dataclass":
        cls = _ref(data)
        _need(dataclasses.is_dataclass(cls) and isinstance(cls, type), "not a dataclass of the helper package")
        fields = {str(k): again(v) for k, v in data.get("fields", [])}
        _need(set(fields) == {f.name for f in dataclasses.fields(cls)}, "the dataclass's fields do not match")
        return cls(**fields)
    if kind == "callable":
        ident = data.get("id")
        _need(isinstance(ident, int), "bad function id")
        record = (records or {}).get(str(ident), {})
        return Replay(ident, str(data.get("name", "function"))[:200], bool(data.get("picklable", True)), record, devices,
                      str(data.get("module", "__main__"))[:200])
    if kind == "ellipsis":
        return Ellipsis
    if kind == "opaque":  # an instance of a class of its own, named like the original's type
        type_name = str(data.get("type", "object"))[:200]
        short = type_name.rsplit(".", 1)[-1]
        cls = type(short if short.isidentifier() else "object", (_Opaque,), {})
        return cls(type_name, str(data.get("repr", ""))[:200])
    raise ForgedData(f"unknown kind of value {kind!r}")
