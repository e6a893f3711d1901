"""Linux guest benchmarks of `make bench` (issue 4), called once from bench/run.py.

Three groups, each bare on QEMU (no hypervisor) against the same thing in a Bulkhead partition:

  boot     Debian's arm64 kernel with the initramfs of bench/linux.yaml (/init is lbench,
           linux/bench/lbench.c), booted to its first user-space instructions: the wall-clock time
           (and QEMU's host CPU time) from starting QEMU to init's first line (5 boots of each,
           interleaved, medians; TCG without -icount) and, under -icount shift=0, the virtual
           time at which init runs.
           Bare is bulkhead.qemu.bare_linux_command: the same kernel, initramfs and bootargs, -smp
           and -m of the partition.
  linux    the rest of lbench's run under -icount: CPU kernels (nqueens, arraysum, matmul) and
           lmbench-like latencies (null syscall, pipe, context switch, fork+exit, fork+exec), all
           pinned to CPU 0, in ns (= instructions), identical on every run.
  vmtrap   partitions/bench/vmtrap, a freestanding arm64 Image booted as a Linux partition's
           kernel (bench/linux_vmtrap.yaml) and bare: the cost in instructions of each
           trapped-and-emulated access Linux makes most.

and, in a partition only, shm: Linux user space against a real-time partition through a shared
region and its doorbell (bench/linux_shm.py, run among the -icount jobs).

collect(methods) returns the figures ({"name": {"value": v, "unit": u}}) and adds one line of
method per figure to methods (run.py's METHODS), which run.py writes to bench/results.{json,md}.
The -icount runs go 2 at a time (one QEMU per host CPU); the wall-clock boots run afterwards,
one at a time, so that nothing else competes with them for the host.
"""

from __future__ import annotations

import os
import re
import selectors
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
OUT = BUILD / "bench" / "linux"
sys.path.insert(0, str(ROOT / "tests" / "system"))

from harness import build_image, run_command  # noqa: E402

from bench import linux_shm  # noqa: E402

from bulkhead.config import load  # noqa: E402
from bulkhead.model import System  # noqa: E402
from bulkhead.qemu import ICOUNT_MACHINE_OPTION, bare_linux_command, qemu_command  # noqa: E402

LINUX_CONFIG = ROOT / "bench" / "linux.yaml"
VMTRAP_CONFIG = ROOT / "bench" / "linux_vmtrap.yaml"
PARTITION = {LINUX_CONFIG: "linux", VMTRAP_CONFIG: "vmtrap"}

PREFIX = r"^(?:\[[^\]]+\] )?"
BOOT = re.compile(PREFIX + r"BHBOOT (?P<counter>\d+) (?P<uptime>\d+)\s*$")
LBENCH = re.compile(PREFIX + r"LBENCH (?P<name>\w+) (?P<ns>\d+) (?P<ops>\d+)\s*$")
BENCH = re.compile(PREFIX + r"BENCH (?P<name>\w+) (?P<value>\d+) (?P<unit>\w+)\s*$")
CHECK = re.compile(PREFIX + r"BENCH-CHECK (?P<kernel>\w+) (?P<value>\d+)\s*$")
DONE = re.compile(PREFIX + r"BENCH-DONE\s*$")
HANDOFF = re.compile(r"^\[bulkhead\] partition linux \(id \d+\) vcpu 0 on core")
FAILED = re.compile(r"LBENCH-ERROR|VMTRAP-EXCEPTION|Kernel panic|HM: partition")

WALL_BOOTS = 10           # boots of each kind for the wall-clock ratio (one boot varies by ±0.1)
WALL_TIMEOUT = 120.0
ICOUNT_TIMEOUT = 600.0
BOOT_WALL_GOAL = 1.10
CPU_LOSS_GOAL = 1.0       # percent
CPU_KERNELS = {
    "nqueens": "N-queens solutions for N = 9, 100 times",
    "arraysum": "sum of a 64 KiB array of 32-bit words, 512 times",
    "matmul": "32 x 32 int matrix product, 200 times",
}
LATENCIES = {
    "null_syscall": "lmbench lat_syscall null: getppid() 20000 times, per call",
    "pipe_latency": "lmbench lat_pipe: a byte to a second process and back over two pipes, 2000 "
                    "times, per round trip (two context switches)",
    "ctx_switch": "lmbench lat_ctx -s 0, 2 processes: pipe_latency / 2 minus one process passing "
                  "the byte through a pipe to itself (the pipe work without the switch)",
    "fork_exit": "lmbench lat_proc fork: fork, the child _exits, the parent waits; 100 times, per fork",
    "fork_exec": "lmbench lat_proc exec: fork, the child execs /bin/nop (a 1 KiB static program that "
                 "exits), the parent waits; 100 times, per fork+exec",
}
VMTRAP_REPS = {"uart_dr_write": 64}   # the others 1000 times (partitions/bench/vmtrap/vmtrap.c)
VMTRAP_OPS = {
    "gicd_typer_read": "32-bit read of GICD_TYPER (0x08000004)",
    "gicd_isenabler_write": "32-bit write of GICD_ISENABLER1 (0x08000104) enabling INTID 33",
    "gicr_typer_read": "64-bit read of GICR_TYPER of vCPU 0's redistributor (0x080a0008)",
    "psci_version": "PSCI_VERSION through the device tree's conduit: `smc` in the partition, `hvc` "
                    "bare (QEMU's own PSCI at EL1)",
    "uart_fr_read": "32-bit read of the PL011's UARTFR (0x09000018)",
    "uart_dr_write": "32-bit write of a character to the PL011's UARTDR (0x09000000) (the partition "
                     "has console focus: each goes out on the physical UART at once)",
    "sgi_send": "`msr ICC_SGI1R_EL1` of SGI 15 to itself",
}
# Partition only: the hypercall page Linux user space uses (docs/ports.md), against HVC.
VMTRAP_PARTITION_OPS = {
    "call_page_get_time": "BH_HC_GET_TIME through the hypercall page (0x0b001000): one 64-bit store of "
                          "a call block's address; the block is read and written back through the "
                          "guest's translation, as for a Linux process",
    "hvc_get_time": "BH_HC_GET_TIME by HVC from EL1 (what a Linux kernel or a paravirtual partition "
                    "would do), for comparison",
}


# --- QEMU command lines ------------------------------------------------------------------------

@lru_cache(maxsize=None)
def system(config: Path) -> System:
    return load(config)


@lru_cache(maxsize=None)
def image(config: Path) -> Path:
    return build_image(config, OUT / "images" / config.stem)


def partition_command(config: Path, icount: bool) -> list[str]:
    return qemu_command(system(config), image(config), icount=icount, interactive=False)


def bare_command(config: Path, icount: bool) -> list[str]:
    """The partition's kernel (and initramfs, bootargs) without Bulkhead. Without -icount the
    machine still gets dtb-randomness=off: the partition's device tree has no KASLR or RNG seed
    either, so both kernels boot without KASLR and with the same unseeded RNG."""
    argv = bare_linux_command(system(config), PARTITION[config], OUT / "bare" / config.stem,
                              icount=icount, interactive=False)
    machine = argv.index("-M") + 1
    if ICOUNT_MACHINE_OPTION not in argv[machine]:
        argv[machine] += f",{ICOUNT_MACHINE_OPTION}"
    return argv


# --- runs --------------------------------------------------------------------------------------

def run_icount(config: Path, bare: bool) -> list[str]:
    """Boots config (or its Linux partition bare) under -icount until BENCH-DONE."""
    argv = bare_command(config, True) if bare else partition_command(config, True)
    name = f"{config.name} ({'bare' if bare else 'partition'}, icount)"
    run = run_command(argv, name, ICOUNT_TIMEOUT,
                      until=lambda r: any(DONE.match(l) or FAILED.search(l) for l in r.lines))
    if not any(DONE.match(line) for line in run.lines):
        raise SystemExit(f"{name}: no BENCH-DONE (timed out: {run.timed_out})")
    return run.lines


@dataclass
class Boot:
    wall: float                # s from starting QEMU to init's BHBOOT line
    cpu: float                 # s of host CPU time QEMU used until then (all its threads)
    handoff: float | None      # s to the hypervisor's line that it starts Linux (partition only)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (/proc/<pid>/stat fields utime, stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def boot_wall(config: Path, bare: bool) -> Boot:
    """Boots config's Linux (bare or in its partition) without -icount until init's BHBOOT line,
    then kills QEMU."""
    argv = bare_command(config, False) if bare else partition_command(config, False)
    name = f"{config.name} ({'bare' if bare else 'partition'}, wall-clock boot)"
    lines: list[str] = []
    pending, handoff = b"", None
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < start + WALL_TIMEOUT:
            if not sel.select(timeout=0.5):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            now = time.monotonic() - start
            if not chunk:
                break
            *complete, pending = (pending + chunk).split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace").rstrip("\r")
                lines.append(line)
                if handoff is None and HANDOFF.match(line):
                    handoff = now
                if BOOT.match(line):
                    return Boot(now, cpu_seconds(proc.pid), handoff)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    tail = "\n".join(lines[-30:])
    raise SystemExit(f"{name}: no BHBOOT line within {WALL_TIMEOUT:.0f} s; the console ended with:\n{tail}")


# --- figures -----------------------------------------------------------------------------------

def percent(part: float, bare: float) -> float:
    return round(100.0 * (part - bare) / bare, 3)


def parse_linux(lines: list[str]) -> tuple[tuple[int, int], dict[str, float], dict[str, int]]:
    """(BHBOOT counter ns, CLOCK_BOOTTIME ns), ns per operation by name, CPU kernel results."""
    boot = next(((int(m["counter"]), int(m["uptime"])) for m in map(BOOT.match, lines) if m), None)
    if boot is None:
        raise SystemExit("lbench printed no BHBOOT line")
    per_op = {m["name"]: int(m["ns"]) / int(m["ops"]) for m in map(LBENCH.match, lines) if m}
    checks = {m["kernel"]: int(m["value"]) for m in map(CHECK.match, lines) if m}
    return boot, per_op, checks


def latencies(per_op: dict[str, float]) -> dict[str, float]:
    return {
        "null_syscall": per_op["null_syscall"],
        "pipe_latency": per_op["pipe_roundtrip"],
        "ctx_switch": per_op["pipe_roundtrip"] / 2 - per_op["pipe_self"],
        "fork_exit": per_op["fork_exit"],
        "fork_exec": per_op["fork_exec"],
    }


def collect(methods: dict[str, str]) -> dict[str, dict]:
    jobs = {
        "linux_partition": lambda: run_icount(LINUX_CONFIG, bare=False),
        "linux_bare": lambda: run_icount(LINUX_CONFIG, bare=True),
        "vmtrap_partition": lambda: run_icount(VMTRAP_CONFIG, bare=False),
        "vmtrap_bare": lambda: run_icount(VMTRAP_CONFIG, bare=True),
    }
    for config in (LINUX_CONFIG, VMTRAP_CONFIG):  # load and build once, before the threads
        image(config)
    jobs["shm"] = linux_shm.prepare()
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
        done = {name: f.result() for name, f in futures.items()}
    boots: dict[bool, list[Boot]] = {True: [], False: []}
    for _ in range(WALL_BOOTS):
        for bare in (True, False):
            boots[bare].append(boot_wall(LINUX_CONFIG, bare))

    results: dict[str, dict] = {}

    def put(name: str, value, unit: str, method: str) -> None:
        results[name] = {"value": value, "unit": unit}
        methods[name] = method

    def median(bare: bool, field: str) -> float:
        return statistics.median(getattr(b, field) for b in boots[bare])

    def listed(bare: bool, field: str) -> str:
        return ", ".join(f"{getattr(b, field):.2f}" for b in boots[bare])

    # Boot.
    wall_bare, wall_part = median(True, "wall"), median(False, "wall")
    put("linux_boot_wall_bare_s", round(wall_bare, 3), "s",
        f"Debian arm64 kernel + lbench initramfs on QEMU without Bulkhead (TCG without -icount, "
        f"2 CPUs, no KASLR/RNG seed in the device tree as in the partition's): starting QEMU to "
        f"init's first line, median of {WALL_BOOTS} ({listed(True, 'wall')} s)")
    put("linux_boot_wall_partition_s", round(wall_part, 3), "s",
        f"the same kernel, initramfs and bootargs in a partition (2 vCPUs on the 2 dedicated cores of "
        f"a 2-core machine, bench/linux.yaml), boots interleaved with the bare ones, median of "
        f"{WALL_BOOTS} ({listed(False, 'wall')} s)")
    handoffs = [b.handoff for b in boots[False] if b.handoff is not None]
    if len(handoffs) == WALL_BOOTS:
        put("linux_boot_wall_hypervisor_s", round(statistics.median(handoffs), 3), "s",
            "of linux_boot_wall_partition_s: starting QEMU to the hypervisor's log line that it "
            "starts Linux (its own boot and the copy of kernel, device tree and initramfs done), median")
    put("linux_boot_wall_ratio", round(wall_part / wall_bare, 3), "ratio",
        f"linux_boot_wall_partition_s / linux_boot_wall_bare_s (goal <= {BOOT_WALL_GOAL:.2f}); "
        f"wall-clock on a shared 2-core host, so it varies from run to run")
    cpu_bare, cpu_part = median(True, "cpu"), median(False, "cpu")
    put("linux_boot_cpu_ratio", round(cpu_part / cpu_bare, 3), "ratio",
        f"the same boots: host CPU time QEMU used until init's first line (user + system, all threads), "
        f"median partition / median bare ({listed(False, 'cpu')} s / {listed(True, 'cpu')} s); less "
        f"sensitive than wall-clock time to other load on the host")

    (boot_bare, up_bare), bare_ops, bare_checks = parse_linux(done["linux_bare"])
    (boot_part, up_part), part_ops, part_checks = parse_linux(done["linux_partition"])
    put("linux_boot_bare_ns", boot_bare, "ns",
        "-icount: virtual time (counter, from machine start) at which init (lbench) takes its first "
        "stamp, bare")
    put("linux_boot_partition_ns", boot_part, "ns",
        "the same in the partition: the hypervisor's boot and the copy of the kernel and initramfs "
        "into the partition's RAM included")
    put("linux_boot_ratio", round(boot_part / boot_bare, 4), "ratio",
        "linux_boot_partition_ns / linux_boot_bare_ns")
    put("linux_boot_uptime_bare_ns", up_bare, "ns",
        "CLOCK_BOOTTIME at the same point: the kernel's own boot time to user space, bare")
    put("linux_boot_uptime_partition_ns", up_part, "ns", "the same in the partition")

    # CPU kernels and latencies.
    for kernel, what in CPU_KERNELS.items():
        if kernel not in part_checks or part_checks[kernel] != bare_checks.get(kernel):
            raise SystemExit(f"linux_cpu_{kernel}: results differ: partition {part_checks.get(kernel)}, "
                             f"bare {bare_checks.get(kernel)}")
        b, p = int(bare_ops[f"cpu_{kernel}"]), int(part_ops[f"cpu_{kernel}"])
        put(f"linux_cpu_{kernel}_bare_ns", b, "ns",
            f"{what}: a Linux process pinned to CPU 0 (static C, -O2), bare, timed to the instruction")
        put(f"linux_cpu_{kernel}_partition_ns", p, "ns", f"{what}: the same in the partition")
        put(f"linux_cpu_{kernel}_loss_percent", percent(p, b), "percent",
            f"(partition - bare) / bare, both print the same result (goal <= {CPU_LOSS_GOAL:g} %)")
    bare_lat, part_lat = latencies(bare_ops), latencies(part_ops)
    for name, what in LATENCIES.items():
        b, p = round(bare_lat[name], 1), round(part_lat[name], 1)
        put(f"linux_{name}_bare_ns", b, "ns", f"{what}; bare")
        put(f"linux_{name}_partition_ns", p, "ns", "the same in the partition")
        put(f"linux_{name}_extra_percent", percent(p, b), "percent", "(partition - bare) / bare")

    # Trapped and emulated accesses.
    part, bare = figures(done["vmtrap_partition"]), figures(done["vmtrap_bare"])
    for op, what in VMTRAP_OPS.items():
        if op not in part or op not in bare:
            raise SystemExit(f"vmtrap: no figure for {op}")
        reps = VMTRAP_REPS.get(op, 1000)
        put(f"vmtrap_{op}", part[op], "cycles",
            f"{what} from EL1 in a Linux partition (MMU off): trap, emulation, back to the next "
            f"instruction; {reps} in a loop, timed with stamps: (loop - the same loop with `nop`) / "
            f"{reps} + 1")
        put(f"vmtrap_{op}_bare", bare[op], "cycles",
            "the same Image on QEMU without the hypervisor: no trap, QEMU's own device model")
    for op, what in VMTRAP_PARTITION_OPS.items():
        if op not in part:
            raise SystemExit(f"vmtrap: no figure for {op}")
        put(f"vmtrap_{op}", part[op], "cycles",
            f"{what}; 1000 in a loop, timed with stamps against the same loop without the call")

    results |= linux_shm.figures(done["shm"], methods)
    return results


def figures(lines: list[str]) -> dict[str, int]:
    return {m["name"]: int(m["value"]) for m in map(BENCH.match, lines) if m}


if __name__ == "__main__":  # python -m bench.linux: these figures alone (run.py writes the files)
    import json

    print(json.dumps(collect({}), indent=2))
