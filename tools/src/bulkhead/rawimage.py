"""Raw binary images (docs/configuration.md, "Partition images"): `image` names a flat binary, as
`objcopy -O binary` makes it, and `load` the guest address its first byte goes to. It becomes one
segment of exactly the file's bytes, executable, so every check of an ELF's segments and entry
applies to it; the entry defaults to `load`. Nothing past the file is loaded or cleared: a raw
program clears its own .bss, as a Linux Image does.

A raw binary has no sections, so nobody can tell whether it holds test code (has_tests None):
checks._check_test_code refuses it unless system.test, as it does an ELF without section headers.
"""

from __future__ import annotations

from pathlib import Path

from bulkhead.diagnostics import Diagnostics
from bulkhead.elfimage import ElfImage, ElfProblem, Segment
from bulkhead.model import Partition
from bulkhead.units import hexa

_ELF_MAGIC = b"\x7fELF"
_ADDRESS_SPACE = 1 << 64
INSTRUCTION = 4  # an AArch64 entry point is a 4-byte aligned instruction


def read_raw(path: Path, load: int) -> ElfImage:
    data = path.read_bytes()
    if data[:4] == _ELF_MAGIC:
        raise ElfProblem("is an ELF file, but 'load' says it is a raw binary",
                         "remove 'load' (the ELF's program headers say where it loads), or give the raw binary "
                         "(objcopy -O binary)")
    if not data:
        raise ElfProblem("is empty", "give the raw binary of the partition's program")
    if load + len(data) > _ADDRESS_SPACE:
        raise ElfProblem(f"({len(data)} bytes) at load {hexa(load)} runs past the end of the address space",
                         "use a lower load address")
    segment = Segment(phdr=0, ipa=load, file_size=len(data), mem_size=len(data), data=data, executable=True)
    return ElfImage(entry=load, segments=(segment,), has_tests=None)


def check_entry_alignment(part: Partition, diags: Diagnostics) -> None:
    """A raw binary's entry (load, or entry) must be an instruction address; an ELF's linker sees to it."""
    entry = part.entry_point
    if part.load is None or entry is None or entry % INSTRUCTION == 0:
        return
    key = "entry" if part.entry is not None else "load"
    diags.error(part.at(key), f"{part.title}: {key} {hexa(entry)} is not {INSTRUCTION}-byte aligned, so the vCPU "
                f"would start off an instruction; use {hexa(entry - entry % INSTRUCTION)}")


def apex_allowed(part: Partition, diags: Diagnostics) -> bool:
    """`apex` is written into the image's apex_config, which only an ELF's symbol table locates."""
    if part.load is None:
        return True
    diags.error(part.at("apex"), f"{part.title}: apex needs the image's symbol apex_config, and raw binary "
                f"'{part.image}' has no symbols; give the ELF (remove 'load'), or remove 'apex'")
    return False
