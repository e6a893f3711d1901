"""Virtual boards (docs/configuration.md, `board:`): an unmodified bare-metal program built for
QEMU's virt machine (partitions/board/virtprobe: its own start code and linker script, no Bulkhead
library or hypercall) runs in a partition with `board: qemu-virt` beside a paravirtual partition,
and prints exactly what it prints on bare QEMU."""

from __future__ import annotations

import re

from harness import BUILD, run_command, run_system

PROBE = BUILD / "board" / "virtprobe.elf"
RAW = BUILD / "board" / "virtprobe.bin"  # objcopy -O binary of PROBE: its bytes from 0x40200000
RAW_LOAD = 0x40200000
LAST = "virtprobe: done, SYSTEM_OFF"


def probe_lines(lines: list[str], prefix: str = "") -> list[str]:
    """The program's own lines (they all start with 'virtprobe: '), without the console prefix."""
    return [line[len(prefix):] for line in lines if line.startswith(prefix + "virtprobe: ")]


def bare_run(loader: bool = False, raw: bool = False):
    """On bare QEMU with virtualization: QEMU's PSCI is on SMC (the program forwards HVC to it from
    EL2 and drops to EL1); the device tree at 0x40000000, x0 = 0, as for any ELF given to -kernel or
    to the generic loader (raw: the raw binary by the generic loader at its address, started there)."""
    load = ["-device", f"loader,file={PROBE},cpu-num=0"] if loader else ["-kernel", str(PROBE)]
    if raw:
        load = ["-device", f"loader,file={RAW},addr={RAW_LOAD:#x},cpu-num=0"]
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3,virtualization=on", "-cpu", "cortex-a53",
            "-smp", "2", "-m", "256M", "-nic", "none", "-display", "none", "-monitor", "none",
            "-serial", "stdio", *load]
    how = " (raw binary, -device loader)" if raw else " (-device loader)" if loader else ""
    return run_command(argv, "virtprobe on bare QEMU" + how, timeout=30)


def test_bare_metal_program_for_qemu_virt_runs_unmodified_beside_a_paravirtual_partition():
    bare = bare_run()
    assert bare.exited, "virtprobe did not power bare QEMU off"
    expected = probe_lines(bare.lines)
    assert expected[-1] == LAST, expected
    assert "virtprobe: cpu 0 saw cpu 1" in expected
    assert "virtprobe: PSCI_VERSION by SMC: PSCI 1.x" in expected
    assert "virtprobe: PSCI_VERSION by HVC: PSCI 1.x" in expected
    loaded = bare_run(loader=True)
    assert probe_lines(loaded.lines) == expected

    run = run_system("board_virt.yaml", timeout=60,
                     until=lambda r: r.index(r"partition virt halted") >= 0
                     and r.index(r"\[hello\] hello from partition 0 vcpu 0") >= 0)
    got = probe_lines(run.lines, "[virt] ")
    # the secondary's line and cpu 0's wait are ordered: the same lines in the same order
    assert got == expected, "\n".join(got)
    assert run.index(r"\[hello\] hello from partition 0 vcpu 0") >= 0
    assert run.index(r"HM: partition") < 0, "a health-monitor event: something was not emulated"


def test_the_same_program_as_a_raw_binary_boots_at_its_load_address():
    """The raw boot protocol (`load`): virtprobe.bin, the ELF's bytes without headers, loaded at
    0x40200000 and started there, prints what the ELF prints, in a partition and on bare QEMU."""
    assert RAW.read_bytes()[:4] != b"\x7fELF" and RAW.stat().st_size > 0
    expected = probe_lines(bare_run().lines)
    assert expected[-1] == LAST, expected
    assert probe_lines(bare_run(raw=True).lines) == expected
    run = run_system("board_raw.yaml", timeout=60,
                     until=lambda r: r.index(r"partition virt halted") >= 0
                     and r.index(r"\[hello\] hello from partition 0 vcpu 0") >= 0)
    assert run.index(rf"partition virt \(id 1\) vcpu 0 on core 2 \(dedicated\), entry {RAW_LOAD:#x}") >= 0
    got = probe_lines(run.lines, "[virt] ")
    assert got == expected, "\n".join(got)
    assert run.index(r"HM: partition") < 0, "a health-monitor event: something was not emulated"


EMULCHECK = [
    "typer 0x2480008", "typer_x19 0x2480008",          # fast path, and the full path (x19)
    "isenabler1 0x2", "icenabler1 0x2", "isenabler1_after_clear 0x0",
    "psci_version_hvc 0x10000", "psci_version_smc 0x10000",
    "x21 X",                                            # a UARTDR write from x21: the full path
    "uart_read64 0x0", "uart_read16_at_2 0x0", "gicr_beyond 0x0",
    "smc_imm1 0xffffffffffffffff",                      # SMCCC NOT_SUPPORTED after the event
    "done",
]
EMULCHECK_EVENTS = [
    ("memory_violation", "0x9000000", "read"),          # 64-bit read of the PL011
    ("memory_violation", "0x9000002", "read"),          # halfword at a register's middle
    ("memory_violation", "0x80c0000", "read"),          # a redistributor the partition lacks
    ("memory_violation", "0x80c0000", "write"),
    ("smc", "0x84000000", "smc function id"),           # SMC #1: not an SMCCC call
]


def test_emulation_fast_path_answers_and_bad_accesses_keep_their_health_events():
    """partitions/board/emulcheck: the accesses the emulation fast path (vectors.S guest_emulate)
    serves give the emulated machine's values, those through x19-x29 (left to the full path) the
    same, and every bad one -- a size or offset the device does not have, an address no device
    is at, an SMC that is not a firmware call -- is still its configured health-monitor event."""
    run = run_system("board_emulcheck.yaml", timeout=60,
                     until=lambda r: r.index(r"\[check\] emulcheck: done") >= 0)
    got = [line[len("[check] emulcheck: "):] for line in run.lines
           if line.startswith("[check] emulcheck: ")]
    assert got == EMULCHECK, "\n".join(got)
    events = [m.groups() for m in map(re.compile(
        r"^\[bulkhead\] HM: partition check \(id 0\) vcpu 0: (\w+) at (0x[0-9a-f]+) \(([^,]+), pc ").match,
        run.lines) if m]
    assert events == EMULCHECK_EVENTS, events


MMIOATK = ["ldxr_uart 0x9000018",  # ignored: the load's register unchanged (its argument)
           "stxr_uart 0x1",        # no monitor (the LDXR faulted): fails, nothing stored
           "ldaxp_gicd 0x8000000", "dc_zva_uart 0x0", "dc_civac_gicd 0x0",
           "ldp_gicd 0x0",         # an ignored load pair reads zero
           "ldr_post_uart 0x0",    # an ignored load with writeback: skipped, base unchanged
           "str_pre_uart 0x0",     # the same for a store
           "isenabler1_after_stp 0x0", "done"]


def test_accesses_without_a_syndrome_to_emulated_devices_are_events_not_faults():
    """partitions/board/mmioatk (the attack review's, held): LDXR, STXR, LDAXP, DC ZVA, LDP, a load
    and a store with writeback and STP on the emulated PL011 and distributor, and DC CIVAC there,
    from a partition that ignores memory violations: each is a memory_violation event or, for the
    store exclusive that finds no monitor and the cache maintenance, nothing; the program goes on
    and the hypervisor does not fault. Only the first five events are printed (the rate limit):
    the counts say the rest."""
    run = run_system("board_mmioatk.yaml", timeout=60,
                     until=lambda r: r.index(r"\[atk\] mmioatk: done") >= 0)
    got = [line[len("[atk] mmioatk: "):] for line in run.lines if line.startswith("[atk] mmioatk: ")]
    assert got == MMIOATK, "\n".join(got)
    assert run.index("PANIC") < 0
    events = [m.groups() for m in map(re.compile(
        r"^\[bulkhead\] HM: partition atk \(id 0\) vcpu 0: (\w+) at (0x[0-9a-f]+) \((\w+), pc ").match,
        run.lines) if m]
    assert events == [("memory_violation", "0x9000018", "read"), ("memory_violation", "0x8000000", "read"),
                      ("memory_violation", "0x9000000", "write"), ("memory_violation", "0x8000100", "read"),
                      ("memory_violation", "0x9000018", "read")], events
