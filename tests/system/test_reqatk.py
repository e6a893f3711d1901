"""Attacks on 5e675f8 (requests served in their vCPU's own time or the core's spare time)."""

from __future__ import annotations

from harness import run_system


def test_a_restart_completes_while_one_of_its_vcpus_is_starved_on_its_core():
    """reqatk_restart.yaml: rstwait (vCPU 0 on core 2 alone, vCPU 1 on core 1 below spinner)
    restarts itself; vCPU 0 must come back. Before 5e675f8 it did (the stop was served at core
    1's next exit, in the spinner's time); from 5e675f8 the restart never completed; now it
    counts vCPU 1 at once, as it does not run (partition.c stop_all)."""
    run = run_system("reqatk_restart.yaml", timeout=10,
                     until=lambda r: ("rstwait", "rstwait_back_after_restart") in r.verdicts())
    assert run.index(r"\[rstwait\] rstwait: restarting") >= 0, run.log[-2000:]
    verdict = run.verdicts().get(("rstwait", "rstwait_back_after_restart"))
    assert verdict and verdict[0] == "PASS", f"rstwait never came back: {run.log[-2000:]}"

