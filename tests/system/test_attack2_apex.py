"""Attack review 2: a hostile or careless APEX process against libapex's memory protection
(partitions/tests/apexatk2, configs/apex_atk2.yaml). Each test's verdict is checked on its own.
A test may end in its partition being stopped, but only cleanly: with the report that names
its own fault, never by whatever an unnoticed overflow overwrote faulting later, never a hang."""

import pytest

from harness import run_system

MAIN = (
    "atk2_blackboard_reader_with_a_read_only_buffer_cannot_kill_the_writer",
    "atk2_buffer_receiver_with_a_read_only_buffer_cannot_kill_the_sender",
    "atk2_irq_with_sp_inside_the_guard_is_a_stack_overflow",
    "atk2_irq_with_sp_just_above_the_guard_is_a_stack_overflow",
    "atk2_error_handler_stack_overflow_is_clean",
    "atk2_svc_with_a_misaligned_sp_stops_the_process",
    "atk2_interrupt_handler_cannot_overflow_the_kernel_stack_silently",
)
FAR = ("atk2_svc_with_sp_outside_the_partition_stops_the_process",
       "atk2_irq_with_sp_outside_the_partition_stops_the_process")

_run = None


def the_run():
    global _run
    if _run is None:
        _run = run_system("apex_atk2.yaml", icount=True, timeout=60,
                          until=lambda r: r.index(r"\[bulkhead\] partition apexatk2 halted") >= 0
                          and r.index(r"\[bulkhead\] partition apexatk2far halted") >= 0)
    return _run


def tail(run):
    return "\n".join(run.lines[-40:])


@pytest.mark.parametrize("name", MAIN)
def test_attack2_apex(name):
    run = the_run()
    verdict = run.verdicts().get(("apexatk2", name))
    if verdict is None and name == MAIN[-1]:
        # The last: its partition may be stopped for it, but as an overflow of the stack the
        # handler ran on (libbhpart's report of a data abort there).
        assert run.index(r"\[apexatk2\] unhandled exception: ESR=0x9[67]") >= 0, \
            f"{name}: no verdict and no report of the overflow\n" + tail(run)
        return
    assert verdict is not None, f"{name}: no verdict\n" + tail(run)
    assert verdict[0] == "PASS", verdict


@pytest.mark.parametrize("name", FAR)
def test_attack2_apex_sp_outside_the_partition(name):
    """The process must stop (STACK_OVERFLOW or MEMORY_VIOLATION) and the partition go on."""
    run = the_run()
    assert not run.timed_out, "a partition never halted\n" + tail(run)
    verdict = run.verdicts().get(("apexatk2far", name))
    assert verdict is not None, f"{name}: no verdict (the partition was stopped)\n" + tail(run)
    assert verdict[0] == "PASS", verdict


def test_attack2_apex_irq_with_sp_outside_the_partition_stops_only_that_process():
    """The interrupt entry does not check SP, but stage 1 maps only the partition's areas (from
    the description): the frame's stores of a process that set SP outside its partition fault at
    EL1, a stack overflow of that process; no stage-2 fault, and both partitions go on."""
    run = the_run()
    assert run.count(r"\[bulkhead\] HM: partition apexatk2far \(id 1\) vcpu 0: memory_violation") == 0, tail(run)
    assert run.index(r"\[apexatk2far\] BHTEST-SUMMARY \d+ passed, 0 failed") >= 0, tail(run)
    verdicts = run.verdicts()
    assert all(verdicts.get(("apexatk2", n), ("missing",))[0] == "PASS" for n in MAIN[:-1]), tail(run)


def test_attack2_apex_mc_overflow_on_the_second_vcpu():
    run = run_system("apex_atk2_mc.yaml", icount=True, timeout=60,
                     until=lambda r: r.index(r"\[bulkhead\] partition apexatk2mc halted") >= 0)
    assert not run.timed_out, "the partition never went IDLE (a vCPU stuck?)\n" + tail(run)
    verdict = run.verdicts().get(("apexatk2mc", "atk2_mc_overflow_on_the_second_vcpu_is_clean"))
    assert verdict is not None and verdict[0] == "PASS", (verdict, tail(run))


def test_attack2_apex_init_overflow_is_found():
    """The initialization (main, on libbhpart's vCPU stack) overflows its stack with one large
    frame: it must be found at the access (libbhpart's report, the partition stopped), not go
    on silently into vCPU 1's stack below it."""
    run = run_system("apex_atk2_init.yaml", icount=True, timeout=60,
                     until=lambda r: r.index(r"\[bulkhead\] partition apexatk2init halted") >= 0)
    verdict = run.verdicts().get(("apexatk2init", "atk2_init_overflow_was_found"))
    assert verdict is None or verdict[0] == "PASS", (verdict, tail(run))
    assert run.index(r"\[apexatk2init\] unhandled exception: ESR=0x9[67]") >= 0, tail(run)


def test_attack2_stage1_walk_out_of_the_partition_is_refused():
    """A hypercall buffer whose stage-1 walk (the partition's own tables) leaves the partition's
    stage 2: the hypervisor refuses it and goes on."""
    run = run_system("s1walk.yaml", timeout=30,
                     until=lambda r: r.index(r"\[bulkhead\] partition s1walk halted") >= 0)
    assert not run.timed_out, tail(run)
    assert run.index(r"\[s1walk\] s1walk: console write from the bad walk: -") >= 0, tail(run)
    assert run.index(r"\[s1walk\] s1walk: hm status into the bad walk: -") >= 0, tail(run)
    assert run.index(r"\[s1walk\] s1walk: hm status into a good buffer: 0$") >= 0, tail(run)
    assert run.index(r"panic|PANIC") < 0, tail(run)
