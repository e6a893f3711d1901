"""Best-effort vCPUs (make bench, issue 15): the throughput Linux gains from them.

bench/be_linux.yaml: Linux with vCPU 0 on a dedicated core and three best-effort vCPUs on cores
1 to 3, each of which a real-time spinner takes for a quarter of every 1 ms frame. Its init
(bench/be_linux/init.sh) runs 8 shell processes of fixed work in parallel and prints the virtual
time they took together. The same system without the best-effort vCPUs (generated under
build/bench/) is the reference. Under -icount shift=0 both runs are deterministic.
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
RESULT = re.compile(r"BEBENCH cpus (?P<cpus>\d+) processes (?P<procs>\d+) work (?P<work>\d+) "
                    r"start (?P<start>[\d.]+) end (?P<end>[\d.]+)")
GAIN_GOAL = 2.0


def dedicated_only() -> Path:
    """bench/be_linux.yaml without its best-effort vCPUs, next to it in effect (paths absolute)."""
    text = CONFIG.read_text().replace("../build/", f"{BUILD}/").replace("be_linux/init.sh",
                                                                        f"{ROOT}/bench/be_linux/init.sh")
    text = "\n".join(line for line in text.splitlines() if "best_effort: true" not in line) + "\n"
    path = BUILD / "bench" / "be_linux_dedicated_only.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def elapsed(config: Path, image: Path) -> tuple[int, float]:
    run = run_image(config, image, TIMEOUT, until=lambda r: r.index(r"BENCH-DONE") >= 0, icount=True)
    found = RESULT.search(run.log)
    if not found:
        raise RuntimeError(f"{config.name}: no BEBENCH line (see the console above)")
    return int(found["cpus"]), float(found["end"]) - float(found["start"])


def collect(methods: dict[str, str]) -> dict[str, dict]:
    configs = {"best_effort": CONFIG, "dedicated_only": dedicated_only()}
    images = {name: build_image(config, BUILD / "bench" / "images" / config.stem) for name, config in configs.items()}
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(elapsed, configs[name], images[name]) for name in configs}
        done = {name: f.result() for name, f in futures.items()}
    (cpus_be, with_be), (cpus_alone, alone) = done["best_effort"], done["dedicated_only"]
    results: dict[str, dict] = {}

    def put(name: str, value, unit: str, method: str) -> None:
        results[name] = {"value": value, "unit": unit}
        methods[name] = method

    put("be_linux_parallel_dedicated_only_s", round(alone, 2), "s",
        f"-icount: 8 shell processes of fixed work in Linux with 1 dedicated vCPU ({cpus_alone} CPU), "
        f"cores 1-3 a quarter busy with real-time spinners and otherwise idle (bench/be_linux.py)")
    put("be_linux_parallel_best_effort_s", round(with_be, 2), "s",
        f"the same with 3 best-effort vCPUs on cores 1-3 ({cpus_be} CPUs), which use the idle 75 %")
    put("be_linux_parallel_gain", round(alone / with_be, 2), "ratio",
        f"be_linux_parallel_dedicated_only_s / be_linux_parallel_best_effort_s (goal >= {GAIN_GOAL})")
    return results
