"""The boot checker from the tool's side: the tables `bulkhead build` generates for a description,
compiled for the host with the hypervisor's core/ and the fake architecture (tests/unit/bootcheck,
built by `make bootcheck-lib`), run through the hypervisor's boot path. Exit 0: the hypervisor
accepts the tables; otherwise the output holds its panic."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bulkhead.build import generate
from bulkhead.model import System
from tool_support import CONFIG_INCLUDE, REPO

BOOTCHECK_BUILD = REPO / "build" / "bootcheck"
LIBRARY = BOOTCHECK_BUILD / "libbootcheck.a"
MAIN = BOOTCHECK_BUILD / "boot.o"
# The tables must compile warning-free for the host as for the target (toolchain.Toolchain.compile).
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE)]
# The library is built with the unit tests' sanitizers; the link needs their run-time libraries.
LDFLAGS = ["-fsanitize=address,undefined"]
TIMEOUT = 120


@dataclass(frozen=True)
class Boot:
    status: int  # the checker's exit status; negative: killed by that signal
    output: str  # what it and the hypervisor printed

    @property
    def ok(self) -> bool:
        return self.status == 0


def build_checker() -> None:
    """Bring the library up to date (make is incremental: a second call costs a fraction of a second)."""
    done = subprocess.run(["make", "-s", "bootcheck-lib"], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"make bootcheck-lib failed:\n{done.stdout}{done.stderr}")


def boot(system: System, source_name: str, out: Path) -> Boot:
    """Generate the tables of a checked system into out, link the checker and run it."""
    sources = generate(system, source_name, out)
    objects = [out / "bh_config.o", out / "bh_images.o"]
    _run(["gcc", *CFLAGS, "-c", str(sources.config_c), "-o", str(objects[0])])
    _run(["gcc", "-c", str(sources.images_s), "-o", str(objects[1])])
    checker = out / "bootcheck"
    _run(["gcc", *LDFLAGS, str(MAIN), *map(str, objects), str(LIBRARY), "-o", str(checker)])
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    done = subprocess.run([str(checker)], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    return Boot(done.returncode, done.stdout + done.stderr)


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}")
