"""The QEMU command line: the Python API and `bulkhead qemu --print`."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bulkhead import config
from bulkhead.qemu import qemu_command
from tool_support import GOOD_DIR

BASE = ["qemu-system-aarch64", "-M", "virt,virtualization=on,gic-version=3", "-cpu", "cortex-a53",
        "-smp", "4", "-m", "1024M", "-nic", "none"]
ICOUNT = ["-icount", "shift=0,align=off,sleep=off", "-rtc", "base=2020-01-01T00:00:00,clock=vm"]


@pytest.fixture
def system(workdir):
    shutil.copy(GOOD_DIR / "demo.yaml", workdir / "demo.yaml")
    return config.load("demo.yaml")


def test_interactive(system):
    assert qemu_command(system, "img") == BASE + ["-nographic", "-echr", "29", "-kernel", "img"]


def test_batch(system):
    assert qemu_command(system, "img", interactive=False) == \
        BASE + ["-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot", "-kernel", "img"]


def test_icount_is_deterministic(system):
    argv = qemu_command(system, "img", icount=True, interactive=False)
    assert argv[2] == "virt,virtualization=on,gic-version=3,dtb-randomness=off"
    assert argv[-6:] == ICOUNT + ["-kernel", "img"]


def test_cli_print(system, cli):
    status, out, err = cli("qemu", "demo.yaml", "--image", "out dir/bulkhead.img", "--icount", "--print")
    assert (status, err) == (0, "")
    assert out == ("qemu-system-aarch64 -M virt,virtualization=on,gic-version=3,dtb-randomness=off -cpu cortex-a53 "
                   "-smp 4 -m 1024M -nic none -nographic -echr 29 -icount shift=0,align=off,sleep=off "
                   "-rtc base=2020-01-01T00:00:00,clock=vm -kernel 'out dir/bulkhead.img'\n")


def test_cli_qemu_rejects_invalid_config(workdir, cli):
    (workdir / "bad.yaml").write_text("system: {}\n")
    status, _, err = cli("qemu", "bad.yaml", "--image", "x", "--print")
    assert status == 1 and "missing required key 'name' in system" in err


@pytest.mark.skipif(shutil.which("qemu-system-aarch64") is None, reason="QEMU is not installed")
def test_qemu_accepts_the_command(system, workdir):
    """QEMU starts with every option we pass (it exits at once on an unknown one)."""
    image = workdir / "loop.img"
    image.write_bytes(bytes.fromhex("00000014"))  # b .
    argv = qemu_command(system, image, icount=True, interactive=False)
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=1.5)
        pytest.fail(f"QEMU exited with {proc.returncode}: {err.decode()}")
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
