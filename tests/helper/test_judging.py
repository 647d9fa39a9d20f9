"""The judge of timings: every threshold, with planted numbers on both sides; re-measuring; strict and report modes."""

from __future__ import annotations

import pytest

from parallel_mcmc.measure import judging as judge_module
from parallel_mcmc.measure.prediction import predict
from parallel_mcmc.measure.judging import Comparison, judge
from parallel_mcmc.measure.rules import READINGS, RULES, Rules, rate
from parallel_mcmc.measure.timing import Timing


def run(times, predicted, label="run"):
    """A planted measurement: repeats ``times`` (seconds) beside a predicted time."""
    return predict(Timing(label, tuple(times), max(times)), predicted)


# --- each rule, on both sides of its threshold ------------------------------------------


def test_beats_the_model_is_above_one_plus_the_spread():
    # repeats 1.00, 1.02, 1.04: spread 4%; a prediction 1.04 x the median is within it
    inside = run([1.00, 1.02, 1.04], 1.02 * 1.039)
    outside = run([1.00, 1.02, 1.04], 1.02 * 1.045)
    assert rate("a", inside, True).status == "agrees"
    assert rate("a", outside, True).status == "beats the model"
    assert not rate("a", outside, True).fails  # within the calibration's noise: said, not failed


def test_beating_the_model_beyond_the_calibration_noise_fails():
    limit = 1 + 0.0 + RULES.calibration_noise  # one repeat: no spread
    assert not rate("a", run([1.0], 0.999 * limit), True).fails
    assert rate("a", run([1.0], 1.001 * limit), True).fails
    # a busy machine does not excuse a measurement faster than the best case
    assert rate("a", run([1.0], 1.001 * limit), False).fails


def test_a_cost_missing_is_flagged_from_the_fastest_repeat_and_never_fails():
    flagged = rate("a", run([1.0, 1.1], 0.79), True)  # fastest repeat 1.0: ratio 0.79
    assert flagged.status == "a cost missing" and not flagged.fails
    # the median is slow (1.5 s) but the fastest repeat keeps up: a disturbed repeat, not a missing cost
    assert rate("a", run([1.0, 1.5, 2.0], 0.81), True).status == "agrees"


def test_far_slower_fails_only_when_the_cores_were_free():
    slow = run([1.0, 1.0], 0.49)
    assert rate("a", slow, True).status == "far slower" and rate("a", slow, True).fails
    assert rate("a", slow, False).status == "far slower" and not rate("a", slow, False).fails
    assert rate("a", run([1.0, 1.0], 0.51), True).status == "a cost missing"


def test_rules_are_checked():
    with pytest.raises(ValueError, match="far_slower < flag_below"):
        Rules(far_slower=0.9, flag_below=0.8)
    with pytest.raises(ValueError, match="tries"):
        Rules(tries=0)
    with pytest.raises(TypeError, match="Prediction"):
        rate("a", 1.0, True)


# --- the ideal is the model's own ratio ---------------------------------------------------


def test_the_ideal_is_predicted_over_predicted_and_the_speedup_median_over_median():
    base = run([2.0, 2.2, 3.0], 1.8)  # a slow repeat inflates no ideal: only predictions make it
    cand = run([1.0, 1.1, 1.2], 1.0)
    c = Comparison(base, cand)
    assert c.ideal == pytest.approx(1.8)
    assert c.measured == pytest.approx(2.2 / 1.1)
    assert not hasattr(c, "efficiency")  # the ideal is a prediction, not a bound to take a share of
    assert c.outcome == "faster"


def test_a_speedup_is_decided_on_the_log_scale_by_its_interval_never_called_a_tie():
    base = run([1.00, 1.05, 1.02, 1.04, 1.01], 1.0)
    same = Comparison(base, run([1.01, 1.04, 1.00, 1.05, 1.02], 1.0))
    assert same.interval.low < 1 < same.interval.high and same.outcome == "cannot tell"
    faster = Comparison(base, run([0.90, 0.92, 0.91, 0.93, 0.90], 0.9))
    assert faster.interval.low > 1 and faster.outcome == "faster"
    slower = Comparison(base, run([1.20, 1.22, 1.21, 1.25, 1.19], 1.2))
    assert slower.interval.high < 1 and slower.outcome == "slower"
    # a ratio far from 1 is decided, however wide the spread of the two runs (0.23x is no tie)
    far = Comparison(base, run([4.0, 4.6, 4.3, 4.9, 4.4], 4.0))
    assert far.measured == pytest.approx(1.02 / 4.4) and far.outcome == "slower"
    assert "(0.2" in str(far) and str(far).endswith(": slower")


# --- the judge: re-measuring, the cores, strict and report modes -------------------------


@pytest.fixture
def cores(monkeypatch):
    """Plant the reading of the cores the process gets (the judge reads it around every measurement)."""
    got = {"value": 2.0}
    monkeypatch.setattr(judge_module, "cores_available", lambda n: got["value"])
    return got


def planted(*rounds):
    """A ``measure`` function that returns the planted predictions of each round in turn; counts its calls."""
    calls = []

    def measure():
        calls.append(1)
        return rounds[min(len(calls), len(rounds)) - 1]

    return measure, calls


def test_a_failure_is_measured_again_and_a_passing_try_ends_it(cores, monkeypatch):
    monkeypatch.setenv(judge_module.STRICT_ENV, "strict")
    bad = {"a": run([1.0, 1.0], 0.3)}
    good = {"a": run([1.0, 1.0], 0.95)}
    measure, calls = planted(bad, good)
    verdict = judge(measure, cores=2)
    assert len(calls) == 2 and verdict.tries == 2 and verdict.passed
    verdict.check()
    assert "after 2 measurements" in verdict.summary()
    # what made the judge measure again stays on record, in the verdict's text too
    assert verdict.retried_for == (f"measurement 1: {judge(lambda: bad, cores=2).runs['a']}",)
    assert str(verdict).splitlines()[-1] == judge_module.RETRIED + verdict.retried_for[0]
    assert "far slower  FAILS" in verdict.retried_for[0]


def test_a_persistent_failure_fails_in_strict_mode_after_every_try(cores, monkeypatch):
    monkeypatch.setenv(judge_module.STRICT_ENV, "strict")
    measure, calls = planted({"a": run([1.0, 1.0], 0.3)})
    verdict = judge(measure, cores=2)
    assert len(calls) == RULES.tries and not verdict.passed
    assert [line.split(":")[0] for line in verdict.retried_for] == [f"measurement {i}" for i in range(1, RULES.tries)]
    with pytest.raises(AssertionError, match=f"after {RULES.tries} measurement"):
        verdict.check()


def test_a_reader_build_never_fails_on_timing_and_says_so(cores, monkeypatch):
    monkeypatch.delenv(judge_module.STRICT_ENV, raising=False)
    measure, _ = planted({"a": run([1.0, 1.0], 2.0)})  # beats its best case twice over
    verdict = judge(measure, cores=2)
    verdict.check()  # does not raise
    assert verdict.disturbed
    assert "A strict run (make test) would fail here" in verdict.summary()
    assert "Faster than the model's best case by more than the spread of the repeats: a;" in verdict.summary()


def test_a_busy_machine_skips_the_lower_bound_and_the_text_flips(cores, monkeypatch):
    monkeypatch.setenv(judge_module.STRICT_ENV, "strict")
    slow = {"a": run([1.0, 1.0], 0.3)}
    cores["value"] = 1.2  # another program holds most of a core
    verdict = judge(planted(slow)[0], cores=2)
    verdict.check()  # the lower bound is not checked: nothing fails
    assert verdict.disturbed and not verdict.cores_free
    assert "lower bounds were not checked" in verdict.summary()
    assert "Slower than the model: a, on a machine whose other work took cores." in verdict.summary()
    assert "a cost the model does not count" not in verdict.summary()
    cores["value"] = 1.95
    verdict = judge(planted(slow)[0], cores=2)
    assert verdict.cores_free and not verdict.passed
    assert "lower bounds were not checked" not in verdict.summary()


def test_the_summary_follows_the_numbers(cores):
    agree = judge(planted({"a": run([1.0], 0.95), "b": run([2.0], 1.9)})[0], cores=2)
    assert "The model accounts for every run." in agree.summary()
    assert "from 0.95 to 0.95" in agree.summary()
    missing = judge(planted({"a": run([1.0], 0.95), "b": run([2.0], 1.4)})[0], cores=2)
    assert "Slower than the model by more than the book allows for noise: b;" in missing.summary()
    assert "The model accounts for every run." not in missing.summary()
    assert missing.status("b") == "a cost missing" and missing.status("a") == "agrees"
    assert missing.compare("a", "b").ideal == pytest.approx(0.95 / 1.4)
    with pytest.raises(KeyError, match="no run named 'c'"):
        missing.status("c")


def test_measure_must_return_predictions(cores):
    with pytest.raises(TypeError, match="measure"):
        judge(42, cores=2)
    with pytest.raises(TypeError, match="non-empty dict"):
        judge(lambda: {}, cores=2)


def test_upper_bound_only_never_fails_a_slow_run_but_still_fails_one_that_beats_the_model(cores, monkeypatch):
    monkeypatch.setenv(judge_module.STRICT_ENV, "strict")
    why = "the all-reduce is counted at its back-to-back cost"
    slow = judge(planted({"a": run([1.0, 1.0], 0.3)})[0], cores=2, upper_bound_only=why)
    slow.check()
    assert slow.status("a") == "far slower" and f"upper bound only: {why}" in str(slow)
    fast = judge(planted({"a": run([1.0], 2.0)})[0], cores=2, upper_bound_only=why)
    with pytest.raises(AssertionError, match="beats the model"):
        fast.check()
    with pytest.raises(TypeError, match="sentence"):
        judge(planted({"a": run([1.0], 1.0)})[0], cores=2, upper_bound_only=None)


def test_upper_bound_only_for_named_runs_keeps_both_bounds_on_the_others(cores, monkeypatch):
    monkeypatch.setenv(judge_module.STRICT_ENV, "strict")
    why = "one piece's cores busy left out"
    both_slow = {"a": run([1.0, 1.0], 0.3), "b": run([1.0, 1.0], 0.3)}
    verdict = judge(planted(both_slow)[0], cores=2, upper_bound_only={"b": why})
    assert verdict.status("a") == verdict.status("b") == "far slower"
    assert [run.name for run in verdict.failures] == ["a"]  # b is far slower too, but only its best case is modelled
    assert f"upper bound only: b: {why}" in str(verdict)
    with pytest.raises(AssertionError, match="a: measured"):
        verdict.check()
    fast = judge(planted({"a": run([1.0], 1.0), "b": run([1.0], 2.0)})[0], cores=2, upper_bound_only={"b": why})
    with pytest.raises(AssertionError, match="beats the model"):
        fast.check()
    with pytest.raises(KeyError, match="did not return"):
        judge(planted({"a": run([1.0], 1.0)})[0], cores=2, upper_bound_only={"c": why})
    with pytest.raises(TypeError, match="a sentence each"):
        judge(planted({"a": run([1.0], 1.0)})[0], cores=2, upper_bound_only={"a": " "})
    three = {"a": run([1.0], 1.0), "b": run([1.0], 1.0), "c": run([1.0], 1.0)}
    shared = judge(planted(three)[0], cores=2, upper_bound_only={"a": why, "b": why, "c": "another reason"})
    assert f"upper bound only: a, b: {why}; c: another reason" in str(shared)  # a shared reason said once


def test_the_reading_flips_on_each_side_of_every_rule_and_with_the_cores(cores):
    """Pages choose their sentences from ``reading``: planted numbers on each side of each threshold."""
    spread_edge = 1.0 + 0.0  # one repeat: no spread
    planted_runs = {
        "just inside": run([1.0], 0.999 * spread_edge),
        "just beats": run([1.0], 1.001 * spread_edge),
        "just above the flag": run([1.0], 1.001 * RULES.flag_below),
        "just below the flag": run([1.0], 0.999 * RULES.flag_below),
        "far slower": run([1.0], 0.999 * RULES.far_slower),
    }
    free = judge(planted(planted_runs)[0], cores=2)
    assert [free.reading(name) for name in planted_runs] == [
        "agrees", "beats the model", "agrees", "slower, cores free", "slower, cores free"]
    cores["value"] = 0.8 * RULES.free_share * 2
    busy = judge(planted(planted_runs)[0], cores=2)
    assert [busy.reading(name) for name in planted_runs] == [
        "agrees", "beats the model", "agrees", "slower, cores busy", "slower, cores busy"]
    assert set(READINGS) == {free.reading(n) for n in planted_runs} | {"slower, cores busy"}
    with pytest.raises(KeyError, match="no run named"):
        free.reading("missing")


def test_each_verdict_is_recorded_where_the_variable_names_a_file(tmp_path, monkeypatch):
    import json

    log = tmp_path / "verdicts.jsonl"
    monkeypatch.setattr(judge_module, "cores_available", lambda cores: 0.5)
    monkeypatch.delenv(judge_module.VERDICT_LOG_ENV, raising=False)
    judge(lambda: {"a": run([1.0, 1.0], 1.0, "a")}, cores=2)
    assert not log.exists()  # not set: nothing written
    monkeypatch.setenv(judge_module.VERDICT_LOG_ENV, str(log))
    judge(lambda: {"a": run([1.0, 1.0], 1.0, "a"), "b": run([1.0, 1.1], 1.0, "b")}, cores=2)
    judge(lambda: {"a": run([1.0, 1.0], 1.0, "a")}, cores=1)
    first, second = [json.loads(line) for line in log.read_text().splitlines()]
    assert first == {"runs": 2, "cores": 2, "cores_got": 0.5, "tries": 1, "passed": True, "cores_free": False,
                     "retried_for": []}
    assert second["runs"] == 1 and second["cores"] == 1 and second["cores_free"] is False


def test_a_verdict_file_that_cannot_be_written_is_said_and_the_verdict_stands(tmp_path, monkeypatch):
    monkeypatch.setenv(judge_module.VERDICT_LOG_ENV, str(tmp_path / "no such folder" / "verdicts.jsonl"))
    with pytest.warns(UserWarning, match="could not be recorded"):
        verdict = judge(lambda: {"a": run([1.0, 1.0], 1.0, "a")}, cores=1)
    assert verdict.passed
