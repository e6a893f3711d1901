"""`bulkhead plan`: the configured schedule as text, PNG and Chrome/Perfetto trace JSON."""

from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image

from bulkhead import config, timeline
from bulkhead import plan as plan_module
from bulkhead.timeline import AXIS_HEIGHT, BOTTOM, LANE_COLOR, LANE_GAP, LANE_HEIGHT, LEFT, LINE_HEIGHT, PLOT_WIDTH, TOP
from tool_support import GOOD_DIR

APP, CONTROL = timeline.partition_color(0), timeline.partition_color(1)  # partition ids 0 and 1


@pytest.fixture
def sched(workdir) -> str:
    shutil.copy(GOOD_DIR / "sched.yaml", workdir / "sched.yaml")
    return "sched.yaml"


def test_text(sched, cli):
    assert cli("plan", sched) == (0, """\
plan 'normal' (initial), major frame 1ms:
  core 0: cyclic: 0us-200us control.0 (notify), 500us-800us app.0
core 1: fixed_priority: control.1 priority 10, app.1 priority 5
core 2: edf: app.2 2ms/10ms deadline 5ms, logger.0 500us/1ms, utilization 0.7
core 3: dedicated: solo.0
""", "")
    assert cli("plan", sched, "--plan", "startup")[1].startswith(
        "plan 'startup', major frame 1ms:\n  core 0: cyclic: 0ms-1ms control.0\n")


def test_json(sched, workdir, cli):
    assert cli("plan", sched, "--json", "plan.json") == (0, "bulkhead: plan.json: plan 'normal'\n", "")
    document = json.loads((workdir / "plan.json").read_text())
    assert document["displayTimeUnit"] == "ns"
    assert document["traceEvents"] == [
        {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "sched plan normal"}},
        {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "core 0"}},
        {"name": "control.0", "cat": "slot", "ph": "X", "ts": 0, "dur": 200, "pid": 0, "tid": 0,
         "args": {"plan": "normal", "slot": 0, "partition": "control", "vcpu": 0, "notify": True}},
        {"name": "app.0", "cat": "slot", "ph": "X", "ts": 500, "dur": 300, "pid": 0, "tid": 0,
         "args": {"plan": "normal", "slot": 1, "partition": "app", "vcpu": 0, "notify": False}},
    ]


def test_json_frames_and_fractional_times(sched, workdir, cli):
    text = (workdir / sched).read_text().replace("start: 500us", "start: 500_500ns")
    (workdir / "frac.yaml").write_text(text)
    assert cli("plan", "frac.yaml", "--json", "plan.json", "--frames", "3")[0] == 0
    slots = [e for e in json.loads((workdir / "plan.json").read_text())["traceEvents"] if e["ph"] == "X"]
    assert [(e["name"], e["ts"]) for e in slots] == [("control.0", 0), ("app.0", 500.5), ("control.0", 1000),
                                                       ("app.0", 1500.5), ("control.0", 2000), ("app.0", 2500.5)]


def test_png(sched, workdir, cli):
    assert cli("plan", sched, "--png", "plan.png") == (0, "bulkhead: plan.png: plan 'normal'\n", "")
    with Image.open(workdir / "plan.png") as image:
        assert image.format == "PNG"
        # one cyclic lane, the axis, one legend row, 3 other cores and the list of plans as notes
        assert image.size == (1200, 198)
        assert 198 == TOP + LANE_HEIGHT + LANE_GAP + AXIS_HEIGHT + 5 * LINE_HEIGHT + BOTTOM
        pixels = image.convert("RGB")

        def at(us: int) -> tuple[int, int, int]:  # inside the lane of core 0, above the label
            return pixels.getpixel((round(LEFT + us / 1000 * PLOT_WIDTH), TOP + 3))

        assert at(5) == at(195) == CONTROL          # control.0: 0us-200us
        assert at(505) == at(650) == at(795) == APP  # app.0: 500us-800us
        assert at(250) == at(850) == LANE_COLOR      # idle


def test_png_without_plans(workdir, cli):
    shutil.copy(GOOD_DIR / "demo.yaml", workdir / "demo.yaml")
    assert cli("plan", "demo.yaml", "--png", "cores.png", "--json", "cores.json")[0] == 0
    with Image.open(workdir / "cores.png") as image:
        # a lane per core, no axis, one legend row and one note
        assert image.size == (1200, TOP + 4 * (LANE_HEIGHT + LANE_GAP) + 2 * LINE_HEIGHT + BOTTOM)
        pixels = image.convert("RGB")
        lane = [TOP + core * (LANE_HEIGHT + LANE_GAP) + 3 for core in range(4)]
        assert pixels.getpixel((LEFT + 5, lane[0])) == LANE_COLOR  # core 0: unused
        assert pixels.getpixel((LEFT + 5, lane[1])) == CONTROL     # control (id 1) owns core 1
        assert pixels.getpixel((LEFT + PLOT_WIDTH - 5, lane[2])) == APP  # app (id 0) has cores 2 and 3
    names = [e["args"]["name"] for e in json.loads((workdir / "cores.json").read_text())["traceEvents"]]
    assert names == ["demo cores", "core 0: dedicated: no vCPU", "core 1: dedicated: control.0",
                     "core 2: dedicated: app.0", "core 3: dedicated: app.1"]


def test_shared_cores_without_plans(workdir, cli):
    """fixed_priority lanes put the highest priority first; edf widths are budget/period."""
    text = (GOOD_DIR / "sched.yaml").read_text()
    text = text[:text.index("  initial_plan")] + text[text.index("partitions:"):]
    text = text.replace("{core: 0, policy: cyclic}", "{core: 0, policy: fixed_priority}")
    text = text.replace("      - core: 0\n", "      - {core: 0, priority: 1}\n")
    (workdir / "shared.yaml").write_text(text)
    status, out, err = cli("plan", "shared.yaml", "--png", "shared.png")
    assert (status, err) == (0, "")
    with Image.open(workdir / "shared.png") as image:
        pixels = image.convert("RGB")
        core1, core2 = (TOP + core * (LANE_HEIGHT + LANE_GAP) + 3 for core in (1, 2))
        assert pixels.getpixel((LEFT + 5, core1)) == CONTROL  # control.1 priority 10 before app.1 priority 5
        assert pixels.getpixel((LEFT + PLOT_WIDTH - 5, core1)) == APP
        assert pixels.getpixel((round(LEFT + 0.1 * PLOT_WIDTH), core2)) == APP  # app.2: 2ms/10ms = 0.2
        assert pixels.getpixel((round(LEFT + 0.5 * PLOT_WIDTH), core2)) == timeline.partition_color(2)  # logger 0.5
        assert pixels.getpixel((round(LEFT + 0.9 * PLOT_WIDTH), core2)) == LANE_COLOR  # 0.3 left over


def test_unknown_plan(sched, cli):
    assert cli("plan", sched, "--plan", "nope") == \
        (1, "", "bulkhead: error: there is no plan 'nope' in the configuration (its plans are startup, normal)\n")


def test_images_are_not_needed(sched, workdir, cli):
    (workdir / "app.elf").unlink()
    assert cli("plan", sched)[0] == 0


def test_invalid_config(workdir, cli):
    (workdir / "bad.yaml").write_text("system: {}\n")
    status, out, err = cli("plan", "bad.yaml", "--png", "x.png")
    assert (status, out) == (1, "") and "missing required key 'name' in system" in err
    assert not (workdir / "x.png").exists()


def test_ticks():
    assert timeline.tick_step(1_000_000) == 100_000
    assert timeline.tick_step(30_000_000) == 5_000_000
    assert [timeline.tick_label(t, 100_000) for t in (0, 100_000, 1_000_000)] == ["0", "100us", "1000us"]
    assert [timeline.tick_label(t, 5_000_000) for t in (5_000_000, 7_500_000)] == ["5ms", "7.5ms"]


BEST_EFFORT = """\
# Best-effort capacity, computed by hand (62.5 MHz: 16 ns per tick; the lead before each boundary of
# a cyclic core is SLOT_LEAD_TICKS + BE_LEAD_TICKS = 450 ticks = 7.2us, and a gap must leave
# BE_MIN_RUN_TICKS = 2.048us after it). Core 0's gaps: 200us-210us (10us - 7.2us = 2.8us),
# 500us-505us (too short: lost), 900us-1ms (100us - 7.2us = 92.8us): 95.6us of 1ms = 9.56 %.
system: {name: be, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor:
  memory: {base: 0x40000000, size: 32M}
schedule:
  cores:
    - {core: 0, policy: cyclic}
    - {core: 1, policy: edf}
  plans:
    - name: normal
      major_frame: 1ms
      slots:
        - {core: 0, start: 0us, duration: 200us, vcpu: rt.0}
        - {core: 0, start: 210us, duration: 290us, vcpu: rt.0}
        - {core: 0, start: 505us, duration: 395us, vcpu: rt.0}
partitions:
  - name: rt
    id: 0
    image: app.elf
    vcpus:
      - {core: 0}
      - {core: 1, period: 1ms, budget: 250us}
      - {core: 2}
    memory: [{phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}]
  - name: be
    id: 1
    image: app.elf
    vcpus:
      - {best_effort: true, cores: [0, 1]}
      - {best_effort: true, cores: [3]}
      - {best_effort: true, cores: [0, 3]}
    memory: [{phys: 0x42200000, guest: 0x40000000, size: 2M, rights: rwx}]
"""


def test_best_effort_capacity(workdir, cli):
    """Per core the share its own policy leaves, and per best-effort vCPU the sum over its cores."""
    (workdir / "be.yaml").write_text(BEST_EFFORT)
    assert cli("plan", "be.yaml") == (0, """\
plan 'normal' (initial), major frame 1ms:
  core 0: cyclic: 0us-200us rt.0, 210us-500us rt.0, 505us-900us rt.0
core 1: edf: rt.1 250us/1ms, utilization 0.25
core 2: dedicated: rt.2
core 3: dedicated: no vCPU
best-effort capacity, the share of each core its own policy leaves (plan 'normal'):
  core 0: 9.56 % (cyclic: 1ms frame - 885us slots - 2 x 7.2us lead - 5us in gaps too short to use): be.0, be.2
  core 1: at most 75 % (edf: 1 - utilization 0.25, an upper bound): be.0
  core 2: 0 % (dedicated to rt.2): no best-effort vCPU
  core 3: 100 % (dedicated, no vCPU): be.1, be.2
best-effort vCPUs, the capacity of their cores together:
  be.0: cores 0, 1: at most 0.85 cores, shared with be.2
  be.1: core 3: 1 core, shared with be.2
  be.2: cores 0, 3: 1.1 cores, shared with be.0, be.1
""", "")


def test_best_effort_capacity_in_the_picture(workdir, cli):
    """The PNG's notes end with the same lines; without best-effort vCPUs nothing is added."""
    (workdir / "be.yaml").write_text(BEST_EFFORT)
    shutil.copy(GOOD_DIR / "sched.yaml", workdir / "sched.yaml")
    assert not plan_module.capacity_lines(config.load("sched.yaml"), None)
    system = config.load("be.yaml")
    notes = plan_module.plan_timeline(system, system.initial_plan).notes
    assert notes[-9:] == plan_module.capacity_lines(system, system.initial_plan)
    assert notes[-8].startswith("  core 0: 9.56 % (cyclic:")
