"""Reading a partition image: the loadable segments, the entry point and whether it has tests.

The hypervisor copies each segment's file_size bytes from the packed image and trusts them, so
every number taken from the file is checked against the file itself here: a header or table that
runs past the end, a segment whose contents lie outside the file or whose addresses wrap, and
segments that overlap are rejected before anything is packed. The ELF is read with struct,
field by field, so that no damaged value reaches the model unchecked."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.enums import ENUM_E_MACHINE, ENUM_E_TYPE

from bulkhead.abi import TESTS_SECTION

_ELF_MAGIC = b"\x7fELF"
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
_PHDR = struct.Struct("<IIQQQQQQ")          # Elf64_Phdr
_SHDR = struct.Struct("<IIQQQQIIQQ")        # Elf64_Shdr
_ELFCLASS64, _ELFDATA2LSB = 2, 1
_EM_AARCH64, _ET_EXEC = 183, 2
_PT_LOAD, _PF_X = 1, 1
_PN_XNUM = 0xFFFF
_ADDRESS_SPACE = 1 << 64

_REBUILD = "rebuild the image"
_RELINK = "relink the image"
_GIVE_IMAGE = "give the path of the partition's AArch64 ELF executable"


@dataclass(frozen=True)
class Segment:
    phdr: int   # index in the program header table (as readelf -l numbers them)
    ipa: int    # guest address (p_paddr)
    file_size: int
    mem_size: int
    data: bytes  # exactly file_size bytes of the file
    executable: bool = False  # PF_X

    @property
    def size(self) -> int:
        return self.mem_size  # never less than file_size: read_elf rejects that

    @property
    def end(self) -> int:
        return self.ipa + self.size


@dataclass(frozen=True)
class ElfImage:
    entry: int
    segments: tuple[Segment, ...]  # PT_LOAD segments with a file or memory size, in file order
    has_tests: bool | None  # None: no section header table, so nobody can tell (checks._check_test_code)

    def executable_segment_at(self, address: int) -> Segment | None:
        return next((s for s in self.segments if s.executable and s.ipa <= address < s.end), None)


class ElfProblem(Exception):
    """The file is not a usable AArch64 image. problem completes "image 'x' ...", fix says what to do."""

    def __init__(self, problem: str, fix: str = _GIVE_IMAGE) -> None:
        super().__init__(f"{problem}; {fix}")
        self.problem = problem
        self.fix = fix


def read_elf(path: Path) -> ElfImage:
    return parse_elf(path.read_bytes())


def parse_elf(data: bytes) -> ElfImage:
    if data[:4] != _ELF_MAGIC:
        raise ElfProblem("is not an ELF file")
    header = _elf_header(data)
    phdrs = _program_headers(data, header)
    segments = tuple(_loadable_segments(data, phdrs))
    if not segments:
        raise ElfProblem("has no loadable segment (no PT_LOAD program header with a size)",
                         "link the partition's code into a PT_LOAD segment")
    _reject_overlaps(segments)
    return ElfImage(entry=header.entry, segments=segments, has_tests=_has_tests(data, header))


# --- the ELF header -------------------------------------------------------------------------

@dataclass(frozen=True)
class _Header:
    entry: int
    phoff: int
    shoff: int
    phentsize: int
    phnum: int
    shentsize: int
    shnum: int
    shstrndx: int


def _elf_header(data: bytes) -> _Header:
    # Class and byte order come first (a 32-bit header is shorter), once the file holds them.
    if len(data) > 5:
        _require_identity(data)
    if len(data) < _EHDR.size:
        raise ElfProblem(f"is truncated: its ELF header needs {_EHDR.size} bytes, the file has {len(data)}",
                         _REBUILD)
    (_, e_type, machine, _, entry, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum,
     shstrndx) = _EHDR.unpack_from(data)
    if machine != _EM_AARCH64:
        raise ElfProblem(f"is an ELF for {_enum_name(ENUM_E_MACHINE, machine)}, not for AArch64 (EM_AARCH64)")
    if e_type != _ET_EXEC:
        raise ElfProblem(f"is an ELF of type {_enum_name(ENUM_E_TYPE, e_type)}, not a linked executable (ET_EXEC)")
    return _Header(entry, phoff, shoff, phentsize, phnum, shentsize, shnum, shstrndx)


def _require_identity(data: bytes) -> None:
    ei_class, ei_data = data[4], data[5]
    if ei_class != _ELFCLASS64:
        bits = {1: "a 32-bit ELF"}.get(ei_class, f"an ELF of unknown class {ei_class}")
        raise ElfProblem(f"is {bits}, not a 64-bit AArch64 ELF")
    if ei_data != _ELFDATA2LSB:
        order = {2: "a big-endian ELF"}.get(ei_data, f"an ELF of unknown byte order {ei_data}")
        raise ElfProblem(f"is {order}, not a little-endian AArch64 ELF")


def _enum_name(enum: dict[str, int], value: int) -> str:
    return next((name for name, v in enum.items() if v == value and not name.startswith("_")), f"{value:#x}")


# --- program headers ------------------------------------------------------------------------

@dataclass(frozen=True)
class _Phdr:
    index: int
    p_type: int
    flags: int
    offset: int
    vaddr: int
    paddr: int
    filesz: int
    memsz: int
    align: int


def _program_headers(data: bytes, header: _Header) -> list[_Phdr]:
    if header.phnum == _PN_XNUM:
        raise ElfProblem("has 65535 or more program headers (PN_XNUM), which the tool does not read", _RELINK)
    if header.phnum == 0:
        return []
    if header.phentsize != _PHDR.size:
        raise ElfProblem(f"has program headers of {header.phentsize} bytes, not {_PHDR.size} (Elf64_Phdr)",
                         _REBUILD)
    _require_inside(data, "program header table", header.phoff, header.phnum * _PHDR.size)
    return [_Phdr(i, *_PHDR.unpack_from(data, header.phoff + i * _PHDR.size)) for i in range(header.phnum)]


def _require_inside(data: bytes, what: str, offset: int, size: int) -> None:
    if offset + size > len(data):
        raise ElfProblem(f"is truncated: its {what} ({hex(size)} bytes at offset {hex(offset)}) runs past the "
                         f"end of the file ({hex(len(data))} bytes)", _REBUILD)


def _loadable_segments(data: bytes, phdrs: list[_Phdr]):
    for ph in phdrs:
        if ph.p_type != _PT_LOAD or (ph.filesz == 0 and ph.memsz == 0):
            continue
        _check_segment(data, ph)
        yield Segment(phdr=ph.index, ipa=ph.paddr, file_size=ph.filesz, mem_size=ph.memsz,
                      data=data[ph.offset:ph.offset + ph.filesz], executable=bool(ph.flags & _PF_X))


def _check_segment(data: bytes, ph: _Phdr) -> None:
    title = f"program header {ph.index}"
    if ph.filesz > ph.memsz:
        raise ElfProblem(f"is damaged: {title} has a file size ({hex(ph.filesz)}) larger than its memory size "
                         f"({hex(ph.memsz)})", _REBUILD)
    if ph.offset + ph.filesz > len(data):
        raise ElfProblem(f"is truncated: {title} takes {hex(ph.filesz)} bytes from offset {hex(ph.offset)}, past "
                         f"the end of the file ({hex(len(data))} bytes)", _REBUILD)
    for name, address in (("physical", ph.paddr), ("virtual", ph.vaddr)):
        if address + ph.memsz > _ADDRESS_SPACE:
            raise ElfProblem(f"is damaged: {title} wraps around the end of the address space ({name} address "
                             f"{hex(address)}, memory size {hex(ph.memsz)})", _REBUILD)


def _reject_overlaps(segments: tuple[Segment, ...]) -> None:
    ordered = sorted(segments, key=lambda s: s.ipa)
    for lower, upper in zip(ordered, ordered[1:]):
        if upper.ipa < lower.end:
            first, second = sorted((lower, upper), key=lambda s: s.phdr)
            raise ElfProblem(f"has overlapping segments: program header {first.phdr} loads "
                             f"{_span(first)} and program header {second.phdr} loads {_span(second)}", _RELINK)


def _span(seg: Segment) -> str:
    return f"{seg.ipa:#x}-{seg.end - 1:#x}"


# --- sections: only to find the test section -------------------------------------------------

def _has_tests(data: bytes, header: _Header) -> bool | None:
    """Whether a section is named TESTS_SECTION; None without a section header table (stripped of it:
    the test code would still be loaded, only its name is gone). A damaged section table is an
    error, never "no tests": a test image must not pass as a production one."""
    if header.shoff == 0 and header.shnum == 0:
        return None
    if header.shnum == 0 or header.shentsize != _SHDR.size:
        raise ElfProblem(f"has a section header table the tool cannot read ({header.shnum} entries of "
                         f"{header.shentsize} bytes)", _REBUILD)
    _require_inside(data, "section header table", header.shoff, header.shnum * _SHDR.size)
    if header.shstrndx >= header.shnum:
        raise ElfProblem(f"is damaged: its section name table index {header.shstrndx} is not below its "
                         f"{header.shnum} sections", _REBUILD)
    sections = [_SHDR.unpack_from(data, header.shoff + i * _SHDR.size) for i in range(header.shnum)]
    names = _section_names(data, sections[header.shstrndx])
    return any(_name_at(names, index, section[0]) == TESTS_SECTION.encode() for index, section in enumerate(sections))


def _section_names(data: bytes, shdr: tuple) -> bytes:
    offset, size = shdr[4], shdr[5]
    _require_inside(data, "section name table", offset, size)
    return data[offset:offset + size]


def _name_at(names: bytes, index: int, offset: int) -> bytes:
    end = names.find(b"\0", offset) if offset < len(names) else -1
    if end < 0:
        raise ElfProblem(f"is damaged: the name of section {index} (offset {hex(offset)}) is not a string inside its "
                         f"section name table ({hex(len(names))} bytes)", _REBUILD)
    return names[offset:end]


def table_in_image(image_path: Path, image: ElfImage, symbol: str, size: int, library: str) -> tuple[int, int] | str | None:
    """Where a table the tool writes into a partition's image lies: (segment index, offset in its
    data) of `symbol` in image (read from image_path, whose symbol table names it); None if the
    image has no such symbol; else why it cannot be written there (its size is not the tool's
    `size`: built with another tree's `library`; or it is not in a segment's file contents)."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection
    with open(image_path, "rb") as handle:
        symtab = ELFFile(handle).get_section_by_name(".symtab")
        symbols = symtab.get_symbol_by_name(symbol) if isinstance(symtab, SymbolTableSection) else None
    if not symbols:
        return None
    address, found = symbols[0]["st_value"], symbols[0]["st_size"]
    if found != size:
        article = "an" if symbol[0] in "aeiou" else "a"
        return (f"has {article} '{symbol}' of {found} bytes, the tool writes {size}; rebuild the partition "
                f"with this source tree's {library}")
    for index, seg in enumerate(image.segments):
        if seg.ipa <= address and address + size <= seg.ipa + seg.file_size:
            return index, address - seg.ipa
    return f"has its '{symbol}' outside the file contents of its loaded segments; relink it"
