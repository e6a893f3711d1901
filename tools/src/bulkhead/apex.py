"""A partition's `apex:` key: the APEX library's limits, partition period and processes.

Read here, checked here, and written into the partition's image at the symbol `apex_config`
(partitions/apex/config.c), which libapex reads at apex_init: a create call beyond the declared
count is then INVALID_CONFIG, and CREATE_PROCESS of a process that is not in process_list, or
whose attributes differ, too. The processes' periods, execution times and priorities are what
rta.py analyses (docs/apex.md, "Configuration" and "Response-time analysis")."""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field, replace
from pathlib import Path

from bulkhead.diagnostics import Diagnostics
from bulkhead.elfimage import table_in_image
from bulkhead.model import Located, Partition, System
from bulkhead.units import duration_text, size_text
from bulkhead.yamlsrc import Node, pos_of

APEX_HEADER = Path(__file__).resolve().parents[3] / "partitions" / "apex" / "include" / "apex" / "apex.h"
_DEFINE = re.compile(r"^#define\s+(\w+)\s+\(?([0-9a-fA-Fx* ]+?)u?\)?\s*(?:/\*.*)?$", re.M)


def _library_defines() -> dict[str, int]:
    """The library's #define NAME NUMBER (or (A * B)) of apex.h: its limits, read from the header itself."""
    values = {}
    for name, text in _DEFINE.findall(APEX_HEADER.read_text()):
        factors = [t.strip() for t in text.split("*")]
        if all(re.fullmatch(r"0x[0-9a-fA-F]+|\d+", f) for f in factors):
            value = 1
            for factor in factors:
                value *= int(factor, 0)
            values[name] = value
    return values


_LIB = _library_defines()
MAX_PROCESSES = _LIB["APEX_MAX_PROCESSES"]
MAX_CORES = _LIB["APEX_MAX_CORES"]
MIN_STACK = _LIB["APEX_MIN_STACK_SIZE"]
STACK_GUARD = _LIB["APEX_STACK_GUARD_SIZE"]
MIN_PRIORITY, MAX_PRIORITY = _LIB["MIN_PRIORITY_VALUE"], _LIB["MAX_PRIORITY_VALUE"]
NAME_MAX = _LIB["MAX_NAME_LENGTH"]
CONFIG_MAGIC, CONFIG_VERSION = _LIB["APEX_CONFIG_MAGIC"], _LIB["APEX_CONFIG_VERSION"]
CONFIG_SYMBOL = "apex_config"

# Key -> the library's limit, in the order of apex_config.limits (enum apex_limit).
LIMITS = {
    "processes": _LIB["APEX_MAX_PROCESSES"],
    "stack_total": _LIB["APEX_STACK_POOL_SIZE"],
    "semaphores": _LIB["APEX_MAX_SEMAPHORES"],
    "events": _LIB["APEX_MAX_EVENTS"],
    "buffers": _LIB["APEX_MAX_BUFFERS"],
    "blackboards": _LIB["APEX_MAX_BLACKBOARDS"],
    "ports": _LIB["APEX_MAX_PORTS"],
    "message_pool": _LIB["APEX_MESSAGE_POOL_SIZE"],
}
BYTE_LIMITS = ("stack_total", "message_pool")
APEX_KEYS = ("period", *LIMITS, "process_list", "partition_errors")
PROCESS_KEYS = ("name", "period", "wcet", "capacity", "priority", "deadline", "stack", "core", "critical")
DEADLINE_KINDS = {"soft": 0, "hard": 1}
INFINITE = -1  # INFINITE_TIME_VALUE
# ARINC 653's error codes (ERROR_CODE_TYPE in apex.h), as apex.partition_errors names them.
ERROR_CODES = {"deadline_missed": 0, "application_error": 1, "numeric_error": 2, "illegal_request": 3,
               "stack_overflow": 4, "memory_violation": 5, "hardware_fault": 6, "power_fail": 7}

_HEADER = struct.Struct("<4I8I2I3q")     # magic, version, declared, process_count, limits[8],
#                                          partition_errors, reserved, partition_period,
#                                          period_start, duration
_PROCESS = struct.Struct("<32sqqIIII")   # name, period, time_capacity, priority, deadline, stack_size, core
TABLE_SIZE = _HEADER.size + MAX_PROCESSES * _PROCESS.size


@dataclass
class ApexProcess(Located):
    index: int
    name: str | None = None
    period: int | None = None     # ns; None: aperiodic
    wcet: int | None = None       # ns: worst-case execution time, what the analysis charges
    capacity: int | None = None   # ns: ARINC 653 TIME_CAPACITY, the relative deadline; None: the period
    priority: int | None = None
    deadline: str = "soft"
    stack: int | None = None
    core: int = 0                 # its core affinity: an index of the partition's vCPUs
    critical: int | None = None   # ns: its longest critical section (a semaphore held, preemption locked)

    @property
    def relative_deadline(self) -> int | None:
        return self.capacity if self.capacity is not None else self.period


@dataclass
class ApexSpec(Located):
    period: int | None = None  # the partition period (ns); None: the major frame on a cyclic core, else none
    limits: dict[str, int] = field(default_factory=dict)  # as written
    port_names: list[tuple[str, object]] = field(default_factory=list)  # (name, position)
    processes: list[ApexProcess] = field(default_factory=list)
    partition_errors: list[tuple[str, object]] = field(default_factory=list)  # (name, position)

    def limit(self, key: str) -> int:
        """The declared limit: as written, else the default (see docs/configuration.md, apex)."""
        if key in self.limits:
            return self.limits[key]
        if key == "processes":
            return len(self.processes)
        if key == "ports":
            return len(self.port_names)
        if key == "stack_total":
            return sum(stack_need(p.stack) for p in self.processes if p.stack is not None)
        return 0


def stack_need(stack: int) -> int:
    """Bytes of the pool one stack takes: rounded up to 16, plus its guard (kernel.c)."""
    return (stack + 15) // 16 * 16 + STACK_GUARD


# --- Reading ---------------------------------------------------------------------------------

def read_apex(reader, node: Node, where: str) -> ApexSpec:
    from bulkhead.reader import Key
    spec = ApexSpec(pos_of(node))
    fields = reader.fields(node, f"{where}.apex", {k: Key(False, "") for k in APEX_KEYS}) or {}
    spec.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "period" in fields:
        spec.period = reader.duration(fields["period"], f"{where}.apex.period", "10ms")
    for key in LIMITS:
        if key in fields and key != "ports":
            value = reader.integer(fields[key], f"{where}.apex.{key}", "32K" if key in BYTE_LIMITS else "4")
            if value is not None:
                spec.limits[key] = value
    if "ports" in fields:
        _read_ports(reader, fields["ports"], f"{where}.apex.ports", spec)
    if "partition_errors" in fields:
        for i, entry in enumerate(reader.sequence(fields["partition_errors"], f"{where}.apex.partition_errors") or []):
            name = reader.choice(entry, f"{where}.apex.partition_errors[{i}]", tuple(ERROR_CODES), "error code")
            if name is not None:
                spec.partition_errors.append((name, pos_of(entry)))
    if "process_list" in fields:
        entries = reader.sequence(fields["process_list"], f"{where}.apex.process_list") or []
        spec.processes = [_read_process(reader, entry, i, f"{where}.apex.process_list[{i}]")
                          for i, entry in enumerate(entries)]
    return spec


def _read_ports(reader, node: Node, where: str, spec: ApexSpec) -> None:
    for i, entry in enumerate(reader.sequence(node, where) or []):
        name = reader.string(entry, f"{where}[{i}]")
        if name is not None:
            spec.port_names.append((name, pos_of(entry)))


def _read_process(reader, node: Node, index: int, where: str) -> ApexProcess:
    from bulkhead.reader import Key
    proc = ApexProcess(pos_of(node), index=index)
    spec = {k: Key(k in ("name", "priority"), _PROCESS_HINTS.get(k, "")) for k in PROCESS_KEYS}
    fields = reader.fields(node, where, spec) or {}
    proc.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "name" in fields:
        proc.name = reader.string(fields["name"], f"{where}.name")
    for key in ("period", "wcet", "capacity", "critical"):
        if key in fields:
            setattr(proc, key, reader.duration(fields[key], f"{where}.{key}", "10ms"))
    if "priority" in fields:
        proc.priority = reader.integer(fields["priority"], f"{where}.priority", "20")
    if "deadline" in fields:
        proc.deadline = reader.choice(fields["deadline"], f"{where}.deadline", tuple(DEADLINE_KINDS),
                                      "deadline kind") or "soft"
    if "stack" in fields:
        proc.stack = reader.integer(fields["stack"], f"{where}.stack", "4K")
    if "core" in fields:
        proc.core = reader.integer(fields["core"], f"{where}.core", "1") or 0
    return proc


_PROCESS_HINTS = {
    "name": "'name: sensor' (the NAME the partition gives CREATE_PROCESS)",
    "wcet": "'wcet: 1ms' (the process's worst-case execution time per activation)",
    "priority": f"'priority: 20' ({MIN_PRIORITY} to {MAX_PRIORITY}, higher runs first)",
}


# --- Checks ----------------------------------------------------------------------------------

def check_apex(system: System, diags: Diagnostics) -> None:
    for part in system.partitions:
        spec = getattr(part, "apex", None)
        if spec is None:
            continue
        if part.linux is not None or part.board is not None:
            diags.error(part.at("apex"), f"{part.title}: 'apex' needs a paravirtual partition linked with "
                        f"libapex; remove it from a Linux partition or one with a board")
            continue
        _check_limits(part, spec, diags)
        _check_ports(part, spec, diags)
        _check_partition_errors(part, spec, diags)
        _check_processes(part, spec, diags)
        _check_cores(part, spec, diags)
        _check_periods(system, part, spec, diags)


def _check_limits(part: Partition, spec: ApexSpec, diags: Diagnostics) -> None:
    for key, library in LIMITS.items():
        if key not in spec.limits:
            continue
        value = spec.limits[key]
        shown = size_text if key in BYTE_LIMITS else str
        if value > library:
            diags.error(spec.at(key), f"{part.title}: apex.{key} {shown(value)} is more than libapex supports; "
                        f"use at most {shown(library)} (partitions/apex/include/apex/apex.h)")
        elif key == "processes" and value == 0:
            diags.error(spec.at(key), f"{part.title}: apex.processes must be at least 1")
    if "processes" not in spec.limits and not spec.processes:
        diags.error(spec.pos, f"{part.title}: apex declares no processes; add 'processes: N' or a 'process_list'")
    if "stack_total" not in spec.limits and (not spec.processes or any(p.stack is None for p in spec.processes)):
        diags.error(spec.pos, f"{part.title}: apex has no stack_total and not every process is listed with its "
                    f"'stack'; add 'stack_total: 32K' (every stack and its {STACK_GUARD}-byte guard)")


def _check_ports(part: Partition, spec: ApexSpec, diags: Diagnostics) -> None:
    declared = [p.name for p in part.channel_ports]
    seen = set()
    for name, pos in spec.port_names:
        if name in seen:
            diags.error(pos, f"{part.title}: port '{name}' is listed twice in apex.ports; list it once")
        elif name not in declared:
            have = ", ".join(declared) if declared else "none"
            diags.error(pos, f"{part.title}: apex.ports names '{name}', which is not a port of this partition "
                        f"in channels (its ports: {have}); declare the channel or fix the name")
        seen.add(name)
    if len(spec.port_names) > LIMITS["ports"]:
        diags.error(spec.at("ports"), f"{part.title}: apex.ports lists {len(spec.port_names)} ports; libapex "
                    f"supports at most {LIMITS['ports']}")


def _check_partition_errors(part: Partition, spec: ApexSpec, diags: Diagnostics) -> None:
    seen: set[str] = set()
    for name, pos in spec.partition_errors:
        if name in seen:
            diags.error(pos, f"{part.title}: error code '{name}' is listed twice in apex.partition_errors; "
                        f"list it once")
        seen.add(name)


def _check_processes(part: Partition, spec: ApexSpec, diags: Diagnostics) -> None:
    names: dict[str, ApexProcess] = {}
    for proc in spec.processes:
        _check_process(part, proc, diags)
        if proc.name in names:
            diags.error(proc.at("name"), f"{part.title}: process '{proc.name}' is listed twice in "
                        f"apex.process_list (first at line {names[proc.name].at('name').line}); names are unique")
        elif proc.name:
            names[proc.name] = proc
    allowed = spec.limit("processes")
    if "processes" in spec.limits and len(spec.processes) > allowed:
        diags.error(spec.at("process_list"), f"{part.title}: apex.process_list has {len(spec.processes)} "
                    f"processes, more than apex.processes ({allowed})")
    elif len(spec.processes) > MAX_PROCESSES:
        diags.error(spec.at("process_list"), f"{part.title}: apex.process_list has {len(spec.processes)} "
                    f"processes; libapex supports at most {MAX_PROCESSES}")
    stacks = sum(stack_need(p.stack) for p in spec.processes if p.stack is not None)
    if "stack_total" in spec.limits and stacks > spec.limits["stack_total"]:
        diags.error(spec.at("stack_total"), f"{part.title}: apex.stack_total {size_text(spec.limits['stack_total'])} "
                    f"cannot hold the listed stacks ({stacks} bytes with their {STACK_GUARD}-byte guards); "
                    f"raise it to at least {stacks}")


def _check_process(part: Partition, proc: ApexProcess, diags: Diagnostics) -> None:
    who = f"{part.title}: " + (f"process '{proc.name}'" if proc.name else f"apex.process_list[{proc.index}]")
    if proc.name is not None and not 1 <= len(proc.name) <= NAME_MAX:
        diags.error(proc.at("name"), f"{who}: name must have 1 to {NAME_MAX} characters")
    if proc.priority is not None and not MIN_PRIORITY <= proc.priority <= MAX_PRIORITY:
        diags.error(proc.at("priority"), f"{who}: priority {proc.priority} is out of range; use "
                    f"{MIN_PRIORITY} to {MAX_PRIORITY}")
    for key in ("period", "wcet", "capacity"):
        if getattr(proc, key) == 0:
            diags.error(proc.at(key), f"{who}: {key} must be more than 0")
    if proc.stack is not None and proc.stack < MIN_STACK:
        diags.error(proc.at("stack"), f"{who}: stack {proc.stack} is below libapex's minimum; use at least "
                    f"{MIN_STACK}")
    if proc.period and proc.capacity and proc.capacity > proc.period:
        diags.error(proc.at("capacity"), f"{who}: capacity {duration_text(proc.capacity)} is longer than its "
                    f"period {duration_text(proc.period)} (CREATE_PROCESS refuses it); use at most the period")
    if proc.period is not None and proc.wcet is None and "wcet" not in proc.marks:
        diags.error(proc.pos, f"{who}: a periodic process needs its 'wcet' for the analysis; add "
                    f"{_PROCESS_HINTS['wcet']}")
    if proc.critical and proc.wcet and proc.critical > proc.wcet:
        diags.error(proc.at("critical"), f"{who}: critical {duration_text(proc.critical)} is longer than its wcet "
                    f"{duration_text(proc.wcet)}; a critical section is part of an activation")
    deadline = proc.relative_deadline
    if proc.wcet and deadline and proc.wcet > deadline:
        diags.error(proc.at("wcet"), f"{who}: wcet {duration_text(proc.wcet)} is longer than its deadline "
                    f"{duration_text(deadline)}; it can never meet it")


def _check_cores(part: Partition, spec: ApexSpec, diags: Diagnostics) -> None:
    """A process's core is one of the partition's vCPUs that libapex runs (NUM_ASSIGNED_CORES); two of
    those vCPUs pinned to one physical core make libapex halt the partition (check_own_core)."""
    cores = min(len(part.vcpus), MAX_CORES)
    pinned: dict[int, int] = {}
    for index, vcpu in enumerate(part.vcpus[:cores]):
        if vcpu.core is None:
            continue
        if vcpu.core in pinned:
            diags.error(part.at("apex"), f"{part.title}: vCPUs {pinned[vcpu.core]} and {index} are both on core "
                        f"{vcpu.core}, which libapex refuses (the partition halts at initialization); give each "
                        f"vCPU its own core")
        pinned.setdefault(vcpu.core, index)
    for proc in spec.processes:
        if not 0 <= proc.core < cores:
            who = f"process '{proc.name}'" if proc.name else f"apex.process_list[{proc.index}]"
            diags.error(proc.at("core"), f"{part.title}: {who}: core {proc.core} is not one of the partition's "
                        f"cores (its vCPUs, 0 to {cores - 1}, at most {MAX_CORES})")
        elif part.vcpus[proc.core].best_effort:
            diags.error(proc.at("core"), f"{part.title}: process '{proc.name}': core {proc.core} is a best-effort "
                        f"vCPU, which has no time of its own; bind it to a pinned vCPU")


def _check_periods(system: System, part: Partition, spec: ApexSpec, diags: Diagnostics) -> None:
    frame = major_frame_of(system, part)
    period = partition_period(system, part)
    if spec.period is not None and spec.period == 0:
        diags.error(spec.at("period"), f"{part.title}: apex.period must be more than 0")
        return
    if spec.period and frame and spec.period % frame and frame % spec.period:
        diags.error(spec.at("period"), f"{part.title}: apex.period {duration_text(spec.period)} neither divides "
                    f"nor is a multiple of the major frame {duration_text(frame)} of its core's plan; use "
                    f"{duration_text(frame)}")
        return  # the processes' periods are judged against a partition period that is in error
    if not period:
        return
    origin = "" if spec.period else " (the major frame, as apex.period is not given)"
    for proc in spec.processes:
        if proc.period and proc.period % period:
            diags.error(proc.at("period"), f"{part.title}: process '{proc.name}': period "
                        f"{duration_text(proc.period)} is not a multiple of the partition period "
                        f"{duration_text(period)}{origin} (CREATE_PROCESS refuses it); use a multiple, or an "
                        f"apex.period that divides both")


def major_frame_of(system: System, part: Partition) -> int | None:
    """The initial plan's major frame when the partition's vCPU 0 is on a cyclic core."""
    if not part.vcpus or part.vcpus[0].core is None or system.policy_of(part.vcpus[0].core) != "cyclic":
        return None
    plan = system.initial_plan
    return plan.major_frame if plan is not None else None


def windows_of(system: System, part: Partition) -> list[tuple[int, int]]:
    """(start, duration) of the initial plan's slots of the partition's vCPU 0, sorted, when that
    vCPU is on a cyclic core; else none."""
    if major_frame_of(system, part) is None:
        return []
    core = part.vcpus[0].core
    return [(s.start, s.duration) for s in system.initial_plan.core_slots(core)
            if s.partition == part.name and s.vcpu == 0 and s.start is not None and s.duration is not None]


def period_start_and_duration(system: System, part: Partition) -> tuple[int, int]:
    """ARINC 653's partition period starts with the partition's first window in the major frame, and
    its DURATION is the window time of one partition period: (offset of that window in the frame,
    duration) in ns; (0, INFINITE) off a cyclic core or without a window."""
    windows, frame, period = windows_of(system, part), major_frame_of(system, part), partition_period(system, part)
    if not windows or not frame or not period:
        return 0, INFINITE
    return windows[0][0], sum(d for _, d in windows) * period // frame


def partition_period(system: System, part: Partition) -> int | None:
    """The partition period libapex uses: apex.period, else the major frame of its cyclic core."""
    spec = part.apex
    if spec.period:
        return spec.period
    return major_frame_of(system, part)


# --- The table in the image ------------------------------------------------------------------

def bind_image(system: System, part: Partition, diags: Diagnostics) -> None:
    """Write the declaration into the image's apex_config (the segment bytes the build packs)."""
    found = _config_location(part)
    if isinstance(found, str):
        diags.error(part.at("apex"), f"{part.title}: image '{part.image}' {found}")
        return
    seg_index, offset = found
    seg = part.elf.segments[seg_index]
    magic, version = struct.unpack_from("<II", seg.data, offset)
    if (magic, version) != (CONFIG_MAGIC, CONFIG_VERSION):
        diags.error(part.at("apex"), f"{part.title}: image '{part.image}' has an apex_config table of another "
                    f"libapex version ({version}, the tool writes {CONFIG_VERSION}); rebuild the partition")
        return
    table = encode_table(system, part)
    data = seg.data[:offset] + table + seg.data[offset + len(table):]
    segments = list(part.elf.segments)
    segments[seg_index] = replace(seg, data=data)
    part.elf = replace(part.elf, segments=tuple(segments))


def _config_location(part: Partition) -> tuple[int, int] | str:
    """(segment index, offset in its data) of apex_config, or why it cannot be written."""
    found = table_in_image(part.image_path, part.elf, CONFIG_SYMBOL, TABLE_SIZE, "libapex")
    if found is None:
        return (f"has no '{CONFIG_SYMBOL}' symbol, so it is not linked with libapex (or is stripped); add the "
                f"partition to PART_APEX_APPS (docs/apex.md) or remove 'apex'")
    return found


def encode_table(system: System, part: Partition) -> bytes:
    """struct apex_config (apex/apex.h) for the partition's declaration."""
    spec = part.apex
    limits = [spec.limit(key) for key in LIMITS]
    period = partition_period(system, part) or INFINITE
    errors = sum(1 << ERROR_CODES[name] for name in {name for name, _ in spec.partition_errors})
    header = _HEADER.pack(CONFIG_MAGIC, CONFIG_VERSION, 1, len(spec.processes), *limits, errors, 0, period,
                          *period_start_and_duration(system, part))
    rows = [_encode_process(p) for p in spec.processes]
    rows += [bytes(_PROCESS.size)] * (MAX_PROCESSES - len(rows))
    return header + b"".join(rows)


def _encode_process(proc: ApexProcess) -> bytes:
    deadline = proc.relative_deadline
    return _PROCESS.pack(proc.name.encode()[:NAME_MAX], proc.period or INFINITE,
                         deadline if deadline else INFINITE, proc.priority,
                         DEADLINE_KINDS[proc.deadline], proc.stack or 0, proc.core)
