"""Linux partitions: the device tree (compiled, then decompiled and read back), the initramfs (parsed
back), the payload layout, the C tables, the bare QEMU command, and one build with Debian's real kernel.

Most tests use the fake kernel, busybox and modules of tool_support.make_fake_linux (linux/ in the work
directory); the errors are in bad/linux_*.yaml."""

from __future__ import annotations

import gzip
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from bulkhead import config, cpio, devicetree, linux
from bulkhead.cli import main as cli_main
from bulkhead.diagnostics import ConfigError
from bulkhead.kimage import KernelProblem, make_header, parse_kernel
from bulkhead.qemu import bare_linux_command, qemu_command
from test_build import build_args, make_hyp_kit
from tool_support import CONFIG_INCLUDE, CROSS, FAKE_IMAGE_SIZE, GOOD_DIR, REPO, fake_image, run

M = 1 << 20
RAM = 0x4800_0000
DTB_IPA = RAM + FAKE_IMAGE_SIZE          # the fake Image's image_size is 4M: already 2M aligned
INITRD_IPA = DTB_IPA + 2 * M
MODULES = "lib/modules/6.1.0-test"


def write_config(workdir: Path, name: str = "linux.yaml", vcpus: int = 2, replace: dict | None = None) -> str:
    text = (GOOD_DIR / "linux.yaml").read_text()
    cores = ", ".join(f"{{core: {2 + n}}}" for n in range(vcpus))
    text = text.replace("vcpus: [{core: 2}, {core: 3}]", f"vcpus: [{cores}]")
    for old, new in (replace or {}).items():
        assert old in text
        text = text.replace(old, new)
    (workdir / name).write_text(text)
    return name


def load(workdir: Path, **kwargs):
    system = config.load(write_config(workdir, **kwargs))
    return system, system.partition_named("linux")


# --- reading decompiled device trees -----------------------------------------------------------

def parse_dts(text: str) -> dict:
    """dtc's decompiled output -> {"props": {name: value}, "children": {name: node}}. Values: a list of ints
    for cells, a list of str for strings, True for an empty property."""
    root: dict = {"props": {}, "children": {}}
    stack = [root]
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("/dts-v1/"):
            continue
        if line.endswith("{"):
            name = line[:-1].strip().split(":")[-1].strip()
            node = {"props": {}, "children": {}}
            if name != "/":
                stack[-1]["children"][name] = node
                stack.append(node)
            continue
        if line == "};":
            stack.pop()
            continue
        name, _, value = line.rstrip(";").partition(" = ")
        stack[-1]["props"][name.strip()] = _parse_value(value) if value else True
    return root


def _parse_value(value: str):
    if value.startswith("<"):
        return [int(cell, 0) for group in re.findall(r"<([^>]*)>", value) for cell in group.split()]
    strings = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
    return [s for item in strings for s in item.split("\\0")]


def decompile(dtb: Path) -> dict:
    done = subprocess.run(["dtc", "-I", "dtb", "-O", "dts", str(dtb)], capture_output=True, text=True, check=True)
    return parse_dts(done.stdout)


def node(tree: dict, path: str) -> dict:
    for name in path.strip("/").split("/"):
        tree = tree["children"][name]
    return tree


# --- the device tree ---------------------------------------------------------------------------

@pytest.mark.parametrize("vcpus", [1, 2, 4])
def test_device_tree(workdir, vcpus):
    system, part = load(workdir, vcpus=vcpus)
    outputs = linux.write_payload(system, part, workdir, "linux.yaml")
    assert outputs["dts"] == workdir / "linux.dts" and outputs["dtb"] == workdir / "linux.dtb"
    assert "intc@8000000" in outputs["dts"].read_text()  # the source stays next to the blob
    tree = decompile(outputs["dtb"])
    root = tree["props"]
    assert (root["#address-cells"], root["#size-cells"]) == ([2], [2])

    cpus = node(tree, "cpus")
    assert list(cpus["children"]) == [f"cpu@{n}" for n in range(vcpus)]
    for n in range(vcpus):
        cpu = cpus["children"][f"cpu@{n}"]["props"]
        assert (cpu["reg"], cpu["device_type"], cpu["compatible"], cpu["enable-method"]) == \
            ([n], ["cpu"], ["arm,armv8"], ["psci"])
    psci = node(tree, "psci")["props"]
    assert (psci["compatible"], psci["method"]) == (["arm,psci-1.0", "arm,psci-0.2"], ["smc"])

    gic = node(tree, "intc@8000000")["props"]
    assert gic["reg"] == [0, 0x0800_0000, 0, 0x1_0000, 0, 0x080A_0000, 0, 0x2_0000 * vcpus]
    assert gic["compatible"] == ["arm,gic-v3"] and gic["interrupt-controller"] is True
    assert (gic["#interrupt-cells"], gic["#redistributor-regions"], gic["interrupts"]) == ([3], [1], [1, 9, 4])
    assert root["interrupt-parent"] == gic["phandle"]
    timer = node(tree, "timer")["props"]
    assert timer["interrupts"] == [1, 13, 4, 1, 14, 4, 1, 11, 4, 1, 10, 4]

    memory = node(tree, "memory@48000000")["props"]
    assert (memory["device_type"], memory["reg"]) == (["memory"], [0, RAM, 0, 64 * M])
    initrd_size = len((workdir / "linux.cpio").read_bytes())
    chosen = node(tree, "chosen")["props"]
    assert chosen["bootargs"] == ["console=ttyAMA0 rdinit=/init quiet"]
    assert chosen["stdout-path"] == ["/pl011@9000000"]
    assert chosen["linux,initrd-start"] == [0, INITRD_IPA]
    assert chosen["linux,initrd-end"] == [0, INITRD_IPA + initrd_size]
    assert node(tree, "aliases")["props"]["serial0"] == ["/pl011@9000000"]

    uart = node(tree, "pl011@9000000")["props"]
    clock = node(tree, "apb-pclk")["props"]
    assert (uart["compatible"], uart["reg"], uart["interrupts"]) == \
        (["arm,pl011", "arm,primecell"], [0, 0x0900_0000, 0, 0x1000], [0, 1, 4])
    assert uart["clocks"] == clock["phandle"] * 2 and uart["clock-names"] == ["uartclk", "apb_pclk"]
    assert (clock["compatible"], clock["clock-frequency"], clock["#clock-cells"]) == (["fixed-clock"], [24_000_000], [0])
    events = node(tree, "pl061@b000000")["props"]
    assert (events["compatible"], events["reg"], events["interrupts"], events["gpio-controller"]) == \
        (["arm,pl061", "arm,primecell"], [0, 0x0B00_0000, 0, 0x1000], [0, 9, 4], True)
    assert events["gpio-line-names"][:2] == ["bulkhead-port", "bulkhead-doorbell"]
    call = node(tree, "bulkhead-call@b001000")["props"]
    assert (call["compatible"], call["reg"]) == (["bulkhead,hypercall-page"], [0, 0x0B00_1000, 0, 0x1000])

    for slot in (31, 30):
        virtio = node(tree, f"virtio_mmio@{0x0A00_0000 + slot * 0x200:x}")["props"]
        assert (virtio["compatible"], virtio["reg"], virtio["interrupts"], virtio["dma-coherent"]) == \
            (["virtio,mmio"], [0, 0x0A00_0000 + slot * 0x200, 0, 0x200], [0, 16 + slot, 1], True)
    rtc = node(tree, "pl031@9010000")["props"]
    assert (rtc["compatible"], rtc["reg"], rtc["interrupts"]) == \
        (["arm,pl031", "arm,primecell"], [0, 0x0901_0000, 0, 0x1000], [0, 2, 4])


def test_device_tree_without_initramfs_or_devices(workdir):
    system, part = load(workdir, replace={"    devices: [virtio-mmio@31, virtio-mmio@30, rtc]\n": ""})
    part.linux.initramfs = None
    part.linux.payload = None
    tree = devicetree.to_dts(linux.device_tree(system, part))
    assert "linux,initrd-start" not in tree and "virtio" not in tree and "pl031" not in tree


def test_dts_values():
    root = devicetree.Node("")
    root.add(devicetree.Node("x", label="lab")).prop("s", 'a "q" \\ b').prop("e").prop(
        "c", [devicetree.Cells(1, devicetree.Ref("lab")), devicetree.reg(0x1_0000_0000, 0x1000)])
    assert devicetree.to_dts(root, "one\ntwo") == (
        '/dts-v1/;\n// one\n// two\n\n/ {\n\n\tlab: x {\n\t\ts = "a \\"q\\" \\\\ b";\n\t\te;\n'
        '\t\tc = <1 &lab>, <1 0 0 0x1000>;\n\t};\n};\n')
    with pytest.raises(ValueError):
        devicetree.to_dts(devicetree.Node("").prop("big", devicetree.Cells(1 << 32)))


# --- layout, kernel header ---------------------------------------------------------------------

def test_payload_layout(workdir):
    _, part = load(workdir)
    payload = part.linux.payload
    assert (part.entry_point, payload.dtb_ipa, payload.initrd_ipa) == (RAM, DTB_IPA, INITRD_IPA)
    kernel, dtb, initrd = part.segments
    assert (kernel.ipa, kernel.file_size, kernel.mem_size) == (RAM, len(fake_image()), FAKE_IMAGE_SIZE)
    assert kernel.path.resolve() == (workdir / "linux" / "Image").resolve() and kernel.data is None  # the file
    assert (dtb.ipa, dtb.file_size) == (DTB_IPA, 0)  # known once the tree is compiled
    assert (initrd.ipa, initrd.file_size) == (INITRD_IPA, len(payload.built.archive))
    assert payload.kernel.version == "6.1.0-test"


def test_text_offset_and_unaligned_image_size(workdir):
    data = bytearray(fake_image())
    data[:64] = make_header(text_offset=0x80000, image_size=0x2A0000)
    (workdir / "offset.Image").write_bytes(bytes(data))
    modules = "modules: [virtio_mmio, virtio-rng, virtio_net]"
    _, part = load(workdir, replace={"kernel: linux/Image": "kernel: offset.Image",
                                     modules: modules + "\n        modules_dir: linux/lib/modules/6.1.0-test"})
    payload = part.linux.payload
    assert payload.entry == RAM + 0x80000
    assert payload.dtb_ipa == RAM + 4 * M  # 0x48080000 + 0x2a0000 = 0x48320000, rounded up to 2M


def test_gzip_kernel_is_decompressed(workdir):
    system, part = load(workdir, replace={"kernel: linux/Image": "kernel: linux/Image.gz"})
    assert part.linux.payload.kernel.compressed and part.entry_point == RAM
    outputs = linux.write_payload(system, part, workdir, "linux.yaml")
    assert outputs["kernel"].read_bytes() == fake_image() == Path(part.segments[0].path).read_bytes()


def test_kernel_header_problems():
    with pytest.raises(KernelProblem, match="not an arm64 Linux Image"):
        parse_kernel(b"\x7fELF" + bytes(100))
    with pytest.raises(KernelProblem, match="older than Linux 3.17"):
        parse_kernel(fake_image(image_size=0))
    with pytest.raises(KernelProblem, match="big-endian"):
        parse_kernel(fake_image(flags=0xB))
    image = parse_kernel(make_header(text_offset=0, image_size=0x1000))
    assert (image.version, image.size, image.image_size) == (None, 0x1000, 0x1000)


# --- initramfs ---------------------------------------------------------------------------------

DIRS = ["bin", "dev", "etc", "lib", "lib/modules", MODULES, f"{MODULES}/kernel", f"{MODULES}/kernel/drivers",
        f"{MODULES}/kernel/drivers/char", f"{MODULES}/kernel/drivers/char/hw_random", f"{MODULES}/kernel/drivers/net",
        f"{MODULES}/kernel/drivers/virtio", f"{MODULES}/kernel/net", f"{MODULES}/kernel/net/core", "proc", "root",
        "sbin", "sys", "tmp", "usr", "usr/bin", "usr/sbin", "usr/share", "usr/share/udhcpc", "etc/udhcpc"]
DEPMOD_FILES = ["modules.alias", "modules.alias.bin", "modules.builtin.alias.bin", "modules.builtin.bin",
                "modules.dep", "modules.dep.bin", "modules.devname", "modules.order", "modules.softdep",
                "modules.symbols", "modules.symbols.bin"]
MODULE_FILES = ["kernel/drivers/char/hw_random/virtio-rng.ko", "kernel/drivers/net/net_failover.ko",
                "kernel/drivers/net/virtio_net.ko", "kernel/drivers/virtio/virtio_mmio.ko",
                "kernel/net/core/failover.ko"]
MODULES_DEP = """\
kernel/drivers/virtio/virtio_mmio.ko:
kernel/drivers/char/hw_random/virtio-rng.ko:
kernel/net/core/failover.ko:
kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko
kernel/drivers/net/virtio_net.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko
"""


def test_initramfs_contents(workdir):
    system, part = load(workdir)
    archive = (workdir / linux.write_payload(system, part, workdir, "linux.yaml")["cpio"]).read_bytes()
    entries = {e.name: e for e in cpio.read(archive)}
    files = ["bin/busybox", "bin/sh", "dev/console", "etc/data.txt", "init", "etc/udhcpc/default.script",
                                                                               "usr/share/udhcpc/default.script"] + \
        [f"{MODULES}/{path}" for path in MODULE_FILES] + [f"{MODULES}/{name}" for name in DEPMOD_FILES]
    assert list(entries) == sorted(DIRS + files)  # sorted, every parent directory present
    assert all(entries[d].mode == stat.S_IFDIR | (0o1777 if d == "tmp" else 0o755) for d in DIRS)
    assert entries["bin/busybox"].mode == stat.S_IFREG | 0o755
    assert entries["bin/busybox"].data == (workdir / "linux" / "busybox").read_bytes()
    assert (entries["bin/sh"].kind, entries["bin/sh"].data) == ("symlink", b"busybox")
    assert (entries["dev/console"].mode, entries["dev/console"].rdev) == (stat.S_IFCHR | 0o600, (5, 1))
    assert entries["init"].mode == stat.S_IFREG | 0o755  # not executable on the host, but a #! script
    assert entries["etc/data.txt"].mode == stat.S_IFREG | 0o644
    for path in MODULE_FILES:
        entry = entries[f"{MODULES}/{path}"]
        assert entry.mode == stat.S_IFREG | 0o644
        assert entry.data == (workdir / "linux" / MODULES / path).read_bytes()
    assert entries[f"{MODULES}/modules.dep"].data.decode() == MODULES_DEP
    assert part.linux.payload.built.modules == [MODULE_FILES[i] for i in (3, 0, 4, 1, 2)]  # load order


def test_initramfs_is_deterministic_newc(workdir):
    _, part = load(workdir)
    archive = part.linux.payload.built.archive
    assert config.load(write_config(workdir, "again.yaml")).partition_named("linux").linux.payload.built.archive \
        == archive
    assert b"TRAILER!!!\0" in archive[-128:] and len(archive) % 4 == 0
    offset = 0
    for entry in cpio.read(archive):  # every header: uid, gid, mtime 0
        header = archive.index(b"070701", offset)
        fields = [int(archive[header + 6 + 8 * i:header + 14 + 8 * i], 16) for i in range(13)]
        assert (fields[2], fields[3], fields[5]) == (0, 0, 0), entry.name
        offset = header + 110
    names = subprocess.run(["cpio", "-it", "--quiet"], input=archive, capture_output=True, check=True).stdout
    assert names.decode().splitlines() == [e.name for e in cpio.read(archive)]  # GNU cpio reads it too
    listing = subprocess.run(["cpio", "-itv", "--quiet"], input=archive, capture_output=True, check=True).stdout
    assert any(line.startswith("crw-------") and line.endswith(" dev/console") for line in listing.decode().splitlines())


def test_ready_made_initramfs(workdir):
    (workdir / "ready.cpio").write_bytes(cpio.write([cpio.regular("init", b"#!/bin/sh\n", 0o755)]))
    initramfs = ("initramfs:\n        busybox: linux/busybox\n        files: {/init: linux/init.sh, "
                 "/etc/data.txt: linux/data.txt}\n        modules: [virtio_mmio, virtio-rng, virtio_net]")
    system, part = load(workdir, replace={initramfs: "initramfs: ready.cpio"})
    outputs = linux.write_payload(system, part, workdir, "linux.yaml")
    assert "cpio" not in outputs and part.segments[2].path.resolve() == (workdir / "ready.cpio").resolve()
    assert part.segments[2].file_size == (workdir / "ready.cpio").stat().st_size


def test_modules_dir_can_be_given(workdir):
    _, part = load(workdir, replace={"modules: [virtio_mmio, virtio-rng, virtio_net]":
                                     "modules: [virtio_mmio]\n        modules_dir: linux/lib/modules/6.1.0-test"})
    assert part.linux.payload.built.modules == ["kernel/drivers/virtio/virtio_mmio.ko"]


# --- C tables, build output, QEMU commands ------------------------------------------------------

DUMP_C = r"""
#include <stdio.h>
#include "config_tables.h"

int main(void)
{
	for (uint32_t i = 0; i < bh_system_config.partition_count; i++) {
		const struct bh_partition_cfg *p = &bh_system_config.partitions[i];
		printf("%s entry=%#llx boot_arg=%#llx", p->name, (unsigned long long)p->entry,
		       (unsigned long long)p->boot_arg);
		if (p->vmachine)
			printf(" gicd=%#llx gicr=%#llx uart=%#llx intid=%u", (unsigned long long)p->vmachine->gicd_ipa,
			       (unsigned long long)p->vmachine->gicr_ipa, (unsigned long long)p->vmachine->uart_ipa,
			       p->vmachine->uart_intid);
		printf(" irqs=");
		for (uint32_t n = 0; n < p->irq_count; n++)
			printf("%u,", p->irqs[n]);
		printf("\n");
		for (uint32_t n = 0; n < p->area_count; n++)
			printf("  area %#llx %#llx %#llx %#x\n", (unsigned long long)p->areas[n].phys,
			       (unsigned long long)p->areas[n].ipa, (unsigned long long)p->areas[n].size, p->areas[n].flags);
		for (uint32_t n = 0; n < p->segment_count; n++) {
			const struct bh_segment_cfg *s = &p->segments[n];
			unsigned long long sum = 0;
			for (uint64_t b = 0; s->data && b < s->file_size; b++)
				sum = sum * 31 + s->data[b];
			printf("  segment %#llx %#llx %#llx %llx\n", (unsigned long long)s->ipa,
			       (unsigned long long)s->file_size, (unsigned long long)s->mem_size, sum & 0xffffffffffffull);
		}
	}
	return 0;
}
"""


def checksum(data: bytes) -> str:
    total = 0
    for byte in data:
        total = (total * 31 + byte) & 0xFFFF_FFFF_FFFF_FFFF
    return f"{total & 0xFFFF_FFFF_FFFF:x}"


def test_tables_and_build_outputs(workdir, capsys):
    name = write_config(workdir)
    assert cli_main(build_args(name, make_hyp_kit(workdir / "kit"))) == 0
    out = capsys.readouterr().out.splitlines()
    built = workdir / "out"
    assert out[1] == "bulkhead: Linux partition 'linux': out/linux.dts, out/linux.dtb, out/linux.cpio"
    assert (built / "qemu.cmd").read_text().endswith(" -device virtio-rng-device\n")
    (workdir / "dump.c").write_text(DUMP_C)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE), "out/bh_config.c",
         "out/bh_images.S", "dump.c", "-o", "dump"], workdir)
    dump = subprocess.run([str(workdir / "dump")], capture_output=True, text=True, check=True).stdout
    dtb, archive = (built / "linux.dtb").read_bytes(), (built / "linux.cpio").read_bytes()
    assert dump.splitlines()[0] == "app entry=0x40000000 boot_arg=0 irqs="  # paravirtual: no vmachine
    assert dump[dump.index("linux entry="):] == (
        f"linux entry={RAM:#x} boot_arg={DTB_IPA:#x} gicd=0x8000000 gicr=0x80a0000 uart=0x9000000 intid=33 "
        f"irqs=79,78,34,\n"
        f"  area 0x9010000 0x9010000 0x1000 0xb\n"      # in guest address order
        f"  area 0xa003000 0xa003000 0x1000 0xb\n"      # one page for slots 31 and 30
        f"  area {RAM:#x} {RAM:#x} {64 * M:#x} 0x7\n"
        f"  segment {RAM:#x} {len(fake_image()):#x} {FAKE_IMAGE_SIZE:#x} {checksum(fake_image())}\n"
        f"  segment {DTB_IPA:#x} {len(dtb):#x} {len(dtb):#x} {checksum(dtb)}\n"
        f"  segment {INITRD_IPA:#x} {len(archive):#x} {len(archive):#x} {checksum(archive)}\n")
    source = (built / "bh_config.c").read_text()
    assert source.count(".vmachine = ") == 1 and ".boot_arg = UINT64_C(0x48400000), /* device tree */" in source


def test_qemu_args_are_appended(workdir):
    system, _ = load(workdir)
    assert qemu_command(system, "img")[-4:] == ["-kernel", "img", "-device", "virtio-rng-device"]


def test_bare_linux_command(workdir, cli):
    system, part = load(workdir)
    argv = bare_linux_command(system, "linux", workdir / "bare", icount=True, interactive=False)
    assert argv == ["qemu-system-aarch64", "-M", "virt,gic-version=3,dtb-randomness=off", "-cpu", "cortex-a53",
                    "-smp", "2", "-m", "64M", "-nic", "none", "-display", "none", "-monitor", "none", "-serial",
                    "stdio", "-no-reboot", "-icount", "shift=0,align=off,sleep=off", "-rtc",
                    "base=2020-01-01T00:00:00,clock=vm", "-kernel", str((workdir / "linux" / "Image").resolve()),
                    "-initrd", str(workdir / "bare" / "linux.cpio"), "-append",
                    "console=ttyAMA0 rdinit=/init quiet", "-device", "virtio-rng-device"]
    assert (workdir / "bare" / "linux.cpio").read_bytes() == part.linux.payload.built.archive
    with pytest.raises(ValueError, match="'app' is not a Linux partition of system 'penguin' "
                                         r"\(Linux partitions: linux\)"):
        bare_linux_command(system, "app", workdir / "bare")
    status, out, err = cli("bare", "linux.yaml", "--partition", "linux", "--out", "b", "--print")
    assert (status, err) == (0, "") and out.startswith("qemu-system-aarch64 -M virt,gic-version=3 -cpu cortex-a53 ")
    assert out.endswith(" -append 'console=ttyAMA0 rdinit=/init quiet' -device virtio-rng-device\n")
    assert cli("bare", "linux.yaml", "--partition", "app", "--out", "b", "--print")[0] == 1


def test_devices_of_a_paravirtual_partition(workdir):
    """devices also work without linux: the page and the interrupt, no device tree."""
    name = write_config(workdir, replace={"    image: app.elf\n": "    image: app.elf\n    devices: [virtio-mmio@0]\n"})
    app = config.load(name).partition_named("app")
    assert [(a.phys, a.guest, a.size, a.kind) for a in app.areas[1:]] == [(0x0A00_0000, 0x0A00_0000, 0x1000, "device")]
    assert [i.intid for i in app.interrupts] == [48]


# --- Debian's kernel (scripts/bootstrap.sh) -----------------------------------------------------

DEBIAN = REPO / "build" / "debian"


@pytest.mark.skipif(not (DEBIAN / "arm64" / "vmlinuz").exists(), reason="no Debian kernel: run scripts/bootstrap.sh")
def test_debian_kernel_payload_and_build(workdir, cli):
    replace = {"kernel: linux/Image": f"kernel: {DEBIAN / 'arm64' / 'vmlinuz'}",
               "busybox: linux/busybox": f"busybox: {DEBIAN / 'busybox'}",
               "size: 32M}": "size: 48M}"}
    name = write_config(workdir, replace=replace)
    part = config.load(name).partition_named("linux")
    payload = part.linux.payload
    version = next((DEBIAN / "arm64" / "lib" / "modules").iterdir()).name
    assert payload.kernel.version == version and payload.built.modules_version == version
    assert payload.kernel.text_offset == 0 and not payload.kernel.compressed
    assert payload.dtb_ipa == RAM + -(-payload.kernel.image_size // (2 * M)) * 2 * M
    kit = make_hyp_kit(workdir / "kit")
    small = write_config(workdir, "small.yaml", replace={**replace, "size: 32M}": "size: 16M}"})
    status, _, err = cli(*build_args(small, kit))
    assert status == 1 and re.fullmatch(r"small\.yaml:10:36: error: the packed image ends at 0x4\w+, past the "
                                        r"hypervisor memory end 0x41000000; make hypervisor\.memory\.size at least "
                                        r"0x\w+\n", err)
    status, out, err = cli(*build_args(name, kit))
    assert (status, err) == (0, "")
    assert (workdir / "out" / "bulkhead.img").stat().st_size > 33 * M


def test_docs_full_example(workdir, cli):
    """The full example of docs/linux.md checks, with the fake Linux laid out as the bootstrap lays out
    Debian's (build/debian/...)."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", (REPO / "docs" / "linux.md").read_text(), flags=re.S)
    example = next(b for b in blocks if b.startswith("# A Linux partition beside"))
    (workdir / "configs").mkdir()
    (workdir / "configs" / "penguin.yaml").write_text(example)
    (workdir / "configs" / "init.sh").write_text("#!/bin/sh\n")
    (workdir / "build" / "partitions").mkdir(parents=True)
    shutil.copy(workdir / "app.elf", workdir / "build" / "partitions" / "control.elf")
    debian = workdir / "build" / "debian"
    (debian / "arm64").mkdir(parents=True)
    (debian / "arm64" / "vmlinuz").write_bytes(fake_image())
    (debian / "arm64" / "lib").symlink_to(workdir / "linux" / "lib")
    shutil.copy(workdir / "linux" / "busybox", debian / "busybox")
    assert cli("check", "configs/penguin.yaml") == (0, "configs/penguin.yaml: ok (2 partitions)\n", "")
    initramfs = {e.name for e in cpio.read(config.load("configs/penguin.yaml").partitions[1].linux.payload.built.archive)}
    assert {f"{MODULES}/kernel/drivers/virtio/virtio_mmio.ko", "init", "bin/busybox"} <= initramfs


# --- initramfs: directories, links, programs with their libraries, own modules -----------------------

def build_initramfs(workdir: Path, initramfs: str):
    """The entries of the archive built from an initramfs mapping (YAML, indented for the config)."""
    old = ("initramfs:\n        busybox: linux/busybox\n        files: {/init: linux/init.sh, "
           "/etc/data.txt: linux/data.txt}\n        modules: [virtio_mmio, virtio-rng, virtio_net]")
    _, part = load(workdir, replace={old: "initramfs:\n" + initramfs})
    return {e.name: e for e in cpio.read(part.linux.payload.built.archive)}, part


def test_initramfs_takes_directories_and_links(workdir):
    tree = workdir / "rootfs"
    (tree / "etc" / "app").mkdir(parents=True)
    (tree / "etc" / "app" / "app.conf").write_text("rate=1\n")
    (tree / "usr" / "bin").mkdir(parents=True)
    (tree / "usr" / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")
    (tree / "usr" / "bin" / "alias").symlink_to("tool")          # a link inside the tree stays a link
    (tree / "etc" / "current").symlink_to("app", target_is_directory=True)
    (tree / "empty").mkdir()
    (workdir / "init-link.sh").symlink_to("linux/init.sh")          # a listed link is followed
    entries, _ = build_initramfs(workdir, "        files: {/init: init-link.sh, /opt/root: rootfs}\n"
                                          "        symlinks: {/sbin/init: /init, /usr/bin/t: ../../opt/root/usr/bin/tool}")
    assert entries["init"].kind == "file" and entries["init"].data == (workdir / "linux/init.sh").read_bytes()
    assert entries["opt/root/etc/app/app.conf"].data == b"rate=1\n"
    assert entries["opt/root/etc/app/app.conf"].mode == stat.S_IFREG | 0o644
    assert entries["opt/root/usr/bin/tool"].mode == stat.S_IFREG | 0o755       # a #! script
    assert (entries["opt/root/usr/bin/alias"].kind, entries["opt/root/usr/bin/alias"].data) == ("symlink", b"tool")
    assert (entries["opt/root/etc/current"].kind, entries["opt/root/etc/current"].data) == ("symlink", b"app")
    assert entries["opt/root/empty"].kind == "dir" and entries["opt/root"].kind == "dir"
    assert (entries["sbin/init"].kind, entries["sbin/init"].data) == ("symlink", b"/init")
    assert entries["usr/bin/t"].data == b"../../opt/root/usr/bin/tool"
    # GNU cpio extracts the tree with the links as links.
    out = workdir / "x"
    out.mkdir()
    archive = cpio.write(list(entries.values()))
    subprocess.run(["cpio", "-id", "--quiet"], input=archive, cwd=out, check=True)
    assert (out / "opt/root/usr/bin/alias").is_symlink() and (out / "opt/root/usr/bin/alias").read_text() == \
        "#!/bin/sh\necho tool\n"


def test_a_directory_can_be_the_root_and_hold_init(workdir):
    tree = workdir / "rootfs"
    tree.mkdir()
    shutil.copy(workdir / "linux/init.sh", tree / "init")
    entries, _ = build_initramfs(workdir, "        files: {/: rootfs}")
    assert entries["init"].mode == stat.S_IFREG | 0o755
    (tree / "init").unlink()
    with pytest.raises(ConfigError, match=r"the kernel starts '/init' \(rdinit in bootargs\), but the "
                                                 r"initramfs has no such file"):
        build_initramfs(workdir, "        files: {/: rootfs}")


def test_a_program_comes_with_its_shared_libraries(workdir):
    entries, part = build_initramfs(workdir, "        files: {/init: linux/init.sh}\n"
                                    "        programs: {/usr/bin/prog: linux/dyn/prog}\n"
                                    "        library_dirs: [linux/dyn/lib]")
    libc_dir = Path("/usr/aarch64-linux-gnu/lib")
    assert entries["usr/bin/prog"].data == (workdir / "linux/dyn/prog").read_bytes()
    # PT_INTERP at its own path; DT_NEEDED, also of the libraries, under /lib by their names.
    assert entries["lib/ld-linux-aarch64.so.1"].data == (libc_dir / "ld-linux-aarch64.so.1").read_bytes()
    assert entries["lib/libbhtest.so.1"].data == (workdir / "linux/dyn/lib/libbhtest.so.1.0").read_bytes()
    assert entries["lib/libc.so.6"].data == (libc_dir / "libc.so.6").read_bytes()
    assert entries["lib/libm.so.6"].data == (libc_dir / "libm.so.6").read_bytes()   # libbhtest's
    assert all(entries[f"lib/{n}"].mode == stat.S_IFREG | 0o755 for n in ("libc.so.6", "libbhtest.so.1"))
    libs = part.linux.payload.built.libraries
    assert libs["/lib/libbhtest.so.1"] == str((workdir / "linux/dyn/lib/libbhtest.so.1.0").resolve())


def test_a_program_whose_library_is_missing_is_an_error(workdir):
    with pytest.raises(ConfigError, match=r"program 'linux/dyn/prog' \(initramfs /usr/bin/prog\): "
                       r"'linux/dyn/prog' needs the shared library libbhtest.so.1, which is in none of the library "
                       r"directories \(/usr/aarch64-linux-gnu/lib\); add the directory that holds the arm64 "
                       r"libbhtest.so.1 to initramfs.library_dirs"):
        build_initramfs(workdir, "        files: {/init: linux/init.sh}\n"
                                 "        programs: {/usr/bin/prog: linux/dyn/prog}")


def own_module(workdir: Path, name: str, depends: str, version: str = "6.1.0-test") -> Path:
    from tool_support import fake_module_source
    (workdir / f"{name}.S").write_text(fake_module_source(name, depends, version))
    run([f"{CROSS}gcc", "-c", f"{name}.S", "-o", f"{name}.ko"], workdir)
    return workdir / f"{name}.ko"


def test_own_modules_land_in_modules_dep(workdir):
    """A module put below /lib/modules/<version> through files (a directory here) or given by its path
    under modules: depmod indexes it, and the kernel's modules it needs come along."""
    own_module(workdir, "mydrv", "net_failover")     # needs a kernel module (and so failover)
    (workdir / "extra").mkdir()
    shutil.move(own_module(workdir, "myhelper", ""), workdir / "extra" / "myhelper.ko")
    own_module(workdir, "myuser", "myhelper")
    entries, part = build_initramfs(workdir, "        files: {/init: linux/init.sh, "
                                             f"/{MODULES}/updates: extra}}\n"
                                             "        modules: [virtio_mmio, mydrv.ko, ./myuser.ko]")
    dep = entries[f"{MODULES}/modules.dep"].data.decode().splitlines()
    assert "extra/mydrv.ko: kernel/drivers/net/net_failover.ko kernel/net/core/failover.ko" in dep
    assert "extra/myuser.ko: updates/myhelper.ko" in dep
    assert "updates/myhelper.ko:" in dep and "kernel/drivers/virtio/virtio_mmio.ko:" in dep
    assert entries[f"{MODULES}/extra/mydrv.ko"].data == (workdir / "mydrv.ko").read_bytes()
    assert f"{MODULES}/kernel/net/core/failover.ko" in entries
    assert entries[f"{MODULES}/modules.dep.bin"].data  # kmod's modprobe reads this index
    assert part.linux.payload.built.modules_version == "6.1.0-test"


def test_own_module_for_another_kernel_is_refused(workdir):
    own_module(workdir, "mydrv", "", version="6.1.0-other")
    with pytest.raises(ConfigError, match=r"kernel module /lib/modules/6.1.0-test/extra/mydrv.ko is built for "
                       r"Linux 6.1.0-other, but the partition's kernel is 6.1.0-test; build it against that kernel's "
                       r"headers \(its vermagic must start with 6.1.0-test\)"):
        build_initramfs(workdir, "        files: {/init: linux/init.sh}\n        modules: [mydrv.ko]")
    with pytest.raises(ConfigError, match=r"kernel module /lib/modules/6.1.0-other/mydrv.ko is not below "
                       r"/lib/modules/6.1.0-test, where modprobe looks for the modules of the partition's kernel"):
        build_initramfs(workdir, "        files: {/init: linux/init.sh, /lib/modules/6.1.0-other/mydrv.ko: mydrv.ko}")


def test_without_depmod_the_tool_says_how_to_get_it(workdir, monkeypatch):
    from bulkhead import initramfs
    monkeypatch.setattr(initramfs, "depmod_program", lambda: None)
    with pytest.raises(ConfigError, match=r"depmod is not installed \(Debian package kmod\), and the "
                                                 r"initramfs' modules need the index it writes; run scripts/bootstrap.sh"):
        load(workdir)


def test_busybox_brings_a_udhcpc_script_that_configures_the_interface(workdir):
    entries, _ = build_initramfs(workdir, "        busybox: linux/busybox\n        files: {/init: linux/init.sh}")
    script = entries["etc/udhcpc/default.script"]  # where Debian's busybox looks; upstream's path links to it
    link = entries["usr/share/udhcpc/default.script"]
    assert (link.kind, link.data) == ("symlink", b"/etc/udhcpc/default.script")
    assert script.mode == stat.S_IFREG | 0o755
    text = script.data.decode()
    for needed in ('ifconfig "$interface" "$ip" netmask', 'route add default gw "$gw"', "nameserver $server",
                   "/etc/resolv.conf"):
        assert needed in text
    # It really configures: run it with a lease, with ifconfig and route recording their arguments.
    bin_dir = workdir / "fakebin"
    bin_dir.mkdir()
    for tool in ("ifconfig", "route"):
        (bin_dir / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> "$LOG"\n[ "$1" != del ]\n')
        (bin_dir / tool).chmod(0o755)
    (workdir / "udhcpc.sh").write_bytes(script.data.replace(b"RESOLV_CONF=/etc/resolv.conf",
                                                            b"RESOLV_CONF=${RESOLV_CONF:-/etc/resolv.conf}"))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(workdir / "log"), "RESOLV_CONF": str(workdir / "etc/resolv.conf"),
           "interface": "eth0", "ip": "10.0.2.15", "subnet": "255.255.255.0", "broadcast": "10.0.2.255",
           "router": "10.0.2.2", "dns": "10.0.2.3", "domain": "example"}
    out = subprocess.run(["sh", str(workdir / "udhcpc.sh"), "bound"], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert out == "udhcpc: eth0 bound 10.0.2.15 netmask 255.255.255.0 router 10.0.2.2 dns 10.0.2.3\n"
    assert (workdir / "log").read_text().splitlines() == [
        "ifconfig eth0 10.0.2.15 netmask 255.255.255.0 broadcast 10.0.2.255 up",
        "route del default dev eth0", "route add default gw 10.0.2.2 dev eth0 metric 0"]
    assert (workdir / "etc/resolv.conf").read_text() == "search example\nnameserver 10.0.2.3\n"
