"""Unmodified Debian Linux in a partition beside a real-time partition (issue 4).

Each test boots the real Debian arm64 kernel fetched by scripts/bootstrap.sh with a busybox
initramfs built by the tool, types into its shell through the shared console, and checks both
what Linux says and that the real-time partition next to it kept running on time."""

from __future__ import annotations

import re

from harness import ROOT, Console, check_stage2_pool, partition_view

CONFIGS_DIR = ROOT / "configs"

PROMPT = r"/ # "
WINDOW = re.compile(r"^\[rtprobe\] rtprobe: window (\d+) lateness min (-?\d+) max (-?\d+) ns$", re.M)


def windows(text: str) -> list[tuple[int, int, int]]:
    return [(int(n), int(lo), int(hi)) for n, lo, hi in WINDOW.findall(text)]


def linux_expect(con: Console, pattern: str, timeout: float = 60.0) -> re.Match:
    """Wait for pattern in what Linux printed (partition_view: whole again where other partitions'
    lines cut in) after the previous Linux match."""
    rx = re.compile(pattern, re.M)
    start = getattr(con, "linux_pos", 0)
    m = con.until(lambda: rx.search(partition_view(con.raw, "linux"), start),
                  f"/{pattern}/ from Linux", timeout)
    con.linux_pos = m.end()
    con.pos = len(con.text)  # plain expect() goes on from here
    return m


def shell(con: Console, command: str, timeout: float = 30.0) -> str:
    """Run a command in the Linux shell and return its output: what Linux printed between the
    command's echo and the next prompt, however other partitions' lines interleaved with it."""
    con.send(command + "\r")
    echo = "\n?".join(map(re.escape, command))  # the shell wraps its echo at 80 columns
    return linux_expect(con, echo + r"\n(?P<out>(?:[^\n]*\n)*?)/ # ", timeout)["out"]


def rt_progress(con: Console) -> int:
    """Windows the real-time partition completed so far."""
    found = windows(con.text)
    return found[-1][0] if found else 0


def boot(con: Console) -> None:
    m = linux_expect(con, r"^BHLINUX nproc=(\d+)$", 60)
    assert m[1] == "2", "nproc equals the configured vCPUs"
    linux_expect(con, PROMPT)


def test_linux_shell_isolation_reboot_and_crash():
    with Console.boot("linux_rt.yaml") as con:
        boot(con)
        assert "hello 42" in shell(con, "echo hello $((6*7))")

        # /dev/mem into the hypervisor and into rtprobe's memory: each read is a memory
        # violation of the Linux partition (ignored here: logged, reads as 0).
        for address in ("0x40000000", "0x44000000"):
            before = rt_progress(con)
            out = shell(con, f"devmem {address} 32")
            assert "0x00000000" in out
            assert re.search(rf"HM: partition linux \(id 1\) vcpu \d: memory_violation at "
                             rf"0x{int(address, 16):x} ", con.text), address
            con.wait(1.0)
            assert rt_progress(con) > before, "rtprobe keeps running"

        # reboot restarts Linux, and only Linux.
        con.send("reboot -f\r")
        con.expect(r"\[bulkhead\] partition linux: PSCI SYSTEM_RESET")
        before = rt_progress(con)
        boot(con)
        assert rt_progress(con) > before, "rtprobe ran while Linux rebooted"

        # A kernel crash panics Linux, which (panic=-1) resets its partition.
        con.send("echo c > /proc/sysrq-trigger\r")
        linux_expect(con, r"Kernel panic - not syncing: sysrq triggered crash")
        con.expect(r"\[bulkhead\] partition linux cold restart #2")
        boot(con)
        assert "restart" not in " ".join(l for l in con.lines() if l.startswith("[bulkhead] partition rtprobe"))
        assert not re.search(r"HM: partition rtprobe", con.text)


def test_passed_through_virtio_device_works_in_linux():
    with Console.boot("linux_rt.yaml") as con:
        boot(con)
        assert "modprobe" not in partition_view(con.raw, "linux"), "init's modprobe loaded the drivers"
        assert "virtio_rng" in shell(con, "cat /sys/class/misc/hw_random/rng_available")
        # 64 random bytes through the device's virtqueue and its forwarded interrupt.
        assert shell(con, "head -c 64 /dev/hwrng | wc -c").strip() == "64"
        assert re.search(r"virtio-mmio@31|GICv3  79 Edge +virtio0", shell(con, "cat /proc/interrupts"))
        # Linux moves the device's interrupt to its second vCPU (GICD_IROUTER): the physical
        # interrupt follows to that vCPU's core, and comes back to vCPU 0 when Linux restarts.
        irq = re.search(r"^ *(\d+):.*virtio0", shell(con, "cat /proc/interrupts"), re.M)[1]
        shell(con, f"echo 2 > /proc/irq/{irq}/smp_affinity")
        assert shell(con, "head -c 64 /dev/hwrng | wc -c").strip() == "64"
        cpu1 = re.search(r"^ *\d+: +\d+ +(\d+) .*virtio0", shell(con, "cat /proc/interrupts"), re.M)
        assert cpu1 and int(cpu1[1]) > 0, "the interrupt arrived on CPU 1"
        con.send("reboot -f\r")
        con.expect(r"\[bulkhead\] partition linux: PSCI SYSTEM_RESET")
        boot(con)
        assert shell(con, "head -c 64 /dev/hwrng | wc -c").strip() == "64"


def test_console_focus_escape():
    with Console.boot("linux_rt.yaml") as con:
        boot(con)
        con.send("\x01\x01\x01")
        con.expect(r"\[bulkhead\] console input goes to linux")
        # Fewer than three Ctrl-A are not an escape: they reach Linux as data.
        con.send("head -c 3 | od -An -tx1\r")
        linux_expect(con, r"od -An -tx1$")
        con.wait(0.5)  # the shell hands the terminal to head (line editing would eat Ctrl-A)
        con.send("\x01\x01z\r")
        linux_expect(con, r"01 01 7a")


STRESS = ("(while :; do :; done) & "
          "(while :; do dd if=/dev/zero of=/tmp/f bs=1M count=16 2>/dev/null; done) &")


WHOLE_WINDOW = r"rtprobe: window \d+ lateness min -?\d+ max -?\d+ ns\n"


def phase(text: str, start: int, end: int | None = None) -> list[tuple[int, int, int]]:
    """rtprobe windows printed in text[start:end]."""
    return windows(text[start:end])


def test_rt_partition_beside_linux_booting_idle_and_stressed():
    """rtprobe on core 1 keeps every 1 ms activation while Linux boots, idles and runs a CPU and
    memory stress on cores 2 and 3 (-icount shift=0: lateness in exact instruction time)."""
    with Console.boot("linux_rt.yaml", icount=True) as con:
        linux_expect(con, r"^BHLINUX", 120)
        booted = len(con.text)
        linux_expect(con, PROMPT)
        idle_from = len(con.text)
        con.expect(WHOLE_WINDOW, 60)
        con.expect(WHOLE_WINDOW, 60)
        idle_to = len(con.text)  # windows printed before Linux reads the command were idle
        con.send(STRESS + "\r")
        linux_expect(con, PROMPT)
        stress_from = len(con.text)
        for _ in range(4):
            con.expect(WHOLE_WINDOW, 120)
        assert partition_view(con.raw, "linux").count("BHLINUX") == 1, "Linux did not restart"

    booting = phase(con.text, 0, booted)
    idle = phase(con.text, idle_from, idle_to)[1:]  # whole windows only
    stressed = phase(con.text, stress_from)[1:]
    print(f"rtprobe lateness (ns) booting {booting}\nidle {idle}\nstressed {stressed}")
    assert booting and idle and len(stressed) >= 3
    # Every window ends: no activation is lost whatever Linux does.
    numbers = [n for n, _, _ in windows(con.text)]
    assert numbers == list(range(1, len(numbers) + 1))
    # Linux idle on its own cores adds nothing: the hypervisor's timer path alone.
    assert all(hi <= 1000 for _, _, hi in idle), idle
    # Booting and stressed, lateness measures QEMU, not the hypervisor: -icount runs the four
    # emulated cores one after another on one host thread, and rtprobe's core, once its
    # interrupt is raised, waits while a busy Linux core ahead of it in QEMU 7.2's round-robin
    # runs to the next virtual-clock deadline (up to several ms, every activation of a window
    # when the stress keeps a core busy at each deadline; nothing the hypervisor holds or
    # shares, docs/performance.md "Lateness beside busy emulated cores"). No bound on it tells
    # a hypervisor fault from QEMU, so these phases assert only that no activation is lost
    # (above) and none comes early; the timing bound is the idle phase's, where Linux's cores
    # sleep and nothing can run ahead of rtprobe's.
    assert all(lo >= 0 for _, lo, _ in booting + stressed), (booting, stressed)


def test_default_systems_land_in_a_linux_shell_beside_real_time_partitions():
    """`make run` (configs/demo.yaml) and its PREEMPT_RT variant: a Linux shell, with control and
    monitor printing beside it."""
    for config, flavour in (("demo.yaml", "SMP"), ("demo-rt.yaml", "PREEMPT_RT")):
        with Console.boot(CONFIGS_DIR / config) as con:
            linux_expect(con, r"^BusyBox", 90)
            linux_expect(con, PROMPT)
            check_stage2_pool(CONFIGS_DIR / config, con.text)  # Linux RAM, a device page, paravirtual partitions
            assert shell(con, "nproc").strip() == "2"
            assert flavour in shell(con, "uname -v")
            assert shell(con, "head -c 16 /dev/hwrng | wc -c").strip() == "16"
            # The demo's init loads the drivers with modprobe and mounts /dev/shm.
            assert re.search(r"^virtio_rng ", shell(con, "cat /proc/modules"), re.M)
            assert re.search(r"^tmpfs /dev/shm tmpfs rw,nosuid,nodev", shell(con, "cat /proc/mounts"), re.M)
            # Linux user space talks to control through its ports.
            assert re.fullmatch(r"valid: setpoint \d+\.\d C, value \d+\.\d C\n",
                                shell(con, "bhport read temperature"))
            assert shell(con, 'bhport send control_cmd "setpoint 55"; sleep 0.5; '
                              'bhport recv control_reply') == "ok: setpoint 55 C\n"
            assert shell(con, "bhport read temperature").startswith("valid: setpoint 55.0 C")
            assert '[control] command "setpoint 55": ok: setpoint 55 C' in con.text
            if config == "demo.yaml":
                # The focus moves to the system partition, which answers a command, and back.
                con.send("\x01\x01\x01")
                con.expect(r"\[bulkhead\] console input goes to monitor")
                con.send("status\r")
                con.expect(r"\[monitor\] > status\n")
                con.expect(r"\[monitor\]   partition 2: running, 0 restarts, \d+ ms run, 0 health")
                con.send("\x01\x01\x01")
                con.expect(r"\[bulkhead\] console input goes to linux")
                assert shell(con, "echo back").strip() == "back"
            seen = con.text.count("[control] cycle")
            con.expect(r"\[monitor\] uptime", 30)
            con.expect(r"\[control\] cycle", 30)
            assert con.text.count("[control] cycle") > seen
            # control is an APEX application: its supervisor process shows every process's
            # figures; the command process took the one command.
            con.expect(r"\[control\]   supervisor: \d+ activations", 30)
            processes = dict(re.findall(r"\[control\]   (\w+): (\d+) activations", con.text))
            assert set(processes) == {"sensor", "controller", "command", "supervisor"}, processes
            assert int(processes["sensor"]) > 5 * int(processes["controller"]) > 0, processes
            assert processes["command"] == "1"
            assert "HM:" not in con.text
