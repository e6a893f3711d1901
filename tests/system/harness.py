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
from bulkhead.qemu import FlashWriteBack, qemu_command
from bulkhead.stage2 import pool_of

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
    went_quiet: bool = False  # it printed nothing for the run's `quiet` seconds

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


STAGE2_LOG = re.compile(r"\[bulkhead\] partition (\S+): (\d+) stage-2 table pages \(pool: (\d+) of (\d+) used\)")


def check_stage2_pool(config: Path | str, log: str) -> None:
    """The hypervisor's boot log shows that each partition's stage-2 tables took the pages the tool
    counted for it, and that the last one used up the pool the tool emitted: no page more, no
    page less."""
    config = CONFIGS / config if isinstance(config, str) else config
    pool = pool_of(load(config))
    logged = [(name, int(pages), int(used), int(size)) for name, pages, used, size in STAGE2_LOG.findall(log)]
    assert [(name, pages) for name, pages, _, _ in logged] == list(pool.per_partition), logged
    assert logged[-1][2:] == (pool.pages, pool.pages), logged


def run_system(config: Path | str, timeout: float = 60.0,
               until: Callable[[Run], bool] | None = None, icount: bool = False,
               quiet: float | None = None) -> Run:
    """Boot config in QEMU; return when QEMU exits, until(run) is true, or timeout passes (or,
    with quiet, once it has printed nothing for that many seconds after its first line: a test
    whose until waits for a line that its system may drop, and report dropped, ends there)."""
    config = CONFIGS / config if isinstance(config, str) else config
    return run_image(config, build_image(config), timeout, until, icount, quiet)


def run_image(config: Path, image: Path, timeout: float = 60.0,
              until: Callable[[Run], bool] | None = None, icount: bool = False,
              quiet: float | None = None) -> Run:
    """Boot an already built image of config (see run_system)."""
    argv = qemu_command(load(config), image, icount=icount, interactive=False)
    return run_command(argv, config.name, timeout, until, quiet)


def run_command(argv: list[str], name: str, timeout: float = 60.0,
                until: Callable[[Run], bool] | None = None, quiet: float | None = None) -> Run:
    """Run a QEMU command line; return when it exits, until(run) is true, or timeout passes
    (see run_system for quiet)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    run = Run()
    try:
        _read(proc, run, time.monotonic() + timeout, until, quiet)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if run.exited:
            run.returncode = proc.returncode
    print(f"--- console of {name} ---\n{run.log}\n--- end ---")
    return run


def _read(proc: subprocess.Popen, run: Run, deadline: float,
          until: Callable[[Run], bool] | None, quiet: float | None = None) -> None:
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    pending = b""
    last_output = time.monotonic()
    while True:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            run.timed_out = True
            return
        if quiet is not None and run.lines and now - last_output >= quiet:
            run.went_quiet = True
            return
        if not sel.select(timeout=min(left, 0.5)):
            continue
        chunk = os.read(proc.stdout.fileno(), 65536)
        last_output = time.monotonic()
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


class Console:
    """An interactive QEMU run: type into the console and wait for what comes back.

    Output is kept whole (partial lines included, since a shell prompt has no newline);
    expect() searches it from the end of the previous match on."""

    def __init__(self, argv: list[str], name: str):
        self.name = name
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.PIPE)
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.raw = ""   # as QEMU printed it
        self.text = ""  # without carriage returns
        self.pos = 0

    @classmethod
    def boot(cls, config: Path | str, icount: bool = False) -> "Console":
        config = CONFIGS / config if isinstance(config, str) else config
        system, image = load(config), build_image(config)
        con = cls(qemu_command(system, image, icount=icount, interactive=False), config.name)
        con.flash = FlashWriteBack(system, image)
        if con.flash.banks:  # flash banks to write back: QMP, and finish() at close
            con.flash.connect()
        return con

    def _pump(self, until: float) -> bool:
        """Read what QEMU printed until the deadline or the first chunk; False once it exited."""
        left = until - time.monotonic()
        if left > 0 and self.sel.select(timeout=min(left, 0.5)):
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return False
            text = chunk.decode(errors="replace")
            self.raw += text
            self.text += text.replace("\r", "")
        return True

    def expect(self, pattern: str, timeout: float = 30.0) -> re.Match:
        """Wait for pattern (a regex) in the output after the previous match."""
        rx = re.compile(pattern, re.MULTILINE)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.text, self.pos)
            if m:
                self.pos = m.end()
                return m
            if time.monotonic() > deadline or not self._pump(deadline):
                tail = self.text[self.pos:][-3000:]
                raise AssertionError(f"{self.name}: no /{pattern}/ within {timeout} s; after the "
                                     f"last match came:\n{tail}")

    def wait(self, seconds: float) -> None:
        """Let the system run, collecting its output."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._pump(deadline):
            pass

    def until(self, found: Callable[[], object], what: str, timeout: float = 30.0):
        """Wait until found() returns something true, and return it."""
        deadline = time.monotonic() + timeout
        while True:
            result = found()
            if result:
                return result
            if time.monotonic() > deadline or not self._pump(deadline):
                raise AssertionError(f"{self.name}: no {what} within {timeout} s; the end of the "
                                     f"output:\n{self.text[-3000:]}")

    def send(self, text: str) -> None:
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def lines(self) -> list[str]:
        return self.text.splitlines()

    def close(self) -> None:
        flash = getattr(self, "flash", None)
        if flash is not None and flash.banks and self.proc.poll() is None:
            flash.finish()  # the variables banks into their files, then QEMU quits
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        print(f"--- console of {self.name} ---\n{self.text}\n--- end ---")

    def __enter__(self) -> "Console":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def partition_view(raw: str, name: str) -> str:
    """What partition `name` wrote to the console: its lines without their prefix, other partitions'
    lines left out, and a line the console broke for someone else's (it ends in LF CR instead of
    CR LF, see docs/architecture.md) joined again."""
    prefix = f"[{name}] "
    segments = raw.split("\n")
    lines: list[str] = []
    joining = False
    for i, segment in enumerate(segments):
        clean = segment.strip("\r")
        if not clean.startswith(prefix):
            continue
        body = clean[len(prefix):]
        if joining and lines:
            lines[-1] += body
        else:
            lines.append(body)
        joining = i + 1 < len(segments) and segments[i + 1].startswith("\r")
    return "\n".join(lines)


def bhstats(run) -> dict[str, int]:
    """The integer `BHSTAT <name> <value>` lines partitions printed, by name."""
    found = {}
    for line in run.lines:
        m = re.search(r"\] BHSTAT (\w+) (-?\d+)$", line)
        if m:
            found[m[1]] = int(m[2])
    return found


def passed(run, part: str, name: str) -> None:
    """Partition `part` reported its test `name` as passed (its log's tail if not)."""
    verdict = run.verdicts().get((part, name))
    assert verdict and verdict[0] == "PASS", f"{part} {name}: {verdict}\n{run.log[-3000:]}"
