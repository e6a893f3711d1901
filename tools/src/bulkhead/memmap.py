"""What stage 2 maps for a partition, written into its image at the symbol `bh_memory_map`
(libbhpart's mmu.c), so that a partition that turns its stage-1 MMU on (libapex) maps those
areas and nothing else: an address outside them then faults at EL1 in the partition, the error
of the context that used it, instead of at stage 2 in the hypervisor (docs/apex.md, "Memory
protection"). An image without the symbol (not linked with libbhpart's mmu.c, or a raw binary)
is left as it is."""

from __future__ import annotations

import struct
from dataclasses import replace

from bulkhead.diagnostics import Diagnostics
from bulkhead.elfimage import table_in_image
from bulkhead.model import Partition

MAP_SYMBOL = "bh_memory_map"
MAGIC = 0x504D4842  # "BHMP", BH_MEMORY_MAP_MAGIC
MAX_AREAS = 16      # BH_MEMORY_MAP_MAX
_HEADER = struct.Struct("<II")
_AREA = struct.Struct("<QQ")
TABLE_SIZE = _HEADER.size + MAX_AREAS * _AREA.size


def encode(part: Partition) -> bytes:
    """struct bh_memory_map for part: its stage-2 areas (guest base, size); none (count 0: the
    library then maps every GiB but the first 2 MiB) when there are more than it holds."""
    areas = [(a.guest, a.size) for a in part.stage2_areas if a.guest is not None and a.size]
    if len(areas) > MAX_AREAS:
        areas = []
    rows = [_AREA.pack(base, size) for base, size in areas]
    rows += [bytes(_AREA.size)] * (MAX_AREAS - len(rows))
    return _HEADER.pack(MAGIC, len(areas)) + b"".join(rows)


def bind_image(part: Partition, diags: Diagnostics) -> None:
    """Writes the table into the segment bytes the build packs, if the image has one."""
    if part.elf is None or part.load is not None or part.image_path is None:
        return
    found = _location(part)
    if found is None:
        return
    if isinstance(found, str):
        diags.error(part.at("image"), f"{part.title}: image '{part.image}' {found}")
        return
    seg_index, offset = found
    seg = part.elf.segments[seg_index]
    if _HEADER.unpack_from(seg.data, offset)[0] != MAGIC:
        diags.error(part.at("image"), f"{part.title}: image '{part.image}' has a '{MAP_SYMBOL}' of another "
                    f"libbhpart; rebuild the partition with this source tree's libbhpart")
        return
    table = encode(part)
    data = seg.data[:offset] + table + seg.data[offset + len(table):]
    segments = list(part.elf.segments)
    segments[seg_index] = replace(seg, data=data)
    part.elf = replace(part.elf, segments=tuple(segments))


def _location(part: Partition) -> tuple[int, int] | str | None:
    """(segment index, offset in its data) of the table, None without one, or why it cannot be
    written."""
    return table_in_image(part.image_path, part.elf, MAP_SYMBOL, TABLE_SIZE, "libbhpart")