"""docs/configuration.md stays true: its full example and its partition linker script work."""

from __future__ import annotations

import re

from tool_support import APP_S, CROSS, REPO, run

DOC = REPO / "docs" / "configuration.md"


def code_blocks(text: str) -> list[str]:
    return re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)


def test_full_example_and_linker_script(workdir, cli):
    blocks = code_blocks(DOC.read_text())
    script = next(b for b in blocks if "PHDRS" in b)
    example = next(b for b in blocks if b.startswith("# Two partitions"))
    images = workdir / "build" / "partitions"
    images.mkdir(parents=True)
    (images / "link.ld").write_text(script)
    (images / "app.S").write_text(APP_S)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,link.ld", "-o", "app.elf",
         "app.S"], images)
    (images / "control.elf").write_bytes((images / "app.elf").read_bytes())
    (workdir / "configs").mkdir()
    (workdir / "configs" / "example.yaml").write_text(example)
    assert cli("check", "configs/example.yaml") == (0, "configs/example.yaml: ok (2 partitions)\n", "")
