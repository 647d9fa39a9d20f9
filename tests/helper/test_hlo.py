"""parallel_mcmc.measure.hlo reads compiled programs: collectives with sizes, while-loops, conditions, partitions."""

import jax
import jax.numpy as jnp
import pytest

from parallel_mcmc.measure import hlo


def test_shape_bytes():
    assert hlo.shape_bytes("f32[8,4]{1,0}") == 128
    assert hlo.shape_bytes("(f32[], s32[3])") == 16
    assert hlo.shape_bytes("pred[]") == 1
    with pytest.raises(TypeError):
        hlo.shape_bytes(3)


def test_not_a_program_is_refused():
    with pytest.raises(ValueError, match="compiled program"):
        hlo.computations("f32[2] add(x, y)")


def test_a_loop_with_a_collective():
    mesh = jax.make_mesh((1,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))

    def body(i, x):
        return x + jax.lax.psum(x.sum(), "d")

    f = jax.jit(jax.shard_map(lambda x: jax.lax.fori_loop(0, 5, body, x), mesh=mesh, in_specs=jax.P("d"),
                              out_specs=jax.P("d")))
    text = f.lower(jnp.ones(4)).compile().as_text()
    loops = hlo.while_loops(text)
    assert len(loops) == 1 and loops[0].condition and loops[0].body
    assert hlo.condition_ops(text, loops[0]) == ["compare"]
    assert hlo.condition_ops(text, loops[0].name) == ["compare"]
    with pytest.raises(KeyError):
        hlo.condition_ops(text, "nothing")
    found = hlo.collectives(text)
    # one device: XLA may drop the all-reduce; where it keeps it, it is in the loop and has 4 bytes
    assert all(c.in_loop and c.bytes == 4 and c.kind == "all-reduce" for c in found)


def test_vmap_of_a_while_loop_waits_for_any_member():
    def double_until(limit):
        return jax.lax.while_loop(lambda c: c[1] < limit, lambda c: (c[0] + 1, 2.0 * c[1]), (0, 1.0))[0]

    one = jax.jit(double_until).lower(3.0).compile().as_text()
    batched = jax.jit(jax.vmap(double_until)).lower(jnp.arange(1.0, 5.0)).compile().as_text()
    assert "or" not in hlo.condition_ops(one, hlo.while_loops(one)[0])
    assert {"reduce", "or"} <= set(hlo.condition_ops(batched, hlo.while_loops(batched)[0]))


def test_collectives_and_partitions_from_text():
    text = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%body (p: (s32[], f32[16])) -> (s32[], f32[16]) {
  %p = (s32[], f32[16]{0}) parameter(0)
  %x = f32[16]{0} get-tuple-element(%p), index=1
  %ar = f32[16]{0} all-reduce(%x), replica_groups={{0,1}}, to_apply=%add
  %i = s32[] get-tuple-element(%p), index=0
  ROOT %t = (s32[], f32[16]{0}) tuple(%i, %ar)
}

%cond (q: (s32[], f32[16])) -> pred[] {
  %q = (s32[], f32[16]{0}) parameter(0)
  %j = s32[] get-tuple-element(%q), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%j, %n), direction=LT
}

ENTRY %main (x: f32[16]) -> (s32[], f32[16]) {
  %x0 = f32[16]{0} parameter(0)
  %big = f32[16]{0} fusion(%x0), kind=kLoop, calls=%add, backend_config={"outer_dimension_partitions":["2"]}
  %ag = f32[32]{0} all-gather(%big), dimensions={0}
  %z = s32[] constant(0)
  %init = (s32[], f32[16]{0}) tuple(%z, %big)
  ROOT %w = (s32[], f32[16]{0}) while(%init), condition=%cond, body=%body
}
"""
    found = {c.name: c for c in hlo.collectives(text)}
    assert found["ar"].kind == "all-reduce" and found["ar"].bytes == 64 and found["ar"].in_loop
    assert found["ag"].kind == "all-gather" and found["ag"].bytes == 128 and not found["ag"].in_loop
    assert hlo.partitions(text) == {"big": 2}
    (loop,) = hlo.while_loops(text)
    assert (loop.condition, loop.body, loop.computation) == ("cond", "body", "main")
    assert hlo.condition_ops(text, loop) == ["compare"]
    assert found["ar"].group_size == 2 and found["ag"].group_size == 0  # the all-gather's line names no groups


@pytest.mark.parametrize("groups, size", [
    ("replica_groups={{0,1,2,3},{4,5,6,7}}", 4),
    ("replica_groups={{0,4},{1,5},{2,6},{3,7}}", 2),
    ("replica_groups=[2,4]<=[8]", 4),
    ("replica_groups=[4,2]<=[2,4]T(1,0)", 2),
    ("replica_groups=mesh['data'=2,'model'=4] {'model'}", 4),
    ("replica_groups=mesh['data'=2,'model'=4] {'data','model'}", 8),
])
def test_the_size_of_a_collectives_groups_in_each_way_xla_writes_them(groups, size):
    text = ("HloModule m\n\nENTRY %main (x: f32[8]) -> f32[8] {\n  %x = f32[8]{0} parameter(0)\n"
            f"  ROOT %ar = f32[8]{{0}} all-reduce(%x), channel_id=1, {groups}, use_global_device_ids=true, to_apply=%add\n}}\n")
    (c,) = hlo.collectives(text)
    assert c.group_size == size, (groups, c)


def test_a_real_program_gives_the_mesh_axis_of_each_collective():
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((2, 4), ("data", "model"))
    x = jax.device_put(jnp.ones((8, 16)), NamedSharding(mesh, P("data", "model")))
    program = jax.jit(lambda a: a.sum(axis=0)).lower(x).compile().as_text()  # sums over the rows: over "data"
    sizes = {c.group_size for c in hlo.collectives(program)}
    assert sizes == {2}, hlo.collectives(program)


def test_a_loop_whose_tuple_shape_numbers_its_parts():
    """XLA numbers the parts of a long tuple (``/*index=5*/``): the loop and the collective in its body are found."""
    text = """HloModule m

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%body (p: (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4])) -> (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]) {
  %p = (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]{0}) parameter(0)
  %x = f32[4]{0} get-tuple-element(%p), index=5
  %ar = f32[4]{0} all-reduce(%x), replica_groups={{0,1}}, to_apply=%add
  ROOT %t = (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]{0}) tuple(%p, %p, %p, %p, %p, %ar)
}

%cond (q: (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4])) -> pred[] {
  %q = (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]{0}) parameter(0)
  ROOT %lt = pred[] constant(false)
}

ENTRY %main (x: (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4])) -> (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]) {
  %x0 = (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]{0}) parameter(0)
  ROOT %w = (s32[], f32[], f32[], f32[], f32[], /*index=5*/f32[4]{0}) while(%x0), condition=%cond, body=%body
}
"""
    (loop,) = hlo.while_loops(text)
    assert (loop.condition, loop.body, loop.computation) == ("cond", "body", "main")
    (ar,) = hlo.collectives(text)
    assert ar.kind == "all-reduce" and ar.in_loop and ar.bytes == 16
