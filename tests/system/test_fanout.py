"""A sampling write to as many destinations as a description may give a channel, each waiting
for the port's interrupt, is one hypervisor path: the checked copy of the message and an
injection (a wake-up and a kick of another core) per destination partition. A neighbour can be
in it when a victim is due, so it must stay within the longest path the lateness bound assumes
(test_lateness.py: 300 ticks, 4800 instructions).

A 4 KiB message from an odd address to 14 partitions took 323 ticks (216 to one, 265 to 7:
about 8 ticks a partition). The tool now bounds the two together (channels.py
DESTINATION_COST: each destination partition beyond the first counts as 256 bytes of the
message; tests/tool/bad/ipc_fan_out.yaml); fan_alone.yaml has the largest message it accepts for
14 partitions, 768 bytes."""

import re

from harness import run_system
from test_lateness import LONGEST_PATH_TICKS


def test_a_sampling_write_to_every_destination_stays_within_the_longest_path():
    run = run_system("fan_alone.yaml", icount=True, timeout=300,
                     until=lambda r: ("writer", "fan_write_done") in r.verdicts())
    assert ("writer", "fan_write_done") in run.verdicts(), "the writer did not finish"
    assert run.index(r"fanwrite: write") < 0, "a write failed"
    m = [re.search(r"BHSTAT fan_write_longest_ticks (\d+) \(768 bytes\)", line) for line in run.lines]
    longest = next(int(x[1]) for x in m if x)
    print(f"BHSTAT fan_alone: longest sampling write {longest} ticks")
    assert longest <= LONGEST_PATH_TICKS, f"a sampling write took {longest} ticks"
