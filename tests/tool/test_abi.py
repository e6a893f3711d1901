"""bulkhead/abi.py takes its limits from hypervisor/include/config_tables.h and bulkhead/abi.h, and
matches their enum orders; the platforms fit the hypervisor's limits; build refuses a header with
other limits."""

from __future__ import annotations

import re

import shutil
from pathlib import Path

from bulkhead import abi
from bulkhead.platforms import PLATFORMS
from tool_support import CONFIG_INCLUDE, GOOD_DIR

HEADER = (CONFIG_INCLUDE / "config_tables.h").read_text()


def define(name: str) -> int:
    return int(re.search(rf"#define {name}\s+(\d+)u", HEADER).group(1))


def enumerators(enum: str) -> dict[str, int]:
    body = re.search(rf"enum {enum} {{(.*?)}};", HEADER, flags=re.S).group(1)
    return {name: int(value) for name, value in re.findall(r"(BH_\w+)\s*=\s*(\d+)", body)}


def test_version_and_limits():
    assert abi.CONFIG_VERSION == define("BH_CONFIG_VERSION")
    assert abi.MAX_PARTITIONS == define("BH_MAX_PARTITIONS")
    assert abi.MAX_CORES == abi.MAX_VCPUS == define("BH_MAX_CORES")
    assert abi.MAX_SYSTEM_VCPUS == define("BH_MAX_VCPUS")
    assert abi.MAX_PLANS == define("BH_MAX_PLANS")


def test_enums_are_in_value_order():
    events = enumerators("bh_hm_event")
    assert [events[enum] for _, enum in abi.HM_EVENTS] == list(range(events["BH_HM_EVENT_COUNT"]))
    actions = enumerators("bh_hm_action")
    assert [actions[enum] for _, enum in abi.HM_ACTIONS] == list(range(actions["BH_HM_ACTION_COUNT"]))
    assert len(actions) == len(abi.HM_ACTIONS) + 1, "every C action is in HM_ACTIONS"
    policies = enumerators("bh_policy")
    assert [policies[enum] for _, enum in abi.POLICIES] == list(range(len(policies)))
    assert set(abi.DEFAULT_HEALTH) == set(abi.EVENT_NAMES)
    assert f"#define {abi.SLOT_NOTIFY_FLAG} " in HEADER


def test_every_limit_is_read_from_the_headers_the_hypervisor_is_built_with():
    assert abi.CONFIG_HEADER.samefile(CONFIG_INCLUDE / "config_tables.h")
    defines = abi.header_defines(CONFIG_INCLUDE / "config_tables.h")
    assert set(abi.LIMIT_NAMES) <= set(defines)
    assert (abi.MAX_SLOTS, abi.IPA_BITS, abi.MAX_CHANNEL_MEMORY) == \
        (defines["BH_MAX_SLOTS"], defines["BH_IPA_BITS"], defines["BH_MAX_CHANNEL_MEMORY"])
    assert abi.VIRQ_MAX == abi.header_defines(abi.PARTITION_ABI_HEADER)["BH_VIRQ_MAX"]


def test_header_defines_reads_decimal_hex_and_unsigned_numbers(tmp_path):
    header = tmp_path / "h.h"
    header.write_text("#define BH_A 16u\n#define BH_B 0x100000u /* c */\n#define BH_C 288\n"
                      "#define BH_D(x) (x)\n#define BH_E (1u << 3)\n")
    assert abi.header_defines(header) == {"BH_A": 16, "BH_B": 0x100000, "BH_C": 288}


def test_platforms_fit_the_hypervisor():
    for platform in PLATFORMS.values():
        assert platform.max_cores <= abi.MAX_CORES
        assert platform.intid_limit <= abi.VIRQ_MAX
        assert platform.ipa_bits <= abi.IPA_BITS
        assert platform.ram_base + platform.max_ram <= 1 << platform.ipa_bits  # identity-mapped Linux RAM


def test_build_refuses_a_header_with_other_limits(workdir, cli):
    include = workdir / "include"
    include.mkdir()
    text = (CONFIG_INCLUDE / "config_tables.h").read_text()
    (include / "config_tables.h").write_text(text.replace("#define BH_IPA_BITS       32u",
                                                          "#define BH_IPA_BITS       40u"))
    shutil.copy(GOOD_DIR / "demo.yaml", workdir / "demo.yaml")
    status, out, err = cli("build", "demo.yaml", "--out", "out", "--hyp-lib", "none.a", "--linker-script", "none.ld",
                           "--include", str(include))
    assert (status, out) == (1, "")
    assert err == (f"bulkhead: error: {include / 'config_tables.h'} has other limits than {abi.CONFIG_HEADER}, "
                   f"which the tool checks descriptions against (BH_IPA_BITS is 40 there, 32 here); build with the "
                   f"hypervisor headers of this tool's source tree, or run the tool from that tree\n")
    assert not (workdir / "out").exists()


def test_slots_of_all_plans_are_limited(workdir, cli):
    slots = "".join(f"        - {{core: 0, start: {i * abi.MIN_SLOT_NS}ns, duration: {abi.MIN_SLOT_NS}ns, "
                    f"vcpu: control}}\n" for i in range(abi.MAX_SLOTS + 1))
    text = (GOOD_DIR / "sched.yaml").read_text()
    start = text.index("    - name: startup")
    text = text[:start] + f"    - name: startup\n      major_frame: 10ms\n      slots:\n{slots}" + \
        text[text.index("    - name: normal"):]
    Path(workdir / "many.yaml").write_text(text)
    status, _, err = cli("check", "many.yaml")
    assert status == 1
    assert err.splitlines() == [
        f"many.yaml:17:5: error: schedule.plans has {abi.MAX_SLOTS + 3} slots in all, more than the hypervisor's "
        f"{abi.MAX_SLOTS} (BH_MAX_SLOTS); use fewer or longer slots, or fewer plans"]
