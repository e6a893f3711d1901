"""A neighbour's health-monitor event that halts it, aimed at a victim's instant (-icount).

stopline (partitions/tests/stopline) leaves an unfinished console line and then makes a trapped
register access just before latvictim is due; here its action is halt_partition (configs
halt_*.yaml), not cold_restart as in test_stopline.py. A halted partition never runs again, so the
lines of its stop (the flushed unfinished line, the event's, "partition ... halted") had no later
time of its own to wait for and were all formatted in the trap: one aimed halt was the longest
path a neighbour could put in front of the victim. The bound is test_lateness.py's."""

import pytest

from harness import run_system
from test_lateness import BOUND_TICKS, victim_windows


@pytest.mark.parametrize("config", ["halt_fp.yaml", "halt_cyclic.yaml"])
def test_a_neighbour_halting_itself_by_a_health_event_does_not_delay_the_victim(config):
    run = run_system(config, icount=True, timeout=240,
                     until=lambda r: r.index(r"\[victim\] BHLATE-DONE") >= 0)
    assert run.index(r"\[victim\] BHLATE-DONE") >= 0, "the victim did not finish"
    assert run.index(r"HM: partition hostile \(id 1\) vcpu 0: trapped_instruction") >= 0, \
        "the neighbour's event was never reported"
    assert run.index(r"partition hostile halted") >= 0, "the neighbour's halt was never reported"
    found = {name: (mode, late_max, n) for name, (mode, late_max, _, n, _) in victim_windows(run).items()}
    mode = found["quiet"][0]
    attacked = {a: v[1] for a, v in found.items() if a != "quiet" and v[2]}
    worst = max(attacked.values())
    print(f"BHSTAT {config}: quiet {found['quiet'][1]}, attacked max {worst} ticks")
    # The halt must land: its trap and its stop delay the victim (else this measures a quiet
    # core and the bound checks nothing).
    assert worst - found["quiet"][1] >= 50, f"{config}: the aimed halt did not land: {attacked}"
    assert worst <= BOUND_TICKS[mode], (
        f"{config}: lateness {worst} ticks beyond the bound {BOUND_TICKS[mode]}: {attacked}")
