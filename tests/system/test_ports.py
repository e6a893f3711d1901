"""System tests of inter-partition communication: sampling and queuing ports, shared memory with
doorbells, isolation (configs/ports.yaml), and a flooded queuing port (configs/ports_flood.yaml).
Both run under -icount shift=0: the sampling validity test times the refresh period exactly."""

from harness import run_system

HM = r"\[bulkhead\] HM: partition intruder \(id 3\) vcpu 0: memory_violation at {addr} \(write"


def passed(run, part, name):
    verdict = run.verdicts().get((part, name))
    assert verdict is not None, f"no verdict {part}/{name} in the console"
    assert verdict[0] == "PASS", f"{part}/{name}: {verdict[1]}"


def summaries_of(*parts):
    return lambda r: all(r.index(rf"\[{p}\] BHTEST-SUMMARY") >= 0 for p in parts)


def test_ports_semantics_shared_memory_and_isolation():
    run = run_system("ports.yaml", icount=True, timeout=120, until=summaries_of("alpha", "intruder"))
    for name in ("port_info_before_open", "create_checks_every_parameter", "create_opens_once_then_no_action",
                 "descriptors_are_checked", "sampling_overwrites_and_reads_without_consuming",
                 "sampling_validity_expires_after_refresh_period", "queuing_is_fifo_and_never_blocks",
                 "readiness_bitmap", "same_core_echo_through_port_interrupts",
                 "cross_core_echo_through_port_interrupts", "sampling_fan_out_to_two_partitions",
                 "shared_memory_with_doorbells", "doorbell_rules",
                 "receive_wait_same_core_takes_the_message_inside_the_send", "receive_wait_across_cores",
                 "receive_wait_takes_a_queued_message_at_once", "receive_wait_ends_with_an_interrupt",
                 "receive_wait_checks_its_arguments",
                 "post_then_send_fills_the_buffer_and_raises_the_port_interrupt",
                 "post_truncates_to_its_buffer_and_reports_the_length",
                 "post_takes_a_queued_message_at_once", "post_cancelled_is_never_written",
                 "post_checks_its_arguments_and_allows_one_post_per_port",
                 "post_filled_from_another_core"):
        passed(run, "alpha", name)
    assert run.index(r"\[alpha\] BHTEST-SUMMARY 24 passed, 0 failed") >= 0
    for name in ("intruder_cannot_open_ports_of_others", "intruder_cannot_use_regions_it_does_not_map",
                 "intruder_stage2_stops_writes"):
        passed(run, "intruder", name)
    # A read-only mapping and a region it does not map: both stopped at stage 2.
    assert run.index(HM.format(addr="0x50000000") + r".*-> ignore") >= 0
    assert run.index(HM.format(addr="0x44000000") + r".*-> ignore") >= 0
    assert run.count(r"HM: partition (alpha|beta|gamma|delta|epsilon)") == 0
    assert run.count("unexpected virtual interrupt") == 0


def stats(run, part):
    prefix = f"[{part}] BHSTAT "
    return {line[len(prefix):].split()[0]: int(line[len(prefix):].split()[1])
            for line in run.lines if line.startswith(prefix)}


def test_flooded_queue_disturbs_neither_timing_nor_other_ports():
    run = run_system("ports_flood.yaml", icount=True, timeout=300,
                     until=summaries_of("timed", "sink", "flooder"))
    for part, name in (("timed", "flood_timing_kept"), ("timed", "flood_other_ports_work"),
                       ("sink", "flood_unread_interrupts_once"), ("sink", "flood_fifo_intact"),
                       ("sink", "flood_notifications_bounded"), ("flooder", "flood_sender_never_blocked")):
        passed(run, part, name)
    print("BHSTAT", stats(run, "timed"), stats(run, "sink"), stats(run, "flooder"))
