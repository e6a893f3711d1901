"""Attack review 2: a hostile or careless APEX process against libapex's memory protection
(partitions/tests/apexatk2, configs/apex_atk2.yaml). Each test's verdict is checked on its own:
the last ones may stop the partition, which must then say so (a health-monitor line), never
hang silently."""

import pytest

from harness import run_system

TESTS = (
    "atk2_blackboard_reader_with_a_read_only_buffer_cannot_kill_the_writer",
    "atk2_buffer_receiver_with_a_read_only_buffer_cannot_kill_the_sender",
    "atk2_irq_with_sp_inside_the_guard_is_a_stack_overflow",
    "atk2_irq_with_sp_just_above_the_guard_is_a_stack_overflow",
    "atk2_error_handler_stack_overflow_is_clean",
    "atk2_svc_with_sp_outside_the_partition_stops_the_process",
    "atk2_interrupt_handler_cannot_overflow_the_kernel_stack_silently",
)

_run = None


def the_run():
    global _run
    if _run is None:
        _run = run_system("apex_atk2.yaml", icount=True, timeout=60,
                          until=lambda r: r.index(r"\[bulkhead\] partition apexatk2 halted") >= 0)
    return _run


@pytest.mark.parametrize("name", TESTS)
def test_attack2_apex(name):
    run = the_run()
    verdicts = run.verdicts()
    verdict = verdicts.get(("apexatk2", name))
    if verdict is None and name == TESTS[-1]:
        # The last: the partition may be stopped for it, but as an overflow of the stack the
        # handler ran on (libbhpart's report of the fault there), not by whatever the
        # overflow overwrote faulting later.
        assert run.index(r"\[apexatk2\] unhandled exception: ESR=0x9[67]") >= 0, \
            f"{name}: no verdict and no report of the overflow\n" + "\n".join(run.lines[-40:])
        return
    if verdict is None:
        # Never reported: acceptable only if the partition was stopped cleanly, with a line.
        assert run.index(r"\[bulkhead\] HM: partition apexatk2") >= 0 and \
            run.index(r"\[bulkhead\] partition apexatk2 (halted|stopped)") >= 0, \
            f"{name}: no verdict and no clean stop\n" + "\n".join(run.lines[-40:])
        return
    assert verdict[0] == "PASS", verdict
