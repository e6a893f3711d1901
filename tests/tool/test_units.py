"""Numbers and durations as written in a system description, and how messages show them."""

from fractions import Fraction

import pytest

from bulkhead.scheduling import ratio_text, span_text
from bulkhead.units import duration_text, parse_duration, parse_int, size_text, span


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


@pytest.mark.parametrize("text, ns", [
    ("0ns", 0), ("0us", 0), ("1ns", 1), ("200us", 200_000), ("1ms", 1_000_000), ("2s", 2_000_000_000),
    ("1_000us", 1_000_000), ("  5ms ", 5_000_000),
])
def test_parse_duration_accepts(text, ns):
    assert parse_duration(text) == ns


@pytest.mark.parametrize("text", ["", "1000", "1", "ms", "1.5ms", "-1ms", "1 ms", "10min", "1MS", "1µs", "01ms",
                                  "0x10us", "1__0us", "1m"])
def test_parse_duration_rejects(text):
    assert parse_duration(text) is None


def test_duration_formats():
    assert [duration_text(v) for v in (0, 1, 1500, 250_000, 1_000_000, 1_200_000, 3_000_000_000)] == \
        ["0ns", "1ns", "1500ns", "250us", "1ms", "1200us", "3s"]
    assert span_text(0, 200_000) == "0us-200us"
    assert span_text(1_000_000, 2_000_000) == "1ms-2ms"
    assert [ratio_text(Fraction(n, d)) for n, d in ((5, 4), (3, 2), (1001, 1000), (100001, 100000), (1, 2))] == \
        ["1.25", "1.5", "1.001", "1.00001", "0.5"]
