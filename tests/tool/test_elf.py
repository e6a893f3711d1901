"""Malformed partition images: each is app.elf (tool_support.APP_S) with a few header fields edited,
and each is rejected at the description's image key with its exact message. The hypervisor copies
what the tables say from the packed image, so none of these may ever be packed."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from tool_support import CROSS, run

EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
PHDR = struct.Struct("<IIQQQQQQ")
EHDR_FIELDS = ("ident", "type", "machine", "version", "entry", "phoff", "shoff", "flags", "ehsize",
               "phentsize", "phnum", "shentsize", "shnum", "shstrndx")
PHDR_FIELDS = ("type", "flags", "offset", "vaddr", "paddr", "filesz", "memsz", "align")

CONFIG = """\
# A partition whose image the test edits.
system:
  name: elf
  platform: qemu-virt
  cores: 1
  memory: 1G
hypervisor:
  memory: {base: 0x40000000, size: 32M}
partitions:
  - name: a
    id: 0
    image: bad.elf
    vcpus: [{core: 0}]
    memory:
      - {name: ram, phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}
"""
AT_IMAGE = "elf.yaml:12:12: error: partition 'a': image 'bad.elf' "
SIZE = 0x112D0  # of app.elf: its section header table ends the file
PHOFF = 64


class Elf:
    """app.elf's bytes with helpers to edit the ELF header and program headers."""

    def __init__(self, data: bytes) -> None:
        self.data = bytearray(data)

    def header(self, **fields: int) -> Elf:
        values = dict(zip(EHDR_FIELDS, EHDR.unpack_from(self.data)))
        values.update(fields)
        EHDR.pack_into(self.data, 0, *(values[name] for name in EHDR_FIELDS))
        return self

    def phdr(self, index: int, **fields: int) -> Elf:
        offset = PHOFF + index * PHDR.size
        values = dict(zip(PHDR_FIELDS, PHDR.unpack_from(self.data, offset)))
        values.update(fields)
        PHDR.pack_into(self.data, offset, *(values[name] for name in PHDR_FIELDS))
        return self

    def byte(self, offset: int, value: int) -> Elf:
        self.data[offset] = value
        return self

    def cut(self, size: int) -> Elf:
        del self.data[size:]
        return self


def section_names_offset(elf: Elf) -> int:
    """File offset of the sh_name field of section 1 (.text)."""
    shoff = EHDR.unpack_from(elf.data)[6]
    return shoff + 64


CASES = {
    # The leak: a segment whose file size runs past the end of the file.
    "filesz_past_end": (lambda e: e.phdr(1, filesz=0x1000, memsz=0x1000),
                        "is truncated: program header 1 takes 0x1000 bytes from offset 0x11000, past the end of "
                        "the file (0x112d0 bytes); rebuild the image"),
    "offset_plus_filesz_overflows": (lambda e: e.phdr(1, offset=0xFFFF_FFFF_FFFF_F000),
                                     "is truncated: program header 1 takes 0x8 bytes from offset 0xfffffffffffff000, "
                                     "past the end of the file (0x112d0 bytes); rebuild the image"),
    "filesz_above_memsz": (lambda e: e.phdr(0, filesz=8, memsz=4),
                           "is damaged: program header 0 has a file size (0x8) larger than its memory size (0x4); "
                           "rebuild the image"),
    "paddr_wraps": (lambda e: e.phdr(2, paddr=0xFFFF_FFFF_FFFF_F000),
                    "is damaged: program header 2 wraps around the end of the address space (physical address "
                    "0xfffffffffffff000, memory size 0x2000); rebuild the image"),
    "vaddr_wraps": (lambda e: e.phdr(2, vaddr=0xFFFF_FFFF_FFFF_F000),
                    "is damaged: program header 2 wraps around the end of the address space (virtual address "
                    "0xfffffffffffff000, memory size 0x2000); rebuild the image"),
    "overlapping_segments": (lambda e: e.phdr(1, paddr=0x40000000),
                             "has overlapping segments: program header 0 loads 0x40000000-0x40000003 and program "
                             "header 1 loads 0x40000000-0x40000007; relink the image"),
    "no_loadable_segment": (lambda e: e.phdr(0, type=4).phdr(1, type=4).phdr(2, type=4),
                            "has no loadable segment (no PT_LOAD program header with a size); link the partition's "
                            "code into a PT_LOAD segment"),
    "no_program_headers": (lambda e: e.header(phnum=0),
                           "has no loadable segment (no PT_LOAD program header with a size); link the partition's "
                           "code into a PT_LOAD segment"),
    "truncated_elf_header": (lambda e: e.cut(40),
                             "is truncated: its ELF header needs 64 bytes, the file has 40; rebuild the image"),
    "truncated_program_headers": (lambda e: e.cut(100),
                                  "is truncated: its program header table (0xa8 bytes at offset 0x40) runs past the "
                                  "end of the file (0x64 bytes); rebuild the image"),
    "program_headers_beyond_file": (lambda e: e.header(phoff=0xFFFF_FFFF_FFFF_FFF0),
                                    "is truncated: its program header table (0xa8 bytes at offset 0xfffffffffffffff0) "
                                    "runs past the end of the file (0x112d0 bytes); rebuild the image"),
    "program_header_size": (lambda e: e.header(phentsize=32),
                            "has program headers of 32 bytes, not 56 (Elf64_Phdr); rebuild the image"),
    "too_many_program_headers": (lambda e: e.header(phnum=0xFFFF),
                                 "has 65535 or more program headers (PN_XNUM), which the tool does not read; relink "
                                 "the image"),
    "truncated_section_headers": (lambda e: e.cut(SIZE - 10),
                                  "is truncated: its section header table (0x1c0 bytes at offset 0x11110) runs past "
                                  "the end of the file (0x112c6 bytes); rebuild the image"),
    "section_header_size": (lambda e: e.header(shentsize=40),
                            "has a section header table the tool cannot read (7 entries of 40 bytes); rebuild the "
                            "image"),
    "section_name_table_index": (lambda e: e.header(shstrndx=7),
                                 "is damaged: its section name table index 7 is not below its 7 sections; rebuild "
                                 "the image"),
    "section_name_outside": (lambda e: e.byte(section_names_offset(e) + 1, 0x10),
                             "is damaged: the name of section 1 (offset 0x101b) is not a string inside its section "
                             "name table (0x2c bytes); rebuild the image"),
    "class_32": (lambda e: e.byte(4, 1),
                 "is a 32-bit ELF, not a 64-bit AArch64 ELF; give the path of the partition's AArch64 ELF "
                 "executable"),
    "class_unknown": (lambda e: e.byte(4, 7),
                      "is an ELF of unknown class 7, not a 64-bit AArch64 ELF; give the path of the partition's "
                      "AArch64 ELF executable"),
    "big_endian": (lambda e: e.byte(5, 2),
                   "is a big-endian ELF, not a little-endian AArch64 ELF; give the path of the partition's AArch64 "
                   "ELF executable"),
    "machine": (lambda e: e.header(machine=40),
                "is an ELF for EM_ARM, not for AArch64 (EM_AARCH64); give the path of the partition's AArch64 ELF "
                "executable"),
    "type_dyn": (lambda e: e.header(type=3),
                 "is an ELF of type ET_DYN, not a linked executable (ET_EXEC); give the path of the partition's "
                 "AArch64 ELF executable"),
    "only_magic": (lambda e: e.cut(4),
                   "is truncated: its ELF header needs 64 bytes, the file has 4; rebuild the image"),
}


@pytest.fixture
def app_elf(workdir: Path) -> Elf:
    (workdir / "elf.yaml").write_text(CONFIG)
    return Elf((workdir / "app.elf").read_bytes())


def check(workdir: Path, cli, elf: Elf, config: str = CONFIG) -> tuple[int, str, str]:
    (workdir / "bad.elf").write_bytes(bytes(elf.data))
    (workdir / "elf.yaml").write_text(config)
    return cli("check", "elf.yaml")


def test_app_elf_is_the_layout_these_cases_edit(app_elf, workdir, cli):
    assert len(app_elf.data) == SIZE
    assert check(workdir, cli, app_elf) == (0, "elf.yaml: ok (1 partitions)\n", "")


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_image_is_rejected_at_the_image_key(name, app_elf, workdir, cli):
    edit, message = CASES[name]
    status, out, err = check(workdir, cli, edit(app_elf))
    assert (status, out) == (1, "")
    assert err.splitlines() == [AT_IMAGE + message]


def test_entry_point_outside_every_executable_segment(app_elf, workdir, cli):
    """0x40001000 is in an rwx area but in the data segment: the vCPU would start executing data."""
    status, _, err = check(workdir, cli, app_elf.header(entry=0x40001000))
    assert status == 1
    assert err.splitlines() == [
        "elf.yaml:12:12: error: partition 'a': the image's entry point 0x40001000 is not inside an executable "
        "segment (PT_LOAD with flag X) of image 'bad.elf'; relink the image so that its code covers the entry "
        "point, or set entry"]


def test_explicit_entry_outside_every_executable_segment(app_elf, workdir, cli):
    config = CONFIG.replace("    image: bad.elf\n", "    image: bad.elf\n    entry: 0x40100000\n")
    status, _, err = check(workdir, cli, app_elf, config)
    assert status == 1
    assert err.splitlines() == [
        "elf.yaml:13:12: error: partition 'a': entry 0x40100000 is not inside an executable segment (PT_LOAD "
        "with flag X) of image 'bad.elf'; relink the image so that its code covers the entry point, or change "
        "entry"]


def test_packed_bytes_never_exceed_the_segment_file(tmp_path):
    """bh_images.S gives .incbin an explicit count, so a segment file shorter than the tables' file_size
    fails the assembly instead of packing whatever follows it."""
    from bulkhead.emit_images import SegmentFile, render_images
    (tmp_path / "seg.bin").write_bytes(b"\1" * 16)
    (tmp_path / "ok.S").write_text(render_images([SegmentFile("bh_seg_0_0", tmp_path / "seg.bin", 16)], "t"))
    run([f"{CROSS}as", "ok.S", "-o", "ok.o"], tmp_path)
    (tmp_path / "long.S").write_text(render_images([SegmentFile("bh_seg_0_0", tmp_path / "seg.bin", 32)], "t"))
    with pytest.raises(subprocess.CalledProcessError):
        run([f"{CROSS}as", "long.S", "-o", "long.o"], tmp_path)
