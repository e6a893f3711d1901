"""The checked system model.

The reader fills these objects from the YAML nodes; a field it could not read stays None and an
error is recorded, so later checks skip what they cannot judge. Once config.load() returns, every
field is set and valid. Each object keeps the position of its mapping (pos) and of each value it
was read from (marks), so checks can point at the offending text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bulkhead.diagnostics import Pos
from bulkhead.elfimage import ElfImage
from bulkhead.platforms import Platform


@dataclass
class Located:
    pos: Pos
    marks: dict[str, Pos] = field(default_factory=dict, kw_only=True)

    def at(self, *keys: str) -> Pos:
        """Position of the first of keys that was written in the file, else of the mapping."""
        for key in keys:
            if key in self.marks:
                return self.marks[key]
        return self.pos


@dataclass
class Area(Located):
    index: int
    label: str | None = None
    phys: int | None = None
    guest: int | None = None
    size: int | None = None
    rights: str | None = "rw"
    kind: str | None = "normal"  # "normal" or "device"

    @property
    def title(self) -> str:
        return f"area '{self.label}'" if self.label else f"memory[{self.index}]"

    @property
    def is_device(self) -> bool:
        return self.kind == "device"

    @property
    def placed(self) -> bool:
        """phys, guest and size are known and the area is not empty."""
        return None not in (self.phys, self.guest, self.size) and self.size > 0

    @property
    def valid(self) -> bool:
        return self.placed and self.rights is not None and self.kind is not None

    def contains_guest(self, start: int, size: int) -> bool:
        return self.guest <= start and start + size <= self.guest + self.size


@dataclass
class Vcpu(Located):
    index: int
    core: int | None = None


@dataclass
class Partition(Located):
    index: int  # position in the file's list
    name: str | None = None
    id: int | None = None
    system: bool = False
    image: str | None = None        # as written in the file
    image_path: Path | None = None  # resolved against the file's directory
    entry: int | None = None        # explicit entry, None = the ELF's e_entry
    vcpus: list[Vcpu] = field(default_factory=list)
    areas: list[Area] = field(default_factory=list)
    health: dict[str, str] = field(default_factory=dict)  # event -> action, defaults filled
    elf: ElfImage | None = None
    areas_ok: bool = True  # the memory list and every area in it were read without error

    @property
    def title(self) -> str:
        return f"partition '{self.name}'" if self.name else f"partitions[{self.index}]"

    @property
    def entry_point(self) -> int | None:
        if self.entry is not None:
            return self.entry
        return self.elf.entry if self.elf else None


@dataclass
class Hypervisor(Located):
    base: int | None = None
    size: int | None = None


@dataclass
class System(Located):
    source: Path
    name: str | None = None
    platform: Platform | None = None
    cores: int | None = None
    memory: int | None = None
    test: bool = False
    hypervisor: Hypervisor | None = None
    partitions: list[Partition] = field(default_factory=list)

    def by_id(self) -> list[Partition]:
        return sorted(self.partitions, key=lambda p: p.id)
