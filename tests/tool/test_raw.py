"""Raw binary images (`load`): one segment of the file's bytes at `load`, the entry there unless `entry`
says otherwise. Key errors are in bad/raw.yaml; tests/system/test_boards.py boots virtprobe.bin."""

from __future__ import annotations

import subprocess

from bulkhead.cli import main as cli_main
from test_build import DUMP_C, build_args, make_hyp_kit
from tool_support import CONFIG_INCLUDE, run

CONFIG = """\
system: {name: demo, platform: qemu-virt, cores: 4, memory: 1G, test: true}
hypervisor:
  memory: {base: 0x40000000, size: 32M}
partitions:
  - name: raw
    id: 0
    image: prog.bin
    load: 0x40001000
%s    vcpus: [{core: 1}]
    memory:
      - {name: ram, phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}
"""
PROGRAM = bytes.fromhex("1f2003d5") * 3 + bytes.fromhex("00000014")  # nop, nop, nop, b .


def dump(workdir) -> str:
    assert cli_main(build_args("raw.yaml", make_hyp_kit(workdir / "kit"))) == 0
    (workdir / "dump.c").write_text(DUMP_C)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE), "out/bh_config.c",
         "out/bh_images.S", "dump.c", "-o", "dump"], workdir)
    return subprocess.run([str(workdir / "dump")], capture_output=True, text=True, check=True).stdout


def test_a_raw_binary_is_one_segment_at_load_entered_there(workdir):
    (workdir / "prog.bin").write_bytes(PROGRAM)
    (workdir / "raw.yaml").write_text(CONFIG % "")
    lines = dump(workdir).splitlines()
    assert lines[1].startswith("partition 0 raw flags=0 entry=0x40001000 ")
    assert f"  segment ipa=0x40001000 file=0x10 mem=0x10 data={PROGRAM.hex()}" in lines


def test_entry_may_point_into_the_raw_binary(workdir):
    (workdir / "prog.bin").write_bytes(PROGRAM)
    (workdir / "raw.yaml").write_text(CONFIG % "    entry: 0x4000100c\n")
    assert dump(workdir).splitlines()[1].startswith("partition 0 raw flags=0 entry=0x4000100c ")


def test_an_empty_raw_binary_is_refused(workdir, cli):
    (workdir / "prog.bin").write_bytes(b"")
    (workdir / "raw.yaml").write_text(CONFIG % "")
    status, out, err = cli("check", "raw.yaml")
    assert (status, out) == (1, "")
    assert err == ("raw.yaml:7:12: error: partition 'raw': image 'prog.bin' is empty; give the raw binary of the "
                   "partition's program\n")


def test_apex_needs_the_elf_of_a_raw_binary(workdir, cli):
    (workdir / "prog.bin").write_bytes(PROGRAM)
    (workdir / "raw.yaml").write_text(CONFIG % "    apex: {processes: 1, stack_total: 4K}\n")
    status, out, err = cli("check", "raw.yaml")
    assert (status, out) == (1, "")
    assert err == ("raw.yaml:9:11: error: partition 'raw': apex needs the image's symbol apex_config, and raw binary "
                   "'prog.bin' has no symbols; give the ELF (remove 'load'), or remove 'apex'\n")


BOARD = """\
system: {name: product, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor:
  memory: {base: 0x40000000, size: 32M}
partitions:
  - name: fw
    id: 0
    board: qemu-virt
    image: prog.bin
    load: 0x40200000
    vcpus: [{core: 1}]
    memory:
      - {name: ram, phys: 0x48000000, guest: 0x40000000, size: 16M, rights: rwx}
"""


def test_a_board_partitions_raw_binary_is_taken_outside_test_systems(workdir, cli):
    """An unmodified program (firmware, an RTOS) comes as a raw binary and has no Bulkhead test code;
    a paravirtual partition's raw binary still needs system.test (bad/raw.yaml)."""
    (workdir / "prog.bin").write_bytes(PROGRAM)
    (workdir / "board.yaml").write_text(BOARD)
    assert cli("check", "board.yaml")[0] == 0
    (workdir / "para.yaml").write_text(BOARD.replace("    board: qemu-virt\n", "").replace("0x40200000", "0x40000000"))
    status, _, err = cli("check", "para.yaml")
    assert status == 1 and "raw binary ('load' is given) of a paravirtual partition" in err, err
