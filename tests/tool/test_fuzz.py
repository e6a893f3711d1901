"""Property-based fuzzing (Hypothesis) of system descriptions and partition images: the tool never
raises, every rejection has a line and column, and an accepted image is one the hypervisor can
copy (every segment's bytes inside the file, no overlap, no wrap).

Deterministic (derandomize): the normal run tries BULKHEAD_FUZZ_EXAMPLES examples per property
(default 100, about ten seconds); a long campaign raises it."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bulkhead import config
from bulkhead.elfimage import ElfProblem, parse_elf
from tool_support import GOOD_DIR

EXAMPLES = int(os.environ.get("BULKHEAD_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

GOOD_CONFIGS = sorted(p.name for p in GOOD_DIR.glob("*.yaml") if p.name != "linux.yaml")
# Values that have broken parsers before: sizes at the edges, other types, control characters.
TOKENS = ["0", "1", "-1", "0x0", "0xffffffffffffffff", "0x10000000000000000", "99999999999999999999", "4K", "2M",
          "3G", "1T", "0x4000_0000", "1.5", "1e9", "10ms", "0ns", "1ns", "15ns", "1s", "true", "null", "~", "''",
          "[]", "{}", "[1, 2]", "{a: 1}", "&a x", "*a", "!!binary AA==", "'\x00'", "\x01", "\t", "é", "rwx", "x",
          "device", "cyclic", "edf", "app.0", "app.9", ": :", "- -", "[[[[", "}}", "#", "'", '"', "\\", "%YAML 1.1"]
TOKENS += ["[" * 40 + "]" * 40, "{a: " * 40 + "}" * 40]


def every_error_has_a_position(path: Path) -> None:
    system, errors = config.check(path)  # must not raise
    for error in errors:
        assert error.pos is not None and error.pos.line >= 1 and error.pos.col >= 1, error


@pytest.fixture
def scratch(workdir: Path) -> Path:
    for name in GOOD_CONFIGS:
        shutil.copy(GOOD_DIR / name, workdir / name)
    return workdir


@FUZZ
@given(name=st.sampled_from(GOOD_CONFIGS), line=st.integers(0, 200), token=st.sampled_from(TOKENS),
       keep_key=st.booleans())
def test_a_value_replaced_by_anything(scratch, name, line, token, keep_key):
    lines = (GOOD_DIR / name).read_text().splitlines()
    index = line % len(lines)
    key, colon, _ = lines[index].partition(": ")
    lines[index] = f"{key}{colon}{token}" if keep_key and colon else token
    target = scratch / f"fuzz_{name}"
    target.write_text("\n".join(lines) + "\n")
    every_error_has_a_position(target)


@FUZZ
@given(name=st.sampled_from(GOOD_CONFIGS),
       edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 8), st.text(max_size=8)), min_size=1,
                      max_size=4))
def test_text_edited_anywhere(scratch, name, edits):
    text = (GOOD_DIR / name).read_text()
    for at, cut, insert in edits:
        at %= len(text) + 1
        text = text[:at] + insert + text[at + cut:]
    target = scratch / f"fuzz_{name}"
    target.write_text(text)
    every_error_has_a_position(target)


@FUZZ
@given(name=st.sampled_from(GOOD_CONFIGS), at=st.integers(0, 1 << 16), junk=st.binary(min_size=1, max_size=6))
def test_bytes_edited_anywhere(scratch, name, at, junk):
    data = (GOOD_DIR / name).read_bytes()
    at %= len(data) + 1
    target = scratch / f"fuzz_{name}"
    target.write_bytes(data[:at] + junk + data[at:])
    every_error_has_a_position(target)


# --- partition images ------------------------------------------------------------------------

EHDR_FIELDS = {"entry": (24, "Q"), "phoff": (32, "Q"), "shoff": (40, "Q"), "phentsize": (54, "H"),
               "phnum": (56, "H"), "shentsize": (58, "H"), "shnum": (60, "H"), "shstrndx": (62, "H")}
PHDR_FIELDS = {"type": (0, "I"), "flags": (4, "I"), "offset": (8, "Q"), "vaddr": (16, "Q"), "paddr": (24, "Q"),
               "filesz": (32, "Q"), "memsz": (40, "Q")}
NUMBERS = st.one_of(st.integers(0, 0x20000), st.sampled_from([0x40000000, 0x40001000, 0x7FFF_FFFF, 0xFFFF_FFFF,
                                                              1 << 63, (1 << 64) - 1, (1 << 64) - 0x1000]),
                    st.integers(0, (1 << 64) - 1))


def edit_field(data: bytearray, offset: int, kind: str, value: int) -> None:
    struct.pack_into("<" + kind, data, offset, value % (1 << (8 * struct.calcsize(kind))))


def accepted_image_is_copyable(data: bytes) -> None:
    try:
        image = parse_elf(data)
    except ElfProblem:
        return
    assert image.segments
    for seg in image.segments:
        assert len(seg.data) == seg.file_size <= seg.mem_size
        assert seg.ipa + seg.mem_size <= 1 << 64
    ordered = sorted(image.segments, key=lambda s: s.ipa)
    assert all(a.ipa + a.size <= b.ipa for a, b in zip(ordered, ordered[1:]))


@FUZZ
@given(edits=st.lists(st.one_of(
    st.tuples(st.just("ehdr"), st.sampled_from(sorted(EHDR_FIELDS)), st.just(0), NUMBERS),
    st.tuples(st.just("phdr"), st.sampled_from(sorted(PHDR_FIELDS)), st.integers(0, 2), NUMBERS)),
    min_size=1, max_size=4), cut=st.one_of(st.none(), st.integers(0, 0x12000)))
def test_image_headers_edited(images, edits, cut):
    data = bytearray((images / "app.elf").read_bytes())
    for table, field, index, value in edits:
        offset, kind = EHDR_FIELDS[field] if table == "ehdr" else PHDR_FIELDS[field]
        edit_field(data, offset if table == "ehdr" else 64 + 56 * index + offset, kind, value)
    accepted_image_is_copyable(bytes(data[:cut] if cut is not None else data))


@FUZZ
@given(at=st.integers(0, 0x200), junk=st.binary(min_size=1, max_size=16))
def test_image_bytes_overwritten(images, at, junk):
    data = bytearray((images / "app.elf").read_bytes())
    data[at:at + len(junk)] = junk
    accepted_image_is_copyable(bytes(data))


@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from(sorted(PHDR_FIELDS)), st.integers(0, 2), NUMBERS), min_size=1,
                      max_size=3))
def test_edited_image_errors_are_at_the_image_key(scratch, edits):
    data = bytearray((scratch / "app.elf").read_bytes())
    for field, index, value in edits:
        offset, kind = PHDR_FIELDS[field]
        edit_field(data, 64 + 56 * index + offset, kind, value)
    (scratch / "app.elf").write_bytes(bytes(data))
    every_error_has_a_position(scratch / "demo.yaml")
