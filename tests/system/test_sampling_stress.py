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


def test_best_effort_readers_on_every_core_while_writers_and_readers_are_restarted():
    readers = ["p1_v0_done", "p1_v1_done", "p2_v0_done", "p2_v1_done"]

    def done(r):
        at = r.index(r"chaos done")
        return r.index("check failed") >= 0 or at >= 0 and all(
            any(re.search(rf"BHTEST {n} ", line) for line in r.lines[at:]) for n in readers)
    run = run_system("sample_stress_be.yaml", timeout=400, until=done)
    assert run.index(r"samplestress: chaos done, 60 restarts") >= 0, "chaos did not finish"
    check(run, readers)
    incarnations = {(int(m[1]), int(m[2])) for m in (re.search(r"reader (\d+)\.\d+: .* inc (\d+)", line)
                                                     for line in run.lines) if m}
    assert {p for p, inc in incarnations if inc > 0} >= {1, 2}, "the readers were not restarted"
