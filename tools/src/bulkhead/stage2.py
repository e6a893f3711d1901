"""How many stage-2 table pages the hypervisor needs for a system, so that the generated tables
hold exactly that pool (bh_stage2_pool).

This mirrors hypervisor/arch/aarch64/stage2.c; change both together. The hypervisor builds each
partition's tables once at boot: a level-1 root, then each area in table order, each step
mapping the coarsest block that is within the platform's limit, aligned in both the guest and
the physical address, and no longer than what is left of the area: 1 GiB at level 1, 2 MiB at
level 2, else a 4 KiB page at level 3. It allocates a level-2 table for each 1 GiB of guest space
that holds a 2 MiB block or a page, and a level-3 table for each 2 MiB that holds a page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from bulkhead.model import Partition, System
from bulkhead.units import G, K, M

BLOCK_SIZES = {1: G, 2: 2 * M, 3: 4 * K}  # what one descriptor maps at each level
PAGE = BLOCK_SIZES[3]


def block_level(ipa: int, pa: int, size: int, block_max: int) -> int:
    """The level of the mapping the hypervisor writes at ipa (its block_level())."""
    for level in (1, 2):
        block = BLOCK_SIZES[level]
        if block <= block_max and (ipa | pa) % block == 0 and size >= block:
            return level
    return 3


def table_pages(areas: Iterable[tuple[int, int, int]], block_max: int) -> int:
    """Tables of one partition whose areas are (guest, phys, size), in table order."""
    level2: set[int] = set()  # the 1 GiB guest regions that get a level-2 table
    level3: set[int] = set()  # the 2 MiB guest regions that get a level-3 table
    for ipa, pa, size in areas:
        end = ipa + size
        while ipa < end:
            level = block_level(ipa, pa, end - ipa, block_max)
            if level >= 2:
                level2.add(ipa // BLOCK_SIZES[1])
            if level == 3:
                level3.add(ipa // BLOCK_SIZES[2])
            step = BLOCK_SIZES[level] if level < 3 else _pages_in_this_2m(ipa, end)
            ipa, pa = ipa + step, pa + step
    return 1 + len(level2) + len(level3)


def _pages_in_this_2m(ipa: int, end: int) -> int:
    """Bytes from ipa to the next 2 MiB boundary or end: once a page was mapped at ipa, every
    page up to the boundary is a page too (ipa is not 2 MiB aligned in between), all in the
    same level-3 table. One step for them keeps a 3 GiB area quick to count."""
    boundary = (ipa // BLOCK_SIZES[2] + 1) * BLOCK_SIZES[2]
    return min(boundary, end) - ipa


@dataclass(frozen=True)
class Pool:
    block_max: int
    per_partition: tuple[tuple[str, int], ...]  # (name, pages) in id order: the build order

    @property
    def pages(self) -> int:
        return sum(pages for _, pages in self.per_partition)


def mapped(part: Partition) -> list[tuple[int, int, int]]:
    """(guest, phys, size) of what stage 2 maps for part, in the order of its area table."""
    return [(a.guest, a.phys, a.size) for a in part.stage2_areas]


def pool_of(system: System) -> Pool:
    block_max = system.platform.stage2_block_max
    return Pool(block_max, tuple((part.name, table_pages(mapped(part), block_max)) for part in system.by_id()))
