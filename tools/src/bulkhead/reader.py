"""PyYAML nodes -> model objects: shapes, types and known keys.

Value constraints (ranges, alignment, layout) are left to checks.py; here a value that has the
wrong type is reported and left as None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bulkhead.abi import (ACTION_NAMES, DEFAULT_HEALTH, EVENT_NAMES, MAX_PARTITIONS, MAX_PLANS, MAX_VCPUS,
                          PARAVIRTUAL_ACTIONS, POLICY_NAMES)
from bulkhead.diagnostics import Diagnostics, Pos, suggest
from bulkhead.disk import DiskFile, DiskSpec
from bulkhead.model import (Area, CorePolicy, Hypervisor, Interrupt, Partition, Plan, Schedule, Slot, System,
                            Vcpu)
from bulkhead.model import InitramfsFile, InitramfsSpec, LibraryDir, LinuxSpec, ModuleRef, PassDevice
from bulkhead import firmware
from bulkhead.platforms import PLATFORMS
from bulkhead.units import DURATION_UNITS, U64_MAX, parse_duration, parse_int
from bulkhead.yamlsrc import (TAG_BOOL, TAG_NULL, MappingNode, Node, ScalarNode, SequenceNode,
                              describe, pos_of)


@dataclass(frozen=True)
class Key:
    required: bool
    hint: str  # completes "add ..." when the key is missing


TOP_KEYS = {
    "system": Key(True, "a 'system:' mapping with name, platform, cores and memory"),
    "hypervisor": Key(True, "'hypervisor:' with 'memory: {base: 0x40000000, size: 32M}'"),
    "partitions": Key(True, "'partitions:' with a list of partitions"),
    "schedule": Key(False, ""),
    "channels": Key(False, ""),
}
SYSTEM_KEYS = {
    "name": Key(True, "'name: demo' (1 to 31 characters from A-Z a-z 0-9 _ -)"),
    "platform": Key(True, "'platform: qemu-virt'"),
    "cores": Key(True, "'cores: 4' (the number of physical cores)"),
    "memory": Key(True, "'memory: 1G' (the RAM size given to QEMU)"),
    "test": Key(False, ""),
    "qemu_args": Key(False, ""),
}
HYPERVISOR_KEYS = {"memory": Key(True, "'memory: {base: 0x40000000, size: 32M}'")}
HYP_MEMORY_KEYS = {
    "base": Key(True, "'base: 0x40000000'"),
    "size": Key(True, "'size: 32M'"),
}
PARTITION_KEYS = {
    "name": Key(True, "'name: app' (1 to 15 characters from A-Z a-z 0-9 _ -)"),
    "id": Key(True, "'id: 0' (the ids of N partitions are 0 to N-1)"),
    "system": Key(False, ""),
    "image": Key(False, "'image: path/to/partition.elf'"),  # required unless linux is given
    "entry": Key(False, ""),
    "load": Key(False, ""),
    "vcpus": Key(True, "'vcpus:' with a list such as '- core: 1'"),
    "memory": Key(True, "'memory:' with a list of areas such as '- {phys: 0x42000000, size: 2M, rights: rwx}'"),
    "interrupts": Key(False, ""),
    "health": Key(False, ""),
    "linux": Key(False, ""),
    "devices": Key(False, ""),
    "board": Key(False, ""),
    "apex": Key(False, ""),
    "disk": Key(False, ""),
    "firmware": Key(False, ""),
    "flash": Key(False, ""),
}
DISK_KEYS = {
    "device": Key(True, "'device: virtio-mmio@30' (one of the partition's devices: the disk's slot)"),
    "size": Key(True, "'size: 16M'"),
    "files": Key(False, ""),
    "table": Key(False, ""),
}
VCPU_KEYS = {
    "core": Key(False, "'core: 1' (the physical core this vCPU runs on)"),  # required unless best_effort
    "priority": Key(False, ""),
    "period": Key(False, ""),
    "budget": Key(False, ""),
    "deadline": Key(False, ""),
    "best_effort": Key(False, ""),
    "cores": Key(False, ""),
}
VCPU_DURATIONS = {"period": "10ms", "budget": "2ms", "deadline": "10ms"}
AREA_KEYS = {
    "name": Key(False, ""),
    "phys": Key(True, "'phys: 0x42000000' (the physical base address)"),
    "guest": Key(False, ""),
    "size": Key(True, "'size: 2M'"),
    "rights": Key(False, ""),
    "type": Key(False, ""),
}
AREA_TYPES = ("normal", "device")
SCHEDULE_KEYS = {
    "cores": Key(False, ""),
    "initial_plan": Key(False, ""),
    "plans": Key(False, ""),
}
CORE_POLICY_KEYS = {
    "core": Key(True, "'core: 0' (the physical core)"),
    "policy": Key(True, f"'policy: cyclic' (one of: {', '.join(POLICY_NAMES)})"),
}
PLAN_KEYS = {
    "name": Key(True, "'name: normal' (1 to 15 characters from A-Z a-z 0-9 _ -)"),
    "major_frame": Key(True, "'major_frame: 1ms' (the length of one cycle of the plan)"),
    "slots": Key(True, "'slots:' with a list such as '- {core: 0, start: 0us, duration: 200us, vcpu: app}'"),
}
SLOT_KEYS = {
    "core": Key(True, "'core: 0' (a cyclic core)"),
    "start": Key(True, "'start: 0us' (offset from the start of the major frame)"),
    "duration": Key(True, "'duration: 200us'"),
    "vcpu": Key(True, "'vcpu: app' (a partition's vCPU 0) or 'vcpu: app.1'"),
    "notify": Key(False, ""),
}
VCPU_REF = re.compile(r"([^.\s]+)(?:\.([0-9]+))?")
UNITS_TEXT = ", ".join(DURATION_UNITS)

TYPE_HINTS = {
    "a mapping": "write 'key: value' lines indented below it",
    "a list": "write one entry per line, each starting with '- '",
    "an integer": "write a number such as 4, 0x40000000 or 2M",
    "a string": "write a plain text value",
    "a boolean": "write true or false",
    "a duration": f"write an integer followed by one of the units {UNITS_TEXT} (e.g. 200us)",
}


class Reader:
    """Typed access to nodes; every problem becomes an error in diags and a None result."""

    def __init__(self, diags: Diagnostics) -> None:
        self.diags = diags

    def type_error(self, node: Node, where: str, expected: str) -> None:
        self.diags.error(pos_of(node), f"{where} must be {expected}, not {describe(node)}; {TYPE_HINTS[expected]}")

    def pairs(self, node: Node, where: str) -> list[tuple[str, Node, Node]] | None:
        """The (key, key node, value node) entries of a mapping; duplicate keys are errors."""
        if not isinstance(node, MappingNode):
            self.type_error(node, where, "a mapping")
            return None
        seen: dict[str, Node] = {}
        entries = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode) or key_node.tag == TAG_NULL:
                self.diags.error(pos_of(key_node), f"keys in {where} must be plain names, not {describe(key_node)}; fix the key")
                continue
            key = key_node.value
            if key in seen:
                first = pos_of(seen[key]).line
                self.diags.error(pos_of(key_node), f"duplicate key '{key}' in {where} (first given at line {first}); keep only one")
                continue
            seen[key] = key_node
            entries.append((key, key_node, value_node))
        return entries

    def fields(self, node: Node, where: str, spec: dict[str, Key]) -> dict[str, Node] | None:
        """The values of a mapping's known keys; unknown and missing keys are errors."""
        entries = self.pairs(node, where)
        if entries is None:
            return None
        found: dict[str, Node] = {}
        for key, key_node, value_node in entries:
            if key in spec:
                found[key] = value_node
            else:
                self.unknown_key(key_node, where, spec)
        for key, info in spec.items():
            if info.required and key not in found:
                self.diags.error(pos_of(node), f"missing required key '{key}' in {where}; add {info.hint}")
        return found

    def unknown_key(self, key_node: Node, where: str, spec) -> None:
        key = key_node.value
        action = suggest(key, spec) or "remove it "
        allowed = ", ".join(spec)
        self.diags.error(pos_of(key_node), f"unknown key '{key}' in {where}; {action}(allowed keys: {allowed})")

    def sequence(self, node: Node, where: str) -> list[Node] | None:
        if not isinstance(node, SequenceNode):
            self.type_error(node, where, "a list")
            return None
        return list(node.value)

    def counted(self, node: Node, where: str, limit: int, empty: str | None, noun: str) -> list[Node] | None:
        """A list of 1..limit entries (0..limit when empty is None); empty completes "... is empty; ",
        noun names an entry."""
        entries = self.sequence(node, where)
        if entries == [] and empty is not None:
            self.diags.error(pos_of(node), f"{where} is empty; {empty}")
        elif entries and len(entries) > limit:
            extra = len(entries) - limit
            self.diags.error(pos_of(entries[limit]), f"{where} has {len(entries)} entries, but at most {limit} "
                             f"{noun}s are supported; remove {extra}")
        return entries

    def integer(self, node: Node, where: str, example: str) -> int | None:
        if not isinstance(node, ScalarNode) or node.tag in (TAG_NULL, TAG_BOOL):
            self.type_error(node, where, "an integer")
            return None
        value = parse_int(node.value)
        if value is None:
            self.diags.error(pos_of(node), f"{where} '{node.value}' is not a valid number; write a decimal or 0x hex "
                             f"number, optionally followed by K, M or G (e.g. {example})")
        elif value > U64_MAX:
            self.diags.error(pos_of(node), f"{where} '{node.value}' does not fit in 64 bits; write a smaller number")
            value = None
        return value

    def duration(self, node: Node, where: str, example: str) -> int | None:
        """A duration with a unit (ns, us, ms, s), in nanoseconds."""
        if not isinstance(node, ScalarNode) or node.tag in (TAG_NULL, TAG_BOOL):
            self.type_error(node, where, "a duration")
            return None
        value = parse_duration(node.value)
        if value is None:
            self.diags.error(pos_of(node), f"{where} '{node.value}' is not a valid duration; write an integer "
                             f"followed by one of the units {UNITS_TEXT} (e.g. {example})")
        elif value > U64_MAX:
            self.diags.error(pos_of(node), f"{where} '{node.value}' does not fit in 64 bits of nanoseconds; "
                             f"write a shorter duration")
            value = None
        return value

    def string(self, node: Node, where: str) -> str | None:
        if not isinstance(node, ScalarNode) or node.tag == TAG_NULL:
            self.type_error(node, where, "a string")
            return None
        return node.value

    def boolean(self, node: Node, where: str) -> bool | None:
        if not isinstance(node, ScalarNode) or node.tag != TAG_BOOL:
            self.type_error(node, where, "a boolean")
            return None
        if node.value.lower() not in ("true", "false"):
            self.diags.error(pos_of(node), f"{where} '{node.value}' is ambiguous; write true or false")
            return None
        return node.value.lower() == "true"

    def choice(self, node: Node, where: str, choices: tuple[str, ...], what: str) -> str | None:
        text = self.string(node, where)
        if text is None or text in choices:
            return text
        self.diags.error(pos_of(node), f"unknown {what} '{text}' in {where}; {suggest(text, choices)}"
                         f"use one of: {', '.join(choices)}")
        return None


def read_system(root: Node | None, source: Path, diags: Diagnostics) -> System:
    """Build the model from the document's root node (None for an empty file)."""
    if root is None:
        diags.error(Pos(1, 1), "the file is empty; write the keys system, hypervisor and partitions "
                    "(see docs/configuration.md)")
        return System(Pos(1, 1), source=source)
    reader = Reader(diags)
    system = System(pos_of(root), source=source)
    top = reader.fields(root, "the top level", TOP_KEYS)
    if top is None:
        return system
    if "system" in top:
        _read_system_section(reader, top["system"], system)
    if "hypervisor" in top:
        system.hypervisor = _read_hypervisor(reader, top["hypervisor"])
    if "partitions" in top:
        system.marks["partitions"] = pos_of(top["partitions"])
        system.partitions = _read_partitions(reader, top["partitions"], source.parent)
    if "schedule" in top:
        system.marks["schedule"] = pos_of(top["schedule"])
        system.schedule = _read_schedule(reader, top["schedule"])
    if "channels" in top:
        from bulkhead.channels import read_channels  # channels.py builds on this module
        system.channels = read_channels(reader, top["channels"])
    return system


def _read_system_section(reader: Reader, node: Node, system: System) -> None:
    fields = reader.fields(node, "system", SYSTEM_KEYS)
    if fields is None:
        return
    system.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "name" in fields:
        system.name = reader.string(fields["name"], "system.name")
    if "platform" in fields:
        name = reader.choice(fields["platform"], "system.platform", tuple(PLATFORMS), "platform")
        system.platform = PLATFORMS.get(name) if name else None
    if "cores" in fields:
        system.cores = reader.integer(fields["cores"], "system.cores", "4")
    if "memory" in fields:
        system.memory = reader.integer(fields["memory"], "system.memory", "1G")
    if "test" in fields:
        system.test = bool(reader.boolean(fields["test"], "system.test"))
    if "qemu_args" in fields:
        system.qemu_args = _read_strings(reader, fields["qemu_args"], "system.qemu_args")


def _read_hypervisor(reader: Reader, node: Node) -> Hypervisor | None:
    fields = reader.fields(node, "hypervisor", HYPERVISOR_KEYS)
    if not fields:
        return None
    memory = reader.fields(fields["memory"], "hypervisor.memory", HYP_MEMORY_KEYS)
    if memory is None:
        return None
    hyp = Hypervisor(pos_of(fields["memory"]), marks={k: pos_of(v) for k, v in memory.items()})
    if "base" in memory:
        hyp.base = reader.integer(memory["base"], "hypervisor.memory.base", "0x40000000")
    if "size" in memory:
        hyp.size = reader.integer(memory["size"], "hypervisor.memory.size", "32M")
    return hyp


def _read_partitions(reader: Reader, node: Node, base_dir: Path) -> list[Partition]:
    entries = reader.counted(node, "partitions", MAX_PARTITIONS, "define at least one partition", "partition")
    if entries is None:
        return []
    return [_read_partition(reader, entry, index, base_dir) for index, entry in enumerate(entries)]


def _read_partition(reader: Reader, node: Node, index: int, base_dir: Path) -> Partition:
    where = f"partitions[{index}]"
    part = Partition(pos_of(node), index=index, health=dict(DEFAULT_HEALTH))
    fields = reader.fields(node, where, PARTITION_KEYS)
    if fields is None:
        part.areas_ok = False
        return part
    part.marks.update({key: pos_of(value) for key, value in fields.items()})
    _read_partition_scalars(reader, fields, part, where, base_dir)
    if "vcpus" in fields:
        part.vcpus = _read_vcpus(reader, fields["vcpus"], where)
    part.areas_ok = "memory" in fields and _read_areas(reader, fields["memory"], where, part)
    if "interrupts" in fields:
        part.interrupts = _read_interrupts(reader, fields["interrupts"], where)
    if "health" in fields:
        _read_health(reader, fields["health"], where, part.health)
    if "apex" in fields:
        from bulkhead.apex import read_apex  # apex.py builds on this module
        part.apex = read_apex(reader, fields["apex"], where)
    _read_linux_partition(reader, node, fields, part, where, base_dir)
    if "disk" in fields:
        part.disk = _read_disk(reader, fields["disk"], f"{where}.disk", base_dir)
    firmware.read_keys(reader, fields, part, where, base_dir)
    if "health" in fields and "linux" in fields:
        _check_linux_health(reader, fields["health"], where)
    elif "health" in fields and "board" in fields:
        _check_linux_health(reader, fields["health"], where, "a program built for a board")
    return part


def _read_disk(reader: Reader, node: Node, where: str, base_dir: Path) -> DiskSpec:
    spec = DiskSpec(pos_of(node))
    fields = reader.fields(node, where, DISK_KEYS) or {}
    spec.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "device" in fields:
        spec.device = reader.string(fields["device"], f"{where}.device")
    if "size" in fields:
        spec.size = reader.integer(fields["size"], f"{where}.size", "16M")
    if "table" in fields:
        spec.table = reader.string(fields["table"], f"{where}.table")
    entries = reader.pairs(fields["files"], f"{where}.files") if "files" in fields else []
    for dest, key_node, value_node in entries or []:
        item = DiskFile(pos_of(key_node), dest=dest, marks={"source": pos_of(value_node)})
        item.source = reader.string(value_node, f"{where}.files.{dest}")
        item.path = base_dir / item.source if item.source else None
        spec.files.append(item)
    return spec


def _check_linux_health(reader: Reader, node: Node, where: str, who: str = "a Linux kernel") -> None:
    """A Linux kernel (or any unmodified guest) has no handler for BH_VIRQ_HM: propagate would leave
    its events unseen."""
    pairs = node.value if isinstance(node.value, list) else []  # read (and checked) already
    for key_node, value_node in pairs:
        event = key_node.value
        if isinstance(value_node.value, str) and value_node.value in PARAVIRTUAL_ACTIONS:
            reader.diags.error(pos_of(value_node), f"health action 'propagate' in {where}.health.{event} needs a "
                               f"paravirtual partition ({who} has no handler for it); use one of: "
                               f"{', '.join(a for a in ACTION_NAMES if a not in PARAVIRTUAL_ACTIONS)}")


def _read_partition_scalars(reader: Reader, fields: dict[str, Node], part: Partition, where: str,
                            base_dir: Path) -> None:
    if "name" in fields:
        part.name = reader.string(fields["name"], f"{where}.name")
    if "id" in fields:
        part.id = reader.integer(fields["id"], f"{where}.id", "0")
    if "system" in fields:
        part.system = bool(reader.boolean(fields["system"], f"{where}.system"))
    if "board" in fields:
        part.board = reader.string(fields["board"], f"{where}.board")
    if "image" in fields:
        part.image = reader.string(fields["image"], f"{where}.image")
        if part.image:
            part.image_path = base_dir / Path(part.image)
        elif part.image is not None:
            reader.diags.error(part.at("image"), f"{where}.image is empty; give the path of the "
                               f"partition's ELF image, e.g. {PARTITION_KEYS['image'].hint}")
    if "entry" in fields:
        part.entry = reader.integer(fields["entry"], f"{where}.entry", "0x40000000")
    if "load" in fields:
        part.load = reader.integer(fields["load"], f"{where}.load", "0x40200000")


def _read_vcpus(reader: Reader, node: Node, where: str) -> list[Vcpu]:
    entries = reader.counted(node, f"{where}.vcpus", MAX_VCPUS, "add at least one vCPU, e.g. '- core: 1'", "vCPU")
    vcpus = []
    for index, entry in enumerate(entries or []):
        vcpu_where = f"{where}.vcpus[{index}]"
        vcpu = Vcpu(pos_of(entry), index=index)
        fields = reader.fields(entry, vcpu_where, VCPU_KEYS) or {}
        vcpu.marks.update({key: pos_of(value) for key, value in fields.items()})
        if "core" in fields:
            vcpu.core = reader.integer(fields["core"], f"{vcpu_where}.core", "1")
        _read_best_effort(reader, entry, fields, vcpu, vcpu_where)
        if "priority" in fields:
            vcpu.priority = reader.integer(fields["priority"], f"{vcpu_where}.priority", "5")
        for key, example in VCPU_DURATIONS.items():
            if key in fields:
                setattr(vcpu, key, reader.duration(fields[key], f"{vcpu_where}.{key}", example))
        vcpus.append(vcpu)
    return vcpus


def _read_best_effort(reader: Reader, node: Node, fields: dict[str, Node], vcpu: Vcpu, where: str) -> None:
    """best_effort and cores; a vCPU needs core, or best_effort with cores (checked in scheduling.py)."""
    if "best_effort" in fields:
        vcpu.best_effort = reader.boolean(fields["best_effort"], f"{where}.best_effort")  # None: reported
    if "cores" in fields:
        items = reader.sequence(fields["cores"], f"{where}.cores")
        vcpu.cores = [] if items is not None else None  # None with a "cores" mark: not a list, reported
        vcpu.cores_written = len(items or [])
        for index, item in enumerate(items or []):
            core = reader.integer(item, f"{where}.cores[{index}]", "1")
            if core is not None:
                vcpu.cores.append(core)
                vcpu.marks.setdefault(f"cores[{len(vcpu.cores) - 1}]", pos_of(item))
    if "core" not in fields and "best_effort" not in fields and "cores" not in fields:
        reader.diags.error(pos_of(node), f"missing required key 'core' in {where}; add {VCPU_KEYS['core'].hint}, or "
                           f"'best_effort: true' with 'cores: [1, 2]' for a vCPU that runs in the idle time of "
                           f"those cores")


def _read_interrupts(reader: Reader, node: Node, where: str) -> list[Interrupt]:
    irqs = []
    for index, entry in enumerate(reader.sequence(node, f"{where}.interrupts") or []):
        irq = Interrupt(pos_of(entry), index=index)
        irq.intid = reader.integer(entry, f"{where}.interrupts[{index}]", "48")
        irqs.append(irq)
    return irqs


def _read_areas(reader: Reader, node: Node, where: str, part: Partition) -> bool:
    """Fill part.areas; True when the list and all its areas were read without error."""
    before = len(reader.diags)
    entries = reader.counted(node, f"{where}.memory", 1 << 30, "add at least one area, e.g. "
                             "'- {phys: 0x42000000, size: 2M, rights: rwx}'", "area")
    part.areas = [_read_area(reader, entry, index, where) for index, entry in enumerate(entries or [])]
    return entries is not None and len(reader.diags) == before


def _read_area(reader: Reader, node: Node, index: int, where: str) -> Area:
    area_where = f"{where}.memory[{index}]"
    area = Area(pos_of(node), index=index)
    fields = reader.fields(node, area_where, AREA_KEYS)
    if fields is None:
        return area
    area.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "name" in fields:
        area.label = reader.string(fields["name"], f"{area_where}.name")
    for key, example in (("phys", "0x42000000"), ("size", "2M")):
        if key in fields:
            setattr(area, key, reader.integer(fields[key], f"{area_where}.{key}", example))
    area.guest = area.phys
    if "guest" in fields:
        area.guest = reader.integer(fields["guest"], f"{area_where}.guest", "0x40000000")
    if "rights" in fields:
        area.rights = reader.string(fields["rights"], f"{area_where}.rights")
    if "type" in fields:
        area.kind = reader.choice(fields["type"], f"{area_where}.type", AREA_TYPES, "area type")
    return area


def _read_health(reader: Reader, node: Node, where: str, health: dict[str, str]) -> None:
    health_where = f"{where}.health"
    for event, key_node, value_node in reader.pairs(node, health_where) or []:
        if event not in EVENT_NAMES:
            reader.diags.error(pos_of(key_node), f"unknown health event '{event}' in {health_where}; "
                               f"{suggest(event, EVENT_NAMES)}use one of: {', '.join(EVENT_NAMES)}")
            continue
        action = reader.choice(value_node, f"{health_where}.{event}", ACTION_NAMES, "health action")
        if action is not None:
            health[event] = action


def _read_schedule(reader: Reader, node: Node) -> Schedule:
    schedule = Schedule(pos_of(node))
    fields = reader.fields(node, "schedule", SCHEDULE_KEYS)
    if fields is None:
        return schedule
    schedule.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "cores" in fields:
        schedule.cores = [_read_core_policy(reader, entry, index)
                          for index, entry in enumerate(reader.sequence(fields["cores"], "schedule.cores") or [])]
    if "initial_plan" in fields:
        schedule.initial_plan = reader.string(fields["initial_plan"], "schedule.initial_plan")
    if "plans" in fields:
        entries = reader.counted(fields["plans"], "schedule.plans", MAX_PLANS, None, "plan")
        schedule.plans = [_read_plan(reader, entry, index) for index, entry in enumerate(entries or [])]
    return schedule


def _read_core_policy(reader: Reader, node: Node, index: int) -> CorePolicy:
    where = f"schedule.cores[{index}]"
    entry = CorePolicy(pos_of(node), index=index)
    fields = reader.fields(node, where, CORE_POLICY_KEYS) or {}
    entry.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "core" in fields:
        entry.core = reader.integer(fields["core"], f"{where}.core", "0")
    if "policy" in fields:
        entry.policy = reader.choice(fields["policy"], f"{where}.policy", POLICY_NAMES, "policy")
    return entry


def _read_plan(reader: Reader, node: Node, index: int) -> Plan:
    where = f"schedule.plans[{index}]"
    plan = Plan(pos_of(node), index=index)
    fields = reader.fields(node, where, PLAN_KEYS) or {}
    plan.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "name" in fields:
        plan.name = reader.string(fields["name"], f"{where}.name")
    if "major_frame" in fields:
        plan.major_frame = reader.duration(fields["major_frame"], f"{where}.major_frame", "1ms")
    if "slots" in fields:
        entries = reader.sequence(fields["slots"], f"{where}.slots") or []
        plan.slots = [_read_slot(reader, entry, n, f"{where}.slots[{n}]") for n, entry in enumerate(entries)]
    return plan


def _read_slot(reader: Reader, node: Node, index: int, where: str) -> Slot:
    slot = Slot(pos_of(node), index=index)
    fields = reader.fields(node, where, SLOT_KEYS) or {}
    slot.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "core" in fields:
        slot.core = reader.integer(fields["core"], f"{where}.core", "0")
    if "start" in fields:
        slot.start = reader.duration(fields["start"], f"{where}.start", "0us")
    if "duration" in fields:
        slot.duration = reader.duration(fields["duration"], f"{where}.duration", "200us")
    if "vcpu" in fields:
        slot.vcpu_text = _read_vcpu_ref(reader, fields["vcpu"], f"{where}.vcpu", slot)
    if "notify" in fields:
        slot.notify = bool(reader.boolean(fields["notify"], f"{where}.notify"))
    return slot


def _read_vcpu_ref(reader: Reader, node: Node, where: str, slot: Slot) -> str | None:
    """Split 'name' or 'name.N' into slot.partition and slot.vcpu; returns the text as written."""
    text = reader.string(node, where)
    if text is None:
        return None
    match = VCPU_REF.fullmatch(text)
    if match is None:
        reader.diags.error(pos_of(node), f"{where} '{text}' is not a vCPU reference; write a partition name for its "
                           f"vCPU 0, or 'name.N' for its vCPU N (e.g. control or control.1)")
        return text
    slot.partition = match.group(1)
    slot.vcpu = int(match.group(2) or 0)
    return text


# --- Linux partitions (see docs/linux.md; value checks in linux.py) ----------------------------

LINUX_KEYS = {
    "kernel": Key(True, "'kernel: path/to/Image' (an arm64 Linux kernel Image, e.g. ../build/debian/arm64/vmlinuz)"),
    "bootargs": Key(False, ""),
    "initramfs": Key(False, ""),
}
INITRAMFS_KEYS = {
    "busybox": Key(False, ""),
    "files": Key(False, ""),
    "modules": Key(False, ""),
    "modules_dir": Key(False, ""),
    "programs": Key(False, ""),
    "symlinks": Key(False, ""),
    "library_dirs": Key(False, ""),
}
DEVICE_REF = re.compile(r"(virtio-mmio)@([0-9]+)|(rtc)")
DEVICE_FORMS = "virtio-mmio@N (virtio-mmio slot N, 0 to 31) or rtc (the PL031 real-time clock)"


def _read_strings(reader: Reader, node: Node, where: str) -> list[str]:
    values = []
    for index, entry in enumerate(reader.sequence(node, where) or []):
        text = reader.string(entry, f"{where}[{index}]")
        if text is not None:
            values.append(text)
    return values


def _read_linux_partition(reader: Reader, node: Node, fields: dict[str, Node], part: Partition, where: str,
                          base_dir: Path) -> None:
    if "devices" in fields:
        part.devices = _read_devices(reader, fields["devices"], f"{where}.devices")
    if "linux" not in fields:
        if "image" not in fields and "firmware" not in fields:
            reader.diags.error(pos_of(node), f"missing required key 'image' in {where}; add "
                               f"{PARTITION_KEYS['image'].hint} (or 'linux:' for a Linux partition)")
        return
    if "board" in fields:
        reader.diags.error(part.at("board"), f"{where}.board cannot be given with linux: a Linux partition "
                           f"already sees the emulated machine and boots by the Linux protocol; remove 'board' "
                           f"(or replace linux: with image: for a program built for the board)")
    for key in ("image", "entry", "load"):
        if key in fields:
            reader.diags.error(part.at(key), f"{where}.{key} cannot be given with linux: a Linux partition boots "
                               f"its kernel at the base of its first memory area; remove '{key}'")
    part.linux = _read_linux(reader, fields["linux"], f"{where}.linux", base_dir)


def _read_linux(reader: Reader, node: Node, where: str, base_dir: Path) -> LinuxSpec:
    spec = LinuxSpec(pos_of(node))
    fields = reader.fields(node, where, LINUX_KEYS)
    if fields is None:
        return spec
    spec.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "kernel" in fields:
        spec.kernel = reader.string(fields["kernel"], f"{where}.kernel")
        spec.kernel_path = base_dir / spec.kernel if spec.kernel else None
    if "bootargs" in fields:
        text = reader.string(fields["bootargs"], f"{where}.bootargs")
        if text is not None:
            spec.bootargs = text
    if "initramfs" in fields:
        value = fields["initramfs"]
        if isinstance(value, MappingNode):
            spec.initramfs = _read_initramfs(reader, value, f"{where}.initramfs", base_dir)
        elif isinstance(value, ScalarNode) and value.tag not in (TAG_NULL, TAG_BOOL) and value.value:
            spec.initramfs_file = value.value
            spec.initramfs_file_path = base_dir / value.value
        else:
            reader.diags.error(pos_of(value), f"{where}.initramfs must be the path of a newc cpio archive or a "
                               f"mapping (busybox, files, modules) the tool builds one from, not "
                               f"{describe(value)}")
    return spec


def _read_initramfs(reader: Reader, node: Node, where: str, base_dir: Path) -> InitramfsSpec:
    spec = InitramfsSpec(pos_of(node))
    fields = reader.fields(node, where, INITRAMFS_KEYS) or {}
    spec.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "busybox" in fields:
        spec.busybox = reader.string(fields["busybox"], f"{where}.busybox")
        spec.busybox_path = base_dir / spec.busybox if spec.busybox else None
    if "modules_dir" in fields:
        spec.modules_dir = reader.string(fields["modules_dir"], f"{where}.modules_dir")
        spec.modules_dir_path = base_dir / spec.modules_dir if spec.modules_dir else None
    for key, target in (("files", spec.files), ("programs", spec.programs), ("symlinks", spec.symlinks)):
        if key not in fields:
            continue
        entries = reader.pairs(fields[key], f"{where}.{key}")
        spec.files_ok = spec.files_ok and entries is not None
        for dest, key_node, value_node in entries or []:
            item = InitramfsFile(pos_of(key_node), dest=dest, marks={"source": pos_of(value_node)})
            item.source = reader.string(value_node, f"{where}.{key}.{dest}")
            if key != "symlinks":
                item.path = base_dir / item.source if item.source else None
            target.append(item)
    if "library_dirs" in fields:
        for index, entry in enumerate(reader.sequence(fields["library_dirs"], f"{where}.library_dirs") or []):
            text = reader.string(entry, f"{where}.library_dirs[{index}]")
            spec.library_dirs.append(LibraryDir(pos_of(entry), text=text, path=base_dir / text if text else None))
    if "modules" in fields:
        for index, entry in enumerate(reader.sequence(fields["modules"], f"{where}.modules") or []):
            ref = ModuleRef(pos_of(entry), name=reader.string(entry, f"{where}.modules[{index}]"))
            if ref.name and ("/" in ref.name or ref.name.endswith(".ko")):
                ref.path = base_dir / ref.name  # a module file of its own, not one of the kernel's
            spec.modules.append(ref)
    return spec


def _read_devices(reader: Reader, node: Node, where: str) -> list[PassDevice]:
    devices = []
    for index, entry in enumerate(reader.sequence(node, where) or []):
        device = PassDevice(pos_of(entry), index=index)
        device.text = reader.string(entry, f"{where}[{index}]")
        if device.text is None:
            continue
        match = DEVICE_REF.fullmatch(device.text)
        if match is None:
            reader.diags.error(pos_of(entry), f"{where}[{index}] '{device.text}' is not a device this platform can "
                               f"pass through; write {DEVICE_FORMS}")
            continue
        device.kind = match.group(1) or match.group(3)
        device.slot = int(match.group(2)) if match.group(2) else None
        devices.append(device)
    return devices
