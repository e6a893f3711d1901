"""`bulkhead trace`: hypervisor trace events read from a console log.

A system partition reads the hypervisor's per-core trace rings (BH_HC_TRACE_READ) and prints
them in the text form of partitions/include/bulkhead/trace.h:

    BHTRACE-FREQ <counter Hz>
    BHTRACE <core> <time ticks> <type> <partition> <vcpu> <arg>     (all decimal)

each possibly after the console's "[partition] " prefix. Every other line is ignored.
parse() gives a TraceData (events per core in time order, the counter frequency); the rest of
this module turns one into Chrome/Perfetto trace JSON or a PNG timeline.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bulkhead import chrome
from bulkhead.abi import ACTION_NAMES, EVENT_NAMES
from bulkhead.model import System
from bulkhead.timeline import (BUDGET_COLOR, GRID, HM_COLOR, PLAN_SWITCH_COLOR, Box, Lane, Marker, Timeline, darker,
                               partition_color)
from bulkhead.toolchain import ToolError

# Event types (BH_TRACE_* in trace.h).
SLOT_START = 1        # arg = slot index | plan << 16
SLOT_END = 2          # arg = slot index | plan << 16
VCPU_SWITCH = 3       # partition/vcpu = the vCPU now running (IDLE_*: none)
HYPERCALL = 4         # arg = call number
VIRQ = 5              # arg = virtual INTID injected
HM_EVENT = 6          # arg = event | action << 8
PLAN_SWITCH = 7       # arg = new plan index
BUDGET_EXHAUSTED = 8  # an EDF vCPU ran out of budget
HYP_TIMER = 9         # the core's hypervisor timer interrupt (a scheduling tick)
TYPE_NAMES = {SLOT_START: "slot_start", SLOT_END: "slot_end", VCPU_SWITCH: "vcpu_switch", HYPERCALL: "hypercall",
              VIRQ: "virq", HM_EVENT: "hm_event", PLAN_SWITCH: "plan_switch", BUDGET_EXHAUSTED: "budget_exhausted",
              HYP_TIMER: "hyp_timer"}

IDLE_PARTITION = 0xFF
IDLE_VCPU = 0xFFFF
DEFAULT_FREQUENCY = 62_500_000  # QEMU virt's CNTFRQ_EL0
PLAN_TID_BASE = 100             # the slots of core N are thread 100 + N in the JSON

_PREFIX = r"(?:\[[^\]]*\] )?"
_EVENT_LINE = re.compile(_PREFIX + r"BHTRACE (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)")
_FREQ_LINE = re.compile(_PREFIX + r"BHTRACE-FREQ (\d+)")


@dataclass(frozen=True)
class TraceEvent:
    core: int
    time: int  # counter ticks
    type: int
    partition: int
    vcpu: int
    arg: int

    @property
    def idle(self) -> bool:
        return self.partition == IDLE_PARTITION or self.vcpu == IDLE_VCPU

    @property
    def slot(self) -> int:
        """SLOT_START/SLOT_END: the slot's index in its plan's sorted slot list for this core."""
        return self.arg & 0xFFFF

    @property
    def plan(self) -> int:
        """SLOT_START/SLOT_END: the plan index."""
        return self.arg >> 16


@dataclass
class TraceData:
    frequency: int = DEFAULT_FREQUENCY  # counter ticks per second
    events: dict[int, list[TraceEvent]] = field(default_factory=dict)  # per core, sorted by time
    frequency_given: bool = False  # a BHTRACE-FREQ line was found

    @property
    def cores(self) -> list[int]:
        return sorted(self.events)

    @property
    def count(self) -> int:
        return sum(len(events) for events in self.events.values())

    @property
    def start(self) -> int:
        """Ticks of the first event (0 for an empty trace)."""
        return min((events[0].time for events in self.events.values() if events), default=0)

    @property
    def end(self) -> int:
        """Ticks of the last event (0 for an empty trace)."""
        return max((events[-1].time for events in self.events.values() if events), default=0)

    def to_ns(self, ticks: int) -> int:
        return ticks * 1_000_000_000 // self.frequency

    def of_type(self, core: int, kind: int) -> list[TraceEvent]:
        return [event for event in self.events.get(core, []) if event.type == kind]

    def slot_starts(self, core: int) -> list[tuple[int, int, int]]:
        """(time ticks, slot index, plan index) of every SLOT_START on core."""
        return [(event.time, event.slot, event.plan) for event in self.of_type(core, SLOT_START)]

    def run_intervals(self, core: int) -> list[tuple[int, int, int, int]]:
        """(start ticks, end ticks, partition, vcpu) of each time a vCPU ran on core: from one VCPU_SWITCH
        to the next on that core; idle is left out; the last one ends at the end of the trace."""
        switches = self.of_type(core, VCPU_SWITCH)
        intervals = []
        for current, following in zip(switches, switches[1:] + [None]):
            end = following.time if following else self.end
            if not current.idle and end > current.time:
                intervals.append((current.time, end, current.partition, current.vcpu))
        return intervals

    def slot_intervals(self, core: int) -> list[tuple[int, int, TraceEvent]]:
        """(start ticks, end ticks, SLOT_START event) of each slot on core: to its SLOT_END, else to the next
        SLOT_START, else to the end of the trace."""
        intervals, current = [], None
        for event in self.events.get(core, []):
            if event.type == SLOT_START:
                if current is not None:
                    intervals.append((current.time, event.time, current))
                current = event
            elif event.type == SLOT_END and current is not None and event.arg == current.arg:
                intervals.append((current.time, event.time, current))
                current = None
        if current is not None:
            intervals.append((current.time, max(self.end, current.time), current))
        return intervals


def parse(lines: Iterable[str]) -> TraceData:
    """The trace in lines of a console log (other lines are ignored); raises ToolError if the log gives two
    different counter frequencies or a frequency of 0."""
    data = TraceData()
    found: list[TraceEvent] = []
    for line in lines:
        text = line.rstrip("\r\n").rstrip()
        if match := _EVENT_LINE.fullmatch(text):
            core, time, kind, partition, vcpu, arg = map(int, match.groups())
            found.append(TraceEvent(core, time, kind, partition, vcpu, arg))
        elif match := _FREQ_LINE.fullmatch(text):
            _set_frequency(data, int(match.group(1)))
    for event in sorted(found, key=lambda e: e.time):  # stable: equal times keep the log's order
        data.events.setdefault(event.core, []).append(event)
    return data


def _set_frequency(data: TraceData, frequency: int) -> None:
    if frequency == 0:
        raise ToolError("the log gives a counter frequency of 0 (BHTRACE-FREQ 0)")
    if data.frequency_given and frequency != data.frequency:
        raise ToolError(f"the log gives two counter frequencies, {data.frequency} and {frequency} Hz (BHTRACE-FREQ); "
                        f"give a log of one run")
    data.frequency, data.frequency_given = frequency, True


def read(path: str) -> TraceData:
    """parse() a log file, or standard input for '-'."""
    if path == "-":
        return parse(sys.stdin)
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return parse(stream)
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror}") from exc


def best_effort_vcpus(data: TraceData, system: System | None = None) -> set[tuple[int, int]]:
    """(partition id, vCPU index) of the best-effort vCPUs: from the configuration when given, else those the
    trace shows running on more than one core (a pinned vCPU never moves; a best-effort vCPU seen on one core
    only is then not told apart)."""
    if system is not None:
        return {(part.id, vcpu.index) for part in system.partitions for vcpu in part.vcpus if vcpu.best_effort}
    cores: dict[tuple[int, int], set[int]] = {}
    for core in data.cores:
        for _, _, pid, vcpu in data.run_intervals(core):
            cores.setdefault((pid, vcpu), set()).add(core)
    return {key for key, seen in cores.items() if len(seen) > 1}


def best_effort_intervals(data: TraceData, core: int, system: System | None = None) -> list[tuple[int, int, int, int]]:
    """The run intervals of core (TraceData.run_intervals) in which it ran a best-effort vCPU: its idle time
    given to best-effort work. A best-effort vCPU's VCPU_SWITCH events are in the ring of the core that
    holds it, so the core of an interval is the core it ran on."""
    vcpus = best_effort_vcpus(data, system)
    return [run for run in data.run_intervals(core) if (run[2], run[3]) in vcpus]


class Names:
    """Names for ids in events: from the configuration when given, else p<id> and plan <n>."""

    def __init__(self, system: System | None) -> None:
        self.system = system
        parts = system.partitions if system else []
        self.partitions = {p.id: p.name for p in parts}

    def partition(self, pid: int) -> str:
        return self.partitions.get(pid, f"p{pid}")

    def vcpu(self, pid: int, vcpu: int) -> str:
        return "idle" if pid == IDLE_PARTITION or vcpu == IDLE_VCPU else f"{self.partition(pid)}.{vcpu}"

    def plan(self, index: int) -> str:
        plans = self.system.schedule.plans if self.system else []
        return plans[index].name if index < len(plans) else f"plan {index}"

    def slot_vcpu(self, event: TraceEvent) -> tuple[str, int | None]:
        """The vCPU label and partition id of a SLOT_START's slot: from the plan in the configuration, else
        from the event; ('slot N', None) when neither says."""
        plans = self.system.schedule.plans if self.system else []
        if event.plan < len(plans):
            slots = plans[event.plan].core_slots(event.core)
            if event.slot < len(slots):
                part, _ = self.system.resolve(slots[event.slot])
                return slots[event.slot].ref, part.id
        if not event.idle:
            return self.vcpu(event.partition, event.vcpu), event.partition
        return f"slot {event.slot}", None


def _instant(data: TraceData, names: Names, event: TraceEvent) -> chrome.Event | None:
    """The instant event for an event that is not a run or slot boundary."""
    ns = data.to_ns(event.time)
    who = names.vcpu(event.partition, event.vcpu)
    if event.type == HM_EVENT:
        kind, action = event.arg & 0xFF, event.arg >> 8
        kind_name = EVENT_NAMES[kind] if kind < len(EVENT_NAMES) else f"event {kind}"
        action_name = ACTION_NAMES[action] if action < len(ACTION_NAMES) else f"action {action}"
        return chrome.instant(f"HM {kind_name}: {action_name}", "hm", ns, event.core,
                              {"vcpu": who, "event": kind_name, "action": action_name})
    if event.type == PLAN_SWITCH:
        plan = names.plan(event.arg)
        return chrome.instant(f"plan switch to {plan}", "plan", ns, event.core, {"plan": plan, "index": event.arg},
                              scope="g")
    if event.type == BUDGET_EXHAUSTED:
        return chrome.instant(f"budget exhausted {who}", "budget", ns, event.core, {"vcpu": who})
    if event.type == VIRQ:
        return chrome.instant(f"virq {event.arg}", "virq", ns, event.core, {"vcpu": who, "intid": event.arg})
    if event.type == HYPERCALL:
        return chrome.instant(f"hypercall {event.arg:#x}", "hypercall", ns, event.core,
                              {"vcpu": who, "call": event.arg})
    if event.type == HYP_TIMER:
        return chrome.instant("hypervisor tick", "tick", ns, event.core, {"vcpu": who})
    if event.type in (SLOT_START, SLOT_END, VCPU_SWITCH):
        return None
    return chrome.instant(f"event {event.type}", "unknown", ns, event.core,
                          {"vcpu": who, "type": event.type, "arg": event.arg})


def trace_events(data: TraceData, system: System | None = None) -> list[chrome.Event]:
    """The trace as Chrome trace events: per core a thread (tid = core) with the vCPUs' run intervals and
    instant events, and a thread tid = 100 + core with its slots."""
    names = Names(system)
    events = [chrome.process_name(system.name if system else "bulkhead trace")]
    for core in data.cores:
        events += [chrome.thread_name(core, f"core {core}"), chrome.thread_sort_index(core, 2 * core)]
        if data.of_type(core, SLOT_START):
            events += [chrome.thread_name(PLAN_TID_BASE + core, f"core {core} plan"),
                       chrome.thread_sort_index(PLAN_TID_BASE + core, 2 * core + 1)]
    best_effort = best_effort_vcpus(data, system)
    for core in data.cores:
        for start, end, pid, vcpu in data.run_intervals(core):
            begin = data.to_ns(start)
            args = {"partition": names.partition(pid), "vcpu": vcpu}
            if (pid, vcpu) in best_effort:
                events.append(chrome.complete(f"{names.vcpu(pid, vcpu)} (best-effort)", "best_effort", begin,
                                              data.to_ns(end) - begin, core, {**args, "best_effort": True}))
            else:
                events.append(chrome.complete(names.vcpu(pid, vcpu), "run", begin, data.to_ns(end) - begin, core,
                                              args))
        events += filter(None, (_instant(data, names, event) for event in data.events[core]))
        for start, end, event in data.slot_intervals(core):
            begin = data.to_ns(start)
            label, _ = names.slot_vcpu(event)
            events.append(chrome.complete(label, "slot", begin, data.to_ns(end) - begin, PLAN_TID_BASE + core,
                                          {"plan": names.plan(event.plan), "slot": event.slot}))
    return events


MARKERS = {HM_EVENT: HM_COLOR, PLAN_SWITCH: PLAN_SWITCH_COLOR, BUDGET_EXHAUSTED: BUDGET_COLOR}


def timeline(data: TraceData, system: System | None = None) -> Timeline:
    """A PNG timeline: one lane per core with the run intervals coloured by partition, its slots in a strip
    under them, and markers for HM events, plan switches and budget exhaustion."""
    names = Names(system)
    best_effort = best_effort_vcpus(data, system)
    lanes, seen, hatched = [], set(), False
    for core in data.cores:
        boxes = []
        for start, end, pid, vcpu in data.run_intervals(core):
            be = (pid, vcpu) in best_effort
            boxes.append(Box(data.to_ns(start), data.to_ns(end), partition_color(pid), names.vcpu(pid, vcpu), be))
            seen.add(pid)
            hatched |= be
        strip = []
        for start, end, event in data.slot_intervals(core):
            _, pid = names.slot_vcpu(event)
            strip.append(Box(data.to_ns(start), data.to_ns(end), GRID if pid is None else darker(partition_color(pid))))
        markers = [Marker(data.to_ns(e.time), MARKERS[e.type]) for e in data.events[core] if e.type in MARKERS]
        lanes.append(Lane(f"core {core}", boxes, strip, markers))
    start, end = data.to_ns(data.start), data.to_ns(data.end)
    legend = [(names.partition(pid), partition_color(pid)) for pid in sorted(seen)]
    legend += [("HM event", HM_COLOR), ("plan switch", PLAN_SWITCH_COLOR), ("budget exhausted", BUDGET_COLOR)]
    source = f"system '{system.name}'" if system else "trace"
    title = (f"{source}: {_count(data.count, 'event')} on {_count(len(data.cores), 'core')} over "
             f"{time_text(end - start)}")
    notes = [f"time 0 = {time_text(start)} after boot (counter {data.frequency} Hz); the dark strip under a lane "
             f"shows its cyclic slots"]
    if hatched:
        how = "" if system else " (without --config: a vCPU that ran on more than one core)"
        notes.append(f"hatched: a best-effort vCPU{how} running in the core's idle time")
    return Timeline(title, start, max(end, start + 1), lanes, legend, notes)


def time_text(ns: int) -> str:
    """A time for people: 2.8 ms, 12.5 us, 1.000123 s."""
    for unit, factor in (("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)):
        if ns >= factor:
            return f"{ns / factor:.6f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{ns} ns"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def summary(data: TraceData, system: System | None = None) -> list[str]:
    """One line per core (what `bulkhead trace` prints without --json/--png)."""
    if not data.count:
        return ["no BHTRACE events in the log"]
    names = Names(system)
    best_effort = best_effort_vcpus(data, system)
    lines = [f"{_count(data.count, 'event')}, counter {data.frequency} Hz"
             f"{'' if data.frequency_given else ' (default: no BHTRACE-FREQ line)'}, "
             f"{time_text(data.to_ns(data.start))} to {time_text(data.to_ns(data.end))} after boot"]
    for core in data.cores:
        runs = data.run_intervals(core)
        busy: dict[str, int] = {}
        for start, end, pid, vcpu in runs:
            label = names.vcpu(pid, vcpu)
            busy[label] = busy.get(label, 0) + data.to_ns(end) - data.to_ns(start)
        ran = ", ".join(f"{label} {time_text(ns)}" for label, ns in sorted(busy.items()))
        spare = sum(data.to_ns(end) - data.to_ns(start) for start, end, pid, vcpu in runs
                    if (pid, vcpu) in best_effort)
        spare_text = f", best-effort {time_text(spare)}" if spare else ""
        lines.append(f"core {core}: {_count(len(data.events[core]), 'event')}, {_count(len(runs), 'run interval')}"
                     f"{' (' + ran + ')' if ran else ''}{spare_text}, "
                     f"{_count(len(data.slot_starts(core)), 'slot start')}, "
                     f"{_count(len(data.of_type(core, HM_EVENT)), 'HM event')}")
    return lines


def write_json(data: TraceData, system: System | None, path: str | Path) -> None:
    chrome.write(path, trace_events(data, system))
