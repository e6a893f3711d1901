"""A board partition's vCPUs on three dedicated cores keep its emulated UART's lock (u->lock,
hypervisor/arch/aarch64/vpl011.c) busy with UARTDR writes while its vCPU on latvictim's
fixed-priority core aims a UARTFR read, which takes the same lock, just before each of the
victim's wake-ups (partitions/board/uartstorm, tests/system/configs/uartwait_fp.yaml). With the
transmit interrupt unmasked every data write takes the locked path, which queues the byte on the
console (its ring's lock) and drains the console (the wire's lock by trylock, up to a chunk of
192 bytes on a dedicated core) under the UART's lock: the UART's lock is still waited for in
the ticket queue (arch_spin_lock), not given up at the core's timer.

Measured (`pytest -s tests/system/test_uartwait.py`, about 6 s): the holds are short, and the
victim stays within the bound in every window: maximum lateness 16 (quiet), 16 and 16 (aimed
read alone: its path ends before the lead), 174 and 152 (storm, CPU 0 spinning), 161 and 197
(storm, aimed), 97 (bursts, spinning), 171 and 171 (bursts, aimed), 206 (all four back to
back); bound 370 (the tenth attack review first read 177 to 277 in the same windows, before
lockstorm and uartstorm shared their windows, partitions/board/include/storm.h). The partition has the console's focus (its only emulated UART), so most bytes go to the
wire directly or as one-byte records, and a drain finds little queued. The windows are
a lock storm's (partitions/board/include/storm.h, tests/system/test_lockwait.py).

Without the console's focus (uartwait_nofocus.yaml: a board partition that only holds the focus,
partitions/board/focus, on a fifth core) the partition's bytes are queued as records and drained,
and a data write's drain runs under the UART's lock: the aimed UARTFR reads then wait behind the
other cores' drains, and the victim is 434 and 591 ticks late in two of the windows where CPU 0
aims (325 and 215 in the other two), while the windows where it only spins stay within the bound
(232, 155, 206, all four writing 173). A known flaw, open (strict xfail). Tried in session 30 and
not kept: the byte given to the console before the UART's lock is taken (as the unlocked data
write already does). The aimed reads no longer waited, but the drains of the three writers then
ran side by side, and under -icount even the windows where CPU 0 only spins read 874 to 1033
(1596 with the focus). Traced (QEMU's instruction log, the worst sample of a spinning window):
core 1's own path to the victim is as long as without the change (1846 instructions, the lead's
decision and the switch; no lock wait, no drain, no kick), but the writers no longer wait on the
UART's lock, whose WFE ended their emulator turns after a few instructions: they run 766 to 1161
instructions a turn inside their write paths, where their guest's timer deadline has passed,
against core 1's 244, and 1846 x (244 + 766 + 244 + 766) / 244 ns is the 952 ticks measured. So
the change is right on parallel hardware, but this test cannot show it under -icount: kept for
when the measurement is made fair."""

import pytest

from test_lateness import BOUND_TICKS
from test_lockwait import STORM_WRITES, lockwait_run


NO_FOCUS = pytest.param("uartwait_nofocus.yaml", marks=pytest.mark.xfail(
    strict=True, reason="known flaw: a partition without the console's focus drains the console "
    "under its emulated UART's lock (vpl011.c), and its other vCPUs wait for it in the queue"))


@pytest.mark.parametrize("config", ["uartwait_fp.yaml", NO_FOCUS])
def test_a_uart_lock_held_from_other_cores_does_not_make_a_shared_core_late(config):
    windows, late = lockwait_run(config, probe="uartstorm")
    for w, f in sorted(windows.items()):
        print(f"BHSTAT {config} window {w} cpu0 {f['cpu0']} others {f['others']}: victim late "
              f"max {late[w][1]}; aimed {f['aimed']}, longest {f['longest']}, hammer "
              f"{f['hammer']}; writes {f['writes']}")
    for w, f in windows.items():
        if f["cpu0"] == "aim":
            assert f["aimed"] >= 20, f"window {w}: only {f['aimed']} aimed reads"
        if f["others"] == "storm":
            assert min(f["writes"][1:]) >= STORM_WRITES, f"window {w}: the others wrote little"
    over = {w: late[w][1] for w in windows if late[w][1] > BOUND_TICKS[late[w][0]]}
    assert not over, f"lateness beyond {BOUND_TICKS} ticks beside the UART's holders: {over}"
