"""Firmware boot of a board partition (docs/configuration.md, "firmware" and "flash"), as QEMU's
virt machine does it for -bios: the firmware image in CFI flash bank 0 (guest 0x00000000, 64 MiB),
its variables in bank 1 (0x04000000, 64 MiB), vCPU 0 started at 0x0, the device tree at the start
of RAM. Every board partition also gets a PL031 real-time clock (0x09010000, SPI 2).

A bank is not stored whole: only its image's used part has RAM behind it (an area of the
partition at the bank's guest address, read-only and executable; writes trap and are flash
commands, arch/aarch64/vflash.c); the rest of the 64 MiB reads as erased. The RAM is filled by
the QEMU runner, which loads each image file at its physical address (QEMU's generic loader)
before the hypervisor starts; the hypervisor never reloads it, so what the guest programs
survives a partition restart. With `write_back: true` the runner saves bank 1 into its file
when the run ends (qemu.py, FlashWriteBack).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from bulkhead.devicetree import Cells, Node, Ref, reg
from bulkhead.diagnostics import Diagnostics, Pos
from bulkhead.model import Area, Partition, System
from bulkhead.toolchain import ToolError
from bulkhead.units import K, M, hexa, size_text, span
from bulkhead.yamlsrc import pos_of

BANK_SIZE = 64 * M
BLOCK = 256 * K
BANK_IPA = (0x0000_0000, 0x0400_0000)
RTC_IPA, RTC_SIZE, RTC_INTID = 0x0901_0000, 0x1000, 34  # SPI 2
HOST_RTC_PA = 0x0901_0000  # the platform's PL031 (qemu-virt), read once by the hypervisor
FIRMWARE_KEYS = ("image", "phys")
FLASH_KEYS = ("image", "phys", "size", "write_back")


@dataclass
class BankSpec:
    """One flash bank's image: the file, where its RAM is, how much of the bank it backs."""

    pos: Pos
    bank: int
    where: str = ""  # e.g. "partitions[1].flash", for messages
    marks: dict[str, Pos] = field(default_factory=dict)
    image: str | None = None
    path: Path | None = None
    phys: int | None = None
    size: int | None = None       # backed bytes: the image's size (bank 0: up to a whole block)
    file_size: int | None = None  # the image file's own size
    write_back: bool = False

    def at(self, *keys: str) -> Pos:
        return next((self.marks[k] for k in keys if k in self.marks), self.pos)


def read_keys(reader, fields: dict, part: Partition, where: str, base_dir: Path) -> None:
    """`firmware:` and `flash:` of a partition, into part.firmware / part.flash and their areas."""
    for key, bank, allowed in (("firmware", 0, FIRMWARE_KEYS), ("flash", 1, FLASH_KEYS)):
        if key not in fields:
            continue
        node = fields[key]
        spec = BankSpec(pos_of(node), bank, f"{where}.{key}")
        pairs = reader.pairs(node, f"{where}.{key}")
        if pairs is None:
            continue
        _read_bank(reader, spec, pairs, f"{where}.{key}", allowed, base_dir)
        setattr(part, key, spec)
    _check_combination(reader.diags, fields, part, where)
    for spec in (part.firmware, part.flash):
        if spec is not None:
            _size_bank(reader.diags, spec, f"{where}.{'firmware' if spec.bank == 0 else 'flash'}")
            _add_area(part, spec)


def _read_bank(reader, spec: BankSpec, pairs, where: str, allowed: tuple[str, ...], base_dir: Path) -> None:
    for key, key_node, value in pairs:
        spec.marks[key] = pos_of(value)
        if key not in allowed:
            reader.diags.error(pos_of(key_node), f"unknown key '{key}' in {where}; use: {', '.join(allowed)}")
        elif key == "image":
            spec.image = reader.string(value, f"{where}.image")
            spec.path = base_dir / spec.image if spec.image else None
        elif key == "phys":
            spec.phys = reader.integer(value, f"{where}.phys", "0x50000000")
        elif key == "size":
            spec.size = reader.integer(value, f"{where}.size", "768K")
        elif key == "write_back":
            spec.write_back = bool(reader.boolean(value, f"{where}.write_back"))
    for key in ("image", "phys"):
        if key not in spec.marks:
            reader.diags.error(spec.pos, f"missing required key '{key}' in {where}; e.g. "
                               f"'{{image: path/to/file.fd, phys: 0x50000000}}'")


def _check_combination(diags: Diagnostics, fields: dict, part: Partition, where: str) -> None:
    if "firmware" in fields:
        if "board" not in fields:
            diags.error(pos_of(fields["firmware"]), f"{where}.firmware needs 'board: qemu-virt': firmware boots on "
                        f"the board's flash; add the board")
        for key in ("image", "entry"):
            if key in fields:
                diags.error(pos_of(fields[key]), f"{where}.{key} cannot be given with firmware: the partition "
                            f"starts in its firmware at flash address 0x0; remove '{key}'")
    if "flash" in fields and "firmware" not in fields:
        diags.error(pos_of(fields["flash"]), f"{where}.flash (the variables bank) needs 'firmware:' (bank 0); "
                    f"add the firmware image or remove flash")


def _size_bank(diags: Diagnostics, spec: BankSpec, where: str) -> None:
    """The backed size: the image file's size, or (flash only, file not there yet) size."""
    if spec.path is None:
        return
    if spec.path.exists() and not spec.path.is_file():
        what = "a directory" if spec.path.is_dir() else "not a regular file"
        image = "the firmware's image file" if spec.bank == 0 else \
            "the variables' image file (or a path where the runner may create it)"
        diags.error(spec.at("image"), f"{where}.image '{spec.image}' is {what}; give {image}")
        spec.size = None
        return
    if spec.path.is_file():
        actual = spec.path.stat().st_size
        if spec.bank == 1 and spec.size is not None and spec.size != actual:
            diags.error(spec.at("size"), f"{where}.size {size_text(spec.size)} differs from the "
                        f"{size_text(actual)} of '{spec.image}'; remove size, or delete the file to start "
                        f"from an erased one of this size")
            return
        spec.size = spec.file_size = actual
        if spec.bank == 0 and 0 < actual <= BANK_SIZE:
            spec.size = -(-actual // BLOCK) * BLOCK  # as QEMU's -bios: the rest of the block erased
    elif spec.bank == 0:
        diags.error(spec.at("image"), f"{where}.image '{spec.image}' does not exist (relative paths start at the "
                    f"directory of the configuration file); install the firmware (e.g. package qemu-efi-aarch64: "
                    f"/usr/share/qemu-efi-aarch64/QEMU_EFI.fd) or fix the path")
        return
    elif spec.size is None:
        diags.error(spec.at("image"), f"{where}.image '{spec.image}' does not exist yet and no size is given; add "
                    f"e.g. 'size: 768K' (the runner then creates it erased)")
        return
    if spec.bank == 0 and (spec.size == 0 or spec.size > BANK_SIZE):
        what = "empty" if spec.size == 0 else f"{size_text(spec.size)}, more than the {size_text(BANK_SIZE)} of flash bank 0"
        diags.error(spec.at("image"), f"{where}: image '{spec.image}' is {what}; use the firmware's image file "
                    f"(the bank's contents from address 0, at most {size_text(BANK_SIZE)})")
        spec.size = None
    elif spec.size == 0 or spec.size % BLOCK or spec.size > BANK_SIZE:
        what = f"size {size_text(spec.size)}" if "size" in spec.marks else f"image '{spec.image}'"
        diags.error(spec.at("size", "image"), f"{where}: {what} is not a whole number of {size_text(BLOCK)} erase "
                    f"blocks up to the {size_text(BANK_SIZE)} of a flash bank; pad or cut the image (the "
                    f"variables bank is written back whole: its image must be a multiple of {size_text(BLOCK)}, "
                    f"at most {size_text(BANK_SIZE)})")
        spec.size = None


def _add_area(part: Partition, spec: BankSpec) -> None:
    """The bank's backed part, an area of the partition so that every area check covers it."""
    if spec.size is None or spec.phys is None:
        return
    area = Area(spec.pos, index=len(part.areas), label=f"flash bank {spec.bank}", phys=spec.phys,
                guest=BANK_IPA[spec.bank], size=spec.size, rights="rx")
    area.marks["phys"] = spec.at("phys")
    area.flash_bank = spec.bank
    part.areas.append(area)


def check_files(system: System, diags: Diagnostics) -> None:
    """A variables bank written back when the run ends has a file nothing else reads: shared with
    another partition's variables it would carry one partition's data into the other's flash at the
    next run; shared with a firmware image, a partition's image, a disk's file or a Linux kernel or
    initramfs, what the firmware wrote would become that firmware, code or data at the next build."""
    inputs = _inputs(system)
    for part in system.partitions:
        spec = part.flash
        if spec is None or spec.path is None or not spec.write_back:
            continue
        for other_part, what, path, pos, harm in inputs:
            if path is spec.path or not _same_file(spec.path, path):
                continue
            diags.error(spec.at("image"), f"{spec.where}.image '{spec.image}' is written back when the run ends, "
                        f"but is also the {what} of {other_part.title} (line {pos.line}): {harm}")


_OWN_FILE = "give the variables their own file"


def _inputs(system: System) -> list[tuple[Partition, str, Path, Pos, str]]:
    """Every file a build or a run of system reads: (partition, what it is, path, where it is named,
    what writing variables into it would do)."""
    code = f"what the firmware writes would become that partition's code at the next build; {_OWN_FILE}"
    found = []
    for part in system.partitions:
        if part.image_path is not None:
            found.append((part, "image", part.image_path, part.at("image"), code))
        for spec in (part.firmware, part.flash):
            if spec is not None and spec.path is not None:
                harm = (f"the variables would overwrite the firmware; {_OWN_FILE}" if spec.bank == 0 else
                        "one partition's variables would become the other's; give each partition's variables "
                        "their own file")
                found.append((part, "firmware image" if spec.bank == 0 else "flash image", spec.path,
                              spec.at("image"), harm))
        for item in (part.disk.files if part.disk is not None else []):
            if item.path is not None:
                found.append((part, f"disk file {item.dest}", item.path, item.at("source"),
                              f"what the firmware writes would be on that partition's disk at the next build; "
                              f"{_OWN_FILE}"))
        linux = part.linux
        for what, path in (("Linux kernel", getattr(linux, "kernel_path", None)),
                           ("initramfs", getattr(linux, "initramfs_file_path", None))):
            if path is not None:
                found.append((part, what, path, linux.at("kernel" if what == "Linux kernel" else "initramfs"), code))
    return found


def _same_file(a: Path, b: Path) -> bool:
    """The same file, through links too."""
    if a.exists() and b.exists():
        return a.samefile(b)
    return a.resolve() == b.resolve()


def emulated_rtc(part: Partition) -> bool:
    """A board partition has the emulated PL031 unless the real one is passed through to it."""
    return part.board is not None and not any(
        a.is_device and a.placed and a.guest <= RTC_IPA < a.guest + a.size for a in part.areas)


def emulated_ranges(part: Partition) -> list[tuple[str, int, int]]:
    """(what, guest base, size) of everything the hypervisor emulates in part's guest address space
    (nothing for a paravirtual partition): the machine of a Linux or board partition, a board's
    PL031 and, with firmware, its flash banks. Stage 2 must map nothing there, or the guest's
    accesses reach that memory instead of the device (and a flash bank's window is unmapped whole,
    2 MiB at a time, whenever the bank leaves read-array mode)."""
    from bulkhead import linux

    if part.linux is None and part.board is None:
        return []
    return linux.vmachine_ranges(len(part.vcpus)) + board_ranges(part)


def board_ranges(part: Partition) -> list[tuple[str, int, int]]:
    """(what, guest base, size) of a board partition's own emulated devices: its PL031, and with
    firmware its flash banks (none for other partitions)."""
    if part.board is None:
        return []
    ranges = [("the emulated PL031 real-time clock", RTC_IPA, RTC_SIZE)] if emulated_rtc(part) else []
    if part.firmware is not None:
        ranges.append(("the flash banks", BANK_IPA[0], 2 * BANK_SIZE))
    return ranges


def check_boards(system: System, diags: Diagnostics) -> None:
    """No area of a board partition over its RTC, nor (with firmware) over its flash banks."""
    for part in system.partitions:
        ranges = board_ranges(part)
        for area in part.areas:
            if not area.placed or getattr(area, "flash_bank", None) is not None:
                continue
            for what, base, size in ranges:
                if area.guest < base + size and base < area.guest + area.size:
                    diags.error(area.at("guest", "phys"), f"{part.title} {area.title}: guest range "
                                f"{span(area.guest, area.size)} overlaps {what} ({span(base, size)}) of board "
                                f"'{part.board}'; use other guest addresses")


def check_image(part: Partition, diags: Diagnostics) -> None:
    """A firmware partition has no ELF: its only segment is the device tree at the start of RAM."""
    from bulkhead import linux

    if part.firmware is None or part.board is None:
        return
    from bulkhead.board import board_of
    board = board_of(part)
    if board is not None:
        part.board_dtb = linux.PayloadSegment("device tree", board.ram_base, 0, 0)


def add_nodes(part: Partition, root: Node) -> None:
    """The board's RTC, and with firmware its flash, in the partition's device tree (as QEMU's)."""
    flash = [a for a in part.areas if getattr(a, "flash_bank", None) is not None]
    names = {f"memory@{a.guest:x}" for a in flash}
    root.children = [c for c in root.children if c.name not in names]  # flash is not RAM
    if emulated_rtc(part):
        rtc = root.add(Node(f"pl031@{RTC_IPA:x}"))
        rtc.prop("compatible", ["arm,pl031", "arm,primecell"]).prop("reg", reg(RTC_IPA, RTC_SIZE))
        rtc.prop("interrupts", Cells(0, RTC_INTID - 32, 4))
        rtc.prop("clocks", Cells(Ref("apb_pclk"))).prop("clock-names", "apb_pclk")
    if part.firmware is not None:
        node = root.add(Node(f"flash@{BANK_IPA[0]:x}"))
        node.prop("compatible", "cfi-flash").prop("bank-width", Cells(4))
        node.prop("reg", [reg(BANK_IPA[0], BANK_SIZE), reg(BANK_IPA[1], BANK_SIZE)])


def vmachine_fields(part: Partition) -> str:
    """The board fields of struct bh_vmachine_cfg (emit_c.py)."""
    if part.board is None:
        return ""
    text = ""
    if emulated_rtc(part):
        text = (f"\t.rtc_ipa = {hexa(RTC_IPA)}ul,\n\t.rtc_host_pa = {hexa(HOST_RTC_PA)}ul,\n"
                f"\t.rtc_intid = {RTC_INTID}u,\n")
    if part.firmware is None:
        return text
    banks = []
    for bank, spec in enumerate((part.firmware, part.flash)):
        phys, backed = (spec.phys, spec.size) if spec is not None and spec.size else (0, 0)
        banks.append(f"\t\t{{ .ipa = {hexa(BANK_IPA[bank])}ul, .size = {hexa(BANK_SIZE)}ul, "
                     f".phys = {hexa(phys)}ul, .backed = {hexa(backed)}ul }},\n")
    return text + f"\t.flash_count = 2u,\n\t.flash = {{\n{''.join(banks)}\t}},\n"


def _padded_file_name(part: Partition) -> str:
    return f"{part.name}.firmware.fd"


def _padded(spec: BankSpec | None) -> bool:
    """A firmware image that ends inside an erase block: loaded from a copy padded erased."""
    return spec is not None and spec.size is not None and spec.file_size is not None and spec.size != spec.file_size


def write_padded(system: System, out: Path) -> dict[str, dict[str, Path]]:
    """<name>.firmware.fd in out for each firmware image that is not whole blocks: the image, then 0xff
    (erased flash) to its last block's end, as QEMU's -bios leaves the rest of bank 0. Stale ones go."""
    for stale in out.glob("*.firmware.fd"):
        stale.unlink()
    written = {}
    for part in system.by_id():
        spec = part.firmware
        if _padded(spec):
            copy = out / _padded_file_name(part)
            copy.write_bytes(spec.path.read_bytes() + b"\xff" * (spec.size - spec.file_size))
            written[part.name] = {"firmware": copy}
    return written


SIZES_FILE = "flash-sizes.json"


def _file_sizes(system: System) -> dict[str, int]:
    """Each bank image's size as the tables are built for it, by file."""
    return {str(spec.path.resolve()): spec.file_size if spec.bank == 0 else spec.size
            for part in system.by_id() for spec in (part.firmware, part.flash)
            if spec is not None and spec.path is not None and spec.size}


def write_sizes(system: System, out: Path) -> None:
    """What the boot image in out was built for: the runner loads no bank image of another size."""
    (out / SIZES_FILE).write_text(json.dumps(_file_sizes(system), indent=1, sort_keys=True) + "\n")


def _check_sizes(system: System, directory: Path) -> None:
    """A bank image whose size changed since the build would be loaded beyond the RAM the tables give
    its bank (into whatever follows), and a variables bank written back at the new size would save
    that memory into the file: refused, with the size the build used."""
    try:
        built = json.loads((directory / SIZES_FILE).read_text())
    except (OSError, ValueError):
        return  # not built by this tool version: nothing to compare
    for path, size in _file_sizes(system).items():
        if path in built and built[path] != size:
            raise ToolError(f"'{path}' is {size_text(size)} now, but the boot image in {directory} was built for "
                            f"{size_text(built[path])}; rebuild it (bulkhead build)")


def loader_args(system: System, directory: Path) -> list[str]:
    """QEMU arguments that put each bank image into its RAM before the hypervisor starts (a firmware
    image that is not whole blocks from its padded copy in directory, write_padded); a missing
    variables image is created erased first. Refused if an image's size is not the one the boot
    image in directory was built for."""
    _check_sizes(system, directory)
    args = []
    for part in system.by_id():
        for spec in (part.firmware, part.flash):
            if spec is None or spec.path is None or spec.phys is None:
                continue
            if not spec.path.exists():
                _create_erased(spec)
            path = directory / _padded_file_name(part) if spec.bank == 0 and _padded(spec) else spec.path
            args += ["-device", f"loader,file={path.resolve()},addr={hexa(spec.phys)},force-raw=on"]
    return args


def _create_erased(spec: BankSpec) -> None:
    """A missing variables image, erased (all ones), its directory made as needed."""
    try:
        spec.path.parent.mkdir(parents=True, exist_ok=True)
        spec.path.write_bytes(b"\xff" * spec.size)
    except OSError as exc:
        raise ToolError(f"{spec.where}.image: cannot create the erased variables image '{spec.path}': "
                        f"{exc.strerror}; give a path in a directory that exists or can be made") from exc


def write_backs(system: System) -> list[tuple[int, int, Path]]:
    """(phys, size, file) of every variables bank to save when the run ends."""
    return [(p.flash.phys, p.flash.size, p.flash.path.resolve()) for p in system.by_id()
            if p.flash is not None and p.flash.write_back and p.flash.size and p.flash.phys is not None]
