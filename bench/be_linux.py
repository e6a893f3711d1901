"""Best-effort vCPUs (make bench, issue 15): how much CPU time Linux gains from them.

bench/be_linux.yaml: Linux with vCPU 0 on a dedicated core and three best-effort vCPUs on cores
1 to 3, each of which a real-time spinner takes for a quarter of every 1 ms frame. Its init
(bench/be_linux/init.sh) runs one busy loop per CPU for a second and reports each CPU's busy,
idle and stolen time. The same system without the best-effort vCPUs (generated under build/bench/)
is the reference. Under -icount shift=0 both runs are deterministic.

The figure is CPU time, not wall-clock speed: under -icount QEMU runs all cores in turn on one
host thread and virtual time advances with every core's instructions, so a second of virtual time
holds the same number of instructions however many cores are busy, and a parallel program cannot
finish sooner there (without -icount, this 2-core host runs at most two cores at once). What the
hypervisor decides, and what a machine with real cores turns into speed, is how much of the idle
time the best-effort vCPUs get: their busy time.
"""

from __future__ import annotations

import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
sys.path.insert(0, str(ROOT / "tests" / "system"))

from harness import build_image, run_image  # noqa: E402

CONFIG = ROOT / "bench" / "be_linux.yaml"
TIMEOUT = 900.0
WALL = re.compile(r"BEBENCH wall (?P<start>[\d.]+) (?P<end>[\d.]+)")
CPU = re.compile(r"BEBENCH-CPU cpu(?P<cpu>\d+) user (?P<user>\d+) system (?P<system>\d+) idle (?P<idle>\d+) "
                 r"steal (?P<steal>\d+)")
GAIN_GOAL = 2.0
IDLE_SHARE = 0.75  # of cores 1-3, what the spinners leave


def dedicated_only() -> Path:
    """bench/be_linux.yaml without its best-effort vCPUs, written under build/bench (paths absolute)."""
    text = CONFIG.read_text().replace("../", f"{ROOT}/").replace(" be_linux/init.sh",
                                                                 f" {ROOT}/bench/be_linux/init.sh")
    text = "\n".join(line for line in text.splitlines() if "best_effort: true" not in line) + "\n"
    path = BUILD / "bench" / "be_linux_dedicated_only.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def busy_ticks(config: Path, image: Path) -> tuple[float, list[int], list[int]]:
    """(wall, busy, stolen) of one run: its wall time and each CPU's user + system and steal, in ticks."""
    run = run_image(config, image, TIMEOUT, until=lambda r: r.index(r"BENCH-DONE") >= 0, icount=True)
    wall = WALL.search(run.log)
    cpus = [m for m in map(CPU.search, run.lines) if m]
    if not wall or not cpus:
        raise RuntimeError(f"{config.name}: no BEBENCH lines (see the console above)")
    return ((float(wall["end"]) - float(wall["start"])) * 100,
            [int(m["user"]) + int(m["system"]) for m in cpus], [int(m["steal"]) for m in cpus])


def collect(methods: dict[str, str]) -> dict[str, dict]:
    configs = {"best_effort": CONFIG, "dedicated_only": dedicated_only()}
    images = {name: build_image(config, BUILD / "bench" / "images" / config.stem) for name, config in configs.items()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(busy_ticks, configs[name], images[name]) for name in configs}
        done = {name: f.result() for name, f in futures.items()}
    (wall_be, busy_be, steal_be), (wall_alone, busy_alone, _) = done["best_effort"], done["dedicated_only"]
    results: dict[str, dict] = {}

    def put(name: str, value, unit: str, method: str) -> None:
        results[name] = {"value": value, "unit": unit}
        methods[name] = method

    alone, with_be = sum(busy_alone) / wall_alone, sum(busy_be) / wall_be
    per_cpu = ", ".join(f"{b} busy {s} stolen" for b, s in zip(busy_be[1:], steal_be[1:]))
    put("be_linux_cpu_time_dedicated_only", round(alone, 3), "cores",
        f"-icount: Linux with 1 dedicated vCPU, a busy loop per CPU for a second: its busy time over the "
        f"wall time ({sum(busy_alone)} of {wall_alone:.0f} ticks; cores 1-3 a quarter busy with real-time "
        f"spinners, otherwise idle; bench/be_linux.py)")
    put("be_linux_cpu_time_best_effort", round(with_be, 3), "cores",
        f"the same with 3 best-effort vCPUs on cores 1-3 ({sum(busy_be)} of {wall_be:.0f} ticks; the "
        f"best-effort CPUs {per_cpu} ticks)")
    put("be_linux_cpu_time_gain", round(with_be / alone, 2), "ratio",
        f"be_linux_cpu_time_best_effort / be_linux_cpu_time_dedicated_only (goal >= {GAIN_GOAL}); CPU "
        f"time, not wall-clock speed, which -icount cannot show (bench/be_linux.py)")
    put("be_linux_idle_time_used_percent",
        round(100 * sum(busy_be[1:]) / (len(busy_be[1:]) * wall_be * IDLE_SHARE), 1), "percent",
        "the best-effort CPUs' busy time as a share of the 75 % of cores 1-3 the spinners leave idle")
    return results
