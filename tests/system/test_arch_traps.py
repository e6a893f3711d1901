"""Architecture-level behaviour of paravirtual partitions: the SMC Calling Convention by HVC,
and what the trap paths do with registers and accesses a partition must not reach."""

from __future__ import annotations

from harness import run_system

HM = r"\[bulkhead\] HM: partition {part} \(id {pid}\) vcpu 0: {event} at {addr} \({detail}"


def verdicts_pass(run, part, names):
    found = run.verdicts()
    for name in names:
        verdict = found.get((part, name))
        assert verdict is not None, f"no verdict {part}/{name}:\n{run.log}"
        assert verdict[0] == "PASS", f"{part}/{name}: {verdict[1]}"


def test_smccc_by_hvc_and_architectural_traps():
    run = run_system("arch_traps.yaml", timeout=60,
                     until=lambda r: r.count(r"BHTEST-SUMMARY") >= 2 and
                     r.index(r"\[wfestorm\] wfestorm: storming") >= 0)
    verdicts_pass(run, "smccc", ["smccc_version_and_arch_features", "smccc_unknown_functions",
                                 "psci_queries_by_hvc", "psci_cpu_on_and_off_by_hvc"])
    assert run.index(r"\[smccc\] BHTEST-SUMMARY \d+ passed, 0 failed") >= 0, run.log
    assert run.index(r"HM: partition smccc") < 0, "SMCCC by HVC is never a health event"
    assert run.index(r"smccc: CPU_OFF returned") < 0
    verdicts_pass(run, "archprobe", ["ignored_load_pair_reads_zero",
                                     "ignored_load_pair_with_writeback_moves_its_base",
                                     "actlr_el1_traps_and_reads_zero",
                                     "zero_length_reads_ignore_the_pointer"])
    assert run.index(HM.format(part="archprobe", pid=1, event="memory_violation",
                               addr="0x50000000", detail="read") + r".*-> ignore") >= 0
    assert run.index(HM.format(part="archprobe", pid=1, event="trapped_instruction",
                               addr=r"0x[0-9a-f]+", detail="mrs S3_0_C1_C0_1") + r".*-> ignore") >= 0
    # QEMU 7.2 does not implement HCR_EL2.TIDCP: an implementation-defined register of the
    # cortex-a53 reads without a trap (docs/architecture.md, "Registers a partition must not
    # reach"). Should a later QEMU trap it, this line shows it and the docs must change.
    assert run.index(r"archprobe: L2CTLR_EL1 reads 0x") >= 0
    assert run.index(r"trapped_instruction at 0x[0-9a-f]+ \(mrs S3_1_C11_C0_2") < 0
    # archprobe ran all its tests in its slots beside a partition looping on WFE in its own.
    assert run.index(r"\[wfestorm\] wfestorm: storming") >= 0
    assert run.index(r"\[archprobe\] BHTEST-SUMMARY \d+ passed, 0 failed") >= 0, run.log
    assert run.index(r"HM: partition wfestorm") < 0
