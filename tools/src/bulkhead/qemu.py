"""The QEMU command line that boots a packed Bulkhead image."""

from __future__ import annotations

from pathlib import Path

from bulkhead.model import System
from bulkhead.units import M

# Deterministic runs: instruction counting, a fixed RTC, and (QEMU >= 7.2) no random DTB nodes.
ICOUNT_MACHINE_OPTION = "dtb-randomness=off"
ICOUNT_ARGS = ["-icount", "shift=0,align=off,sleep=off", "-rtc", "base=2020-01-01T00:00:00,clock=vm"]
INTERACTIVE_ARGS = ["-nographic"]
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
    return argv
