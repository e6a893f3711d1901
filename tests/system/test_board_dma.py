"""A device that does DMA in a partition with a virtual board (docs/configuration.md, `board:`):
blkprobe, a bare-metal program built for QEMU's virt machine (partitions/board/blkprobe, no Bulkhead
code), reads sector 0 of a virtio-blk disk by DMA through the virtio-mmio slot passed through to it
(board_dma.yaml: RAM identity mapped at 0x40000000, the hypervisor memory high in RAM, beside the
default system's real-time partitions), and prints exactly what it prints on bare QEMU, which is
what the disk file holds. Then from a FAT disk the tool builds from the files the description lists
(board_disk.yaml, `disk:`), which Linux mounts too (linux_disk.yaml)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from bulkhead.config import load
from bulkhead.qemu import qemu_command
from harness import BUILD, CONFIGS, ROOT, build_image, check_stage2_pool, run_command

PROBE = BUILD / "board" / "blkprobe.elf"
CONFIG = CONFIGS / "board_dma.yaml"
SLOT = 30


def disk_args(disk: Path, slot: int = SLOT) -> list[str]:
    """The disk as a virtio-blk device on virtio-mmio slot `slot` (QEMU's bus virtio-mmio-bus.N is the
    transport at 0x0a000000 + N * 0x200)."""
    return ["-drive", f"file={disk},format=raw,if=none,id=disk0",
            "-device", f"virtio-blk-device,drive=disk0,bus=virtio-mmio-bus.{slot}"]


def probe_lines(lines: list[str], prefix: str = "") -> list[str]:
    return [line[len(prefix):] for line in lines if line.startswith(prefix + "blkprobe: ")]


def fnv1a(data: bytes) -> int:
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def expected_sector_lines(disk: Path) -> list[str]:
    """What the probe must print about sector 0 of disk, computed from the file."""
    data = disk.read_bytes()[:512]
    text = lambda at: "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in data[at:at + 8])  # noqa: E731
    return [f"blkprobe: sector 0: 512 bytes, FNV-1a {fnv1a(data):#x}",
            f"blkprobe: sector 0 bytes 0-15: {data[:16].hex(' ')}",
            f"blkprobe: sector 0 bytes 510-511: {data[510:512].hex(' ')}",
            f"blkprobe: sector 0 text at 0x03: '{text(3)}'",
            f"blkprobe: sector 0 text at 0x36: '{text(0x36)}'",
            f"blkprobe: sector 0 text at 0x52: '{text(0x52)}'"]


def bare_run(disk: Path, modern: bool = False):
    """blkprobe alone on QEMU virt (EL2, the device tree at 0x40000000 as for any ELF -kernel)."""
    legacy = ["-global", "virtio-mmio.force-legacy=false"] if modern else []
    argv = ["qemu-system-aarch64", "-M", "virt,gic-version=3,virtualization=on", "-cpu", "cortex-a53",
            "-smp", "1", "-m", "256M", "-nic", "none", "-display", "none", "-monitor", "none",
            "-serial", "stdio", *legacy, *disk_args(disk), "-kernel", str(PROBE)]
    return run_command(argv, "blkprobe on bare QEMU" + (" (modern virtio-mmio)" if modern else ""), timeout=30)


def random_disk(tmp_path: Path) -> Path:
    disk = tmp_path / "disk.img"
    disk.write_bytes(os.urandom(512) + bytes(1024 * 1024 - 512))
    return disk


def test_bare_metal_program_reads_a_disk_by_dma_in_a_board_partition(tmp_path):
    disk = random_disk(tmp_path)
    bare = bare_run(disk)
    expected = probe_lines(bare.lines)
    assert bare.exited and expected[-1] == "blkprobe: done, SYSTEM_OFF", expected
    assert f"blkprobe: virtio-blk at {0x0A000000 + SLOT * 0x200:#x}, virtio-mmio version 1" in expected
    assert "blkprobe: capacity 2048 sectors" in expected
    for line in expected_sector_lines(disk):
        assert line in expected, (line, expected)

    image = build_image(CONFIG)
    argv = qemu_command(load(CONFIG), image, interactive=False) + disk_args(disk)
    run = run_command(argv, CONFIG.name, timeout=90,
                      until=lambda r: r.index(r"partition blk halted") >= 0
                      and r.index(r"\[control\] cycle 10:") >= 0 and r.index(r"\[monitor\] uptime") >= 0)
    got = probe_lines(run.lines, "[blk] ")
    assert got == expected, "\n".join(got)
    assert run.index(r"HM: partition") < 0, "a health-monitor event"
    assert run.index("PANIC") < 0
    check_stage2_pool(CONFIG, run.log)


def test_the_modern_virtio_mmio_interface_reads_the_same_sector(tmp_path):
    disk = random_disk(tmp_path)
    lines = probe_lines(bare_run(disk, modern=True).lines)
    assert f"blkprobe: virtio-blk at {0x0A000000 + SLOT * 0x200:#x}, virtio-mmio version 2" in lines
    for line in expected_sector_lines(disk):
        assert line in lines, (line, lines)
    assert lines[-1] == "blkprobe: done, SYSTEM_OFF"


DISK_CONFIG = CONFIGS / "board_disk.yaml"


def mtools(*argv: str) -> bytes:
    env = {**os.environ, "MTOOLS_SKIP_CHECK": "1"}  # mtools' geometry check is for floppies
    return subprocess.run(list(argv), capture_output=True, check=True, env=env).stdout


def test_the_probe_reads_the_fat_boot_sector_of_the_disk_the_tool_built():
    image = build_image(DISK_CONFIG)
    disk = image.parent / "blk.disk"
    system = load(DISK_CONFIG)
    # The files the description lists, read back from the FAT by mtools.
    for dest, source in (("EFI/BOOT/BOOTAA64.EFI", BUILD / "board" / "virtprobe.elf"),
                         ("docs/README.md", ROOT / "README.md")):
        assert mtools("mtype", "-i", str(disk), f"::/{dest}") == source.read_bytes(), dest
    assert disk.stat().st_size == system.partition_named("blk").disk.size
    run = run_command(qemu_command(system, image, interactive=False), DISK_CONFIG.name, timeout=60,
                      until=lambda r: r.index(r"partition blk halted") >= 0)
    got = probe_lines(run.lines, "[blk] ")
    assert "blkprobe: virtio-blk at 0xa003a00, virtio-mmio version 1" in got, got
    assert got[-1] == "blkprobe: done, SYSTEM_OFF", got
    for line in expected_sector_lines(disk):
        assert line in got, (line, got)
    assert "blkprobe: sector 0 bytes 510-511: 55 aa" in got  # the boot sector signature
    assert "blkprobe: sector 0 text at 0x36: 'FAT16   '" in got or "blkprobe: sector 0 text at 0x36: 'FAT12   '" in got
    assert run.index(r"HM: partition") < 0


def test_linux_mounts_the_fat_disk_the_tool_built():
    """The same disk mechanism for a Linux partition: Debian's kernel (virtio_blk, vfat) mounts it and
    reads the listed files back (tests/system/linux/disk-init.sh)."""
    config = CONFIGS / "linux_disk.yaml"
    run = run_command(qemu_command(load(config), build_image(config), interactive=False), config.name,
                      timeout=180, until=lambda r: r.index(r"partition linux halted") >= 0)
    said = {}  # "BHDISK key value" lines of the init script
    for line in run.lines:
        if line.startswith("[linux] BHDISK "):
            key, _, value = line[len("[linux] BHDISK "):].partition(" ")
            said[key] = value.strip()
    assert "done" in said and "mount" not in said and "modprobe" not in said, said
    assert (said["label"], said["type"]) == ("BULKHEAD", "FAT16"), said
    assert said["hello"] == (ROOT / "tests/system/linux/disk-hello.txt").read_text().strip()
    assert said["md5"] == hashlib.md5((BUILD / "board" / "blkprobe.bin").read_bytes()).hexdigest()
    assert said["files"].split() == ["./EFI/BOOT/BOOTAA64.EFI", "./hello.txt"]
    assert run.index(r"HM: partition") < 0
