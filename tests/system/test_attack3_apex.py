"""Attack review 3: a hostile APEX application against libapex's services
(partitions/tests/apexatk3, configs/apex_atk3.yaml): time sums at the edge of what the services
accept, SUSPEND of the process that holds the preemption lock, messages that run into an
unmapped page, bad pointers and bad arguments. Each test's verdict is checked on its own; the
partition must go IDLE at the end (never hang)."""

import pytest

from harness import run_system

TESTS = (
    "atk3_delayed_start_with_the_longest_delay_and_capacity_keeps_the_timers",
    "atk3_periodic_wait_with_the_longest_period_keeps_the_timers",
    "atk3_suspend_of_the_preemption_lock_holder_leaves_no_lock_behind",
    "atk3_display_of_a_message_into_a_guard_page_leaves_the_board_as_it_was",
    "atk3_raise_with_a_message_into_a_guard_page_queues_only_the_fault",
    "atk3_send_from_a_guard_page_to_a_waiting_receiver_faults_the_sender_only",
    "atk3_lock_preemption_with_a_read_only_level_drops_the_lock",
    "atk3_bad_arguments_get_their_return_codes",
    "atk3_services_from_an_interrupt_handler_do_not_act_for_the_interrupted_process",
    "atk3_null_pointers_to_services_are_the_callers_memory_violation",
)

_run = None


def the_run():
    global _run
    if _run is None:
        _run = run_system("apex_atk3.yaml", icount=True, timeout=60,
                          until=lambda r: r.index(r"\[bulkhead\] partition apexatk3 halted") >= 0
                          and r.index(r"\[bulkhead\] partition apexatk3far halted") >= 0)
    return _run


def tail(run):
    return "\n".join(run.lines[-40:])


@pytest.mark.parametrize("name", TESTS)
def test_attack3_apex(name):
    run = the_run()
    verdict = run.verdicts().get(("apexatk3", name))
    assert verdict is not None, f"{name}: no verdict\n" + tail(run)
    assert verdict[0] == "PASS", verdict


def test_attack3_apex_partition_goes_idle():
    run = the_run()
    assert not run.timed_out, "the partition never went IDLE\n" + tail(run)


def test_attack3_apex_propagated_fault_in_a_service_is_the_callers():
    """With memory_violation: propagate, a process hands SEND_BUFFER a message outside its
    partition while a higher-priority receiver waits. Stage 1 mapping every GiB, the copy's loads
    were stage-2 faults the hypervisor skipped: the receiver got a message of skipped loads with
    NO_ERROR and, BH_VIRQ_HM taken after the switch to it, the blame; the sender went on. Stage 1
    now maps only the partition's areas (bh_memory_map, written by the tool): the sender faults
    at EL1 before anything is copied."""
    run = the_run()
    name = "atk3_send_from_outside_the_partition_is_the_senders_error"
    verdict = run.verdicts().get(("apexatk3far", name))
    assert verdict is not None, f"{name}: no verdict\n" + tail(run)
    assert verdict[0] == "PASS", verdict
