"""`make bench`: deterministic benchmarks under `-icount shift=0`.

One instruction is one nanosecond of virtual time there, so the bench partition's counter
differences are path lengths in instructions ("cycles" below), identical on every run and every
host. Results go to bench/results.json as {"name": {"value": N, "unit": "..."}}.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "system"))

from harness import run_system  # noqa: E402

BENCH = re.compile(r"^\[bench\] BENCH (?P<name>\w+) (?P<value>\d+) (?P<unit>\w+)$")


def partition_figures() -> dict[str, dict]:
    run = run_system(ROOT / "bench" / "bench.yaml", icount=True, timeout=120)
    if run.index(r"BENCH-DONE") < 0:
        raise SystemExit("bench partition did not finish; console:\n" + run.log)
    figures = {}
    for line in run.lines:
        m = BENCH.match(line)
        if m:
            figures[m["name"]] = {"value": int(m["value"]), "unit": m["unit"]}
    return figures


def footprint() -> dict[str, dict]:
    """Sizes of the hypervisor proper (libbulkhead.a), without tables or partition images."""
    out = subprocess.run(["aarch64-linux-gnu-size", "-t", str(ROOT / "build/hyp/libbulkhead.a")],
                         capture_output=True, text=True, check=True).stdout
    text, data, bss = (int(v) for v in out.strip().splitlines()[-1].split()[:3])
    return {
        "footprint_text_rodata": {"value": text, "unit": "bytes"},
        "footprint_data": {"value": data, "unit": "bytes"},
        "footprint_bss": {"value": bss, "unit": "bytes"},
    }


def main() -> None:
    results = partition_figures() | footprint()
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    width = max(len(k) for k in results)
    print(f"\n{'benchmark':<{width}}  {'value':>10}  unit")
    for name, r in results.items():
        print(f"{name:<{width}}  {r['value']:>10}  {r['unit']}")
    print("\nwritten to bench/results.json")


if __name__ == "__main__":
    main()
