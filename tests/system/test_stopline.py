"""A neighbour's health-monitor events that stop it, aimed at a victim's instants (-icount).

stopline (partitions/tests/stopline) leaves an unfinished console line and then raises an event
whose action is cold_restart just before latvictim is due: a trapped register access
(trapped_instruction). A restart cannot hold the event's lines for the vCPU's next turn as
`ignore` does, so they were printed in the trap, with the restart's own line; they now wait for
the reload, in vCPU 0's time (an EDF overrun's in the decision too: unit test
hm_restart_lines_wait_for_the_reload_in_vcpu0s_time).
Window 0 of hostile/attacks.h is quiet; every later window attacks. The bound is
test_lateness.py's."""

import re

import pytest

from harness import run_system
from test_lateness import BOUND_TICKS, victim_windows

RESTARTS = re.compile(r"stopline: done after (\d+) restarts")


@pytest.mark.parametrize("config", ["stop_fp.yaml", "stop_cyclic.yaml"])
def test_a_neighbour_stopping_itself_by_health_events_does_not_delay_the_victim(config):
    run = run_system(config, icount=True, timeout=240,
                     until=lambda r: r.index(r"\[victim\] BHLATE-DONE") >= 0 and
                     r.index(r"stopline: done after") >= 0)
    assert run.index(r"\[victim\] BHLATE-DONE") >= 0, "the victim did not finish"
    found = {name: (mode, late_max, n) for name, (mode, late_max, _, n, _) in victim_windows(run).items()}
    restarts = [int(m[1]) for m in map(RESTARTS.search, run.lines) if m]
    assert restarts and restarts[0] >= 20, f"the neighbour did not stop itself often: {restarts}"
    mode = found["quiet"][0]
    attacked = {a: v[1] for a, v in found.items() if a != "quiet" and v[2]}
    worst = max(attacked.values())
    print(f"BHSTAT {config}: quiet {found['quiet'][1]}, attacked max {worst} ticks "
          f"({restarts[0]} restarts)")
    # The restarts must land: each trap and its stop delay the victim (else this measures a
    # quiet core and the bound checks nothing).
    assert worst - found["quiet"][1] >= 50, f"{config}: the aimed restarts did not land: {attacked}"
    assert worst <= BOUND_TICKS[mode], (
        f"{config}: lateness {worst} ticks beyond the bound {BOUND_TICKS[mode]}: {attacked}")
