"""Firmware boot (docs/configuration.md, "firmware" and "flash"): Debian's UEFI firmware for arm64
virtual machines (package qemu-efi-aarch64, QEMU_EFI.fd, unmodified) boots from the emulated CFI
flash of a `board: qemu-virt` partition, as QEMU's virt machine runs it for -bios, beside a
real-time partition, and reaches the UEFI shell, which is driven through the shared console.

Everything the firmware touches must be emulated: a health-monitor event (an access to something
the board does not have) fails the tests."""

from __future__ import annotations

import re

from harness import CONFIGS, Console, check_stage2_pool, partition_view, run_command

FIRMWARE = "/usr/share/qemu-efi-aarch64/QEMU_EFI.fd"
PROMPT = r"Shell> "
ESCAPES = re.compile(r"\x1b\[[0-9;=?]*[a-zA-Z]")
COUNTER = re.compile(r"^\[counter\] counter (\d+)", re.M)


def view(con: Console, name: str) -> str:
    """What partition `name` printed, whole again, without the terminal's escape sequences."""
    return ESCAPES.sub("", partition_view(con.raw, name))


def fw_expect(con: Console, name: str, pattern: str, timeout: float = 120.0) -> re.Match:
    """Wait for pattern in what the firmware of partition `name` printed after its previous match."""
    rx = re.compile(pattern, re.M)
    positions = con.__dict__.setdefault("fw_pos", {})
    m = con.until(lambda: rx.search(view(con, name), positions.get(name, 0)),
                  f"/{pattern}/ from {name}", timeout)
    positions[name] = m.end()
    return m


def command(con: Console, name: str, line: str, timeout: float = 60.0) -> str:
    """Type a shell command; return what the shell printed up to its next prompt."""
    con.send(line + "\r")
    return fw_expect(con, name, re.escape(line) + r"\n(?P<out>(?:.*\n)*?)" + PROMPT, timeout)["out"]


def counter_now(con: Console) -> int:
    found = COUNTER.findall(con.text)
    return int(found[-1]) if found else 0


def no_hm_events(con: Console) -> None:
    assert "HM: partition" not in con.text, "a health-monitor event: the firmware reached something not emulated"


def test_bare_qemu_boots_the_same_firmware_to_its_shell():
    """The reference: the same file with QEMU's own -bios on bare virt reaches the same shell."""
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", FIRMWARE]
    run = run_command(argv, "QEMU_EFI.fd on bare QEMU", timeout=150,
                      until=lambda r: any("Shell>" in line for line in r.lines[-3:]) or
                      any("UEFI Interactive Shell" in line for line in r.lines))
    assert run.index(r"UEFI firmware \(version") >= 0
    assert run.index(r"UEFI Interactive Shell v2\.2") >= 0


def test_uefi_shell_in_a_partition_beside_a_real_time_partition():
    with Console.boot("firmware_uefi.yaml") as con:
        fw_expect(con, "uefi", r"UEFI firmware \(version")
        fw_expect(con, "uefi", r"UEFI Interactive Shell v2\.2")
        fw_expect(con, "uefi", PROMPT, 60)
        check_stage2_pool("firmware_uefi.yaml", con.text)

        out = command(con, "uefi", "ver")
        assert "UEFI v2.70 (EDK II, 0x00010000)" in out, out

        # The memory map: the partition's 128 MiB of RAM, nothing else as conventional memory.
        out = command(con, "uefi", "memmap")
        total = re.search(r"Total Memory:\s+(\d+) MB", out)
        assert total and int(total[1]) == 128, out
        assert "Available" in out and "RT_Code" in out, out

        # Bank 1 was erased; the firmware formatted its variable store there by flash commands:
        # a firmware volume header ("_FVH" at offset 0x28) read back through read-array mode.
        out = command(con, "uefi", "dmem 0x4000000 0x40")
        assert "_FVH" in out, out
        # (Not `dmem 0`: the firmware keeps page 0 unmapped to catch NULL pointers, on bare QEMU too.)

        # reset: the firmware's ResetSystem is PSCI SYSTEM_RESET, a restart of this partition only.
        before = counter_now(con)
        assert before > 0, "the real-time partition runs"
        con.send("reset\r")
        con.expect(r"partition uefi .*restart", 60)
        fw_expect(con, "uefi", r"UEFI firmware \(version", 120)
        fw_expect(con, "uefi", PROMPT, 120)
        assert counter_now(con) > before, "the real-time partition went on through the reset"
        assert "partition counter halted" not in con.text
        no_hm_events(con)
