"""System tests of the foundation: boot on 4 cores, isolation, hypercalls, health monitor."""

from harness import check_stage2_pool, run_system

HM = r"\[bulkhead\] HM: partition {part} \(id {pid}\) vcpu 0: {event} at {addr} \({detail}"


def passed(run, part, name):
    verdict = run.verdicts().get((part, name))
    assert verdict is not None, f"no verdict {part}/{name} in the console"
    assert verdict[0] == "PASS", f"{part}/{name}: {verdict[1]}"


def test_partitions_run_on_all_four_cores():
    names = [(f"p{i}", f"hello_p{i}") for i in range(4)]
    run = run_system("four_cores.yaml", until=lambda r: all(n in r.verdicts() for n in names))
    for part, name in names:
        passed(run, part, name)
    for i in range(4):
        assert run.index(rf"partition p{i} \(id {i}\) vcpu 0 on core {i}") >= 0
    check_stage2_pool("four_cores.yaml", run.log)


def test_partition_with_two_vcpus_on_two_cores():
    wanted = [("duo", "hello_p0"), ("duo", "hello_p0_v1"), ("solo", "hello_p1")]
    run = run_system("smp.yaml", until=lambda r: all(n in r.verdicts() for n in wanted))
    for part, name in wanted:
        passed(run, part, name)


def test_hypercalls_with_wild_arguments_return_error_codes():
    # Under -icount: the timer tests count expiries in a few ms of guest time, which on a
    # loaded host would otherwise include whole periods the emulator did not run.
    run = run_system("hypercalls.yaml", icount=True,
                     until=lambda r: r.index("BHTEST-SUMMARY") >= 0)
    verdicts = run.verdicts()
    assert len(verdicts) >= 10, "hctest reported too few tests"
    failed = {k: v for k, v in verdicts.items() if v[0] != "PASS"}
    assert not failed
    assert run.index(r"\[hctest\] BHTEST-SUMMARY \d+ passed, 0 failed") >= 0


def test_write_into_another_partition_halts_the_writer_only():
    run = run_system("isolation_other.yaml")
    assert run.exited and run.returncode == 0, "the victim should end the run with halt_system"
    hm = run.index(HM.format(part="attacker", pid=1, event="memory_violation",
                             addr="0x42400000", detail="write") + r".*-> halt_partition")
    assert hm >= 0
    assert run.index(r"partition attacker halted") > hm
    assert run.count(r"\[attacker\] BHTEST attack_other_continued") == 0
    passed(run, "victim", "victim_memory_intact")
    passed(run, "victim", "victim_ran_50_ticks")
    assert run.index(r"\[victim\] tick 50") > hm, "the victim kept running after the fault"


def test_ignored_violation_is_logged_and_skipped():
    run = run_system("isolation_ignore.yaml")
    assert run.exited and run.returncode == 0
    events = run.count(HM.format(part="attacker", pid=1, event="memory_violation",
                                 addr="0x42400000", detail="write") + r".*-> ignore")
    assert events >= 2
    passed(run, "attacker", "attack_other_continued")
    passed(run, "victim", "victim_memory_intact")


def test_write_into_hypervisor_memory_cold_restarts_the_writer():
    run = run_system("isolation_hyp.yaml")
    assert run.exited and run.returncode == 0
    hm = run.index(HM.format(part="attacker", pid=1, event="memory_violation",
                             addr="0x40080000", detail="write") + r".*-> cold_restart")
    assert hm >= 0
    assert run.index(r"partition attacker cold restart #1") > hm
    assert run.count(r"\[attacker\] BHTEST attack_hyp_continued") == 0
    passed(run, "victim", "victim_memory_intact")
    passed(run, "victim", "victim_ran_50_ticks")


def test_devices_not_owned_are_unreachable():
    run = run_system("isolation_device.yaml")
    assert run.exited and run.returncode == 0
    for addr in ("0x9000000", "0x8000000", "0xa000000"):
        assert run.index(HM.format(part="attacker", pid=1, event="memory_violation",
                                   addr=addr, detail="write") + r".*-> ignore") >= 0, addr
    passed(run, "attacker", "attack_device_continued")
    passed(run, "victim", "victim_memory_intact")


def test_cold_restart_reruns_from_entry_and_warm_restart_keeps_memory():
    run = run_system("restart.yaml")
    assert run.exited and run.returncode == 0
    for name in ("restart_first_boot", "restart_cold_reloaded", "restart_warm_kept_memory"):
        passed(run, "restarter", name)
    assert run.index(r"partition restarter cold restart #1") >= 0
    assert run.index(r"partition restarter warm restart #2") >= 0


def test_halt_system_ends_qemu():
    run = run_system("halt_system.yaml", timeout=30)
    assert run.exited, "QEMU should exit by itself after halt_system"
    assert run.returncode == 0
    assert run.index(r"\[bulkhead\] system halted by partition halter") >= 0


def test_smc_sysreg_and_undef_are_contained():
    run = run_system("traps.yaml")
    assert run.exited and run.returncode == 0
    assert run.index(HM.format(part="smc", pid=1, event="smc", addr="0x84000008",
                               detail="smc function id") + r".*-> ignore") >= 0
    passed(run, "smc", "smc_contained")
    assert run.index(HM.format(part="sysreg", pid=2, event="trapped_instruction",
                               addr=r"0x[0-9a-f]+", detail=r"mrs S3_3_C9_C12_0")
                     + r".*-> ignore") >= 0
    passed(run, "sysreg", "sysreg_continued")
    # The EL1 physical timer, armed by the hypervisor while it waits for a lock: hidden too.
    for register in ("S3_3_C14_C2_1", "S3_3_C14_C2_2"):  # CNTP_CTL_EL0, CNTP_CVAL_EL0
        assert run.index(HM.format(part="sysreg", pid=2, event="trapped_instruction",
                                   addr=r"0x[0-9a-f]+", detail=rf"mrs {register}")
                         + r".*-> ignore") >= 0, register
    passed(run, "sysreg", "sysreg_timer_continued")
    assert run.index(r"\[undef\] unhandled exception: ESR=0x2") >= 0
    assert run.index(HM.format(part="undef", pid=3, event="partition_error",
                               addr=r"0xe0000000", detail="raised by the partition")
                     + r".*-> halt_partition") >= 0
    passed(run, "victim", "victim_memory_intact")
