"""A small device tree model: nodes and properties as data, written out as DTS source and compiled by dtc.

Property values:
  None                 an empty property (`interrupt-controller;`)
  str                  a string
  list[str]            a string list (`"arm,pl011", "arm,primecell"`)
  Cells                one cell array (`<0x0 0x8000000 0x0 0x10000>`); cells are ints or Ref
  list[Cells]          several cell arrays (`<1 13 4>, <1 14 4>`)
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from bulkhead.toolchain import ToolError


@dataclass(frozen=True)
class Ref:
    """A phandle reference to the node with this label (`<&label>`)."""

    label: str


@dataclass(frozen=True)
class Cells:
    values: tuple[int | Ref, ...]
    hex: bool = False  # write the numbers in hexadecimal (addresses, sizes) instead of decimal

    def __init__(self, *values: int | Ref, hex: bool = False) -> None:
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "hex", hex)


def u64_cells(value: int) -> tuple[int, int]:
    """A 64-bit number as two cells (high, low), for #address-cells = #size-cells = 2."""
    return value >> 32, value & 0xFFFF_FFFF


def reg(address: int, size: int) -> Cells:
    return Cells(*u64_cells(address), *u64_cells(size), hex=True)


def address(value: int) -> Cells:
    """A 64-bit address as two hexadecimal cells."""
    return Cells(*u64_cells(value), hex=True)


@dataclass
class Node:
    name: str                 # with its unit address, e.g. "memory@48000000"; "" for the root
    props: list[tuple[str, object]] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    label: str | None = None

    def prop(self, name: str, value: object = None) -> Node:
        self.props.append((name, value))
        return self

    def add(self, child: Node) -> Node:
        self.children.append(child)
        return child

    def child(self, name: str) -> Node | None:
        return next((c for c in self.children if c.name == name), None)

    def path_of(self, target: Node, prefix: str = "") -> str | None:
        """The full path of target below this node (the root gives "/name/...")."""
        for c in self.children:
            path = f"{prefix}/{c.name}"
            if c is target:
                return path
            found = c.path_of(target, path)
            if found:
                return found
        return None


def _string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


def _cell(value: int | Ref, hex: bool) -> str:
    if isinstance(value, Ref):
        return f"&{value.label}"
    if not 0 <= value <= 0xFFFF_FFFF:
        raise ValueError(f"cell value {value:#x} does not fit in 32 bits")
    return f"{value:#x}" if hex and value > 9 else str(value)


def _value(value: object) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, Cells):
        return "<" + " ".join(_cell(v, value.hex) for v in value.values) + ">"
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return ", ".join(_string(v) for v in value)
    if isinstance(value, list) and value and all(isinstance(v, Cells) for v in value):
        return ", ".join(_value(v) for v in value)
    raise TypeError(f"unsupported property value {value!r}")


def _node(node: Node, depth: int) -> list[str]:
    indent = "\t" * depth
    head = f"{node.label}: " if node.label else ""
    lines = [f"{indent}{head}{node.name or '/'} {{"]
    for name, value in node.props:
        lines.append(f"{indent}\t{name};" if value is None else f"{indent}\t{name} = {_value(value)};")
    for child in node.children:
        lines.append("")
        lines += _node(child, depth + 1)
    lines.append(f"{indent}}};")
    return lines


def to_dts(root: Node, header: str = "") -> str:
    comment = "".join(f"// {line}\n" for line in header.splitlines())
    return "/dts-v1/;\n" + comment + "\n" + "\n".join(_node(root, 0)) + "\n"


def compile_dts(dts: Path, dtb: Path, dtc: str = "dtc") -> str:
    """Compile DTS source into a blob; returns dtc's warnings (empty when there are none)."""
    argv = [dtc, "-I", "dts", "-O", "dtb", "-o", str(dtb), str(dts)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True)
    except OSError as exc:
        raise ToolError(f"cannot run {dtc}: {exc.strerror}; install the device tree compiler (package "
                        f"device-tree-compiler, done by scripts/bootstrap.sh)") from exc
    if done.returncode != 0:
        raise ToolError(f"command failed (exit {done.returncode}): {' '.join(argv)}\n{done.stderr.rstrip()}")
    return done.stderr
