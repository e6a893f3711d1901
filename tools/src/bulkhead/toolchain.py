"""Running the cross toolchain; a failing command becomes a ToolError with its output."""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path


class ToolError(Exception):
    """A command cannot do its work: an external command failed or could not be started, or an input other
    than the configuration is unusable (printed as "bulkhead: error: ...")."""


@dataclass(frozen=True)
class Toolchain:
    cross: str
    include: tuple[Path, ...]

    def compile(self, source: Path, obj: Path) -> None:
        flags = ["-std=c11", "-ffreestanding", "-fno-pic", "-mgeneral-regs-only", "-O2",
                 "-Wall", "-Wextra", "-Werror"]
        includes = [arg for inc in self.include for arg in ("-I", str(inc))]
        run([f"{self.cross}gcc", *flags, *includes, "-c", str(source), "-o", str(obj)])

    def link(self, script: Path, lib: Path, objects: list[Path], out: Path,
             defsyms: dict[str, int] | None = None) -> None:
        symbols = [f"--defsym={name}={value:#x}" for name, value in (defsyms or {}).items()]
        run([f"{self.cross}ld", "-nostdlib", "--build-id=none", *symbols, "-T", str(script),
             "--whole-archive", str(lib), "--no-whole-archive", *map(str, objects), "-o", str(out)])

    def binary(self, elf: Path, out: Path) -> None:
        run([f"{self.cross}objcopy", "-O", "binary", str(elf), str(out)])


def run(argv: list[str]) -> None:
    try:
        result = subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        raise ToolError(f"cannot run {argv[0]}: {exc.strerror}; install it or pass --cross") from exc
    if result.returncode != 0:
        output = (result.stderr + result.stdout).rstrip()
        raise ToolError(f"command failed (exit {result.returncode}): {shlex.join(argv)}\n{output}")
