"""What the tool accepts, the hypervisor runs (design.md, principle 3), checked: for descriptions the tool
accepts, the tables it generates are linked with the hypervisor's core/ on the host and run through its
boot path (bootcheck_support, tests/unit/bootcheck), which must not panic.

The descriptions: every good/ file, configs/*.yaml, tests/system/configs/*.yaml, and edited good/ files
from Hypothesis (deterministic): values replaced by plausible ones of the same kind (sizes, addresses,
durations, small numbers), which the tool often accepts, and the blind edits of test_fuzz.py. The normal
run tries BULKHEAD_FUZZ_EXAMPLES examples per property (default 30: about ten seconds in all);
`make campaign` raises it."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bootcheck_support import boot, build_checker
from bulkhead import config
from tool_support import CROSS, GOOD_DIR, REPO, run
from test_fuzz import TOKENS

EXAMPLES = int(os.environ.get("BULKHEAD_FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

GOOD = sorted(p.name for p in GOOD_DIR.glob("*.yaml"))
SHIPPED = sorted(REPO.glob("configs/*.yaml")) + sorted(REPO.glob("tests/system/configs/*.yaml"))


@pytest.fixture(scope="session")
def checker() -> None:
    build_checker()


def require_boot(path: Path, out: Path) -> bool:
    """Boot-check a description the tool accepts; false for a rejected one (not this test's business)."""
    system, errors = config.check(path)
    if errors:
        return False
    result = boot(system, str(path), out)
    assert result.ok, f"the tool accepts {path.name} but the hypervisor's boot rejects its tables " \
                      f"(exit {result.status}):\n{path.read_text()}\n--- boot:\n{result.output}"
    return True


@pytest.mark.parametrize("name", GOOD)
def test_good_descriptions_boot(name, checker, workdir):
    shutil.copy(GOOD_DIR / name, workdir / name)
    assert config.check(workdir / name)[1] == []
    require_boot(workdir / name, workdir / "out")


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_shipped_descriptions_boot(path, checker, tmp_path):
    path = _with_built_images(path, tmp_path)
    system, errors = config.check(path)
    # make test builds every program first; a description it cannot check is a failure here.
    assert not errors, errors[0].format(str(path))
    require_boot(path, tmp_path / "out")


# --- the checker can fail ----------------------------------------------------------------------
# The model of a good description changed after the tool's check, as a tool bug would leave it: the
# boot must stop with the hypervisor's own message.

def _tampered_boot(workdir: Path, name: str, tamper) -> str:
    shutil.copy(GOOD_DIR / name, workdir / name)
    system = config.load(workdir / name)
    tamper(system)
    result = boot(system, name, workdir / "out")
    assert result.status == 1, result.output
    return result.output


def _ram_of(system, name):
    return next(a for a in system.partition_named(name).areas if a.label == "ram")


def test_checker_catches_guest_space_beyond_stage_2(checker, workdir):
    def beyond(system):  # the last page past 2^BH_IPA_BITS: stage2_map's BH_CHECK
        _ram_of(system, "app").guest = (1 << 32) - 0x1000
    assert "PANIC: check failed: ipa + size <= STAGE2_IPA_LIMIT" in _tampered_boot(workdir, "demo.yaml", beyond)


def test_checker_catches_a_load_outside_ram(checker, workdir):
    def below_ram(system):  # physical memory below RAM: the image copy would fault on the target
        _ram_of(system, "app").phys = 0x20000000
    # The hypervisor's own boot check of the areas catches it before any copy.
    assert "PANIC: check failed: (a->flags & BH_AREA_DEVICE) || (a->phys >= sys->ram_base" in \
        _tampered_boot(workdir, "demo.yaml", below_ram)


def test_checker_catches_a_load_into_hypervisor_memory(checker, workdir):
    def into_hypervisor(system):
        _ram_of(system, "app").phys = 0x40200000
    assert "PANIC: check failed: a->phys >= sys->hyp_base + sys->hyp_size" in \
        _tampered_boot(workdir, "demo.yaml", into_hypervisor)


def test_checker_catches_a_vcpu_on_a_missing_core(checker, workdir):
    def missing_core(system):
        system.partition_named("app").vcpus[1].core = 7
    assert "PANIC: check failed: core < sys->core_count" in _tampered_boot(workdir, "demo.yaml", missing_core)


TOP_IMAGE = "../../../build/systest/hello_top_ipa.elf"


def _with_built_images(path: Path, tmp_path: Path) -> Path:
    """tool_limits_top.yaml names an image its system test links (hello at the top of the guest address
    space): link the same here, into tmp_path, and check a copy that names it."""
    text = path.read_text()
    if TOP_IMAGE not in text:
        return path
    build = REPO / "build"
    elf = tmp_path / "hello_top_ipa.elf"
    main = build / "partitions" / "obj" / "tests" / "hello" / "main.o"
    if not main.exists():
        return path
    lib = build / "partitions" / "lib"
    run([f"{CROSS}gcc", "-Wl,--defsym,PART_BASE=0xffe00000", "-nostdlib", "-static", "-no-pie",
         "-Wl,--build-id=none", "-Wl,-z,max-page-size=4096", f"-Wl,-T,{REPO / 'partitions' / 'lib' / 'part.ld'}",
         "-o", str(elf), str(main), str(lib / "libbhtest.a"), str(lib / "libbhpart.a"), "-lgcc"], tmp_path)
    copy = tmp_path / path.name
    copy.write_text(text.replace(TOP_IMAGE, str(elf)))
    return copy


# --- edited descriptions -----------------------------------------------------------------------

# A value of one kind replaced by another of the same kind: the edits the tool is likely to accept,
# where tool and hypervisor can disagree on something subtler than syntax.
SIZES = ["4K", "8K", "12K", "64K", "1M", "2M", "3M", "4M", "6M", "8M", "16M", "32M", "64M", "256M", "1G",
         "2G", "3G", "0x1000", "0x201000", "0x3ff000"]
DURATIONS = ["0ns", "1ns", "15ns", "1us", "100us", "200us", "300us", "500us", "999us", "1ms", "2ms", "5ms",
             "10ms", "1s", "1_000us"]
NUMBERS = ["0", "1", "2", "3", "4", "5", "7", "8", "10", "16", "31", "32", "33", "34", "48", "63", "64", "255",
           "256", "1000", "1019", "1020", "1023", "1024", "4096", "65536"]
ADDRESS_DELTAS = [0x1000, -0x1000, 0x200000, -0x200000, 0x1000000, 0x40000000, -0x40000000]
# Near the ends of guest and physical space (4 GiB, RAM at 1-2 GiB or more) and of the device region.
EDGES = [0xFFFFF000, 0xFFFFE000, 0xFFE00000, 0xFFC00000, 0xFF000000, 0xC0000000, 0xBFFFF000, 0x7FFFF000,
         0x8000000, 0x0]
HEX = re.compile(r"0x[0-9a-fA-F_]+$")
SIZE = re.compile(r"(\d+)[KMG]$")
DURATION = re.compile(r"[\d_]+(ns|us|ms|s)$")
INTEGER = re.compile(r"\d+$")
# A YAML scalar value: after "key: " or "- ", up to a separator.
VALUE = re.compile(r"(?:(?<=: )|(?<=- )|(?<=\[)|(?<=, ))([0-9][0-9A-Za-z_]*)")


def _replacement(value: str, choice: int) -> str:
    """Another value of the kind of `value`; choice picks which."""
    if HEX.match(value):  # an address (a delta from it, or an edge) or a size given in hex
        base = int(value.replace("_", ""), 16)
        pools = [[hex(base + d) for d in ADDRESS_DELTAS if base + d >= 0], [hex(e) for e in EDGES], SIZES]
        pool = pools[choice % len(pools)]
        return pool[choice // len(pools) % len(pool)]
    if SIZE.match(value):
        return SIZES[choice % len(SIZES)]
    if DURATION.match(value):
        return DURATIONS[choice % len(DURATIONS)]
    return NUMBERS[choice % len(NUMBERS)]


def edit_values(text: str, edits: list[tuple[int, int]]) -> str:
    for which, choice in edits:
        spots = list(VALUE.finditer(text))
        spot = spots[which % len(spots)]
        text = text[:spot.start()] + _replacement(spot.group(1), choice) + text[spot.end():]
    return text


@pytest.fixture
def scratch(workdir: Path) -> Path:
    for name in GOOD:
        shutil.copy(GOOD_DIR / name, workdir / name)
    return workdir


def accepted_edits(target: Path, text: str, edits: list[tuple[int, int]]) -> int:
    """Apply the edits one by one, keeping each that the tool accepts (so that every example ends in an
    accepted description, often several edits away from the good one); the count kept."""
    kept = 0
    for edit in edits:
        target.write_text(edit_values(text, [edit]))
        if not config.check(target)[1]:
            text = target.read_text()
            kept += 1
    target.write_text(text)
    return kept


@FUZZ
@given(name=st.sampled_from(GOOD), edits=st.lists(st.tuples(st.integers(0, 1 << 10), st.integers(0, 1 << 10)),
                                                  min_size=1, max_size=8))
def test_accepted_value_edits_boot(scratch, checker, name, edits):
    target = scratch / f"edited_{name}"
    kept = accepted_edits(target, (GOOD_DIR / name).read_text(), edits)
    event(f"edits the tool accepted: {kept}")
    assert require_boot(target, scratch / "out")


@FUZZ
@given(name=st.sampled_from(GOOD), line=st.integers(0, 200), token=st.sampled_from(TOKENS + SIZES + DURATIONS),
       keep_key=st.booleans())
def test_accepted_replaced_values_boot(scratch, checker, name, line, token, keep_key):
    """test_fuzz.test_a_value_replaced_by_anything, with the accepted results boot-checked."""
    lines = (GOOD_DIR / name).read_text().splitlines()
    index = line % len(lines)
    key, colon, _ = lines[index].partition(": ")
    lines[index] = f"{key}{colon}{token}" if keep_key and colon else token
    target = scratch / f"edited_{name}"
    target.write_text("\n".join(lines) + "\n")
    event("accepted: boot-checked" if require_boot(target, scratch / "out") else "rejected by the tool")
