"""The response-time analysis against measurement (configs/apex_rta.yaml, docs/apex.md).

apexrta's processes are declared in the description's `apex:` key; `bulkhead analyse` gives each
periodic one's worst-case response time inside its partition's two windows of each 1 ms frame.
The partition runs them under -icount shift=0 (one instruction, one nanosecond) for 300 ms, each
activation executing its declared wcet, and libapex records each process's worst response
(release point to PERIODIC_WAIT). Measured must never exceed analysed; the process the analysis
says misses its deadline must miss it (its errors reaching the error handler), the others never.
The initialization first checks that libapex refuses, with INVALID_CONFIG, every create call the
declaration does not allow. apex_rta_edf.yaml runs the same partition on an EDF budget, where the
analysis (a periodic resource, any phase) is an upper bound only."""

import re
from pathlib import Path

from harness import run_system
from bulkhead import rta
from bulkhead.config import load

CONFIG = "apex_rta.yaml"
EDF_CONFIG = "apex_rta_edf.yaml"
RUN_NS = 300_000_000  # apexrta's RUN_NS
LIMIT_CHECKS = ("unlisted_process", "listed_process_other_priority", "stack_beyond_stack_total",
                "semaphore_declared", "semaphore_beyond_declared", "event_none_declared", "buffer_declared",
                "buffer_beyond_declared", "blackboard_beyond_message_pool", "blackboard_declared",
                "port_declared", "port_beyond_declared", "error_handler", "fast", "tight", "late", "reporter",
                "process_beyond_declared")
PROCESS_LINE = re.compile(r"\[apexrta\] APEXRTA process (\w+) completions (\d+) worst_response_ns (\d+) "
                          r"deadline_misses (\d+) handler_misses (\d+)")


def measured(run) -> dict[str, dict[str, int]]:
    figures = {}
    for line in run.lines:
        match = PROCESS_LINE.search(line)
        if match:
            name, *numbers = match.groups()
            figures[name] = dict(zip(("completions", "worst", "misses", "handler_misses"), map(int, numbers)))
    return figures


def analysed(config: str) -> dict[str, rta.ProcessVerdict]:
    system = load(Path(__file__).parent / "configs" / config, images=False)
    report = rta.analyse_partition(system, system.partition_named("apexrta"))
    return {v.name: v for v in report.processes if v.period is not None}


def run_apexrta(config: str, allowed_hm: str = "$^"):
    """Boots the system under -icount, checks the initialization's INVALID_CONFIG checks and returns the
    measured figures of each periodic process. No health-monitor event of apexrta but those matching
    allowed_hm."""
    run = run_system(config, icount=True, timeout=300,
                     until=lambda r: r.index(r"\[apexrta\] APEXRTA done") >= 0)
    assert not run.timed_out, "the reporter never printed its figures"
    limits = {m.group(1): m.group(2) for m in
              (re.search(r"\[apexrta\] APEXRTA limit (\w+) (ok|FAIL)", line) for line in run.lines) if m}
    assert limits == {name: "ok" for name in LIMIT_CHECKS}, limits
    assert run.index(r"\[apexrta\] APEXRTA partition_period_ns 1000000") >= 0
    events = [line for line in run.lines if "HM: partition apexrta" in line]
    assert not [line for line in events if not re.search(allowed_hm, line)], events
    return measured(run)


def compare(config: str, verdicts: dict[str, rta.ProcessVerdict], figures: dict[str, dict[str, int]]) -> None:
    """Measured worst at most analysed (an unbounded WCRT bounds nothing), activations as many as the run
    allows, and no deadline miss for a process the analysis says meets its deadline."""
    assert set(figures) == set(verdicts), figures
    for name, verdict in verdicts.items():
        seen = figures[name]
        print(f"BHSTAT {config} {name}: analysed WCRT {verdict.wcrt} ns (deadline {verdict.deadline}, "
              f"{'met' if verdict.met else 'missed'}), measured worst {seen['worst']} ns over "
              f"{seen['completions']} activations, {seen['misses']} deadline misses "
              f"({seen['handler_misses']} to the error handler)")
        assert seen["completions"] >= RUN_NS // verdict.period - 2, (name, seen)
        assert 0 < seen["worst"] and (verdict.wcrt is None or seen["worst"] <= verdict.wcrt), (name, seen, verdict)
        if verdict.met:
            assert seen["misses"] == 0 and seen["handler_misses"] == 0, (name, seen)


def test_analysis_against_measurement_on_a_cyclic_plan():
    verdicts = analysed(CONFIG)
    # The description is built so that the analysis has one of each: met with room, barely met, missed.
    assert verdicts["fast"].met and verdicts["tight"].met and verdicts["late"].met is False, verdicts
    assert verdicts["tight"].deadline - verdicts["tight"].wcrt < 0.05 * verdicts["tight"].deadline, verdicts
    figures = run_apexrta(CONFIG)
    compare(CONFIG, verdicts, figures)
    # On a cyclic plan the analysis is exact up to its overhead margins: what it says is missed is
    # missed, at (nearly) every activation, since the schedule repeats every 4 ms; each miss
    # reaches the error handler (the last may still be queued when the reporter stops it).
    late = figures["late"]
    assert late["worst"] > verdicts["late"].deadline, late
    assert late["misses"] >= late["completions"] - 1 > 0, late
    assert late["handler_misses"] >= late["misses"] - 1, late


def test_analysis_bounds_measurement_on_an_edf_budget():
    verdicts = analysed(EDF_CONFIG)
    assert verdicts["fast"].met and verdicts["tight"].met is False and verdicts["late"].met is False, verdicts
    # The budget is the supply the analysis bounds: a period whose demand exceeds it (tight and late
    # are not guaranteed) uses it up, which the hypervisor reports (budget_overrun, ignore).
    compare(EDF_CONFIG, verdicts, run_apexrta(EDF_CONFIG, allowed_hm=r"budget_overrun .*EDF budget used up"))
