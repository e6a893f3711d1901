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
each broken down by function. `make bench` takes the most frequent lengths of the fixed-priority
and EDF hand-backs (be_fp, core 1; be_edf, core 2) and of migration (be_migrate, core 0: a vCPU
given back there and taken on the other cyclic core, and taken there) through collect_figures."""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.profile import Symbols, breakdown, paths, record  # noqa: E402

CONFIGS = Path(__file__).resolve().parents[1] / "tests" / "system" / "configs"
HANDBACK_GOAL = 300

HYPERVISOR_TEXT = "0x40080000..0x400a0000"


def last_entry(path: list[int], start: int) -> list[int]:
    """The end of a path from its last entry at start: the interrupt that led to its end."""
    return path[max(i for i, pc in enumerate(path) if pc == start):]


def collect(log: Path, symbols: Symbols, cpu: int, stop: str, needed: set[str],
            one_of: set[str] | None = None) -> list[list[int]]:
    """The paths to stop whose functions include every one of needed and, if given, one of one_of."""
    start = symbols.address("guest_irq")
    with log.open() as lines:
        found = paths(lines, cpu, start, symbols.address(stop))
    chosen = []
    for path in found:
        tail = last_entry(path, start)
        names = {symbols.name(pc) for pc in tail}
        if needed <= names and (not one_of or one_of & names) and "guest_hvc" not in names:
            chosen.append(tail)
    return chosen


# A best-effort vCPU leaving its core: detached for another vCPU, or given back with the core
# left idle (its own vCPU loaded again).
LEAVES = {"arch_vcpu_detach", "arch_vcpu_give_back"}


def one_pass(found: list[list[int]], symbols: Symbols) -> list[list[int]]:
    """The paths whose decision picked once: a take that first serves the taken vCPU's posted
    request decides again after it (about 650 instructions more), another path."""
    pick = symbols.address("pick")
    return [p for p in found if p.count(pick) == 1]


def most_frequent(found: list[list[int]]) -> int:
    if not found:
        raise RuntimeError("be_paths: no such path in the log (did the system run its best-effort vCPUs?)")
    return collections.Counter(len(p) for p in found).most_common(1)[0][0]


def measure(image: Path, cpu: int, seconds: float) -> tuple[list[list[int]], list[list[int]]]:
    """(hand-backs, takes) on `cpu` of one recorded run."""
    symbols = Symbols.of([image.parent / "bulkhead.elf"])
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "exec.log"
        record(image, log, seconds, HYPERVISOR_TEXT)
        return (collect(log, symbols, cpu, "arch_wait_for_interrupt", set(), LEAVES),
                one_pass(collect(log, symbols, cpu, "aarch64_guest_return", {"be_take", "arch_el1_switch"}),
                         symbols))


def collect_figures(build_image, methods: dict[str, str]) -> dict[str, dict]:
    """make bench: the hand-back and migration path lengths (most frequent of each), in instructions."""
    fp_give, _ = measure(build_image(CONFIGS / "be_fp.yaml"), cpu=1, seconds=15.0)
    edf_give, _ = measure(build_image(CONFIGS / "be_edf.yaml"), cpu=2, seconds=15.0)
    mig_give, mig_take = measure(build_image(CONFIGS / "be_migrate.yaml"), cpu=0, seconds=15.0)
    figures = {
        "be_handback_fp": (most_frequent(fp_give), f"-icount instruction log (bench/be_paths.py, be_fp.yaml, "
                           f"core 1): from the best-effort guest's interrupt vector on the timer at be_until to "
                           f"the core's WFI, most frequent of {len(fp_give)} (goal {HANDBACK_GOAL})"),
        "be_handback_edf": (most_frequent(edf_give), f"the same on an EDF core (be_edf.yaml, core 2), most "
                            f"frequent of {len(edf_give)} (goal {HANDBACK_GOAL})"),
        "be_migrate_give_back": (most_frequent(mig_give), f"the same on a cyclic core (be_migrate.yaml, core 0), "
                                 f"whose best-effort vCPU the other core takes next: the giving half of a "
                                 f"migration, most frequent of {len(mig_give)}"),
        "be_migrate_take": (most_frequent(mig_take), f"be_migrate.yaml, core 0: from the interrupt ending a "
                            f"spinner's slot to the best-effort guest taken from the queue, with the cyclic "
                            f"decision and the EL1 switch (the taking half; one decision pass: not a take that serves a "
                            f"posted request of the vCPU first and decides again), most frequent of {len(mig_take)}"),
    }
    methods.update({name: method for name, (_, method) in figures.items()})
    return {name: {"value": value, "unit": "cycles"} for name, (value, _) in figures.items()}


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
    give_back, take = measure(args.image, args.cpu, args.seconds)
    report("hand-back", give_back, symbols)
    report("take", take, symbols)


if __name__ == "__main__":
    main()
