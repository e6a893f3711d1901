"""The health monitor under a storm and its new actions (partitions/tests/hmtest, configs/hm.yaml):
counts are exact, the log keeps the newest entries and counts the rest, printing is rate-limited
with a summary, and suspend, warm_restart and propagate do what docs/configuration.md says."""

from harness import run_system

HM_LINE = r"\[bulkhead\] HM: partition hmsys \(id 0\) vcpu 0: partition_error"


def test_hm_storm_counts_log_actions():
    wanted = [("hmsys", "hm_suspend_and_warm_restart_actions"),
              ("hmuser", "hm_propagate_reaches_the_handler")]
    run = run_system("hm.yaml", timeout=120,
                     until=lambda r: r.index(r"\[hmsys\] BHTEST-SUMMARY") >= 0
                     and r.index(r"\[hmwarm\] hmtest: boot kind 2") >= 0)  # it boots beside hmsys's end
    verdicts = run.verdicts()
    for key in [("hmsys", "hm_storm_counts_exact_and_log_keeps_the_newest"),
                ("hmsys", "hm_read_checks_its_buffer"),
                ("hmuser", "hm_read_refused_to_a_normal_partition"),
                ("hmuser", "hm_status_of_another_refused"), *wanted]:
        assert verdicts.get(key, ("missing",))[0] == "PASS", (key, verdicts.get(key))
    # 1000 events, 5 lines: the rest are counted, not printed (the summary comes with the
    # partition's next window, a second later: see docs/architecture.md).
    assert run.count(HM_LINE) == 5
    assert run.index(r"BHSTAT hm_storm_events 1000 log_read 64 log_lost 936") >= 0
    # The actions, each logged once.
    assert run.index(r"HM: partition hmsusp \(id 2\) vcpu 0: smc .* -> suspend") >= 0
    assert run.index(r"\[hmsusp\] hmtest: resumed") < 0
    assert run.index(r"HM: partition hmwarm \(id 3\) vcpu 0: trapped_instruction .* -> warm_restart") >= 0
    assert run.index(r"\[hmwarm\] hmtest: boot kind 2, restarts 1") >= 0
    assert run.index(r"HM: partition hmuser \(id 1\) vcpu 0: memory_violation at 0x80000000 .* -> propagate") >= 0
    assert run.index(r"HM: partition hmuser .* -> propagate not handled: halt_partition") >= 0
    assert run.index(r"\[hmuser\] hmtest: still running") < 0


def test_monitor_takes_console_input_without_an_unexpected_interrupt():
    """Typed bytes raise BH_VIRQ_CONSOLE (17) in the monitor, which now handles it: before,
    its library reported "unexpected virtual interrupt 17"."""
    from harness import Console
    with Console.boot("hm_monitor.yaml") as con:
        con.expect(r"\[monitor\] monitor: started", 30)
        con.expect(r"console input goes to monitor", 30)
        con.send("status\r")
        con.expect(r"\[monitor\] > status", 30)
        con.expect(r"\[monitor\]   partition 0: running", 30)
        assert "unexpected virtual interrupt" not in con.text
