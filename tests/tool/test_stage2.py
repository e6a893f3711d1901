"""The stage-2 table pool: the tool's count (bulkhead.stage2) against a literal model of the
hypervisor's builder (hypervisor/arch/aarch64/stage2.c), the C unit tests' figures, and the
emitted tables. The system tests compare it with a real boot's log."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from bulkhead import config
from bulkhead.cli import main as cli_main
from bulkhead.platforms import PLATFORMS, QEMU_VIRT
from bulkhead.stage2 import BLOCK_SIZES, mapped, pool_of, table_pages
from bulkhead.units import G, K, M
from test_build import build_args, make_hyp_kit
from tool_support import CROSS, GOOD_DIR

PAGE, BLOCK_2M, BLOCK_1G = 4 * K, 2 * M, 1 * G


def builder_pages(areas: list[tuple[int, int, int]], block_max: int) -> int:
    """stage2.c step by step: a descriptor per block or page, a table allocated on first use."""
    allocated = 1
    root: dict = {}

    def shift(level: int) -> int:
        return 39 - 9 * level

    def level_of(ipa: int, pa: int, size: int) -> int:
        for level in (1, 2):
            block = 1 << shift(level)
            if block <= block_max and (ipa | pa) & (block - 1) == 0 and size >= block:
                return level
        return 3

    for ipa, pa, size in areas:
        while size:
            level = level_of(ipa, pa, size)
            table = root
            for walk in range(1, level):
                index = (ipa >> shift(walk)) & 511
                if index not in table:
                    table[index] = {}
                    allocated += 1
                table = table[index]
                assert isinstance(table, dict), "a block where a table should be: overlapping areas"
            index = (ipa >> shift(level)) & 511
            assert index not in table, "mapped twice: overlapping areas"
            table[index] = pa
            block = 1 << shift(level)
            ipa, pa, size = ipa + block, pa + block, size - block
    return allocated


def random_areas(rng: random.Random) -> list[tuple[int, int, int]]:
    """Non-overlapping areas in guest space with mixed alignments: pages, 2 MiB and 1 GiB
    boundaries crossed, guest and physical addresses aligned alike or not."""
    areas, guest = [], rng.choice([0, 0x0A00_0000, 0x4000_0000, 0x7FE0_0000])
    for _ in range(rng.randint(1, 4)):
        guest += rng.choice([0, PAGE, 5 * PAGE, BLOCK_2M - PAGE, BLOCK_2M, 7 * BLOCK_2M])
        size = rng.choice([PAGE, 3 * PAGE, BLOCK_2M, BLOCK_2M + 2 * PAGE, 5 * BLOCK_2M - PAGE, 24 * M])
        phys = guest + rng.choice([0, PAGE, BLOCK_2M, 3 * BLOCK_2M + PAGE, G])
        areas.append((guest, phys, size))
        guest += size
    return areas


@pytest.mark.parametrize("block_max", [PAGE, BLOCK_2M, BLOCK_1G])
def test_count_matches_the_builder_on_random_areas(block_max):
    rng = random.Random(block_max)
    for _ in range(300):
        areas = random_areas(rng)
        assert table_pages(areas, block_max) == builder_pages(areas, block_max), areas


@pytest.mark.parametrize("block_max", [PAGE, BLOCK_2M, BLOCK_1G])
def test_count_matches_the_builder_for_a_gigabyte_across_a_1g_boundary(block_max):
    areas = [(0x4020_0000, 0x4020_0000, G), (0x0A00_3000, 0x0A00_3000, PAGE)]
    assert table_pages(areas, block_max) == builder_pages(areas, block_max)


@pytest.mark.parametrize("areas, block_max, pages", [
    ([(0x4000_0000, 0x4200_0000, 4 * M)], PAGE, 4),        # stage2_4kib_limit_maps_only_pages
    ([(0x4000_0000, 0x4200_0000, 4 * M)], BLOCK_1G, 2),    # stage2_uses_2mib_blocks_when_aligned
    ([(0x4000_0000, 0x4000_0000, G)], BLOCK_1G, 1),        # ..._uses_a_1gib_block_when_the_limit_allows
    ([(0x4000_0000, 0x4000_0000, G)], BLOCK_2M, 2),        # ..._2mib_limit_splits_a_1gib_area_...
    ([(0x4000_0000, 0x4000_0000, G)], PAGE, 514),          # ..._4kib_limit_maps_a_1gib_area_with_pages
    ([(0x4000_0000, 0x4200_0000, M), (0x0A00_0000, 0x0A00_0000, PAGE)], PAGE, 5),  # fixture.c: alpha
    ([(0x4000_0000, 0x4220_0000, 2 * M)], PAGE, 3),        # fixture.c: beta
])
def test_count_matches_the_c_unit_tests(areas, block_max, pages):
    """The figures tests/unit/test_stage2.c checks against the C builder itself."""
    assert table_pages(areas, block_max) == pages


def test_a_3g_area_in_pages_is_counted_quickly():
    # 1 root + 3 level 2 + 1536 level 3; one step per 2 MiB, so no 786 432-page loop.
    assert table_pages([(0x4000_0000, 0x4000_0000, 3 * G)], PAGE) == 1540


def test_every_platform_limit_is_a_block_size():
    for platform in PLATFORMS.values():
        assert platform.stage2_block_max in BLOCK_SIZES.values(), platform.name
    assert QEMU_VIRT.stage2_block_max == PAGE  # QEMU's TLB model: see platforms.py


def test_pool_counts_shared_regions_and_device_areas(workdir):
    shutil.copy(GOOD_DIR / "channels.yaml", workdir / "channels.yaml")
    system = config.load("channels.yaml")
    pool = pool_of(system)
    ctl, mon = system.by_id()
    assert len(ctl.shared_areas) == 2 and len(mon.shared_areas) == 2
    for part, (name, pages) in zip((ctl, mon), pool.per_partition):
        assert name == part.name
        assert pages == builder_pages(mapped(part), pool.block_max)
        assert pages > table_pages([(a.guest, a.phys, a.size) for a in part.areas], pool.block_max)
    assert pool.pages == sum(pages for _, pages in pool.per_partition)


def test_linux_partition_with_pass_through_devices(workdir):
    shutil.copy(GOOD_DIR / "linux.yaml", workdir / "linux.yaml")
    system = config.load("linux.yaml")
    pool = pool_of(system)
    for part, (_, pages) in zip(system.by_id(), pool.per_partition):
        assert pages == builder_pages(mapped(part), pool.block_max)


def test_emitted_pool_has_the_counted_pages(workdir):
    shutil.copy(GOOD_DIR / "demo.yaml", workdir / "demo.yaml")
    assert cli_main(build_args("demo.yaml", make_hyp_kit(workdir / "kit"))) == 0
    pages = pool_of(config.load("demo.yaml")).pages
    source = (workdir / "out" / "bh_config.c").read_text()
    assert f"static uint64_t bh_stage2_pool[{pages}][512] __attribute__((aligned(4096)));" in source
    assert f"\t.stage2_pool_pages = {pages}u,\n\t.stage2_pool = bh_stage2_pool,\n" in source
    assert f"\t.stage2_block_max = UINT64_C({QEMU_VIRT.stage2_block_max:#x}),\n" in source
    symbols = subprocess.run([f"{CROSS}nm", "-S", str(workdir / "out" / "bulkhead.elf")], capture_output=True,
                             text=True, check=True).stdout
    address, size, _, _ = next(line.split() for line in symbols.splitlines() if line.endswith(" bh_stage2_pool"))
    assert int(size, 16) == pages * 4096 and int(address, 16) % 4096 == 0
