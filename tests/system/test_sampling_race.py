"""A sampling read copies the message its core holds (core/ports.c): on four cores running at once
(no -icount), two source vCPUs writing 4 KiB messages back to back and two sink vCPUs reading
them, every message read is whole and never older than the last one read from the same writer,
and once one was read every read returns a whole message (a sampling channel never empties: a
read that fails or comes short, "never written" included, is a failure too), while each reader
sees 5000 different messages (the writes race with its reads)."""

import re

from harness import run_system

READERS = (("sink", "reader_0_done"), ("sink", "reader_1_done"))


def test_sampling_reads_are_whole_while_two_vcpus_write_without_pause():
    run = run_system("sample_race.yaml", timeout=240,
                     until=lambda r: all(v in r.verdicts() for v in READERS))
    assert run.index(r"samplecheck: (write|no port)") < 0, "a write failed or a port is missing"
    stats = [re.search(r"BHSTAT samplecheck reader (\d): reads (\d+) torn (\d+) stale (\d+) changes (\d+) "
                       r"empty (\d+) short (\d+)", line) for line in run.lines]
    stats = {int(m[1]): tuple(int(x) for x in m.groups()[1:]) for m in stats if m}
    print(f"BHSTAT sample_race: {stats}")
    assert sorted(stats) == [0, 1], "a reader did not finish"
    for reader, (reads, torn, stale, changes, empty, short) in stats.items():
        assert (torn, stale) == (0, 0), f"reader {reader}: {torn} torn and {stale} stale messages"
        assert short == 0, f"reader {reader}: {short} reads failed or came short after a message was read"
        assert changes >= 5000, f"reader {reader}: the message changed only {changes} times in {reads} reads"
    assert all(v in run.verdicts() for v in READERS)
