"""Life-cycle attacks across cores: what a hostile partition's vCPUs still do in the hypervisor
while another core restarts or halts their partition must not outlive that incarnation."""

from __future__ import annotations

from harness import bhstats as stats, passed, run_system


def test_a_port_opened_by_the_old_incarnation_is_closed_in_the_new_one():
    run = run_system("lifeatk_ports.yaml", timeout=240,
                     until=lambda r: r.index(r"\[stale\] BHTEST-SUMMARY") >= 0)
    print(f"BHSTAT lifeport: {stats(run)}")
    passed(run, "stale", "lifeport_vcpu1_started")
    passed(run, "stale", "lifeport_queue_closed_at_boot")
    passed(run, "stale", "lifeport_sampling_closed_at_boot")
    passed(run, "stale", "lifeport_post_withdrawn_at_restart")


def test_a_halt_is_not_undone_by_a_restart_the_halted_incarnation_asked_for():
    run = run_system("lifeatk_halt.yaml", timeout=300,
                     until=lambda r: r.index(r"\[warden\] BHTEST-SUMMARY") >= 0)
    print(f"BHSTAT lifehalt: {stats(run)}")
    passed(run, "warden", "lifehalt_calls_answered")
    passed(run, "warden", "lifehalt_halt_is_final")
    passed(run, "warden", "lifehalt_suspend_holds")


def test_vcpu_calls_on_a_vcpu_out_of_its_slot_do_not_interrupt_anothers_slot():
    """lifeatk_kick.yaml under -icount: hostile's vCPU 0 suspends and resumes, halts and starts its
    vCPU 1 in a loop; vCPU 1 is pinned to core 2, where gapcount runs the other half of each frame.
    Each call changes vCPU 1 only, which is not gapcount's concern: no kick may reach core 2 in
    gapcount's slot. (Every call kicked core 2 whatever ran there: 9673 of gapcount's short gaps
    were counted as its interruptions. Under -icount its short gaps also count hostile's core's
    instructions, run in turn with core 2's, so the figure is gapcount's kicks.)"""
    run = run_system("lifeatk_kick.yaml", timeout=300, icount=True,
                     until=lambda r: ("gapcount", "gapcount_done") in r.verdicts())
    figures = stats(run)
    print(f"BHSTAT gapcount beside a vCPU-control loop: {figures}")
    assert figures["long_gaps"] >= 199, figures  # its 200 slots, measured
    assert figures["kicks"] == 0, figures
