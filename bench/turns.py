"""Who ran, emulator turn by emulator turn, while a latvictim sample was late.

    python -m bench.turns IMAGE --victim-elf ELF --cpu N --sample K --late TICKS [--seconds S]

Under -icount shift=0 QEMU 7.2 runs the cores in turn on one host thread, and every instruction
of any core is a nanosecond of virtual time: a sample's lateness is the instructions of all cores
between its due instant and the victim's counter read. This runs IMAGE under QEMU's instruction
log (bench.profile.record), finds the victim's K-th call of `record` on core N (latvictim's
samples are numbered from 0 across its windows: (worst due at - first due) / period for a
window's worst, whose `at` the BHLATE line gives) and prints the turns of the TICKS x 16 + 2000
instructions before it: the core, how many instructions, and the functions they were in
(hypervisor symbols; "guest" for guest code), with the turn in which the sample fell due marked.
A long turn of another core in the hypervisor while the victim's core takes a few hundred
instructions a turn is the emulator's share of the lateness, not the hypervisor's path
(docs/performance.md, "Lock-wait windows and the emulator's turns")."""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.profile import TRACE, Symbols, record  # noqa: E402

TICK_NS = 16  # the 62.5 MHz counter under -icount shift=0
HYPERVISOR_BASE = 0x40080000
LOG_RANGE = "0x40000000..0x400a0000"  # guests (identity mapped) and the hypervisor's text


def executed(log: Path) -> list[tuple[int, int]]:
    """(core, pc) of every instruction in the log, in the order the emulator ran them."""
    found = []
    with log.open() as lines:
        for line in lines:
            m = TRACE.match(line)
            if m:
                found.append((int(m.group(1)), int(m.group(2), 16)))
    return found


def sample_end(run: list[tuple[int, int]], cpu: int, record_pc: int, sample: int) -> int:
    """Index in run of core cpu's sample-th call of record."""
    seen = 0
    for i, (core, pc) in enumerate(run):
        if core == cpu and pc == record_pc:
            if seen == sample:
                return i
            seen += 1
    raise SystemExit(f"turns: core {cpu} called record only {seen} times")


def turns(run: list[tuple[int, int]], symbols: Symbols) -> list[tuple[int, int, collections.Counter]]:
    """Consecutive instructions of one core: (core, count, functions)."""
    found: list[tuple[int, int, collections.Counter]] = []
    for core, group in itertools.groupby(run, key=lambda step: step[0]):
        names = collections.Counter(symbols.name(pc) if pc >= HYPERVISOR_BASE else "guest"
                                    for _, pc in group)
        found.append((core, sum(names.values()), names))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", type=Path)
    parser.add_argument("--victim-elf", type=Path, required=True)
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--sample", type=int, required=True)
    parser.add_argument("--late", type=int, required=True, help="the sample's lateness, in ticks")
    parser.add_argument("--seconds", type=float, default=90.0)
    args = parser.parse_args()
    symbols = Symbols.of([args.image.parent / "bulkhead.elf"])
    record_pc = Symbols.of([args.victim_elf]).address("record")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "exec.log"
        record(args.image, log, args.seconds, LOG_RANGE)
        run = executed(log)
    end = sample_end(run, args.cpu, record_pc, args.sample)
    due = end - args.late * TICK_NS
    start = max(0, due - 2000)
    at = start
    for core, count, names in turns(run[start:end + 1], symbols):
        mark = "  <- due" if at <= due < at + count else ""
        print(f"@{at - start:6d} cpu{core} {count:6d} {dict(names.most_common(5))}{mark}")
        at += count


if __name__ == "__main__":
    main()
