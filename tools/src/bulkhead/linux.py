"""Linux partitions (docs/linux.md): pass-through devices, their checks, the boot payload (kernel Image,
device tree, initramfs) and its layout in the partition's RAM, and the device tree itself.

The guest sees a small QEMU-virt-like machine that the hypervisor emulates (struct bh_vmachine_cfg): a
GICv3 distributor and redistributors, a PL011 and PSCI through SMC, at QEMU virt's addresses. Its RAM is
identity mapped, so that devices passed through to it can use guest addresses for DMA.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bulkhead import initramfs
from bulkhead.devicetree import Cells, Node, Ref, address, compile_dts, reg, to_dts
from bulkhead.diagnostics import Diagnostics
from bulkhead.kimage import KernelImage, KernelProblem, read_kernel
from bulkhead.model import Area, Interrupt, Partition, System
from bulkhead.toolchain import ToolError
from bulkhead.units import K, M, align_down, align_up, hexa, size_text, span

# The emulated machine (struct bh_vmachine_cfg): QEMU virt's addresses.
GICD_IPA, GICD_SIZE = 0x0800_0000, 64 * K
GICR_IPA, GICR_STRIDE = 0x080A_0000, 128 * K  # one redistributor per vCPU, in vCPU order
UART_IPA, UART_SIZE = 0x0900_0000, 4 * K
UART_INTID = 33
# Ports from Linux user space (docs/ports.md): a PL061 whose lines are hypervisor events, and the
# register page through which a process makes port hypercalls. No QEMU device lives here, and no
# platform device raises INTID 41.
EVENTS_IPA, EVENTS_SIZE = 0x0B00_0000, 4 * K
EVENTS_INTID = 41
CALL_IPA, CALL_SIZE = 0x0B00_1000, 4 * K
# Stolen time (SMCCC paravirtualized time, found by the guest through PV_TIME_ST, not the device
# tree): one read-only 64-byte record per vCPU.
STEAL_IPA, STEAL_SIZE = 0x0B00_2000, 4 * K
MAINTENANCE_PPI = 9              # GICv3 maintenance interrupt, PPI 9 (INTID 25)
TIMER_PPIS = (13, 14, 11, 10)    # secure physical, physical, virtual, hypervisor timer
UART_CLOCK_HZ = 24_000_000
FIRST_SPI = 32

KERNEL_ALIGN = 2 * M   # the RAM base the Image is placed above (text_offset)
DTB_MAX = 2 * M        # the arm64 boot protocol's limit; the slot reserved for the device tree
VIRTIO_SLOT_SIZE = 0x200
PAGE = 4 * K

IRQ_EDGE_RISING, IRQ_LEVEL_HIGH = 1, 4
GIC_SPI, GIC_PPI = 0, 1


def vmachine_ranges(vcpus: int) -> list[tuple[str, int, int]]:
    """(what, guest base, size) of the emulated devices of a Linux partition with vcpus vCPUs."""
    return [("the emulated GICv3 distributor", GICD_IPA, GICD_SIZE),
            ("the emulated GICv3 redistributors", GICR_IPA, GICR_STRIDE * max(vcpus, 1)),
            ("the emulated PL011 UART", UART_IPA, UART_SIZE),
            ("the event GPIO", EVENTS_IPA, EVENTS_SIZE),
            ("the user-space hypercall page", CALL_IPA, CALL_SIZE),
            ("the stolen-time records", STEAL_IPA, STEAL_SIZE)]


# --- pass-through devices --------------------------------------------------------------------

@dataclass(frozen=True)
class DeviceInfo:
    """Where a pass-through device is: its registers, the page mapped for it and its interrupt."""

    base: int
    size: int
    page: int
    intid: int


def device_info(system: System, device) -> DeviceInfo | None:
    platform = system.platform
    if platform is None or device.kind is None:
        return None
    if device.kind == "virtio-mmio":
        virtio = platform.device("virtio")
        if device.slot is None or device.slot >= len(virtio.intids):
            return None
        base = virtio.base + device.slot * VIRTIO_SLOT_SIZE
        return DeviceInfo(base, VIRTIO_SLOT_SIZE, align_down(base, PAGE), virtio.intids[device.slot])
    rtc = platform.device("rtc")
    return DeviceInfo(rtc.base, rtc.size, rtc.base, rtc.intids[0])


def expand_devices(system: System, diags: Diagnostics) -> None:
    """Turn each partition's devices into what they mean for the hypervisor: a device area for the 4K page
    holding the device (identity mapped, rw) and its interrupt. Called once, before the area checks."""
    pages: dict[int, tuple[Partition, object]] = {}
    for part in system.partitions:
        seen: dict[str, object] = {}
        for device in part.devices:
            info = _device_checked(system, part, device, seen, diags)
            if info is None:
                continue
            owner = pages.get(info.page)
            if owner is not None and owner[0] is not part:
                other, first = owner
                fix = ("give the partitions virtio-mmio slots in different pages (slots 8*n to 8*n+7 share one)"
                       if device.kind == "virtio-mmio" else f"give {device.text} to one partition only")
                diags.error(device.pos, f"{part.title}: {device.text} is in the 4K page {span(info.page, PAGE)}, "
                            f"which {other.title} already has for {first.text} (line {first.pos.line}); "
                            f"stage 2 maps whole pages, so {fix}")
                continue
            if owner is None:
                pages[info.page] = (part, device)
                area = Area(device.pos, index=len(part.areas), label=device.text, phys=info.page, guest=info.page,
                            size=PAGE, rights="rw", kind="device", marks={"phys": device.pos})
                part.areas.append(area)
            part.interrupts.append(Interrupt(device.pos, index=len(part.interrupts), intid=info.intid))


def _device_checked(system: System, part: Partition, device, seen: dict, diags: Diagnostics) -> DeviceInfo | None:
    if device.kind is None or system.platform is None:
        return None
    if device.text in seen:
        diags.error(device.pos, f"{part.title}: device {device.text} is listed twice (also at line "
                    f"{seen[device.text].pos.line}); remove one")
        return None
    seen[device.text] = device
    info = device_info(system, device)
    if info is None:
        slots = len(system.platform.device("virtio").intids)
        diags.error(device.pos, f"{part.title}: virtio-mmio slot {device.slot} does not exist; "
                    f"{system.platform.name} has slots 0 to {slots - 1}")
    return info


# --- checks without the files ------------------------------------------------------------------

def check_linux(system: System, diags: Diagnostics) -> None:
    for part in system.partitions:
        if part.linux is not None:
            _check_memory(system, part, diags)
            _check_initramfs_paths(part, diags)


def ram_area(part: Partition) -> Area | None:
    """The area that holds the kernel, device tree and initramfs: the first normal area."""
    return next((a for a in part.areas if a.kind == "normal"), None)


def _check_memory(system: System, part: Partition, diags: Diagnostics) -> None:
    ram = ram_area(part)
    if ram is None:
        if part.areas_ok:
            diags.error(part.at("memory"), f"{part.title}: a Linux partition needs a normal memory area (its RAM) "
                        f"for the kernel; add one, e.g. '- {{name: ram, phys: 0x48000000, size: 256M, rights: rwx}}'")
        return
    for area in part.areas:
        if not area.placed:
            continue
        who = f"{part.title} {area.title}"
        if area.kind == "normal" and area.guest != area.phys:
            diags.error(area.at("guest"), f"{who}: guest {hexa(area.guest)} differs from phys {hexa(area.phys)}; a "
                        f"Linux partition's RAM must be identity mapped because devices passed through to it use "
                        f"guest addresses for DMA; remove guest (it defaults to phys)")
        if area.kind == "normal" and area.rights is not None and set(area.rights) != set("rwx"):
            diags.error(area.at("rights", "phys"), f"{who}: a Linux partition's RAM must have rights rwx (Linux runs "
                        f"code from any page of its memory); set 'rights: rwx'")
        for what, base, size in vmachine_ranges(len(part.vcpus)):
            if area.guest < base + size and base < area.guest + area.size:
                diags.error(area.at("guest", "phys"), f"{who}: guest range {span(area.guest, area.size)} overlaps "
                            f"{what} ({span(base, size)}) that a Linux partition sees; use other guest addresses")
    if ram.placed and ram.guest % KERNEL_ALIGN:
        diags.error(ram.at("guest", "phys"), f"{part.title} {ram.title}: the first normal area of a Linux partition "
                    f"holds the kernel and must start {size_text(KERNEL_ALIGN)} aligned; use "
                    f"{hexa(align_up(ram.guest, KERNEL_ALIGN))}")


def _check_initramfs_paths(part: Partition, diags: Diagnostics) -> None:
    spec = part.linux.initramfs
    if spec is None:
        return
    reserved = {initramfs.BUSYBOX_PATH: "busybox", "/bin/sh": "the busybox shell link"} if spec.busybox else {}
    for key, items in (("file", spec.files), ("program", spec.programs), ("symlink", spec.symlinks)):
        for item in items:
            if not initramfs.valid_dest(item.dest, root_ok=key == "file"):
                diags.error(item.pos, f"{part.title}: initramfs {key} '{item.dest}' is not a valid path in the "
                            f"archive; write an absolute path naming a file, e.g. /init or /bin/tool")
            elif item.dest in reserved:
                diags.error(item.pos, f"{part.title}: initramfs {key} '{item.dest}' is where "
                            f"{reserved[item.dest]} goes; remove busybox or choose another path")
    rdinit = _rdinit(part.linux.bootargs)
    names = {item.dest for item in spec.files + spec.programs + spec.symlinks} | set(reserved)
    # A directory may hold it: then the built archive is checked (load_payload).
    trees = any(item.path is not None and item.path.is_dir() for item in spec.files)
    if spec.files_ok and rdinit not in names and not trees:
        diags.error(part.linux.at("bootargs", "initramfs"), f"{part.title}: the kernel starts '{rdinit}' "
                    f"(rdinit in bootargs), but the initramfs has no such file; add it under initramfs.files, e.g. "
                    f"'{rdinit}: init.sh'")


def _rdinit(bootargs: str) -> str | None:
    """The first program the kernel runs from the initramfs: rdinit=, default /init."""
    for arg in bootargs.split():
        if arg.startswith("rdinit="):
            return arg.removeprefix("rdinit=")
    return "/init"


# --- the payload -------------------------------------------------------------------------------

@dataclass
class PayloadSegment:
    """One part of the payload the hypervisor copies into the partition's RAM (a bh_segment_cfg)."""

    what: str
    ipa: int
    file_size: int
    mem_size: int
    path: Path | None = None    # the file packed into the image (set when it is written or given)
    data: bytes | None = None   # contents still to be written

    @property
    def size(self) -> int:
        return max(self.mem_size, self.file_size)


@dataclass
class Payload:
    kernel: KernelImage
    entry: int        # the kernel's load address: base of RAM + text_offset
    dtb_ipa: int
    initrd_ipa: int | None
    initrd_size: int
    built: initramfs.Built | None   # the archive the tool built (None: none, or a ready-made file)
    kernel_seg: PayloadSegment
    dtb_seg: PayloadSegment
    initrd_seg: PayloadSegment | None
    outputs: dict[str, Path] = field(default_factory=dict)  # what write_payload wrote: dts, dtb, cpio, kernel

    @property
    def segments(self) -> tuple[PayloadSegment, ...]:
        return tuple(s for s in (self.kernel_seg, self.dtb_seg, self.initrd_seg) if s is not None)

    @property
    def initrd_end(self) -> int:
        return (self.initrd_ipa or 0) + self.initrd_size


def load_payload(system: System, part: Partition, diags: Diagnostics) -> None:
    """Read the kernel, build or read the initramfs, and place them in the partition's RAM
    (part.linux.payload). Problems are errors in diags."""
    spec = part.linux
    kernel = _read_kernel_file(part, diags)
    initrd_size, built, initrd_path = 0, None, None
    if spec.initramfs is not None:
        built = initramfs.build(spec.initramfs, part.title, spec.kernel_path, kernel.version if kernel else None,
                                diags)
        if built is None:
            return
        rdinit = _rdinit(spec.bootargs)
        if rdinit and spec.initramfs.files_ok and not any(e.name == rdinit.strip("/") for e in built.entries):
            diags.error(spec.at("bootargs", "initramfs"), f"{part.title}: the kernel starts '{rdinit}' (rdinit in "
                        f"bootargs), but the initramfs has no such file; add it under initramfs.files, e.g. "
                        f"'{rdinit}: init.sh'")
            return
        initrd_size = len(built.archive)
    elif spec.initramfs_file_path is not None:
        initrd_path = spec.initramfs_file_path
        initrd_size = _ready_initramfs_size(part, diags)
        if initrd_size is None:
            return
    ram = ram_area(part)
    if kernel is None or ram is None or not ram.placed or ram.guest % KERNEL_ALIGN:
        return
    entry = ram.guest + kernel.text_offset
    dtb_ipa = align_up(entry + kernel.size, KERNEL_ALIGN)
    initrd_ipa = dtb_ipa + DTB_MAX if initrd_size else None
    end = dtb_ipa + DTB_MAX + align_up(initrd_size, PAGE)
    if end > ram.guest + ram.size:
        parts = f"kernel {size_text(align_up(kernel.size, PAGE))} at {hexa(entry)}, device tree {size_text(DTB_MAX)}"
        if initrd_size:
            parts += f", initramfs {size_text(align_up(initrd_size, PAGE))}"
        diags.error(ram.at("size"), f"{part.title} {ram.title}: the Linux payload ({parts}) needs "
                    f"{span(ram.guest, end - ram.guest)}, more than the area's {size_text(ram.size)}; make size at "
                    f"least {size_text(align_up(end - ram.guest, M))} (and leave Linux room to run)")
        return
    kernel_seg = PayloadSegment("kernel", entry, len(kernel.data), kernel.size,
                                path=None if kernel.compressed else spec.kernel_path,
                                data=kernel.data if kernel.compressed else None)
    dtb_seg = PayloadSegment("device tree", dtb_ipa, 0, 0)
    initrd_seg = None
    if initrd_size:
        initrd_seg = PayloadSegment("initramfs", initrd_ipa, initrd_size, initrd_size, path=initrd_path,
                                    data=built.archive if built else None)
    spec.payload = Payload(kernel, entry, dtb_ipa, initrd_ipa, initrd_size, built, kernel_seg, dtb_seg, initrd_seg)


def _read_kernel_file(part: Partition, diags: Diagnostics) -> KernelImage | None:
    spec = part.linux
    if spec.kernel_path is None:
        return None
    pos = spec.at("kernel")
    if not spec.kernel_path.is_file():
        diags.error(pos, f"{part.title}: kernel '{spec.kernel}' does not exist (relative paths start at the "
                    f"directory of the configuration file); run scripts/bootstrap.sh for Debian's kernel, or fix "
                    f"the path")
        return None
    try:
        return read_kernel(spec.kernel_path)
    except KernelProblem as exc:
        diags.error(pos, f"{part.title}: kernel '{spec.kernel}' {exc}; give the path of an arm64 Linux Image "
                    f"(arch/arm64/boot/Image or Image.gz)")
    except OSError as exc:
        diags.error(pos, f"{part.title}: kernel '{spec.kernel}' cannot be read ({exc.strerror}); fix the path or "
                    f"its permissions")
    return None


def _ready_initramfs_size(part: Partition, diags: Diagnostics) -> int | None:
    spec = part.linux
    path, pos = spec.initramfs_file_path, spec.at("initramfs")
    if not path.is_file():
        diags.error(pos, f"{part.title}: initramfs '{spec.initramfs_file}' does not exist (relative paths start at "
                    f"the directory of the configuration file); build it or fix the path")
        return None
    size = path.stat().st_size
    if size == 0:
        diags.error(pos, f"{part.title}: initramfs '{spec.initramfs_file}' is empty; give a newc cpio archive")
        return None
    return size


# --- the device tree ---------------------------------------------------------------------------

def uart_path() -> str:
    return f"/pl011@{UART_IPA:x}"


def device_tree(system: System, part: Partition) -> Node:
    """The device tree a Linux partition boots with (needs its payload for the initrd addresses), or
    the one of a partition with a board (board.py): the same machine, with no bootargs or initrd."""
    spec = part.linux
    payload = spec.payload if spec is not None else None
    root = Node("", label=None)
    root.prop("compatible", "linux,dummy-virt").prop("model", f"Bulkhead partition {part.name}")
    root.prop("#address-cells", Cells(2)).prop("#size-cells", Cells(2)).prop("interrupt-parent", Cells(Ref("gic")))

    chosen = root.add(Node("chosen"))
    if spec is not None:
        chosen.prop("bootargs", spec.bootargs)
    chosen.prop("stdout-path", uart_path())
    if payload is not None and payload.initrd_ipa is not None:
        chosen.prop("linux,initrd-start", address(payload.initrd_ipa))
        chosen.prop("linux,initrd-end", address(payload.initrd_end))
    root.add(Node("aliases")).prop("serial0", uart_path())

    for area in part.areas:
        if area.kind == "normal":
            root.add(Node(f"memory@{area.guest:x}")).prop("device_type", "memory").prop("reg", reg(area.guest, area.size))

    cpus = root.add(Node("cpus")).prop("#address-cells", Cells(1)).prop("#size-cells", Cells(0))
    for vcpu in part.vcpus:
        cpus.add(Node(f"cpu@{vcpu.index:x}")).prop("device_type", "cpu").prop("compatible", "arm,armv8") \
            .prop("reg", Cells(vcpu.index)).prop("enable-method", "psci")
    root.add(Node("psci")).prop("compatible", ["arm,psci-1.0", "arm,psci-0.2"]).prop("method", "smc")

    root.add(Node("timer")).prop("compatible", "arm,armv8-timer").prop(
        "interrupts", [Cells(GIC_PPI, ppi, IRQ_LEVEL_HIGH) for ppi in TIMER_PPIS])
    gic = root.add(Node(f"intc@{GICD_IPA:x}", label="gic"))
    gic.prop("compatible", "arm,gic-v3").prop("#interrupt-cells", Cells(3)).prop("interrupt-controller")
    gic.prop("#address-cells", Cells(0))  # no children (no ITS)
    gic.prop("reg", [reg(GICD_IPA, GICD_SIZE), reg(GICR_IPA, GICR_STRIDE * len(part.vcpus))])
    gic.prop("#redistributor-regions", Cells(1))
    gic.prop("interrupts", Cells(GIC_PPI, MAINTENANCE_PPI, IRQ_LEVEL_HIGH))

    clock = root.add(Node("apb-pclk", label="apb_pclk"))
    clock.prop("compatible", "fixed-clock").prop("#clock-cells", Cells(0))
    clock.prop("clock-frequency", Cells(UART_CLOCK_HZ)).prop("clock-output-names", "clk24mhz")
    uart = root.add(Node(f"pl011@{UART_IPA:x}"))
    uart.prop("compatible", ["arm,pl011", "arm,primecell"]).prop("reg", reg(UART_IPA, UART_SIZE))
    uart.prop("interrupts", Cells(GIC_SPI, UART_INTID - FIRST_SPI, IRQ_LEVEL_HIGH))
    uart.prop("clocks", [Cells(Ref("apb_pclk")), Cells(Ref("apb_pclk"))])
    uart.prop("clock-names", ["uartclk", "apb_pclk"])

    # Port and doorbell notifications as GPIO edges (Linux's gpio-pl061 and GPIO character device).
    events = root.add(Node(f"pl061@{EVENTS_IPA:x}"))
    events.prop("compatible", ["arm,pl061", "arm,primecell"]).prop("reg", reg(EVENTS_IPA, EVENTS_SIZE))
    events.prop("interrupts", Cells(GIC_SPI, EVENTS_INTID - FIRST_SPI, IRQ_LEVEL_HIGH))
    events.prop("gpio-controller").prop("#gpio-cells", Cells(2))
    events.prop("interrupt-controller").prop("#interrupt-cells", Cells(2)).prop("#address-cells", Cells(0))
    events.prop("clocks", Cells(Ref("apb_pclk"))).prop("clock-names", "apb_pclk")
    events.prop("gpio-line-names", ["bulkhead-port", "bulkhead-doorbell", "", "", "", "", "", ""])
    # No driver binds this one, so /dev/mem may map it (CONFIG_IO_STRICT_DEVMEM).
    root.add(Node(f"bulkhead-call@{CALL_IPA:x}")).prop("compatible", "bulkhead,hypercall-page") \
        .prop("reg", reg(CALL_IPA, CALL_SIZE))

    for device in part.devices:
        info = device_info(system, device)
        if info is not None:
            root.add(_device_node(device, info))
    return root


def _device_node(device, info: DeviceInfo) -> Node:
    spi = info.intid - FIRST_SPI
    if device.kind == "virtio-mmio":
        node = Node(f"virtio_mmio@{info.base:x}").prop("compatible", "virtio,mmio")
        node.prop("reg", reg(info.base, info.size)).prop("interrupts", Cells(GIC_SPI, spi, IRQ_EDGE_RISING))
        return node.prop("dma-coherent")
    node = Node(f"pl031@{info.base:x}").prop("compatible", ["arm,pl031", "arm,primecell"])
    node.prop("reg", reg(info.base, info.size)).prop("interrupts", Cells(GIC_SPI, spi, IRQ_LEVEL_HIGH))
    return node.prop("clocks", Cells(Ref("apb_pclk"))).prop("clock-names", "apb_pclk")


def render_dts(system: System, part: Partition, source_name: str) -> str:
    header = (f"Generated by `bulkhead build` from {source_name}: the device tree of Linux partition "
              f"'{part.name}'.\nDo not edit: change the configuration and rebuild.")
    return to_dts(device_tree(system, part), header)


# --- writing the payload -----------------------------------------------------------------------

def write_payload(system: System, part: Partition, out: Path, source_name: str) -> dict[str, Path]:
    """Write <name>.dts, <name>.dtb, <name>.cpio (a built initramfs) and <name>.Image (a gzip kernel,
    decompressed) into out and point the payload's segments at them; returns what was written."""
    payload = part.linux.payload
    outputs: dict[str, Path] = {}
    dts, dtb = out / f"{part.name}.dts", out / f"{part.name}.dtb"
    dts.write_text(render_dts(system, part, source_name))
    warnings = compile_dts(dts, dtb)
    if warnings:
        raise ToolError(f"dtc warned about the generated {dts}:\n{warnings.rstrip()}")
    size = dtb.stat().st_size
    if size > DTB_MAX:
        raise ToolError(f"{dtb} is {size} bytes, more than the {DTB_MAX} bytes the arm64 boot protocol allows")
    payload.dtb_seg.file_size = payload.dtb_seg.mem_size = size
    payload.dtb_seg.path = dtb.resolve()
    outputs.update(dts=dts, dtb=dtb)
    for seg, key, name in ((payload.initrd_seg, "cpio", f"{part.name}.cpio"),
                           (payload.kernel_seg, "kernel", f"{part.name}.Image")):
        if seg is None:
            continue
        if seg.data is not None:
            target = out / name
            target.write_bytes(seg.data)
            seg.path = target.resolve()
            outputs[key] = target
    payload.outputs = outputs
    return outputs


def write_payloads(system: System, out: Path, source_name: str) -> dict[str, dict[str, Path]]:
    return {part.name: write_payload(system, part, out, source_name)
            for part in system.by_id() if part.linux is not None}


def partition_ram_size(part: Partition) -> int:
    return sum(a.size for a in part.areas if a.kind == "normal")


def write_bare_inputs(part: Partition, out: Path) -> tuple[Path, Path | None]:
    """The kernel and initramfs files for booting the partition's Linux without Bulkhead: the files as given,
    or written into out (<name>.cpio built by the tool, <name>.Image for a gzip kernel)."""
    payload = part.linux.payload
    out.mkdir(parents=True, exist_ok=True)
    kernel = part.linux.kernel_path
    if payload.kernel.compressed:
        kernel = out / f"{part.name}.Image"
        kernel.write_bytes(payload.kernel.data)
    initrd = part.linux.initramfs_file_path
    if payload.built is not None:
        initrd = out / f"{part.name}.cpio"
        initrd.write_bytes(payload.built.archive)
    return kernel.resolve(), initrd.resolve() if initrd is not None else None
