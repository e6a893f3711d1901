"""A partition's disk (docs/configuration.md, `disk:`): a FAT image the tool builds from the files the
description lists, attached to QEMU as a virtio-blk device in the virtio-mmio slot the partition has
passed through, so the partition's program (a bare-metal reader, UEFI, Linux) reads it by DMA.

The image is formatted by mkfs.vfat (dosfstools) and filled by mmd and mcopy (mtools): real tools,
whose FAT any reader accepts. It is written as <partition>.disk beside the boot image, where the QEMU
command line looks for it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from bulkhead.diagnostics import Diagnostics
from bulkhead.model import Located, Partition, System
from bulkhead.toolchain import ToolError
from bulkhead.units import G, K, M, size_text

MIN_SIZE = 1 * M     # mkfs.vfat's FAT12 needs far less; whole MiB keep the sizes simple
MAX_SIZE = 2 * G     # a FAT32 volume may be larger; a test disk need not be
FAT_OVERHEAD = 64 * K  # boot sector, FATs and root directory of a small volume, roughly
CLUSTER = 4 * K        # the largest cluster mkfs.vfat picks up to 2G: each file takes whole ones
NAME_FORBIDDEN = re.compile(r'[\x00-\x1f"*:<>?\\|]')  # not allowed in FAT long names
LABEL = "BULKHEAD"
TABLES = ("none", "mbr")
SECTOR = 512
MBR_FIRST_SECTOR = 2048  # the partition starts at 1 MiB, as partitioning tools place it
# The partition type of each FAT mkfs.vfat may pick (its boot sector says which), LBA addressed.
MBR_TYPES = {b"FAT12   ": 0x01, b"FAT16   ": 0x0E, b"FAT32   ": 0x0C}
MBR_TYPE_AT = 446 + 4


@dataclass
class DiskFile(Located):
    dest: str                 # path inside the disk, as written
    source: str | None = None  # host file, as written
    path: Path | None = None   # resolved against the description's directory


@dataclass
class DiskSpec(Located):
    device: str | None = None  # the partition's virtio-mmio device that carries it, as written
    size: int | None = None
    files: list[DiskFile] = field(default_factory=list)
    table: str = "none"        # "none": the FAT is the whole disk; "mbr": its one partition
    slot: int | None = None    # checks: the virtio-mmio slot of device


def disk_of(part: Partition) -> DiskSpec | None:
    return part.disk


def disk_file_name(part: Partition) -> str:
    return f"{part.name}.disk"


# --- checks -------------------------------------------------------------------------------------

def check_disks(system: System, diags: Diagnostics) -> None:
    """Each disk names one of its partition's virtio-mmio devices, has a size in range, and lists
    files that exist, under valid FAT paths, that fit."""
    for part in system.partitions:
        spec = disk_of(part)
        if spec is None:
            continue
        _check_device(part, spec, diags)
        _check_table(part, spec, diags)
        _check_size(part, spec, diags)
        _check_files(part, spec, diags)


def _check_device(part: Partition, spec: DiskSpec, diags: Diagnostics) -> None:
    if spec.device is None:
        return
    device = next((d for d in part.devices if d.text == spec.device), None)
    virtio = [d.text for d in part.devices if d.kind == "virtio-mmio"]
    if device is None or device.kind != "virtio-mmio":
        have = f"its virtio-mmio devices: {', '.join(virtio)}" if virtio else "it has none"
        diags.error(spec.at("device"), f"{part.title}: disk.device '{spec.device}' is not one of the partition's "
                    f"virtio-mmio devices ({have}); the disk is a virtio-blk device in a slot passed through to the "
                    f"partition: add it to 'devices', e.g. 'devices: [virtio-mmio@30]', and name it here")
        return
    spec.slot = device.slot


def _check_table(part: Partition, spec: DiskSpec, diags: Diagnostics) -> None:
    if spec.table not in TABLES:
        diags.error(spec.at("table"), f"{part.title}: disk.table '{spec.table}' is not one of: {', '.join(TABLES)} "
                    f"('mbr': a partition table with the FAT as its one partition, which firmware such as U-Boot "
                    f"scans for; 'none': the FAT is the whole disk)")


def _fat_offset(spec: DiskSpec) -> int:
    return MBR_FIRST_SECTOR * SECTOR if spec.table == "mbr" else 0


def _check_size(part: Partition, spec: DiskSpec, diags: Diagnostics) -> None:
    size = spec.size
    if size is None:
        return
    if size < MIN_SIZE or size > MAX_SIZE or size % M:
        diags.error(spec.at("size"), f"{part.title}: disk.size {size_text(size)} is not a whole number of MiB from "
                    f"{size_text(MIN_SIZE)} to {size_text(MAX_SIZE)}; use e.g. 16M")
        return
    need = _fat_offset(spec) + FAT_OVERHEAD + sum(_clusters(f.path) for f in spec.files if f.path is not None and f.path.is_file())
    if need > size:
        diags.error(spec.at("size"), f"{part.title}: disk.size {size_text(size)} cannot hold the files, which take "
                    f"about {size_text(need)} with the FAT's own sectors; use at least "
                    f"{size_text(-(-need // M) * M)}")


def _clusters(path: Path) -> int:
    return -(-path.stat().st_size // CLUSTER) * CLUSTER


def _check_files(part: Partition, spec: DiskSpec, diags: Diagnostics) -> None:
    seen: dict[str, DiskFile] = {}
    for item in spec.files:
        problem = dest_problem(item.dest)
        if problem:
            diags.error(item.pos, f"{part.title}: disk file '{item.dest}' {problem}")
            continue
        key = str(PurePosixPath(item.dest.strip("/"))).upper()  # FAT names ignore case
        if key in seen:
            diags.error(item.pos, f"{part.title}: disk file '{item.dest}' is the same FAT path as "
                        f"'{seen[key].dest}' (line {seen[key].pos.line}; FAT ignores case); remove one")
            continue
        seen[key] = item
        if item.path is not None and not item.path.is_file():
            what = "is a directory" if item.path.is_dir() else "does not exist"
            diags.error(item.at("source"), f"{part.title}: '{item.source}' (disk file {item.dest}) {what}; list "
                        f"each file of the disk with its host file (relative paths start at the directory of the "
                        f"configuration file)")


def dest_problem(dest: str) -> str | None:
    """Why dest cannot be a path in the FAT image, or None."""
    parts = dest.strip("/").split("/")
    if not dest.strip("/"):
        return "is empty; give a path such as EFI/BOOT/BOOTAA64.EFI"
    if any(p in ("", ".", "..") for p in parts):
        return "has an empty, '.' or '..' component; write a plain path such as EFI/BOOT/BOOTAA64.EFI"
    bad = next((p for p in parts if NAME_FORBIDDEN.search(p) or p.endswith((" ", "."))), None)
    if bad is not None:
        return (f"has the name '{bad}', which FAT does not allow (no control characters, \" * : < > ? \\ |, "
                f"and no trailing space or dot); rename it")
    return None


# --- building -----------------------------------------------------------------------------------

def mkfs_program() -> str | None:
    return shutil.which("mkfs.vfat") or next(
        (p for p in ("/sbin/mkfs.vfat", "/usr/sbin/mkfs.vfat") if os.access(p, os.X_OK)), None)


def write_disks(system: System, out: Path) -> dict[str, dict[str, Path]]:
    """Build <name>.disk for every partition with a disk; remove stale ones."""
    for stale in out.glob("*.disk"):
        stale.unlink()
    written = {}
    for part in system.by_id():
        spec = disk_of(part)
        if spec is not None:
            image = out / disk_file_name(part)
            build_fat(spec, image)
            written[part.name] = {"disk": image}
    return written


def mbr(disk_size: int, fat_type: int) -> bytes:
    """A master boot record with one bootable partition of fat_type, from MBR_FIRST_SECTOR to the disk's
    end (no boot code: firmware reads the partition itself)."""
    count = disk_size // SECTOR - MBR_FIRST_SECTOR
    entry = bytes([0x80, 0xFE, 0xFF, 0xFF, fat_type, 0xFE, 0xFF, 0xFF])  # CHS: past 1024 cylinders
    entry += MBR_FIRST_SECTOR.to_bytes(4, "little") + count.to_bytes(4, "little")
    return bytes(446) + entry + bytes(48) + b"\x55\xaa"


def _fat_type(image: Path, offset: int) -> int:
    """The partition type of the FAT mkfs.vfat wrote at offset (its boot sector's type string)."""
    with open(image, "rb") as stream:
        stream.seek(offset)
        boot = stream.read(SECTOR)
    return next(t for name, t in MBR_TYPES.items() if name in (boot[0x36:0x3E], boot[0x52:0x5A]))


def build_fat(spec: DiskSpec, image: Path) -> None:
    """A FAT image of spec.size holding spec.files (directories made as needed), with table "mbr" in
    the one partition of a partition table."""
    mkfs = mkfs_program()
    if mkfs is None:
        raise ToolError("mkfs.vfat is not installed (Debian package dosfstools); it formats a partition's disk")
    with open(image, "wb") as stream:
        stream.truncate(spec.size)
    offset = _fat_offset(spec)
    fat_args = ["--offset", str(offset // SECTOR), str(image), str((spec.size - offset) // K)] if offset else [str(image)]
    _run([mkfs, "-n", LABEL, "-i", "B0C4EAD0", *fat_args], "mtools and dosfstools")
    if offset:
        with open(image, "r+b") as stream:
            stream.write(mbr(spec.size, _fat_type(image, offset)))
    volume = f"{image}@@{offset}" if offset else str(image)
    made: set[str] = set()
    for item in spec.files:
        parts = item.dest.strip("/").split("/")
        for depth in range(1, len(parts)):
            directory = "/".join(parts[:depth])
            if directory.upper() not in made:
                _run(["mmd", "-i", volume, f"::/{directory}"], "mtools")
                made.add(directory.upper())
        _run(["mcopy", "-i", volume, str(item.path), f"::/{'/'.join(parts)}"], "mtools")


def _run(argv: list[str], package: str) -> None:
    try:
        result = subprocess.run(argv, capture_output=True, text=True,
                                env={**os.environ, "MTOOLS_SKIP_CHECK": "1"})
    except OSError as exc:
        raise ToolError(f"cannot run {argv[0]}: {exc.strerror}; install {package} (scripts/bootstrap.sh does)") from exc
    if result.returncode != 0:
        output = (result.stderr + result.stdout).rstrip()
        raise ToolError(f"building a disk image failed (exit {result.returncode}): {' '.join(argv)}\n{output}")


# --- QEMU ---------------------------------------------------------------------------------------

def missing_disks(system: System, directory: Path) -> list[Path]:
    """The disks the QEMU command names in directory that are not there (QEMU's own message does not
    say that the tool builds them)."""
    paths = [directory / disk_file_name(part) for part in system.by_id() if disk_of(part) is not None]
    return [path for path in paths if not path.is_file()]


def qemu_disk_args(system: System, directory: Path) -> list[str]:
    """Each disk as a virtio-blk device on the virtio-mmio bus of its slot (QEMU's virtio-mmio-bus.N is
    the transport at 0x0a000000 + N * 0x200), read from <name>.disk in directory."""
    argv = []
    for part in system.by_id():
        spec = disk_of(part)
        if spec is None or spec.slot is None:
            continue
        drive = f"disk-{part.name}"
        argv += ["-drive", f"file={directory / disk_file_name(part)},format=raw,if=none,id={drive}",
                 "-device", f"virtio-blk-device,drive={drive},bus=virtio-mmio-bus.{spec.slot}"]
    return argv
