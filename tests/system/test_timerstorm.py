"""A neighbour's BH_HC_SET_TIMER timer must not interrupt a victim's slot (-icount).

timer_storm.yaml: `storm` arms a periodic timer every 10 us (the shortest interval accepted) and
idles; gapcount runs the other half of each frame on the same cyclic core and counts the short
gaps in its run (0.5 to 50 us). Under -icount only core 2 runs, so its short gaps are the
hypervisor's: the storm's vCPU cannot run before its next slot, and its timer's expiry changes
nothing there (it is served when the core next decides for it)."""

import re

from harness import run_system


def test_a_neighbours_periodic_timer_does_not_interrupt_the_victims_slot():
    run = run_system("timer_storm.yaml", timeout=300, icount=True,
                     until=lambda r: ("gapcount", "gapcount_done") in r.verdicts())
    assert ("gapcount", "gapcount_done") in run.verdicts(), "gapcount did not finish"
    figures = {m[1]: int(m[2]) for m in
               map(re.compile(r"BHSTAT (\w+) (\d+)").search, run.lines) if m}
    print(f"BHSTAT gapcount beside a 10 us timer storm: {figures}")
    # Its slot starts are long gaps; a short gap is an interruption inside its slot.
    assert figures["short_gaps"] <= 5, figures
