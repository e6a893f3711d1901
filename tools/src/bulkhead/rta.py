"""Response-time analysis of an APEX partition's processes inside the partition's time supply.

libapex runs the processes of a partition by preemptive fixed priority (FIFO among equals), each
on its core (the partition's vCPU it is bound to: `core` in the process list, 0 by default), and
a vCPU runs only when its physical core gives it time: each core's processes are analysed
against that vCPU's supply. The analysis charges every activation its declared wcet plus the
library's documented overheads (OVERHEADS), and finds each periodic process's worst-case
response time (release point to the end of its PERIODIC_WAIT):

- on a cyclic core, exactly: releases are aligned to the partition period starts, which are in
  step with the major frame (the first at the partition's first window), so the schedule is fixed
  by the plan; it is simulated from every partition period start within the major frame, over
  hyperperiods, until a hyperperiod boundary finds no work left (then it repeats) or the backlog
  keeps growing (then deadlines are missed);
- on an edf core, by the classical fixed-point R = C_i + sum over the other processes of equal or
  higher priority of ceil(R / T_j) C_j, against the supply bound function of the periodic
  resource (period, budget): the least time the vCPU gets in any window of a given length;
- on a dedicated core (or as the highest priority of a fixed_priority core) the same fixed point
  with the whole core.

docs/apex.md, "Response-time analysis", explains the model and its limits."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from math import ceil, gcd
from pathlib import Path

from bulkhead.apex import ApexProcess, partition_period, period_start_and_duration
from bulkhead.model import Partition, System
from bulkhead.units import duration_text

# The library's own costs, charged by the analysis so that its verdict is safe. Figures measured
# under -icount shift=0 (1 instruction = 1 ns; docs/apex.md, "Measured"), rounded up with margin.
RELEASE_NS = 2000         # timer interrupt to the released process: hypervisor (about 1055) + libapex (288)
SWITCH_NS = 250           # one process switch (115 to 161 measured)
PERIODIC_WAIT_NS = 500    # PERIODIC_WAIT: the service, its deadline timer and the switch away
SLOT_ENTRY_NS = 1000      # a slot start to the partition's vCPU running (518 measured)
LOWER_TIMER_NS = 1000     # a lower process's timer interrupt (release, wake, deadline) on its core (about 320 measured)
JOB_OVERHEAD_NS = RELEASE_NS + 2 * SWITCH_NS + PERIODIC_WAIT_NS  # per activation: in, preempted back, out
OVERHEADS = {"release": RELEASE_NS, "switch": SWITCH_NS, "periodic_wait": PERIODIC_WAIT_NS,
             "slot_entry": SLOT_ENTRY_NS, "per_activation": JOB_OVERHEAD_NS, "lower_timer": LOWER_TIMER_NS}
MAX_HYPERPERIODS = 16
MAX_ACTIVATIONS = 1_000_000  # simulated per phase and hyperperiod: beyond, the exact analysis is refused
MAX_PHASES = 1000           # partition period starts in the frame, each simulated: beyond, refused too
MAX_WORK = 20_000_000       # activations x processes x phases (a simulation's cost): beyond, refused too


@dataclass
class ProcessVerdict:
    name: str
    priority: int
    period: int | None
    wcet: int | None
    charged: int | None        # wcet + JOB_OVERHEAD_NS
    deadline: int | None       # relative (TIME_CAPACITY, else the period)
    wcrt: int | None           # None: not analysed, or unbounded (see note)
    met: bool | None           # None: not analysed
    note: str = ""
    blocking: int = 0          # the longest critical section of a lower-priority process of its core
    lower_timers: int = 0      # 2 LOWER_TIMER_NS for each process of its core below it

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class PartitionAnalysis:
    partition: str
    supply: str
    partition_period: int | None
    processes: list[ProcessVerdict] = field(default_factory=list)
    core: int = 0          # the partition's vCPU whose processes these are
    cores: int = 1         # how many of its vCPUs have processes listed

    @property
    def title(self) -> str:
        return f"partition '{self.partition}'" + (f" core {self.core}" if self.cores > 1 else "")

    def verdict(self, name: str) -> ProcessVerdict | None:
        return next((p for p in self.processes if p.name == name), None)


# --- Supplies ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CyclicSupply:
    frame: int
    windows: tuple[tuple[int, int], ...]  # (start, end) in the frame, slot entry already taken off
    origin: int = 0  # where partition periods start in the frame: its first slot's start

    def describe(self) -> str:
        total = sum(end - start for start, end in self.windows)
        return (f"{duration_text(total)} of every {duration_text(self.frame)} in {len(self.windows)} "
                f"window(s), {duration_text(SLOT_ENTRY_NS)} slot entry taken off each")


@dataclass(frozen=True)
class PeriodicResource:
    period: int
    budget: int

    def sbf(self, t: int) -> int:
        """Least supply in any window of length t (Shin and Lee's periodic resource model): the
        worst case gives nothing for 2 (period - budget), then budget every period."""
        blackout = self.period - self.budget
        if t <= 2 * blackout:
            return 0
        full, rest = divmod(t - 2 * blackout, self.period)
        return full * self.budget + min(rest, self.budget)

    def describe(self) -> str:
        return f"budget {duration_text(self.budget)} every {duration_text(self.period)} (periodic resource)"


@dataclass(frozen=True)
class FullSupply:
    why: str

    @staticmethod
    def sbf(t: int) -> int:
        return t

    def describe(self) -> str:
        return self.why


def supply_of(system: System, part: Partition, index: int = 0):
    """The time supply of the partition's vCPU `index`, or a text saying why there is none to analyse."""
    vcpu = part.vcpus[index] if index < len(part.vcpus) else None
    if vcpu is None or vcpu.core is None:
        return f"vCPU {index} is not pinned to a core (a best-effort vCPU has no guaranteed time)"
    policy = system.policy_of(vcpu.core)
    if policy == "cyclic":
        return _cyclic_supply(system, part, index)
    if policy == "edf":
        return PeriodicResource(vcpu.period, vcpu.budget)
    if policy == "fixed_priority":
        higher = [f"{p.name}.{i}" for p, v in system.vcpus_on(vcpu.core) for i in [p.vcpus.index(v)]
                  if v is not vcpu and v.priority is not None and v.priority >= vcpu.priority]
        if higher:
            return (f"vCPUs of equal or higher priority on core {vcpu.core} ({', '.join(higher)}) have no "
                    f"budget, so nothing bounds what they leave")
        return FullSupply(f"core {vcpu.core}, the highest priority of its fixed_priority core")
    return FullSupply(f"core {vcpu.core}, dedicated")


def _cyclic_supply(system: System, part: Partition, index: int):
    """vCPU `index`'s slots; partition periods start in step with vCPU 0's first slot (libapex's
    grid, written into the image), or with the frame when vCPU 0 has none on a cyclic core."""
    plan = system.initial_plan
    if plan is None:
        return "its core is cyclic but the system has no plan"
    windows = [(s.start + SLOT_ENTRY_NS, s.end) for s in plan.core_slots(part.vcpus[index].core)
               if s.partition == part.name and s.vcpu == index and s.duration > SLOT_ENTRY_NS]
    if not windows:
        return f"plan '{plan.name}' gives vCPU {index} no slot"
    return CyclicSupply(plan.major_frame, tuple(windows), period_start_and_duration(system, part)[0])


# --- The analysis --------------------------------------------------------------------------------

@dataclass
class _Task:
    name: str
    priority: int
    period: int
    cost: int       # charged per activation
    deadline: int


def analyse(system: System) -> list[PartitionAnalysis]:
    """Every partition with an apex process list, in id order, a report for each of its cores that
    has processes (a process runs only on its core: the processes of one core are analysed together,
    against that vCPU's supply)."""
    return [report for p in system.by_id() if getattr(p, "apex", None) is not None and p.apex.processes
            for report in analyse_cores(system, p)]


def analyse_cores(system: System, part: Partition) -> list[PartitionAnalysis]:
    cores = sorted({proc.core for proc in part.apex.processes})
    return [analyse_partition(system, part, core, len(cores)) for core in cores]


def analyse_partition(system: System, part: Partition, core: int = 0, cores: int = 1) -> PartitionAnalysis:
    supply = supply_of(system, part, core)
    period = partition_period(system, part)
    report = PartitionAnalysis(part.name, supply if isinstance(supply, str) else supply.describe(), period,
                               core=core, cores=cores)
    procs = [proc for proc in part.apex.processes if proc.core == core]
    remote = [proc.name for proc in part.apex.processes if proc.core != core and proc.critical]
    for proc in procs:
        tasks, aperiodic = _tasks(procs, proc)
        report.processes.append(_verdict(proc, tasks, aperiodic, supply, period, remote, _lower_timers(procs, proc)))
    return report


def _blockers(procs: list[ApexProcess], proc: ApexProcess) -> list[ApexProcess]:
    """The processes of its core below it that declare a critical section: any of them may hold what
    it waits for (a semaphore) or keep the core (LOCK_PREEMPTION)."""
    return [p for p in procs if p.priority < proc.priority and p.critical]


def _lower_timers(procs: list[ApexProcess], analysed: ApexProcess) -> int:
    """What the timers of the processes below it on its core cost an activation: while it is ready a
    lower process cannot run, so each has at most one release (or wake-up) and one deadline timer
    expiring during the activation, each an interrupt of the running process."""
    return 2 * LOWER_TIMER_NS * sum(p is not analysed and p.priority < analysed.priority for p in procs)


def _tasks(procs: list[ApexProcess], analysed: ApexProcess) -> tuple[list[_Task], list[ApexProcess]]:
    """The tasks and aperiodic processes as the analysis of `analysed` sees them. Blocked by a
    lower-priority process's critical section (the longest: blocking, once an activation, as a
    resource is taken at most once before the process runs on), it is charged that section; and as
    an ARINC 653 semaphore does not raise its holder's priority, every process above the lowest
    blocker may run while the holder keeps it waiting: those count as interfering, as if above it."""
    blockers = _blockers(procs, analysed)
    floor = min((p.priority for p in blockers), default=analysed.priority)
    blocking = max((p.critical for p in blockers), default=0) + _lower_timers(procs, analysed)

    def seen(p: ApexProcess) -> int:
        return analysed.priority + 1 if p is not analysed and floor < p.priority < analysed.priority else p.priority

    tasks = [_Task(p.name, seen(p), p.period, p.wcet + JOB_OVERHEAD_NS + (blocking if p is analysed else 0),
                   p.relative_deadline)
             for p in procs if p.period is not None and p.wcet is not None]
    aperiodic = [replace(p, priority=seen(p)) for p in procs if p.period is None]
    return tasks, aperiodic


def _verdict(proc: ApexProcess, tasks: list[_Task], aperiodic: list[ApexProcess], supply, period,
             remote: list[str] = (), lower_timers: int = 0) -> ProcessVerdict:
    charged = proc.wcet + JOB_OVERHEAD_NS if proc.wcet is not None else None
    verdict = ProcessVerdict(proc.name, proc.priority, proc.period, proc.wcet, charged, proc.relative_deadline,
                             None, None)
    verdict.note = _why_not_analysed(proc, tasks, aperiodic, supply, period, remote)
    if verdict.note:
        return verdict
    task = next(t for t in tasks if t.name == proc.name)
    verdict.lower_timers = lower_timers
    verdict.blocking = task.cost - charged - verdict.lower_timers
    if isinstance(supply, CyclicSupply):
        verdict.wcrt = _simulated_wcrt(task, tasks, supply, period)
        unbounded = "unbounded: the backlog grows every hyperperiod"
    else:
        verdict.wcrt = _fixed_point_wcrt(task, tasks, supply)
        unbounded = "unbounded: beyond its period"
    verdict.met = verdict.wcrt is not None and verdict.wcrt <= task.deadline
    verdict.note = unbounded if verdict.wcrt is None else ""
    if verdict.blocking:
        blocked = f"blocking {_time(verdict.blocking)} charged"
        verdict.note = f"{verdict.note}; {blocked}" if verdict.note else blocked
    return verdict


def _why_not_analysed(proc: ApexProcess, tasks: list[_Task], aperiodic: list[ApexProcess], supply,
                      period: int | None = None, remote: list[str] = ()) -> str:
    """Why the process gets no verdict, or "" when it is analysed."""
    if proc.period is None:
        return "aperiodic: not analysed"
    if remote:
        return (f"not analysed: {', '.join(remote)} on another core declare(s) a critical section; a semaphore is "
                f"partition-wide and its holder runs on its own vCPU's time, which this analysis does not bound")
    if isinstance(supply, CyclicSupply) and period is None:
        return ("not analysed: no partition period (vCPU 0 is not on a cyclic core and apex.period is not given): "
                "libapex releases at SET_PARTITION_MODE(NORMAL), anywhere in this vCPU's frame; give apex.period")
    above = [p.name for p in aperiodic if p.priority >= proc.priority]
    if above:
        return f"not analysed: aperiodic {', '.join(above)} at equal or higher priority (no bound on its load)"
    if isinstance(supply, str):
        return f"not analysed: {supply}"
    if isinstance(supply, CyclicSupply) and _activations_per_hyperperiod(tasks, supply) > MAX_ACTIVATIONS:
        return (f"not analysed: {_activations_per_hyperperiod(tasks, supply)} activations per hyperperiod (more "
                f"than {MAX_ACTIVATIONS}); choose periods with a shorter common multiple")
    if isinstance(supply, CyclicSupply) and len(_phases(supply, period)) > MAX_PHASES:
        return (f"not analysed: {len(_phases(supply, period))} partition period starts in the major frame (more "
                f"than {MAX_PHASES}), each a release phase to simulate; choose a longer apex.period")
    if isinstance(supply, CyclicSupply):
        work = _activations_per_hyperperiod(tasks, supply) * len(tasks) * len(_phases(supply, period))
        if work > MAX_WORK:
            return (f"not analysed: simulating {len(tasks)} processes from {len(_phases(supply, period))} "
                    f"partition period starts is too long (activations x processes x starts {work}, more than "
                    f"{MAX_WORK}); choose periods with a shorter common multiple")
    return ""


# --- Fixed point over a supply bound function ------------------------------------------------------

def _fixed_point_wcrt(task: _Task, tasks: list[_Task], supply) -> int | None:
    """Least R with sbf(R) >= C_i + sum ceil(R/T_j) C_j (j: the others of equal or higher priority);
    None when R would pass the period (with D <= T the deadline is missed then)."""
    others = [t for t in tasks if t is not task and t.priority >= task.priority]
    response = task.cost
    while response <= task.period:
        demand = task.cost + sum(ceil(response / t.period) * t.cost for t in others)
        needed = _inverse_sbf(supply, demand)
        if needed == response:
            return response
        response = needed
    return None


def _inverse_sbf(supply, demand: int) -> int:
    """The least t with sbf(t) >= demand."""
    low, high = demand, demand
    while supply.sbf(high) < demand:
        high *= 2
    while low < high:
        mid = (low + high) // 2
        if supply.sbf(mid) >= demand:
            high = mid
        else:
            low = mid + 1
    return low


# --- Exact simulation over a cyclic plan -------------------------------------------------------------

def _lcm(values) -> int:
    result = 1
    for value in values:
        result = result * value // gcd(result, value)
    return result


def _activations_per_hyperperiod(tasks: list[_Task], supply: CyclicSupply) -> int:
    hyper = _lcm([supply.frame] + [t.period for t in tasks])
    return sum(hyper // t.period for t in tasks)


def _phases(supply: CyclicSupply, period: int | None) -> range:
    """The partition period starts within the major frame (from the partition's first window on)."""
    frame = supply.frame
    step = period if period and frame % period == 0 else frame
    return range(supply.origin % step, frame, step)


def _simulated_wcrt(task: _Task, tasks: list[_Task], supply: CyclicSupply, period: int | None) -> int | None:
    """The worst response of task over every partition period start within the major frame; task goes
    last among processes of its priority that become ready at the same instant. A simulation is shared
    by every process that sees the same tasks and has no other of its priority (for which the order
    among equals changes nothing)."""
    alone = sum(t.priority == task.priority for t in tasks) == 1
    key = tuple((t.name, t.priority, t.period, t.cost, t.deadline) for t in tasks)
    worst = 0
    for phase in _phases(supply, period):
        response = _simulate(key, supply, phase, None if alone else task.name)[task.name]
        if response is None:
            return None
        worst = max(worst, response)
    return worst


@lru_cache(maxsize=256)
def _simulate(key: tuple, supply: CyclicSupply, phase: int, last: str | None) -> dict[str, int | None]:
    return _Simulation([_Task(*t) for t in key], supply, phase, last).run()


class _Simulation:
    """Fixed-priority preemptive scheduling of the tasks on the plan's windows, all released at
    `phase` (a partition period start) and then every period."""

    def __init__(self, tasks: list[_Task], supply: CyclicSupply, phase: int, last_of_equals: str | None) -> None:
        self.tasks, self.supply, self.phase = tasks, supply, phase
        self.hyper = _lcm([supply.frame] + [t.period for t in tasks])
        self.last = last_of_equals
        self.next_release = {t.name: phase for t in tasks}
        self.pending: dict[str, list[int]] = {t.name: [] for t in tasks}  # release times not completed
        self.ready_at: dict[str, int] = {}
        self.left: dict[str, int] = {}
        self.worst: dict[str, int] = {t.name: 0 for t in tasks}

    def run(self) -> dict[str, int | None]:
        """Each task's worst response; None for those the backlog leaves unbounded."""
        t, boundary, previous_backlog = self.phase, self.phase + self.hyper, None
        for _ in range(MAX_HYPERPERIODS):
            t = self._run_until(t, boundary)
            backlog = self._backlog(boundary)
            if not backlog or backlog == previous_backlog:
                return dict(self.worst)  # the schedule repeats from here
            previous_backlog, boundary = backlog, boundary + self.hyper
        return self._worst_with_unbounded()

    def _worst_with_unbounded(self) -> dict[str, int | None]:
        """Work keeps piling up: every task at or below the highest priority still behind is unbounded
        (those above it are not delayed by what is left below)."""
        behind = max(t.priority for t in self.tasks if self.pending[t.name])
        return {t.name: None if t.priority <= behind else self.worst[t.name] for t in self.tasks}

    def _backlog(self, now: int) -> tuple:
        return tuple((name, len(self.pending[name]), self.left.get(name, 0)) for name in sorted(self.pending)
                     if self.pending[name])

    def _release_up_to(self, now: int) -> None:
        for task in self.tasks:
            while self.next_release[task.name] <= now:
                self._add_job(task, self.next_release[task.name])
                self.next_release[task.name] += task.period

    def _add_job(self, task: _Task, release: int) -> None:
        jobs = self.pending[task.name]
        jobs.append(release)
        if len(jobs) == 1:
            self.ready_at[task.name] = release
            self.left[task.name] = task.cost

    def _pick(self) -> _Task | None:
        ready = [t for t in self.tasks if self.pending[t.name]]
        if not ready:
            return None
        return min(ready, key=lambda t: (-t.priority, self.ready_at[t.name], t.name == self.last))

    def _window(self, now: int) -> tuple[int, int]:
        """The supply window containing now, else the next one (absolute times)."""
        frame = self.supply.frame
        base = now - now % frame
        for offset in (0, frame):
            for start, end in self.supply.windows:
                if base + offset + end > now:
                    return max(now, base + offset + start), base + offset + end
        raise AssertionError("a cyclic supply has a window")

    def _run_until(self, now: int, stop: int) -> int:
        while now < stop:
            self._release_up_to(now)
            start, end = self._window(now)
            upcoming = min(self.next_release.values())
            if start > now:
                now = min(start, upcoming, stop)
                continue
            task = self._pick()
            if task is None:  # nothing to run: the windows until the next release do not matter
                now = min(upcoming, stop)
                continue
            until = min(now + self.left[task.name], end, upcoming, stop)
            self.left[task.name] -= until - now
            now = until
            if self.left[task.name] == 0:
                self._complete(task, now)
        return now

    def _complete(self, task: _Task, now: int) -> None:
        jobs = self.pending[task.name]
        self.worst[task.name] = max(self.worst[task.name], now - jobs.pop(0))
        if jobs:  # its next release has passed: a new activation, at the tail of its priority
            self.ready_at[task.name] = now
            self.left[task.name] = task.cost


# --- Text ----------------------------------------------------------------------------------------------

def _time(ns: int | None) -> str:
    if ns is None:
        return "-"
    return duration_text(ns) if ns % 1000 == 0 else f"{ns / 1000:.3f}us"


def describe(analyses: list[PartitionAnalysis]) -> list[str]:
    lines = [f"APEX overheads charged: {JOB_OVERHEAD_NS} ns per activation (release {RELEASE_NS}, two switches "
             f"of {SWITCH_NS}, PERIODIC_WAIT {PERIODIC_WAIT_NS}), {2 * LOWER_TIMER_NS} ns per activation for each "
             f"lower process of its core (its timers), {SLOT_ENTRY_NS} ns at each slot start"]
    for report in analyses:
        period = duration_text(report.partition_period) if report.partition_period else "none"
        lines.append(f"{report.title}: {report.supply}; partition period {period}")
        lines.append(f"  {'process':<16}{'prio':>5}  {'period':>9}  {'wcet':>9}  {'charged':>11}  {'deadline':>9}  "
                     f"{'WCRT':>12}  verdict")
        for v in report.processes:
            verdict = "met" if v.met else ("MISSED" if v.met is False else "-")
            note = f"  ({v.note})" if v.note else ""
            lines.append(f"  {v.name:<16}{v.priority:>5}  {_time(v.period):>9}  {_time(v.wcet):>9}  "
                         f"{_time(v.charged):>11}  {_time(v.deadline):>9}  {_time(v.wcrt):>12}  {verdict}{note}")
    if not analyses:
        lines.append("no partition declares an apex process_list")
    return lines


def write_json(analyses: list[PartitionAnalysis], path: Path) -> None:
    data = {"overheads_ns": OVERHEADS,
            "partitions": [{"partition": a.partition, "core": a.core, "supply": a.supply,
                            "partition_period": a.partition_period,
                            "processes": [v.as_dict() for v in a.processes]} for a in analyses]}
    path.write_text(json.dumps(data, indent=2) + "\n")
