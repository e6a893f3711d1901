"""Run a Bulkhead system under QEMU and read what its partitions report.

Each test boots a fresh QEMU with one system description, reads the console until QEMU exits,
a condition holds, or a timeout passes, and then kills QEMU. Test partitions report verdicts
through the console hypercall as `[partition] BHTEST <name> PASS|FAIL <detail>`.
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from bulkhead.config import load
from bulkhead.qemu import qemu_command

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
CONFIGS = Path(__file__).resolve().parent / "configs"
VERDICT = re.compile(r"^\[(?P<part>[^\]]+)\] BHTEST (?P<name>\w+) (?P<verdict>PASS|FAIL)(?: (?P<detail>.*))?$")


@dataclass
class Run:
    lines: list[str] = field(default_factory=list)
    exited: bool = False
    returncode: int | None = None
    timed_out: bool = False

    @property
    def log(self) -> str:
        return "\n".join(self.lines)

    def verdicts(self) -> dict[tuple[str, str], tuple[str, str]]:
        found = {}
        for line in self.lines:
            m = VERDICT.match(line)
            if m:
                found[(m["part"], m["name"])] = (m["verdict"], m["detail"] or "")
        return found

    def index(self, pattern: str) -> int:
        """Index of the first line matching pattern (a regex), or -1."""
        rx = re.compile(pattern)
        return next((i for i, line in enumerate(self.lines) if rx.search(line)), -1)

    def count(self, pattern: str) -> int:
        rx = re.compile(pattern)
        return sum(1 for line in self.lines if rx.search(line))


def build_image(config: Path, out: Path | None = None) -> Path:
    """Packs config with the bulkhead tool into out (default build/systest/<stem>)."""
    out = out or BUILD / "systest" / config.stem
    cmd = [
        str(ROOT / ".venv" / "bin" / "bulkhead"), "build", str(config), "--out", str(out),
        "--hyp-lib", str(BUILD / "hyp" / "libbulkhead.a"),
        "--linker-script", str(ROOT / "hypervisor" / "arch" / "aarch64" / "hyp.ld"),
        "--include", str(ROOT / "hypervisor" / "include"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"bulkhead build {config.name} failed:\n{done.stdout}{done.stderr}")
    return out / "bulkhead.img"


def run_system(config: Path | str, timeout: float = 60.0,
               until: Callable[[Run], bool] | None = None, icount: bool = False) -> Run:
    """Boot config in QEMU; return when QEMU exits, until(run) is true, or timeout passes."""
    config = CONFIGS / config if isinstance(config, str) else config
    return run_image(config, build_image(config), timeout, until, icount)


def run_image(config: Path, image: Path, timeout: float = 60.0,
              until: Callable[[Run], bool] | None = None, icount: bool = False) -> Run:
    """Boot an already built image of config (see run_system)."""
    argv = qemu_command(load(config), image, icount=icount, interactive=False)
    return run_command(argv, config.name, timeout, until)


def run_command(argv: list[str], name: str, timeout: float = 60.0,
                until: Callable[[Run], bool] | None = None) -> Run:
    """Run a QEMU command line; return when it exits, until(run) is true, or timeout passes."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    run = Run()
    try:
        _read(proc, run, time.monotonic() + timeout, until)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if run.exited:
            run.returncode = proc.returncode
    print(f"--- console of {name} ---\n{run.log}\n--- end ---")
    return run


def _read(proc: subprocess.Popen, run: Run, deadline: float,
          until: Callable[[Run], bool] | None) -> None:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    pending = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            run.timed_out = True
            return
        if not sel.select(timeout=min(left, 0.5)):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        if not chunk:
            if pending:
                run.lines.append(pending.decode(errors="replace").rstrip("\r"))
            run.exited = True
            proc.wait()
            return
        pending += chunk
        *complete, pending = pending.split(b"\n")
        run.lines.extend(c.decode(errors="replace").rstrip("\r") for c in complete)
        if until and until(run):
            return
