"""A hostile unmodified guest against the emulated qemu-virt board (docs/architecture.md, virtual
boards): each probe does what a guest may do to a device and must see what it sees under QEMU's
own virt machine (the same image under bare QEMU is the reference), and nothing else in the
system may notice."""

from __future__ import annotations

from harness import BUILD, run_system
from test_firmware import bare_probe, probe_lines

RTC_PAST = BUILD / "board" / "rtcpast.fd"


def test_rtc_match_in_the_past_fires_as_qemus_pl031():
    """rtcpast (partitions/board/rtcpast) sets the PL031 match in the past, at the current second,
    across the 32-bit wrap, and loads the clock onto and past it. QEMU's PL031 counts forward
    modulo 2^32: a match behind the clock is 2^32 seconds away, not due; one across the wrap comes
    after the wrap. The partition's PL031 must print the same lines."""
    bare = bare_probe(RTC_PAST, "rtcpast")
    assert bare[-1] == "rtcpast: done" and len(bare) == 8, bare
    assert "rtcpast: match in the past, ris within 1.5 s 0x00000000" in bare, bare
    run = run_system("firmware_rtcpast.yaml", timeout=60, until=lambda r: r.index(r"^\[rtc\] rtcpast: done") >= 0)
    assert probe_lines(run.lines, "rtcpast", "[rtc] ") == bare
    assert run.index(r"HM: partition") < 0
