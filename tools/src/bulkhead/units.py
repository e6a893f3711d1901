"""Integers as written in the YAML file, and how numbers appear in messages."""

from __future__ import annotations

import re

K = 1 << 10
M = 1 << 20
G = 1 << 30

_SUFFIX = {"": 1, "K": K, "M": M, "G": G}
_INT_RE = re.compile(r"(0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0|[1-9][0-9]*(?:_[0-9]+)*)([KMG]?)")
U64_MAX = (1 << 64) - 1


def parse_int(text: str) -> int | None:
    """Decimal or 0x hex (digits may be grouped with _), optionally followed by K, M or G
    (binary multiples); None if malformed."""
    match = _INT_RE.fullmatch(text.strip())
    if match is None:
        return None
    return int(match.group(1), 0) * _SUFFIX[match.group(2)]


def hexa(value: int) -> str:
    return f"{value:#x}"


def size_text(value: int) -> str:
    """2M, 4K, 1G when exact, else hex."""
    for unit, factor in (("G", G), ("M", M), ("K", K)):
        if value and value % factor == 0:
            return f"{value // factor}{unit}"
    return hexa(value)


def span(start: int, size: int) -> str:
    """An address range as first-last byte, e.g. 0x40000000-0x401fffff."""
    return f"{start:#010x}-{start + size - 1:#010x}"


def align_down(value: int, align: int) -> int:
    return value - value % align


def align_up(value: int, align: int) -> int:
    return align_down(value + align - 1, align)
