"""Checks of the schedule section: core policies, vCPU scheduling parameters, plans and slots.

Like checks.py, every check skips what the reader could not read (None) and what an earlier
check already reported as invalid (a core that does not exist, a policy in error).
"""

from __future__ import annotations

import re
from fractions import Fraction

from bulkhead.abi import BE_LEAD_TICKS, BE_MIN_RUN_TICKS, MAX_PRIORITY, MAX_SLOTS, MIN_SLOT_NS, PARTITION_NAME_MAX, \
    SLOT_LEAD_TICKS
from bulkhead.diagnostics import Diagnostics, suggest
from bulkhead.model import CorePolicy, Partition, Plan, Slot, System, Vcpu
from bulkhead.units import DURATION_UNITS, duration_text

NAME_CHARS = "A-Z a-z 0-9 _ -"
CYCLIC, FIXED_PRIORITY, EDF = "cyclic", "fixed_priority", "edf"
SHARED_POLICIES = "cyclic, fixed_priority or edf"


def check_schedule(system: System, cores: int | None, diags: Diagnostics) -> None:
    """cores: system.cores when it is valid, else None (core ranges are then not checked)."""
    entries = _check_core_entries(system, cores, diags)
    for part in system.partitions:
        for vcpu in part.vcpus:
            if vcpu.best_effort:
                _check_best_effort(system, part, vcpu, cores, diags)
            else:
                _check_pinned(part, vcpu, diags)
                _check_vcpu_parameters(system, part, vcpu, cores, diags)
    for entry in entries.values():
        if entry.policy == EDF:
            _check_utilization(system, entry, diags)
    cyclic = [entry for entry in entries.values() if entry.policy == CYCLIC]
    _check_plans(system, cyclic, diags)
    _check_slot_count(system, diags)
    for plan in system.schedule.plans:
        _check_plan(system, plan, cores, diags)
    if system.schedule.plans:
        _check_never_scheduled(system, cores, diags)


def span_text(start: int, end: int) -> str:
    """A time range in the largest unit that shows both ends exactly: 0us-200us, 1ms-2ms."""
    for unit in ("s", "ms", "us", "ns"):
        factor = DURATION_UNITS[unit]
        if start % factor == 0 and end % factor == 0:
            return f"{start // factor}{unit}-{end // factor}{unit}"
    raise AssertionError("ns always divides")


def ratio_text(value: Fraction) -> str:
    """A utilization for a message: 1.25, 1.5, 1.001; never rounded down to 1 when above 1."""
    for digits in range(2, 10):
        text = f"{float(value):.{digits}f}".rstrip("0").rstrip(".")
        if (Fraction(text) > 1) == (value > 1):
            return text
    return str(float(value))


# --- schedule.cores --------------------------------------------------------------------------

def _check_core_entries(system: System, cores: int | None, diags: Diagnostics) -> dict[int, CorePolicy]:
    """The first entry of each existing core."""
    first: dict[int, CorePolicy] = {}
    for entry in system.schedule.cores:
        if entry.core is None:
            continue
        where = f"schedule.cores[{entry.index}]"
        if cores is not None and entry.core >= cores:
            diags.error(entry.at("core"), f"{where}: core {entry.core} does not exist (system.cores is {cores}, so "
                        f"the cores are 0 to {cores - 1}); use one of those or raise system.cores")
        elif entry.core in first:
            other = first[entry.core]
            policy = f", policy {other.policy}" if other.policy else ""
            diags.error(entry.at("core"), f"{where}: core {entry.core} is already listed (schedule.cores"
                        f"[{other.index}] at line {other.at('core').line}{policy}); a core has exactly one policy, "
                        f"remove one of the two entries")
        else:
            first[entry.core] = entry
    return first


# --- best-effort vCPUs ----------------------------------------------------------------------

BE_CORES_EXAMPLE = "'cores: [1, 2, 3]'"


def _check_pinned(part: Partition, vcpu: Vcpu, diags: Diagnostics) -> None:
    """A vCPU that is not best-effort: one core, no cores list."""
    who = f"{part.title} vCPU {vcpu.index}"
    if vcpu.best_effort is None:
        return  # best_effort is not a boolean (reported): whether it needs core or cores is not known
    if "cores" in vcpu.marks:
        diags.error(vcpu.at("cores"), f"{who}: cores applies only to best-effort vCPUs; add 'best_effort: true' to "
                    f"let it run in the idle time of those cores, or pin it to one core with 'core: N'")
    elif vcpu.core is None and "core" not in vcpu.marks and "best_effort" in vcpu.marks:
        diags.error(vcpu.pos, f"{who} has best_effort: false but no core; pin it with 'core: N', or make it "
                    f"best-effort with 'best_effort: true' and {BE_CORES_EXAMPLE}")


def _check_best_effort(system: System, part: Partition, vcpu: Vcpu, cores: int | None, diags: Diagnostics) -> None:
    who = f"{part.title} vCPU {vcpu.index}"
    if "core" in vcpu.marks:
        diags.error(vcpu.at("core"), f"{who} is best-effort, so it is not pinned to a core: remove 'core' and list "
                    f"the cores whose idle time it may use under cores, e.g. {BE_CORES_EXAMPLE}")
    for key in ("priority", "period", "budget", "deadline"):
        if key in vcpu.marks:
            diags.error(vcpu.at(key), f"{who}: {key} does not apply to a best-effort vCPU, which runs only when its "
                        f"cores' own policy has nothing to run (round robin among best-effort vCPUs); remove it, or "
                        f"pin the vCPU with 'core: N' instead of best_effort")
    if vcpu.index == 0 and part.interrupts:
        diags.error(vcpu.at("best_effort"), f"{who} is best-effort, but the partition has forwarded interrupts "
                    f"(interrupts or devices), which start on vCPU 0's core; pin vCPU 0 with 'core: N' (the other "
                    f"vCPUs may be best-effort, and the interrupts follow them where the guest routes them), or "
                    f"remove the interrupts")
    if vcpu.cores is None:
        if "cores" not in vcpu.marks:  # else cores is not a list (reported)
            diags.error(vcpu.pos, f"{who} is best-effort but has no cores; add the cores whose idle time it may "
                        f"use, e.g. {BE_CORES_EXAMPLE}")
        return
    if not vcpu.cores_written:
        diags.error(vcpu.at("cores"), f"{who}: cores is empty; list at least one core whose idle time it may use, "
                    f"e.g. {BE_CORES_EXAMPLE}")
    seen: set[int] = set()
    owned = [core for core in vcpu.cores if _owner(system, core, cores)]
    never = bool(owned) and len(owned) == len(vcpu.cores) == vcpu.cores_written  # every core listed is owned
    for index, core in enumerate(vcpu.cores):
        _check_best_effort_core(system, who, vcpu.at(f"cores[{index}]"), core, core in seen, cores, never, diags)
        seen.add(core)
    full = [core for core in vcpu.cores if core not in owned and _cyclic_without_room(system, core, cores)]
    if full and len(owned) + len(full) == len(vcpu.cores) == vcpu.cores_written:
        need, lead = _be_gap_ns(system), _ticks_to_ns(system, SLOT_LEAD_TICKS + BE_LEAD_TICKS)
        listed = ", ".join(str(core) for core in full)
        diags.error(vcpu.at("cores"), f"{who} would never run: cyclic core{'s' if len(full) > 1 else ''} {listed} "
                    f"{'have' if len(full) > 1 else 'has'} no gap between slots of at least {duration_text(need)} in "
                    f"any plan (best-effort work stops {duration_text(lead)} before each slot and needs "
                    f"{duration_text(need - lead)} to run)"
                    f"{', and every other core it lists is dedicated to a vCPU' if owned else ''}; shorten or "
                    f"move slots to leave such a gap, or list cores whose own policy leaves idle time")


def _owner(system: System, core: int, cores: int | None) -> tuple[Partition, Vcpu] | None:
    """The vCPU a dedicated core that exists is given to, if any: it never idles for best-effort work."""
    if (cores is not None and core >= cores) or system.policy_of(core) != "dedicated":
        return None
    owners = system.vcpus_on(core)
    return owners[0] if owners else None


def _ticks_to_ns(system: System, ticks: int) -> int:
    """Counter ticks in whole ns, rounded up."""
    return -(-ticks * 1_000_000_000 // system.platform.counter_hz)


def _be_gap_ns(system: System) -> int:
    """The shortest gap between a cyclic core's slots that gives best-effort time: the slot lead, the
    best-effort lead and BE_MIN_RUN_TICKS (plan.py _cyclic_capacity)."""
    return _ticks_to_ns(system, SLOT_LEAD_TICKS + BE_LEAD_TICKS + BE_MIN_RUN_TICKS)


def _cyclic_without_room(system: System, core: int, cores: int | None) -> bool:
    """core is cyclic, and no plan leaves a gap on it that best-effort work could use (a plan whose
    slots cannot be read counts as having room: its own errors are reported)."""
    if (cores is not None and core >= cores) or system.policy_of(core) != "cyclic" or not system.schedule.plans:
        return False
    need = _be_gap_ns(system)
    for plan in system.schedule.plans:
        slots = plan.core_slots(core) if all(s.start is not None and s.duration is not None for s in plan.slots
                                             if s.core == core) else None
        if slots is None or plan.major_frame is None:
            return False
        at = 0
        for slot in slots:
            if slot.start - at >= need:
                return False
            at = max(at, slot.start + slot.duration)
        if plan.major_frame - at >= need:
            return False
    return True


def _check_best_effort_core(system: System, who: str, pos, core: int, repeated: bool, cores: int | None,
                            never: bool, diags: Diagnostics) -> None:
    """never: every core the vCPU lists is a dedicated core with a vCPU, so it could never run."""
    if repeated:
        diags.error(pos, f"{who}: core {core} is listed twice in cores; remove one")
    elif cores is not None and core >= cores:
        diags.error(pos, f"{who}: core {core} does not exist (system.cores is {cores}, so the cores are 0 to "
                    f"{cores - 1}); use one of those or raise system.cores")
    elif owner := _owner(system, core, cores):
        part, vcpu = owner
        owned = (f"{who}: core {core} is dedicated to {part.vcpu_label(vcpu.index)}, which owns it whether it runs "
                 f"or not")
        usable = "cyclic, fixed_priority and edf cores and dedicated cores without a vCPU"
        if never:
            diags.error(pos, f"{owned}, and so is every other core in its cores: it would never run; list cores whose "
                        f"own policy leaves idle time: {usable}")
        else:
            diags.error(pos, f"{owned}; a best-effort vCPU can use {usable}: remove core {core} from cores")


# --- vCPU parameters -------------------------------------------------------------------------

def _check_vcpu_parameters(system: System, part: Partition, vcpu: Vcpu, cores: int | None,
                           diags: Diagnostics) -> None:
    who = f"{part.title} vCPU {vcpu.index}"
    if vcpu.priority is not None and vcpu.priority > MAX_PRIORITY:
        diags.error(vcpu.at("priority"), f"{who}: priority {vcpu.priority} is out of range; use 0 to "
                    f"{MAX_PRIORITY} (higher runs first)")
    if vcpu.core is None or (cores is not None and vcpu.core >= cores):
        return
    core, policy = vcpu.core, system.policy_of(vcpu.core)
    if policy is None:
        return
    if policy == FIXED_PRIORITY and "priority" not in vcpu.marks:
        diags.error(vcpu.pos, f"{who} is on core {core}, which is fixed_priority, but has no priority; add "
                    f"'priority: N' (0 to {MAX_PRIORITY}, higher runs first)")
    elif policy != FIXED_PRIORITY and "priority" in vcpu.marks:
        diags.error(vcpu.at("priority"), f"{who}: priority applies only to vCPUs on fixed_priority cores, and core "
                    f"{core} is {policy}; remove it, or set the policy of core {core} to fixed_priority under "
                    f"schedule.cores")
    if policy == EDF:
        _check_edf_vcpu(vcpu, who, core, diags)
        return
    for key in ("period", "budget", "deadline"):
        if key in vcpu.marks:
            diags.error(vcpu.at(key), f"{who}: {key} applies only to vCPUs on edf cores, and core {core} is "
                        f"{policy}; remove it, or set the policy of core {core} to edf under schedule.cores")


def _check_edf_vcpu(vcpu: Vcpu, who: str, core: int, diags: Diagnostics) -> None:
    for key, what in (("period", "'period: 10ms' (how often it is released)"),
                      ("budget", "'budget: 2ms' (how long it may run per period)")):
        if key not in vcpu.marks:
            diags.error(vcpu.pos, f"{who} is on core {core}, which is edf, but has no {key}; add {what}")
    for key in ("period", "budget", "deadline"):
        if getattr(vcpu, key) == 0:
            diags.error(vcpu.at(key), f"{who}: {key} must be more than 0; give a duration such as 2ms")
    period, budget, deadline = vcpu.period or None, vcpu.budget or None, vcpu.deadline or None
    if budget and budget < MIN_SLOT_NS:
        # As a cyclic slot: a restarting partition reloads its image in vCPU 0's own time, a step
        # at a time, and takes a step only when one fits before the core's next instant, here the
        # budget's end. Shorter (3us), a cold restart never ended and said nothing (and under one
        # counter tick the vCPU never ran at all): tests/system/test_edfreset.py.
        diags.error(vcpu.at("budget"), f"{who}: budget {duration_text(budget)} is less than the shortest budget "
                    f"({duration_text(MIN_SLOT_NS)}, as the shortest cyclic slot: a restarting partition reloads "
                    f"its image in steps that must fit in it); make it at least {duration_text(MIN_SLOT_NS)}")
    if period and budget and budget > period:
        diags.error(vcpu.at("budget"), f"{who}: budget {duration_text(budget)} is more than the period "
                    f"{duration_text(period)}; a vCPU cannot use more than its period, lower the budget or "
                    f"lengthen the period")
    if deadline and period and deadline > period:
        diags.error(vcpu.at("deadline"), f"{who}: deadline {duration_text(deadline)} is more than the period "
                    f"{duration_text(period)}; use a deadline from the budget to the period, or leave it out "
                    f"(it defaults to the period)")
    elif deadline and budget and deadline < budget:
        diags.error(vcpu.at("deadline"), f"{who}: deadline {duration_text(deadline)} is less than the budget "
                    f"{duration_text(budget)}, so the budget could never be used in time; use a deadline from "
                    f"the budget to the period")


def _check_utilization(system: System, entry: CorePolicy, diags: Diagnostics) -> None:
    shares = [(part.vcpu_label(vcpu.index) if part.name else f"{part.title} vCPU {vcpu.index}",
               Fraction(vcpu.budget, vcpu.period))
              for part, vcpu in system.vcpus_on(entry.core)
              if vcpu.period and vcpu.budget is not None and vcpu.budget <= vcpu.period]  # else reported
    total = sum((share for _, share in shares), Fraction(0))
    if total > 1:
        terms = " + ".join(f"{label} {ratio_text(share)}" for label, share in shares)
        diags.error(entry.pos, f"core {entry.core} (edf) is overloaded: the utilization of its vCPUs, the sum of "
                    f"budget/period, is {ratio_text(total)} ({terms}), more than 1; lower budgets, lengthen "
                    f"periods or move a vCPU to another core")


# --- plans and slots -------------------------------------------------------------------------

def _check_plans(system: System, cyclic: list[CorePolicy], diags: Diagnostics) -> None:
    schedule = system.schedule
    plans = schedule.plans
    if plans and not cyclic:
        diags.error(schedule.at("plans"), "schedule.plans is given but no core is cyclic; set 'policy: cyclic' "
                    "for a core under schedule.cores, or remove the plans")
    if cyclic and not plans:
        for entry in cyclic:
            diags.error(entry.at("policy"), f"core {entry.core} is cyclic but schedule has no plans; add 'plans:' "
                        f"under schedule with at least one plan that gives it slots, or choose another policy")
    seen: dict[str, Plan] = {}
    for plan in plans:
        if plan.name is None:
            continue
        if not re.fullmatch(rf"[A-Za-z0-9_-]{{1,{PARTITION_NAME_MAX}}}", plan.name):
            diags.error(plan.at("name"), f"plan name '{plan.name}' is not valid; use 1 to {PARTITION_NAME_MAX} "
                        f"characters from {NAME_CHARS}")
        elif plan.name in seen:
            diags.error(plan.at("name"), f"duplicate plan name '{plan.name}' (also used at line "
                        f"{seen[plan.name].at('name').line}); give each plan a unique name")
        else:
            seen[plan.name] = plan
    initial = schedule.initial_plan
    if initial is not None and initial not in seen:
        if seen:
            fix = f"{suggest(initial, seen)}use one of: {', '.join(seen)}"
        else:
            fix = "there are no plans, remove it"
        diags.error(schedule.at("initial_plan"), f"schedule.initial_plan '{initial}' is not the name of a plan; "
                    f"{fix}")


def _check_frame_ticks(system: System, plan: Plan, diags: Diagnostics) -> None:
    """The hypervisor turns the major frame into counter ticks and rejects 0 at boot."""
    tick = -(-1_000_000_000 // system.platform.counter_hz)  # the shortest duration of one tick or more
    if plan.major_frame < tick:
        diags.error(plan.at("major_frame"), f"{plan.title}: major_frame {duration_text(plan.major_frame)} is less "
                    f"than one tick of the {system.platform.name} system counter ({tick}ns), which the hypervisor "
                    f"schedules in; make it at least {tick}ns")


def _check_slot_count(system: System, diags: Diagnostics) -> None:
    total = sum(len(plan.slots) for plan in system.schedule.plans)
    if total > MAX_SLOTS:
        diags.error(system.schedule.at("plans"), f"schedule.plans has {total} slots in all, more than the "
                    f"hypervisor's {MAX_SLOTS} (BH_MAX_SLOTS); use fewer or longer slots, or fewer plans")


def _slot_title(plan: Plan, slot: Slot) -> str:
    return f"{plan.title} slots[{slot.index}]"


def _check_plan(system: System, plan: Plan, cores: int | None, diags: Diagnostics) -> None:
    if plan.major_frame == 0:
        diags.error(plan.at("major_frame"), f"{plan.title}: major_frame must be more than 0; give the length of "
                    f"one cycle of the plan, e.g. 1ms")
    elif plan.major_frame is not None and system.platform is not None:
        _check_frame_ticks(system, plan, diags)
    for slot in plan.slots:
        core_ok = _check_slot_core(system, plan, slot, cores, diags)
        _check_slot_time(plan, slot, diags)
        _check_slot_vcpu(system, plan, slot, core_ok, diags)
    _check_overlaps(plan, diags)


def _check_slot_core(system: System, plan: Plan, slot: Slot, cores: int | None, diags: Diagnostics) -> bool:
    """True when the slot's core is a cyclic core."""
    if slot.core is None:
        return False
    title, core = _slot_title(plan, slot), slot.core
    if cores is not None and core >= cores:
        diags.error(slot.at("core"), f"{title}: core {core} does not exist (system.cores is {cores}, so the cores "
                    f"are 0 to {cores - 1}); use one of those or raise system.cores")
        return False
    policy = system.policy_of(core)
    if policy is not None and policy != CYCLIC:
        diags.error(slot.at("core"), f"{title}: core {core} is not cyclic (its policy is {policy}); put the slot "
                    f"on a cyclic core, or set 'policy: cyclic' for core {core} under schedule.cores")
    return policy == CYCLIC


def _check_slot_time(plan: Plan, slot: Slot, diags: Diagnostics) -> None:
    title = _slot_title(plan, slot)
    if slot.duration == 0:
        diags.error(slot.at("duration"), f"{title}: duration must be more than 0; give the slot a length, e.g. "
                    f"200us")
    elif slot.duration is not None and slot.duration < MIN_SLOT_NS:
        diags.error(slot.at("duration"), f"{title}: the slot lasts {duration_text(slot.duration)}, less than "
                    f"the shortest slot ({duration_text(MIN_SLOT_NS)}: the hypervisor decides ahead of each "
                    f"slot and works in steps that must fit in it); make it at least {duration_text(MIN_SLOT_NS)}")
    frame = plan.major_frame
    if None in (slot.start, slot.duration) or not frame or not slot.duration:
        return
    if slot.end > frame:
        diags.error(slot.at("duration"), f"{title}: the slot {span_text(slot.start, slot.end)} ends past the major "
                    f"frame ({duration_text(frame)}); make it end by {duration_text(frame)}: shorten it or start it "
                    f"earlier")


def _check_slot_vcpu(system: System, plan: Plan, slot: Slot, core_ok: bool, diags: Diagnostics) -> None:
    if slot.partition is None:
        return
    title, pos = _slot_title(plan, slot), slot.at("vcpu")
    part = system.partition_named(slot.partition)
    if part is None:
        names = [p.name for p in system.partitions if p.name]
        diags.error(pos, f"{title}: unknown partition '{slot.partition}' in vcpu '{slot.vcpu_text}'; "
                    f"{suggest(slot.partition, names)}use one of: {', '.join(names)}")
        return
    count = len(part.vcpus)
    if slot.vcpu >= count:
        have = f"it has one vCPU, {part.name}.0" if count == 1 else \
            f"its vCPUs are {part.name}.0 to {part.name}.{count - 1}"
        diags.error(pos, f"{title}: partition '{part.name}' has no vCPU {slot.vcpu} ({have}); name one of its "
                    f"vCPUs")
        return
    vcpu = part.vcpus[slot.vcpu]
    if vcpu.best_effort:
        diags.error(pos, f"{title}: vCPU {slot.ref} is best-effort: it has no slots, it runs when its cores' own "
                    f"policy has nothing to run; name a vCPU pinned to core {slot.core}")
    elif core_ok and vcpu.core is not None and vcpu.core != slot.core:
        diags.error(pos, f"{title}: vCPU {slot.ref} runs on core {vcpu.core}, not on core {slot.core}; put the slot "
                    f"on core {vcpu.core}, or name a vCPU of core {slot.core}")


def _check_overlaps(plan: Plan, diags: Diagnostics) -> None:
    timed = [s for s in plan.slots if None not in (s.core, s.start, s.duration) and s.duration]
    for later_index, later in enumerate(timed):
        for first in timed[:later_index]:
            if first.core == later.core and first.start < later.end and later.start < first.end:
                diags.error(later.at("start"), f"{_slot_title(plan, later)} ({_who(later)}, "
                            f"{span_text(later.start, later.end)}) overlaps slots[{first.index}] ({_who(first)}, "
                            f"{span_text(first.start, first.end)}, line {first.pos.line}) on core {later.core}; "
                            f"slots of one core must not overlap, move or shorten one of them")


def _who(slot: Slot) -> str:
    return slot.ref if slot.partition is not None else "vcpu unknown"


def _check_never_scheduled(system: System, cores: int | None, diags: Diagnostics) -> None:
    slots = [slot for plan in system.schedule.plans for slot in plan.slots]
    if any(system.resolve(slot) is None for slot in slots):
        return  # an unreadable or unknown reference: which vCPUs have slots is not known
    scheduled = {(slot.partition, slot.vcpu) for slot in slots}
    for part in system.partitions:
        for vcpu in part.vcpus:
            if vcpu.core is None or (cores is not None and vcpu.core >= cores) or part.name is None or \
                    vcpu.best_effort is not False:  # a best-effort vCPU has no slots; 'core' on it is reported
                continue
            if system.policy_of(vcpu.core) == CYCLIC and (part.name, vcpu.index) not in scheduled:
                diags.error(vcpu.at("core"), f"{part.title} vCPU {vcpu.index} is on cyclic core {vcpu.core} but has "
                            f"no slot in any plan, so it would never run; add a slot with 'vcpu: "
                            f"{part.vcpu_label(vcpu.index)}' on core {vcpu.core} to a plan, or move the vCPU to "
                            f"another core")
