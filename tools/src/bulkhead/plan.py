"""`bulkhead plan`: the configured schedule as text, as a picture (PNG) and as Chrome trace JSON.

The picture has one lane per cyclic core over the plan's major frame; the other cores' policies
and vCPUs are listed under it. Without plans (no cyclic core) it has one lane per core showing
the vCPUs that share it. The JSON holds the plan's slots as complete events, one thread per core,
so the plan can be opened in the same viewer as a `bulkhead trace` of the running system.
"""

from __future__ import annotations

from fractions import Fraction

from bulkhead import chrome
from bulkhead.model import Plan, System
from bulkhead.scheduling import ratio_text, span_text
from bulkhead.timeline import Box, Lane, Timeline, partition_color
from bulkhead.toolchain import ToolError
from bulkhead.units import duration_text

PROPORTION = 1000  # the width of a lane in the picture without plans (no time axis)


def choose_plan(system: System, name: str | None) -> Plan | None:
    """The plan called name, or the initial plan; None when the system has no plans."""
    plans = system.schedule.plans
    if name is None:
        return system.initial_plan
    plan = system.plan_named(name)
    if plan is None:
        have = f"its plans are {', '.join(p.name for p in plans)}" if plans else "it has no plans"
        raise ToolError(f"there is no plan '{name}' in the configuration ({have})")
    return plan


def cyclic_cores(system: System) -> list[int]:
    return [core for core in range(system.cores) if system.policy_of(core) == "cyclic"]


def other_cores(system: System) -> list[int]:
    return [core for core in range(system.cores) if system.policy_of(core) != "cyclic"]


def core_caption(system: System, core: int) -> str:
    """'core 2: fixed_priority: app.1 priority 5, control.1 priority 3' and the like."""
    policy = system.policy_of(core)
    vcpus = system.vcpus_on(core)
    if not vcpus:
        return f"core {core}: {policy}: no vCPU"
    if policy == "fixed_priority":
        vcpus = sorted(vcpus, key=lambda pv: -pv[1].priority)
        items = [f"{p.vcpu_label(v.index)} priority {v.priority}" for p, v in vcpus]
    elif policy == "edf":
        items = [f"{p.vcpu_label(v.index)} {duration_text(v.budget)}/{duration_text(v.period)}"
                 + (f" deadline {duration_text(v.deadline)}" if v.deadline is not None else "") for p, v in vcpus]
        total = sum((Fraction(v.budget, v.period) for _, v in vcpus), Fraction(0))
        items.append(f"utilization {ratio_text(total)}")
    else:
        items = [p.vcpu_label(v.index) for p, v in vcpus]
    return f"core {core}: {policy}: {', '.join(items)}"


def describe(system: System, plan: Plan | None) -> list[str]:
    """The schedule as text lines (what `bulkhead plan` prints without --png/--json)."""
    lines = []
    if plan is not None:
        initial = " (initial)" if plan is system.initial_plan else ""
        lines.append(f"plan '{plan.name}'{initial}, major frame {duration_text(plan.major_frame)}:")
        for core in cyclic_cores(system):
            slots = [f"{span_text(s.start, s.end)} {s.ref}{' (notify)' if s.notify else ''}"
                     for s in plan.core_slots(core)]
            lines.append(f"  core {core}: cyclic: {', '.join(slots) or 'no slots (idle)'}")
    lines += [core_caption(system, core) for core in other_cores(system)]
    return lines


def _legend(system: System) -> list[tuple[str, tuple[int, int, int]]]:
    return [(part.name, partition_color(part.id)) for part in system.by_id()]


def plan_timeline(system: System, plan: Plan, frames: int = 1) -> Timeline:
    frame = plan.major_frame
    lanes = []
    for core in cyclic_cores(system):
        boxes = [Box(n * frame + slot.start, n * frame + slot.end, partition_color(system.resolve(slot)[0].id),
                     slot.ref) for n in range(frames) for slot in plan.core_slots(core)]
        lanes.append(Lane(f"core {core}\ncyclic", boxes))
    initial = " (initial)" if plan is system.initial_plan else ""
    repeat = f", {frames} frames" if frames > 1 else ""
    title = f"{system.name}: plan '{plan.name}'{initial}, major frame {duration_text(frame)}{repeat}"
    notes = [core_caption(system, core) for core in other_cores(system)]
    if len(system.schedule.plans) > 1:
        notes.append("plans: " + ", ".join(f"{p.name} ({duration_text(p.major_frame)})"
                                           for p in system.schedule.plans))
    return Timeline(title, 0, frames * frame, lanes, _legend(system), notes)


def policy_timeline(system: System) -> Timeline:
    """Without plans: one lane per core with its vCPUs side by side (no time axis)."""
    lanes = []
    for core in range(system.cores):
        policy = system.policy_of(core)
        vcpus = system.vcpus_on(core)
        if policy == "fixed_priority":
            vcpus = sorted(vcpus, key=lambda pv: -pv[1].priority)
            shares = [(Fraction(1, len(vcpus)), f"{p.vcpu_label(v.index)} p{v.priority}") for p, v in vcpus]
        elif policy == "edf":
            shares = [(Fraction(v.budget, v.period), f"{p.vcpu_label(v.index)} {duration_text(v.budget)}/"
                       f"{duration_text(v.period)}") for p, v in vcpus]
        else:
            shares = [(Fraction(1, len(vcpus)), p.vcpu_label(v.index)) for p, v in vcpus]
        boxes, at = [], Fraction(0)
        for (part, _), (share, label) in zip(vcpus, shares):
            boxes.append(Box(round(at * PROPORTION), round((at + share) * PROPORTION), partition_color(part.id), label))
            at += share
        lanes.append(Lane(f"core {core}\n{policy}", boxes))
    notes = ["no cyclic plan: each lane shows the vCPUs of one core (fixed_priority: highest priority first; "
             "edf: width = budget/period)"]
    return Timeline(f"{system.name}: cores and vCPUs", 0, PROPORTION, lanes, _legend(system), notes, axis=False)


def timeline(system: System, plan: Plan | None, frames: int = 1) -> Timeline:
    return policy_timeline(system) if plan is None else plan_timeline(system, plan, frames)


def trace_events(system: System, plan: Plan | None, frames: int = 1) -> list[chrome.Event]:
    """The plan's slots as Chrome trace events: pid 0, tid = core, ts/dur in us."""
    if plan is None:
        events = [chrome.process_name(f"{system.name} cores")]
        return events + [chrome.thread_name(core, core_caption(system, core)) for core in range(system.cores)]
    events = [chrome.process_name(f"{system.name} plan {plan.name}")]
    cores = cyclic_cores(system)
    events += [chrome.thread_name(core, f"core {core}") for core in cores]
    for core in cores:
        for n in range(frames):
            for index, slot in enumerate(plan.core_slots(core)):
                part, _ = system.resolve(slot)
                args = {"plan": plan.name, "slot": index, "partition": part.name, "vcpu": slot.vcpu,
                        "notify": slot.notify}
                events.append(chrome.complete(slot.ref, "slot", n * plan.major_frame + slot.start, slot.duration,
                                              core, args))
    return events
