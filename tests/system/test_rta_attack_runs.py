"""Attack review of `bulkhead analyse` against measurement (partitions/tests/rtaatk, which runs the
process list of its description; each process's behaviour is in its name, see its main.c).

Each test boots a description under -icount shift=0 and checks what the issue asks: "The measured
worst response times must agree with the verdict": measured worst <= analysed WCRT, and no deadline
miss for a process the analysis says meets its deadline."""

import re
from pathlib import Path

from harness import run_system
from bulkhead import rta
from bulkhead.config import load

LINE = re.compile(r"\[rtaatk\] RTAATK process (\w+) completions (\d+) worst_response_ns (\d+) "
                  r"deadline_misses (\d+) handler_misses (\d+)")


def analysed(config: str) -> dict[str, rta.ProcessVerdict]:
    system = load(Path(__file__).parent / "configs" / config, images=False)
    return {v.name: v for report in rta.analyse(system) for v in report.processes if v.period is not None}


def measure(config: str) -> dict[str, dict[str, int]]:
    run = run_system(config, icount=True, timeout=400,
                     until=lambda r: r.index(r"\[rtaatk\] RTAATK done") >= 0)
    assert not run.timed_out, "the reporter never printed its figures"
    assert not [line for line in run.lines if "RTAATK FAIL" in line or "HM: partition rtaatk" in line]
    figures = {}
    for line in run.lines:
        match = LINE.search(line)
        if match:
            name, *numbers = match.groups()
            figures[name] = dict(zip(("completions", "worst", "misses", "handler_misses"), map(int, numbers)))
    return figures


def check(config: str) -> None:
    verdicts, figures = analysed(config), measure(config)
    assert set(figures) == set(verdicts), figures
    bad = []
    for name, v in verdicts.items():
        seen = figures[name]
        print(f"BHSTAT {config} {name}: analysed WCRT {v.wcrt} (deadline {v.deadline}, met {v.met}), measured "
              f"worst {seen['worst']} over {seen['completions']}, {seen['misses']} misses")
        assert seen["completions"] > 0, (name, seen)
        if v.wcrt is not None and seen["worst"] > v.wcrt:
            bad.append(f"{name}: measured {seen['worst']} > analysed {v.wcrt}")
        if v.met and seen["misses"]:
            bad.append(f"{name}: analysed met, {seen['misses']} deadline misses measured")
    assert not bad, bad


def test_lower_priority_releases_interrupt_the_top_process():
    """configs/rtaatk_releases.yaml: hi is charged only its own release; the twenty lower processes'
    releases during its activation (their timer interrupts: hypervisor entry and libapex's release,
    about 1.3 us each, docs/apex.md Measured) are charged to no one."""
    check("rtaatk_releases.yaml")  # (hi is now charged 2 us for each of the twenty: 5043 us, missed)


def test_the_top_process_alone_holds():
    """Baseline (holds): hi alone measures 5000.4 us against 5005 us analysed (its own activation and
    the reporter's timers); the 8 us more of rtaatk_releases.yaml come from the lower processes'
    releases."""
    check("rtaatk_solo.yaml")


def test_a_vcpu_switch_at_each_release_holds():
    """Holds: the top vCPU of a fixed_priority core above a spinner; each release switches vCPUs
    (p0 measures 6.8 us against 8 us of its own activation, 28 us analysed with the nine lower
    processes' timers; the others are analysed missed and do miss)."""
    check("rtaatk_fp.yaml")


def test_priority_inversion_on_a_semaphore():
    """configs/rtaatk_sem.yaml: h waits for l's section while m runs (no inheritance); the analysis
    charges h l's 200 us, m's activation and the timers of m and l (912 us, capacity 912 us);
    measured 900.3 us, no miss."""
    check("rtaatk_sem.yaml")


def test_a_process_on_a_cyclic_vcpu_1_without_a_partition_period():
    """configs/rtaatk_phase.yaml: hi on vCPU 1 (one 5 ms window each 10 ms frame), released where
    NORMAL is set (2.98 ms into a frame: no partition period); the analysis simulates a release at the
    frame start only and says met (4004 us against 5 ms); measured 9062 us, every activation missed.
    tests/tool/test_rta_attack.py has the tool side."""
    check("rtaatk_phase.yaml")  # (the analysis now leaves hi not analysed: no partition period)


def test_the_origin_at_vcpu_0s_first_slot_for_a_process_on_vcpu_1():
    """Holds: configs/rtaatk_origin.yaml (origin 2 ms, partition period 5 ms, vCPU 1 on another
    cyclic core)."""
    check("rtaatk_origin.yaml")


def test_a_semaphore_held_on_another_core():
    """configs/rtaatk_xsem.yaml: hi waits for lo's section on the partition's other vCPU
    (semaphores are partition-wide), which lo's vCPU leaves half done at its slot's end; the
    analysis looks at hi's vCPU only and says met (1004 us against 5 ms).
    tests/tool/test_rta_attack.py has the tool side."""
    check("rtaatk_xsem.yaml")  # (the analysis now leaves hi not analysed: lo's section is on another core)
