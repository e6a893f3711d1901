"""Path lengths of best-effort vCPUs' hand-back and take, in instructions under -icount.

    python -m bench.be_paths IMAGE --cpu N [--seconds S]

IMAGE is a packed image of one of the best-effort system tests (tests/system/configs/be_*.yaml,
built by `pytest tests/system/test_best_effort.py` into build/systest/<name>/). Runs it under
QEMU's instruction log (bench.profile) and takes, on core N, every path from the guest's IRQ
vector (guest_irq, the last entry) to:

- the core's WFI (arch_wait_for_interrupt) when the path gives a best-effort vCPU back to the
  queue (be_put) with nothing else to run: the hand-back BE_LEAD_TICKS before the core's own
  instant, in the best-effort vCPU's time;
- the return to a guest (aarch64_guest_return) when the path takes a vCPU from the queue
  (be_take) and switches to it: the take on the core a best-effort vCPU moves to.

Prints the number of each and their lengths (most frequent first), and the most frequent path of
each broken down by function."""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.profile import Symbols, breakdown, paths, record  # noqa: E402

HYPERVISOR_TEXT = "0x40080000..0x400a0000"


def last_entry(path: list[int], start: int) -> list[int]:
    """The end of a path from its last entry at start: the interrupt that led to its end."""
    return path[max(i for i, pc in enumerate(path) if pc == start):]


def collect(log: Path, symbols: Symbols, cpu: int, stop: str, needed: set[str]) -> list[list[int]]:
    start = symbols.address("guest_irq")
    with log.open() as lines:
        found = paths(lines, cpu, start, symbols.address(stop))
    chosen = []
    for path in found:
        tail = last_entry(path, start)
        names = {symbols.name(pc) for pc in tail}
        if needed <= names and "guest_hvc" not in names:
            chosen.append(tail)
    return chosen


def report(title: str, found: list[list[int]], symbols: Symbols) -> None:
    lengths = collections.Counter(len(p) for p in found)
    print(f"{title}: {len(found)} paths; lengths (instructions: count) {dict(lengths.most_common(8))}")
    if not found:
        return
    typical = lengths.most_common(1)[0][0]
    path = next(p for p in found if len(p) == typical)
    for name, count in breakdown(path, symbols):
        print(f"  {count:6d}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image", type=Path)
    parser.add_argument("--cpu", type=int, required=True)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args()
    symbols = Symbols.of([args.image.parent / "bulkhead.elf"])
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "exec.log"
        record(args.image, log, args.seconds, HYPERVISOR_TEXT)
        report("hand-back", collect(log, symbols, args.cpu, "arch_wait_for_interrupt",
                                    {"be_put", "arch_vcpu_detach"}), symbols)
        report("take", collect(log, symbols, args.cpu, "aarch64_guest_return",
                               {"be_take", "arch_el1_switch"}), symbols)


if __name__ == "__main__":
    main()
