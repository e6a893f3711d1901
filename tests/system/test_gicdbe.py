"""test_gicdstorm.py's measurement with the SPIs routed to a best-effort vCPU: each of a
GICD_ISPENDR write's 32 injections goes through notify -> sched_vcpu_changed -> be_notify
(virq.c, sched.c, best_effort.c), which takes the system-wide best-effort queue's lock, all of
it under the partition's machine lock (vgic_dist.c). The write must stay within the longest path
the lateness bound assumes (test_lateness.py LONGEST_PATH_TICKS, 300), and its hold of the
machine lock within the one trap_lock's queue rule assumes (percpu.h TRAP_LOCK_HOLD_TICKS,
256)."""

import re

from harness import run_system
from test_lateness import LONGEST_PATH_TICKS


def test_a_distributor_write_pending_32_interrupts_of_a_best_effort_vcpu_stays_within_the_longest_path():
    run = run_system("board_gicdstorm_be.yaml", icount=True, timeout=120,
                     until=lambda r: r.index(r"gicdstorm: done") >= 0)
    m = [re.search(r"gicdstorm: longest ISPENDR write, ticks 0x([0-9a-f]+)", l) for l in run.lines]
    found = [int(x[1], 16) for x in m if x]
    assert found, "gicdstorm did not report: " + run.log[-2000:]
    print(f"BHSTAT board_gicdstorm_be: longest ISPENDR write {found[0]} ticks")
    assert found[0] <= LONGEST_PATH_TICKS, f"an ISPENDR write took {found[0]} ticks"
