"""Sampling channels under more stress than test_sampling_race.py (samplestress, no -icount): a
partition that is source and destination of two channels on all four cores, with two destination
ports on one; best-effort readers moving over every core while writers and fixed-priority readers
sleep now and then, and a system partition cold-restarting writers and readers during the race.
Every message read must be whole and of its full length, never older than the last one read from
its writer on that channel, and the hypervisor must never halt (a write finding no free copy is a
BH_CHECK)."""

import re

import pytest

from harness import run_system

STAT = re.compile(r"BHSTAT samplestress reader (\d+)\.(\d+): reads (\d+) torn (\d+) stale (\d+) changes (\d+)")


def check(run, readers):
    assert run.index(r"check failed|panic|PANIC") < 0, "the hypervisor halted"
    assert run.index(r"samplestress: (TORN|STALE|write|no ports|chaos restart)") < 0, \
        run.lines[run.index(r"samplestress: (TORN|STALE|write|no ports|chaos restart)")]
    stats = [STAT.search(line) for line in run.lines]
    stats = [tuple(int(x) for x in m.groups()) for m in stats if m]
    print(f"BHSTAT samplestress: {stats}")
    for name in readers:
        assert any(k[1] == name and v[0] == "PASS" for k, v in run.verdicts().items()), f"{name} did not pass"


def test_a_partition_writing_and_reading_two_channels_on_four_cores():
    readers = [f"p0_v{v}_done" for v in range(4)]
    run = run_system("sample_stress_mix.yaml", timeout=300,
                     until=lambda r: all(any(k[1] == n for k in r.verdicts()) for n in readers)
                     or r.index("check failed") >= 0)
    check(run, readers)
