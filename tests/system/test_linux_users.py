"""Linux as users run it (issue 13, item 7): Debian's kernel in a partition with virtio-net by
pass-through, beside counter, a paravirtual partition printing a line every 10 ms.

One boot checks what the initramfs builder and the demo init give a user: modprobe loads a driver
with the modules it depends on (modules.dep from depmod), /dev/shm is a tmpfs, busybox udhcpc
configures the interface from QEMU's DHCP server (address, default route, resolv.conf) and the
network carries a real HTTP request to the host, Debian's dynamically linked cyclictest runs with
the libraries the tool resolved, on a CPU isolated for it (isolcpus, nohz_full, irqaffinity) and
with a device interrupt moved to it and back; every Linux line reaches the console whole while
counter prints beside it; and `poweroff -f` halts Linux only."""

from __future__ import annotations

import http.server
import re
import threading

from bulkhead.config import load
from bulkhead.qemu import bare_linux_command, qemu_command
from harness import BUILD, CONFIGS, Console, build_image, partition_view
from test_linux_guests import PROMPT, linux_expect, shell

LONG_LINES = 300
FILL = 150  # characters of '0' after "BHLONG <n> "
WHOLE_LONG = re.compile(rf"^\[linux\] BHLONG (\d+) 0{{{FILL}}}\r+$", re.M)
CUT_LONG = re.compile(r"^\[linux\] BHLONG \d+ ")
# A note after a line broken off (LF CR, console.c) begins with that CR.
LOSS_NOTE = re.compile(r"^\r*\[linux\] \.\.\. \(\d+ bytes dropped\)", re.M)


class _Answer(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the http.server name)
        body = b"BHNET hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_linux_as_users_run_it():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with Console.boot("linux_users.yaml") as con:
            m = linux_expect(con, r"^BHLINUX online=(\S+)\n", 90)  # the whole line, not a part on the wire
            assert m[1] == "0-1", "both vCPUs are up"
            linux_expect(con, PROMPT)
            assert "modprobe failed" not in partition_view(con.raw, "linux")

            # modprobe (in init) loaded virtio_net and the modules it needs, in order.
            modules = shell(con, "cut -d' ' -f1,4 /proc/modules")
            for name, used_by in (("virtio_net", "-"), ("net_failover", "virtio_net,"), ("failover", "net_failover,")):
                assert re.search(rf"^{name} {used_by}$", modules, re.M), modules
            assert "virtio_net" in shell(con, "modprobe -D virtio_net 2>&1 || cat /lib/modules/*/modules.dep")

            # /dev/shm is a tmpfs everyone can write.
            assert re.search(r"^tmpfs /dev/shm tmpfs rw,nosuid,nodev", shell(con, "cat /proc/mounts"), re.M)
            assert shell(con, "echo shared > /dev/shm/x && cat /dev/shm/x && ls -ld /dev/shm | cut -c1-10") == \
                "shared\ndrwxrwxrwt\n"

            # udhcpc's default script configures what the lease says.
            out = shell(con, "udhcpc -i eth0 -n -q -t 10 2>&1", 60)
            assert "udhcpc: eth0 bound 10.0.2.15 netmask 255.255.255.0 router 10.0.2.2 dns 10.0.2.3" in out, out
            assert "inet addr:10.0.2.15" in shell(con, "ifconfig eth0")
            assert re.search(r"^0\.0\.0\.0 +10\.0\.2\.2 +0\.0\.0\.0 +UG .* eth0$", shell(con, "route -n"), re.M)
            assert "nameserver 10.0.2.3" in shell(con, "cat /etc/resolv.conf")
            # ... and the network works: QEMU forwards 10.0.2.2 to the host, where this test answers.
            port = server.server_address[1]
            assert "BHNET hello from the host" in shell(con, f"wget -q -O - http://10.0.2.2:{port}/ 2>&1", 60)

            # Real-time tuning: CPU 1 is isolated, and the network interrupt stayed on CPU 0
            # (irqaffinity=0) until moved to CPU 1, where it then arrives.
            assert shell(con, "cat /sys/devices/system/cpu/isolated /sys/devices/system/cpu/nohz_full") == "1\n1\n"
            irq = re.search(r"^ *(\d+): +(\d+) +(\d+) .*virtio0", shell(con, "cat /proc/interrupts"), re.M)
            assert irq and int(irq[2]) > 0 and int(irq[3]) == 0, irq
            shell(con, f"echo 2 > /proc/irq/{irq[1]}/smp_affinity")
            assert "BHNET" in shell(con, f"wget -q -O - http://10.0.2.2:{port}/ 2>&1", 60)
            cpu1 = re.search(rf"^ *{irq[1]}: +\d+ +(\d+) ", shell(con, "cat /proc/interrupts"), re.M)
            assert cpu1 and int(cpu1[1]) > 0, "the interrupt arrived on CPU 1"
            shell(con, f"echo 1 > /proc/irq/{irq[1]}/smp_affinity")

            # Debian's dynamically linked cyclictest (libnuma, libc and the loader came with it),
            # pinned to the isolated CPU.
            out = shell(con, "cyclictest -q -m -p 80 -a 1 -t 1 -i 1000 -l 500 2>&1", 60)
            assert re.search(r"T: 0 \(\s*\d+\) P:80 I:1000 C:\s*500 Min:\s*\d+ Act:\s*\d+ Avg:\s*\d+ Max:\s*\d+", out), out

            # Every Linux line reaches the console whole, however counter's lines arrive beside it.
            shell(con, f"L=$(printf '%0{FILL}d' 0); for i in $(seq {LONG_LINES}); do echo \"BHLONG $i $L\"; done",
                  120)
            whole = [int(n) for n in WHOLE_LONG.findall(con.raw)]
            counted = con.text.count("[counter] counter ")
            assert counted > 100, "counter printed beside Linux"
            # A line cut short is followed by Linux's own loss note (its ring was full: the bytes
            # are gone, and said so), never by another partition's line.
            # (Carriage returns and empty lines between them are no one's line.)
            raw = [line.strip("\r") for line in con.raw.split("\n")]
            raw = [line for line in raw if line]
            cut = [i for i, line in enumerate(raw) if CUT_LONG.match(line) and not WHOLE_LONG.match(line + "\r")]
            interleaved = [raw[i:i + 2] for i in cut if i + 1 >= len(raw) or not LOSS_NOTE.match(raw[i + 1])]
            assert not interleaved, f"Linux lines broken by another partition's line: {interleaved!r}"
            if whole != list(range(1, LONG_LINES + 1)):
                assert LOSS_NOTE.search(con.raw), f"{LONG_LINES - len(whole)} Linux lines lost without a note"

            # poweroff -f halts Linux, and only Linux: counter goes on. (Without -f, busybox asks
            # init to power off, and the shell that runs as init here does not.)
            shell(con, "poweroff")
            con.wait(2.0)
            assert "SYSTEM_OFF" not in con.text
            con.send("poweroff -f\r")
            con.expect(r"\[bulkhead\] partition linux: PSCI SYSTEM_OFF: halting the partition")
            seen = con.text.count("[counter] counter ")
            con.wait(2.0)
            assert con.text.count("[counter] counter ") > seen + 50
            assert "HM:" not in con.text
    finally:
        server.shutdown()


CYCLICTEST = "cyclictest -q -m -p 80 -a 1 -t 1 -i 1000 -l 2000"
CYCLIC_SUMMARY = re.compile(r"T: 0 \(\s*\d+\) P:80 I:1000 C:\s*(\d+) Min:\s*(\d+) Act:\s*\d+ Avg:\s*(\d+) "
                            r"Max:\s*(\d+)\s*\n")  # the whole line: not a part still on its way


def cyclictest(bare: bool) -> tuple[int, int, int, int]:
    """(loops, min, avg, max in us) of CYCLICTEST in linux_users.yaml's Linux under -icount shift=0:
    bare (bulkhead bare: the same kernel, initramfs and command line at EL1) or in its partition."""
    config = CONFIGS / "linux_users.yaml"
    system = load(config)
    if bare:
        argv = bare_linux_command(system, "linux", BUILD / "systest" / "linux_users_bare", icount=True,
                                  interactive=False)
        view = lambda raw: raw.replace("\r", "")  # noqa: E731
    else:
        argv = qemu_command(system, build_image(config), icount=True, interactive=False)
        view = lambda raw: partition_view(raw, "linux")  # noqa: E731
    with Console(argv, f"linux_users.yaml ({'bare' if bare else 'partition'}, icount)") as con:
        con.until(lambda: re.search(r"BHLINUX online=\S+\n", view(con.raw)), "Linux's init", 300)
        con.until(lambda: re.search(r"/ # \S*$", view(con.raw)), "the prompt", 60)
        con.send(CYCLICTEST + "\r")
        m = con.until(lambda: CYCLIC_SUMMARY.search(view(con.raw)), "cyclictest's summary", 600)
    return int(m[1]), int(m[2]), int(m[3]), int(m[4])


def test_cyclictest_bare_and_in_a_partition_under_icount():
    """Debian's cyclictest on the isolated CPU 1, 2000 wake-ups at 1 ms, under -icount shift=0
    (one instruction a nanosecond: latencies in exact instruction time): bare, and in the
    partition beside counter. `pytest tests/system/test_linux_users.py -k cyclictest -s` prints
    both. The maximum varies from run to run in both (QEMU runs the emulated cores one after
    another, test_linux_guests.py), the minimum and average do not: the partition adds to them at
    most a little of the hypervisor's interrupt path, and no wake-up is far off."""
    bare, part = cyclictest(bare=True), cyclictest(bare=False)
    print(f"BHSTAT cyclictest (us) bare: min {bare[1]} avg {bare[2]} max {bare[3]}; "
          f"partition: min {part[1]} avg {part[2]} max {part[3]}")
    assert bare[0] == part[0] == 2000
    assert part[1] <= bare[1] + 3 and part[2] <= bare[2] + 3 and part[3] < 100, (bare, part)
