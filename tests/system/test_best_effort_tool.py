"""The tool on a real trace of best-effort vCPUs (docs/trace.md, docs/configuration.md).

be_migrate.yaml with the tracer added on its fixed-priority core (above fpcheck): under -icount the
tracer prints every core's trace events for 1000 major frames, then halts the system. The trace
must show best-effort time on the right cores only (bework.0 and bework.1 on the cyclic cores 0
and 1, bework.2 on cores 2 and 3), outside the spinners' slots and the lead before them, and on a
cyclic core no more of it than `bulkhead plan` gives as the core's capacity."""

from fractions import Fraction

from bulkhead import abi, plan, trace
from bulkhead.config import load
from harness import BUILD, CONFIGS, ROOT, run_system

BEWORK = 4  # bework's partition id in be_migrate.yaml
TRACER = """\
  - name: tracer
    id: 5
    system: true
    image: ../../../build/partitions/tracer.elf
    vcpus: [{core: 2, priority: 2}]
    memory:
      - {name: ram, phys: 0x43400000, guest: 0x40000000, size: 4M, rights: rwx}
"""


def traced_config():
    """be_migrate.yaml with the tracer, written under build/ with the image paths made absolute."""
    text = (CONFIGS / "be_migrate.yaml").read_text()
    text = text.replace("name: be_migrate", "name: be_traced", 1).replace("\nchannels:", f"\n{TRACER}channels:", 1)
    if TRACER not in text:
        text = text.rstrip("\n") + "\n" + TRACER
    text = text.replace("../../../build/", f"{ROOT}/build/")
    path = BUILD / "systest" / "generated" / "be_traced.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_real_trace_shows_best_effort_time_on_the_right_cores():
    config = traced_config()
    system = load(config)
    run = run_system(config, icount=True, timeout=240,
                     until=lambda r: r.index(r"\[tracer\] BHTEST-SUMMARY") >= 0)
    assert run.verdicts().get(("tracer", "tracer_done"), ("missing",))[0] == "PASS"
    data = trace.parse(run.lines)
    assert data.frequency_given and data.cores == [0, 1, 2, 3]
    found = {core: trace.best_effort_intervals(data, core, system) for core in data.cores}
    ran_on = {core: {vcpu for _, _, pid, vcpu in found[core]} for core in found}
    assert all(pid == BEWORK for runs in found.values() for _, _, pid, _ in runs)
    # vCPUs 0 and 1 may use cores 0 and 1 only, and each ran on both; vCPU 2 cores 2 and 3 only.
    assert ran_on[0] == ran_on[1] == {0, 1}, ran_on
    assert ran_on[2] | ran_on[3] == {2}, ran_on

    capacity = plan.core_capacity(system, system.initial_plan, 0).share
    for core in (0, 1):
        slots = data.slot_intervals(core)
        assert slots, f"core {core} has no slots in the trace"
        lead = min((slot_start - end for _, end, _, _ in found[core] for slot_start, _, _ in slots
                    if slot_start >= end), default=None)
        for start, end, _, vcpu in found[core]:  # the spinners never idle: no best-effort time in a slot
            assert all(end <= s or start >= e for s, e, _ in slots), (core, start, end, vcpu)
        share = Fraction(sum(end - start for start, end, _, _ in found[core]), data.end - data.start)
        # Not asserted: under -icount the four busy cores run in turns, and a turn of the others can delay
        # this core's timer past be_until (down to the slot lead, or none when the slot start's own
        # timer comes first); the real-time tests of test_best_effort.py keep one busy core for that.
        print(f"BHSTAT be_traced core {core}: best-effort {float(share):.2%} of the trace, plan capacity "
              f"{plan.percent_text(capacity)}; shortest gap from its end to a slot start {lead} ticks "
              f"(BE_LEAD_TICKS {abi.BE_LEAD_TICKS} + SLOT_LEAD_TICKS {abi.SLOT_LEAD_TICKS} when no turn delays it)")
        assert 0 < share <= capacity + Fraction(1, 200), (core, float(share))

    summary = trace.summary(data, system)
    assert all(", best-effort " in summary[1 + core] for core in (0, 1)), summary
    picture = trace.timeline(data, system)
    assert all(any(box.hatched for box in picture.lanes[core].boxes) for core in (0, 1))
    assert not any(box.hatched and box.label.startswith("spin_") for lane in picture.lanes for box in lane.boxes)
