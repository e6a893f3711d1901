"""A sampling write to as many destinations as a description may give a channel, each waiting
for the port's interrupt, is one hypervisor path: the checked copy of the message and an
injection (a wake-up and a kick of another core) per destination partition. A neighbour can be
in it when a victim is due, so it must stay within the longest path the lateness bound assumes
(test_lateness.py: 300 ticks, 4800 instructions).

A 4 KiB message from an odd address to 14 partitions took 323 ticks (216 to one, 265 to 7:
about 8 ticks a partition), and 3328 bytes to 63 ports in each of 4 partitions 438 (about 0.9
ticks a port). The tool now bounds them together (channels.py fan_out_cost: each destination
partition beyond the first counts as 256 bytes of the message, each further port of a partition
as 32; tests/tool/bad/ipc_fan_out.yaml). fan_alone.yaml has the largest message it accepts for
14 partitions (768 bytes), fan_ports.yaml for 20 ports in each of 4 (896)."""

import re

import pytest

from harness import run_system
from test_lateness import LONGEST_PATH_TICKS


@pytest.mark.parametrize("config, size", [("fan_alone.yaml", 768), ("fan_ports.yaml", 896)])
def test_a_sampling_write_to_every_destination_stays_within_the_longest_path(config, size):
    run = run_system(config, icount=True, timeout=300,
                     until=lambda r: ("writer", "fan_write_done") in r.verdicts())
    assert ("writer", "fan_write_done") in run.verdicts(), "the writer did not finish"
    assert run.index(r"fanwrite: write") < 0, "a write failed"
    m = [re.search(rf"BHSTAT fan_write_longest_ticks (\d+) \({size} bytes\)", line) for line in run.lines]
    longest = next(int(x[1]) for x in m if x)
    print(f"BHSTAT {config}: longest sampling write {longest} ticks")
    assert longest <= LONGEST_PATH_TICKS, f"a sampling write took {longest} ticks"
