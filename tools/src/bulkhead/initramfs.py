"""Building a Linux partition's initramfs (a newc cpio archive) from linux.initramfs: busybox, files and
kernel modules with their dependencies."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from bulkhead import cpio
from bulkhead.diagnostics import Diagnostics
from bulkhead.model import InitramfsFile, InitramfsSpec

BUSYBOX_PATH = "/bin/busybox"
SKELETON = ("bin", "dev", "proc", "root", "sbin", "sys", "tmp", "usr/bin", "usr/sbin")
MODULE_SUFFIX = ".ko"


def module_key(name: str) -> str:
    """Module names are the same with - and _ (virtio-rng = virtio_rng)."""
    return name.removesuffix(MODULE_SUFFIX).replace("-", "_")


def valid_dest(dest: str) -> bool:
    """An absolute path naming a file: no empty, '.' or '..' components, no trailing '/'."""
    if not dest.startswith("/") or dest.endswith("/"):
        return False
    return all(part not in ("", ".", "..") for part in dest[1:].split("/"))


def is_executable(path: Path, data: bytes) -> bool:
    """Executable bits on the host, an ELF file or a script (#!): the archive gives it mode 0755."""
    return bool(path.stat().st_mode & 0o111) or data[:4] == b"\x7fELF" or data[:2] == b"#!"


@dataclass
class Module:
    key: str       # module_key of its name
    relpath: str   # below the modules directory, e.g. kernel/drivers/virtio/virtio_mmio.ko
    path: Path
    depends: list[str] = field(default_factory=list)  # module keys
    vermagic: str | None = None


def modinfo(path: Path) -> dict[str, str]:
    """The key=value strings of a module's .modinfo section (empty when it has none)."""
    try:
        with open(path, "rb") as stream:
            section = ELFFile(stream).get_section_by_name(".modinfo")
            data = section.data() if section is not None else b""
    except (ELFError, OSError, ValueError):
        return {}
    info = {}
    for item in data.split(b"\0"):
        key, sep, value = item.decode(errors="replace").partition("=")
        if sep:
            info.setdefault(key, value)
    return info


def index_modules(modules_dir: Path) -> dict[str, tuple[str, Path]]:
    """module key -> (path below modules_dir, file) for every .ko file under modules_dir."""
    found = {}
    for top, dirs, files in os.walk(modules_dir, followlinks=True):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(MODULE_SUFFIX):
                path = Path(top) / name
                found.setdefault(module_key(name), (path.relative_to(modules_dir).as_posix(), path))
    return found


@dataclass
class Built:
    archive: bytes
    entries: list[cpio.Entry]
    modules_version: str | None = None  # the lib/modules/<version> the modules came from
    modules: list[str] = field(default_factory=list)  # relpaths in load order


class Builder:
    """Collects the entries of one archive; problems become errors in diags (title: "partition 'x'")."""

    def __init__(self, spec: InitramfsSpec, title: str, diags: Diagnostics) -> None:
        self.spec, self.title, self.diags = spec, title, diags
        self.entries: list[cpio.Entry] = [cpio.directory(name) for name in SKELETON]
        self.entries[SKELETON.index("tmp")] = cpio.directory("tmp", 0o1777)
        self.entries.append(cpio.char_device("dev/console", 5, 1))
        self.ok = True

    def error(self, pos, message: str) -> None:
        self.diags.error(pos, f"{self.title}: {message}")
        self.ok = False

    def read_input(self, path: Path | None, what: str, pos) -> bytes | None:
        if path is None:
            return None
        if not path.exists():
            self.error(pos, f"{what} does not exist (relative paths start at the directory of the configuration "
                       f"file); build it or fix the path")
        elif not path.is_file():
            self.error(pos, f"{what} is not a regular file; give the path of a file")
        else:
            try:
                return path.read_bytes()
            except OSError as exc:
                self.error(pos, f"{what} cannot be read ({exc.strerror}); fix its permissions")
        return None

    def add_busybox(self) -> None:
        data = self.read_input(self.spec.busybox_path, f"initramfs busybox '{self.spec.busybox}'",
                               self.spec.at("busybox"))
        if data is not None:
            self.entries.append(cpio.regular(BUSYBOX_PATH, data, 0o755))
            self.entries.append(cpio.symlink("/bin/sh", "busybox"))

    def add_file(self, item: InitramfsFile) -> None:
        data = self.read_input(item.path, f"'{item.source}' (initramfs file {item.dest})", item.at("source"))
        if data is not None:
            self.entries.append(cpio.regular(item.dest, data, 0o755 if is_executable(item.path, data) else 0o644))

    def add_modules(self, modules_dir: Path, kernel_version: str | None) -> tuple[str, list[str]]:
        """Add the listed modules and their dependencies below /lib/modules/<version>, with a modules.dep
        for modprobe; returns the version and the modules in load order."""
        index = index_modules(modules_dir)
        chosen: dict[str, Module] = {}
        for ref in self.spec.modules:
            if ref.name is None:
                continue
            if module_key(ref.name) not in index:
                self.error(ref.pos, f"kernel module '{ref.name}' is not in {modules_dir} (no {ref.name}.ko, also "
                           f"written with - or _, below it); check the name, or the kernel's modules directory")
                continue
            self._collect(module_key(ref.name), index, chosen, ref.pos, ref.name, modules_dir)
        version = modules_dir.name
        self._check_vermagic(chosen, kernel_version, modules_dir)
        order = _load_order(chosen)
        base = f"lib/modules/{version}"
        for module in order:
            self.entries.append(cpio.regular(f"{base}/{module.relpath}", module.path.read_bytes()))
        dep_lines = [f"{m.relpath}: {' '.join(chosen[d].relpath for d in reversed(_deps_in_order(m, chosen)))}"
                     .rstrip() + "\n" for m in order]
        self.entries.append(cpio.regular(f"{base}/modules.dep", "".join(dep_lines).encode()))
        return version, [m.relpath for m in order]

    def _collect(self, key: str, index, chosen: dict[str, Module], pos, asked: str, modules_dir: Path) -> None:
        if key in chosen:
            return
        relpath, path = index[key]
        info = modinfo(path)
        depends = [module_key(d) for d in info.get("depends", "").split(",") if d]
        chosen[key] = Module(key, relpath, path, depends, info.get("vermagic"))
        for dep in depends:
            if dep not in index:
                self.error(pos, f"kernel module '{asked}' needs module '{dep}', which is not in {modules_dir}; "
                           f"the modules directory is incomplete")
                continue
            self._collect(dep, index, chosen, pos, asked, modules_dir)

    def _check_vermagic(self, chosen: dict[str, Module], kernel_version: str | None, modules_dir: Path) -> None:
        if kernel_version is None:
            return
        for module in chosen.values():
            built_for = module.vermagic.split()[0] if module.vermagic else None
            if built_for and built_for != kernel_version:
                self.error(self.spec.at("modules_dir", "modules"), f"kernel module {module.relpath} in "
                           f"{modules_dir} is built for Linux {built_for}, but the kernel is {kernel_version}; "
                           f"take the modules of the same kernel build")
                return


def _deps_in_order(module: Module, chosen: dict[str, Module]) -> list[str]:
    """Every module that module needs, directly or not, in load order (dependencies first)."""
    seen: list[str] = []

    def visit(key: str) -> None:
        for dep in chosen[key].depends:
            if dep in chosen and dep not in seen:
                visit(dep)
                seen.append(dep)
    visit(module.key)
    return seen


def _load_order(chosen: dict[str, Module]) -> list[Module]:
    order: list[str] = []
    for key in chosen:
        for dep in _deps_in_order(chosen[key], chosen) + [key]:
            if dep not in order:
                order.append(dep)
    return [chosen[key] for key in order]


def modules_dir_of(spec: InitramfsSpec, kernel_path: Path | None, kernel_version: str | None) -> Path | str:
    """The lib/modules/<version> directory to take modules from, or a message completing "...; " why not."""
    if spec.modules_dir_path is not None:
        if spec.modules_dir_path.is_dir():
            return spec.modules_dir_path
        return f"initramfs modules_dir '{spec.modules_dir}' is not a directory; give the kernel's lib/modules/<version>"
    root = kernel_path.parent / "lib" / "modules" if kernel_path else None
    versions = sorted(p for p in root.iterdir() if p.is_dir()) if root and root.is_dir() else []
    if kernel_version and root and (root / kernel_version).is_dir():
        return root / kernel_version
    if len(versions) == 1:
        return versions[0]
    found = "none" if not versions else ", ".join(p.name for p in versions)
    return (f"cannot find the kernel's modules: {root} should hold one lib/modules/<version> directory (found: "
            f"{found}); set modules_dir under initramfs")


def build(spec: InitramfsSpec, title: str, kernel_path: Path | None, kernel_version: str | None,
          diags: Diagnostics) -> Built | None:
    """The archive for spec, or None after reporting why it cannot be built."""
    builder = Builder(spec, title, diags)
    builder.add_busybox()
    for item in spec.files:
        builder.add_file(item)
    version, loaded = None, []
    if spec.modules:
        where = modules_dir_of(spec, kernel_path, kernel_version)
        if isinstance(where, str):
            builder.error(spec.at("modules_dir", "modules"), where)
        else:
            version, loaded = builder.add_modules(where, kernel_version)
    if not builder.ok:
        return None
    return Built(cpio.write(builder.entries), builder.entries, version, loaded)
