"""Reading a partition image: the loadable segments, the entry point and whether it has tests."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from bulkhead.abi import TESTS_SECTION

_ELF_MAGIC = b"\x7fELF"


@dataclass(frozen=True)
class Segment:
    phdr: int   # index in the program header table (as readelf -l numbers them)
    ipa: int    # guest address (p_paddr)
    file_size: int
    mem_size: int
    data: bytes

    @property
    def size(self) -> int:
        return max(self.mem_size, self.file_size)


@dataclass(frozen=True)
class ElfImage:
    entry: int
    segments: tuple[Segment, ...]  # PT_LOAD segments with a file or memory size, in file order
    has_tests: bool


class ElfProblem(Exception):
    """The file is not a usable AArch64 image; the message completes "image 'x' ..."."""


def read_elf(path: Path) -> ElfImage:
    with open(path, "rb") as stream:
        if stream.read(4) != _ELF_MAGIC:
            raise ElfProblem("is not an ELF file")
        stream.seek(0)
        try:
            return _read(ELFFile(stream))
        except (ELFError, ValueError, EOFError, struct.error) as exc:
            raise ElfProblem(f"is a damaged or truncated ELF file ({exc})") from exc


def _read(elf: ELFFile) -> ElfImage:
    _require_aarch64(elf)
    segments = tuple(_segments(elf))
    has_tests = elf.get_section_by_name(TESTS_SECTION) is not None
    return ElfImage(entry=elf.header.e_entry, segments=segments, has_tests=has_tests)


def _require_aarch64(elf: ELFFile) -> None:
    if elf.elfclass != 64:
        raise ElfProblem(f"is a {elf.elfclass}-bit ELF, not a 64-bit AArch64 ELF")
    if not elf.little_endian:
        raise ElfProblem("is a big-endian ELF, not a little-endian AArch64 ELF")
    machine = elf.header.e_machine
    if machine != "EM_AARCH64":
        raise ElfProblem(f"is an ELF for {machine}, not for AArch64 (EM_AARCH64)")
    if elf.header.e_type != "ET_EXEC":
        raise ElfProblem(f"is an ELF of type {elf.header.e_type}, not a linked executable (ET_EXEC)")


def _segments(elf: ELFFile):
    for index, seg in enumerate(elf.iter_segments()):
        if seg.header.p_type != "PT_LOAD":
            continue
        if seg.header.p_filesz == 0 and seg.header.p_memsz == 0:
            continue
        yield Segment(
            phdr=index,
            ipa=seg.header.p_paddr,
            file_size=seg.header.p_filesz,
            mem_size=seg.header.p_memsz,
            data=seg.data(),
        )
