"""A hostile unmodified guest against the emulated qemu-virt board (docs/architecture.md, virtual
boards): each probe does what a guest may do to a device and must see what it sees under QEMU's
own virt machine (the same image under bare QEMU is the reference), and nothing else in the
system may notice."""

from __future__ import annotations

import re

from bulkhead.config import load
from bulkhead.qemu import qemu_command
from harness import BUILD, CONFIGS, build_image, run_command, run_system
from test_board_dma import disk_args, random_disk
from test_firmware import bare_probe, probe_lines

RTC_PAST = BUILD / "board" / "rtcpast.fd"
GICR_WALK = BUILD / "board" / "gicrwalk.fd"
GICD_WIDTH = BUILD / "board" / "gicdwidth.fd"
PSCI_ODD = BUILD / "board" / "psciodd.fd"
UART_REGS = BUILD / "board" / "uartregs.fd"


def test_rtc_match_in_the_past_fires_as_qemus_pl031():
    """rtcpast (partitions/board/rtcpast) sets the PL031 match in the past, at the current second,
    across the 32-bit wrap, and loads the clock onto and past it. QEMU's PL031 counts forward
    modulo 2^32: a match behind the clock is 2^32 seconds away, not due; one across the wrap comes
    after the wrap. The partition's PL031 must print the same lines."""
    bare = bare_probe(RTC_PAST, "rtcpast")
    assert bare[-1] == "rtcpast: done" and len(bare) == 8, bare
    assert "rtcpast: match in the past, ris within 1.5 s 0x00000000" in bare, bare
    run = run_system("firmware_rtcpast.yaml", timeout=60, until=lambda r: r.index(r"^\[rtc\] rtcpast: done") >= 0)
    assert probe_lines(run.lines, "rtcpast", "[rtc] ") == bare
    assert run.index(r"HM: partition") < 0


IRQ_HOLD = BUILD / "board" / "irqhold.elf"
IRQ_PEND = BUILD / "board" / "irqpend.elf"


def test_clearing_a_held_forwarded_interrupt_does_not_kill_the_device(tmp_path):
    """irqhold (partitions/board/irqhold) completes a disk request while the disk's interrupt is
    disabled at the distributor, acknowledges the device and clears the interrupt's pending state
    (GICD_ICPENDR), then enables it. On QEMU's GIC nothing is pending and the next requests
    interrupt again. The interrupt is the physical one forwarded: the hypervisor took it from the
    GIC (active there) while the guest had it disabled; clearing the virtual pending state must
    give the physical one back, not leave it active and the device mute until the partition
    restarts."""
    disk = random_disk(tmp_path)
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3,virtualization=on", "-cpu", "cortex-a53",
            "-smp", "1", "-m", "256M", "-nic", "none", "-display", "none", "-monitor", "none",
            "-serial", "stdio", *disk_args(disk), "-kernel", str(IRQ_HOLD)]
    bare = probe_lines(run_command(argv, "irqhold on bare QEMU", timeout=30).lines, "irqhold")
    assert bare[-1] == "irqhold: done, SYSTEM_OFF", bare
    assert "irqhold: request 3 (enabled), interrupt 78" in bare, bare

    config = CONFIGS / "board_irqhold.yaml"
    argv = qemu_command(load(config), build_image(config), interactive=False) + disk_args(disk)
    run = run_command(argv, config.name, timeout=60, until=lambda r: r.index(r"partition blk halted") >= 0)
    assert probe_lines(run.lines, "irqhold", "[blk] ") == bare
    assert run.index(r"HM: partition") < 0
    assert run.index("PANIC") < 0


def test_redistributors_found_with_32_bit_reads_as_on_qemus_gic():
    """gicrwalk (partitions/board/gicrwalk) finds the redistributors as a driver with 32-bit
    accessors does: GICR_TYPER read as two words, frame after frame until Last. QEMU's GIC answers
    both halves; the partition's must too, or the walk never sees Last and runs off the end of the
    redistributors into an access the board does not have (a health-monitor event)."""
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-smp", "2", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", str(GICR_WALK)]
    bare = probe_lines(run_command(argv, "gicrwalk on bare QEMU", timeout=30,
                                   until=lambda r: r.index(r"^gicrwalk: done") >= 0).lines, "gicrwalk")
    assert bare[-2:] == ["gicrwalk: redistributors 0x00000002", "gicrwalk: done"], bare
    run = run_system("firmware_gicrwalk.yaml", timeout=60,
                     until=lambda r: r.index(r"^\[walk\] gicrwalk: done") >= 0 or r.index(r"HM: partition") >= 0)
    assert run.index(r"HM: partition") < 0
    assert probe_lines(run.lines, "gicrwalk", "[walk] ") == bare


def test_distributor_registers_read_back_as_on_qemus_gic():
    """gicdwidth (partitions/board/gicdwidth) writes and reads back the per-interrupt registers of
    the distributor and of a redistributor by words, bytes and halves of 64-bit registers, read-only
    fields included (the SGIs' configuration, always edge): the partition's GIC must print what
    QEMU's does."""
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-smp", "2", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", str(GICD_WIDTH)]
    bare = probe_lines(run_command(argv, "gicdwidth on bare QEMU", timeout=30,
                                   until=lambda r: r.index(r"^gicdwidth: done") >= 0).lines, "gicdwidth")
    assert bare[-1] == "gicdwidth: done" and "gicdwidth: gicr_icfgr0 (sgis) 0xaaaaaaaa" in bare, bare
    run = run_system("firmware_gicdwidth.yaml", timeout=60,
                     until=lambda r: r.index(r"^\[width\] gicdwidth: done") >= 0 or r.index(r"HM: partition") >= 0)
    assert run.index(r"HM: partition") < 0
    assert probe_lines(run.lines, "gicdwidth", "[width] ") == bare


def test_odd_psci_calls_answer_as_qemus_psci():
    """psciodd (partitions/board/psciodd) makes the PSCI calls a careless guest may, by HVC: CPU_ON
    of itself, of a CPU that is on, of affinities that do not exist, AFFINITY_INFO before, while
    and after its second CPU runs, CPU_OFF, unknown functions. Every answer must be QEMU's, but the
    version (Bulkhead implements PSCI 1.0, QEMU 7.2 answers 1.1)."""
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-smp", "2", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", str(PSCI_ODD)]
    bare = probe_lines(run_command(argv, "psciodd on bare QEMU", timeout=30,
                                   until=lambda r: r.index(r"^psciodd: done") >= 0).lines, "psciodd")
    assert bare[-1] == "psciodd: done" and "psciodd: cpu 1 context id 0x1234abcd" in bare, bare
    run = run_system("firmware_psciodd.yaml", timeout=60,
                     until=lambda r: r.index(r"^\[psci\] psciodd: done") >= 0 or r.index(r"HM: partition") >= 0)
    assert run.index(r"HM: partition") < 0
    got = probe_lines(run.lines, "psciodd", "[psci] ")
    assert "psciodd: version 0x00010000" in got, got
    without_version = lambda lines: [line for line in lines if not line.startswith("psciodd: version")]  # noqa: E731
    assert without_version(got) == without_version(bare)


def test_pl011_registers_read_as_qemus():
    """uartregs (partitions/board/uartregs) reads the PL011's registers as the machine resets them
    (flags, control, FIFO levels, mask, line control, baud rate) and after a driver's writes and a
    transmitted byte: the partition's PL011 must print what QEMU's does."""
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", str(UART_REGS)]
    bare = probe_lines(run_command(argv, "uartregs on bare QEMU", timeout=30,
                                   until=lambda r: r.index(r"^uartregs: done") >= 0).lines, "uartregs")
    assert bare[-1] == "uartregs: done" and "uartregs: reset cr 0x00000300" in bare, bare
    run = run_system("firmware_uartregs.yaml", timeout=60,
                     until=lambda r: r.index(r"^\[uart\] uartregs: done") >= 0 or r.index(r"HM: partition") >= 0)
    assert run.index(r"HM: partition") < 0
    assert probe_lines(run.lines, "uartregs", "[uart] ") == bare


def test_a_hand_pended_forwarded_interrupt_does_not_swallow_the_device(tmp_path):
    """irqpend (partitions/board/irqpend) pends its disk's interrupt by hand and takes it; while
    it is active the disk raises the same interrupt for real. After both are ended, the disk's
    next requests must interrupt as on QEMU's GIC."""
    disk = random_disk(tmp_path)
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3,virtualization=on", "-cpu", "cortex-a53",
            "-smp", "1", "-m", "256M", "-nic", "none", "-display", "none", "-monitor", "none",
            "-serial", "stdio", *disk_args(disk), "-kernel", str(IRQ_PEND)]
    bare = probe_lines(run_command(argv, "irqpend on bare QEMU", timeout=30).lines, "irqpend")
    assert bare[-1] == "irqpend: done, SYSTEM_OFF", bare
    assert "irqpend: request 3, interrupt 78" in bare, bare

    config = CONFIGS / "board_irqpend.yaml"
    argv = qemu_command(load(config), build_image(config), interactive=False) + disk_args(disk)
    run = run_command(argv, config.name, timeout=60, until=lambda r: r.index(r"partition blk halted") >= 0)
    assert probe_lines(run.lines, "irqpend", "[blk] ") == bare
    assert run.index(r"HM: partition") < 0


def storm_beside_irqcount(tmp_path, probe, counted):
    """Runs configs/board_<probe>.yaml with a disk until the probe is done and irqcount has read
    core 1's trace; returns the probe's `counted` figure (its storm's writes or rounds) and the
    BHSTAT figures (irqcount's core1_injections, gapcount's)."""
    disk = random_disk(tmp_path)
    config = CONFIGS / f"board_{probe}.yaml"
    argv = qemu_command(load(config), build_image(config), interactive=False) + disk_args(disk)
    run = run_command(argv, config.name, timeout=120,
                      until=lambda r: r.index(rf"{probe}: done") >= 0 and
                      ("irqcount", "irqcount_done") in r.verdicts())
    assert run.index(rf"{probe}: storm") >= 0, run.log()
    assert ("irqcount", "irqcount_done") in run.verdicts(), "irqcount did not finish"
    assert run.index(r"HM: partition") < 0
    count = [int(m[1]) for m in map(re.compile(rf"{probe}: {counted} (\d+)").search, run.lines) if m]
    figures = {m[1]: int(m[2]) for m in map(re.compile(r"BHSTAT (\w+) (\d+)").search, run.lines) if m}
    print(f"BHSTAT board_{probe}: {count} {counted}; gapcount {figures}")
    assert count, f"no '{probe}: {counted}' line"
    return count[0], figures


def test_clearing_a_held_interrupt_of_a_vcpu_on_another_core_does_not_interrupt_its_core(tmp_path):
    """irqrefire (partitions/board/irqrefire) routes its disk's interrupt to its second vCPU, never
    started, on cyclic core 1 beside gapcount; the device's line stays high, so the hypervisor
    holds the physical interrupt for that vCPU. Its first vCPU, on core 2, then clears the
    interrupt's pending state (GICD_ICPENDR) in a loop. Each clear gave the physical interrupt back
    to the GIC from core 2, and, the line still high, it was taken again at once on core 1, in
    gapcount's slots there: one interruption of another partition per trapped write. A held
    interrupt of a vCPU another core runs is now left pending for it (its own end gives it
    back): irqcount, reading core 1's trace, counts the disk interrupts taken there: 221 before,
    1 now. gapcount's short gaps are only indicative (without -icount the host's noise is in them:
    about 68 000 with the storm before, 43 000 with no storm at all)."""
    writes, figures = storm_beside_irqcount(tmp_path, "irqrefire", "ICPENDR writes")
    assert writes > 10000, writes
    # One when the line first rose; a few more only if the guest's vCPU ran and ended it.
    assert figures["core1_injections"] <= 5, figures


def test_rerouting_an_active_interrupt_does_not_make_it_fire_on_the_other_core(tmp_path):
    """irqflip (partitions/board/irqflip) takes its disk's interrupt (the line stays high), routes
    it to its second vCPU (never started, on cyclic core 1 beside gapcount) while it is active,
    ends it and routes it back, in a loop. Each end deactivated the physical interrupt while its
    route named core 1: taken again at once there, in gapcount's slots, once per round (irqcount
    counted 1961 and 6994 on core 1 in two runs). The physical route of an interrupt the
    hypervisor does not hold now moves when it is next taken: 0."""
    rounds, figures = storm_beside_irqcount(tmp_path, "irqflip", "rounds")
    assert rounds > 1000, rounds
    assert figures["core1_injections"] <= 5, figures


def test_starting_vcpu_0_leaves_a_device_interrupt_held_for_another_vcpu(tmp_path):
    """irqstart (partitions/board/irqstart) routes its disk's interrupt to its second vCPU, never
    started, on cyclic core 1 beside gapcount; the line stays high and the hypervisor holds the
    interrupt for that vCPU. Its third vCPU starts the first again and again (PSCI CPU_ON), which
    switches itself straight back off. Each start of vCPU 0 gave back every device interrupt of
    the partition: the one held for the second vCPU was deactivated and taken again at once on
    core 1, in gapcount's slots, once per round (irqcount: 461 in 649 rounds). A start now gives
    back only what is routed to the started vCPU (unit
    a_start_of_vcpu_0_leaves_a_device_interrupt_held_for_another_vcpu): 0."""
    rounds, figures = storm_beside_irqcount(tmp_path, "irqstart", "rounds")
    assert rounds > 100, rounds
    assert figures["core1_injections"] <= 5, figures
