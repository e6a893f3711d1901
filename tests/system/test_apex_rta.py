"""The response-time analysis against measurement (configs/apex_rta.yaml, docs/apex.md).

apexrta's processes are declared in the description's `apex:` key; `bulkhead analyse` gives each
periodic one's worst-case response time inside its partition's two windows of each 1 ms frame.
The partition runs them under -icount shift=0 (one instruction, one nanosecond) for 300 ms, each
activation executing its declared wcet, and libapex records each process's worst response
(release point to PERIODIC_WAIT). Measured must never exceed analysed; the process the analysis
says misses its deadline must miss it (its errors reaching the error handler), the others never.
The initialization first checks that libapex refuses, with INVALID_CONFIG, every create call the
declaration does not allow."""

import re

from harness import run_system
from bulkhead import rta
from bulkhead.config import load

CONFIG = "apex_rta.yaml"
CONFIG_PATH = f"tests/system/configs/{CONFIG}"
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


def test_analysis_against_measurement():
    analysis = rta.analyse_partition(load(CONFIG_PATH, images=False),
                                     load(CONFIG_PATH, images=False).partition_named("apexrta"))
    verdicts = {v.name: v for v in analysis.processes if v.period is not None}
    # The description is built so that the analysis has one of each: met with room, barely met, missed.
    assert verdicts["fast"].met and verdicts["tight"].met and verdicts["late"].met is False, verdicts
    assert verdicts["tight"].deadline - verdicts["tight"].wcrt < 0.05 * verdicts["tight"].deadline, verdicts

    run = run_system(CONFIG, icount=True, timeout=300,
                     until=lambda r: r.index(r"\[apexrta\] APEXRTA done") >= 0)
    assert not run.timed_out, "the reporter never printed its figures"
    limits = {m.group(1): m.group(2) for m in
              (re.search(r"\[apexrta\] APEXRTA limit (\w+) (ok|FAIL)", line) for line in run.lines) if m}
    assert limits == {name: "ok" for name in LIMIT_CHECKS}, limits
    assert run.index(r"\[apexrta\] APEXRTA partition_period_ns 1000000") >= 0

    figures = measured(run)
    assert set(figures) == set(verdicts), figures
    for name, verdict in verdicts.items():
        seen = figures[name]
        print(f"BHSTAT apex_rta {name}: analysed WCRT {verdict.wcrt} ns (deadline {verdict.deadline}, "
              f"{'met' if verdict.met else 'missed'}), measured worst {seen['worst']} ns over "
              f"{seen['completions']} activations, {seen['misses']} deadline misses")
        assert seen["completions"] >= 300_000_000 // verdict.period - 2, (name, seen)
        assert 0 < seen["worst"] <= verdict.wcrt, (name, seen, verdict)
        if verdict.met:
            assert seen["misses"] == 0 and seen["handler_misses"] == 0, (name, seen)
        else:
            # Every activation of `late` misses (the schedule repeats every 4 ms), and the error
            # handler is told of each; the last may still be queued when the reporter stops it.
            assert seen["worst"] > verdict.deadline, (name, seen)
            assert seen["misses"] >= seen["completions"] - 1 > 0, (name, seen)
            assert seen["handler_misses"] >= seen["misses"] - 1, (name, seen)
    assert run.count("HM: partition apexrta") == 0
