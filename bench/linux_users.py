"""Linux as users run it, in `make bench` (issue 13, item 7): virtio-net throughput and
cyclictest, bare (no Bulkhead) against Linux in a partition beside a busy real-time partition.

Debian's kernel (2 vCPUs on dedicated cores 2 and 3) owns QEMU's virtio-net by pass-through, its
CPU 1 isolated for real-time work. Bare is bulkhead.qemu.bare_linux_command: the same kernel,
initramfs, command line and network.

  net         bench/linux_net.yaml (Linux alone): wget of NET_MIB MiB from an HTTP server of this
              process on the host's loopback (QEMU's user-mode network forwards 10.0.2.2 to
              127.0.0.1), timed by Linux's /proc/uptime, NET_RUNS transfers per boot, median.
              Without -icount (a virtual clock that runs with the instructions cannot time a
              host-side peer), so the figure depends on the host and on what else it runs.
  cyclictest  bench/linux_users.yaml (beside `busy`, a real-time partition spinning through half
              of core 1): Debian's cyclictest on the isolated CPU, CYCLICTEST_LOOPS wake-ups at
              1 ms, under -icount shift=0 (one instruction a nanosecond).
"""

from __future__ import annotations

import http.server
import re
import statistics
import sys
import threading
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"
sys.path.insert(0, str(ROOT / "tests" / "system"))

from harness import Console, build_image, partition_view  # noqa: E402

from bulkhead.config import load  # noqa: E402
from bulkhead.qemu import bare_linux_command, qemu_command  # noqa: E402

CONFIG = ROOT / "bench" / "linux_users.yaml"
NET_CONFIG = ROOT / "bench" / "linux_net.yaml"
NET_MIB = 64
NET_RUNS = 5
CYCLICTEST_LOOPS = 2000
CYCLICTEST = f"cyclictest -q -m -p 80 -a 1 -t 1 -i 1000 -l {CYCLICTEST_LOOPS}"
CYCLIC_SUMMARY = re.compile(r"T: 0 \(\s*\d+\) P:80 I:1000 C:\s*(\d+) Min:\s*(\d+) Act:\s*\d+ Avg:\s*(\d+) "
                            r"Max:\s*(\d+)\s*\n")
TIMED = re.compile(r"BHNET-TIME (\d+\.\d+) (\d+\.\d+) (\d+)\n")
CHUNK = bytes(1 << 20)


class _Zeros(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the http.server name)
        self.send_response(200)
        self.send_header("Content-Length", str(NET_MIB * len(CHUNK)))
        self.end_headers()
        for _ in range(NET_MIB):
            self.wfile.write(CHUNK)

    def log_message(self, *args):
        pass


class Linux:
    """A booted Linux of config, bare or in its partition, at its shell prompt."""

    def __init__(self, config: Path, bare: bool, icount: bool):
        system = load(config)
        if bare:
            out = BUILD / "bench" / f"{config.stem}_bare"
            argv = bare_linux_command(system, "linux", out, icount=icount, interactive=False)
            self.view: Callable[[str], str] = lambda raw: raw.replace("\r", "")
        else:
            image = build_image(config, BUILD / "bench" / "images" / config.stem)
            argv = qemu_command(system, image, icount=icount, interactive=False)
            self.view = lambda raw: partition_view(raw, "linux")
        self.kind = "bare" if bare else "partition"
        self.con = Console(argv, f"{config.name} ({self.kind}{', icount' if icount else ''})")
        self.pos = 0

    def __enter__(self) -> "Linux":
        self.con.__enter__()
        self.expect(r"BHLINUX online=\S+\n", 300)
        self.expect(r"/ # ", 60)
        return self

    def __exit__(self, *exc) -> None:
        self.con.__exit__(*exc)

    def expect(self, pattern: str | re.Pattern, timeout: float) -> re.Match:
        rx = re.compile(pattern)
        m = self.con.until(lambda: rx.search(self.view(self.con.raw), self.pos), f"/{rx.pattern}/", timeout)
        self.pos = m.end()
        return m

    def run(self, command: str, answer: re.Pattern, timeout: float) -> re.Match:
        self.con.send(command + "\r")
        m = self.expect(answer, timeout)
        self.expect(r"/ # ", 60)
        return m


def net_mbps(bare: bool, port: int) -> list[float]:
    """MB/s (10^6 bytes a second of Linux's time) of each of NET_RUNS transfers."""
    with Linux(NET_CONFIG, bare, icount=False) as linux:
        linux.run("udhcpc -i eth0 -n -q -t 10 >/dev/null 2>&1; echo BHNET-UP $?", re.compile(r"BHNET-UP 0\n"), 60)
        rates = []
        for _ in range(NET_RUNS):
            m = linux.run(f"T0=$(cut -d' ' -f1 /proc/uptime); wget -q -O - http://10.0.2.2:{port}/ | wc -c "
                          f">/tmp/n; echo BHNET-TIME $T0 $(cut -d' ' -f1 /proc/uptime) $(cat /tmp/n)", TIMED, 300)
            if int(m[3]) != NET_MIB * len(CHUNK):
                raise RuntimeError(f"{linux.kind}: wget got {m[3]} bytes of {NET_MIB} MiB")
            rates.append(NET_MIB * len(CHUNK) / (float(m[2]) - float(m[1])) / 1e6)
        return rates


def cyclictest(bare: bool) -> tuple[int, int, int, int]:
    """(loops, min, avg, max in us) of CYCLICTEST under -icount."""
    with Linux(CONFIG, bare, icount=True) as linux:
        m = linux.run(CYCLICTEST, CYCLIC_SUMMARY, 900)
    return int(m[1]), int(m[2]), int(m[3]), int(m[4])


def collect(methods: dict[str, str]) -> dict[str, dict]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Zeros)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    net = {}
    try:
        for bare in (True, False):
            net[bare] = net_mbps(bare, server.server_address[1])
            print(f"linux_users: virtio-net {'bare' if bare else 'partition'}: {net[bare]} MB/s", file=sys.stderr)
    finally:
        server.shutdown()
    cyclic = {}
    for bare in (True, False):
        cyclic[bare] = cyclictest(bare)
        print(f"linux_users: cyclictest {'bare' if bare else 'partition'}: {cyclic[bare]}", file=sys.stderr)
    results: dict[str, dict] = {}

    def put(name: str, value, unit: str, method: str) -> None:
        results[name] = {"value": value, "unit": unit}
        methods[name] = method

    for bare, kind in ((True, "bare"), (False, "partition")):
        rates = net[bare]
        put(f"linux_virtio_net_MBps_{kind}", round(statistics.median(rates), 1), "MB/s",
            f"bench/linux_net.yaml {'bare (no Bulkhead)' if bare else 'in its partition'}: "
            f"wget of {NET_MIB} MiB over virtio-net from an HTTP server on the host's loopback, timed by Linux's "
            f"/proc/uptime, median of {', '.join(f'{r:.1f}' for r in rates)} (TCG without -icount: host-dependent)")
    put("linux_virtio_net_partition_over_bare", round(statistics.median(net[False]) / statistics.median(net[True]), 2),
        "ratio", "linux_virtio_net_MBps_partition / linux_virtio_net_MBps_bare (pass-through: no trap per packet)")
    for bare, kind in ((True, "bare"), (False, "partition")):
        loops, low, avg, high = cyclic[bare]
        where = "bare" if bare else "in its partition beside `busy`, a real-time partition spinning through half of core 1 (500 us of every 1 ms)"
        for name, value in (("min", low), ("avg", avg), ("max", high)):
            put(f"linux_cyclictest_{name}_us_{kind}", value, "us",
                f"-icount shift=0: Debian's cyclictest -m -p 80 on isolated CPU 1, {loops} wake-ups at 1 ms, {where}: "
                f"its {name} latency")
    return results


if __name__ == "__main__":
    found: dict[str, str] = {}
    for name, r in collect(found).items():
        print(f"{name:40s} {r['value']:>10} {r['unit']:6s} {found[name]}")
