"""Shared memory and doorbells from Linux user space to a real-time partition (make bench, issue 5).

bench/linux_shm.yaml: Linux (1 vCPU, dedicated core 0) runs linux/bench/shmbench.c as /init, the
real-time partition shmpeer (partitions/bench/shmpeer, dedicated core 1) waits for the doorbell of
region `bulk` in the idle hypercall. Under -icount shift=0 (one instruction = 1 ns on all cores
together) shmbench times doorbell round trips with CLOCK_MONOTONIC, the one-way legs with stamps
on both sides (the same counter), and 64 KiB blocks written into the region and handed over (the
peer checksums them; shmbench checks the sum, so a wrong or stale block fails the benchmark).

bench/linux.py runs it among its -icount jobs: prepare() before its threads, then figures().
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
sys.path.insert(0, str(ROOT / "tests" / "system"))

from harness import build_image, run_image  # noqa: E402

CONFIG = ROOT / "bench" / "linux_shm.yaml"
TIMEOUT = 600.0
PREFIX = r"^(?:\[[^\]]+\] )?"
STAT = re.compile(PREFIX + r"SHMBENCH (?P<name>\w+) (?P<n>\d+) (?P<total>\d+) (?P<min>\d+) (?P<max>\d+)\s*$")
BLOCK = re.compile(PREFIX + r"SHMBENCH-INFO block (?P<bytes>\d+)\s*$")
DONE = re.compile(PREFIX + r"BENCH-DONE\s*$")
FAILED = re.compile(r"SHMBENCH-ERROR|BENCH-ERROR|Kernel panic|HM: partition")
COUNTS = {"roundtrip": 1000, "to_peer": 500, "to_peer_blocked": 500, "to_linux": 500,
          "write": 20, "handover": 20, "peer_sum": 20}


def prepare() -> Callable[[], list[str]]:
    """Builds the image now (before bench/linux.py's threads); returns the run."""
    image = build_image(CONFIG, BUILD / "bench" / "linux" / "images" / CONFIG.stem)

    def run() -> list[str]:
        result = run_image(CONFIG, image, TIMEOUT, icount=True,
                           until=lambda r: any(DONE.match(l) or FAILED.search(l) for l in r.lines))
        failed = [line for line in result.lines if FAILED.search(line)]
        if failed or not any(DONE.match(line) for line in result.lines):
            raise SystemExit(f"{CONFIG.name}: no BENCH-DONE (timed out: {result.timed_out}; "
                             f"{failed[0] if failed else 'no error line'})")
        return result.lines
    return run


def figures(lines: list[str], methods: dict[str, str]) -> dict[str, dict]:
    stats = {m["name"]: m for m in map(STAT.match, lines) if m}
    for name, count in COUNTS.items():
        if name not in stats or int(stats[name]["n"]) != count:
            raise SystemExit(f"{CONFIG.name}: expected SHMBENCH {name} over {count} rounds")
    block = next((int(m["bytes"]) for m in map(BLOCK.match, lines) if m), None)
    if block is None:
        raise SystemExit(f"{CONFIG.name}: no block size")

    def mean(name: str) -> float:
        return int(stats[name]["total"]) / int(stats[name]["n"])

    def spread(name: str) -> str:
        return f"min {stats[name]['min']}, max {stats[name]['max']} ns over {stats[name]['n']}"

    def mbps(name: str) -> float:  # 10^6 bytes per second of virtual time
        return round(block * 1000 / mean(name), 1)

    results: dict[str, dict] = {}

    def put(name: str, value, unit: str, method: str) -> None:
        results[name] = {"value": value, "unit": unit}
        methods[name] = method

    where = ("bench/linux_shm.yaml: Linux user space (linux/bench/shmbench.c, libbhport) on dedicated "
             "core 0, the real-time partition shmpeer waiting in the idle hypercall on dedicated core 1")
    put("linux_shm_doorbell_roundtrip_ns", round(mean("roundtrip"), 1), "ns",
        f"{where}: Linux rings the doorbell of the shared region (hypercall page), blocks in read() on "
        f"its event GPIO's doorbell line (request kept open), the peer wakes and rings back, Linux "
        f"gets the edge and takes the doorbell (bhp_port_ready); CLOCK_MONOTONIC per round, mean of "
        f"{COUNTS['roundtrip']}; both cores' instructions count")
    put("linux_shm_doorbell_roundtrip_min_ns", int(stats["roundtrip"]["min"]), "ns", "the same, minimum")
    put("linux_shm_doorbell_roundtrip_max_ns", int(stats["roundtrip"]["max"]), "ns",
        "the same, maximum (a round with one of Linux's timer interrupts)")
    put("linux_shm_doorbell_to_peer_ns", round(mean("to_peer"), 1), "ns",
        f"one way: Linux's stamp before its doorbell call to the peer's stamp when its idle hypercall "
        f"returned (same counter), Linux spinning on the answer with YIELD instead of blocking, so "
        f"that nothing of Linux's runs in between; mean ({spread('to_peer')})")
    put("linux_shm_doorbell_to_peer_blocked_ns", round(mean("to_peer_blocked"), 1), "ns",
        f"the same with Linux blocking in read() at once, as in the round trip: -icount runs the "
        f"cores in turns and Linux's way to sleep runs first; on parallel cores it would overlap "
        f"the peer's wake-up; mean ({spread('to_peer_blocked')})")
    put("linux_shm_doorbell_to_linux_ns", round(mean("to_linux"), 1), "ns",
        f"one way back: the peer's stamp before its doorbell call to Linux's stamp when read() "
        f"returned the edge (Linux blocked); mean ({spread('to_linux')})")
    put("linux_shm_write_MBps", mbps("write"), "MB/s",
        f"Linux writes a {block // 1024} KiB block into the region (mapped from /dev/mem, device "
        f"memory: aligned 8-byte stores, 8 per loop) from its own memory; {COUNTS['write']} blocks, "
        f"CLOCK_MONOTONIC, MB = 10^6 bytes of virtual time (mean {mean('write'):.0f} ns per block)")
    put("linux_shm_handover_MBps", mbps("handover"), "MB/s",
        f"the same block written, then the doorbell, the peer's checksum of it (FNV-1a over "
        f"64-bit words) and its answer back in Linux, checksum checked by Linux "
        f"(mean {mean('handover'):.0f} ns per block)")
    put("linux_shm_peer_checksum_MBps", mbps("peer_sum"), "MB/s",
        f"of the hand-over: the peer's checksum of the block alone, timed with its stamps "
        f"(mean {mean('peer_sum'):.0f} ns per block)")
    return results


if __name__ == "__main__":  # python -m bench.linux_shm: these figures alone
    import json

    print(json.dumps(figures(prepare()(), {}), indent=2))
