"""Partitions with a virtual board (`board: qemu-virt`): the C tables (the emulated machine, x0 = the
device tree at the start of RAM, RAM at guest 0x40000000 backed elsewhere), the device tree segment and
its contents. The errors are in bad/board_*.yaml; tests/system/test_boards.py runs a real program."""

from __future__ import annotations

import subprocess

from bulkhead.cli import main as cli_main
from test_build import build_args, make_hyp_kit
from test_linux import DUMP_C, checksum, decompile, node
from tool_support import CONFIG_INCLUDE, CROSS, run

BOARD_LD = """\
ENTRY(_start)
SECTIONS { . = 0x40200000; .text : { *(.text*) } .data : { *(.data*) } }
"""
BOARD_S = "\t.text\n\t.global _start\n_start:\n\tb .\n\t.data\n\t.quad 7\n"

CONFIG = """\
system: {name: demo, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor:
  memory: {base: 0x40000000, size: 32M}
partitions:
  - name: app
    id: 0
    image: app.elf
    vcpus: [{core: 1}]
    memory:
      - {name: ram, phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}
  - name: virt
    id: 1
    board: qemu-virt
    image: virt.elf
    vcpus: [{core: 2}, {core: 3}]
    memory:
      - {name: ram, phys: 0x48000000, guest: 0x40000000, size: 16M, rights: rwx}
    devices: [rtc]
"""


def test_board_partition_tables_and_device_tree(workdir, capsys):
    (workdir / "virt.ld").write_text(BOARD_LD)
    (workdir / "virt.S").write_text(BOARD_S)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,virt.ld", "-o", "virt.elf", "virt.S"],
        workdir)
    (workdir / "board.yaml").write_text(CONFIG)
    assert cli_main(build_args("board.yaml", make_hyp_kit(workdir / "kit"))) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "bulkhead: partition 'virt' (board qemu-virt): out/virt.dts, out/virt.dtb"
    (workdir / "dump.c").write_text(DUMP_C)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE), "out/bh_config.c",
         "out/bh_images.S", "dump.c", "-o", "dump"], workdir)
    dump = subprocess.run([str(workdir / "dump")], capture_output=True, text=True, check=True).stdout
    dtb = (workdir / "out" / "virt.dtb").read_bytes()
    lines = dump[dump.index("virt entry="):].splitlines()
    assert lines[0] == "virt entry=0x40200000 boot_arg=0x40000000 gicd=0x8000000 gicr=0x80a0000 uart=0x9000000 " \
                       "intid=33 irqs=34,"
    assert "  area 0x48000000 0x40000000 0x1000000 0x7" in lines   # not identity mapped
    assert lines[-1] == f"  segment 0x40000000 {len(dtb):#x} {len(dtb):#x} {checksum(dtb)}"  # after the ELF's
    assert lines[-2].startswith("  segment 0x40200000 ")
    assert dump.splitlines()[0].startswith("app entry=0x40000000 boot_arg=0 irqs=")  # paravirtual: none

    tree = decompile(workdir / "out" / "virt.dtb")
    assert tree["props"]["compatible"] == ["linux,dummy-virt"]
    assert node(tree, "memory@40000000")["props"]["reg"] == [0, 0x40000000, 0, 0x1000000]
    assert "bootargs" not in node(tree, "chosen")["props"]
    assert node(tree, "chosen")["props"]["stdout-path"] == ["/pl011@9000000"]
    assert sorted(node(tree, "cpus")["children"]) == ["cpu@0", "cpu@1"]
    assert node(tree, "psci")["props"]["method"] == ["smc"]
    assert node(tree, "intc@8000000")["props"]["reg"] == [0, 0x08000000, 0, 0x10000, 0, 0x080a0000, 0, 0x40000]
    assert "pl031@9010000" in tree["children"]


DMA_CONFIG = """\
system: {name: demo, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor:
  memory: {base: 0x7c000000, size: 32M}
partitions:
  - name: virt
    id: 0
    board: qemu-virt
    image: virt.elf
    vcpus: [{core: 2}]
    memory:
      - {name: ram, phys: 0x40000000, guest: 0x40000000, size: 16M, rights: rwx}
      - {name: more, phys: 0x48000000, guest: 0x48000000, size: 2M, rights: rw}
    devices: [virtio-mmio@30]
"""


def test_board_partition_with_a_dma_device_has_identity_mapped_ram(workdir, capsys):
    """Accepted with every normal area identity mapped (the hypervisor memory high in RAM); the non-identity
    description is bad/board_dma.yaml."""
    (workdir / "virt.ld").write_text(BOARD_LD)
    (workdir / "virt.S").write_text(BOARD_S)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,virt.ld", "-o", "virt.elf", "virt.S"],
        workdir)
    (workdir / "dma.yaml").write_text(DMA_CONFIG)
    assert cli_main(build_args("dma.yaml", make_hyp_kit(workdir / "kit"))) == 0
    source = (workdir / "out" / "bh_config.c").read_text()
    assert ".phys = UINT64_C(0x40000000), .ipa = UINT64_C(0x40000000)" in source
    tree = decompile(workdir / "out" / "virt.dtb")
    assert node(tree, "virtio_mmio@a003c00")["props"]["reg"] == [0, 0x0A003C00, 0, 0x200]
    assert "dma-coherent" in node(tree, "virtio_mmio@a003c00")["props"]


FIRMWARE_CONFIG = """\
system: {name: demo, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor:
  memory: {base: 0x40000000, size: 32M}
partitions:
  - name: fw
    id: 0
    board: qemu-virt
    firmware: {image: fw.fd, phys: 0x50000000}
    flash: {image: out/vars.fd, phys: 0x50400000, size: 512K, write_back: true}
    vcpus: [{core: 1}]
    memory:
      - {name: ram, phys: 0x48000000, guest: 0x40000000, size: 16M, rights: rwx}
"""


def test_firmware_partition_flash_tables_device_tree_and_runner(workdir, capsys):
    from bulkhead.config import load
    from bulkhead.qemu import qemu_command

    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG)
    assert cli_main(build_args("fw.yaml", make_hyp_kit(workdir / "kit"))) == 0
    (workdir / "dump.c").write_text(DUMP_C)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE), "out/bh_config.c",
         "out/bh_images.S", "dump.c", "-o", "dump"], workdir)
    dump = subprocess.run([str(workdir / "dump")], capture_output=True, text=True, check=True).stdout
    lines = dump.splitlines()
    assert lines[0].startswith("fw entry=0 boot_arg=0x40000000 ")  # the reset address; DT at RAM start
    # bank 0 backed by the image's 256 KiB, bank 1 by its 512 KiB: read-only and executable (0x5)
    assert "  area 0x50000000 0 0x40000 0x5" in lines
    assert "  area 0x50400000 0x4000000 0x80000 0x5" in lines
    assert [line for line in lines if "segment" in line][0].startswith("  segment 0x40000000 ")  # only the DT
    c = (workdir / "out" / "bh_config.c").read_text()
    assert ".phys = 0x50400000ul, .backed = 0x80000ul" in c and ".rtc_intid = 34u" in c

    tree = decompile(workdir / "out" / "fw.dtb")
    assert node(tree, "flash@0")["props"]["reg"] == [0, 0, 0, 0x4000000, 0, 0x4000000, 0, 0x4000000]
    assert node(tree, "flash@0")["props"]["bank-width"] == [4]
    assert node(tree, "pl031@9010000")["props"]["interrupts"] == [0, 2, 4]
    assert "memory@0" not in tree["children"] and "memory@4000000" not in tree["children"]  # flash is not RAM

    argv = qemu_command(load(workdir / "fw.yaml"), workdir / "out" / "bulkhead.img", interactive=False)
    joined = " ".join(argv)
    assert f"loader,file={workdir / 'fw.fd'},addr=0x50000000,force-raw=on" in joined
    assert f"loader,file={workdir / 'out' / 'vars.fd'},addr=0x50400000,force-raw=on" in joined
    assert "-no-shutdown" in argv and f"unix:{workdir / 'out' / 'qmp.sock'},server=on,wait=off" in joined
    assert (workdir / "out" / "vars.fd").read_bytes() == b"\xff" * (512 * 1024)  # created erased


def test_a_firmware_image_that_is_not_whole_blocks_is_loaded_padded_erased(workdir, capsys):
    """As QEMU's -bios takes any firmware file up to the bank's size (Debian's U-Boot is 971 304 bytes):
    bank 0 is backed up to the end of the image's last 256K block, loaded from a copy padded with
    0xff (erased flash) in the build directory; an image of whole blocks is loaded as it is."""
    from bulkhead.config import load
    from bulkhead.qemu import qemu_command

    image = bytes(range(256)) * 1200 + b"tail"  # 307 204 bytes: two blocks backed
    (workdir / "fw.fd").write_bytes(image)
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG)
    kit = make_hyp_kit(workdir / "kit")
    assert cli_main(build_args("fw.yaml", kit)) == 0
    padded = workdir / "out" / "fw.firmware.fd"
    assert padded.read_bytes() == image + b"\xff" * (512 * 1024 - len(image))
    assert ".phys = 0x50000000ul, .backed = 0x80000ul" in (workdir / "out" / "bh_config.c").read_text()
    argv = " ".join(qemu_command(load(workdir / "fw.yaml"), workdir / "out" / "bulkhead.img", interactive=False))
    assert f"loader,file={padded},addr=0x50000000,force-raw=on" in argv
    assert f"{workdir / 'out' / 'bulkhead.img'}" in (workdir / "out" / "qemu.cmd").read_text()
    assert f"loader,file={padded}," in (workdir / "out" / "qemu.cmd").read_text()

    (workdir / "fw.fd").write_bytes(image[:256 * 1024])  # whole blocks: no copy, the file itself
    assert cli_main(build_args("fw.yaml", kit)) == 0
    assert not padded.exists()
    assert f"loader,file={workdir / 'fw.fd'},addr=0x50000000," in (workdir / "out" / "qemu.cmd").read_text()


def test_an_empty_firmware_image_is_refused(workdir, cli):
    (workdir / "fw.fd").write_bytes(b"")
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG)
    status, out, err = cli("check", "fw.yaml")
    assert (status, out) == (1, "")
    assert err == ("fw.yaml:8:23: error: partitions[0].firmware: image 'fw.fd' is empty; use the firmware's image "
                   "file (the bank's contents from address 0, at most 64M)\n")


def test_firmware_ram_is_checked_like_any_area(workdir):
    from bulkhead import config

    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG.replace("phys: 0x50000000", "phys: 0x48f00000"))
    _, errors = config.check(workdir / "fw.yaml")
    assert [e.message for e in errors] == [
        "partition 'fw' area 'ram': 0x48000000-0x48ffffff overlaps partition 'fw' area 'flash bank 0' "
        "(0x48f00000-0x48f3ffff) in physical memory; areas must not share memory, move or shrink one of them"]
    assert errors[0].pos.line == 12  # the ram area's phys


FIRMWARE_DMA_CONFIG = """\
system: {name: demo, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor:
  memory: {base: 0x7c000000, size: 32M}
partitions:
  - name: fw
    id: 0
    board: qemu-virt
    firmware: {image: fw.fd, phys: 0x60000000}
    flash: {image: vars.fd, phys: 0x60400000, size: 512K}
    vcpus: [{core: 1}]
    memory:
      - {name: ram, phys: 0x40000000, guest: 0x40000000, size: 16M, rights: rwx}
    devices: [virtio-mmio@30]
"""


def test_a_firmware_partition_with_a_dma_device_keeps_its_flash_banks_where_they_are(workdir):
    """Identity-mapped RAM for the DMA device, but not the flash banks: firmware's code and variables,
    read in place, never DMA buffers (a DMA at their guest addresses would reach the machine's own
    flash, which no partition can have)."""
    from bulkhead import config

    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "vars.fd").write_bytes(b"\xff" * (512 * 1024))
    (workdir / "fw.yaml").write_text(FIRMWARE_DMA_CONFIG)
    assert config.check(workdir / "fw.yaml")[1] == []
    # The same with the RAM not identity mapped: refused, at the RAM's phys only.
    (workdir / "fw.yaml").write_text(FIRMWARE_DMA_CONFIG.replace("phys: 0x40000000, guest",
                                                                 "phys: 0x48000000, guest"))
    errors = config.check(workdir / "fw.yaml")[1]
    assert [e.message.split(":")[0] for e in errors] == ["partition 'fw' area 'ram'"], [e.message for e in errors]


SHARED_VARS_CONFIG = FIRMWARE_CONFIG + """\
  - name: fw2
    id: 1
    board: qemu-virt
    firmware: {image: fw.fd, phys: 0x52000000}
    flash: {image: VARS2, phys: 0x52400000, size: 512K}
    vcpus: [{core: 2}]
    memory:
      - {name: ram, phys: 0x49000000, guest: 0x40000000, size: 16M, rights: rwx}
"""


def test_a_written_back_variables_file_is_no_other_banks_image(workdir, cli):
    """Attack (description author): bank 1 written back into a file another bank also loads. Two
    partitions on one variables file carried the first's variables (whatever its firmware stored
    there) into the second's flash at the next run; a variables file that is a firmware image had
    the firmware overwritten by variables when the run ended. Both were accepted."""
    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "fw.yaml").write_text(SHARED_VARS_CONFIG.replace("VARS2", "out/vars.fd"))
    status, out, err = cli("check", "fw.yaml")
    assert (status, out) == (1, "")
    assert err == ("fw.yaml:9:20: error: partitions[0].flash.image 'out/vars.fd' is written back when the run "
                   "ends, but is also the flash image of partition 'fw2' (line 17): one partition's variables would "
                   "become the other's; give each partition's variables their own file\n")
    # Not written back, one file may seed both (each loads its own copy of it).
    (workdir / "fw.yaml").write_text(SHARED_VARS_CONFIG.replace("VARS2", "out/vars.fd")
                                     .replace(", write_back: true", ""))
    assert cli("check", "fw.yaml")[0] == 0
    # Variables written back into a firmware image: the firmware of both partitions.
    (workdir / "fw.yaml").write_text(SHARED_VARS_CONFIG.replace("VARS2", "vars2.fd")
                                     .replace("image: out/vars.fd", "image: fw.fd").replace("size: 512K, ", ""))
    status, out, err = cli("check", "fw.yaml")
    assert err == ("fw.yaml:9:20: error: partitions[0].flash.image 'fw.fd' is written back when the run ends, "
                   "but is also the firmware image of partition 'fw' (line 8): the variables would overwrite the "
                   "firmware; give the variables their own file\n"
                   "fw.yaml:9:20: error: partitions[0].flash.image 'fw.fd' is written back when the run ends, "
                   "but is also the firmware image of partition 'fw2' (line 16): the variables would overwrite the "
                   "firmware; give the variables their own file\n"), err


def test_a_bank_image_that_is_a_directory_is_refused_as_such(workdir, cli):
    """Attack (description author): a directory as firmware image was reported missing; as variables
    image it was accepted, and QEMU's loader failed at the run (or the write-back at its end)."""
    (workdir / "fw.fd").mkdir()
    (workdir / "out" / "vars.fd").mkdir(parents=True)
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG)
    status, out, err = cli("check", "fw.yaml")
    assert (status, out) == (1, "")
    assert err == ("fw.yaml:8:23: error: partitions[0].firmware.image 'fw.fd' is a directory; give the firmware's "
                   "image file\n"
                   "fw.yaml:9:20: error: partitions[0].flash.image 'out/vars.fd' is a directory; give the variables' "
                   "image file (or a path where the runner may create it)\n"), err


def test_a_written_back_variables_file_is_no_input_of_the_build(workdir, cli):
    """Attack (hostile firmware, careless author): variables written back into a partition's image
    (or a disk's file, a Linux kernel) put what the firmware wrote into another partition's code at
    the next build. Accepted when the file happened to be whole erase blocks."""
    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "other.bin").write_bytes(b"\x00" * (256 * 1024))
    config = FIRMWARE_CONFIG.replace("image: out/vars.fd", "image: other.bin").replace("size: 512K, ", "") + """\
  - name: raw
    id: 1
    board: qemu-virt
    image: other.bin
    load: 0x40200000
    vcpus: [{core: 2}]
    memory:
      - {name: ram, phys: 0x49000000, guest: 0x40000000, size: 16M, rights: rwx}
"""
    (workdir / "fw.yaml").write_text(config)
    status, out, err = cli("check", "fw.yaml")
    assert (status, out) == (1, "")
    assert err == ("fw.yaml:9:20: error: partitions[0].flash.image 'other.bin' is written back when the run ends, "
                   "but is also the image of partition 'raw' (line 16): what the firmware writes would become that "
                   "partition's code at the next build; give the variables their own file\n"), err


def test_a_variables_file_the_runner_cannot_create_is_a_clear_error(workdir, capsys):
    """Attack (description author): a missing variables image where no file can be made (its
    directory under a file, or unwritable): `build`, which writes the QEMU command and so creates
    the erased image, ended in a Python traceback (FileNotFoundError / NotADirectoryError)."""
    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG.replace("image: out/vars.fd", "image: fw.fd/vars.fd"))
    assert cli_main(build_args("fw.yaml", make_hyp_kit(workdir / "kit"))) == 1
    err = capsys.readouterr().err
    assert "cannot create the erased variables image" in err and "fw.fd/vars.fd" in err, err
    assert "Traceback" not in err


def test_a_bank_image_resized_after_the_build_is_not_run(workdir, capsys):
    """Attack (description author, or whoever can replace a file): a firmware or variables image that
    grew after the build was loaded whole by QEMU's loader, beyond the RAM the tables give the bank
    (into another partition's memory), and a variables bank written back at its new size saved that
    memory into the file, for the firmware to read at the next build. The runner refuses it."""
    from bulkhead.config import load
    from bulkhead.qemu import qemu_command
    from bulkhead.toolchain import ToolError

    (workdir / "fw.fd").write_bytes(b"\x00" * (256 * 1024))
    (workdir / "out").mkdir()
    (workdir / "out" / "vars.fd").write_bytes(b"\xff" * (512 * 1024))
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG.replace("size: 512K, ", ""))  # the file's size
    assert cli_main(build_args("fw.yaml", make_hyp_kit(workdir / "kit"))) == 0
    image = workdir / "out" / "bulkhead.img"
    qemu_command(load(workdir / "fw.yaml"), image, interactive=False)  # as built: runs
    (workdir / "out" / "vars.fd").write_bytes(b"\xff" * (1024 * 1024))
    try:
        qemu_command(load(workdir / "fw.yaml"), image, interactive=False)
        raise AssertionError("a resized variables image was run")
    except ToolError as exc:
        assert str(exc) == (f"'{workdir / 'out' / 'vars.fd'}' is 1M now, but the boot image in {workdir / 'out'} "
                            f"was built for 512K; rebuild it (bulkhead build)")
    (workdir / "out" / "vars.fd").write_bytes(b"\xff" * (512 * 1024))
    (workdir / "fw.fd").write_bytes(b"\x00" * (300 * 1024))
    status = cli_main(["qemu", "--print", "fw.yaml", "--image", str(image)])
    assert status == 1 and "fw.fd' is 300K now, but the boot image" in capsys.readouterr().err


def test_a_firmware_image_of_exactly_64m_is_taken_and_one_byte_more_refused(workdir, cli):
    """The bank's limit, at the byte: 64M backs the whole bank (no copy: whole blocks); 64M + 1 is
    refused at the image, as QEMU's -bios refuses a file larger than the bank."""
    with open(workdir / "fw.fd", "wb") as stream:
        stream.truncate(64 * 1024 * 1024)
    (workdir / "fw.yaml").write_text(FIRMWARE_CONFIG.replace("phys: 0x50400000", "phys: 0x54000000"))
    assert cli("check", "fw.yaml")[0] == 0
    with open(workdir / "fw.fd", "ab") as stream:
        stream.write(b"\x00")
    status, out, err = cli("check", "fw.yaml")
    assert (status, out) == (1, "")
    assert err == ("fw.yaml:8:23: error: partitions[0].firmware: image 'fw.fd' is 0x4000001, more than the 64M of "
                   "flash bank 0; use the firmware's image file (the bank's contents from address 0, at most 64M)\n")
