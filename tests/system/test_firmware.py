"""Firmware boot (docs/configuration.md, "firmware" and "flash"): Debian's UEFI firmware for arm64
virtual machines (package qemu-efi-aarch64, QEMU_EFI.fd, unmodified) boots from the emulated CFI
flash of a `board: qemu-virt` partition, as QEMU's virt machine runs it for -bios, beside a
real-time partition, and reaches the UEFI shell, which is driven through the shared console.

Everything the firmware touches must be emulated: a health-monitor event (an access to something
the board does not have) fails the tests."""

from __future__ import annotations

import re
import time
from pathlib import Path

from harness import BUILD, ROOT, Console, check_stage2_pool, partition_view, run_command, run_system

FIRMWARE = "/usr/share/qemu-efi-aarch64/QEMU_EFI.fd"
PROMPT = r"Shell> "
# The terminal's escape sequences; the console shows ESC as '?' for a partition without input focus.
ESCAPES = re.compile(r"[\x1b?]\[[0-9;=?]*[a-zA-Z]")
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


def clock_seconds(out: str) -> int:
    """Seconds since midnight of the shell's `time` output (hh:mm:ss)."""
    h, m, sec = map(int, re.search(r"(\d\d):(\d\d):(\d\d)", out).groups())
    return h * 3600 + m * 60 + sec


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


PROBE = BUILD / "board" / "flashprobe.fd"


RTC_PROBE = BUILD / "board" / "rtcprobe.fd"


def probe_lines(lines: list[str], name: str, prefix: str = "") -> list[str]:
    return [line[len(prefix):] for line in lines if line.startswith(f"{prefix}{name}: ")]


def bare_probe(image: Path, name: str) -> list[str]:
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", str(image)]
    run = run_command(argv, f"{name} on bare QEMU", timeout=30, until=lambda r: r.index(rf"^{name}: done") >= 0)
    return probe_lines(run.lines, name)


def test_flash_and_rtc_answer_as_qemus_own():
    """flashprobe (partitions/board/flashprobe) drives bank 1 as firmware does -- identifier, CFI
    query, erase, word and buffered program, status, clear status, a broken sequence -- and rtcprobe
    the PL031 -- identification, control, load, match, interrupt status and mask --, each printing
    every answer: the same lines under QEMU's -bios (its pflash_cfi01 and PL031) and in partitions."""
    flash = bare_probe(PROBE, "flashprobe")
    assert flash[-1] == "flashprobe: done" and len(flash) == 60, flash
    assert "flashprobe: query 0x00000010 0x00510051" in flash  # 'Q', from both devices
    rtc = bare_probe(RTC_PROBE, "rtcprobe")
    assert rtc[-1] == "rtcprobe: done" and "rtcprobe: match within 1 to 3 s 0x00000001" in rtc, rtc

    (BUILD / "systest" / "firmware_probes" / "vars.fd").unlink(missing_ok=True)
    run = run_system("firmware_probes.yaml", timeout=60, until=lambda r: r.index(r"^\[probe\] flashprobe: done") >= 0)
    assert probe_lines(run.lines, "flashprobe", "[probe] ") == flash
    assert run.index(r"HM: partition") < 0
    run = run_system("firmware_rtcprobe.yaml", timeout=60, until=lambda r: r.index(r"^\[rtc\] rtcprobe: done") >= 0)
    assert probe_lines(run.lines, "rtcprobe", "[rtc] ") == rtc
    assert run.index(r"HM: partition") < 0



CUT_PROBE = BUILD / "board" / "flashcut.fd"


def test_power_loss_in_the_middle_of_a_program_leaves_old_or_new_never_a_mix():
    """flashcut (partitions/board/flashcut) programs a word in full, then starts a word program and a
    buffered program without finishing them and loses power (PSCI SYSTEM_RESET: QEMU resets the
    machine, Bulkhead restarts the partition). After it, each word holds its previous content or the
    new one, never a mix, and the bank reads as array again: the same lines as under QEMU's -bios."""
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a53", "-m", "128M",
            "-nic", "none", "-display", "none", "-monitor", "none", "-serial", "stdio", "-bios", str(CUT_PROBE)]
    bare = probe_lines(run_command(argv, "flashcut on bare QEMU", timeout=30,
                                   until=lambda r: r.index(r"^flashcut: done") >= 0).lines, "flashcut")
    assert bare[:3] == ["flashcut: start", "flashcut: programmed 0x11111111", "flashcut: power lost"], bare
    assert "flashcut: word whose program was cut 0xffffffff" in bare and bare[-1] == "flashcut: done", bare
    (BUILD / "systest" / "firmware_cut" / "vars.fd").unlink(missing_ok=True)
    run = run_system("firmware_cut.yaml", timeout=60, until=lambda r: r.index(r"^\[cut\] flashcut: done") >= 0)
    assert probe_lines(run.lines, "flashcut", "[cut] ") == bare
    assert run.index(r"partition cut .*restart") >= 0, "the power loss restarted the partition"
    assert run.index(r"HM: partition") < 0

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

        # The emulated PL031: the host's time of day, read once from the real RTC, advancing with
        # the counter. The shell's `date` and `time` read it through the firmware's RTC driver.
        days = {time.strftime("%m/%d/%Y", time.gmtime(time.time() + d)) for d in (-60, 0, 60)}
        out = command(con, "uefi", "date")
        assert any(day in out for day in days), out
        first = clock_seconds(command(con, "uefi", "time"))
        time.sleep(3)
        later = clock_seconds(command(con, "uefi", "time"))
        assert 2 <= (later - first) % 86400 <= 30, (first, later)
        assert abs((first - time.time()) % 86400) < 120 or abs((first - time.time()) % 86400) > 86400 - 120

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


GUID = "5b3f3c5e-8a4f-4c33-9d4e-2a1b0c9d8e7f"
VARS = {name: BUILD / "systest" / "firmware_two" / f"vars-{name[-1]}.fd" for name in ("uefi_a", "uefi_b")}


def shells_up(con: Console) -> None:
    """Both shells started; the prompt (a line without its end) shows for the one with input focus,
    uefi_a: the console holds the other's unfinished line until it has the focus."""
    for name in ("uefi_a", "uefi_b"):
        fw_expect(con, name, r"UEFI Interactive Shell v2\.2", 180)
        fw_expect(con, name, r"in 1 seconds to skip", 120)
    fw_expect(con, "uefi_a", PROMPT, 60)


def variable(con: Console, name: str) -> str:
    return command(con, name, f"dmpstore BhVar -guid {GUID}")


def test_two_firmware_partitions_each_with_its_own_flash_written_back():
    for path in VARS.values():
        path.unlink(missing_ok=True)  # both start from erased variables banks
    with Console.boot("firmware_two.yaml") as con:
        shells_up(con)
        # Input goes to uefi_a first: a non-volatile variable there, in its flash only.
        command(con, "uefi_a", f"setvar BhVar -guid {GUID} -nv -bs =S\"alpha\"")
        assert "alpha" in variable(con, "uefi_a")
        # A reset of uefi_a: its flash (not reloaded by the hypervisor) keeps the variable.
        con.send("reset\r")
        con.expect(r"partition uefi_a .*restart", 60)
        fw_expect(con, "uefi_a", r"UEFI Interactive Shell v2\.2", 120)
        fw_expect(con, "uefi_a", PROMPT, 60)
        assert "alpha" in variable(con, "uefi_a")
        con.send("\x01\x01\x01")  # input to uefi_b, which has its own flash
        con.expect(r"console input goes to uefi_b", 10)
        con.send("\r")
        fw_expect(con, "uefi_b", PROMPT, 30)
        assert "alpha" not in variable(con, "uefi_b")
        assert not re.search(r"partition uefi_b .*restart", con.text), "uefi_a's reset restarted only uefi_a"
        no_hm_events(con)
        # uefi_b reads QEMU's fw_cfg, which the board does not have (the firmware maps the whole
        # device space below RAM): a health-monitor event naming the address, here halt_system.
        # QEMU stops at the power-off (-no-shutdown); the runner writes the banks back and quits.
        con.flash.watch()
        con.send("mm 0x9020000 -w 4 -n\r")
        con.expect(r"HM: partition uefi_b \(id 2\) vcpu 0: memory_violation at 0x9020000 \(read, "
                   r"pc 0x[0-9a-f]+\) -> halt_system", 60)
        con.proc.wait(timeout=60)
        assert con.flash.done, "the banks were written back on the system's own power-off"
    # The run ended: each variables bank was written back into its own file.
    a, b = (VARS[name].read_bytes() for name in ("uefi_a", "uefi_b"))
    assert len(a) == len(b) == 768 * 1024
    assert "BhVar".encode("utf-16-le") in a and b"alpha" in a
    assert b"alpha" not in b and b"_FVH" in b, "uefi_b formatted its own store, without the variable"

    # A new run loads the written-back files: the variable is there again.
    with Console.boot("firmware_two.yaml") as con:
        shells_up(con)
        assert "alpha" in variable(con, "uefi_a")
        no_hm_events(con)


def test_uefi_beside_the_default_system():
    """configs/uefi.yaml: the default system's real-time partitions and Linux, and UEFI's shell
    on core 1; the console input is moved to the shell with Ctrl-A three times."""
    with Console.boot(ROOT / "configs" / "uefi.yaml") as con:
        fw_expect(con, "uefi", r"UEFI Interactive Shell v2\.2", 180)
        fw_expect(con, "uefi", r"in 1 seconds to skip", 120)
        for _ in range(4):  # Linux, the monitor, the shell: at most a full round
            if re.findall(r"console input goes to (\w+)", con.text)[-1] == "uefi":
                break
            con.send("\x01\x01\x01")
            con.wait(1)
        assert re.findall(r"console input goes to (\w+)", con.text)[-1] == "uefi"
        con.send("\r")
        fw_expect(con, "uefi", PROMPT, 30)
        control = con.text.count("[control]")
        assert "UEFI v2.70 (EDK II, 0x00010000)" in command(con, "uefi", "ver")
        con.wait(2)
        assert con.text.count("[control]") > control, "the control loop goes on beside the firmware"
        no_hm_events(con)


EFI_COMMAND = r"fs0:\Image.efi initrd=\initrd console=ttyAMA0 rdinit=/init panic=-1"


def test_linux_boots_by_uefi_from_the_disk_the_tool_built():
    """uefi_linux.yaml: Linux booted the standard way. UEFI (QEMU_EFI.fd, from the partition's flash)
    finds the FAT disk the tool built (virtio-blk passed through, identity-mapped RAM) and, from its
    shell, starts Debian's arm64 kernel through the kernel's EFI stub with an initrd from the same disk
    (the stub loads it by UEFI's file protocol). Linux reaches user space, sees that UEFI started it,
    and the real-time partition beside it never stops."""
    with Console.boot("uefi_linux.yaml") as con:  # the disk's initrd: `make linux-programs`
        fw_expect(con, "uefi", r"UEFI Interactive Shell v2\.2", 180)
        fw_expect(con, "uefi", PROMPT, 60)
        assert "FS0:" in command(con, "uefi", "map -r"), "the disk's FAT file system"
        before = counter_now(con)
        con.send(EFI_COMMAND + "\r")
        fw_expect(con, "uefi", r"EFI stub: Booting Linux Kernel", 120)
        fw_expect(con, "uefi", r"^BHLINUX nproc=1$", 240)
        fw_expect(con, "uefi", r"/ # ", 30)
        con.send("cat /proc/cmdline; ls /sys/firmware/efi; cat /sys/firmware/efi/fw_platform_size\r")
        out = fw_expect(con, "uefi", r"(?P<out>initrd=.*?\n(?:.*\n)*?)/ # ", 30)["out"]
        assert "rdinit=/init" in out and "efivars" in out and "systab" in out and "\n64\n" in out, out
        assert counter_now(con) > before + 100, "the real-time partition ran on while UEFI booted Linux"
        no_hm_events(con)


UBOOT = Path("/usr/lib/u-boot/qemu_arm64/u-boot.bin")
UBOOT_PROMPT = r"=> "


def uboot_command(con: Console, line: str, timeout: float = 30.0) -> str:
    """Type a U-Boot command; return what it printed up to the next prompt."""
    con.send(line + "\r")
    return fw_expect(con, "uboot", re.escape(line) + r"\n(?P<out>(?:.*\n)*?)" + UBOOT_PROMPT, timeout)["out"]


def test_uboot_prompt_in_a_partition_beside_a_real_time_partition():
    """firmware_uboot.yaml: Debian's U-Boot for QEMU's virt machine, unmodified, boots from the
    partition's flash to its prompt. Its file is not whole erase blocks: the tool loads a copy padded
    erased, as QEMU's -bios leaves the rest of the bank. U-Boot sees the partition's RAM and the
    flash holding its own image, and its `reset` (PSCI SYSTEM_RESET) restarts the partition, which
    boots U-Boot again; the real-time partition beside it goes on."""
    image = UBOOT.read_bytes()
    with Console.boot("firmware_uboot.yaml") as con:
        fw_expect(con, "uboot", r"^U-Boot 20\d\d\.\d\d", 60)
        fw_expect(con, "uboot", r"^DRAM:\s+128 MiB$", 30)
        fw_expect(con, "uboot", r"Hit any key to stop autoboot", 60)
        con.send("\r")
        fw_expect(con, "uboot", UBOOT_PROMPT, 30)
        assert re.search(r"^U-Boot 20\d\d", uboot_command(con, "version"), re.M)
        out = uboot_command(con, "bdinfo")
        assert re.search(r"-> start\s+= 0x0*40000000", out) and re.search(r"-> size\s+= 0x0*8000000", out), out
        # Flash bank 0 in read-array mode: the image's first words, then past its end the padding.
        first = " ".join(f"{int.from_bytes(image[i:i + 4], 'little'):08x}" for i in range(0, 16, 4))
        assert first in uboot_command(con, "md.l 0 4")
        tail = -(-len(image) // 16) * 16
        assert "ffffffff ffffffff ffffffff ffffffff" in uboot_command(con, f"md.l {tail:#x} 4")
        before = counter_now(con)
        con.send("reset\r")
        con.until(lambda: re.search(r"partition uboot cold restart", con.text), "the partition's restart", 30)
        fw_expect(con, "uboot", r"^U-Boot 20\d\d\.\d\d", 60)
        fw_expect(con, "uboot", r"Hit any key to stop autoboot", 60)
        assert counter_now(con) > before, "the real-time partition ran on"
        no_hm_events(con)


def test_linux_boots_by_uboot_from_an_mbr_disk():
    """uboot_linux.yaml: Linux booted the embedded way. U-Boot (unmodified, from the partition's flash)
    finds the disk the tool built with an MBR partition table (`table: mbr`; virtio-blk passed
    through, identity-mapped RAM), and its distro boot, untouched, reads extlinux/extlinux.conf from
    the FAT partition and boots Debian's arm64 kernel and the initrd with the partition's device tree.
    Linux reaches user space with the command line of extlinux.conf; the real-time partition beside
    it never stops."""
    with Console.boot("uboot_linux.yaml") as con:  # the disk's initrd: `make linux-programs`
        fw_expect(con, "uboot", r"^U-Boot 20\d\d\.\d\d", 60)
        before = counter_now(con)
        fw_expect(con, "uboot", r"Scanning virtio 0:1\.\.\.", 120)
        fw_expect(con, "uboot", r"Found /extlinux/extlinux\.conf", 30)
        fw_expect(con, "uboot", r"Starting kernel \.\.\.", 120)
        fw_expect(con, "uboot", r"Machine model: Bulkhead partition uboot", 60)
        fw_expect(con, "uboot", r"^BHLINUX nproc=1$", 240)
        fw_expect(con, "uboot", r"/ # ", 30)
        con.send("cat /proc/cmdline\r")
        out = fw_expect(con, "uboot", r"(?P<out>console=.*\n)", 30)["out"]
        assert "rdinit=/init panic=-1" in out, out
        assert counter_now(con) > before + 100, "the real-time partition ran on while U-Boot booted Linux"
        no_hm_events(con)
