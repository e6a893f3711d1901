"""docs/configuration.md stays true: its full examples, its partition linker script and the plan
output it shows work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tool_support import APP_S, CROSS, REPO, run

DOC = REPO / "docs" / "configuration.md"


def code_blocks(text: str) -> list[str]:
    return re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)


@pytest.fixture
def blocks() -> list[str]:
    return code_blocks(DOC.read_text())


@pytest.fixture
def doc_images(workdir: Path, blocks: list[str]) -> Path:
    """build/partitions/{app,control}.elf linked with the documented linker script; configs/ for examples."""
    script = next(b for b in blocks if "PHDRS" in b)
    images = workdir / "build" / "partitions"
    images.mkdir(parents=True)
    (images / "link.ld").write_text(script)
    (images / "app.S").write_text(APP_S)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,link.ld", "-o", "app.elf",
         "app.S"], images)
    (images / "control.elf").write_bytes((images / "app.elf").read_bytes())
    (workdir / "configs").mkdir()
    return workdir


def test_full_example_and_linker_script(doc_images, blocks, cli):
    example = next(b for b in blocks if b.startswith("# Two partitions"))
    (doc_images / "configs" / "example.yaml").write_text(example)
    assert cli("check", "configs/example.yaml") == (0, "configs/example.yaml: ok (2 partitions)\n", "")


def test_scheduling_example_and_its_plan(doc_images, blocks, cli):
    example = next(b for b in blocks if b.startswith("# Four cores, four policies"))
    (doc_images / "configs" / "mixed.yaml").write_text(example)
    assert cli("check", "configs/mixed.yaml") == (0, "configs/mixed.yaml: ok (4 partitions)\n", "")
    shown = next(b for b in blocks if b.startswith("plan 'normal' (initial), major frame 10ms"))
    assert cli("plan", "configs/mixed.yaml") == (0, shown, "")

