"""Fixtures for the bulkhead tool tests: tiny AArch64 partition images and a scratch directory."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bulkhead.cli import main  # noqa: E402
from tool_support import (APP_S, CROSS, PARTITION_LD, TESTS_S, X86_S, make_fake_linux, run,  # noqa: E402
                          without_section_headers)


def _cross_elf(directory: Path, name: str, source: str) -> None:
    (directory / f"{name}.S").write_text(source)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,partition.ld",
         "-o", f"{name}.elf", f"{name}.S"], directory)


@pytest.fixture(scope="session")
def images(tmp_path_factory) -> Path:
    """A directory with app.elf, tests.elf (has .bh_tests), stripped.elf (tests.elf without its section
    header table), x86.elf, notelf.elf (text) and linux/ (a fake Linux kernel, busybox and modules:
    tool_support.make_fake_linux)."""
    directory = tmp_path_factory.mktemp("images")
    (directory / "partition.ld").write_text(PARTITION_LD)
    _cross_elf(directory, "app", APP_S)
    _cross_elf(directory, "tests", TESTS_S)
    (directory / "stripped.elf").write_bytes(without_section_headers((directory / "tests.elf").read_bytes()))
    (directory / "x86.S").write_text(X86_S)
    run(["gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-o", "x86.elf", "x86.S"], directory)
    (directory / "notelf.elf").write_text("this is not an ELF file\n")
    make_fake_linux(directory)
    return directory


@pytest.fixture
def workdir(tmp_path: Path, images: Path, monkeypatch) -> Path:
    """The current directory for a test, holding copies of the images."""
    for elf in images.glob("*.elf"):
        shutil.copy(elf, tmp_path / elf.name)
    (tmp_path / "linux").symlink_to(images / "linux")  # the fake Linux of tool_support.make_fake_linux
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def cli(capsys):
    """Run the bulkhead command line in-process: cli(args...) -> (status, stdout, stderr)."""
    def invoke(*argv: str) -> tuple[int, str, str]:
        status = main(list(argv))
        out, err = capsys.readouterr()
        return status, out, err
    return invoke
