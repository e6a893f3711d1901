"""`bulkhead check` and config.load(): every bad/NAME.yaml yields exactly bad/NAME.expected."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from bulkhead import config
from bulkhead.diagnostics import ConfigError
from tool_support import BAD_DIR, CROSS, GOOD_DIR, run

BAD_NAMES = sorted(path.stem for path in BAD_DIR.glob("*.yaml"))
POSITION = re.compile(r"^[^:]+:(\d+):(\d+): error: ")


def copy_config(source: Path, workdir: Path, name: str | None = None) -> str:
    target = workdir / (name or source.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(source, target)
    return str(target.relative_to(workdir))


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_config_reports_exact_errors(name, workdir, cli):
    path = copy_config(BAD_DIR / f"{name}.yaml", workdir)
    status, out, err = cli("check", path)
    expected = (BAD_DIR / f"{name}.expected").read_text().splitlines()
    assert status == 1
    assert out == ""
    assert err.splitlines() == expected


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_config_is_documented_and_has_sorted_errors(name):
    first_line = (BAD_DIR / f"{name}.yaml").read_bytes().decode(errors="replace").splitlines()[0]
    assert first_line.startswith("# "), "each bad config starts with a comment saying what it tests"
    lines = (BAD_DIR / f"{name}.expected").read_text().splitlines()
    assert lines, "an expected file lists at least one error"
    positions = [tuple(map(int, POSITION.match(line).groups())) for line in lines]
    assert positions == sorted(positions)


def test_multiple_errors_are_all_reported_in_order(workdir, cli):
    path = copy_config(BAD_DIR / "wrong_type.yaml", workdir)
    status, _, err = cli("check", path)
    lines = err.splitlines()
    assert status == 1
    assert [line.split(":")[1] for line in lines] == ["3", "5", "7", "8", "13", "17"]


def test_valid_config_passes(workdir, cli):
    path = copy_config(GOOD_DIR / "demo.yaml", workdir)
    status, out, err = cli("check", path)
    assert (status, out, err) == (0, "demo.yaml: ok (2 partitions)\n", "")


def test_paths_are_relative_to_the_config_and_printed_as_given(workdir, cli):
    (workdir / "cfg").mkdir()
    shutil.move(workdir / "app.elf", workdir / "cfg" / "app.elf")
    copy_config(GOOD_DIR / "demo.yaml", workdir, "cfg/demo.yaml")
    status, out, _ = cli("check", "cfg/../cfg/demo.yaml")
    assert (status, out) == (0, "cfg/../cfg/demo.yaml: ok (2 partitions)\n")


def test_absolute_image_path(workdir, cli):
    text = (GOOD_DIR / "demo.yaml").read_text().replace("./app.elf", str(workdir / "app.elf"))
    (workdir / "abs.yaml").write_text(text)
    assert cli("check", "abs.yaml")[0] == 0


def test_test_code_is_allowed_in_a_test_system(workdir, cli):
    text = (BAD_DIR / "test_code.yaml").read_text().replace("memory: 1G", "memory: 1G\n  test: true")
    (workdir / "tests_on.yaml").write_text(text)
    assert cli("check", "tests_on.yaml") == (0, "tests_on.yaml: ok (1 partitions)\n", "")


def test_an_image_without_section_headers_is_allowed_in_a_test_system(workdir, cli):
    text = (BAD_DIR / "stripped_image.yaml").read_text().replace("memory: 1G", "memory: 1G\n  test: true")
    (workdir / "stripped_on.yaml").write_text(text)
    assert cli("check", "stripped_on.yaml") == (0, "stripped_on.yaml: ok (1 partitions)\n", "")


def test_unreadable_config(workdir, cli):
    status, _, err = cli("check", "nope.yaml")
    assert status == 1
    assert err == "nope.yaml: error: cannot read the configuration: No such file or directory\n"


def test_load_returns_the_checked_model(workdir):
    copy_config(GOOD_DIR / "demo.yaml", workdir)
    system = config.load("demo.yaml")
    assert (system.name, system.platform.name, system.cores, system.memory, system.test) == \
        ("demo", "qemu-virt", 4, 1 << 30, False)
    assert (system.hypervisor.base, system.hypervisor.size) == (0x40000000, 32 << 20)
    control, app = system.partitions
    assert [p.name for p in system.by_id()] == ["app", "control"]
    assert control.system and not app.system
    assert [v.core for v in app.vcpus] == [2, 3]
    ram, rtc = control.areas
    assert (ram.phys, ram.guest, ram.size, ram.rights, ram.kind) == (0x42000000, 0x40000000, 2 << 20, "rwx", "normal")
    assert (rtc.phys, rtc.guest, rtc.size, rtc.rights, rtc.kind) == (0x09010000, 0x09010000, 4096, "rw", "device")
    assert app.areas[1].rights == "rw"
    assert control.health == {"memory_violation": "cold_restart", "trapped_instruction": "halt_partition",
                              "smc": "halt_partition", "partition_error": "halt_partition",
                              "internal_error": "halt_system", "budget_overrun": "ignore",
                              "deadline_miss": "ignore"}
    assert app.health["partition_error"] == "ignore"
    assert app.entry_point == 0x40000000
    assert [(s.ipa, s.file_size, s.mem_size) for s in app.elf.segments] == \
        [(0x40000000, 4, 4), (0x40001000, 8, 8), (0x40002000, 0, 0x2000)]


def test_load_reads_the_schedule(workdir):
    copy_config(GOOD_DIR / "sched.yaml", workdir)
    system = config.load("sched.yaml")
    assert [system.policy_of(core) for core in range(4)] == ["cyclic", "fixed_priority", "edf", "dedicated"]
    assert system.initial_plan.name == "normal"
    startup, normal = system.schedule.plans
    assert (startup.major_frame, normal.major_frame) == (1_000_000, 1_000_000)
    assert [(s.start, s.duration, s.ref, s.notify) for s in normal.core_slots(0)] == \
        [(0, 200_000, "control.0", True), (500_000, 300_000, "app.0", False)]
    assert [s.ref for s in startup.slots] == ["control.0"]  # 'control' names vCPU 0
    control, app, logger, _ = system.partitions
    assert [(v.core, v.priority) for v in control.vcpus] == [(0, None), (1, 10)]
    edf = app.vcpus[2]
    assert (edf.period, edf.budget, edf.deadline, edf.effective_deadline) == (10_000_000, 2_000_000, 5_000_000,
                                                                              5_000_000)
    assert logger.vcpus[0].effective_deadline == 1_000_000
    assert [irq.intid for irq in app.interrupts] == [48, 49] and logger.interrupts == []
    assert (control.health["budget_overrun"], control.health["deadline_miss"]) == ("halt_partition", "cold_restart")


def test_shared_policies_allow_several_vcpus_per_core(workdir, cli):
    """The rule that failed bad/cores.yaml (two vCPUs on core 1) is lifted by a shared policy."""
    text = (BAD_DIR / "cores.yaml").read_text().replace("{core: 4}", "{core: 3}")
    for policy, extra in (("fixed_priority", "priority: 1"), ("edf", "period: 4ms, budget: 1ms")):
        shared = text.replace("core: 1}", f"core: 1, {extra}}}").replace("- core: 1", f"- {{core: 1, {extra}}}")
        shared += f"schedule:\n  cores: [{{core: 1, policy: {policy}}}]\n"
        (workdir / f"{policy}.yaml").write_text(shared)
        assert cli("check", f"{policy}.yaml") == (0, f"{policy}.yaml: ok (2 partitions)\n", "")


def test_images_can_be_skipped(workdir):
    """plan and trace read a configuration whose partitions are not built yet."""
    text = (GOOD_DIR / "sched.yaml").read_text().replace("image: app.elf", "image: missing.elf")
    (workdir / "unbuilt.yaml").write_text(text)
    assert config.check("unbuilt.yaml")[1]
    system = config.load("unbuilt.yaml", images=False)
    assert system.partitions[0].elf is None and len(system.schedule.plans) == 2


def test_load_raises_config_error_with_all_messages(workdir):
    copy_config(BAD_DIR / "cores.yaml", workdir)
    with pytest.raises(ConfigError) as info:
        config.load("cores.yaml")
    assert info.value.messages == (BAD_DIR / "cores.expected").read_text().splitlines()
    assert [d.pos.line for d in info.value.diagnostics] == [13, 21]


def test_default_gnu_ld_layout_is_rejected(workdir, cli):
    """Plain -Ttext links the ELF headers into a segment below the text; the message names it."""
    (workdir / "t.S").write_text("\t.text\n\t.global _start\n_start:\n\tb .\n")
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,-Ttext=0x40000000", "-Wl,--build-id=none", "-o", "t.elf",
         "t.S"], workdir)
    text = (GOOD_DIR / "demo.yaml").read_text().replace("./app.elf", "t.elf")
    (workdir / "t.yaml").write_text(text)
    status, _, err = cli("check", "t.yaml")
    assert status == 1
    assert err.startswith("t.yaml:34:12: error: partition 'app': image 't.elf' loads 0x3fff0000-")
    assert "(program header 0), which is not inside one normal memory area" in err
