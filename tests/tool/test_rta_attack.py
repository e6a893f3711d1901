"""Attack review of `bulkhead analyse` (rta.py): descriptions for which the verdict is unsound, the
analysis hangs, or the tool accepts what it cannot analyse. Each test states what a real run does
(libapex's code cited) and fails while the analysis disagrees."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bulkhead import config, rta
from test_apex_config import _system_on

# vCPU 0 on a dedicated core, vCPU 1 on a cyclic core (one 5 ms window at the start of each 10 ms
# frame); `hi` is bound to vCPU 1. No apex.period: major_frame_of() looks at vCPU 0 only, so the
# partition period is none (INFINITE in apex_config).
TWO_CORES = ("    - {core: 0, policy: cyclic}\n    - {core: 1, policy: dedicated}\n  plans:\n    - name: p\n"
             "      major_frame: 10ms\n      slots:\n"
             "        - {core: 0, start: 0ms, duration: 5ms, vcpu: app.1}\n")


def _load(tmp_path: Path, text: str):
    (tmp_path / "s.yaml").write_text(text)
    system, errors = config.check(tmp_path / "s.yaml", images=False)
    return system, [e.message for e in errors]


def test_release_phase_on_a_cyclic_vcpu_1_without_a_partition_period(tmp_path):
    """With no partition period libapex releases a periodic process at once when NORMAL is set
    (apex_first_release: `now` itself without a period), then every period from there: its phase in
    vCPU 1's frame is wherever vCPU 0 (on another, dedicated core) happened to be. The analysis
    simulates only phase 0 (step = the frame as the period is None) and says `hi` (4 ms of work, 5 ms
    capacity, one 5 ms window) meets its deadline; released 3 ms into the frame it gets 2 ms, then
    waits for the next frame: about 12 ms, every activation. The tool must refuse the description
    (or not analyse it, or say missed)."""
    text = _system_on(TWO_CORES, "{core: 1}, {core: 0}").replace(
        "{name: hi, period: 10ms, wcet: 1ms, priority: 20}",
        "{name: hi, period: 10ms, wcet: 4ms, capacity: 5ms, priority: 20, core: 1}")
    system, errors = _load(tmp_path, text)
    if errors:
        return  # refused: fine
    report = next(r for r in rta.analyse(system) if r.core == 1)
    hi = report.verdict("hi")
    # What the simulation itself gives at a phase libapex can produce (3 ms into the frame):
    task = rta._Task("hi", 20, 10_000_000, 4_000_000 + rta.JOB_OVERHEAD_NS, 5_000_000)
    supply = rta.CyclicSupply(10_000_000, ((1000, 5_000_000),))
    at_3ms = rta._Simulation([task], supply, 3_000_000, "hi").run()["hi"]
    assert at_3ms > 5_000_000, at_3ms
    assert hi.met is not True and (hi.wcrt is None or hi.wcrt >= at_3ms), (hi, at_3ms)


def test_a_critical_section_on_another_core_blocks(tmp_path):
    """Semaphores are partition-wide (docs/apex.md, Multicore: LOCK_PREEMPTION "does not keep
    processes of other cores away from anything: a semaphore does"; sem.c, one kernel lock). `lo`,
    bound to vCPU 1, declares a 4 ms critical section; `hi` on vCPU 0 waits for it if it takes the
    same semaphore. _blockers() looks at hi's own core only, so hi is charged nothing and is `met`
    with 1.003 ms against a 2 ms capacity, where a wait for lo's section alone is 4 ms (more if a
    process above lo on vCPU 1 preempts it meanwhile, which no priority on core 0 bounds)."""
    text = _system_on("    - {core: 1, policy: dedicated}\n    - {core: 2, policy: dedicated}",
                      "{core: 1}, {core: 2}")
    text = text.replace("{name: hi, period: 10ms, wcet: 1ms, priority: 20}",
                        "{name: hi, period: 10ms, wcet: 1ms, capacity: 2ms, priority: 20}").replace(
        "{name: lo, period: 20ms, wcet: 2ms, priority: 10}",
        "{name: lo, period: 20ms, wcet: 5ms, priority: 10, core: 1, critical: 4ms}")
    system, errors = _load(tmp_path, text)
    assert not errors, errors
    hi = next(r for r in rta.analyse(system) if r.core == 0).verdict("hi")
    assert hi.met is not True and (hi.wcrt is None or hi.wcrt >= 1_003_000 + 4_000_000), hi


def test_a_long_period_does_not_hang_the_analysis(tmp_path):
    """A period of 10^6 s (libapex takes up to 2^62 ns) is one activation a hyperperiod, below
    MAX_ACTIVATIONS, but the simulation walks every window of every 1 ms frame of it (10^9 frames):
    `bulkhead analyse` never ends. It must answer (refuse, or not analyse) within a few seconds."""
    cyclic = ("    - {core: 0, policy: cyclic}\n  plans:\n    - name: p\n      major_frame: 1ms\n"
              "      slots:\n        - {core: 0, start: 0ms, duration: 500us, vcpu: app}\n")
    text = _system_on(cyclic, "{core: 0}").replace(
        "period: 10ms, wcet: 1ms", "period: 1000000s, wcet: 100us").replace("period: 20ms, wcet: 2ms",
                                                                            "period: 1000000s, wcet: 200us")
    (tmp_path / "s.yaml").write_text(text)
    try:
        done = subprocess.run([sys.executable, "-c", "import sys; from bulkhead import config, rta; "
                               "print(rta.describe(rta.analyse(config.load(sys.argv[1], images=False))))",
                               str(tmp_path / "s.yaml")], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("bulkhead analyse still running after 30 s") from None
    assert done.returncode == 0, done.stderr


def test_a_one_nanosecond_partition_period_does_not_hang_the_analysis(tmp_path):
    """apex.period 1ns divides the 10 ms frame, so it is accepted (libapex takes it: every instant is
    a partition period start); the simulation then starts from each of its 10^7 starts in the frame
    (_simulated_wcrt's phases) and never ends. Refuse it, or bound the phases."""
    cyclic = ("    - {core: 0, policy: cyclic}\n  plans:\n    - name: p\n      major_frame: 10ms\n"
              "      slots:\n        - {core: 0, start: 0ms, duration: 5ms, vcpu: app}\n")
    text = _system_on(cyclic, "{core: 0}").replace("apex:\n", "apex:\n      period: 1ns\n")
    (tmp_path / "s.yaml").write_text(text)
    try:
        done = subprocess.run([sys.executable, "-c", "import sys; from bulkhead import config, rta; "
                               "s, e = config.check(sys.argv[1], images=False); "
                               "e or print(rta.describe(rta.analyse(s)))",
                               str(tmp_path / "s.yaml")], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        raise AssertionError("bulkhead analyse still running after 30 s") from None
    assert done.returncode == 0, done.stderr


def test_apex_vcpus_on_one_core_are_refused(tmp_path):
    """libapex halts a partition two of whose vCPUs share a physical core (partition.c,
    check_own_core: "vCPUs 0 and 1 share core 0; give each its own core"), yet the tool accepts
    the description and `bulkhead analyse` gives its processes verdicts (met)."""
    cyclic = ("    - {core: 0, policy: cyclic}\n  plans:\n    - name: p\n      major_frame: 10ms\n"
              "      slots:\n        - {core: 0, start: 0ms, duration: 5ms, vcpu: app.0}\n"
              "        - {core: 0, start: 5ms, duration: 5ms, vcpu: app.1}\n")
    text = _system_on(cyclic, "{core: 0}, {core: 0}").replace(
        "{name: lo, period: 20ms, wcet: 2ms, priority: 10}", "{name: lo, period: 20ms, wcet: 2ms, priority: 10, core: 1}")
    system, errors = _load(tmp_path, text)
    assert any("core" in e and "apex" in e.lower() for e in errors), (errors, rta.describe(rta.analyse(system)))


def test_many_processes_under_the_activation_bound_do_not_hang_the_analysis(tmp_path):
    """MAX_ACTIVATIONS bounds one simulation (per phase and hyperperiod), but _verdict runs one for
    each process and each partition period start in the frame: 30 processes of 1 ms and one of
    999 ms in a 10 ms frame with a 1 ms partition period (about 300 000 activations a hyperperiod,
    accepted) is 31 x 10 full simulations; 9 such processes already take over a minute, 30 about a
    quarter of an hour. It must answer within a minute."""
    cyclic = ("    - {core: 0, policy: cyclic}\n  plans:\n    - name: p\n      major_frame: 10ms\n"
              "      slots:\n        - {core: 0, start: 0ms, duration: 5ms, vcpu: app}\n")
    procs = "".join(f"        - {{name: p{i}, period: 1ms, wcet: 1us, priority: {10 + i}}}\n" for i in range(30))
    procs += "        - {name: q, period: 999ms, wcet: 1us, priority: 5}\n"
    text = _system_on(cyclic, "{core: 0}").replace("apex:\n", "apex:\n      period: 1ms\n")
    text = text.replace("        - {name: hi, period: 10ms, wcet: 1ms, priority: 20}\n"
                        "        - {name: lo, period: 20ms, wcet: 2ms, priority: 10}\n", procs)
    text = text.replace("stack_total: 8K", "stack_total: 128K")
    (tmp_path / "s.yaml").write_text(text)
    try:
        done = subprocess.run([sys.executable, "-c", "import sys; from bulkhead import config, rta; "
                               "s, e = config.check(sys.argv[1], images=False); "
                               "print(e or rta.describe(rta.analyse(s)))",
                               str(tmp_path / "s.yaml")], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("bulkhead analyse still running after 60 s") from None
    assert done.returncode == 0 and "p29" in done.stdout, (done.stdout[-2000:], done.stderr)
