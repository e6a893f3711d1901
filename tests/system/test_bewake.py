"""A best-effort vCPU waiting in WFI is woken by every interrupt another vCPU's distributor or
redistributor write makes pending or enables for it (partitions/board/bewake, session 31's third
attack review): since a write tells a best-effort vCPU once, after its loop (vgic_dist.c
write_bits, notices), none may be lost, whichever of the write's interrupts is enabled, whether it
comes first or last, through GICD_ISPENDR, GICD_ISENABLER or the vCPU's redistributor. CPU 2 is
the best-effort vCPU, alone on core 3 (dedicated with no vCPU of its own, or fixed-priority); CPU
0 makes its interrupts pending and waits for each acknowledgement, 40 rounds a case, with a 32 ms
timeout. Measured: no round lost, the longest wake-up 216 ticks (81 to 216 by case). The review
first read 30 of 40 rounds lost: CPU 0's wait armed no timer, and under -icount QEMU's round robin
ran it until its own 100 ms kick before core 3, which the hypervisor had kicked at once, had its
turn; the wait now keeps its turns short (smp_guest.h keep_turns_short). Without the once-a-write
notice (tell()) every round of case A is lost."""

import re

import pytest

from harness import run_system


@pytest.mark.parametrize("config", ["board_bewake.yaml", "board_bewake_fp.yaml"])
def test_a_best_effort_vcpu_in_wfi_is_woken_by_every_write_for_it(config):
    run = run_system(config, icount=True, timeout=240,
                     until=lambda r: r.index(r"bewake: done") >= 0)
    cases = [re.search(r"bewake: case (\w) rounds (\d+) lost (\d+) longest (\d+)", l) for l in run.lines]
    cases = [c for c in cases if c]
    for c in cases:
        print(f"BHSTAT {config} bewake: case {c[1]} rounds {c[2]} lost {c[3]} longest {c[4]}")
    assert len(cases) == 5, "bewake did not finish: " + run.log[-3000:]
    assert all(int(c[3]) == 0 for c in cases), run.log[-3000:]
    assert not any("unexpected" in l or "woken by a disabled" in l for l in run.lines), run.log[-3000:]
