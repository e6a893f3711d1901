"""Internal errors of the hypervisor end the run loudly: a message, and QEMU exits.

Both cases start from a valid image of hypercalls.yaml and corrupt its generated tables, which
the tool itself would never produce: the hypervisor must still not hang silently."""

from pathlib import Path

from bulkhead.toolchain import Toolchain

from harness import BUILD, CONFIGS, ROOT, build_image, run_image

CONFIG = CONFIGS / "hypercalls.yaml"


def corrupted_image(name: str, old: str, new: str) -> Path:
    out = build_image(CONFIG).parent
    source = (out / "bh_config.c").read_text()
    assert old in source, f"generated tables no longer contain {old!r}"
    config_c = out / f"bh_config_{name}.c"
    config_c.write_text(source.replace(old, new, 1))
    tools = Toolchain("aarch64-linux-gnu-", (ROOT / "hypervisor" / "include",))
    objects = [config_c.with_suffix(".o"), out / "bh_images.o"]
    tools.compile(config_c, objects[0])
    elf, image = out / f"bulkhead_{name}.elf", out / f"bulkhead_{name}.img"
    tools.link(ROOT / "hypervisor/arch/aarch64/hyp.ld", BUILD / "hyp/libbulkhead.a", objects, elf)
    tools.binary(elf, image)
    return image


def test_tables_with_a_bad_magic_stop_the_system_with_a_reason():
    image = corrupted_image("magic", ".magic = BH_CONFIG_MAGIC", ".magic = 0x12345678")
    run = run_image(CONFIG, image, timeout=30)
    assert run.exited, "QEMU should power off after the panic"
    assert run.index(r"\[bulkhead\] PANIC: configuration tables have magic 0x12345678, "
                     r"expected 0x44484b42") >= 0
    assert run.index(r"internal error: halting the system") >= 0


def test_a_fault_inside_the_hypervisor_dumps_registers_and_stops():
    # A segment pointer outside everything EL2 maps: the boot-time image copy faults at EL2.
    image = corrupted_image("fault", ".data = bh_seg_0_0", ".data = (const uint8_t *)0x200000000")
    run = run_image(CONFIG, image, timeout=30)
    assert run.exited, "QEMU should power off after the dump"
    assert run.index(r"PANIC: unexpected sync exception in the hypervisor on core 0") >= 0
    assert run.index(r"FAR_EL2 0x200000000") >= 0
    assert run.index(r"^  x00 [0-9a-f]{16}") >= 0
    assert run.index(r"internal error: halting the system") >= 0
