"""An EDF vCPU that its own partition halts and starts over and over (BH_HC_VCPU_CTL) must not
get a fresh budget, and a deadline a period from now, at every start: it would then hold the
core far beyond its budget per period (the utilization the tool checked), with deadlines
earlier than its neighbour's, and the neighbour would miss its own (configs/edf_reset.yaml)."""

import re

from harness import run_system

SHARE = re.compile(r"edfreset: vCPU 1 ran (\d+) us of the last (\d+) us")
BUDGET_SHARE = 0.5  # 1 ms every 2 ms (configs/edf_reset.yaml)


def test_an_edf_vcpu_restarted_at_will_does_not_get_its_budget_back():
    run = run_system("edf_reset.yaml", icount=True, timeout=300,
                     until=lambda r: r.index(r"BHTEST edf_p2_no_miss") >= 0)
    assert run.index(r"BHTEST edf_p2_no_miss") >= 0, "edf20 did not report"
    assert run.index(r"BHTEST edf_p2_no_miss PASS") >= 0, "edf20 missed deadlines"
    shares = [int(m[1]) / int(m[2]) for m in map(SHARE.search, run.lines) if m]
    assert len(shares) >= 2, "edfreset did not report"
    print(f"BHSTAT edf_reset: vCPU 1's share of its core {', '.join(f'{s:.2f}' for s in shares)}")
    # Measured before each halt: a little less than it ran, never more.
    assert max(shares) <= BUDGET_SHARE, f"the restarted vCPU ran beyond its budget: {shares}"
