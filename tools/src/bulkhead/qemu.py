"""The QEMU command line that boots a packed Bulkhead image."""

from __future__ import annotations

from pathlib import Path

from bulkhead import firmware, linux
from bulkhead.model import System
from bulkhead.units import M

# Deterministic runs: instruction counting, a fixed RTC, and (QEMU >= 7.2) no random DTB nodes.
ICOUNT_MACHINE_OPTION = "dtb-randomness=off"
ICOUNT_ARGS = ["-icount", "shift=0,align=off,sleep=off", "-rtc", "base=2020-01-01T00:00:00,clock=vm"]
# QEMU's console escape moves from Ctrl-A to Ctrl-] (`Ctrl-] x` quits), so Ctrl-A reaches
# Bulkhead, whose console uses it to switch input focus.
INTERACTIVE_ARGS = ["-nographic", "-echr", "29"]
# No default network card: Bulkhead never uses one, and QEMU would otherwise need its
# efi-virtio.rom option ROM (package ipxe-qemu), failing with "failed to find romfile" without it.
NO_NIC_ARGS = ["-nic", "none"]
BATCH_ARGS = ["-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"]


def qemu_command(system: System, image: str | Path, icount: bool = False, interactive: bool = True) -> list[str]:
    """argv for QEMU; interactive=False suits a harness reading the console on stdout."""
    platform = system.platform
    machine = platform.qemu_machine + (f",{ICOUNT_MACHINE_OPTION}" if icount else "")
    argv = [platform.qemu_binary, "-M", machine, "-cpu", platform.qemu_cpu,
            "-smp", str(system.cores), "-m", f"{system.memory // M}M", *NO_NIC_ARGS]
    argv += INTERACTIVE_ARGS if interactive else BATCH_ARGS
    if icount:
        argv += ICOUNT_ARGS
    argv += ["-kernel", str(image)]
    argv += firmware.loader_args(system)  # flash bank images into their RAM (firmware.py)
    return argv + system.qemu_args


# Bare Linux (no hypervisor): the same kernel, initramfs and bootargs as a Linux partition, booted by QEMU
# directly at EL1 on as many cores as the partition has vCPUs, for comparisons (benchmarks).
BARE_MACHINE = "virt,gic-version=3"


def bare_linux_command(system: System, partition: str, out: str | Path, icount: bool = False,
                       interactive: bool = True) -> list[str]:
    """argv for QEMU booting Linux partition `partition` of a checked system without Bulkhead: -kernel,
    -initrd (written into out as <partition>.cpio when the tool builds it) and -append with the partition's
    bootargs, -smp = its vCPUs, -m = its RAM; system.qemu_args are appended as for qemu_command."""
    part = system.partition_named(partition)
    if part is None or part.linux is None:
        names = ", ".join(p.name for p in system.partitions if p.linux is not None) or "none"
        raise ValueError(f"'{partition}' is not a Linux partition of system '{system.name}' (Linux partitions: "
                         f"{names})")
    kernel, initrd = linux.write_bare_inputs(part, Path(out))
    platform = system.platform
    machine = BARE_MACHINE + (f",{ICOUNT_MACHINE_OPTION}" if icount else "")
    argv = [platform.qemu_binary, "-M", machine, "-cpu", platform.qemu_cpu, "-smp", str(len(part.vcpus)),
            "-m", f"{-(-linux.partition_ram_size(part) // M)}M", *NO_NIC_ARGS]
    argv += INTERACTIVE_ARGS if interactive else BATCH_ARGS
    if icount:
        argv += ICOUNT_ARGS
    argv += ["-kernel", str(kernel)]
    if initrd is not None:
        argv += ["-initrd", str(initrd)]
    argv += ["-append", part.linux.bootargs]
    return argv + system.qemu_args
