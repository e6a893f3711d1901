"""One trapped write of GICD_ISPENDR makes up to 32 virtual interrupts pending (-icount): a
neighbour can be in that path when a victim is due, so it must stay within the longest path the
lateness bound assumes (test_lateness.py: 300 ticks). gicdstorm, alone on a dedicated core,
times each write by its virtual counter: 251 ticks measured (237 with every SPI routed to its
second CPU, running on another core), the longest emulated access found, below the bound."""

import re

import pytest

from harness import run_system
from test_lateness import LONGEST_PATH_TICKS


@pytest.mark.parametrize("config", ["board_gicdstorm.yaml", "board_gicdstorm2.yaml"])
def test_a_distributor_write_pending_32_interrupts_stays_within_the_longest_path(config):
    run = run_system(config, icount=True, timeout=120,
                     until=lambda r: r.index(r"gicdstorm: done") >= 0)
    m = [re.search(r"gicdstorm: longest ISPENDR write, ticks 0x([0-9a-f]+)", l) for l in run.lines]
    found = [int(x[1], 16) for x in m if x]
    assert found, "gicdstorm did not report"
    print(f"BHSTAT {config}: longest ISPENDR write {found[0]} ticks")
    assert found[0] <= LONGEST_PATH_TICKS, f"an ISPENDR write took {found[0]} ticks"
