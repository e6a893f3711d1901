"""bench/profile.py: paths through QEMU's -d exec log and their breakdown by function."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.profile import Symbols, breakdown, paths, paths_before  # noqa: E402
from bench.turns import HYPERVISOR_BASE, sample_end, turns  # noqa: E402


def log(*entries):
    return [f"Trace {cpu}: 0x7f0000001000 [00000000/{pc:016x}/00000061/ff020201] " for cpu, pc in entries]


SYMS = Symbols([(0x1000, "vector"), (0x1100, "handler"), (0x2000, "guest")])


def test_paths_run_from_start_to_stop_on_one_core():
    lines = log((1, 0x2000), (1, 0x1000), (0, 0x1000), (1, 0x1104), (0, 0x1108), (1, 0x1108),
                (1, 0x2004), (1, 0x1000), (1, 0x1104), (1, 0x2004))
    found = paths(lines, cpu=1, start=0x1000, stop=0x2004)
    assert found == [[0x1000, 0x1104, 0x1108], [0x1000, 0x1104]]   # core 0's lines ignored
    assert paths(lines, cpu=1, start=0x1000, stop=None) == [[0x1000, 0x1104, 0x1108, 0x2004]]


def test_paths_before_are_the_last_instructions_of_one_core_before_each_stop():
    lines = log((1, 0x1000), (1, 0x1104), (0, 0x1108), (1, 0x2004), (1, 0x1100), (1, 0x1104),
                (1, 0x1108), (1, 0x2004))
    assert paths_before(lines, cpu=1, stop=0x2004, count=2) == [
        [0x1000, 0x1104], [0x1104, 0x1108]]   # core 0's line ignored
    assert paths_before(lines, cpu=1, stop=0x2004, count=8)[0] == [0x1000, 0x1104]


def test_breakdown_names_consecutive_runs_and_addresses():
    assert breakdown([0x1000, 0x1004, 0x1100, 0x1104, 0x1008], SYMS) == [
        ("vector", 2), ("handler", 2), ("vector", 1)]
    assert SYMS.address("handler") == 0x1100 and SYMS.address("0x2000") == 0x2000
    assert SYMS.name(0x0fff) == "?"


def test_turns_group_each_cores_consecutive_instructions_and_name_guest_code():
    syms = Symbols([(HYPERVISOR_BASE, "decide"), (HYPERVISOR_BASE + 0x100, "memcpy")])
    run = [(1, 0x2000), (1, 0x2004), (2, HYPERVISOR_BASE + 0x100), (2, HYPERVISOR_BASE + 0x104),
           (2, HYPERVISOR_BASE), (1, HYPERVISOR_BASE), (1, 0x2000)]
    found = [(core, count, dict(names)) for core, count, names in turns(run, syms)]
    assert found == [(1, 2, {"guest": 2}), (2, 3, {"memcpy": 2, "decide": 1}),
                     (1, 2, {"decide": 1, "guest": 1})]
    assert sample_end(run, cpu=1, record_pc=0x2000, sample=0) == 0
    assert sample_end(run, cpu=1, record_pc=0x2000, sample=1) == 6   # core 1's second call
