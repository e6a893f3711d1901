"""Shared constants and helpers of the bulkhead tool tests (fixtures are in conftest.py).

Named uniquely (not conftest) so that test modules can import it even when pytest also loads
another directory's conftest.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).parent
BAD_DIR = HERE / "bad"
GOOD_DIR = HERE / "good"
REPO = HERE.parent.parent
CONFIG_INCLUDE = REPO / "hypervisor" / "include"
CROSS = "aarch64-linux-gnu-"

# Partition link script: three PT_LOAD segments (text, data, bss-only) and no loaded ELF headers.
PARTITION_LD = """\
ENTRY(_start)
PHDRS { text PT_LOAD; data PT_LOAD; bss PT_LOAD; }
SECTIONS {
  . = 0x40000000;
  .text : { *(.text*) } :text
  .bh_tests : { *(.bh_tests) } :text
  . = ALIGN(0x1000);
  .data : { *(.data*) } :data
  . = ALIGN(0x1000);
  .bss (NOLOAD) : { *(.bss*) } :bss
}
"""

APP_S = """\
	.text
	.global _start
_start:
	b .
	.data
	.quad 0x1122334455667788
	.bss
	.space 8192
"""

TESTS_S = APP_S + """\
	.section .bh_tests,"a"
	.quad 1
"""

X86_S = """\
	.text
	.global _start
_start:
	jmp _start
"""


def without_section_headers(elf: bytes) -> bytes:
    """The image as sstrip or `llvm-objcopy --strip-sections` leave it: no section header table (e_shoff,
    e_shnum and e_shstrndx 0, the table cut off the end of the file, where ld puts it); the loaded
    segments, test code included, unchanged."""
    import struct
    shoff = struct.unpack_from("<Q", elf, 40)[0]
    data = bytearray(elf[:shoff])
    struct.pack_into("<Q", data, 40, 0)
    struct.pack_into("<HHH", data, 58, 0, 0, 0)  # e_shentsize, e_shnum, e_shstrndx
    return bytes(data)


def run(argv: list[str], cwd: Path) -> None:
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)


# --- a fake Linux for Linux partitions (tests/tool/test_linux.py, bad/linux_*.yaml) -----------------
# linux/Image (a 64-byte arm64 Image header and a version banner; image_size 4M), Image.gz, be.Image
# (big-endian flag), old.Image (image_size 0), bad.gz (not gzip data), busybox, init.sh (not executable on
# the host, starts with #!), data.txt, and lib/modules/6.1.0-test/ with tiny relocatable objects whose
# .modinfo gives dependencies: virtio_mmio, virtio-rng, failover <- net_failover <- virtio_net, broken
# (needs a module that is missing). other/5.10.0-old/old.ko is built for another kernel.
FAKE_KERNEL_VERSION = "6.1.0-test"
FAKE_IMAGE_SIZE = 0x400000
FAKE_MODULES = {  # name -> (path below lib/modules/<version>/kernel, depends)
    "virtio_mmio": ("drivers/virtio", ""),
    "virtio-rng": ("drivers/char/hw_random", ""),
    "failover": ("net/core", ""),
    "net_failover": ("drivers/net", "failover"),
    "virtio_net": ("drivers/net", "net_failover"),
    "broken": ("drivers/misc", "nothere"),
}


def fake_image(version: str = FAKE_KERNEL_VERSION, image_size: int = FAKE_IMAGE_SIZE, flags: int = 0xA) -> bytes:
    import struct
    header = struct.pack("<IIQQQQQQ4sI", 0x14000010, 0, 0, image_size, flags, 0, 0, 0, b"ARM\x64", 0)
    banner = f"Linux version {version} (tests@bulkhead) #1 SMP\n".encode()
    return header + b"\0" * 64 + banner + bytes(range(256)) * 4


def fake_module_source(name: str, depends: str, version: str) -> str:
    """A module as depmod and the tool see it: .modinfo (depends, name, vermagic), one exported symbol
    (bh_sym_<name> in __ksymtab_strings) and an undefined reference to the one of each dependency."""
    key = name.replace("-", "_")
    uses = "".join(f"\t.quad bh_sym_{dep.replace('-', '_')}\n" for dep in depends.split(",") if dep)
    return (f'\t.section .modinfo,"a"\n\t.asciz "depends={depends}"\n\t.asciz "name={key}"\n'
            f'\t.asciz "vermagic={version} SMP mod_unload aarch64"\n'
            f'\t.section __ksymtab_strings,"a"\n\t.asciz "bh_sym_{key}"\n\t.data\n{uses}')


def _fake_module(path: Path, depends: str, version: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    source = path.with_suffix(".S")
    source.write_text(fake_module_source(path.stem, depends, version))
    run([f"{CROSS}gcc", "-c", source.name, "-o", path.name], path.parent)
    source.unlink()


def make_fake_linux(directory: Path) -> Path:
    import gzip
    linux = directory / "linux"
    linux.mkdir()
    (linux / "Image").write_bytes(fake_image())
    (linux / "Image.gz").write_bytes(gzip.compress(fake_image(), mtime=0))
    (linux / "be.Image").write_bytes(fake_image(flags=0xB))
    (linux / "old.Image").write_bytes(fake_image(image_size=0))
    (linux / "bad.gz").write_bytes(b"\x1f\x8b this is not gzip data")
    (linux / "busybox").write_bytes(b"\x7fELF fake busybox\n")
    (linux / "init.sh").write_text("#!/bin/sh\necho hello\n")
    (linux / "data.txt").write_text("some data\n")
    (linux / "empty.cpio").write_bytes(b"")
    modules = linux / "lib" / "modules" / FAKE_KERNEL_VERSION
    for name, (where, depends) in FAKE_MODULES.items():
        _fake_module(modules / "kernel" / where / f"{name}.ko", depends, FAKE_KERNEL_VERSION)
    _fake_module(linux / "other" / "5.10.0-old" / "kernel" / "old.ko", "", "5.10.0-old")
    _fake_dynamic(linux / "dyn")
    return linux


# dyn/prog: a dynamically linked arm64 program that needs libbhtest.so.1 (in dyn/lib, linked there as
# libbhtest.so -> libbhtest.so.1.0) and libc.so.6; libbhtest needs libm.so.6 (the C library's are in
# the default library directory, /usr/aarch64-linux-gnu/lib).
DYN_LIB_C = "#include <math.h>\nint bh_test(double x) { return (int)sqrt(x); }\n"
DYN_PROG_C = "#include <stdio.h>\nint bh_test(double);\nint main(void) { printf(\"%d\\n\", bh_test(49)); return 0; }\n"


def _fake_dynamic(directory: Path) -> None:
    lib = directory / "lib"
    lib.mkdir(parents=True)
    (directory / "lib.c").write_text(DYN_LIB_C)
    (directory / "prog.c").write_text(DYN_PROG_C)
    run([f"{CROSS}gcc", "-shared", "-fPIC", "-Wl,-soname,libbhtest.so.1", "-o", "lib/libbhtest.so.1.0", "lib.c",
         "-lm"], directory)
    (lib / "libbhtest.so.1").symlink_to("libbhtest.so.1.0")
    (lib / "libbhtest.so").symlink_to("libbhtest.so.1")
    run([f"{CROSS}gcc", "-o", "prog", "prog.c", "-Llib", "-lbhtest"], directory)
