"""`bulkhead build`: the emitted tables, the packed image and the link checks.

The real hypervisor library is not needed: a fake one (one object) and a small linker script that
defines _image_end stand in for it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bulkhead import config
from bulkhead.cli import main as cli_main
from bulkhead.emit_c import render_config
from tool_support import CONFIG_INCLUDE, CROSS, GOOD_DIR, run

HYP_S = """\
	.text
	.global _start
_start:
	b .
"""

HYP_LD = """\
ENTRY(_start)
SECTIONS {
  . = bh_image_base;
  .text : { *(.text*) }
  .rodata : { *(.rodata*) }
  .data : { *(.data*) }
  .bss : { *(.bss*) }
  %s
  _image_end = .;
}
"""

# Prints the tables through the structs of config_tables.h (compiled for the host).
DUMP_C = r"""
#include <stdio.h>
#include "config_tables.h"

static void dump_partition(const struct bh_partition_cfg *p)
{
	printf("partition %u %s flags=%u entry=%#llx hm=", p->id, p->name, p->flags, (unsigned long long)p->entry);
	for (uint32_t e = 0; e < BH_HM_EVENT_COUNT; e++)
		printf("%s%u", e ? "," : "", p->hm_actions[e]);
	printf(" irqs=");
	for (uint32_t i = 0; i < p->irq_count; i++)
		printf("%s%u", i ? "," : "", p->irqs[i]);
	printf("%s\n", p->irqs ? "" : "none");
	for (uint32_t i = 0; i < p->area_count; i++)
		printf("  area phys=%#llx ipa=%#llx size=%#llx flags=%#x\n", (unsigned long long)p->areas[i].phys,
		       (unsigned long long)p->areas[i].ipa, (unsigned long long)p->areas[i].size, p->areas[i].flags);
	for (uint32_t i = 0; i < p->segment_count; i++) {
		const struct bh_segment_cfg *s = &p->segments[i];
		printf("  segment ipa=%#llx file=%#llx mem=%#llx data=", (unsigned long long)s->ipa,
		       (unsigned long long)s->file_size, (unsigned long long)s->mem_size);
		if (!s->data)
			printf("none");
		for (uint64_t b = 0; s->data && b < s->file_size; b++)
			printf("%02x", s->data[b]);
		printf("\n");
	}
	for (uint32_t i = 0; i < p->vcpu_count; i++) {
		const struct bh_vcpu_cfg *v = &p->vcpus[i];
		printf("  vcpu core=%u priority=%u period=%llu budget=%llu deadline=%llu", v->core, v->priority,
		       (unsigned long long)v->period_ns, (unsigned long long)v->budget_ns,
		       (unsigned long long)v->deadline_ns);
		if (v->flags || v->core_mask)
			printf(" flags=%u mask=%#x", v->flags, v->core_mask);
		printf("\n");
	}
}

static void dump_plan(const struct bh_plan_cfg *plan)
{
	printf("plan %s frame=%llu\n", plan->name, (unsigned long long)plan->major_frame_ns);
	for (uint32_t c = 0; c < BH_MAX_CORES; c++) {
		const struct bh_plan_core_cfg *core = &plan->cores[c];
		if (!core->slot_count && !core->slots)
			continue;
		printf("  core %u slots=%u\n", c, core->slot_count);
		for (uint32_t i = 0; i < core->slot_count; i++) {
			const struct bh_slot_cfg *s = &core->slots[i];
			printf("    slot start=%llu duration=%llu vcpu=%u.%u flags=%u\n", (unsigned long long)s->start_ns,
			       (unsigned long long)s->duration_ns, s->partition, s->vcpu, s->flags);
		}
	}
}

int main(void)
{
	const struct bh_system_cfg *c = &bh_system_config;
	printf("magic=%#x version=%u name=%s hyp=%#llx+%#llx ram=%#llx+%#llx cores=%u partitions=%u\n",
	       c->magic, c->version, c->name, (unsigned long long)c->hyp_base, (unsigned long long)c->hyp_size,
	       (unsigned long long)c->ram_base, (unsigned long long)c->ram_size, c->core_count, c->partition_count);
	for (uint32_t i = 0; i < c->partition_count; i++)
		dump_partition(&c->partitions[i]);
	printf("policies=");
	for (uint32_t i = 0; i < BH_MAX_CORES; i++)
		printf("%s%u", i ? "," : "", c->cores[i].policy);
	printf(" plans=%u initial=%u%s\n", c->plan_count, c->initial_plan, c->plans ? "" : " none");
	for (uint32_t i = 0; i < c->plan_count; i++)
		dump_plan(&c->plans[i]);
	printf("stage2 block_max=%#llx pool=%u aligned=%d\n", (unsigned long long)c->stage2_block_max,
	       c->stage2_pool_pages, ((uintptr_t)c->stage2_pool & 4095) == 0);
	return 0;
}
"""

EXPECTED_DUMP = """\
magic=0x44484b42 version=7 name=demo hyp=0x40000000+0x2000000 ram=0x40000000+0x40000000 cores=4 partitions=2
partition 0 app flags=0 entry=0x40000000 hm=1,1,1,0,3,0,0 irqs=none
  area phys=0xa000000 ipa=0xa000000 size=0x1000 flags=0xb
  area phys=0x42200000 ipa=0x40000000 size=0x200000 flags=0x7
  segment ipa=0x40000000 file=0x4 mem=0x4 data=00000014
  segment ipa=0x40001000 file=0x8 mem=0x8 data=8877665544332211
  segment ipa=0x40002000 file=0 mem=0x2000 data=none
  vcpu core=2 priority=0 period=0 budget=0 deadline=0
  vcpu core=3 priority=0 period=0 budget=0 deadline=0
partition 1 control flags=1 entry=0x40000000 hm=2,1,1,1,3,0,0 irqs=none
  area phys=0x9010000 ipa=0x9010000 size=0x1000 flags=0xb
  area phys=0x42000000 ipa=0x40000000 size=0x200000 flags=0x7
  segment ipa=0x40000000 file=0x4 mem=0x4 data=00000014
  segment ipa=0x40001000 file=0x8 mem=0x8 data=8877665544332211
  segment ipa=0x40002000 file=0 mem=0x2000 data=none
  vcpu core=1 priority=0 period=0 budget=0 deadline=0
policies=0,0,0,0,0,0,0,0 plans=0 initial=0 none
stage2 block_max=0x1000 pool=10 aligned=1
"""

SCHED_SEGMENTS = """\
  area phys=%s ipa=0x40000000 size=0x200000 flags=0x7
  segment ipa=0x40000000 file=0x4 mem=0x4 data=00000014
  segment ipa=0x40001000 file=0x8 mem=0x8 data=8877665544332211
  segment ipa=0x40002000 file=0 mem=0x2000 data=none
"""

EXPECTED_SCHED_DUMP = (
    "magic=0x44484b42 version=7 name=sched hyp=0x40000000+0x2000000 ram=0x40000000+0x40000000 cores=4 partitions=4\n"
    "partition 0 app flags=0 entry=0x40000000 hm=1,1,1,0,3,0,0 irqs=48,49\n" + SCHED_SEGMENTS % "0x42200000" +
    "  vcpu core=0 priority=0 period=0 budget=0 deadline=0\n"
    "  vcpu core=1 priority=5 period=0 budget=0 deadline=0\n"
    "  vcpu core=2 priority=0 period=10000000 budget=2000000 deadline=5000000\n"
    "partition 1 control flags=1 entry=0x40000000 hm=1,1,1,0,3,1,2 irqs=34\n" + SCHED_SEGMENTS % "0x42000000" +
    "  vcpu core=0 priority=0 period=0 budget=0 deadline=0\n"
    "  vcpu core=1 priority=10 period=0 budget=0 deadline=0\n"
    "partition 2 logger flags=0 entry=0x40000000 hm=1,1,1,0,3,0,0 irqs=none\n" + SCHED_SEGMENTS % "0x42400000" +
    "  vcpu core=2 priority=0 period=1000000 budget=500000 deadline=1000000\n"
    "partition 3 solo flags=0 entry=0x40000000 hm=1,1,1,0,3,0,0 irqs=none\n" + SCHED_SEGMENTS % "0x42600000" +
    "  vcpu core=3 priority=0 period=0 budget=0 deadline=0\n"
    "policies=1,2,3,0,0,0,0,0 plans=2 initial=1\n"
    "plan startup frame=1000000\n"
    "  core 0 slots=1\n"
    "    slot start=0 duration=1000000 vcpu=1.0 flags=0\n"
    "plan normal frame=1000000\n"
    "  core 0 slots=2\n"
    "    slot start=0 duration=200000 vcpu=1.0 flags=1\n"
    "    slot start=500000 duration=300000 vcpu=0.0 flags=0\n"
    "stage2 block_max=0x1000 pool=12 aligned=1\n"
)


def make_hyp_kit(directory: Path, padding: str = "") -> tuple[Path, Path]:
    """A fake hypervisor archive and linker script; padding goes just before _image_end."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "hyp.S").write_text(HYP_S)
    run([f"{CROSS}gcc", "-c", "hyp.S", "-o", "hyp.o"], directory)
    run([f"{CROSS}ar", "rcs", "libhyp.a", "hyp.o"], directory)
    (directory / "hyp.ld").write_text(HYP_LD % padding)
    return directory / "libhyp.a", directory / "hyp.ld"


def build_args(config_path: str, kit: tuple[Path, Path], out: str = "out") -> list[str]:
    lib, script = kit
    return ["build", config_path, "--out", out, "--hyp-lib", str(lib), "--linker-script", str(script),
            "--include", str(CONFIG_INCLUDE)]


@pytest.fixture
def demo(workdir: Path) -> str:
    shutil.copy(GOOD_DIR / "demo.yaml", workdir / "demo.yaml")
    return "demo.yaml"


def test_build_packs_and_links_the_image(demo, workdir, cli):
    status, out, err = cli(*build_args(demo, make_hyp_kit(workdir / "kit")))
    assert (status, err) == (0, "")
    assert out.startswith("bulkhead: out/bulkhead.img (") and "2 partitions, 4 segments" in out
    built = workdir / "out"
    assert sorted(p.name for p in built.glob("seg_*.bin")) == ["seg_0_0.bin", "seg_0_1.bin", "seg_1_0.bin",
                                                               "seg_1_1.bin"]
    assert (built / "seg_0_1.bin").read_bytes() == bytes.fromhex("8877665544332211")
    assert (built / "bulkhead.img").stat().st_size > 0
    symbols = subprocess.run([f"{CROSS}nm", str(built / "bulkhead.elf")], capture_output=True, text=True,
                             check=True).stdout
    for name in ("bh_system_config", "bh_seg_0_0", "bh_seg_1_1", "_image_end"):
        assert f" {name}\n" in symbols
    qemu_cmd = (built / "qemu.cmd").read_text()
    assert qemu_cmd == ("qemu-system-aarch64 -M virt,virtualization=on,gic-version=3 -cpu cortex-a53 -smp 4 "
                        f"-m 1024M -nic none -nographic -echr 29 -kernel {built / 'bulkhead.img'}\n")


def test_generated_sources(demo, workdir, cli):
    assert cli(*build_args(demo, make_hyp_kit(workdir / "kit")))[0] == 0
    source = (workdir / "out" / "bh_config.c").read_text()
    assert source.startswith("/* Generated by `bulkhead build` from demo.yaml")
    assert '#include "config_tables.h"' in source
    assert "extern const uint8_t bh_seg_0_0[];" in source
    assert ".magic = BH_CONFIG_MAGIC," in source and ".version = BH_CONFIG_VERSION," in source
    assert ".flags = BH_AREA_READ | BH_AREA_WRITE | BH_AREA_DEVICE }" in source
    assert "[BH_HM_MEMORY_VIOLATION] = BH_HM_COLD_RESTART," in source
    images = (workdir / "out" / "bh_images.S").read_text()
    assert '\t.section .rodata.bh_images,"a"\n\t.balign 16\n\t.global bh_seg_0_0\n' in images
    assert f'\t.incbin "{workdir / "out" / "seg_0_0.bin"}", 0, 4\n' in images
    assert "bh_seg_0_2" not in images  # the bss-only segment has no data


def dump_tables(workdir: Path, config_path: str) -> str:
    """Build config_path, compile its tables for the host and print them through the real structs."""
    assert cli_main(build_args(config_path, make_hyp_kit(workdir / "kit"))) == 0
    (workdir / "dump.c").write_text(DUMP_C)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE), "out/bh_config.c",
         "out/bh_images.S", "dump.c", "-o", "dump"], workdir)
    return subprocess.run([str(workdir / "dump")], capture_output=True, text=True, check=True).stdout


def test_tables_match_config_tables_h(demo, workdir, capsys):
    assert dump_tables(workdir, demo) == EXPECTED_DUMP


def test_schedule_tables_match_config_tables_h(workdir, capsys):
    """Policies, vCPU parameters, interrupts and plans; slots sorted by start within a core."""
    shutil.copy(GOOD_DIR / "sched.yaml", workdir / "sched.yaml")
    assert dump_tables(workdir, "sched.yaml") == EXPECTED_SCHED_DUMP
    source = (workdir / "out" / "bh_config.c").read_text()
    assert "[2] = { .policy = BH_POLICY_EDF }," in source
    assert ".flags = BH_SLOT_NOTIFY }, /* control.0 */" in source
    assert "static const uint32_t bh_irqs_0[] = { 48u, 49u };" in source


def test_best_effort_tables(workdir):
    """A best-effort vCPU: its flag, the mask of its cores, and its first core in .core."""
    shutil.copy(GOOD_DIR / "best_effort.yaml", workdir / "best_effort.yaml")
    dump = dump_tables(workdir, "best_effort.yaml")
    assert "  vcpu core=1 priority=0 period=0 budget=0 deadline=0 flags=1 mask=0xe\n" in dump
    assert "  vcpu core=0 priority=0 period=0 budget=0 deadline=0 flags=1 mask=0x9\n" in dump
    assert "  vcpu core=2 priority=3 period=0 budget=0 deadline=0\n" in dump
    source = (workdir / "out" / "bh_config.c").read_text()
    assert ("{ .core = 1u, .flags = BH_VCPU_BEST_EFFORT, .core_mask = 0xeu }, /* worker.0: best-effort on "
            "cores 1,2,3 */") in source


def test_image_past_hypervisor_memory(demo, workdir, cli):
    text = (workdir / demo).read_text().replace("size: 32M}", "size: 2M}")
    (workdir / "small.yaml").write_text(text)
    kit = make_hyp_kit(workdir / "kit", padding=". = 0x40280000;")
    status, out, err = cli(*build_args("small.yaml", kit))
    assert (status, out) == (1, "")
    assert err == ("small.yaml:9:36: error: the packed image ends at 0x40280000, past the hypervisor memory "
                   "end 0x40200000; make hypervisor.memory.size at least 0x400000\n")
    assert not (workdir / "out" / "bulkhead.img").exists()


def start_of(elf: Path) -> int:
    symbols = subprocess.run([f"{CROSS}nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return next(int(line.split()[0], 16) for line in symbols.splitlines() if line.endswith(" _start"))


def test_image_is_linked_into_the_hypervisor_memory_wherever_it_is(demo, workdir, cli):
    """The tool passes bh_image_base = hypervisor.memory.base + 0x80000 to the linker script."""
    text = (workdir / demo).read_text().replace("base: 0x40000000, size: 32M", "base: 0x7c000000, size: 32M")
    (workdir / "high.yaml").write_text(text)
    assert cli(*build_args("high.yaml", make_hyp_kit(workdir / "kit"), out="high"))[0] == 0
    assert start_of(workdir / "high" / "bulkhead.elf") == 0x7C08_0000
    assert cli(*build_args(demo, make_hyp_kit(workdir / "kit")))[0] == 0
    assert start_of(workdir / "out" / "bulkhead.elf") == 0x4008_0000


def test_no_room_for_qemus_device_tree_above_the_image(demo, workdir, cli):
    """QEMU writes its device tree at the 2M boundary after the image and refuses to start if that is
    the end of RAM: the build says so at hypervisor.memory.base."""
    text = (workdir / demo).read_text().replace("base: 0x40000000, size: 32M", "base: 0x7fe00000, size: 2M")
    (workdir / "top.yaml").write_text(text)
    status, out, err = cli(*build_args("top.yaml", make_hyp_kit(workdir / "kit", padding=". = 0x7ff00000;")))
    assert (status, out) == (1, "")
    assert err == ("top.yaml:9:18: error: QEMU puts its device tree at the first 2M boundary after the packed "
                   "image (ends at 0x7ff00000), 0x80000000, which is not inside RAM (ends at 0x80000000), and then "
                   "refuses to start; move the hypervisor memory down by 2M or more\n")
    assert not (workdir / "out" / "bulkhead.img").exists()


def test_invalid_config_is_not_built(workdir, cli):
    shutil.copy(GOOD_DIR.parent / "bad" / "cores.yaml", workdir / "cores.yaml")
    status, _, err = cli(*build_args("cores.yaml", (workdir / "none.a", workdir / "none.ld")))
    assert status == 1
    assert err.splitlines() == (GOOD_DIR.parent / "bad" / "cores.expected").read_text().splitlines()
    assert not (workdir / "out").exists()


def test_failing_link_prints_the_tool_output(demo, workdir, cli):
    lib, _ = make_hyp_kit(workdir / "kit")
    broken = workdir / "broken.ld"
    broken.write_text("SECTIONS { .text : { *(.text*) \n")
    status, out, err = cli(*build_args(demo, (lib, broken)))
    assert (status, out) == (1, "")
    assert err.startswith("bulkhead: error: command failed (exit 1): aarch64-linux-gnu-ld ")
    assert "broken.ld" in err and "Traceback" not in err


def test_missing_toolchain(demo, workdir, cli):
    status, _, err = cli(*build_args(demo, make_hyp_kit(workdir / "kit")), "--cross", "no-such-prefix-")
    assert status == 1
    assert err == "bulkhead: error: cannot run no-such-prefix-gcc: No such file or directory; install it or pass --cross\n"


def test_missing_image_end_symbol(demo, workdir, cli):
    lib, script = make_hyp_kit(workdir / "kit")
    script.write_text(script.read_text().replace("_image_end = .;", ""))
    status, _, err = cli(*build_args(demo, (lib, script)))
    assert status == 1
    assert err.startswith("bulkhead: error: out/bulkhead.elf has no _image_end symbol")


def test_partition_without_loaded_data(workdir):
    """A partition whose image only has zero-filled memory still gets a well-formed table."""
    shutil.copy(GOOD_DIR / "demo.yaml", workdir / "demo.yaml")
    system = config.load("demo.yaml")
    system.partitions[0].elf = type(system.partitions[0].elf)(entry=0x40000000, segments=(), has_tests=False)
    source = render_config(system, "demo.yaml")
    assert ".segments = 0," in source and ".segment_count = 0u," in source
    (workdir / "c.c").write_text(source)
    run([f"{CROSS}gcc", "-std=c11", "-ffreestanding", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE),
         "-c", "c.c", "-o", "c.o"], workdir)


def test_tables_are_strict_c11(workdir):
    """Also with a plan that has no slots at all (its .cores stay zero): no empty initializer lists."""
    idle_plan = "  plans:\n    - {name: idle, major_frame: 1ms, slots: []}\n"
    text = (GOOD_DIR / "sched.yaml").read_text().replace("  plans:\n", idle_plan, 1)
    (workdir / "idle.yaml").write_text(text)
    source = render_config(config.load("idle.yaml"), "idle.yaml")
    assert '.name = "idle",\n\t\t.major_frame_ns = UINT64_C(1000000),\n\t},' in source
    (workdir / "c.c").write_text(source)
    run([f"{CROSS}gcc", "-std=c11", "-pedantic-errors", "-ffreestanding", "-Wall", "-Wextra", "-Werror", "-I",
         str(CONFIG_INCLUDE), "-c", "c.c", "-o", "c.o"], workdir)
