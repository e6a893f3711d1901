"""Shared constants and helpers of the bulkhead tool tests (fixtures are in conftest.py).

Named uniquely (not conftest) so that test modules can import it even when pytest also loads
another directory's conftest.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).parent
BAD_DIR = HERE / "bad"
GOOD_DIR = HERE / "good"
REPO = HERE.parent.parent
CONFIG_INCLUDE = REPO / "hypervisor" / "include"
CROSS = "aarch64-linux-gnu-"

# Partition link script: three PT_LOAD segments (text, data, bss-only) and no loaded ELF headers.
PARTITION_LD = """\
ENTRY(_start)
PHDRS { text PT_LOAD; data PT_LOAD; bss PT_LOAD; }
SECTIONS {
  . = 0x40000000;
  .text : { *(.text*) } :text
  .bh_tests : { *(.bh_tests) } :text
  . = ALIGN(0x1000);
  .data : { *(.data*) } :data
  . = ALIGN(0x1000);
  .bss (NOLOAD) : { *(.bss*) } :bss
}
"""

APP_S = """\
	.text
	.global _start
_start:
	b .
	.data
	.quad 0x1122334455667788
	.bss
	.space 8192
"""

TESTS_S = APP_S + """\
	.section .bh_tests,"a"
	.quad 1
"""

X86_S = """\
	.text
	.global _start
_start:
	jmp _start
"""


def run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
