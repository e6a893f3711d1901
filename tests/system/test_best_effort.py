"""Best-effort vCPUs (docs/architecture.md, "Best-effort vCPUs").

Timing, under -icount shift=0: on a core of each policy, latvictim measures its lateness against
the plan (a cyclic slot start, a fixed-priority or EDF wake-up on its virtual timer) while two
best-effort vCPUs of bework take all the idle time of that core; the same system without bework
is the reference. The best-effort vCPUs hand the core back BE_LEAD_TICKS before each of its
instants, so the victim's lateness must be the same: the same jitter, and the same lateness to
within the one tick of rounding (16 instructions) by which two paths a few instructions apart may
differ; every sample against the plan, never against a first observation. bework meanwhile checks that its own registers, FP/SIMD
registers and timer interrupts survive the switches.

Migration, without -icount: two of bework's vCPUs can run only by moving between two cyclic cores
that spinners take in turn, the third uses the idle time of a fixed-priority and an EDF core where
fpcheck partitions sleep between checks of the FP/SIMD registers it takes meanwhile.

Life cycle, under -icount: a system partition suspends, resumes, restarts and halts a partition
of best-effort vCPUs while they run, and restarts it once more."""

import re

import pytest

from harness import BUILD, CONFIGS, ROOT, run_system

LATE = re.compile(r"^\[(?P<part>\w+)\] BHLATE (?P<mode>\w+) (?P<window>\w+) max (?P<max>\d+) min (?P<min>\d+) "
                  r"n (?P<n>\d+)(?: at \d+)?$")
BEWORK_TESTS = ("be_registers_kept", "be_vtimer_interrupts", "be_migrated", "be_progress")
WINDOWS = 12


def lateness(run, part="victim"):
    """{window: (max, min, samples)} of one latvictim, in counter ticks."""
    found = {}
    for line in run.lines:
        m = LATE.match(line)
        if m and m["part"] == part:
            found[m["window"]] = (int(m["max"]), int(m["min"]), int(m["n"]))
    return found


def without_bework(config):
    """The same description without the bework partition and its test parameter, written under
    build/ with the image paths made absolute."""
    return without_part(config, "bework")


def without_part(config, part):
    """The same description without the partition part and everything after it (its channels),
    written under build/ with the image paths made absolute."""
    text = (CONFIGS / config).read_text()
    text = text[:text.index(f"  - name: {part}")]
    text = text.replace("name: be_", "name: alone_", 1).replace("../../../build/", f"{ROOT}/build/")
    path = BUILD / "systest" / "generated" / f"alone_{config}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def finished(run, parts):
    return all(run.index(rf"\[{part}\] {done}") >= 0 for part, done in parts)


def assert_as_late_as_quiet(run, label, names=None):
    """Every window of latvictim keeps the lateness against the plan of its quiet window (where the
    attacker sleeps), within a tick; names: the attacker's own names of the windows, in order."""
    worse, quiet_max = later_than_quiet(run, label, names)
    assert not worse, f"slot starts later than in the quiet window ({quiet_max} ticks) under: {worse}"


def later_than_quiet(run, label, names=None):
    """The windows later than the quiet one by more than a tick ({name: lateness}), and the quiet
    window's lateness."""
    measured = lateness(run)
    assert len(measured) == WINDOWS, measured
    quiet_max, quiet_min, _ = measured["quiet"]
    worse = {}
    for i, (window, (late_max, late_min, n)) in enumerate(measured.items()):
        name = names[i] if names else window
        print(f"BHSTAT {label} {name}: lateness max {late_max} min {late_min} ticks ({n} samples), "
              f"quiet max {quiet_max} min {quiet_min}")
        assert n >= 15, f"{name}: only {n} samples"
        if late_max > quiet_max + 1:
            worse[name] = late_max
    return worse, quiet_max


def assert_bework_passes(run):
    verdicts = run.verdicts()
    for name in BEWORK_TESTS:
        assert verdicts.get(("bework", name), ("missing",))[0] == "PASS", (name, verdicts.get(("bework", name)))


@pytest.mark.parametrize("config", ["be_cyclic.yaml", "be_fp.yaml", "be_edf.yaml"])
def test_real_time_instants_keep_their_timing_under_best_effort_load(config):
    alone = run_system(without_bework(config), icount=True, timeout=120,
                       until=lambda r: finished(r, [("victim", "BHLATE-DONE")]))
    loaded = run_system(config, icount=True, timeout=180,
                        until=lambda r: finished(r, [("victim", "BHLATE-DONE"), ("bework", "BEWORK-DONE")]))
    reference, measured = lateness(alone), lateness(loaded)
    assert len(reference) == WINDOWS and len(measured) == WINDOWS, (reference, measured)
    for window, (late_max, late_min, n) in measured.items():
        print(f"BHSTAT {config} {window}: lateness max {late_max} min {late_min} ticks ({n} samples), "
              f"alone max {reference[window][0]} min {reference[window][1]}")
        assert n >= 15, f"{window}: only {n} samples"
    overall = lambda found: (max(v[0] for v in found.values()), min(v[1] for v in found.values()))  # noqa: E731
    (late_max, late_min), (alone_max, alone_min) = overall(measured), overall(reference)
    # The same jitter, and the same lateness to the measurement's resolution: the paths to the
    # instant may differ by a few instructions (a counter tick is 16), which can round either way.
    assert late_max - late_min == alone_max - alone_min, (config, overall(measured), overall(reference))
    assert abs(late_max - alone_max) <= 1, (config, overall(measured), overall(reference))
    if loaded.index(r"\] BHLATE timer ") >= 0:  # a wake-up's path has no phase: every window the same
        assert {v[:2] for v in measured.values()} == {(late_max, late_min)}, measured
    assert_bework_passes(loaded)
    assert loaded.count(r"BESTAT vcpu") == 2


def test_best_effort_vcpus_migrate_with_their_state_beside_every_policy():
    run = run_system("be_migrate.yaml", icount=True, timeout=180,
                     until=lambda r: finished(r, [("bework", "BEWORK-DONE"), ("fp_a", "BHTEST-SUMMARY"),
                                                  ("fp_b", "BHTEST-SUMMARY")]))
    assert_bework_passes(run)
    cores = {int(v): int(m, 16) for v, m in re.findall(r"BESTAT vcpu (\d+) .* cores (0x[0-9a-f]+)", run.log)}
    # vCPUs 0 and 1 could run only by moving between cores 0 and 1; vCPU 2 had cores 2 and 3.
    assert cores[0] == 0x3 and cores[1] == 0x3 and cores[2] & ~0xc == 0 and cores[2], cores
    verdicts = run.verdicts()
    for part in ("fp_a", "fp_b"):
        assert [v for (p, _), v in verdicts.items() if p == part] == [("PASS", "")], verdicts
    # fp_b may overrun its EDF budget while it starts and prints (action ignore); nothing else.
    assert [line for line in run.lines if "HM:" in line and "budget_overrun" not in line] == []


def test_a_partition_of_best_effort_vcpus_is_suspended_resumed_restarted_and_halted():
    run = run_system("be_lifecycle.yaml", icount=True, timeout=120,
                     until=lambda r: finished(r, [("bework", "BEWORK-DONE")]))
    verdicts = run.verdicts()
    manager = {name: v for (part, name), v in verdicts.items() if part == "bemanager"}
    assert len(manager) == 6 and all(v == ("PASS", "") for v in manager.values()), manager
    assert run.count(r"partition bework cold restart #") == 2
    assert_bework_passes(run)
    assert run.count(r"\[bework\] BEWORK-DONE") == 1  # the last incarnation only


BE_CPU = re.compile(r"^\[linux\] BHBE (?P<cpu>cpu\d) user (?P<user>\d+) system (?P<system>\d+) idle (?P<idle>\d+) "
                    r"steal (?P<steal>\d+) other (?P<other>\d+)$")


def test_linux_runs_smp_on_best_effort_vcpus_and_is_told_its_stolen_time():
    """be_linux.yaml under -icount: Linux has CPU 0 on a dedicated core and CPUs 1-3 best-effort on
    three cyclic cores, a quarter of each taken by a spinner. A busy loop on every CPU for a second:
    the best-effort CPUs must run (they have only the spare time), their time must add up to the
    wall time with the rest reported as stolen (SMCCC paravirtualized time), and CPU 0, which never
    waits, must have none stolen. Then Linux routes a passed-through virtio device's interrupt to the
    best-effort CPU 2 and reads the device through it."""
    run = run_system("be_linux.yaml", icount=True, timeout=240,
                     until=lambda r: r.index(r"BHLINUX-BE-DONE") >= 0)
    assert run.index(r"BHLINUX nproc=4$") >= 0
    assert run.index(r"arm-pv: using stolen time PV") >= 0
    start, end = map(float, re.search(r"BHBE wall ([\d.]+) ([\d.]+)", run.log).groups())
    wall = (end - start) * 100  # USER_HZ ticks
    cpus = {m["cpu"]: {k: int(v) for k, v in m.groupdict().items() if k != "cpu"}
            for m in map(BE_CPU.match, run.lines) if m}
    assert sorted(cpus) == ["cpu0", "cpu1", "cpu2", "cpu3"], cpus
    for cpu, t in cpus.items():
        busy = t["user"] + t["system"]
        print(f"BHSTAT be_linux {cpu}: busy {busy} steal {t['steal']} idle {t['idle']} other {t['other']} of {wall:.0f} ticks")
        # Within 30 %: the rest is ticks Linux never took. QEMU's round robin can leave a vCPU the
        # hypervisor runs without one instruction until another core's timer (docs/performance.md,
        # Best-effort vCPUs): its ticks are neither busy, idle nor stolen. Alone on the host the
        # gap was up to 7 % of a CPU's second; with two other QEMU runs on the 2-core host, 25 %.
        assert abs(busy + t["idle"] + t["steal"] + t["other"] - wall) <= 0.3 * wall, (cpu, t, wall)
        if cpu == "cpu0":
            assert t["steal"] == 0 and busy >= 0.9 * wall, t
        else:
            assert busy >= 0.3 * wall and t["steal"] >= 0.1 * wall, (cpu, t, wall)
    # The spinners leave 2.25 cores free (each core a quarter of every frame, one core at a time).
    # What the hypervisor gives the best-effort CPUs is the wall time less their stolen time: it
    # must be most of that (measured 1.90 to 2.10 cores). What Linux counts busy of it follows
    # QEMU's round robin as well (ticks never taken, above): measured 1.45 to 1.81 cores, in two
    # modes that the same build falls into run by run; it must be more than one core's worth
    # (best-effort CPUs running side by side on several cores).
    be = [t for cpu, t in cpus.items() if cpu != "cpu0"]
    given = sum(wall - t["steal"] for t in be)
    be_busy = sum(t["user"] + t["system"] for t in be)
    print(f"BHSTAT be_linux best-effort CPUs: given {given / wall:.2f} cores, busy {be_busy / wall:.2f}")
    assert given >= 1.7 * wall, (given, wall)
    assert be_busy >= 1.2 * wall, (be_busy, wall)
    assert run.index(r"BHBE hwrng 4096 bytes") >= 0
    on_cpu = re.search(r"BHBE irq +\d+: +(\d+) +(\d+) +(\d+) +(\d+) .*virtio0", run.log)
    assert on_cpu and int(on_cpu[3]) > 0, "the device's interrupt reached CPU 2"
    assert not [line for line in run.lines if re.search(r"soft lockup|rcu.*stall|HM:", line)]


# beattack's window order (partitions/tests/beattack/main.c) under latvictim's window names.
BEATTACK_WINDOWS = ("quiet", "port_write_odd", "port_write_aligned", "port_read_odd", "queue_send_odd",
                    "console_max_write") + ("port_write_odd",) * 6


def test_a_hostile_best_effort_vcpu_in_a_long_hypervisor_call_does_not_delay_the_cores_instant():
    """be_attack.yaml under -icount: a best-effort vCPU floods the hypervisor with its longest calls
    (4 KiB port messages to and from odd addresses, 256-byte console writes) in the idle time of a
    cyclic core, so that one is in progress when the core's be_until comes. BE_LEAD_TICKS must cover
    it: in every window the victim's slot starts keep the lateness against the plan they have in
    the quiet window, where the best-effort vCPU sleeps and the core idles as it does with the
    victim alone (test_real_time_instants_keep_their_timing_under_best_effort_load compares those
    two). Before memcpy copied mutually misaligned buffers by words, a 4 KiB message from an odd
    address took about 1300 ticks in one call and made slot starts up to 880 ticks late."""
    run = run_system("be_attack.yaml", icount=True, timeout=180,
                     until=lambda r: finished(r, [("victim", "BHLATE-DONE"), ("beattack", "BEATTACK-DONE")]))
    for window, longest in re.findall(r"BEROUND (\d+) longest (\d+) ticks", run.log):
        print(f"BHSTAT be_attack {BEATTACK_WINDOWS[int(window)]}: longest call {longest} ticks")
    assert_as_late_as_quiet(run, "be_attack", BEATTACK_WINDOWS)


def test_the_hostile_neighbour_as_a_best_effort_vcpu_does_not_delay_the_cores_instant():
    """be_hostile.yaml under -icount: the lateness tests' hostile neighbour (console floods aimed at
    be_until, health-monitor events, traps, SMC, WFI/WFE storms, hypercall floods, interrupts masked
    throughout) on a best-effort vCPU beside latvictim's cyclic slots: every window keeps the
    lateness of the quiet window, where it sleeps."""
    run = run_system("be_hostile.yaml", icount=True, timeout=180,
                     until=lambda r: finished(r, [("victim", "BHLATE-DONE"), ("hostile", "hostile: done")]))
    for line in run.lines:
        if "BHROUND" in line:
            print(line)
    assert_as_late_as_quiet(run, "be_hostile")


def test_stop_requests_lined_up_in_best_effort_vcpus_do_not_delay_the_cores_instant():
    """be_stop.yaml under -icount: two partitions halt their 14 best-effort vCPUs in the middle of a
    victim slot, so that all wait in the queue with a stop request when the slot ends, and the gap
    after it leaves the core's decision about 300 ticks of room before be_until. The decision serves
    the requests of the vCPUs it takes; however many wait, it must not run past be_until into the
    victim's next slot start: every window keeps the lateness of the quiet one. (Serving all 14 in
    one decision ended it about 610 ticks past be_until, and slot starts were up to 291 ticks late.)

    One more run when the first has a late window: the same image under -icount is not the same
    run every time here (QEMU 7.2's round robin meets the host: in some checkouts about 1 run in
    10, in others 1 in 60, with identical images, one slot start of one window was 77 to 157 ticks
    late, at an instant where neither bestop's vCPU 0 acted, 34 000 ticks after its starts).
    The overrun this test is about comes back in every round, so in both runs."""
    for attempt in (1, 2):
        run = run_system("be_stop.yaml", icount=True, timeout=180,
                         until=lambda r: finished(r, [("victim", "BHLATE-DONE"), ("bestop_a", "BESTOP-DONE"),
                                                      ("bestop_b", "BESTOP-DONE")]))
        rounds = re.findall(r"BESTOP rounds (\d+) stops (\d+)", run.log)
        assert len(rounds) == 2 and all(int(stops) >= 7 * 20 for _, stops in rounds), rounds
        worse, quiet_max = later_than_quiet(run, "be_stop window")
        if not worse:
            return
        print(f"BHSTAT be_stop run {attempt}: later than the quiet window ({quiet_max} ticks): {worse}")
    assert not worse, f"slot starts later than in the quiet window ({quiet_max} ticks) in both runs: {worse}"


def test_a_virtual_machines_vcpu_reset_in_the_cores_decision_does_not_delay_the_cores_instant():
    """be_psci.yaml under -icount: two best-effort vCPUs of a firmware guest take turns by PSCI
    CPU_ON/CPU_OFF, each turning itself off just before the core's room for best-effort work ends,
    so that the core's decision resets the other (a virtual machine's vCPU: its redistributor
    state too) in that room. The reset must fit the lead: every window keeps the lateness of the
    quiet one. (It looked at each of the 288 interrupts one by one, about 8000 instructions, and
    slot starts were 58 ticks late instead of 9.)"""
    run = run_system("be_psci.yaml", icount=True, timeout=180,
                     until=lambda r: finished(r, [("victim", "BHLATE-DONE"), ("bepsci", "BP DONE")]))
    turns = re.search(r"BP: turns 0x([0-9a-f]+)", run.log)
    assert turns and int(turns[1], 16) >= 40, turns
    assert_as_late_as_quiet(run, "be_psci window")


def with_test_param(config, name, source, destination):
    """The description with a test parameter (bh_test_param) from partition source to destination,
    written under build/ with the image paths made absolute."""
    text = (CONFIGS / config).read_text().replace("../../../build/", f"{ROOT}/build/")
    text += (f"channels:\n  sampling:\n    - {{name: {name}, source: {source}.{name}, "
             f"destinations: [{destination}.{name}], max_message_size: 1, refresh_period: 1ns}}\n")
    path = BUILD / "systest" / "generated" / f"{name}_{config}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_stop_requests_for_a_lower_partitions_vcpus_do_not_delay_a_fixed_priority_wake_up():
    """req_fp.yaml under -icount: bestop's 7 vCPUs below latvictim on a fixed-priority core, each
    with an unfinished console line; its vCPU 0, on a core of its own, starts them just after a
    wake-up of the victim and halts them all just before a later one, round after round. Their
    stops and starts, and the lines they flush, are bestop's work, served in their own time or the
    core's spare time: the victim's wake-ups are no later than beside the same 7 vCPUs never
    halted, running just after every wake-up (no_halt; a wake-up that finds one of them loaded
    costs the victim the switch back to it). The core served every request at its next exit or
    decision, in whatever time that was: the stops in the victim's idle time just before its
    wake-up, with their lines' drains (not bounded by the victim's virtual timer then), 3080
    ticks late instead of 53; with the drains bounded, about 460 against 137."""
    done = lambda r: finished(r, [("victim", "BHLATE-DONE"), ("bestop", "BESTOP-DONE")])  # noqa: E731
    run = run_system("req_fp.yaml", icount=True, timeout=180, until=done)
    rounds = re.search(r"BESTOP rounds (\d+) stops (\d+)", run.log)
    assert rounds and int(rounds[2]) >= 7 * 15, rounds
    running = lateness(run_system(with_test_param("req_fp.yaml", "no_halt", "bestop", "victim"), icount=True,
                                  timeout=180, until=done))
    worse = {}
    for window, (late_max, late_min, n) in lateness(run).items():
        print(f"BHSTAT req_fp {window}: lateness max {late_max} min {late_min} ticks ({n} samples), "
              f"beside the vCPUs never halted max {running[window][0]}")
        assert n >= 15, f"{window}: only {n} samples"
        if late_max > running[window][0] + 1:
            worse[window] = (late_max, running[window][0])
    assert not worse, f"wake-ups later than beside the vCPUs never halted: {worse}"
