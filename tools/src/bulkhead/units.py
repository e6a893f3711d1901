"""Integers as written in the YAML file, and how numbers appear in messages."""

from __future__ import annotations

import re

K = 1 << 10
M = 1 << 20
G = 1 << 30

_SUFFIX = {"": 1, "K": K, "M": M, "G": G}
_INT_RE = re.compile(r"(0[xX][0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0|[1-9][0-9]*(?:_[0-9]+)*)([KMG]?)")
U64_MAX = (1 << 64) - 1

# Durations: an integer (digits may be grouped with _) and a unit; stored in nanoseconds.
DURATION_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_DURATION_RE = re.compile(r"(0|[1-9][0-9]*(?:_[0-9]+)*)(ns|us|ms|s)")


def parse_int(text: str) -> int | None:
    """Decimal or 0x hex (digits may be grouped with _), optionally followed by K, M or G
    (binary multiples); None if malformed."""
    match = _INT_RE.fullmatch(text.strip())
    if match is None:
        return None
    return int(match.group(1), 0) * _SUFFIX[match.group(2)]


def parse_duration(text: str) -> int | None:
    """'200us', '1ms', '1_000ns', '2s' -> nanoseconds; None if malformed (no unit, unknown unit)."""
    match = _DURATION_RE.fullmatch(text.strip())
    if match is None:
        return None
    return int(match.group(1)) * DURATION_UNITS[match.group(2)]


def duration_text(ns: int) -> str:
    """A duration in the largest unit that shows it exactly: 1ms, 250us, 1500ns, 2s."""
    for unit in ("s", "ms", "us"):
        factor = DURATION_UNITS[unit]
        if ns and ns % factor == 0:
            return f"{ns // factor}{unit}"
    return f"{ns}ns"


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
