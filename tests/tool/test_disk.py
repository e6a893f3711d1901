"""A partition's disk (`disk:`): the tool builds a FAT image with mkfs.vfat and mtools from the files the
description lists and attaches it to QEMU in the partition's virtio-mmio slot. Key errors are in
bad/disk.yaml; tests/system/test_board_dma.py reads the disk from a guest."""

from __future__ import annotations

import os
import subprocess

from bulkhead.cli import main as cli_main
from test_build import build_args, make_hyp_kit

CONFIG = """\
system: {name: demo, platform: qemu-virt, cores: 4, memory: 1G, qemu_args: [-device, virtio-rng-device]}
hypervisor:
  memory: {base: 0x40000000, size: 32M}
partitions:
  - name: app
    id: 0
    image: app.elf
    vcpus: [{core: 1}]
    memory:
      - {name: ram, phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}
    devices: [virtio-mmio@30]
    disk:
      device: virtio-mmio@30
      size: %s
      files:
        EFI/BOOT/BOOTAA64.EFI: app.elf
        /notes/big.bin: big.bin
"""


def mtype(disk, path: str) -> bytes:
    return subprocess.run(["mtype", "-i", str(disk), f"::/{path}"], capture_output=True, check=True,
                          env={**os.environ, "MTOOLS_SKIP_CHECK": "1"}).stdout


def test_the_disk_is_a_fat_image_of_the_listed_files_attached_in_its_slot(workdir, capsys):
    big = os.urandom(300 * 1024)
    (workdir / "big.bin").write_bytes(big)
    (workdir / "disk.yaml").write_text(CONFIG % "4M")
    assert cli_main(build_args("disk.yaml", make_hyp_kit(workdir / "kit"))) == 0
    assert capsys.readouterr().out.splitlines()[1] == "bulkhead: partition 'app': out/app.disk"
    disk = workdir / "out" / "app.disk"
    assert disk.stat().st_size == 4 * 1024 * 1024
    sector = disk.read_bytes()[:512]
    assert sector[510:] == b"\x55\xaa" and sector[0x36:0x39] == b"FAT"  # a FAT boot sector
    assert mtype(disk, "EFI/BOOT/BOOTAA64.EFI") == (workdir / "app.elf").read_bytes()
    assert mtype(disk, "notes/big.bin") == big
    command = (workdir / "out" / "qemu.cmd").read_text()
    # the disk's slot first, then qemu_args (whose device QEMU puts in the highest free slot)
    assert command.endswith(f"-kernel {workdir / 'out' / 'bulkhead.img'} -drive file={disk.resolve()},format=raw,"
                            f"if=none,id=disk-app -device virtio-blk-device,drive=disk-app,bus=virtio-mmio-bus.30 "
                            f"-device virtio-rng-device\n")


def test_a_disk_with_an_mbr_holds_the_fat_in_its_one_partition(workdir, capsys):
    """`table: mbr` (U-Boot's distro boot scans partitions, not a bare FAT): sector 0 is a master boot
    record whose one bootable partition, of the FAT's type, runs from 1 MiB to the disk's end; the FAT
    there holds the files."""
    big = os.urandom(10 * 1024)
    (workdir / "big.bin").write_bytes(big)
    (workdir / "disk.yaml").write_text((CONFIG % "8M").replace("      files:", "      table: mbr\n      files:"))
    assert cli_main(build_args("disk.yaml", make_hyp_kit(workdir / "kit"))) == 0
    disk = workdir / "out" / "app.disk"
    data = disk.read_bytes()
    assert len(data) == 8 * 1024 * 1024 and data[510:512] == b"\x55\xaa"
    entry = data[446:462]
    assert entry[0] == 0x80 and int.from_bytes(entry[8:12], "little") == 2048
    assert int.from_bytes(entry[12:16], "little") == 8 * 2048 - 2048
    assert data[462:510] == bytes(48)  # the other three entries empty
    fat = data[1024 * 1024:1024 * 1024 + 512]
    assert fat[510:] == b"\x55\xaa" and fat[0x36:0x3E] == b"FAT12   " and entry[4] == 0x01
    assert mtype(f"{disk}@@1M", "notes/big.bin") == big


def test_files_that_do_not_fit_are_reported_at_size(workdir, cli):
    (workdir / "big.bin").write_bytes(bytes(3 * 1024 * 1024))
    (workdir / "disk.yaml").write_text(CONFIG % "2M")
    status, out, err = cli("check", "disk.yaml")
    assert (status, out) == (1, "")
    assert err == ("disk.yaml:14:13: error: partition 'app': disk.size 2M cannot hold the files, which take about "
                   "3208K with the FAT's own sectors; use at least 4M\n")


def test_a_stale_disk_is_removed(workdir, capsys):
    (workdir / "big.bin").write_bytes(b"x")
    (workdir / "disk.yaml").write_text(CONFIG % "1M")
    assert cli_main(build_args("disk.yaml", make_hyp_kit(workdir / "kit"))) == 0
    text = (workdir / "disk.yaml").read_text()
    (workdir / "disk.yaml").write_text(text[:text.index("    disk:")])
    assert cli_main(build_args("disk.yaml", make_hyp_kit(workdir / "kit"))) == 0
    assert not (workdir / "out" / "app.disk").exists()
    assert "-drive" not in (workdir / "out" / "qemu.cmd").read_text()


def test_qemu_refuses_to_start_without_the_built_disk(workdir, cli):
    (workdir / "big.bin").write_bytes(b"x")
    (workdir / "disk.yaml").write_text(CONFIG % "1M")
    (workdir / "elsewhere").mkdir()
    status, out, err = cli("qemu", "disk.yaml", "--image", "elsewhere/bulkhead.img")
    assert (status, out) == (1, "")
    assert err == ("bulkhead: error: elsewhere/app.disk does not exist: `bulkhead build` writes a partition's disk "
                   "beside the image; build disk.yaml into elsewhere\n")
