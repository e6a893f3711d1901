"""Numbers as written in a system description."""

import pytest

from bulkhead.units import parse_int, size_text, span


@pytest.mark.parametrize("text, value", [
    ("0", 0), ("4", 4), ("4096", 4096), ("0x1000", 0x1000), ("0X1F", 0x1F), ("4K", 4096),
    ("2M", 2 << 20), ("1G", 1 << 30), ("0x10K", 0x10 << 10), ("0x4000_0000", 0x40000000), ("1_000", 1000),
])
def test_parse_int_accepts(text, value):
    assert parse_int(text) == value


@pytest.mark.parametrize("text", ["", "-1", "2X", "1T", "4k", "2 M", "010", "0x", "1.5", "0x_1", "1__0", "M"])
def test_parse_int_rejects(text):
    assert parse_int(text) is None


def test_message_formats():
    assert [size_text(v) for v in (4096, 2 << 20, 3 << 30, 0x1801)] == ["4K", "2M", "3G", "0x1801"]
    assert span(0x9000000, 0x1000) == "0x09000000-0x09000fff"
