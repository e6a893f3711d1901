"""Virtual boards (docs/configuration.md, `board:`): a partition with an ELF image built for a real
machine sees that machine's layout. One board so far, `qemu-virt`: the emulated machine of Linux
partitions (struct bh_vmachine_cfg: GICv3 distributor and redistributors, PL011, PSCI/SMCCC on SMC and
HVC, at QEMU virt's addresses), RAM at the board's RAM base whatever its physical address, and a device
tree the tool generates, at the start of RAM as QEMU puts it for an ELF loaded with -kernel, its guest
address in x0 at entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bulkhead import firmware, linux
from bulkhead.devicetree import compile_dts, to_dts
from bulkhead.diagnostics import Diagnostics
from bulkhead.model import Partition, System
from bulkhead.toolchain import ToolError
from bulkhead.units import M, hexa, size_text, span


@dataclass(frozen=True)
class Board:
    name: str
    ram_base: int   # guest address of the RAM (the first normal area)
    dtb_size: int   # the device tree's slot at the start of RAM, kept free of the image


BOARDS = {"qemu-virt": Board("qemu-virt", ram_base=0x4000_0000, dtb_size=1 * M)}


def board_of(part: Partition) -> Board | None:
    return BOARDS.get(part.board) if part.board is not None else None


def check_boards(system: System, diags: Diagnostics) -> None:
    """Checks without the image: the board is known, RAM at its RAM base, no area over its devices,
    no DMA device passed through (RAM is not identity mapped)."""
    for part in system.partitions:
        if part.board is None or part.linux is not None:  # board with linux: reported by the reader
            continue
        board = board_of(part)
        if board is None:
            diags.error(part.at("board"), f"{part.title}: board '{part.board}' is not known; use one of: "
                        f"{', '.join(BOARDS)}")
            continue
        for device in part.devices:
            if device.kind == "virtio-mmio":
                diags.error(device.pos, f"{part.title}: {device.text} does DMA, but the RAM of a partition with "
                            f"board '{board.name}' is not identity mapped, so the device would write to the wrong "
                            f"memory; pass no DMA device to a partition with a board (for now), or remove 'board'")
        _check_areas(part, board, diags)


def _check_areas(part: Partition, board: Board, diags: Diagnostics) -> None:
    ram = linux.ram_area(part)
    if ram is None:
        if part.areas_ok:
            diags.error(part.at("memory"), f"{part.title}: board '{board.name}' needs a normal memory area (its "
                        f"RAM) at guest {hexa(board.ram_base)}; add one, e.g. '- {{name: ram, phys: 0x48000000, "
                        f"guest: {hexa(board.ram_base)}, size: 16M, rights: rwx}}'")
        return
    if ram.placed and ram.guest != board.ram_base:
        diags.error(ram.at("guest", "phys"), f"{part.title} {ram.title}: the first normal area is the RAM of board "
                    f"'{board.name}' and must start at guest {hexa(board.ram_base)}, not {hexa(ram.guest)}; set "
                    f"'guest: {hexa(board.ram_base)}' (phys may be any free RAM)")
    elif ram.placed and ram.size <= board.dtb_size:
        diags.error(ram.at("size"), f"{part.title} {ram.title}: {size_text(ram.size)} leaves nothing beside the "
                    f"device tree's {size_text(board.dtb_size)} at the start of RAM; make it larger")
    for area in part.areas:
        if not area.placed:
            continue
        for what, base, size in linux.vmachine_ranges(len(part.vcpus)):
            if area.guest < base + size and base < area.guest + area.size:
                diags.error(area.at("guest", "phys"), f"{part.title} {area.title}: guest range "
                            f"{span(area.guest, area.size)} overlaps {what} ({span(base, size)}) of board "
                            f"'{board.name}'; use other guest addresses")


def check_image(part: Partition, diags: Diagnostics) -> None:
    """After the ELF was read: no segment in the device tree's slot; then the device tree segment."""
    board = board_of(part)
    if board is None or part.elf is None:
        return
    start, end = board.ram_base, board.ram_base + board.dtb_size
    for seg in part.elf.segments:
        if seg.ipa < end and start < seg.ipa + seg.size:
            diags.error(part.at("image"), f"{part.title}: image '{part.image}' loads {span(seg.ipa, seg.size)} "
                        f"(program header {seg.phdr}), over the device tree that board '{board.name}' has at "
                        f"{span(start, board.dtb_size)} (as QEMU puts it); link the image at "
                        f"{hexa(end)} or above (e.g. 0x40200000)")
            return
    part.board_dtb = linux.PayloadSegment("device tree", board.ram_base, 0, 0)


def render_dts(system: System, part: Partition, source_name: str) -> str:
    header = (f"Generated by `bulkhead build` from {source_name}: the device tree of partition '{part.name}' "
              f"(board {part.board}).\nDo not edit: change the configuration and rebuild.")
    root = linux.device_tree(system, part)
    firmware.add_nodes(part, root)
    return to_dts(root, header)


def write_dtbs(system: System, out: Path, source_name: str) -> dict[str, dict[str, Path]]:
    """Write <name>.dts and <name>.dtb of every partition with a board; point its segment at the dtb."""
    written = {}
    for part in system.by_id():
        board = board_of(part)
        if board is None or part.board_dtb is None:
            continue
        dts, dtb = out / f"{part.name}.dts", out / f"{part.name}.dtb"
        dts.write_text(render_dts(system, part, source_name))
        warnings = compile_dts(dts, dtb)
        if warnings:
            raise ToolError(f"dtc warned about the generated {dts}:\n{warnings.rstrip()}")
        size = dtb.stat().st_size
        if size > board.dtb_size:
            raise ToolError(f"{dtb} is {size} bytes, more than the {board.dtb_size} bytes board '{board.name}' "
                            f"keeps for it")
        part.board_dtb.file_size = part.board_dtb.mem_size = size
        part.board_dtb.path = dtb.resolve()
        written[part.name] = {"dts": dts, "dtb": dtb}
    return written
