"""`bulkhead build`: emit the tables and image assembly, compile, link and check the packed image."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

from bulkhead import board, disk, firmware, linux
from bulkhead.abi import IMAGE_END_SYMBOL
from bulkhead.checks import image_address
from bulkhead.diagnostics import ConfigError, Diagnostic
from bulkhead.emit_c import render_config
from bulkhead.emit_images import render_images, write_segment_files
from bulkhead.model import System
from bulkhead.qemu import device_tree_address, qemu_command
from bulkhead.toolchain import Toolchain, ToolError
from bulkhead.units import align_up, hexa


@dataclass(frozen=True)
class BuildOptions:
    out: Path
    hyp_lib: Path
    linker_script: Path
    include: tuple[Path, ...]
    cross: str = "aarch64-linux-gnu-"


@dataclass(frozen=True)
class BuildResult:
    elf: Path
    image: Path
    image_end: int
    image_size: int
    segment_count: int
    qemu_cmd: Path
    linux: dict[str, dict[str, Path]] = field(default_factory=dict)  # Linux partition -> dts, dtb, cpio, ...


@dataclass(frozen=True)
class Sources:
    """What `build` generates before it compiles: the tables and the assembly that packs the segments."""
    config_c: Path
    images_s: Path
    segment_count: int
    linux: dict[str, dict[str, Path]]


def generate(system: System, source_name: str, out: Path) -> Sources:
    """Write bh_config.c, bh_images.S and the files they pack into out. The boot checker
    (tests/tool/test_boot_accepted.py) compiles exactly these for the host."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("seg_*.bin"):
        stale.unlink()
    config_c, images_s = out / "bh_config.c", out / "bh_images.S"
    linux_outputs = linux.write_payloads(system, out, source_name)
    linux_outputs.update(board.write_dtbs(system, out, source_name))
    for name, files in disk.write_disks(system, out).items():
        linux_outputs.setdefault(name, {}).update(files)
    for name, files in firmware.write_padded(system, out).items():
        linux_outputs.setdefault(name, {}).update(files)
    firmware.write_sizes(system, out)
    segments = write_segment_files(system, out)
    images_s.write_text(render_images(segments, source_name))
    config_c.write_text(render_config(system, source_name))
    return Sources(config_c, images_s, len(segments), linux_outputs)


def build(system: System, source_name: str, opts: BuildOptions) -> BuildResult:
    """Raises ToolError when a command fails, ConfigError when the image does not fit."""
    out = opts.out
    sources = generate(system, source_name, out)
    elf, image = out / "bulkhead.elf", out / "bulkhead.img"
    _compile_and_link(system, opts, sources.config_c, sources.images_s, elf)
    Toolchain(opts.cross, opts.include).binary(elf, image)
    image_end = _check_fits(system, source_name, elf, image)
    cmd_file = out / "qemu.cmd"
    cmd_file.write_text(shlex.join(qemu_command(system, image.resolve())) + "\n")
    return BuildResult(elf, image, image_end, image.stat().st_size, sources.segment_count, cmd_file,
                       sources.linux)


def _compile_and_link(system: System, opts: BuildOptions, config_c: Path, images_s: Path, elf: Path) -> None:
    tools = Toolchain(opts.cross, opts.include)
    objects = [config_c.with_suffix(".o"), images_s.with_suffix(".o")]
    tools.compile(config_c, objects[0])
    tools.compile(images_s, objects[1])
    # The linker script places the image at bh_image_base (hyp.ld), in the hypervisor memory.
    tools.link(opts.linker_script, opts.hyp_lib, objects, elf, {"bh_image_base": image_address(system)})


def image_end_of(elf: Path) -> int:
    with open(elf, "rb") as stream:
        for section in ELFFile(stream).iter_sections():
            if isinstance(section, SymbolTableSection):
                symbols = section.get_symbol_by_name(IMAGE_END_SYMBOL)
                if symbols:
                    return symbols[0]["st_value"]
    raise ToolError(f"{elf} has no {IMAGE_END_SYMBOL} symbol; the linker script must define it at the end "
                    f"of the image")


def _check_fits(system: System, source_name: str, elf: Path, image: Path) -> int:
    hyp = system.hypervisor
    end, limit = image_end_of(elf), hyp.base + hyp.size
    if end > limit:
        need = align_up(end - hyp.base, system.platform.hyp_align)
        _refuse(source_name, elf, image, hyp.at("size"), f"the packed image ends at {hexa(end)}, past the "
                f"hypervisor memory end {hexa(limit)}; make hypervisor.memory.size at least {hexa(need)}")
    ram_end = system.platform.ram_base + system.memory
    dtb = device_tree_address(system, end)
    if dtb >= ram_end:
        _refuse(source_name, elf, image, hyp.at("base"), f"QEMU puts its device tree at the first 2M boundary "
                f"after the packed image (ends at {hexa(end)}), {hexa(dtb)}, which is not inside RAM (ends at "
                f"{hexa(ram_end)}), and then refuses to start; move the hypervisor memory down by 2M or more")
    return end


def _refuse(source_name: str, elf: Path, image: Path, pos, message: str) -> None:
    elf.unlink(missing_ok=True)
    image.unlink(missing_ok=True)
    raise ConfigError(source_name, [Diagnostic(pos, message)])
