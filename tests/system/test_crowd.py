"""A cyclic core's slot starts, and a fixed-priority core's wake-ups, must not depend on how many
vCPUs the core holds (-icount).

The core decides a fixed lead (SLOT_LEAD_TICKS, 50 ticks = 800 instructions) before each slot
start and waits for the boundary, so slot starts keep their timing to the tick while the
decision fits the lead (about 700 instructions with a few vCPUs). Every decision looks at each
vCPU of the core; crowd_cyclic.yaml puts 31 waiting vCPUs (partitions/tests/idlers) beside
latvictim on one cyclic core, as a description may. Nobody attacks: the victim's slot starts
must be as on a core of its own (lat_cyclic.yaml's quiet window: 11 ticks)."""

from harness import run_system
from test_lateness import victim_windows

QUIET_CYCLIC_TICKS = 11  # test_lateness.py, lat_cyclic.yaml, window quiet


AIMED = r"execaim: \d+ deadlines aimed"


def worst_lateness(config, aimer=False):
    """The victim's worst lateness against the plan in config (and the aiming partition done)."""
    done = [r"\[victim\] BHLATE-DONE"] + ([AIMED] if aimer else [])
    run = run_system(config, icount=True, timeout=300,
                     until=lambda r: all(r.index(p) >= 0 for p in done))
    assert run.index(done[0]) >= 0, "the victim did not finish"
    assert not aimer or run.index(AIMED) >= 0, "the aiming partition did not finish"
    return max(late_max for _, late_max, _, n, _ in victim_windows(run).values() if n)


def test_a_crowd_of_vcpus_on_a_cyclic_core_does_not_delay_its_slot_starts():
    worst = worst_lateness("crowd_cyclic.yaml")
    print(f"BHSTAT crowd_cyclic: slot starts at most {worst} ticks late")
    assert worst <= QUIET_CYCLIC_TICKS + 2, f"slot starts up to {worst} ticks late"


QUIET_TIMER_TICKS = 16  # test_lateness.py, lat_fp.yaml, window quiet


def assert_wake_ups_as_quiet(config, aimer=False):
    worst = worst_lateness(config, aimer)
    print(f"BHSTAT {config.removesuffix('.yaml')}: wake-ups at most {worst} ticks late")
    assert worst <= QUIET_TIMER_TICKS + 8, f"wake-ups up to {worst} ticks late"


def test_a_crowd_of_vcpus_on_a_fixed_priority_core_does_not_delay_its_wake_ups():
    """crowd_fp.yaml: the same crowd below latvictim on a fixed-priority core; its wake-ups must
    come as on a core of its own (lat_fp.yaml's quiet window: 16 ticks). The core leads them by
    more the more vCPUs it holds (sched_set_lead); without that lead they came 480 ticks late."""
    assert_wake_ups_as_quiet("crowd_fp.yaml")


def test_an_execution_clock_deadline_aimed_before_a_wake_up_does_not_take_its_lead():
    """crowd_fp_exec.yaml: the crowd, and a lower vCPU (execaim) that runs while the victim waits
    and sets the deadline of its execution clock 2 to 94 ticks before each of the victim's
    wake-ups. That deadline is not led (the clock reaches it only by running), but the wake-up
    after it must still be: timed by the deadline alone, the decision for the wake-up started
    at it, and a second one after it (its timer re-armed in the past)."""
    assert_wake_ups_as_quiet("crowd_fp_exec.yaml", aimer=True)


def test_a_lower_wake_up_aimed_just_before_a_higher_one_does_not_delay_it():
    """crowd_fp_wake.yaml: the crowd, and a lower vCPU (execaim) that sleeps on its virtual timer
    until 2 to 94 ticks before each of the victim's wake-ups. The decision for its wake-up
    waits for it and enters it; the victim's must not wait for a decision that starts only
    then (its lead already gone)."""
    assert_wake_ups_as_quiet("crowd_fp_wake.yaml", aimer=True)
