"""A neighbour's BH_HC_SET_TIMER timer must not interrupt a victim's slot (-icount).

`storm` (partitions/tests/timerstorm) arms a periodic timer every 10 us (the shortest interval
accepted); gapcount runs the other half of each 2 ms frame on the same cyclic core and counts the
short gaps in its run (0.5 to 50 us). Under -icount only that core runs, so its short gaps are
the hypervisor's. The storm's vCPU cannot run before its next slot, so its timer's expiry changes
nothing there: the decision that switches it in serves it."""

import re

from harness import run_system


def gaps(config):
    run = run_system(config, timeout=300, icount=True,
                     until=lambda r: ("gapcount", "gapcount_done") in r.verdicts())
    assert ("gapcount", "gapcount_done") in run.verdicts(), "gapcount did not finish"
    assert run.index(r"timerstorm: armed") >= 0, "the storm did not start"
    figures = {m[1]: int(m[2]) for m in
               map(re.compile(r"BHSTAT (\w+) (\d+)").search, run.lines) if m}
    print(f"BHSTAT {config}: gapcount beside a 10 us timer storm: {figures}")
    return figures


def test_a_ready_neighbours_periodic_timer_does_not_interrupt_the_victims_slot():
    """The storm spins (ready): its timer was armed on the core anyway, and interrupted
    gapcount's slots every 10 us (19844 short gaps in 200 slots; now 0)."""
    figures = gaps("timer_storm.yaml")
    assert figures["short_gaps"] <= 5, figures


def test_a_waiting_neighbours_periodic_timer_does_not_interrupt_the_victims_slot():
    """The storm waits for its timer (BH_HC_IDLE): each slot of the victim began with it
    waiting, and its first expiry there woke it, for nothing (54 short gaps in 200 slots). A
    cyclic core's instants are now only those of the vCPU whose slot it is (sched.c watched)."""
    figures = gaps("timer_storm_idle.yaml")
    assert figures["short_gaps"] <= 5, figures
