"""The apex key's table in the image (apex.py) and the response-time analysis (rta.py).

The key's checks are in bad/apex_keys.yaml and bad/apex_counts.yaml (test_check.py); the analysis
against measurement under QEMU is tests/system/test_apex_rta.py."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from bulkhead import apex, config, rta
from tool_support import CROSS, PARTITION_LD, REPO, run

RTA_CONFIG = REPO / "tests" / "system" / "configs" / "apex_rta.yaml"


def _image_source(magic: int, version: int, size: int) -> str:
    """A partition with an apex_config like libapex's (its defaults: declared 0)."""
    return f"""\
	.text
	.global _start
_start:
	b .
	.data
	.quad 0x1122334455667788
	.global apex_config
	.type apex_config, %object
apex_config:
	.word {magic}, {version}, 0
	.space {size - 12}
	.size apex_config, {size}
"""


def _build(directory: Path, name: str, source: str) -> None:
    (directory / "partition.ld").write_text(PARTITION_LD)
    (directory / f"{name}.S").write_text(source)
    run([f"{CROSS}gcc", "-nostdlib", "-static", "-Wl,--build-id=none", "-Wl,-T,partition.ld",
         "-o", f"{name}.elf", f"{name}.S"], directory)


SYSTEM = """\
system: {{name: apex, platform: qemu-virt, cores: 4, memory: 1G}}
hypervisor:
  memory: {{base: 0x40000000, size: 32M}}
schedule:
  cores:
    - {{core: 0, policy: cyclic}}
  plans:
    - name: main
      major_frame: 10ms
      slots:
        - {{core: 0, start: 1ms, duration: 3ms, vcpu: app}}
        - {{core: 0, start: 6ms, duration: 1ms, vcpu: app}}
partitions:
  - name: app
    id: 0
    image: {image}
    vcpus: [{{core: 0}}]
    memory:
      - {{name: ram, phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}}
    apex:
      semaphores: 2
      blackboards: 1
      message_pool: 1K
      partition_errors: [numeric_error, memory_violation]
      process_list:
        - {{name: sensor, period: 10ms, wcet: 1ms, capacity: 5ms, priority: 20, deadline: hard, stack: 4K}}
        - {{name: logger, period: 20ms, wcet: 2ms, priority: 10, stack: 2K}}
        - {{name: shell, priority: 5, stack: 2K}}
"""


def _table_of(system, part) -> bytes:
    address = 0x40001008  # .data starts at 0x40001000 (PARTITION_LD), after one quad
    seg = next(s for s in part.elf.segments if s.ipa <= address < s.ipa + s.file_size)
    offset = address - seg.ipa
    return seg.data[offset:offset + apex.TABLE_SIZE]


def test_the_declaration_is_written_into_the_image(tmp_path):
    _build(tmp_path, "lib", _image_source(apex.CONFIG_MAGIC, apex.CONFIG_VERSION, apex.TABLE_SIZE))
    (tmp_path / "sys.yaml").write_text(SYSTEM.format(image="lib.elf"))
    system = config.load(tmp_path / "sys.yaml")
    table = _table_of(system, system.partition_named("app"))
    magic, version, declared, count, *rest = struct.unpack_from("<4I8I2I3q", table)
    limits, errors, period, period_start, duration = rest[:8], rest[8], rest[10], rest[11], rest[12]
    assert (magic, version, declared, count) == (apex.CONFIG_MAGIC, apex.CONFIG_VERSION, 1, 3)
    # processes (the list's length), stack_total (three stacks and their guards), semaphores, events,
    # buffers, blackboards, ports, message_pool; the partition period is the major frame.
    assert limits == [3, 4096 + 512 + 2 * (2048 + 512), 2, 0, 0, 1, 0, 1024]
    assert period == 10_000_000
    # ARINC 653's partition period starts at the partition's first window; DURATION is its window
    # time per partition period.
    assert (period_start, duration) == (1_000_000, 4_000_000)
    assert errors == 1 << 2 | 1 << 5  # NUMERIC_ERROR, MEMORY_VIOLATION (ERROR_CODE_TYPE)
    rows = [struct.unpack_from("<32sqqIIII", table, 80 + 64 * i) for i in range(4)]
    assert rows[0] == (b"sensor".ljust(32, b"\0"), 10_000_000, 5_000_000, 20, 1, 4096, 0)
    assert rows[1] == (b"logger".ljust(32, b"\0"), 20_000_000, 20_000_000, 10, 0, 2048, 0)
    assert rows[2] == (b"shell".ljust(32, b"\0"), -1, -1, 5, 0, 2048, 0)
    assert rows[3] == (bytes(32), 0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize("magic, version, size, problem", [
    (apex.CONFIG_MAGIC, apex.CONFIG_VERSION + 1, apex.TABLE_SIZE, "of another libapex version"),
    (apex.CONFIG_MAGIC, apex.CONFIG_VERSION, apex.TABLE_SIZE - 64, "the tool writes 2128"),
])
def test_a_table_of_another_library_is_refused(tmp_path, magic, version, size, problem):
    _build(tmp_path, "lib", _image_source(magic, version, size))
    (tmp_path / "sys.yaml").write_text(SYSTEM.format(image="lib.elf"))
    _, errors = config.check(tmp_path / "sys.yaml")
    assert [e.pos.line for e in errors] == [21] and problem in errors[0].message, errors


def test_the_table_layout_matches_the_library_header():
    """apex.h's struct apex_config: 4 words, APEX_LIMIT_COUNT limits, the partition-level errors and a
    reserved word, the period, its first window's start and its duration, the process list; ERROR_CODES as
    apex.h numbers ERROR_CODE_TYPE."""
    header = apex.APEX_HEADER.read_text()
    assert "APEX_LIMIT_COUNT" in header and list(apex.LIMITS) == [
        "processes", "stack_total", "semaphores", "events", "buffers", "blackboards", "ports", "message_pool"]
    assert apex.TABLE_SIZE == 16 + 8 * 4 + 8 + 3 * 8 + apex.MAX_PROCESSES * 64
    for name, code in apex.ERROR_CODES.items():
        assert re.search(rf"\b{name.upper()} = {code},?\n", header), name
    built = REPO / "build" / "partitions" / "apexrta.elf"
    if built.exists():  # the real library's symbol, when the partitions are built
        from elftools.elf.elffile import ELFFile
        with open(built, "rb") as handle:
            symbol = ELFFile(handle).get_section_by_name(".symtab").get_symbol_by_name("apex_config")[0]
        assert symbol["st_size"] == apex.TABLE_SIZE


# --- Response-time analysis --------------------------------------------------------------------------

def _task(name, priority, period, cost, deadline=None):
    return rta._Task(name, priority, period, cost, deadline or period)


def test_periodic_resource_supply_bound():
    supply = rta.PeriodicResource(period=10, budget=4)  # blackout 2 * 6, then 4 every 10
    assert [supply.sbf(t) for t in (0, 12, 13, 16, 22, 23, 26, 40)] == [0, 0, 1, 4, 4, 5, 8, 12]
    assert rta.PeriodicResource(10, 10).sbf(37) == 37


def test_fixed_point_on_a_whole_core_is_the_textbook_result():
    tasks = [_task("a", 3, 7, 3), _task("b", 2, 12, 3), _task("c", 1, 20, 5)]
    full = rta.FullSupply("test")
    assert [rta._fixed_point_wcrt(t, tasks, full) for t in tasks] == [3, 6, 20]


def test_equal_priorities_interfere_with_each_other():
    tasks = [_task("a", 5, 100, 10), _task("b", 5, 100, 20)]
    full = rta.FullSupply("test")
    assert [rta._fixed_point_wcrt(t, tasks, full) for t in tasks] == [30, 30]
    window = rta.CyclicSupply(100, ((0, 100),))
    assert [rta._simulated_wcrt(t, tasks, window, 100) for t in tasks] == [30, 30]


def test_simulation_over_a_whole_frame_agrees_with_the_fixed_point():
    tasks = [_task("a", 3, 7, 3), _task("b", 2, 14, 3), _task("c", 1, 28, 5)]
    window = rta.CyclicSupply(7, ((0, 7),))
    full = rta.FullSupply("test")
    for task in tasks:
        assert rta._simulated_wcrt(task, tasks, window, 7) == rta._fixed_point_wcrt(task, tasks, full)


def test_simulation_follows_the_windows():
    """The worked example of docs/apex.md: two windows of a 1 ms frame, 1 us slot entry each."""
    supply = rta.CyclicSupply(1_000_000, ((1_000, 300_000), (501_000, 700_000)))
    tasks = [_task("fast", 30, 1_000_000, 103_000), _task("tight", 20, 2_000_000, 253_000, 580_000),
             _task("late", 10, 4_000_000, 403_000, 1_000_000)]
    assert [rta._simulated_wcrt(t, tasks, supply, 1_000_000) for t in tasks] == [104_000, 558_000, 1_566_000]


def test_an_overload_is_unbounded():
    supply = rta.CyclicSupply(10, ((0, 5),))
    tasks = [_task("a", 2, 10, 3), _task("b", 1, 10, 3)]
    assert rta._simulated_wcrt(tasks[0], tasks, supply, 10) == 3
    assert rta._simulated_wcrt(tasks[1], tasks, supply, 10) is None


def test_every_partition_period_start_in_the_frame_is_a_release_phase():
    """Period 5 in a frame of 10 whose only window is [5, 10): released at 0 the process waits for the
    window; the worst phase is the one that counts."""
    supply = rta.CyclicSupply(10, ((5, 10),))
    tasks = [_task("a", 1, 5, 2)]
    assert rta._simulated_wcrt(tasks[0], tasks, supply, 5) == 7


def test_partition_periods_start_at_the_first_window():
    """ARINC 653's partition period starts at the partition's first window (its slot's start, 2 here;
    the window proper after the slot entry, at 3): released there, not at the frame's start."""
    supply = rta.CyclicSupply(10, ((3, 8),), origin=2)
    tasks = [_task("a", 1, 10, 2)]
    assert rta._simulated_wcrt(tasks[0], tasks, supply, 10) == 3
    assert rta._simulated_wcrt(tasks[0], tasks, rta.CyclicSupply(10, ((3, 8),)), 10) == 5


def test_analyse_command_reports_each_process(cli):
    status, out, err = cli("analyse", str(RTA_CONFIG))
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("APEX overheads charged: 3000 ns per activation")
    assert lines[1] == ("partition 'apexrta': 498us of every 1ms in 2 window(s), 1us slot entry taken off each; "
                        "partition period 1ms")
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert rows["fast"][-2:] == ["110us", "met"]  # the simulation's 104 us and 2 us for each lower process's timers
    assert rows["tight"][-2:] == ["562us", "met"]
    assert rows["late"][-2:] == ["1568us", "MISSED"]
    assert "aperiodic: not analysed" in lines[-1]


def test_analyse_json(cli, tmp_path):
    out = tmp_path / "rta.json"
    assert cli("analyse", str(RTA_CONFIG), "--json", str(out))[0] == 0
    import json
    data = json.loads(out.read_text())
    assert data["overheads_ns"]["per_activation"] == rta.JOB_OVERHEAD_NS
    verdicts = {p["name"]: (p["wcrt"], p["met"]) for p in data["partitions"][0]["processes"]}
    assert verdicts == {"fast": (110_000, True), "tight": (562_000, True), "late": (1_568_000, False),
                        "reporter": (None, None)}


def _system_on(policy_lines: str, vcpu: str, others: str = "") -> str:
    return f"""\
system: {{name: s, platform: qemu-virt, cores: 4, memory: 1G}}
hypervisor:
  memory: {{base: 0x40000000, size: 32M}}
schedule:
  cores:
{policy_lines}
partitions:
  - name: app
    id: 0
    image: app.elf
    vcpus: [{vcpu}]
    memory:
      - {{name: ram, phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}}
    apex:
      stack_total: 8K
      process_list:
        - {{name: hi, period: 10ms, wcet: 1ms, priority: 20}}
        - {{name: lo, period: 20ms, wcet: 2ms, priority: 10}}
{others}"""


def test_an_edf_budget_is_a_periodic_resource(tmp_path):
    (tmp_path / "s.yaml").write_text(_system_on("    - {core: 1, policy: edf}",
                                                "{core: 1, period: 5ms, budget: 2500us}"))
    result = rta.analyse(config.load(tmp_path / "s.yaml", images=False))[0]
    assert result.supply == "budget 2500us every 5ms (periodic resource)"
    hi, lo = result.processes
    # hi: 1003 us of demand and 2 us for lo's timers; the first 2500 us are blackout, then 2500 us of supply.
    assert hi.wcrt == 5_000_000 + 1_005_000 and hi.met
    # lo: 2003 + 1003 us need the first budget (to 7.5 ms) and 506 us of the next (from 10 ms), so R
    # passes 10 ms and hi comes again: 2003 + 2 * 1003 us, 1509 us of the second budget.
    assert lo.wcrt == 10_000_000 + 1_509_000 and lo.met


def test_a_higher_fixed_priority_vcpu_leaves_nothing_to_analyse(tmp_path):
    other = """\
  - name: hog
    id: 1
    image: app.elf
    vcpus: [{core: 1, priority: 9}]
    memory:
      - {name: ram, phys: 0x42200000, guest: 0x40000000, size: 2M, rights: rwx}
"""
    (tmp_path / "s.yaml").write_text(_system_on("    - {core: 1, policy: fixed_priority}",
                                                "{core: 1, priority: 5}", other))
    result = rta.analyse(config.load(tmp_path / "s.yaml", images=False))[0]
    assert all(v.wcrt is None and v.met is None and "hog.0" in v.note for v in result.processes)


def test_each_core_is_analysed_against_its_own_vcpu(tmp_path):
    """lo bound to core 1, the partition's vCPU 1, alone there on a dedicated core: nothing of core 0's
    hi interferes with it, and hi is analysed against vCPU 0's EDF budget alone."""
    text = _system_on("    - {core: 1, policy: edf}\n    - {core: 2, policy: dedicated}",
                      "{core: 1, period: 5ms, budget: 2500us}, {core: 2}")
    text = text.replace("{name: lo, period: 20ms, wcet: 2ms, priority: 10}",
                        "{name: lo, period: 20ms, wcet: 2ms, priority: 10, core: 1}")
    (tmp_path / "s.yaml").write_text(text)
    system = config.load(tmp_path / "s.yaml", images=False)
    reports = rta.analyse(system)
    assert [(r.title, [v.name for v in r.processes]) for r in reports] == [
        ("partition 'app' core 0", ["hi"]), ("partition 'app' core 1", ["lo"])]
    assert reports[0].processes[0].wcrt == 5_000_000 + 1_003_000
    assert reports[1].supply == "core 2, dedicated" and reports[1].processes[0].wcrt == 2_003_000
    rows = [struct.unpack_from("<32sqqIIII", apex.encode_table(system, system.partition_named("app")),
                               80 + 64 * i) for i in range(2)]
    assert [r[6] for r in rows] == [0, 1]  # the core each row binds its process to


def _dedicated(processes: str) -> str:
    return _system_on("    - {core: 1, policy: dedicated}", "{core: 1}").replace(
        """        - {name: hi, period: 10ms, wcet: 1ms, priority: 20}
        - {name: lo, period: 20ms, wcet: 2ms, priority: 10}
""", processes)


def test_a_lower_process_critical_section_blocks_once(tmp_path):
    """hi waits at most once an activation for lo's critical section (500 us) and is charged it; lo,
    with nothing below it, is not."""
    (tmp_path / "s.yaml").write_text(_dedicated("""\
        - {name: hi, period: 10ms, wcet: 1ms, priority: 20}
        - {name: lo, period: 20ms, wcet: 2ms, priority: 10, critical: 500us}
"""))
    hi, lo = rta.analyse(config.load(tmp_path / "s.yaml", images=False))[0].processes
    assert (hi.wcrt, hi.blocking, hi.note) == (1_505_000, 500_000, "blocking 500us charged")  # and lo's timers
    assert (lo.wcrt, lo.blocking) == (2_003_000 + 1_003_000, 0)


def test_processes_between_the_blocker_and_the_blocked_interfere(tmp_path):
    """No priority inheritance: while the aperiodic lo holds the semaphore hi waits for, mid (below hi)
    may run, so hi is charged mid's activations too; an aperiodic one there leaves hi unbounded."""
    (tmp_path / "s.yaml").write_text(_dedicated("""\
        - {name: hi, period: 10ms, wcet: 1ms, priority: 30}
        - {name: mid, period: 10ms, wcet: 1ms, priority: 20}
        - {name: lo, priority: 10, critical: 500us}
"""))
    hi, mid, lo = rta.analyse(config.load(tmp_path / "s.yaml", images=False))[0].processes
    assert hi.wcrt == 1_003_000 + 500_000 + 1_003_000 + 4_000 and hi.met  # the timers of mid and lo
    assert mid.wcrt == 1_003_000 + 500_000 + 1_003_000 + 2_000 and mid.blocking == 500_000
    (tmp_path / "s.yaml").write_text(_dedicated("""\
        - {name: hi, period: 10ms, wcet: 1ms, priority: 30}
        - {name: mid, priority: 20}
        - {name: lo, priority: 10, critical: 500us}
"""))
    hi = rta.analyse(config.load(tmp_path / "s.yaml", images=False))[0].processes[0]
    assert hi.wcrt is None and "aperiodic mid" in hi.note, hi


def test_a_critical_section_longer_than_the_wcet_is_refused(tmp_path):
    (tmp_path / "s.yaml").write_text(_dedicated("""\
        - {name: hi, period: 10ms, wcet: 1ms, priority: 20, critical: 2ms}
        - {name: lo, period: 20ms, wcet: 2ms, priority: 10}
"""))
    _, errors = config.check(tmp_path / "s.yaml")
    assert any("critical 2ms is longer than its wcet 1ms" in e.message for e in errors), errors


# --- docs/apex.md stays true ---------------------------------------------------------------------

APEX_DOC = REPO / "docs" / "apex.md"


def _doc_blocks() -> list[str]:
    import re
    return re.findall(r"```[a-z]*\n(.*?)```", APEX_DOC.read_text(), flags=re.S)


def test_the_worked_example_is_the_tested_description():
    block = next(b for b in _doc_blocks() if "name: tight" in b and "stack_total: 12800" in b)
    assert block in RTA_CONFIG.read_text()


def test_the_documented_analysis_is_what_the_tool_prints(cli):
    shown = next(b for b in _doc_blocks() if b.startswith("APEX overheads charged"))
    assert cli("analyse", str(RTA_CONFIG)) == (0, shown, "")


def test_the_configuration_reference_example_is_valid(tmp_path):
    doc = (REPO / "docs" / "configuration.md").read_text()
    import re
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.S) if b.startswith("    apex:"))
    (tmp_path / "s.yaml").write_text(_system_on("    - {core: 0, policy: cyclic}\n  plans:\n    - name: p\n"
                                                "      major_frame: 1ms\n      slots:\n"
                                                "        - {core: 0, start: 0us, duration: 500us, vcpu: app}",
                                                "{core: 0}").split("    apex:")[0] + block
                                     + "channels:\n  sampling:\n    - {name: c, source: app.status, "
                                       "destinations: [app.status_in], max_message_size: 8, refresh_period: 1ms}\n")
    _, errors = config.check(tmp_path / "s.yaml", images=False)
    assert errors == []


def test_a_hyperperiod_too_long_to_simulate_is_refused(tmp_path):
    text = _system_on("    - {core: 0, policy: cyclic}\n  plans:\n    - name: p\n      major_frame: 1ms\n"
                      "      slots:\n        - {core: 0, start: 0us, duration: 500us, vcpu: app}", "{core: 0}")
    text = text.replace("period: 10ms, wcet: 1ms", "period: 999983ms, wcet: 1ms").replace(
        "period: 20ms, wcet: 2ms", "period: 1000003ms, wcet: 2ms")
    (tmp_path / "s.yaml").write_text(text.replace("apex:\n", "apex:\n      period: 1ms\n"))
    result = rta.analyse(config.load(tmp_path / "s.yaml", images=False))[0]
    assert all(v.wcrt is None and "activations per hyperperiod" in v.note for v in result.processes), result


def test_apex_needs_a_paravirtual_partition(tmp_path):
    text = _system_on("    - {core: 1, policy: fixed_priority}", "{core: 1, priority: 5}")
    (tmp_path / "s.yaml").write_text(text.replace("    image: app.elf\n", "    image: app.elf\n    board: qemu-virt\n"))
    _, errors = config.check(tmp_path / "s.yaml", images=False)
    assert [e.message for e in errors if "apex" in e.message] == [
        "partition 'app': 'apex' needs a paravirtual partition linked with libapex; remove it from a Linux "
        "partition or one with a board"]
    assert [e.pos.line for e in errors if "apex" in e.message] == [16]  # the apex mapping
