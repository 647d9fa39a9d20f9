"""Reading a compiled program: its collectives with their sizes, its while-loops, and what their conditions do.

``jax.jit(f).lower(*args).compile().as_text()`` is the program XLA will run,
after every pass (sharding, fusion, ``vmap``'s rewriting of loops). A few
questions come back on every parallel page, and this module answers them from
that text:

- :func:`collectives`: which collectives the program runs (``all-reduce``,
  ``all-gather``, ...), on what shape, how many bytes, over groups of how
  many devices, and in which computation (inside a loop body, they run every
  iteration);
- :func:`while_loops`: every ``while``, with its condition and body;
- :func:`condition_ops`: the operations a loop's condition runs, the
  computations it calls included. A ``vmap`` of a ``while_loop`` whose
  predicate differs between the batch members ends in ``reduce`` with ``or``:
  the loop runs while *any* member wants to;
- :func:`partitions`: the operations XLA's CPU backend split into pieces that
  its threads run at once (``outer_dimension_partitions``).

It reads text: no JAX import, and it works on any ``as_text()`` output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["COLLECTIVES", "Instruction", "Collective", "WhileLoop", "shape_bytes", "computations", "collectives",
           "while_loops", "condition_ops", "partitions"]

#: The collective operations of XLA's HLO (the asynchronous ``-start`` halves count as the operation itself).
COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute",
               "collective-broadcast")

_BYTES = {"pred": 1, "s8": 1, "u8": 1, "s16": 2, "u16": 2, "f16": 2, "bf16": 2, "s32": 4, "u32": 4, "f32": 4,
          "s64": 8, "u64": 8, "f64": 8, "c64": 8, "c128": 16}
_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*(\([^=]*?\)|\S+)\s+([\w\-]+)\((.*)$")
_COMMENT = re.compile(r"/\*.*?\*/")
_ARRAY = re.compile(r"\b([a-z]+\d*)\[([\d,]*)\]")


@dataclass(frozen=True)
class Instruction:
    """One instruction of a computation: its name, result shape (as written), opcode and the rest of its line.

    Parameters
    ----------
    name : str
        The instruction's name.
    shape : str
        Its result shape, as written.
    opcode : str
        Its opcode.
    rest : str
        The rest of its line.
    """

    name: str
    shape: str
    opcode: str
    rest: str

    def calls(self) -> list[str]:
        """The computations this instruction calls (``calls=``, ``to_apply=``, ``condition=``, ``body=``).

        Returns
        -------
        list of str
            The names of the called computations.
        """
        return re.findall(r"(?:calls|to_apply|condition|body)=%?([\w.\-]+)", self.rest)


@dataclass(frozen=True)
class Collective:
    """A collective of the program.

    Parameters
    ----------
    name, shape : str
        The instruction's name and result shape, as in :class:`Instruction`.
    kind : str
        ``all-reduce``, ...
    bytes : int
        Its bytes.
    computation : str
        The computation it sits in.
    in_loop : bool
        Whether that computation is a while-loop's body.
    group_size : int
        The devices in each of its groups (``replica_groups``, written out as ``{{0,1},{2,3}}``, compactly as
        ``[2,4]<=[8]``, or by mesh axes); on a mesh, the size tells which axes it spans. 0 where the line
        gives none.
    """

    name: str
    kind: str
    shape: str
    bytes: int
    computation: str
    in_loop: bool
    group_size: int = 0


@dataclass(frozen=True)
class WhileLoop:
    """A ``while`` instruction: where it is, its condition and body computations, and its carried shape.

    Parameters
    ----------
    name, computation : str
        Where it is, as for a :class:`Collective`.
    condition : str
        Its condition computation.
    body : str
        Its body computation.
    shape : str
        The shape it carries.
    """

    name: str
    computation: str
    condition: str
    body: str
    shape: str


def shape_bytes(shape: str) -> int:
    """Bytes of an HLO shape such as ``f32[8,4]{1,0}`` or a tuple ``(f32[2], s32[])``.

    Parameters
    ----------
    shape : str
        HLO shape text.

    Returns
    -------
    int
        Its bytes.

    Raises
    ------
    TypeError
        If ``shape`` is not a string.
    """
    if not isinstance(shape, str):
        raise TypeError(f"shape must be HLO shape text such as 'f32[8,4]', got {type(shape).__name__}.")
    total = 0
    for dtype, dims in _ARRAY.findall(shape):
        if dtype not in _BYTES:
            continue
        size = 1
        for d in filter(None, dims.split(",")):
            size *= int(d)
        total += size * _BYTES[dtype]
    return total


def computations(text: str) -> dict[str, list[Instruction]]:
    """The program's computations by name, each a list of its instructions (the ``ENTRY`` one under its name).

    Parameters
    ----------
    text : str
        The compiled program's text (``jax.jit(f).lower(*args).compile().as_text()``).

    Returns
    -------
    dict of str to list of parallel_mcmc.measure.hlo.Instruction
        Each computation's instructions, by name.

    Raises
    ------
    ValueError
        If ``text`` is not the text of a compiled program.
    """
    if not isinstance(text, str) or "HloModule" not in text:
        raise ValueError("expected the text of a compiled program: jax.jit(f).lower(*args).compile().as_text().")
    found: dict[str, list[Instruction]] = {}
    current: list[Instruction] | None = None
    for line in text.splitlines():
        line = _COMMENT.sub("", line)  # a long tuple's shape numbers its parts: (f32[], /*index=5*/f32[512])
        header = _HEADER.match(line)
        if header:
            current = found.setdefault(header.group(1), [])
            continue
        if line.strip() == "}":
            current = None
            continue
        if current is not None:
            m = _INSTRUCTION.match(line)
            if m:
                current.append(Instruction(*m.groups()))
    return found


def _kind(opcode: str) -> str | None:
    base = opcode.removesuffix("-start")
    return base if base in COLLECTIVES else None


def _group_size(rest: str) -> int:
    """The devices in one replica group of a collective's line (0 where it names none)."""
    m = re.search(r"replica_groups=(\{\{[^}]*\}|\[[\d,]*\]<=|mesh\[[^\]]*\] \{[^}]*\})", rest)
    if m is None:
        return 0
    groups = m.group(1)
    if groups.startswith("{{"):  # written out: {{0,1,2,3},{4,5,6,7}}
        return len(groups[2:].rstrip("}").split(","))
    if groups.startswith("["):  # compact: [number of groups, group size]<=[...]
        return int(groups[1:].split("]")[0].split(",")[-1])
    sizes = dict(re.findall(r"'(\w+)'=(\d+)", groups))  # by mesh axes: mesh['a'=2,'b'=4] {'a'}
    size = 1
    for axis in re.findall(r"'(\w+)'", groups.split("{")[1]):
        size *= int(sizes[axis])
    return size


def _bodies(comps: dict[str, list[Instruction]]) -> set[str]:
    """The while bodies and everything they call."""
    inside: set[str] = set()
    todo = [i.rest for instrs in comps.values() for i in instrs if i.opcode == "while"]
    todo = [b for rest in todo for b in re.findall(r"body=%?([\w.\-]+)", rest)]
    while todo:
        name = todo.pop()
        if name in inside or name not in comps:
            continue
        inside.add(name)
        todo.extend(c for i in comps[name] for c in i.calls())
    return inside


def collectives(text: str) -> list[Collective]:
    """Every collective in the compiled program ``text``, in order, with its size and whether it runs in a loop.

    Parameters
    ----------
    text : str
        The compiled program's text, as for :func:`computations`.

    Returns
    -------
    list of parallel_mcmc.measure.hlo.Collective
        The collectives, in order.
    """
    comps = computations(text)
    looped = _bodies(comps)
    return [Collective(i.name, kind, i.shape, shape_bytes(i.shape), comp, comp in looped, _group_size(i.rest))
            for comp, instrs in comps.items() for i in instrs if (kind := _kind(i.opcode))]


def while_loops(text: str) -> list[WhileLoop]:
    """Every ``while`` of the compiled program ``text``: its condition, its body and the shape it carries.

    Parameters
    ----------
    text : str
        The program's text, as :func:`computations` reads it.

    Returns
    -------
    list of parallel_mcmc.measure.hlo.WhileLoop
        The loops, in order.
    """
    loops = []
    for comp, instrs in computations(text).items():
        for i in instrs:
            if i.opcode == "while":
                cond = re.search(r"condition=%?([\w.\-]+)", i.rest)
                body = re.search(r"body=%?([\w.\-]+)", i.rest)
                loops.append(WhileLoop(i.name, comp, cond.group(1) if cond else "", body.group(1) if body else "",
                                       i.shape))
    return loops


def condition_ops(text: str, loop: WhileLoop | str) -> list[str]:
    """The opcodes a loop's condition runs, called computations included (a ``reduce`` with its combiner's
    opcodes after it), without parameters, constants and tuple plumbing.

    Parameters
    ----------
    text : str
        The same text as :func:`computations` takes.
    loop : parallel_mcmc.measure.hlo.WhileLoop or str
        The loop, or its name.

    Returns
    -------
    list of str
        The opcodes, in order.

    Raises
    ------
    KeyError
        If there is no while named ``loop``.
    """
    comps = computations(text)
    if isinstance(loop, str):
        named = [w for w in while_loops(text) if w.name == loop]
        if not named:
            raise KeyError(f"no while named {loop!r}; the loops are {[w.name for w in while_loops(text)]}.")
        loop = named[0]
    plumbing = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "copy"}
    ops: list[str] = []

    def walk(name: str, seen: frozenset) -> None:
        for i in comps.get(name, []):
            if i.opcode not in plumbing and i.opcode != "fusion":
                ops.append(i.opcode)
            for called in i.calls():
                if called not in seen:
                    walk(called, seen | {called})

    walk(loop.condition, frozenset({loop.condition}))
    return ops


def partitions(text: str) -> dict[str, int]:
    """The operations XLA's CPU backend cut into pieces for its threads: ``{name: pieces}`` (pieces above 1).

    Parameters
    ----------
    text : str
        See :func:`computations`.

    Returns
    -------
    dict of str to int
        ``{name: pieces}`` of the operations cut into more than one piece.
    """
    cut = {}
    for instrs in computations(text).values():
        for i in instrs:
            m = re.search(r'"outer_dimension_partitions":\[([^\]]*)\]', i.rest)
            if m:
                pieces = 1
                for p in re.findall(r'"?(\d+)"?', m.group(1)):
                    pieces *= int(p)
                if pieces > 1:
                    cut[i.name] = pieces
    return cut
