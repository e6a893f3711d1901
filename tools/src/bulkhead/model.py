"""The checked system model.

The reader fills these objects from the YAML nodes; a field it could not read stays None and an
error is recorded, so later checks skip what they cannot judge. Once config.load() returns, every
field is set and valid. Each object keeps the position of its mapping (pos) and of each value it
was read from (marks), so checks can point at the offending text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bulkhead.abi import DEFAULT_POLICY
from bulkhead.diagnostics import Pos
from bulkhead.elfimage import ElfImage
from bulkhead.platforms import Platform

if TYPE_CHECKING:
    from bulkhead.channels import Channels, PortDecl


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
    flash_bank: int | None = None  # firmware.py: the backed part of this flash bank, not RAM

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
    priority: int | None = None  # fixed_priority cores
    period: int | None = None    # edf cores, ns
    budget: int | None = None    # edf cores, ns
    deadline: int | None = None  # edf cores, ns; None = the period
    best_effort: bool | None = False  # runs in the idle time of any of `cores` (no core of its own);
    #                                   None: best_effort given but not a boolean (reported)
    cores: list[int] | None = None  # a best-effort vCPU's cores, as read (None: not given, or not a list)
    cores_written: int = 0          # the entries of the cores list in the file, valid or not

    @property
    def effective_deadline(self) -> int | None:
        return self.period if self.deadline is None else self.deadline

    @property
    def core_mask(self) -> int:
        """A best-effort vCPU's cores as a bit mask (bit n: core n)."""
        return sum(1 << core for core in set(self.cores or ()))


@dataclass
class Interrupt(Located):
    index: int
    intid: int | None = None


@dataclass
class Partition(Located):
    index: int  # position in the file's list
    name: str | None = None
    id: int | None = None
    system: bool = False
    image: str | None = None        # as written in the file
    image_path: Path | None = None  # resolved against the file's directory
    entry: int | None = None        # explicit entry, None = the ELF's e_entry
    load: int | None = None         # set: image is a raw binary loaded at this guest address (rawimage.py)
    vcpus: list[Vcpu] = field(default_factory=list)
    areas: list[Area] = field(default_factory=list)
    interrupts: list[Interrupt] = field(default_factory=list)
    health: dict[str, str] = field(default_factory=dict)  # event -> action, defaults filled
    elf: ElfImage | None = None
    areas_ok: bool = True  # the memory list and every area in it were read without error
    channel_ports: list[PortDecl] = field(default_factory=list)  # channels.py: its ports, descriptor order
    shared_areas: list[Area] = field(default_factory=list)  # channels.py: shared regions it maps
    linux: LinuxSpec | None = None  # set for a Linux partition (no image, entry)
    devices: list[PassDevice] = field(default_factory=list)  # pass-through devices (linux.py)
    board: str | None = None        # the virtual board an unmodified image sees (board.py), as written
    board_dtb: object | None = None  # board.py: the device tree segment (a linux.PayloadSegment)
    apex: object | None = None      # apex.py: the APEX library's declaration (an ApexSpec)
    disk: object | None = None       # disk.py: the FAT disk the tool builds for it (a DiskSpec)
    firmware: object | None = None  # firmware.py: flash bank 0's image (a firmware.BankSpec)
    flash: object | None = None     # firmware.py: flash bank 1's image, the firmware's variables

    @property
    def title(self) -> str:
        return f"partition '{self.name}'" if self.name else f"partitions[{self.index}]"

    @property
    def entry_point(self) -> int | None:
        if self.firmware is not None:  # the reset address, flash bank 0 (none while it is in error)
            return 0 if self.firmware.size else None
        if self.entry is not None:
            return self.entry
        if self.linux is not None:
            return self.linux.payload.entry if self.linux.payload else None
        return self.elf.entry if self.elf else None

    @property
    def segments(self) -> tuple:
        """What the hypervisor copies into the partition's memory: the ELF's loadable segments, or a Linux
        partition's kernel, device tree and initramfs. Each has ipa, file_size and size."""
        if self.linux is not None:
            return self.linux.payload.segments if self.linux.payload else ()
        segments = tuple(self.elf.segments) if self.elf else ()
        return segments + ((self.board_dtb,) if self.board_dtb is not None and (segments or self.firmware)
                           else ())

    @property
    def emulated_machine(self) -> bool:
        """It sees the emulated machine (struct bh_vmachine_cfg): a Linux partition or one with a board."""
        return self.linux is not None or self.board is not None

    @property
    def stage2_areas(self) -> list[Area]:
        """What stage 2 maps, in the order of the emitted area table: its own areas, then the
        shared regions it maps."""
        return self.areas + self.shared_areas

    def vcpu_label(self, index: int) -> str:
        return f"{self.name}.{index}"


@dataclass
class CorePolicy(Located):
    """One entry of schedule.cores."""

    index: int
    core: int | None = None
    policy: str | None = None


@dataclass
class Slot(Located):
    index: int  # position in its plan's list
    core: int | None = None
    start: int | None = None     # ns from the start of the major frame
    duration: int | None = None  # ns
    partition: str | None = None  # the vCPU reference, split: partition name ...
    vcpu: int | None = None       # ... and vCPU index (0 when only the partition is named)
    vcpu_text: str | None = None  # the reference as written
    notify: bool = False

    @property
    def ref(self) -> str:
        return f"{self.partition}.{self.vcpu}"

    @property
    def end(self) -> int:
        return self.start + self.duration


@dataclass
class Plan(Located):
    index: int
    name: str | None = None
    major_frame: int | None = None  # ns
    slots: list[Slot] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"plan '{self.name}'" if self.name else f"schedule.plans[{self.index}]"

    def core_slots(self, core: int) -> list[Slot]:
        """The slots of one core sorted by start: the order of bh_plan_core_cfg.slots (and of the
        slot indexes in trace events)."""
        return sorted((s for s in self.slots if s.core == core), key=lambda s: s.start)


@dataclass
class Schedule(Located):
    cores: list[CorePolicy] = field(default_factory=list)
    initial_plan: str | None = None  # as written; None = the first plan
    plans: list[Plan] = field(default_factory=list)


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
    qemu_args: list[str] = field(default_factory=list)  # system.qemu_args: appended to the QEMU command
    hypervisor: Hypervisor | None = None
    partitions: list[Partition] = field(default_factory=list)
    schedule: Schedule = field(default_factory=lambda: Schedule(Pos(1, 1)))
    channels: Channels | None = None  # the channels section (channels.py)

    def by_id(self) -> list[Partition]:
        return sorted(self.partitions, key=lambda p: p.id)

    def partition_named(self, name: str) -> Partition | None:
        return next((p for p in self.partitions if p.name == name), None)

    def policy_entry(self, core: int) -> CorePolicy | None:
        """The first schedule.cores entry for core, if any."""
        return next((e for e in self.schedule.cores if e.core == core), None)

    def policy_of(self, core: int) -> str | None:
        """The core's policy name; None when its entry's policy could not be read."""
        entry = self.policy_entry(core)
        return entry.policy if entry else DEFAULT_POLICY

    def vcpus_on(self, core: int) -> list[tuple[Partition, Vcpu]]:
        """The vCPUs pinned to core (a best-effort vCPU is pinned to none, even with a 'core' key in error)."""
        return [(p, v) for p in self.by_id_or_file() for v in p.vcpus if v.core == core and not v.best_effort]

    def by_id_or_file(self) -> list[Partition]:
        """Partitions by id when every id is known (a checked model), else in file order."""
        if all(p.id is not None for p in self.partitions):
            return self.by_id()
        return list(self.partitions)

    def plan_named(self, name: str) -> Plan | None:
        return next((p for p in self.schedule.plans if p.name == name), None)

    @property
    def initial_plan(self) -> Plan | None:
        """The plan the system starts with (None without plans)."""
        plans = self.schedule.plans
        if self.schedule.initial_plan is None:
            return plans[0] if plans else None
        return self.plan_named(self.schedule.initial_plan)

    def resolve(self, slot: Slot) -> tuple[Partition, Vcpu] | None:
        """The partition and vCPU a slot names, if both exist."""
        part = self.partition_named(slot.partition) if slot.partition else None
        if part is None or slot.vcpu is None or slot.vcpu >= len(part.vcpus):
            return None
        return part, part.vcpus[slot.vcpu]


# --- Linux partitions (linux.py) -------------------------------------------------------------

DEFAULT_BOOTARGS = "console=ttyAMA0 rdinit=/init panic=-1"


@dataclass
class PassDevice(Located):
    """One entry of a partition's devices list: a platform device given to the partition whole."""

    index: int
    text: str | None = None  # as written, e.g. "virtio-mmio@31"
    kind: str | None = None  # "virtio-mmio" or "rtc"
    slot: int | None = None  # virtio-mmio slot


@dataclass
class InitramfsFile(Located):
    """An entry of files (a host file or directory), programs (a dynamically linked program: it and the
    shared libraries it needs) or symlinks (source is the link's target, path None)."""

    dest: str                  # absolute path in the archive
    source: str | None = None  # as written
    path: Path | None = None   # resolved against the file's directory


@dataclass
class ModuleRef(Located):
    name: str | None = None
    path: Path | None = None  # a module file given by its path (name holds the path as written)


@dataclass
class LibraryDir(Located):
    text: str | None = None
    path: Path | None = None


@dataclass
class InitramfsSpec(Located):
    """linux.initramfs given as a mapping: the tool builds the archive."""

    busybox: str | None = None
    busybox_path: Path | None = None
    files: list[InitramfsFile] = field(default_factory=list)
    files_ok: bool = True  # files was read without error (or not given)
    modules: list[ModuleRef] = field(default_factory=list)
    modules_dir: str | None = None      # lib/modules/<version>, default: next to the kernel
    modules_dir_path: Path | None = None
    programs: list[InitramfsFile] = field(default_factory=list)
    symlinks: list[InitramfsFile] = field(default_factory=list)
    library_dirs: list[LibraryDir] = field(default_factory=list)  # searched before the default ones


@dataclass
class LinuxSpec(Located):
    """A partition's linux mapping."""

    kernel: str | None = None
    kernel_path: Path | None = None
    bootargs: str = DEFAULT_BOOTARGS
    initramfs_file: str | None = None  # linux.initramfs given as a path: a ready archive
    initramfs_file_path: Path | None = None
    initramfs: InitramfsSpec | None = None
    payload: object | None = None  # linux.Payload once the kernel and initramfs were read
