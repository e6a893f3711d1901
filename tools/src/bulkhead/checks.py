"""Value and layout checks on the model the reader built. Each check skips what is unknown."""

from __future__ import annotations

import re
from itertools import combinations

from bulkhead import board, disk, firmware, linux, scheduling
from bulkhead.abi import DEFAULT_POLICY, MAX_SYSTEM_VCPUS, PARTITION_NAME_MAX, SYSTEM_NAME_MAX, TESTS_SECTION
from bulkhead.diagnostics import Diagnostics
from bulkhead.model import Area, Interrupt, Partition, System
from bulkhead.platforms import Platform
from bulkhead.units import align_down, align_up, hexa, size_text, span

NAME_CHARS = "A-Z a-z 0-9 _ -"
DEFAULT_MAX_CORES = 8


def check_system(system: System, diags: Diagnostics) -> None:
    """All checks that need no partition image."""
    _check_system_section(system, diags)
    _check_hypervisor(system, diags)
    _check_partition_names(system, diags)
    _check_partition_ids(system, diags)
    linux.expand_devices(system, diags)  # devices -> areas and interrupts, checked below like the others
    for part in system.partitions:
        for area in part.areas:
            _check_area(system, part, area, diags)
        _check_guest_overlaps(part, diags)
    _check_physical_overlaps(system, diags)
    _check_cores(system, diags)
    _check_interrupts(system, diags)
    linux.check_linux(system, diags)
    board.check_boards(system, diags)
    disk.check_disks(system, diags)
    firmware.check_boards(system, diags)
    firmware.check_files(system, diags)
    scheduling.check_schedule(system, system.cores if _cores_known(system) else None, diags)


def ram_range(system: System) -> tuple[int, int] | None:
    """(base, size) of RAM when the platform and system.memory are known."""
    if system.platform is None or system.memory is None:
        return None
    return system.platform.ram_base, system.memory


def _overlaps(a_start: int, a_size: int, b_start: int, b_size: int) -> bool:
    return a_start < b_start + b_size and b_start < a_start + a_size


def _inside(start: int, size: int, outer_start: int, outer_size: int) -> bool:
    return outer_start <= start and start + size <= outer_start + outer_size


# --- system and hypervisor -------------------------------------------------------------------

def _check_system_section(system: System, diags: Diagnostics) -> None:
    if system.name is not None and not re.fullmatch(rf"[A-Za-z0-9_-]{{1,{SYSTEM_NAME_MAX}}}", system.name):
        diags.error(system.at("name"), f"system.name '{system.name}' is not a valid name; use 1 to "
                    f"{SYSTEM_NAME_MAX} characters from {NAME_CHARS}")
    _check_cores_count(system, diags)
    if system.memory is not None and system.platform is not None:
        _check_ram_size(system.memory, system.platform, system.at("memory"), diags)


def _max_cores(system: System) -> int:
    return system.platform.max_cores if system.platform else DEFAULT_MAX_CORES


def _cores_known(system: System) -> bool:
    return system.cores is not None and 1 <= system.cores <= _max_cores(system)


def _check_cores_count(system: System, diags: Diagnostics) -> None:
    limit = _max_cores(system)
    board = system.platform.name if system.platform else "Bulkhead"
    if system.cores is not None and not _cores_known(system):
        diags.error(system.at("cores"), f"system.cores {system.cores} is out of range; {board} supports "
                    f"1 to {limit} cores")


def _check_ram_size(memory: int, platform: Platform, pos, diags: Diagnostics) -> None:
    granule = platform.ram_granule
    if memory == 0:
        diags.error(pos, "system.memory must not be 0; give the RAM size, e.g. 1G")
    elif memory > platform.max_ram:
        diags.error(pos, f"system.memory {size_text(memory)} is more than {platform.name} supports; "
                    f"use at most {size_text(platform.max_ram)}")
    elif memory % granule:
        diags.error(pos, f"system.memory {hexa(memory)} is not a multiple of {size_text(granule)} (QEMU takes "
                    f"whole MiB); use {size_text(align_up(memory, granule))}")


def _check_hypervisor(system: System, diags: Diagnostics) -> None:
    hyp, platform = system.hypervisor, system.platform
    if hyp is None or platform is None:
        return
    align = platform.hyp_align
    if hyp.base is not None and hyp.base % align:
        diags.error(hyp.at("base"), f"hypervisor.memory.base {hexa(hyp.base)} is not {size_text(align)} "
                    f"aligned; use {hexa(align_down(hyp.base, align))}")
    if hyp.size == 0:
        diags.error(hyp.at("size"), f"hypervisor.memory.size must not be 0; use at least {size_text(align)}")
    elif hyp.size is not None and hyp.size % align:
        diags.error(hyp.at("size"), f"hypervisor.memory.size {hexa(hyp.size)} is not a multiple of "
                    f"{size_text(align)}; use {hexa(align_up(hyp.size, align))}")
    if hyp.base is not None and hyp.size:
        _check_hypervisor_place(system, diags)


def _check_hypervisor_place(system: System, diags: Diagnostics) -> None:
    """Anywhere in RAM (QEMU loads the image where its header says), but inside one window of the
    EL2 map: mmu.c gives the image's GiB one level-2 table."""
    hyp, platform, ram = system.hypervisor, system.platform, ram_range(system)
    where = span(hyp.base, hyp.size)
    if ram and ram[1] and not _inside(hyp.base, hyp.size, *ram):
        diags.error(hyp.at("base"), f"hypervisor memory {where} is not inside RAM ({span(*ram)}); "
                    f"move it into RAM or raise system.memory")
        return
    window = platform.hyp_window
    if hyp.base // window != (hyp.base + hyp.size - 1) // window:
        boundary = align_up(hyp.base + 1, window)
        diags.error(hyp.at("base"), f"hypervisor memory {where} crosses the {size_text(window)} boundary "
                    f"{hexa(boundary)}, and the hypervisor maps its image inside one {size_text(window)} "
                    f"window; move it to end at {hexa(boundary)} or start there")


def image_address(system: System) -> int:
    """Where the boot image is linked and QEMU loads it: load_offset into the hypervisor memory."""
    return system.hypervisor.base + system.platform.load_offset


# --- partitions ------------------------------------------------------------------------------

def _check_partition_names(system: System, diags: Diagnostics) -> None:
    seen: dict[str, Partition] = {}
    for part in system.partitions:
        if part.name is None:
            continue
        if not re.fullmatch(rf"[A-Za-z0-9_-]{{1,{PARTITION_NAME_MAX}}}", part.name):
            diags.error(part.at("name"), f"partition name '{part.name}' is not valid; use 1 to "
                        f"{PARTITION_NAME_MAX} characters from {NAME_CHARS}")
        elif part.name in seen:
            first = seen[part.name].at("name").line
            diags.error(part.at("name"), f"duplicate partition name '{part.name}' (also used at line {first}); "
                        f"give each partition a unique name")
        else:
            seen[part.name] = part


def _check_partition_ids(system: System, diags: Diagnostics) -> None:
    count = len(system.partitions)
    expected = "the id must be 0" if count == 1 else f"the ids must be exactly 0 to {count - 1}"
    seen: dict[int, Partition] = {}
    for part in system.partitions:
        if part.id is None:
            continue
        if part.id in seen:
            other = seen[part.id]
            diags.error(part.at("id"), f"duplicate partition id {part.id} (also used by {other.title} at line "
                        f"{other.at('id').line}); give each partition its own id; {expected}")
        elif part.id >= count:
            diags.error(part.at("id"), f"partition id {part.id} is out of range; with {count} partition"
                        f"{'s' if count != 1 else ''} {expected}")
        seen.setdefault(part.id, part)


def _check_cores(system: System, diags: Diagnostics) -> None:
    """vCPU cores exist; a dedicated core has one vCPU; the system has at most MAX_SYSTEM_VCPUS."""
    owners: dict[int, str] = {}
    vcpus = [(part, vcpu) for part in system.partitions for vcpu in part.vcpus]
    if len(vcpus) > MAX_SYSTEM_VCPUS:
        part, vcpu = vcpus[MAX_SYSTEM_VCPUS]
        diags.error(vcpu.pos, f"{part.title} vCPU {vcpu.index} is vCPU number {MAX_SYSTEM_VCPUS + 1} of the system, "
                    f"but at most {MAX_SYSTEM_VCPUS} vCPUs are supported in all partitions together; remove "
                    f"{len(vcpus) - MAX_SYSTEM_VCPUS}")
    for part, vcpu in vcpus:
        if vcpu.core is None or vcpu.best_effort:  # 'core' on a best-effort vCPU: scheduling.py reports it
            continue
        who = f"{part.title} vCPU {vcpu.index}"
        pos = vcpu.at("core")
        if _cores_known(system) and vcpu.core >= system.cores:
            diags.error(pos, f"{who}: core {vcpu.core} does not exist (system.cores is {system.cores}, so the "
                        f"cores are 0 to {system.cores - 1}); use one of those or raise system.cores")
        elif system.policy_of(vcpu.core) != DEFAULT_POLICY:
            continue  # shared by policy, or the policy is in error
        elif vcpu.core in owners:
            entry = system.policy_entry(vcpu.core)
            why = f"schedule.cores at line {entry.at('policy').line}" if entry else "the default policy"
            diags.error(pos, f"{who}: core {vcpu.core} is already used by {owners[vcpu.core]} and is dedicated "
                        f"({why}), which allows one vCPU; give each vCPU its own core, or set the policy of core "
                        f"{vcpu.core} to cyclic, fixed_priority or edf under schedule.cores")
        else:
            owners[vcpu.core] = f"{who} (line {pos.line})"


def _check_interrupts(system: System, diags: Diagnostics) -> None:
    """Assigned INTIDs are SPIs the board has, not the hypervisor's, each in one partition only."""
    owners: dict[int, tuple[Partition, Interrupt]] = {}
    for part in system.partitions:
        for irq in part.interrupts:
            if irq.intid is None:
                continue
            if system.platform and not _interrupt_assignable(system.platform, part, irq, diags):
                continue
            if irq.intid not in owners:
                owners[irq.intid] = (part, irq)
                continue
            other, first = owners[irq.intid]
            if other is part:
                diags.error(irq.pos, f"{part.title}: interrupt {irq.intid} is listed twice (also at line "
                            f"{first.pos.line}); remove one")
            else:
                diags.error(irq.pos, f"{part.title}: interrupt {irq.intid} is already assigned to {other.title} "
                            f"(line {first.pos.line}); an interrupt goes to one partition only, remove it from one "
                            f"of them")


def _interrupt_assignable(platform: Platform, part: Partition, irq: Interrupt, diags: Diagnostics) -> bool:
    intid, who = irq.intid, f"{part.title}: interrupt {irq.intid}"
    spis = f"{platform.first_spi} to {platform.intid_limit - 1}"
    if intid < platform.first_spi:
        diags.error(irq.pos, f"{who} is an SGI or PPI (INTIDs 0 to {platform.first_spi - 1} are private to each "
                    f"core) and cannot be assigned; use a shared peripheral interrupt (SPI), {spis}")
        return False
    if intid >= platform.intid_limit:
        diags.error(irq.pos, f"{who} does not exist on {platform.name} (its GIC has INTIDs 0 to "
                    f"{platform.intid_limit - 1}); use an SPI from {spis}")
        return False
    device = platform.interrupt_owner(intid)
    if device is not None and not device.assignable:
        diags.error(irq.pos, f"{who} is the interrupt of {device.name}, which is {device.note}; remove it")
        return False
    return True


# --- memory areas ----------------------------------------------------------------------------

def _check_area(system: System, part: Partition, area: Area, diags: Diagnostics) -> None:
    who = f"{part.title} {area.title}"
    page = system.platform.page_size if system.platform else 4096
    _check_alignment(area, who, page, diags)
    _check_rights(area, who, diags)
    if not area.placed or system.platform is None:
        return
    _check_guest_space(area, who, system.platform, diags)
    if area.is_device:
        _check_device_area(area, who, system.platform, diags)
    elif area.kind == "normal":
        _check_normal_area(system, area, who, diags)


def _check_alignment(area: Area, who: str, page: int, diags: Diagnostics) -> None:
    for key in ("phys", "guest"):  # an omitted guest equals phys: reported once
        value = getattr(area, key)
        if key in area.marks and value is not None and value % page:
            diags.error(area.at(key), f"{who}: {key} {hexa(value)} is not {size_text(page)} aligned; use "
                        f"{hexa(align_down(value, page))} or {hexa(align_up(value, page))}")
    if area.size == 0:
        diags.error(area.at("size"), f"{who}: size is 0; give the area a size of at least {size_text(page)}")
    elif area.size is not None and area.size % page:
        diags.error(area.at("size"), f"{who}: size {hexa(area.size)} is not a multiple of {size_text(page)}; "
                    f"use {hexa(align_up(area.size, page))}")


def rights_valid(rights: str) -> bool:
    return bool(rights) and set(rights) <= set("rwx") and len(set(rights)) == len(rights) and "r" in rights


def _check_rights(area: Area, who: str, diags: Diagnostics) -> None:
    if area.rights is None:
        return
    if not rights_valid(area.rights):
        diags.error(area.at("rights"), f"{who}: rights '{area.rights}' are not valid; use the letters r, w and x, "
                    f"each at most once and always with r (e.g. r, rw, rx, rwx)")
    elif area.is_device and "x" in area.rights:
        diags.error(area.at("rights"), f"{who}: device memory cannot be executable; remove the x from "
                    f"rights '{area.rights}'")


def _check_guest_space(area: Area, who: str, platform: Platform, diags: Diagnostics) -> None:
    limit = 1 << platform.ipa_bits
    if area.guest + area.size > limit:
        diags.error(area.at("guest", "phys"), f"{who}: guest range {span(area.guest, area.size)} ends beyond the "
                    f"{platform.ipa_bits}-bit guest address space ({hexa(limit)}); use a lower guest address")


def _check_normal_area(system: System, area: Area, who: str, diags: Diagnostics) -> None:
    ram, hyp = ram_range(system), system.hypervisor
    where = span(area.phys, area.size)
    if ram and ram[1] and not _inside(area.phys, area.size, *ram):
        diags.error(area.at("phys"), f"{who}: {where} is outside RAM ({span(*ram)}); move it into RAM, or set "
                    f"'type: device' if it is a device")
    elif hyp and hyp.base is not None and hyp.size and _overlaps(area.phys, area.size, hyp.base, hyp.size):
        diags.error(area.at("phys"), f"{who}: {where} overlaps the hypervisor memory {span(hyp.base, hyp.size)}; "
                    f"move the area out of it (e.g. to {hexa(hyp.base + hyp.size)})")


def _check_device_area(area: Area, who: str, platform: Platform, diags: Diagnostics) -> None:
    where = span(area.phys, area.size)
    for dev in platform.devices:
        if not dev.assignable and _overlaps(area.phys, area.size, dev.base, dev.size):
            diags.error(area.at("phys"), f"{who}: {where} overlaps {dev.name}, which is {dev.note}; "
                        f"remove this area")
            return
    if not any(dev.assignable and _inside(area.phys, area.size, dev.base, dev.size) for dev in platform.devices):
        choices = ", ".join(f"{d.name} {span(d.base, d.size)}" for d in platform.devices if d.assignable)
        diags.error(area.at("phys"), f"{who}: device range {where} is not inside an assignable device; "
                    f"use a range inside one of: {choices}")


def _placed_pairs(areas: list[Area]):
    """Pairs (earlier, later) of placed areas, by position in the file."""
    placed = sorted((a for a in areas if a.placed), key=lambda a: a.pos)
    return combinations(placed, 2)


def _check_guest_overlaps(part: Partition, diags: Diagnostics) -> None:
    for first, later in _placed_pairs(part.areas):
        if _overlaps(first.guest, first.size, later.guest, later.size):
            diags.error(later.at("guest", "phys"), f"{part.title} {later.title}: guest range "
                        f"{span(later.guest, later.size)} overlaps {first.title} (guest {span(first.guest, first.size)}) "
                        f"in the partition's address space; give one of them another guest address")


def _check_physical_overlaps(system: System, diags: Diagnostics) -> None:
    owner = {id(area): part for part in system.partitions for area in part.areas}
    areas = [area for part in system.partitions for area in part.areas]
    for first, later in _placed_pairs(areas):
        if _overlaps(first.phys, first.size, later.phys, later.size):
            diags.error(later.at("phys"), f"{owner[id(later)].title} {later.title}: {span(later.phys, later.size)} "
                        f"overlaps {owner[id(first)].title} {first.title} ({span(first.phys, first.size)}) in "
                        f"physical memory; areas must not share memory, move or shrink one of them")


# --- images ----------------------------------------------------------------------------------

def check_image(system: System, part: Partition, diags: Diagnostics) -> None:
    """Checks on a partition's loaded ELF (part.elf) and its entry point."""
    if part.elf is not None:
        _check_test_code(system, part, diags)
        if part.areas_ok:
            _check_segments(part, diags)
    rights_ok = all(a.rights is not None and rights_valid(a.rights) for a in part.areas)
    # A firmware partition starts in its flash (bank 0 at 0x0, always there); an image beside it is
    # an error of its own.
    if part.areas_ok and rights_ok and part.entry_point is not None and part.firmware is None:
        _check_entry(part, diags)


def _check_test_code(system: System, part: Partition, diags: Diagnostics) -> None:
    # Test code is Bulkhead's own (libbhtest): an unmodified program on a board has none, so its raw
    # binary (firmware, an RTOS) is taken as it comes; a paravirtual one is built from an ELF.
    if part.elf.has_tests is None and not system.test and part.load is not None:
        if part.board is None:
            diags.error(part.at("image"), f"{part.title}: image '{part.image}' is a raw binary ('load' is given) "
                        f"of a paravirtual partition, so the tool cannot tell whether it contains test code "
                        f"(section {TESTS_SECTION}); use the ELF it was made from, or set 'test: true' under system")
    elif part.elf.has_tests is None and not system.test:
        diags.error(part.at("image"), f"{part.title}: image '{part.image}' has no section header table, so the "
                    f"tool cannot tell whether it contains test code (section {TESTS_SECTION}); use the image as "
                    f"linked, without removing its section headers, or set 'test: true' under system")
    if part.elf.has_tests and not system.test:
        diags.error(part.at("image"), f"{part.title}: image '{part.image}' contains test code (section "
                    f"{TESTS_SECTION}) but system.test is false; set 'test: true' under system, or use an "
                    f"image built without tests")


def _check_segments(part: Partition, diags: Diagnostics) -> None:
    normal = [a for a in part.areas if a.kind == "normal" and a.placed]
    for seg in part.elf.segments:
        if not any(a.contains_guest(seg.ipa, seg.size) for a in normal):
            what = "the raw binary, from 'load'" if part.load is not None else f"program header {seg.phdr}"
            diags.error(part.at("image"), f"{part.title}: image '{part.image}' loads {span(seg.ipa, seg.size)} "
                        f"({what}), which is not inside one normal memory area of the "
                        f"partition (guest addresses); add or grow an area to cover it, or relink the image")


def _check_entry(part: Partition, diags: Diagnostics) -> None:
    entry = part.entry_point
    if part.entry is not None:
        what, pos, fix = f"entry {hexa(entry)}", part.at("entry"), "or change entry"
    else:
        what, pos, fix = f"the image's entry point {hexa(entry)}", part.at("image"), "or set entry"
    if not any(a.kind == "normal" and a.placed and "x" in a.rights and a.contains_guest(entry, 1)
               for a in part.areas):
        diags.error(pos, f"{part.title}: {what} is not inside an executable normal area; add x to the rights of "
                    f"the area that should hold it, {fix}")
    elif part.elf is not None and part.load is not None and part.elf.executable_segment_at(entry) is None:
        seg = part.elf.segments[0]
        diags.error(pos, f"{part.title}: {what} is not inside the raw binary {part.image} "
                    f"({span(seg.ipa, seg.size)} from 'load'); the vCPU would start outside the program, {fix}")
    elif part.elf is not None and part.elf.executable_segment_at(entry) is None:
        # The vCPU would start in memory the image does not load as code: zeroes, or data.
        diags.error(pos, f"{part.title}: {what} is not inside an executable segment (PT_LOAD with flag X) of "
                    f"image '{part.image}'; relink the image so that its code covers the entry point, {fix}")
