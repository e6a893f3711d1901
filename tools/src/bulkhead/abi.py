"""Names and numbers shared with the hypervisor and the partition ABI.

The numbers are read from the C headers themselves (hypervisor/include/config_tables.h and
partitions/include/bulkhead/abi.h), so a limit exists once: the tool checks a description against
exactly the values the hypervisor checks at boot. `bulkhead build` also compares them with the
header it compiles the tables against (--include), see limits_differing()."""

from __future__ import annotations

import re
from pathlib import Path

_REPO = Path(__file__).resolve().parents[3]
CONFIG_HEADER = _REPO / "hypervisor" / "include" / "config_tables.h"
PARTITION_ABI_HEADER = _REPO / "partitions" / "include" / "bulkhead" / "abi.h"
SCHED_HEADER = _REPO / "hypervisor" / "include" / "sched.h"
_DEFINE = re.compile(r"^#define\s+(BH_\w+)\s+\(?(0x[0-9a-fA-F]+|\d+)u?\)?\s*(?:/\*.*)?$", re.M)

# The #defines of config_tables.h the tool checks descriptions against.
LIMIT_NAMES = ("BH_CONFIG_VERSION", "BH_MAX_PARTITIONS", "BH_MAX_CORES", "BH_MAX_VCPUS", "BH_MAX_PLANS",
               "BH_MAX_SLOTS", "BH_MIN_SLOT_NS", "BH_IPA_BITS", "BH_MAX_CHANNELS", "BH_MAX_PORTS", "BH_MAX_SYSTEM_PORTS",
               "BH_MAX_SHM_REGIONS", "BH_MAX_MESSAGE_SIZE", "BH_MAX_CHANNEL_MEMORY")


def header_defines(path: Path) -> dict[str, int]:
    """Every `#define BH_NAME NUMBER` of a header (decimal or hex, with or without u)."""
    return {name: int(value, 0) for name, value in _DEFINE.findall(path.read_text())}


def _defines() -> dict[str, int]:
    try:
        return {**header_defines(PARTITION_ABI_HEADER), **header_defines(CONFIG_HEADER)}
    except OSError as exc:
        raise RuntimeError(f"bulkhead: cannot read the hypervisor's limits from {exc.filename}: the tool runs "
                           f"from its source tree (pip install -e tools)") from exc


def limits_differing(include_dir: Path) -> list[str]:
    """The limits on which include_dir/config_tables.h differs from the one the tool checked against,
    as 'NAME is X there, Y here' texts (empty when they agree)."""
    theirs = header_defines(include_dir / "config_tables.h")
    return [f"{name} is {theirs.get(name, 'missing')} there, {_H[name]} here"
            for name in LIMIT_NAMES if theirs.get(name) != _H[name]]


_H = _defines()

CONFIG_VERSION = _H["BH_CONFIG_VERSION"]
MAX_PARTITIONS = _H["BH_MAX_PARTITIONS"]
MAX_CORES = _H["BH_MAX_CORES"]
MAX_VCPUS = _H["BH_MAX_CORES"]       # of one partition: one per core at most
MAX_SYSTEM_VCPUS = _H["BH_MAX_VCPUS"]  # all partitions together
MAX_PLANS = _H["BH_MAX_PLANS"]
MAX_SLOTS = _H["BH_MAX_SLOTS"]       # of all plans together
MIN_SLOT_NS = _H["BH_MIN_SLOT_NS"]   # the shortest cyclic slot
IPA_BITS = _H["BH_IPA_BITS"]         # the guest address width stage 2 maps
VIRQ_MAX = _H["BH_VIRQ_MAX"]         # interrupts 0..VIRQ_MAX-1 exist for the hypervisor (bulkhead/abi.h)
MAX_PRIORITY = 255   # bh_vcpu_cfg.priority: 0..255, higher runs first

SYSTEM_NAME_MAX = 31
PARTITION_NAME_MAX = 15

# enum bh_hm_event, in index order: (YAML name, C enumerator)
HM_EVENTS: tuple[tuple[str, str], ...] = (
    ("memory_violation", "BH_HM_MEMORY_VIOLATION"),
    ("trapped_instruction", "BH_HM_TRAPPED_INSTRUCTION"),
    ("smc", "BH_HM_SMC"),
    ("partition_error", "BH_HM_PARTITION_ERROR"),
    ("internal_error", "BH_HM_INTERNAL_ERROR"),
    ("budget_overrun", "BH_HM_BUDGET_OVERRUN"),
    ("deadline_miss", "BH_HM_DEADLINE_MISS"),
)

# enum bh_hm_action, in value order: (YAML name, C enumerator)
HM_ACTIONS: tuple[tuple[str, str], ...] = (
    ("ignore", "BH_HM_IGNORE"),
    ("halt_partition", "BH_HM_HALT_PARTITION"),
    ("cold_restart", "BH_HM_COLD_RESTART"),
    ("halt_system", "BH_HM_HALT_SYSTEM"),
    ("suspend", "BH_HM_SUSPEND"),
    ("warm_restart", "BH_HM_WARM_RESTART"),
    ("propagate", "BH_HM_PROPAGATE"),
)
# Actions that need a paravirtual partition: propagate raises BH_VIRQ_HM, which only a
# partition built against bulkhead/abi.h handles (a Linux kernel has no handler for it).
PARAVIRTUAL_ACTIONS = ("propagate",)

EVENT_NAMES = tuple(name for name, _ in HM_EVENTS)
ACTION_NAMES = tuple(name for name, _ in HM_ACTIONS)
ACTION_ENUM = dict(HM_ACTIONS)

DEFAULT_HEALTH: dict[str, str] = {
    "memory_violation": "halt_partition",
    "trapped_instruction": "halt_partition",
    "smc": "halt_partition",
    "partition_error": "ignore",
    "internal_error": "halt_system",
    "budget_overrun": "ignore",
    "deadline_miss": "ignore",
}

# enum bh_policy, in value order: (YAML name, C enumerator)
POLICIES: tuple[tuple[str, str], ...] = (
    ("dedicated", "BH_POLICY_DEDICATED"),
    ("cyclic", "BH_POLICY_CYCLIC"),
    ("fixed_priority", "BH_POLICY_FIXED_PRIORITY"),
    ("edf", "BH_POLICY_EDF"),
)
POLICY_NAMES = tuple(name for name, _ in POLICIES)
POLICY_ENUM = dict(POLICIES)
DEFAULT_POLICY = "dedicated"
SLOT_NOTIFY_FLAG = "BH_SLOT_NOTIFY"
VCPU_BEST_EFFORT_FLAG = "BH_VCPU_BEST_EFFORT"


def _sched_ticks() -> dict[str, int]:
    """The leads of hypervisor/include/sched.h, in counter ticks: what `bulkhead plan` takes off the
    idle time of a core for best-effort work (docs/architecture.md, "Best-effort vCPUs")."""
    text = SCHED_HEADER.read_text()
    return {name: int(value) for name, value in
            re.findall(r"^#define\s+(SLOT_LEAD_TICKS|BE_LEAD_TICKS|BE_MIN_RUN_TICKS)\s+(\d+)u?\b", text, re.M)}


_SCHED = _sched_ticks()
SLOT_LEAD_TICKS = _SCHED["SLOT_LEAD_TICKS"]    # a cyclic core decides this long before each slot boundary
BE_LEAD_TICKS = _SCHED["BE_LEAD_TICKS"]        # a best-effort vCPU leaves this long before the core's instant
BE_MIN_RUN_TICKS = _SCHED["BE_MIN_RUN_TICKS"]  # ... and is taken only for at least this long

# Area rights letters -> flag macros; device areas add BH_AREA_DEVICE.
RIGHT_FLAGS = {"r": "BH_AREA_READ", "w": "BH_AREA_WRITE", "x": "BH_AREA_EXEC"}
AREA_DEVICE_FLAG = "BH_AREA_DEVICE"
PART_SYSTEM_FLAG = "BH_PART_SYSTEM"

TESTS_SECTION = ".bh_tests"
IMAGE_END_SYMBOL = "_image_end"

# Inter-partition communication (config_tables.h, bulkhead/abi.h; docs/ports.md).
MAX_CHANNELS = _H["BH_MAX_CHANNELS"]
MAX_PORTS = _H["BH_MAX_PORTS"]              # of one partition
MAX_SYSTEM_PORTS = _H["BH_MAX_SYSTEM_PORTS"]
MAX_SHM_REGIONS = _H["BH_MAX_SHM_REGIONS"]
MAX_MESSAGE_SIZE = _H["BH_MAX_MESSAGE_SIZE"]
MAX_CHANNEL_MEMORY = _H["BH_MAX_CHANNEL_MEMORY"]
PORT_NAME_MAX = _H["BH_PORT_NAME_MAX"]      # bulkhead/abi.h
CHANNEL_KINDS = (("sampling", "BH_CHANNEL_SAMPLING"), ("queuing", "BH_CHANNEL_QUEUING"))  # enum bh_channel_kind
SOURCE_PORT = _H["BH_SOURCE_PORT"]
DESTINATION_PORT = _H["BH_DESTINATION_PORT"]
SHM_DOORBELL_FLAG = "BH_SHM_DOORBELL"


def msg_slot_size(max_message_size: int) -> int:
    """BH_MSG_SLOT_SIZE: a message's length word and padding, then the message rounded to 8."""
    return 8 + ((max_message_size + 7) & ~7)


def sampling_slot_size(max_message_size: int) -> int:
    """BH_SAMPLING_SLOT_SIZE: a sampling copy's length, write number and time, then the message."""
    return 16 + ((max_message_size + 7) & ~7)


def sampling_copies(port_cores: int) -> int:
    """BH_SAMPLING_COPIES: the last message, and one for a read or write on each of its ports' cores."""
    return port_cores + 1
