"""Where a hypercall buffer lies among a partition's memory areas must not lengthen the call
(-icount). The hypervisor checks every guest buffer against the partition's areas, and a
description may give a partition many (its own, then one per shared-memory region it maps: up
to 64 of those alone): a scan of all of them per page of the buffer, several per call, made a
256-byte console write from the last of 301 areas 3279 ticks long against 845 from the first
(areaprobe alone on a dedicated core: its drain of the line is in both). A neighbour can be in
such a call when a victim is due."""

import re

from harness import run_system


def longest_write(config):
    run = run_system(config, icount=True, timeout=300,
                     until=lambda r: ("probe", "areaprobe_done") in r.verdicts())
    assert ("probe", "areaprobe_done") in run.verdicts(), "areaprobe did not finish"
    assert run.index(r"areaprobe: write") < 0, "a write failed"
    m = [re.search(r"BHSTAT area_write_longest_ticks (\d+)", line) for line in run.lines]
    return next(int(x[1]) for x in m if x)


def test_a_buffer_in_the_last_of_many_areas_costs_what_one_in_the_first_does():
    first, last = longest_write("areas_ram.yaml"), longest_write("areas_last.yaml")
    print(f"BHSTAT areas: console write from the first of 301 areas {first} ticks, from the last {last}")
    assert last <= first + 16, f"from the last area {last} ticks, from the first {first}"
