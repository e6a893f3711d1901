"""The QEMU command line that boots a packed Bulkhead image."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

from bulkhead import disk, firmware, linux
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


def device_tree_address(system: System, image_end: int) -> int:
    """Where QEMU 7.2 writes its device tree when -kernel is an arm64 Image (hw/arm/boot.c): after
    the initrd's place, at least min(RAM / 2, 128M) into RAM, or after the image's end, at a 2M
    boundary. QEMU refuses to start when that is not below the end of RAM."""
    ram_base = system.platform.ram_base
    after = max(ram_base + min(system.memory // 2, 128 * M), image_end)
    return -(-after // (2 * M)) * (2 * M)


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
    # The disks before qemu_args: each takes its own slot first, QEMU fills others from the highest free.
    argv += disk.qemu_disk_args(system, Path(image).parent)
    argv += firmware.loader_args(system, Path(image).parent)  # flash bank images into their RAM (firmware.py)
    if firmware.write_backs(system):
        # Kept alive after the system powers off, so the flash can still be read (FlashWriteBack).
        argv += ["-no-shutdown", "-qmp", f"unix:{qmp_socket(image)},server=on,wait=off"]
    return argv + system.qemu_args


def qmp_socket(image: str | Path) -> Path:
    """The QMP socket of a run of image, beside it."""
    return Path(image).resolve().parent / "qmp.sock"


class FlashWriteBack:
    """Writes the variables banks marked `write_back` (firmware.py) back into their files when the run
    ends: QEMU runs with -no-shutdown, so when the system powers off it stops instead of exiting; then
    (or when the harness ends the run, finish()) the flash RAM is saved with QMP's pmemsave and QEMU
    quits. watch() does it in a thread on the system's own power-off."""

    def __init__(self, system: System, image: str | Path):
        self.banks = firmware.write_backs(system)
        self.path = qmp_socket(image)
        self.sock: socket.socket | None = None
        self.pending = b""
        self.lock = threading.Lock()
        self.done = False

    def connect(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(str(self.path))
                break
            except OSError:
                sock.close()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.sock = sock
        self._message()  # the greeting
        self._command("qmp_capabilities")

    def _message(self) -> dict:
        while b"\n" not in self.pending:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("QEMU closed its QMP socket")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def _command(self, name: str, **arguments) -> dict:
        self.sock.sendall(json.dumps({"execute": name, "arguments": arguments}).encode() + b"\n")
        while True:
            reply = self._message()
            if "return" in reply or "error" in reply:
                if "error" in reply:
                    raise RuntimeError(f"QMP {name}: {reply['error'].get('desc')}")
                return reply

    def finish(self) -> None:
        """Stop the machine, save every bank, quit QEMU (once)."""
        with self.lock:
            if self.done or self.sock is None:
                return
            self.done = True
            self._command("stop")
            for phys, size, path in self.banks:
                self._command("pmemsave", val=phys, size=size, filename=str(path))
            try:
                self._command("quit")
            except (ConnectionError, OSError):
                pass  # it quit before it answered

    def watch(self) -> threading.Thread:
        """In a thread: on the system's power-off (QMP event SHUTDOWN), finish()."""
        def run() -> None:
            try:
                while not self.done:
                    if self._message().get("event") == "SHUTDOWN":
                        self.finish()
            except (ConnectionError, OSError, ValueError):
                pass
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread


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
