"""`bulkhead trace` and bulkhead.trace: BHTRACE lines of a console log as data, JSON and PNG."""

from __future__ import annotations

import io
import json
import shutil

import pytest
from PIL import Image

from bulkhead import config, timeline, trace
from bulkhead.timeline import AXIS_HEIGHT, BOTTOM, LANE_COLOR, LANE_GAP, LANE_HEIGHT, LEFT, LINE_HEIGHT, PLOT_WIDTH, TOP
from bulkhead.toolchain import ToolError
from tool_support import GOOD_DIR

# At the default 62.5 MHz one tick is 16 ns: 62500 ticks = 1 ms. With good/sched.yaml, plan 1 is 'normal'
# whose core 0 slots are control.0 (slot 0) and app.0 (slot 1); partition 0 is app, 1 is control.
LOG = """\
Bulkhead 0.1 booting on 4 cores
[monitor] BHTRACE-FREQ 62500000
[monitor] BHTRACE 1 62500 3 1 1 0
[monitor] BHTRACE 0 62500 1 1 0 65536
[monitor] BHTRACE 0 62500 3 1 0 0
[app] hello
[monitor] BHTRACE 0 75000 2 1 0 65536
[monitor] BHTRACE 0 75000 3 255 65535 0
[monitor] BHTRACE 1 81250 7 255 65535 0
[monitor] BHTRACE 0 95000 5 0 0 48
[monitor] BHTRACE 0 93750 1 0 0 65537
[monitor] BHTRACE 0 93750 3 0 0 0
[monitor] BHTRACE 0 100000 6 0 0 513
[monitor] BHTRACE 1 87500 8 1 1 0
[monitor] BHTRACE 1 87500 3 0 1 0
[monitor] BHTRACE 1 90000 4 0 1 6
[monitor] BHTRACE 0 112500 2 0 0 65537
[monitor] BHTRACE 0 112500 3 255 65535 0
[monitor] BHTRACE 0 1 2 3
BHTRACE 0 1 2 3 4 5 trailing
"""

META = [
    {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "core 0"}},
    {"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": 0, "args": {"sort_index": 0}},
    {"name": "thread_name", "ph": "M", "pid": 0, "tid": 100, "args": {"name": "core 0 plan"}},
    {"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": 100, "args": {"sort_index": 1}},
    {"name": "thread_name", "ph": "M", "pid": 0, "tid": 1, "args": {"name": "core 1"}},
    {"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": 1, "args": {"sort_index": 2}},
]


def run(name, ts, dur, tid, partition, vcpu):
    return {"name": name, "cat": "run", "ph": "X", "ts": ts, "dur": dur, "pid": 0, "tid": tid,
            "args": {"partition": partition, "vcpu": vcpu}}


def slot(name, ts, dur, plan, index):
    return {"name": name, "cat": "slot", "ph": "X", "ts": ts, "dur": dur, "pid": 0, "tid": 100,
            "args": {"plan": plan, "slot": index}}


def instant(name, cat, ts, tid, args, scope="t"):
    return {"name": name, "cat": cat, "ph": "i", "s": scope, "ts": ts, "pid": 0, "tid": tid, "args": args}


@pytest.fixture
def data() -> trace.TraceData:
    return trace.parse(LOG.splitlines())


def test_parse(data):
    assert (data.frequency, data.frequency_given, data.cores, data.count) == (62_500_000, True, [0, 1], 15)
    assert [e.time for e in data.events[0]] == sorted(e.time for e in data.events[0])
    assert data.events[0][0] == trace.TraceEvent(core=0, time=62500, type=trace.SLOT_START, partition=1, vcpu=0,
                                                 arg=65536)
    assert (data.events[0][0].slot, data.events[0][0].plan) == (0, 1)
    assert (data.start, data.end, data.to_ns(data.end)) == (62500, 112500, 1_800_000)


def test_slot_starts_and_run_intervals(data):
    assert data.slot_starts(0) == [(62500, 0, 1), (93750, 1, 1)]
    assert data.slot_starts(1) == []
    assert data.run_intervals(0) == [(62500, 75000, 1, 0), (93750, 112500, 0, 0)]  # idle left out
    assert data.run_intervals(1) == [(62500, 87500, 1, 1), (87500, 112500, 0, 1)]  # the last ends with the trace
    assert data.run_intervals(5) == []


def test_equal_times_keep_the_log_order():
    data = trace.parse(["BHTRACE 0 10 3 0 0 0", "BHTRACE 0 5 3 1 0 0", "BHTRACE 0 10 3 255 65535 0"])
    assert [(e.time, e.partition) for e in data.events[0]] == [(5, 1), (10, 0), (10, 255)]
    assert data.run_intervals(0) == [(5, 10, 1, 0)]


def test_frequency():
    assert trace.parse(["BHTRACE 0 1 3 0 0 0"]).frequency == trace.DEFAULT_FREQUENCY
    data = trace.parse(["[m] BHTRACE-FREQ 1000000000", "BHTRACE-FREQ 1000000000", "BHTRACE 0 1500 3 0 0 0"])
    assert (data.frequency, data.to_ns(1500)) == (1_000_000_000, 1500)
    with pytest.raises(ToolError, match="two counter frequencies, 1000 and 2000 Hz"):
        trace.parse(["BHTRACE-FREQ 1000", "BHTRACE-FREQ 2000"])
    with pytest.raises(ToolError, match="frequency of 0"):
        trace.parse(["BHTRACE-FREQ 0"])


def test_json_with_config(data, workdir):
    shutil.copy(GOOD_DIR / "sched.yaml", workdir / "sched.yaml")
    system = config.load("sched.yaml", images=False)
    assert trace.trace_events(data, system) == [
        {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "sched"}},
        *META,
        run("control.0", 1000, 200, 0, "control", 0),
        run("app.0", 1500, 300, 0, "app", 0),
        instant("virq 48", "virq", 1520, 0, {"vcpu": "app.0", "intid": 48}),
        instant("HM trapped_instruction: cold_restart", "hm", 1600, 0,
                {"vcpu": "app.0", "event": "trapped_instruction", "action": "cold_restart"}),
        slot("control.0", 1000, 200, "normal", 0),
        slot("app.0", 1500, 300, "normal", 1),
        run("control.1", 1000, 400, 1, "control", 1),
        run("app.1", 1400, 400, 1, "app", 1),
        instant("plan switch to startup", "plan", 1300, 1, {"plan": "startup", "index": 0}, scope="g"),
        instant("budget exhausted control.1", "budget", 1400, 1, {"vcpu": "control.1"}),
        instant("hypercall 0x6", "hypercall", 1440, 1, {"vcpu": "app.1", "call": 6}),
    ]


def test_cli_json_without_config(workdir, cli):
    (workdir / "console.log").write_text(LOG.replace("0 93750 1 0 0 65537", "0 93750 1 255 65535 65537"))
    assert cli("trace", "console.log", "--json", "out.json") == (0, "bulkhead: out.json: 15 events\n", "")
    document = json.loads((workdir / "out.json").read_text())
    assert document["displayTimeUnit"] == "ns"
    events = document["traceEvents"]
    assert events[0] == {"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "bulkhead trace"}}
    assert events[1:7] == META
    names = [(e["name"], e["tid"]) for e in events[7:] if e["ph"] == "X"]
    assert names == [("p1.0", 0), ("p0.0", 0), ("p1.0", 100), ("slot 1", 100), ("p1.1", 1), ("p0.1", 1)]
    plan_switch = next(e for e in events if e.get("cat") == "plan")
    assert plan_switch["name"] == "plan switch to plan 0"


def test_cli_png(workdir, cli):
    shutil.copy(GOOD_DIR / "sched.yaml", workdir / "sched.yaml")
    (workdir / "console.log").write_text(LOG)
    assert cli("trace", "console.log", "--config", "sched.yaml", "--png", "out.png") == \
        (0, "bulkhead: out.png: 15 events\n", "")
    with Image.open(workdir / "out.png") as image:
        assert image.format == "PNG"
        # two core lanes, the axis, one legend row (2 partitions, 3 markers) and one note
        assert image.size == (1200, TOP + 2 * (LANE_HEIGHT + LANE_GAP) + AXIS_HEIGHT + 2 * LINE_HEIGHT + BOTTOM)
        pixels = image.convert("RGB")

        def at(us: int, core: int = 0, y: int = 3) -> tuple[int, int, int]:  # the trace spans 1000us-1800us
            x = round(LEFT + (us - 1000) / 800 * PLOT_WIDTH)
            return pixels.getpixel((x, TOP + core * (LANE_HEIGHT + LANE_GAP) + y))

        control, app = timeline.partition_color(1), timeline.partition_color(0)
        assert at(1010) == at(1190) == control                  # control.0 ran 1000us-1200us on core 0
        assert at(1250) == LANE_COLOR                            # then core 0 was idle
        assert at(1010, y=LANE_HEIGHT - 2) == timeline.darker(control)  # its slot, in the strip
        assert at(1350, core=1) == control and at(1700, core=1) == app


def test_cli_summary_from_stdin(workdir, cli, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(LOG))
    assert cli("trace", "-") == (0, """\
15 events, counter 62500000 Hz, 1 ms to 1.8 ms after boot
core 0: 10 events, 2 run intervals (p0.0 300 us, p1.0 200 us), 2 slot starts, 1 HM event
core 1: 5 events, 2 run intervals (p0.1 400 us, p1.1 400 us), 0 slot starts, 0 HM events
""", "")


def test_cli_log_without_events(workdir, cli):
    (workdir / "empty.log").write_text("nothing here\n")
    assert cli("trace", "empty.log") == (0, "no BHTRACE events in the log\n", "")
    assert cli("trace", "empty.log", "--png", "e.png", "--json", "e.json")[0] == 0
    with Image.open(workdir / "e.png") as image:
        assert image.size[0] == 1200


def test_cli_errors(workdir, cli):
    assert cli("trace", "missing.log") == \
        (1, "", "bulkhead: error: cannot read missing.log: No such file or directory\n")
    (workdir / "two.log").write_text("BHTRACE-FREQ 1000\nBHTRACE-FREQ 2000\n")
    status, _, err = cli("trace", "two.log")
    assert status == 1 and err.startswith("bulkhead: error: the log gives two counter frequencies")


# Best-effort vCPUs with good/best_effort.yaml: rt (id 0) has rt.0 on cyclic core 1 (slot 0 of plan 0:
# 100us-300us) and rt.1 on fixed-priority core 2; worker (id 1) has worker.0 on cores 1, 2, 3 and worker.1
# on cores 3, 0. A best-effort vCPU's VCPU_SWITCH is in the ring of the core that runs it.
BE_LOG = """\
BHTRACE-FREQ 62500000
BHTRACE 0 0 3 255 65535 0
BHTRACE 1 0 3 1 0 0
BHTRACE 1 5800 3 255 65535 0
BHTRACE 1 6250 1 0 0 0
BHTRACE 1 6250 3 0 0 0
BHTRACE 1 18750 2 0 0 0
BHTRACE 1 18750 3 255 65535 0
BHTRACE 2 0 3 0 1 0
BHTRACE 2 12500 3 1 0 0
BHTRACE 2 25000 3 0 1 0
BHTRACE 3 0 3 1 1 0
BHTRACE 3 31250 3 1 0 0
BHTRACE 0 31250 3 1 1 0
BHTRACE 0 62500 3 255 65535 0
BHTRACE 1 62500 3 255 65535 0
BHTRACE 2 62500 3 255 65535 0
BHTRACE 3 62500 3 255 65535 0
"""
RT, WORKER = timeline.partition_color(0), timeline.partition_color(1)


@pytest.fixture
def be_system(workdir):
    shutil.copy(GOOD_DIR / "best_effort.yaml", workdir / "best_effort.yaml")
    (workdir / "be.log").write_text(BE_LOG)
    return config.load("best_effort.yaml")


def test_best_effort_intervals(be_system):
    data = trace.parse(BE_LOG.splitlines())
    assert trace.best_effort_vcpus(data, be_system) == {(1, 0), (1, 1)}
    assert trace.best_effort_vcpus(data) == {(1, 0), (1, 1)}  # without the configuration: they moved
    assert [trace.best_effort_intervals(data, core, be_system) for core in range(4)] == [
        [(31250, 62500, 1, 1)],
        [(0, 5800, 1, 0)],
        [(12500, 25000, 1, 0)],
        [(0, 31250, 1, 1), (31250, 62500, 1, 0)]]


def test_best_effort_summary(be_system, cli):
    status, out, _ = cli("trace", "be.log", "--config", "best_effort.yaml")
    assert status == 0
    assert out.splitlines()[1:] == [
        "core 0: 3 events, 1 run interval (worker.1 500 us), best-effort 500 us, 0 slot starts, 0 HM events",
        "core 1: 7 events, 2 run intervals (rt.0 200 us, worker.0 92.8 us), best-effort 92.8 us, 1 slot start, "
        "0 HM events",
        "core 2: 4 events, 3 run intervals (rt.1 800 us, worker.0 200 us), best-effort 200 us, 0 slot starts, "
        "0 HM events",
        "core 3: 3 events, 2 run intervals (worker.0 500 us, worker.1 500 us), best-effort 1 ms, 0 slot starts, "
        "0 HM events"]


def test_best_effort_json(be_system, workdir, cli):
    assert cli("trace", "be.log", "--config", "best_effort.yaml", "--json", "be.json")[0] == 0
    runs = [(e["tid"], e["name"], e["cat"], e["ts"], e["dur"], e["args"].get("best_effort", False))
            for e in json.loads((workdir / "be.json").read_text())["traceEvents"] if e["ph"] == "X"
            and e["tid"] < trace.PLAN_TID_BASE]
    assert runs == [
        (0, "worker.1 (best-effort)", "best_effort", 500, 500, True),
        (1, "worker.0 (best-effort)", "best_effort", 0, 92.8, True),
        (1, "rt.0", "run", 100, 200, False),
        (2, "rt.1", "run", 0, 200, False),
        (2, "worker.0 (best-effort)", "best_effort", 200, 200, True),
        (2, "rt.1", "run", 400, 600, False),
        (3, "worker.1 (best-effort)", "best_effort", 0, 500, True),
        (3, "worker.0 (best-effort)", "best_effort", 500, 500, True)]


def test_best_effort_png(be_system, workdir, cli):
    """Best-effort boxes are hatched with the darker shade of their partition's colour; a core's own vCPUs are
    plain, and a note says what the hatching means."""
    assert cli("trace", "be.log", "--config", "best_effort.yaml", "--png", "be.png")[0] == 0
    system_timeline = trace.timeline(trace.parse(BE_LOG.splitlines()), be_system)
    assert system_timeline.notes[-1] == "hatched: a best-effort vCPU running in the core's idle time"
    with Image.open(workdir / "be.png") as image:
        pixels = image.convert("RGB")

        def row(core: int, from_us: int, to_us: int) -> set:
            y = TOP + core * (LANE_HEIGHT + LANE_GAP) + 3
            return {pixels.getpixel((x, y)) for x in range(round(LEFT + from_us / 1000 * PLOT_WIDTH),
                                                           round(LEFT + to_us / 1000 * PLOT_WIDTH))}

        assert row(2, 210, 390) == {WORKER, timeline.darker(WORKER)}  # worker.0 in core 2's idle time
        assert row(2, 10, 190) == row(2, 410, 990) == {RT}            # rt.1, the core's own
        assert row(1, 110, 290) == {RT}                               # rt.0 in its slot
        assert row(1, 2, 90) == {WORKER, timeline.darker(WORKER)}
        assert row(0, 510, 990) == {WORKER, timeline.darker(WORKER)}
        assert row(0, 10, 490) == {LANE_COLOR, timeline.GRID}              # idle, with the grid


def test_without_best_effort_nothing_is_hatched(data):
    assert not trace.best_effort_vcpus(data)
    assert not any(box.hatched for lane in trace.timeline(data).lanes for box in lane.boxes)
    assert not any("hatched" in note for note in trace.timeline(data).notes)
