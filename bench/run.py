"""`make bench`: deterministic benchmarks under `-icount shift=0`.

One instruction is one nanosecond of virtual time there, so counter differences are path lengths
in instructions ("cycles" below), identical on every run and every host. The counter ticks every
16 ns; the bench programs recover exact instruction times from 16 back-to-back reads (a "stamp",
partitions/bench/common/bench.h) where a figure needs better than 16.

Systems, each booted in its own QEMU (several at a time, one per host CPU):
  bench/bench.yaml         hypercall, trap and restart paths (partitions/apps/bench)
  bench/switch.yaml        partition_switch: two spinning partitions on one cyclic core
  bench/irqlat.yaml        timer_irq_latency_partition (+ build/bare/irqlat.elf without Bulkhead)
  bench/cpu.yaml           cpu_<kernel>_partition_ns  (+ build/bare/cpu.elf without Bulkhead)
  bench/ports.yaml         port_*, sampling_latency_*: ports (partitions/bench/ports)
  bench/apex*.yaml         apex_*: the APEX library kernel (partitions/tests/apexbench)
  bench/emulbench.yaml     emul_*: one trapped-and-emulated access of an unmodified guest
                           (partitions/board/emulbench, a board: qemu-virt guest)
  build/bench/perfloss_<d>ms.yaml  perf_loss_<d>ms, generated here, with a patched copy of the
                           counting partition (build/bench/perfloss_<d>ms.elf)
  bench/linux*.yaml        linux_*, vmtrap_*: Linux guests bare vs in a partition (bench/linux.py)
  bench/be_linux.yaml      be_linux_*: Linux throughput with best-effort vCPUs (bench/be_linux.py)
  bench/linux_{net,users}.yaml  linux_virtio_net_*, linux_cyclictest_*: virtio-net throughput and
                           cyclictest, bare vs in a partition (bench/linux_users.py)
  tests/system/configs/be_{fp,migrate}.yaml  be_handback_fp, be_migrate_*: best-effort hand-back and
                           migration path lengths from QEMU's instruction log (bench/be_paths.py)
Results go to bench/results.json as {"name": {"value": N, "unit": "..."}} and, with one line of
method each, to bench/results.md.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from elftools.elf.elffile import ELFFile

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
OUT = BUILD / "bench"
sys.path.insert(0, str(ROOT / "tests" / "system"))

from harness import build_image, run_command, run_image  # noqa: E402

from bulkhead.qemu import BATCH_ARGS, ICOUNT_ARGS, ICOUNT_MACHINE_OPTION, NO_NIC_ARGS  # noqa: E402

BENCH = re.compile(r"^(?:\[[^\]]+\] )?BENCH (?P<name>\w+) (?P<value>\d+) (?P<unit>\w+)$")
CHECK = re.compile(r"^(?:\[[^\]]+\] )?BENCH-CHECK (?P<kernel>\w+) (?P<value>\d+)$")
COUNT = re.compile(r"^\[[^\]]+\] BENCH-COUNT (?P<role>\d) (?P<count>\d+) (?P<start>\d+) (?P<end>\d+) "
                   r"(?P<loop>\d+)$")
DONE = re.compile(r"^(?:\[[^\]]+\] )?BENCH-DONE$")
EMUL = re.compile(r"^\[emulbench\] BENCH (?P<name>emul_\w+) (?P<max>\d+) cycles (?P<min>\d+)$")
# emul_*: the goals (instructions from the trapping instruction to the next guest one)
EMUL_GOALS = {"emul_gicd_typer_read": 150, "emul_gicd_isenabler_read": 150,
              "emul_psci_version_hvc": 120, "emul_psci_version_smc": 120, "emul_uart_dr_write": 200}

# perf_loss: slot length d (ms) -> measured major frames (2d each): 4 frames from 100 ms up,
# about 200 ms of virtual time below.
PERF_LOSS_FRAMES = {1000: 4, 500: 4, 100: 4, 50: 2, 10: 10, 5: 20, 1: 100}
PERF_LOSS_SWITCHES_PER_FRAME = 2
COUNT_PARAMS_SYMBOL = "bench_count_params"
COUNT_PARAMS_MAGIC = 0x424E4348504152
CPU_KERNELS = ("nqueens", "arraysum", "matmul")
BARE_MEMORY = "1024M"
RUN_TIMEOUT = 600.0


# --- Building and running ---------------------------------------------------------------------

def build_programs() -> None:
    """Hypervisor library, partitions, bench partitions and bare programs (make bench-programs)."""
    subprocess.run(["make", "-C", str(ROOT), "--no-print-directory", "hyp", "partitions",
                    "board-guests", "bench-programs"], check=True, stdout=subprocess.DEVNULL)


def build_system(config: Path) -> Path:
    """Packs config with the bulkhead tool into build/bench/images/<stem>; returns the image."""
    return build_image(config, OUT / "images" / config.stem)


def run_bulkhead(config: Path) -> list[str]:
    """Boots config under -icount until it halts; returns the console lines."""
    run = run_image(config, build_system(config), timeout=RUN_TIMEOUT, icount=True)
    if run.timed_out or not any(DONE.match(line) for line in run.lines):
        raise SystemExit(f"{config.name}: no BENCH-DONE (timed out: {run.timed_out})")
    return run.lines


def run_until_done(config: Path) -> list[str]:
    """Boots config under -icount until a partition that does not halt the system prints
    BENCH-DONE (a board guest cannot); returns the console lines."""
    run = run_image(config, build_system(config), timeout=RUN_TIMEOUT, icount=True,
                    until=lambda r: any(DONE.match(line) for line in r.lines))
    if not any(DONE.match(line) for line in run.lines):
        raise SystemExit(f"{config.name}: no BENCH-DONE (timed out: {run.timed_out})")
    return run.lines


def emul_figures(lines: list[str]) -> dict[str, dict]:
    """emul_* figures; every access of a kind is timed alone and must cost the same."""
    found = {}
    for m in filter(None, map(EMUL.match, lines)):
        if m["max"] != m["min"]:
            raise SystemExit(f"{m['name']}: accesses cost {m['min']} to {m['max']}, not the same")
        found[m["name"]] = {"value": int(m["max"]), "unit": "cycles"}
    if set(found) != set(EMUL_GOALS):
        raise SystemExit(f"emulbench: figures {sorted(found)}, expected {sorted(EMUL_GOALS)}")
    return found


def bare_command(elf: Path) -> list[str]:
    """QEMU without the hypervisor: EL1 at the ELF entry, one core, the same icount options."""
    return ["qemu-system-aarch64", "-M", f"virt,gic-version=3,{ICOUNT_MACHINE_OPTION}",
            "-cpu", "cortex-a53", "-smp", "1", "-m", BARE_MEMORY, *NO_NIC_ARGS, *BATCH_ARGS,
            *ICOUNT_ARGS, "-kernel", str(elf)]


def run_bare(elf: Path, timeout: float = RUN_TIMEOUT) -> list[str]:
    """Runs a bare program until it prints BENCH-DONE (it then parks), then kills QEMU."""
    run = run_command(bare_command(elf), f"{elf.name} (bare)", timeout,
                      until=lambda r: any(DONE.match(line) for line in r.lines))
    if not any(DONE.match(line) for line in run.lines):
        raise SystemExit(f"{elf.name}: no BENCH-DONE (timed out: {run.timed_out})")
    return run.lines


def figures(lines: list[str]) -> dict[str, dict]:
    found = {}
    for line in lines:
        m = BENCH.match(line)
        if m:
            found[m["name"]] = {"value": int(m["value"]), "unit": m["unit"]}
    return found


def checks(lines: list[str]) -> dict[str, int]:
    return {m["kernel"]: int(m["value"]) for m in map(CHECK.match, lines) if m}


def percent(x: float) -> float:
    return round(100.0 * x, 3)


# --- perf_loss configurations -----------------------------------------------------------------

def patch_count_params(src: Path, dst: Path, slot_ns: int, frames: int) -> None:
    """Copies the counting partition with its parameters (bench_count_params) set."""
    data = bytearray(src.read_bytes())
    with src.open("rb") as f:
        elf = ELFFile(f)
        symbols = elf.get_section_by_name(".symtab").get_symbol_by_name(COUNT_PARAMS_SYMBOL)
        if not symbols:
            raise SystemExit(f"{src}: no symbol {COUNT_PARAMS_SYMBOL}")
        addr, size = symbols[0]["st_value"], symbols[0]["st_size"]
        for seg in elf.iter_segments():
            if (seg["p_type"] == "PT_LOAD" and seg["p_vaddr"] <= addr
                    and addr + size <= seg["p_vaddr"] + seg["p_filesz"]):
                offset = seg["p_offset"] + addr - seg["p_vaddr"]
                break
        else:
            raise SystemExit(f"{src}: {COUNT_PARAMS_SYMBOL} is not in a loaded segment")
    magic, _, _ = struct.unpack_from("<3Q", data, offset)
    if magic != COUNT_PARAMS_MAGIC:
        raise SystemExit(f"{src}: {COUNT_PARAMS_SYMBOL} does not start with the magic number")
    struct.pack_into("<3Q", data, offset, COUNT_PARAMS_MAGIC, slot_ns, frames)
    dst.write_bytes(data)


def perf_loss_config(d_ms: int) -> Path:
    """Writes build/bench/perfloss_<d>ms.{elf,yaml}: A in [0, d), B in [d, 2d) on core 0."""
    OUT.mkdir(parents=True, exist_ok=True)
    stem = f"perfloss_{d_ms}ms"
    elf, config = OUT / f"{stem}.elf", OUT / f"{stem}.yaml"
    patch_count_params(BUILD / "partitions" / "bench_count.elf", elf, d_ms * 1_000_000,
                       PERF_LOSS_FRAMES[d_ms])
    part = "    image: {elf}\n    vcpus: [{{core: 0}}]\n    memory:\n" \
           "      - {{name: ram, phys: {phys}, guest: 0x40000000, size: 4M, rights: rwx}}\n"
    config.write_text(
        f"# Generated by bench/run.py: perf_loss_{d_ms}ms, two counting partitions alternating\n"
        f"# on cyclic core 0 in {d_ms} ms slots, for {PERF_LOSS_FRAMES[d_ms]} major frames.\n"
        f"system: {{name: {stem}, platform: qemu-virt, cores: 4, memory: 1G}}\n"
        f"hypervisor:\n  memory: {{base: 0x40000000, size: 32M}}\n"
        f"schedule:\n  cores:\n    - {{core: 0, policy: cyclic}}\n  plans:\n"
        f"    - name: alternate\n      major_frame: {2 * d_ms}ms\n      slots:\n"
        f"        - {{core: 0, start: 0ms, duration: {d_ms}ms, vcpu: A}}\n"
        f"        - {{core: 0, start: {d_ms}ms, duration: {d_ms}ms, vcpu: B}}\n"
        f"partitions:\n"
        f"  - name: A\n    id: 0\n" + part.format(elf=elf.name, phys="0x42000000") +
        f"  - name: B\n    id: 1\n    system: true\n" + part.format(elf=elf.name, phys="0x42400000"))
    return config


@dataclass
class PerfLoss:
    d_ms: int
    frames: int
    guest: int      # instructions the two counting loops executed
    window: int     # ns from the common start to the common end
    predicted: float = 0.0

    @property
    def loss(self) -> float:
        return 1.0 - self.guest / self.window

    @property
    def lost(self) -> int:
        return self.window - self.guest

    @property
    def switches(self) -> int:
        return PERF_LOSS_SWITCHES_PER_FRAME * self.frames


def predicted_loss(pcs_ns: float, d_ms: int) -> float:
    """XtratuM's model: n * PCS / sum of the slot durations (per major frame)."""
    return PERF_LOSS_SWITCHES_PER_FRAME * pcs_ns / (PERF_LOSS_SWITCHES_PER_FRAME * d_ms * 1_000_000)


def perf_loss(d_ms: int) -> PerfLoss:
    lines = run_bulkhead(perf_loss_config(d_ms))
    counts = [m for m in map(COUNT.match, lines) if m]
    if sorted(int(m["role"]) for m in counts) != [0, 1] or len({(m["start"], m["end"]) for m in counts}) != 1:
        raise SystemExit(f"perf_loss_{d_ms}ms: expected one count from each partition over one window")
    window = int(counts[0]["end"]) - int(counts[0]["start"])
    return PerfLoss(d_ms, PERF_LOSS_FRAMES[d_ms], sum(int(m["count"]) * int(m["loop"]) for m in counts),
                    window)


# --- Results ----------------------------------------------------------------------------------

def footprint() -> dict[str, dict]:
    """Sizes of the hypervisor proper (libbulkhead.a), without tables or partition images."""
    out = subprocess.run(["aarch64-linux-gnu-size", "-t", str(BUILD / "hyp/libbulkhead.a")],
                         capture_output=True, text=True, check=True).stdout
    text, data, bss = (int(v) for v in out.strip().splitlines()[-1].split()[:3])
    return {
        "footprint_text_rodata": {"value": text, "unit": "bytes"},
        "footprint_data": {"value": data, "unit": "bytes"},
        "footprint_bss": {"value": bss, "unit": "bytes"},
    }


def apex_code_size() -> dict[str, dict]:
    """Code (text and read-only data) of libapex.a, the APEX library kernel (issue: <= 24 KiB)."""
    out = subprocess.run(["aarch64-linux-gnu-size", "-t", str(BUILD / "partitions/lib/libapex.a")],
                         capture_output=True, text=True, check=True).stdout
    return {"apex_code_size": {"value": int(out.strip().splitlines()[-1].split()[0]), "unit": "bytes"}}


def collect() -> tuple[dict[str, dict], list[PerfLoss]]:
    jobs: dict[str, Callable[[], object]] = {
        f"perf_loss_{d}ms": (lambda d=d: perf_loss(d))
        for d in sorted(PERF_LOSS_FRAMES, key=lambda d: -d * PERF_LOSS_FRAMES[d])
    }
    jobs |= {
        "foundation": lambda: run_bulkhead(ROOT / "bench" / "bench.yaml"),
        "switch": lambda: run_bulkhead(ROOT / "bench" / "switch.yaml"),
        "irqlat": lambda: run_bulkhead(ROOT / "bench" / "irqlat.yaml"),
        "irqlat_bare": lambda: run_bare(BUILD / "bare" / "irqlat.elf"),
        "cpu": lambda: run_bulkhead(ROOT / "bench" / "cpu.yaml"),
        "cpu_bare": lambda: run_bare(BUILD / "bare" / "cpu.elf"),
        "ports": lambda: run_bulkhead(ROOT / "bench" / "ports.yaml"),
        "apex": lambda: run_bulkhead(ROOT / "bench" / "apex.yaml"),
        "apex_periodic": lambda: run_bulkhead(ROOT / "bench" / "apex_periodic.yaml"),
        "apex_port_idle": lambda: run_bulkhead(ROOT / "bench" / "apex_port_idle.yaml"),
        "emulbench": lambda: run_until_done(ROOT / "bench" / "emulbench.yaml"),
    }
    with ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
        futures = {name: pool.submit(job) for name, job in jobs.items()}
        done = {name: f.result() for name, f in futures.items()}

    results = figures(done["foundation"])
    results |= emul_figures(done["emulbench"])

    switch = figures(done["switch"])
    for name in ("partition_switch", "partition_switch_max", "partition_switch_exact",
                 "partition_switch_lead"):
        results[name] = switch[name]
    results["partition_switch_total"] = {
        "value": switch["partition_switch_lead"]["value"] + switch["partition_switch_exact"]["value"],
        "unit": "cycles"}

    irq = figures(done["irqlat"]) | figures(done["irqlat_bare"])
    for suffix in ("", "_exact"):
        part = irq[f"timer_irq_latency_partition{suffix}"]["value"]
        bare = irq[f"timer_irq_latency_bare{suffix}"]["value"]
        results[f"timer_irq_latency_partition{suffix}"] = {"value": part, "unit": "ns"}
        results[f"timer_irq_latency_bare{suffix}"] = {"value": bare, "unit": "ns"}
        results[f"timer_irq_extra{suffix}"] = {"value": part - bare, "unit": "cycles"}

    losses = [done[f"perf_loss_{d}ms"] for d in sorted(PERF_LOSS_FRAMES, reverse=True)]
    pcs = results["partition_switch_total"]["value"]
    for pl in losses:
        pl.predicted = predicted_loss(pcs, pl.d_ms)
        results[f"perf_loss_{pl.d_ms}ms"] = {"value": percent(pl.loss), "unit": "percent"}
        results[f"perf_loss_predicted_{pl.d_ms}ms"] = {"value": percent(pl.predicted), "unit": "percent"}
    one = next(pl for pl in losses if pl.d_ms == 1)
    results["perf_loss_model_error_1ms"] = {
        "value": percent(abs(one.loss - one.predicted) / one.loss), "unit": "percent"}
    results["perf_loss_cost_per_switch_1ms"] = {
        "value": round(one.lost / one.switches), "unit": "cycles"}

    part, bare = figures(done["cpu"]), figures(done["cpu_bare"])
    part_checks, bare_checks = checks(done["cpu"]), checks(done["cpu_bare"])
    for kernel in CPU_KERNELS:
        if kernel not in part_checks or part_checks[kernel] != bare_checks.get(kernel):
            raise SystemExit(f"cpu_{kernel}: results differ: partition {part_checks.get(kernel)}, "
                             f"bare {bare_checks.get(kernel)}")
        b = bare[f"cpu_{kernel}_bare_ns"]["value"]
        p = part[f"cpu_{kernel}_partition_ns"]["value"]
        results[f"cpu_{kernel}_bare_ns"] = {"value": b, "unit": "ns"}
        results[f"cpu_{kernel}_partition_ns"] = {"value": p, "unit": "ns"}
        results[f"cpu_{kernel}_loss_percent"] = {"value": percent((p - b) / b), "unit": "percent"}

    results |= figures(done["ports"])
    results |= figures(done["apex"]) | figures(done["apex_port_idle"]) | figures(done["apex_periodic"])
    results |= apex_code_size()
    results |= footprint()
    return results, losses


METHODS = {
    "hypercall_roundtrip": "`hvc` (`BH_HC_GET_IDS`) to the next guest instruction, loop overhead removed (1000 calls against the same loop with `nop`)",
    "hypercall_unknown_roundtrip": "the same with an unknown function ID (dispatch and error only)",
    "trap_sysreg_to_hm_ignore": "`mrs pmcr_el0` trapped, decoded, health-monitor event logged on the console, skipped, back in the guest",
    "stage2_violation_to_restarted_entry": "a store outside the partition's memory to the first instruction of `main` in the cold-restarted partition",
    "partition_switch": "cyclic core, 1 ms frame, A [0, 500us) and B [500us, 1ms) both spinning on the counter: min over 100 frames of (first counter value B reads after resuming x 16 - planned slot start) - 1 (the read); resolution 16 (one counter tick)",
    "partition_switch_max": "the same, maximum over the 100 frames (B resumes anywhere in its 5-instruction loop, and the 16-cycle quantisation)",
    "partition_switch_exact": "the same resumes timed to the instruction (stamp of 16 back-to-back reads), B's loop phase shifted one instruction per frame: planned slot start to B's first instruction",
    "partition_switch_lead": "A's slot end - A's last instruction: the cyclic core's timer fires this long before the boundary, decides and switches, then waits for the boundary (min over 100 frames of the last counter read before the preemption; exact since the timer fires on a tick)",
    "partition_switch_total": "partition_switch_lead + partition_switch_exact: core time one switch takes from the partitions (PCS of the model below)",
    "timer_irq_latency_partition": "EL1 virtual timer armed 1 ms ahead in a partition alone on a dedicated core, waiting in `wfi` with IRQs unmasked (no exit: dedicated cores do not trap WFI): (first CNTVCT_EL0 value its handler reads - CNTV_CVAL_EL0) x 16, min of 100; resolution 16",
    "timer_irq_latency_bare": "the same objects (libbhpart vectors and bh_irq_dispatch) at EL1 on QEMU virt without the hypervisor, waiting in `wfi`",
    "timer_irq_extra": "timer_irq_latency_partition - timer_irq_latency_bare: what the hypervisor adds (goal <= 100; Proteus +149)",
    "timer_irq_latency_partition_exact": "timer_irq_latency_partition with the handler's first read timed to the instruction (stamp), the read counted",
    "timer_irq_latency_bare_exact": "timer_irq_latency_bare timed to the instruction",
    "timer_irq_extra_exact": "timer_irq_latency_partition_exact - timer_irq_latency_bare_exact",
    "perf_loss_model_error_1ms": "abs(measured - predicted) / measured at d = 1 ms (the prediction is within 10 % if this is <= 10)",
    "perf_loss_cost_per_switch_1ms": "(elapsed - guest instructions) / switches at d = 1 ms, to compare with partition_switch_total",
    "footprint_text_rodata": "code and read-only data of `libbulkhead.a` (no configuration tables or partition images)",
    "footprint_data": "initialised data of `libbulkhead.a`",
    "footprint_bss": "zeroed data of `libbulkhead.a` (stacks, per-CPU blocks; not the stage-2 table pool, which is in each system's generated tables)",
}
for _d, _frames in PERF_LOSS_FRAMES.items():
    METHODS[f"perf_loss_{_d}ms"] = (
        f"two partitions alternate in {_d} ms slots on one cyclic core, each counting a 4-instruction "
        f"loop for {_frames} major frames from a common frame start: 1 - guest instructions / elapsed ns")
    METHODS[f"perf_loss_predicted_{_d}ms"] = (
        "XtratuM's model n x PCS / sum of the slot durations, n = 2 switches per major frame, "
        "PCS = partition_switch_total")
PORT_SIZES = (20, 40, 60, 80, 100)
M5150_100B = "M5150 (MIPS, instructions) for 100 B: send 1680, receive 1302, delivery 3114"
for _n in PORT_SIZES:
    METHODS[f"port_send_{_n}B"] = (
        f"`bh_queuing_send` of {_n} bytes, stamp to stamp, into an empty queue whose reader gets "
        f"`BH_VIRQ_PORT` (the sender's own loop-back port: the list register is written on the way out); "
        f"min of 20" + (f". {M5150_100B}" if _n == 100 else ""))
    METHODS[f"port_receive_{_n}B"] = f"`bh_queuing_receive` of that {_n}-byte message, stamp to stamp, min of 20"
    METHODS[f"port_delivery_{_n}B"] = (
        f"send of {_n} bytes to a higher-priority partition on the same core waiting in the idle hypercall, "
        f"to that partition holding the data: send, interrupt, switch, return from idle, receive (M5150's "
        f"message delivery); min of 20")
    METHODS[f"port_delivery_cross_core_{_n}B"] = (
        f"the same to a partition waiting in the idle hypercall on its own dedicated core (the sender's core "
        f"goes idle meanwhile; all cores share -icount's clock, so both cores' instructions count)")
    METHODS[f"port_delivery_wait_{_n}B"] = (
        f"send of {_n} bytes to a higher-priority partition on the same core blocked in "
        f"`bh_queuing_receive_wait`, to its call's return with the data: the copy into its buffer, the "
        f"one-comparison switch, its return (goal <= 600 for 100 B)" + (f". {M5150_100B}" if _n == 100 else ""))
    METHODS[f"port_delivery_wait_cross_core_{_n}B"] = (
        f"the same to a partition blocked in `bh_queuing_receive_wait` on its own dedicated core (both cores' "
        f"instructions count)")
    METHODS[f"sampling_latency_cross_core_{_n}B"] = (
        f"`bh_sampling_write` of {_n} bytes to the `bh_sampling_read` that returns it on another core, measured "
        f"as port_delivery_cross_core")
METHODS["port_send_queued_100B"] = (
    "`bh_queuing_send` of 100 bytes when the reader was notified already and has not received since: no "
    "interrupt, the checked copy alone")
_EMUL_METHOD = ("board guest partitions/board/emulbench (bench/emulbench.yaml, alone on dedicated core 1): "
                "{what}, from the trapping instruction to the next guest instruction, each of 64 timed alone "
                "(stamps before and after, against the same code with `nop`), all 64 the same (goal <= {goal})")
for _name, _what in (("gicd_typer_read", "`ldr` of `GICD_TYPER`"),
                     ("gicd_isenabler_read", "`ldr` of `GICD_ISENABLER1`"),
                     ("psci_version_hvc", "`PSCI_VERSION` by `hvc`"),
                     ("psci_version_smc", "`PSCI_VERSION` by `smc`"),
                     ("uart_dr_write", "PL011 `UARTDR` write, a byte continuing the partition's open line "
                      "(it has the console's focus: straight to the wire)")):
    METHODS[f"emul_{_name}"] = _EMUL_METHOD.format(what=_what, goal=EMUL_GOALS[f"emul_{_name}"])
METHODS |= {
    "apex_yield_switch": "libapex (bench/apex.yaml): `TIMED_WAIT(0)` between two processes of one priority, from one's call to the other running; average of 2000 switches (goal <= 150)",
    "apex_block_to_next_running": "`WAIT_SEMAPHORE` blocks the higher-priority process, from its call to the next process running (its code after `SIGNAL_SEMAPHORE` returned); average of 1000",
    "apex_signal_to_waiter_running": "`SIGNAL_SEMAPHORE` to the higher-priority waiter running (back from its `WAIT_SEMAPHORE`); average of 1000 (goal <= 250)",
    "apex_port_to_process_running_min": "apexpeer's 100-byte `bh_queuing_send` (stamped just before) to the APEX process blocked in `RECEIVE_QUEUING_MESSAGE` running, a lower-priority APEX process running meanwhile (its buffer posted with BH_HC_QUEUING_RECEIVE_POST, so the send copies into it); same core, peer above, so the path includes the peer's own next call leaving the core (about 710); min of 20 (no goal: the issue's 900 is apex_port_to_idle_process_running's, where the send switches the core to the receiver as M5150's delivery does)",
    "apex_port_to_process_running_max": "the same, max of 20",
    "apex_port_to_idle_process_running_min": "bench/apex_port_idle.yaml: apexpeer, below the APEX partition on its core, sends 100 bytes (stamped just before its call) to the APEX process blocked in `RECEIVE_QUEUING_MESSAGE` while its partition idles (waiting in `BH_HC_QUEUING_RECEIVE_WAIT` with the process's buffer), to that process running: the send switches the core to the receiving partition at once, as M5150's delivery schedules its receiver; min of 20 (goal <= 900; M5150: 3114)",
    "apex_port_to_idle_process_running_max": "the same, max of 20",
    "apex_periodic_jitter": "bench/apex_periodic.yaml: a periodic process (100 us) released 20 us into its partition's 50 us slot of a cyclic core shared with a spinning partition: max - min of (process running - release point), timed to the instruction, over 10 000 `PERIODIC_WAIT` releases (goal 0)",
    "apex_periodic_lateness_min": "the same, smallest release point to process running",
    "apex_periodic_jitter_at_slot_start": "the same for a process released at each partition period start, where the hypervisor switches the core to the partition",
    "apex_periodic_lateness_min_at_slot_start": "the same, smallest",
    "apex_code_size": "`size -t` of libapex.a: text and read-only data of the APEX library kernel (goal <= 24 KiB = 24576)",
}
for _k, _what in (("nqueens", "N-queens solutions for N = 9, 20 times"),
                  ("arraysum", "sum of a 64 KiB array of 32-bit words, 64 times"),
                  ("matmul", "32 x 32 int matrix product, 20 times")):
    METHODS[f"cpu_{_k}_bare_ns"] = f"{_what}: bare-metal EL1 without the hypervisor, timed to the instruction"
    METHODS[f"cpu_{_k}_partition_ns"] = f"{_what}: the same object in a partition alone on a dedicated core"
    METHODS[f"cpu_{_k}_loss_percent"] = "(partition - bare) / bare; both print the same result"


def show(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def write_markdown(results: dict[str, dict], losses: list[PerfLoss]) -> str:
    rows = ["Generated by `make bench` (bench/run.py) under `-icount shift=0`: 1 instruction = 1 ns, so "
            "cycles are path lengths in instructions; identical on every run.", "",
            "| benchmark | value | unit | method |", "|---|---|---|---|"]
    rows += [f"| `{name}` | {show(r['value'])} | {r['unit']} | {METHODS.get(name, '')} |"
             for name, r in results.items()]
    pcs = results["partition_switch_total"]["value"]
    latency = results["partition_switch_exact"]["value"]
    rows += ["", f"Performance loss, measured against XtratuM's model n x PCS / sum of slots with "
             f"PCS = partition_switch_total = {pcs} ns, and with the slot start latency "
             f"(partition_switch_exact = {latency} ns) alone:", "",
             "| slot d | major frame | lost per switch | measured | predicted | error | within 10 % "
             "| predicted from latency alone |", "|---|---|---|---|---|---|---|---|"]
    for pl in losses:
        error = abs(pl.loss - pl.predicted) / pl.loss
        rows.append(f"| {pl.d_ms} ms | {2 * pl.d_ms} ms | {pl.lost / pl.switches:.1f} ns "
                    f"| {100 * pl.loss:.5f} % | {100 * pl.predicted:.5f} % | {100 * error:.2f} % "
                    f"| {'yes' if error <= 0.10 else 'no'} | {100 * predicted_loss(latency, pl.d_ms):.5f} % |")
    return "\n".join(rows) + "\n"


def main() -> None:
    started = time.monotonic()
    build_programs()
    results, losses = collect()
    from bench import linux  # Linux guests (issue 4): boot, CPU and latencies, trapped accesses
    results |= linux.collect(METHODS)
    from bench import be_linux  # best-effort vCPUs (issue 15): Linux throughput from idle time
    results |= be_linux.collect(METHODS)
    from bench import linux_users  # Linux as users run it (issue 13): virtio-net, cyclictest
    results |= linux_users.collect(METHODS)
    from bench import be_paths  # best-effort vCPUs (issue 15): hand-back and migration path lengths
    results |= be_paths.collect_figures(build_image, METHODS)
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    markdown = write_markdown(results, losses)
    (ROOT / "bench" / "results.md").write_text(markdown)
    width = max(len(k) for k in results)
    print(f"\n{'benchmark':<{width}}  {'value':>12}  unit")
    for name, r in results.items():
        print(f"{name:<{width}}  {show(r['value']):>12}  {r['unit']}")
    print("\n" + markdown.split("\n\n")[-2] + "\n\n" + markdown.split("\n\n")[-1])
    print(f"written to bench/results.json and bench/results.md ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
