"""`bulkhead plan`: the configured schedule as text, as a picture (PNG) and as Chrome trace JSON.

The picture has one lane per cyclic core over the plan's major frame; the other cores' policies
and vCPUs are listed under it. Without plans (no cyclic core) it has one lane per core showing
the vCPUs that share it. The JSON holds the plan's slots as complete events, one thread per core,
so the plan can be opened in the same viewer as a `bulkhead trace` of the running system.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from bulkhead import chrome
from bulkhead.abi import BE_LEAD_TICKS, BE_MIN_RUN_TICKS, SLOT_LEAD_TICKS
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
    return lines + capacity_lines(system, plan)


# --- best-effort capacity --------------------------------------------------------------------

@dataclass
class Capacity:
    """The share of a core's time its own policy leaves to best-effort vCPUs."""
    core: int
    share: Fraction
    upper_bound: bool  # True: at most this much (fixed_priority, edf); False: this much when the core's own
    #                    vCPUs use all their time (more when they idle in a slot)
    why: str           # how it is computed: 'cyclic: 1ms frame - 200us slots - 2 x 7.2us lead'
    users: list[str]   # the best-effort vCPUs that may use the core ('worker.0')


def best_effort_vcpus(system: System) -> list[tuple[str, list[int]]]:
    """(label, cores) of every best-effort vCPU, partitions by id."""
    return [(part.vcpu_label(vcpu.index), list(dict.fromkeys(vcpu.cores or ())))
            for part in system.by_id() for vcpu in part.vcpus if vcpu.best_effort]


def _ticks_ns(system: System, ticks: int) -> Fraction:
    return Fraction(ticks * 1_000_000_000, system.platform.counter_hz)


def _time(ns: Fraction) -> str:
    """1ms, 200us, 7.2us, 2.048us: in ms when whole, else in us."""
    if ns and ns % 1_000_000 == 0:
        return f"{ns // 1_000_000}ms"
    return f"{float(ns / 1000):.3f}".rstrip("0").rstrip(".") + "us"


def _cyclic_capacity(system: System, plan: Plan, core: int) -> tuple[Fraction, str]:
    """Each gap between the core's slots (the frame end is a boundary too) is best-effort time but for the
    lead before the next boundary (SLOT_LEAD_TICKS + BE_LEAD_TICKS); a gap that leaves less than
    BE_MIN_RUN_TICKS after it gives nothing (docs/architecture.md, "Best-effort vCPUs")."""
    frame = plan.major_frame
    lead = _ticks_ns(system, SLOT_LEAD_TICKS + BE_LEAD_TICKS)
    least = _ticks_ns(system, BE_MIN_RUN_TICKS)
    gaps, at, busy = [], 0, 0
    for slot in plan.core_slots(core):
        if slot.start > at:
            gaps.append(slot.start - at)
        busy += slot.duration
        at = max(at, slot.end)
    if frame > at:
        gaps.append(frame - at)
    used = [gap for gap in gaps if gap - lead >= least]
    short = sum(gap for gap in gaps if gap - lead < least)
    why = f"cyclic: {_time(frame)} frame - {_time(busy)} slots - {len(used)} x {_time(lead)} lead"
    if short:
        why += f" - {_time(short)} in gaps too short to use"
    return sum((gap - lead for gap in used), Fraction(0)) / frame, why


def core_capacity(system: System, plan: Plan | None, core: int) -> Capacity:
    policy, vcpus = system.policy_of(core), system.vcpus_on(core)
    users = [label for label, cores in best_effort_vcpus(system) if core in cores]
    if policy == "cyclic" and plan is not None:
        share, why = _cyclic_capacity(system, plan, core)
        return Capacity(core, share, False, why, users)
    if not vcpus:
        return Capacity(core, Fraction(1), False, f"{policy}, no vCPU", users)
    if policy == "fixed_priority":
        return Capacity(core, Fraction(1), True, "fixed_priority: an upper bound, its vCPUs declare no budget",
                        users)
    if policy == "edf":
        total = sum((Fraction(v.budget, v.period) for _, v in vcpus), Fraction(0))
        return Capacity(core, max(1 - total, Fraction(0)), True, f"edf: 1 - utilization {ratio_text(total)}, an upper "
                        f"bound", users)
    part, vcpu = vcpus[0]
    return Capacity(core, Fraction(0), False, f"dedicated to {part.vcpu_label(vcpu.index)}", users)


def percent_text(share: Fraction) -> str:
    return f"{float(share * 100):.2f}".rstrip("0").rstrip(".") + " %"


def _amount(upper_bound: bool, text: str) -> str:
    return f"at most {text}" if upper_bound else text


def capacity_lines(system: System, plan: Plan | None) -> list[str]:
    """Best-effort capacity per core and per best-effort vCPU (none without best-effort vCPUs)."""
    vcpus = best_effort_vcpus(system)
    if not vcpus:
        return []
    of_plan = f" (plan '{plan.name}')" if plan is not None and cyclic_cores(system) else ""
    lines = [f"best-effort capacity, the share of each core its own policy leaves{of_plan}:"]
    capacity = {core: core_capacity(system, plan, core) for core in range(system.cores)}
    for core, cap in capacity.items():
        users = ", ".join(cap.users) or "no best-effort vCPU"
        lines.append(f"  core {core}: {_amount(cap.upper_bound, percent_text(cap.share))} ({cap.why}): "
                     f"{users}")
    lines.append("best-effort vCPUs, the capacity of their cores together:")
    for label, cores in vcpus:
        caps = [capacity[core] for core in cores if core in capacity]
        total = sum((cap.share for cap in caps), Fraction(0))
        number = f"{float(total):.2f}".rstrip("0").rstrip(".")
        sharing = sorted({user for cap in caps for user in cap.users if user != label},
                         key=[name for name, _ in vcpus].index)
        shared = f", shared with {', '.join(sharing)}" if sharing else ""
        amount = _amount(any(cap.upper_bound for cap in caps), f"{number} core{'' if total == 1 else 's'}")
        lines.append(f"  {label}: core{'s' if len(cores) > 1 else ''} {', '.join(map(str, cores))}: {amount}{shared}")
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
    notes += capacity_lines(system, plan)
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
             "edf: width = budget/period)"] + capacity_lines(system, None)
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
