"""The partition's stage-2 areas written into its image at bh_memory_map (memmap.py), which
libbhpart's stage-1 map follows (partitions/lib/mmu.c); the system test is
tests/system/test_attack3_apex.py."""

from __future__ import annotations

import struct
from pathlib import Path

from bulkhead import config, memmap
from tool_support import CROSS, PARTITION_LD, REPO, run


def _image_source(magic: int, size: int) -> str:
    """A partition with a bh_memory_map like libbhpart's (count 0)."""
    return f"""\
	.text
	.global _start
_start:
	b .
	.data
	.quad 0x1122334455667788
	.global bh_memory_map
	.type bh_memory_map, %object
bh_memory_map:
	.word {magic}, 0
	.space {size - 8}
	.size bh_memory_map, {size}
"""


def _build(directory: Path, source: str) -> None:
    (directory / "partition.ld").write_text(PARTITION_LD)
    (directory / "app.S").write_text(source)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,partition.ld",
         "-o", "app.elf", "app.S"], directory)


SYSTEM = """\
system: {{name: mm, platform: qemu-virt, cores: 4, memory: 1G}}
hypervisor:
  memory: {{base: 0x40000000, size: 32M}}
schedule:
  cores:
    - {{core: 1, policy: fixed_priority}}
partitions:
  - name: app
    id: 0
    image: {image}
    vcpus: [{{core: 1, priority: 10}}]
    memory:
      - {{name: ram, phys: 0x42000000, guest: 0x40000000, size: 3M, rights: rwx}}
      - {{name: more, phys: 0x43000000, guest: 0x50000000, size: 64K, rights: rw}}
"""


def _table(part) -> bytes:
    address = 0x40001008  # .data starts at 0x40001000 (PARTITION_LD), after one quad
    seg = next(s for s in part.elf.segments if s.ipa <= address < s.ipa + s.file_size)
    return seg.data[address - seg.ipa:address - seg.ipa + memmap.TABLE_SIZE]


def test_the_areas_are_written_into_the_image(tmp_path):
    _build(tmp_path, _image_source(memmap.MAGIC, memmap.TABLE_SIZE))
    (tmp_path / "sys.yaml").write_text(SYSTEM.format(image="app.elf"))
    table = _table(config.load(tmp_path / "sys.yaml").partition_named("app"))
    magic, count = struct.unpack_from("<II", table)
    areas = [struct.unpack_from("<QQ", table, 8 + 16 * i) for i in range(memmap.MAX_AREAS)]
    assert (magic, count) == (memmap.MAGIC, 2)
    assert areas[:3] == [(0x40000000, 3 << 20), (0x50000000, 64 << 10), (0, 0)]


def test_a_table_of_another_library_is_refused(tmp_path):
    _build(tmp_path, _image_source(memmap.MAGIC + 1, memmap.TABLE_SIZE))
    (tmp_path / "sys.yaml").write_text(SYSTEM.format(image="app.elf"))
    _, errors = config.check(tmp_path / "sys.yaml")
    assert len(errors) == 1 and "another libbhpart" in errors[0].message, errors


def test_the_table_layout_matches_the_library_header():
    header = (REPO / "partitions" / "include" / "bulkhead" / "bulkhead.h").read_text()
    assert f"#define BH_MEMORY_MAP_MAGIC {memmap.MAGIC:#010x}u" in header
    assert f"#define BH_MEMORY_MAP_MAX {memmap.MAX_AREAS}\n" in header
    built = REPO / "build" / "partitions" / "apexatk3.elf"
    if built.exists():  # the real library's symbol, when the partitions are built
        from elftools.elf.elffile import ELFFile
        with open(built, "rb") as handle:
            symbol = ELFFile(handle).get_section_by_name(".symtab").get_symbol_by_name("bh_memory_map")[0]
        assert symbol["st_size"] == memmap.TABLE_SIZE
