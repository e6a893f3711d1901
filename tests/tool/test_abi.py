"""bulkhead/abi.py matches hypervisor/include/config_tables.h (versions, limits, enum orders)."""

from __future__ import annotations

import re

from bulkhead import abi
from tool_support import CONFIG_INCLUDE

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
