"""The checks of the chapter on multi-process JAX accept the solutions and reject wrong answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from parallel_mcmc.exercises import beyond_one_machine as check
from parallel_mcmc.exercises.beyond_one_machine import ex_processes_group_size


def my_chains(process_id, num_processes, num_chains):
    if num_chains % num_processes:
        raise ValueError("uneven")
    per = num_chains // num_processes
    return list(range(process_id * per, (process_id + 1) * per))


def test_my_chains_accepts_the_solution(capsys):
    check.my_chains(my_chains)
    assert "my_chains: correct" in capsys.readouterr().out


def test_my_chains_rejects_interleaved_chains():
    with pytest.raises(AssertionError, match="contiguous block"):
        check.my_chains(lambda pid, n, c: list(range(pid, c, n)))


def test_my_chains_rejects_an_off_by_one_block():
    def off_by_one(pid, n, c):
        per = c // n
        return list(range(pid * per, (pid + 1) * per + 1))

    with pytest.raises(AssertionError, match="block of"):
        check.my_chains(off_by_one)


def test_my_chains_requires_an_error_for_uneven_splits():
    def silent(pid, n, c):
        per = c // n
        return list(range(pid * per, (pid + 1) * per))

    with pytest.raises(AssertionError, match="raise a ValueError"):
        check.my_chains(silent)


def test_my_chains_rejects_a_non_function():
    with pytest.raises(AssertionError, match="function itself"):
        check.my_chains([0, 1])


def _best(draws, base, per_process, per_draw, cores, most):
    return min(range(1, most + 1), key=lambda p: base + p * per_process + draws * per_draw / min(p, cores))


def test_best_group_accepts_the_search(capsys):
    check.best_group(_best)
    check.best_group(lambda *a: np.int64(_best(*a)))
    assert capsys.readouterr().out.count("best_group: correct") == 2


@pytest.mark.parametrize("wrong, message", [
    (lambda d, b, pp, pd, c, m: m, "processes take"),
    (lambda d, b, pp, pd, c, m: _best(d, b, 0.0, pd, c, m), "as if more processes started no slower"),
    (lambda d, b, pp, pd, c, m: _best(d, b, pp, pd, 1e12, m), "more processes than"),
    (lambda d, b, pp, pd, c, m: 1, "processes take"),
    (lambda d, b, pp, pd, c, m: 2.5, "whole number"),
])
def test_best_group_rejects_wrong_answers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.best_group(wrong)
    with pytest.raises(AssertionError, match="function itself"):
        check.best_group(2)


def test_best_group_compares_with_the_answers_of_its_cases():
    """The check holds no way to find the best group: its cases carry their answers (the grader's come
    from its references), so an answer given with them decides."""
    assert not hasattr(check, "_best_group")
    assert all(want == _best(*args) for args, want in ex_processes_group_size.CASES)
    case = ((40_000, 2.0, 1.0, 1e-4, 8, 16), 2)
    check.best_group(lambda *a: 2, cases=[case])
    with pytest.raises(AssertionError, match="3 processes take"):
        check.best_group(lambda *a: 2, cases=[(case[0], 3)])


def test_my_chains_names_swapped_arguments_and_own_errors():
    def swapped(num_processes, process_id, num_chains):
        return my_chains(process_id, num_processes, num_chains)

    with pytest.raises(AssertionError, match=r"\(process_id, num_processes, num_chains\)"):
        check.my_chains(lambda p, n, c: my_chains(n, p, c) if p else my_chains(p, n, c))
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        check.my_chains(swapped)
    with pytest.raises(AssertionError, match="raised TypeError: uneven.*say so with a ValueError"):
        check.my_chains(lambda p, n, c: (_ for _ in ()).throw(TypeError("uneven")) if c % n else my_chains(p, n, c))


def test_combine_accepts_the_solution(capsys):
    check.combine_chains(lambda parts: np.concatenate(parts, axis=0))
    assert "combine_chains: correct" in capsys.readouterr().out


@pytest.mark.parametrize(
    "wrong, message",
    [
        (lambda parts: np.stack(parts), "added an axis"),
        (lambda parts: np.concatenate(parts, axis=1), "draws axis"),
        (lambda parts: np.concatenate(parts[::-1], axis=0), "out of order"),
        (lambda parts: np.concatenate(parts, axis=0).reshape(-1, 3), "expected"),
    ],
)
def test_combine_rejects_wrong_joins(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.combine_chains(wrong)


def test_combine_accepts_a_float32_jnp_concatenation(capsys):
    import jax.numpy as jnp

    check.combine_chains(lambda parts: jnp.concatenate([jnp.asarray(p) for p in parts]))
    assert "combine_chains: correct" in capsys.readouterr().out


def test_combine_on_unseen_sizes():
    check.combine_chains(lambda parts: np.concatenate(parts), cases=[(5, 1, 1)], seed=9)
    with pytest.raises(AssertionError, match="out of order"):
        check.combine_chains(lambda parts: np.concatenate(parts[::-1]), cases=[(2, 2, 2)], seed=9)


# ---------------------------------------------------------------- job_header


def _header(nodes, gpus, cores, draws, per_draw, start_up, margin, *, time=None, gpu_line=None, cpus=None,
            tasks_line=None):
    minutes = math.ceil((start_up + draws * per_draw) * (1 + margin) / 60)
    lines = [f"#SBATCH --nodes={nodes}",
             tasks_line or f"#SBATCH --ntasks-per-node={gpus}",
             gpu_line or f"#SBATCH --gpus-per-node={gpus}",
             f"#SBATCH --cpus-per-task={cores // gpus if cpus is None else cpus}",
             f"#SBATCH --time={minutes if time is None else time(minutes, start_up, draws, per_draw, margin)}"]
    return "\n".join(line for line in lines if line)


def test_job_header_accepts_every_time_format_and_the_gres_form(capsys):
    check.job_header(_header)
    check.job_header(lambda *a: _header(*a, time=lambda m, *_: f"{m // 60:02d}:{m % 60:02d}:00"))
    check.job_header(lambda *a: _header(*a, time=lambda m, *_: f"{m // 1440}-{m % 1440 // 60}:{m % 60:02d}"))
    check.job_header(lambda *a: _header(*a, gpu_line=f"#SBATCH --gres=gpu:a100:{a[1]}"))
    check.job_header(lambda n, g, *rest: "#!/bin/bash\n" + _header(n, g, *rest).replace("--nodes=", "-N ")
                     + f"\n#SBATCH --ntasks={n * g} --job-name=chains\nsrun python -m parallel_mcmc.programs.slurm_chains")
    assert capsys.readouterr().out.count("job_header: correct") == 5


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: _header(*a, gpu_line=f"#SBATCH --gpus-per-task=1"), "gpus-per-task"),
    (lambda *a: _header(*a, gpu_line=f"#SBATCH --gpus={a[0] * a[1]}"), "spread unevenly"),
    (lambda *a: _header(*a, gpu_line=" "), "no GPU"),
    (lambda *a: _header(*a, tasks_line="#SBATCH --ntasks-per-node=1"), "one task per node"),
    (lambda *a: _header(*a, tasks_line=f"#SBATCH --ntasks={a[0] * a[1]}"), "not --ntasks-per-node"),
    (lambda *a: _header(*a, cpus=1), "one core"),
    (lambda *a: _header(*a, cpus=a[2]), "never start"),
    (lambda *a: _header(*a, time=lambda m, s, d, pd, mg: math.ceil((s + d * pd) / 60)), "without the margin"),
    (lambda *a: _header(*a, time=lambda m, s, d, pd, mg: math.ceil(d * pd * (1 + mg) / 60)), "without the start-up"),
    (lambda *a: _header(*a, time=lambda m, s, d, pd, mg: math.floor((s + d * pd) * (1 + mg) / 60)), "rounded down"),
    (lambda *a: _header(*a, time=lambda m, *_: m + 60), "more than it needs"),
    (lambda *a: _header(*a, time=lambda m, *_: '"1 hour"'), "not a SLURM time limit"),
    (lambda *a: _header(*a).replace("--nodes", "--nodes-wanted"), "--nodes"),
    (lambda *a: "srun python -m x\n" + _header(*a), "first command"),
    (lambda *a: {"--nodes": a[0]}, "one string"),
])
def test_job_header_rejects_wrong_headers(wrong, message):
    with pytest.raises(AssertionError, match=message):
        check.job_header(wrong)


def test_job_header_rejects_a_non_function_and_reads_time_like_slurm():
    with pytest.raises(AssertionError, match="function itself"):
        check.job_header("#SBATCH --nodes=2")
    assert [check.slurm_seconds(t) for t in ("90", "90:30", "1:30:00", "2-3", "2-03:10", "1-00:00:05")] == [
        5400, 5430, 5400, 183600, 184200, 86405]
    with pytest.raises(ValueError, match="SLURM time limit"):
        check.slurm_seconds("1:2:3:4")
    assert check.sbatch_header_options("#SBATCH -c 4 --time 10\necho\n#SBATCH --nodes=9") == {
        "--cpus-per-task": "4", "--time": "10"}


# ---------------------------------------------------------------- more mistakes, and answers of the wrong type


def test_my_chains_names_the_bounds_of_the_block_and_an_assert_for_uneven_splits():
    with pytest.raises(AssertionError, match=r"bounds of the block \(start, stop\)"):
        check.my_chains(lambda p, n, c: (p * (c // n), (p + 1) * (c // n)))

    def asserting(p, n, c):
        if c % n:  # what `assert c % n == 0` raises in a notebook (pytest rewrites the asserts of its tests)
            raise AssertionError()
        return my_chains(p, n, c)

    with pytest.raises(AssertionError, match=r"raised AssertionError, with no message \(an `assert`, probably\)"):
        check.my_chains(asserting)
    with pytest.raises(AssertionError, match="block of"):  # processes counted from 1
        check.my_chains(lambda p, n, c: [i + c // n for i in my_chains(p, n, c)])


@pytest.mark.parametrize("wrong, message", [
    (lambda p, n, c: None, r"returned None \(NoneType\); return a list of chain indices"),
    (lambda p, n, c: str(my_chains(p, n, c)), r"\(str\); return a list of chain indices"),
    (lambda p, n, c: [float(i) for i in my_chains(p, n, c)], r"with 0\.0 \(float\) among the chains"),
    (lambda p, n, c: np.array([my_chains(p, n, c)]), r"array of shape \(1, 4\)"),
    (lambda p, n, c: {i: i for i in my_chains(p, n, c)}, r"\(dict\)"),
])
def test_my_chains_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.my_chains(wrong)


def test_my_chains_accepts_a_range_and_an_integer_array(capsys):
    check.my_chains(lambda p, n, c: np.array(my_chains(p, n, c)))
    check.my_chains(lambda p, n, c: range(p * (c // n), (p + 1) * (c // n)) if c % n == 0 else my_chains(p, n, c))
    with pytest.raises(TypeError, match="function itself.*got a list"):
        check.my_chains([0, 1])
    assert capsys.readouterr().out.count("my_chains: correct") == 2


@pytest.mark.parametrize("wrong, message", [
    (lambda parts: parts, r"returned a list of \d item\(s\), not one array: the parts as they came, not joined"),
    (lambda parts: None, "returned NoneType"),
    (lambda parts: tuple(np.concatenate(parts)), r"returned a tuple"),
    (lambda parts: np.concatenate(parts).astype(str), "dtype <U"),
])
def test_combine_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.combine_chains(wrong)
    with pytest.raises(TypeError, match="function itself"):
        check.combine_chains(np.zeros((4, 7, 3)))


def test_combine_rejects_the_first_part_only():
    with pytest.raises(AssertionError, match=r"expected \(4, 7, 3\)"):
        check.combine_chains(lambda parts: parts[0])


def test_best_group_has_a_case_at_each_end_of_the_range():
    """A search that stops one short of max_processes (range(1, max_processes)) is caught on the case whose best
    group is the largest allowed; the smallest, 1, is some cases' answer too."""
    wants = [(args[-1], want) for args, want in ex_processes_group_size.CASES]
    assert any(want == most for most, want in wants) and any(want == 1 for _, want in wants)
    with pytest.raises(AssertionError, match=r"one short of the largest group, 8.*range\(1, max_processes \+ 1\)"):
        check.best_group(lambda d, b, pp, pd, c, m: _best(d, b, pp, pd, c, m - 1) if m > 1 else 1)


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: float(_best(*a)), r"returned 2\.0 \(float\); a group is a whole number of processes: return an int"),
    (lambda *a: None, r"returned None \(NoneType\); it should return one number"),
    (lambda *a: (_best(*a), 1.5), r"\(tuple\); it should return one number"),
    (lambda *a: [_best(*a)], r"\(list\); it should return one number"),
    (lambda *a: np.float64(_best(*a)), r"\(float64\); a group is a whole number"),
])
def test_best_group_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.best_group(wrong)


def test_best_group_accepts_an_integer_jax_scalar(capsys):
    import jax.numpy as jnp

    check.best_group(lambda *a: jnp.asarray(_best(*a)))
    assert "best_group: correct" in capsys.readouterr().out


@pytest.mark.parametrize("wrong, message", [
    (lambda *a: _header(*a).splitlines(), r"returned a list of 5 line\(s\); return them as one string"),
    (lambda *a: None, "returned NoneType; return the #SBATCH lines as one string"),
    (lambda *a: {"--nodes": a[0]}, "returned dict; return the #SBATCH lines as one string"),
    (lambda *a: _header(*a).encode(), "returned bytes"),
])
def test_job_header_refuses_answers_of_the_wrong_type(wrong, message):
    with pytest.raises(TypeError, match=message):
        check.job_header(wrong)
    with pytest.raises(TypeError, match="function itself"):
        check.job_header(_header(2, 4, 64, 2_000_000, 2e-3, 90.0, 0.2))
