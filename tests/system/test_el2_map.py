"""The hypervisor's own EL2 map is W^X.

At boot core 0 probes its live map with AT S1E2R/S1E2W and the leaf descriptors (every core
checks, core 0 reports one line): text readable and executable, never writable; read-only data
(the configuration tables, the packed partition images) never writable or executable; data,
stacks and other RAM writable, never executable; SCTLR_EL2.WXN set. A map that is not W^X
stops the boot instead.

Then the hardware itself: images whose generated tables put a partition's memory on top of the
hypervisor's text or read-only data (the tool never produces them: they stand for a hypervisor
bug that lets a write land in its own memory). The boot-time image copy must take a permission
fault at EL2 on the first byte, instead of overwriting the hypervisor."""

import re
from pathlib import Path

import pytest
from bulkhead.toolchain import Toolchain
from elftools.elf.elffile import ELFFile

from bulkhead.config import load
from harness import BUILD, CONFIGS, ROOT, build_image, check_stage2_pool, run_image

CONFIG = CONFIGS / "hypercalls.yaml"
LD = ROOT / "hypervisor/arch/aarch64/hyp.ld"
MAP_LINE = re.compile(r"\[bulkhead\] EL2 map W\^X checked: text 0x([0-9a-f]+)-0x([0-9a-f]+) r-x, "
                      r"rodata 0x([0-9a-f]+)-0x([0-9a-f]+) r--, data and other RAM rw-, WXN on")
FAULT = re.compile(r"ESR_EL2 0x([0-9a-f]+) FAR_EL2 0x([0-9a-f]+)")
PARTITION_RAM = ".phys = UINT64_C(0x42000000)"  # hctest's memory in hypercalls.yaml


def symbols(elf: Path, *names: str) -> dict[str, int]:
    with open(elf, "rb") as stream:
        table = ELFFile(stream).get_section_by_name(".symtab")
        return {name: table.get_symbol_by_name(name)[0]["st_value"] for name in names}


@pytest.mark.parametrize("config", [CONFIG, CONFIGS / "hyp_high.yaml"], ids=["ram_start", "high"])
def test_boot_checks_and_reports_a_wx_map(config):
    """Also with the hypervisor memory high in RAM (hyp_high.yaml): linked and loaded there, the
    partition's RAM below it."""
    image = build_image(config)
    sym = symbols(image.with_suffix(".elf"), "_image_start", "_text_end", "_rodata_end", "__bss_start",
                  "aarch64_el2_vectors", "bh_system_config", "bh_seg_0_0", "percpu")
    assert sym["_image_start"] == load(config).hypervisor.base + 0x80000
    run = run_image(config, image, timeout=60, until=lambda r: r.index(r"BHTEST exec_clock") >= 0)
    found = [m for m in map(MAP_LINE.search, run.lines) if m]
    assert len(found) == 1, "core 0 reports the checked EL2 map once"
    text_start, text_end, ro_start, ro_end = (int(g, 16) for g in found[0].groups())
    assert (text_start, text_end, ro_start, ro_end) == (
        sym["_image_start"], sym["_text_end"], sym["_text_end"], sym["_rodata_end"])
    # What each range must hold: code in text, the tables and images in rodata, data above.
    assert text_start <= sym["aarch64_el2_vectors"] < text_end
    assert ro_start <= sym["bh_system_config"] < ro_end and ro_start <= sym["bh_seg_0_0"] < ro_end
    assert sym["percpu"] >= sym["__bss_start"] >= ro_end
    verdicts = run.verdicts()
    assert verdicts[("hctest", "get_ids")][0] == "PASS", "the partition runs after the check"
    assert all(v == "PASS" for v, _ in verdicts.values()) and len(verdicts) >= 20, verdicts
    assert run.index("PANIC") < 0
    check_stage2_pool(config, run.log)


def image_with_partition_ram_at(name: str, where: str) -> Path:
    """hypercalls.yaml's image with hctest's memory moved onto a linker symbol of the hypervisor."""
    out = build_image(CONFIG).parent
    source = (out / "bh_config.c").read_text()
    assert PARTITION_RAM in source, f"generated tables no longer contain {PARTITION_RAM!r}"
    source = source.replace(PARTITION_RAM, f".phys = (uint64_t)(uintptr_t){where}", 1)
    # The boot's own check of the areas against hypervisor memory would stop this first; tables
    # wrong about the hypervisor's range as well leave the EL2 map as the last line of defence.
    source, n = re.subn(r"\.hyp_size = [^,]+,", ".hyp_size = 0,", source, count=1)
    assert n == 1, "generated tables no longer contain .hyp_size"
    config_c = out / f"bh_config_{name}.c"
    config_c.write_text(f"extern char {where}[];\n" + source)
    tools = Toolchain("aarch64-linux-gnu-", (ROOT / "hypervisor" / "include",))
    objects = [config_c.with_suffix(".o"), out / "bh_images.o"]
    tools.compile(config_c, objects[0])
    elf, image = out / f"bulkhead_{name}.elf", out / f"bulkhead_{name}.img"
    tools.link(LD, BUILD / "hyp/libbulkhead.a", objects, elf)
    tools.binary(elf, image)
    return image


@pytest.mark.parametrize("where", ["_image_start", "_text_end"], ids=["text", "rodata"])
def test_a_write_into_hypervisor_text_or_rodata_faults(where):
    image = image_with_partition_ram_at(where.strip("_"), where)
    target = symbols(image.with_suffix(".elf"), where)[where]
    run = run_image(CONFIG, image, timeout=30)
    assert run.exited, "QEMU should power off after the dump"
    assert run.index(r"PANIC: unexpected sync exception in the hypervisor on core 0") >= 0
    esr, far = (int(g, 16) for g in FAULT.search(run.log).groups())
    assert far == target, f"the fault is the copy's first write, at {target:#x}"
    assert esr >> 26 == 0x25, "a data abort taken from EL2"
    assert esr & (1 << 6), "on a write"
    assert esr & 0x3c == 0x0c, "a permission fault: the page is mapped, read-only"
    assert run.index("BHTEST") < 0, "the partition never ran"
