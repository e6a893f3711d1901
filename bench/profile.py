"""Instruction profile of a hypervisor path, for finding where a benchmark's cycles go.

    python -m bench.profile IMAGE --elf ELF [--elf ELF ...] (--start SYM|ADDR | --back N)
                            --stop SYM|ADDR [--cpu N] [--pick K] [--seconds S] [--filter LO..HI]

Boots IMAGE (a packed Bulkhead image, with the qemu.cmd `bulkhead build` wrote beside it) under `-icount shift=0` with one instruction per
translation block and QEMU's `-d exec` log, so the log lists every instruction each core
executes. A path starts where core N executes START and ends at its next STOP (or, with
`--stop next`, at its next START). The lengths of the paths found are printed, then path K
broken down by function (symbols from the ELFs), in order and as totals. `--filter` restricts
the log to an address range (QEMU's -dfilter), which keeps long runs small; a path's ends must
lie inside it. Under -icount the counts are the "cycles" of bench/results.json.

With `--back N` instead of `--start`, a path is the N instructions core N executed before each
STOP: what held a core just before a point, e.g. what a lateness victim waited for. latvictim's
BHLATE line gives the instant its worst sample was due (at); under -icount the run is the same
every time, so `--stop record --pick (at - first due) / period`, with its ELF given, shows the
instructions before that sample's counter read (from the instant it was due: lateness x 16).
Guest ELFs share addresses: a guest address is named after the first ELF that has a symbol
there.
"""

from __future__ import annotations

import argparse
import bisect
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter, deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools" / "src"))

from bulkhead.qemu import ICOUNT_ARGS, ICOUNT_MACHINE_OPTION  # noqa: E402

TRACE = re.compile(r"Trace (\d+): \S+ \[[0-9a-f]+/([0-9a-f]+)/")


class Symbols:
    """Function symbols of ELF files, for naming addresses."""

    def __init__(self, entries: list[tuple[int, str]]):
        self.entries = sorted(entries)
        self.addresses = [a for a, _ in self.entries]

    @classmethod
    def of(cls, elfs: list[Path]) -> Symbols:
        entries = []
        for elf in elfs:
            out = subprocess.run(["aarch64-linux-gnu-nm", "-n", str(elf)], capture_output=True,
                                 text=True, check=True).stdout
            for line in out.splitlines():
                fields = line.split()
                if len(fields) == 3 and fields[1] in "tTwW":
                    entries.append((int(fields[0], 16), fields[2]))
        return cls(entries)

    def name(self, address: int) -> str:
        i = bisect.bisect_right(self.addresses, address) - 1
        return self.entries[i][1] if i >= 0 else "?"

    def address(self, text: str) -> int:
        if text.startswith("0x"):
            return int(text, 16)
        found = [a for a, n in self.entries if n == text]
        if not found:
            raise SystemExit(f"profile: no symbol '{text}' in the ELF files given")
        return found[0]


def paths(lines, cpu: int, start: int, stop: int | None, limit: int = 100000) -> list[list[int]]:
    """Address sequences of `cpu` from each `start` (included) to the next `stop` (excluded;
    stop None: to the next start); a path longer than `limit` is dropped."""
    found, current = [], None
    for line in lines:
        m = TRACE.match(line)
        if not m or int(m.group(1)) != cpu:
            continue
        pc = int(m.group(2), 16)
        if current is not None:
            if pc == (start if stop is None else stop):
                found.append(current)
                current = [pc] if stop is None else None
                continue
            current.append(pc)
            if len(current) > limit:
                current = None
        elif pc == start:
            current = [pc]
    return found


def paths_before(lines, cpu: int, stop: int, count: int) -> list[list[int]]:
    """The last `count` addresses `cpu` executed before each `stop` (excluded), one list each."""
    found, last = [], deque(maxlen=count)
    for line in lines:
        m = TRACE.match(line)
        if not m or int(m.group(1)) != cpu:
            continue
        pc = int(m.group(2), 16)
        if pc == stop:
            found.append(list(last))
        last.append(pc)
    return found


def breakdown(path: list[int], symbols: Symbols) -> list[tuple[str, int]]:
    """Consecutive runs of one function along the path: (name, instructions)."""
    runs: list[tuple[str, int]] = []
    for pc in path:
        name = symbols.name(pc)
        if runs and runs[-1][0] == name:
            runs[-1] = (name, runs[-1][1] + 1)
        else:
            runs.append((name, 1))
    return runs


def record(image: Path, log: Path, seconds: float, address_filter: str | None) -> None:
    """Runs the image with the QEMU command `bulkhead build` wrote beside it (qemu.cmd), under
    -icount, one instruction per block, logging every block executed."""
    cmd = image.parent / "qemu.cmd"
    if not cmd.is_file():
        raise SystemExit(f"profile: no {cmd}: give an image that `bulkhead build` packed")
    argv = shlex.split(cmd.read_text())
    machine = argv.index("-M") + 1
    argv[machine] += f",{ICOUNT_MACHINE_OPTION}"
    argv += [*ICOUNT_ARGS, "-singlestep", "-d", "exec,nochain", "-D", str(log)]
    if address_filter:
        argv += ["-dfilter", address_filter]
    try:
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, timeout=seconds)
    except subprocess.TimeoutExpired:
        pass  # the log so far is what we want


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", type=Path)
    parser.add_argument("--elf", type=Path, action="append", required=True)
    start_or_back = parser.add_mutually_exclusive_group(required=True)
    start_or_back.add_argument("--start")
    start_or_back.add_argument("--back", type=int, help="paths: the N instructions before STOP")
    parser.add_argument("--stop", required=True, help="symbol, address, or 'next'")
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--pick", type=int, default=2, help="which path to break down")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--filter", dest="address_filter")
    args = parser.parse_args()
    symbols = Symbols.of(args.elf)
    start = symbols.address(args.start) if args.start else None
    stop = None if args.stop == "next" else symbols.address(args.stop)
    if start is None and stop is None:
        raise SystemExit("profile: --back needs a --stop point")
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "exec.log"
        record(args.image, log, args.seconds, args.address_filter)
        with log.open() as lines:
            if start is None:
                found = paths_before(lines, args.cpu, stop, args.back)
            else:
                found = paths(lines, args.cpu, start, stop)
    if not found:
        raise SystemExit("profile: no path found (wrong core, addresses, or too short a run)")
    print(f"{len(found)} paths; lengths {[len(p) for p in found[:20]]}")
    pick = min(args.pick, len(found) - 1)
    chosen = found[pick]
    print(f"path {pick}, {len(chosen)} instructions, in order:")
    for name, count in breakdown(chosen, symbols):
        print(f"  {count:6d}  {name}")
    print("totals:")
    for name, count in Counter(symbols.name(pc) for pc in chosen).most_common():
        print(f"  {count:6d}  {name}")


if __name__ == "__main__":
    main()
