"""Virtual boards (docs/configuration.md, `board:`): an unmodified bare-metal program built for
QEMU's virt machine (partitions/board/virtprobe: its own start code and linker script, no Bulkhead
library or hypercall) runs in a partition with `board: qemu-virt` beside a paravirtual partition,
and prints exactly what it prints on bare QEMU."""

from __future__ import annotations

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
