"""Names and numbers shared with hypervisor/include/config_tables.h."""

from __future__ import annotations

CONFIG_VERSION = 4   # BH_CONFIG_VERSION
MAX_PARTITIONS = 16  # BH_MAX_PARTITIONS
MAX_CORES = 8        # BH_MAX_CORES
MAX_VCPUS = 8        # per partition (BH_MAX_CORES)
MAX_SYSTEM_VCPUS = 32  # BH_MAX_VCPUS: all partitions together
MAX_PLANS = 8        # BH_MAX_PLANS
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

# Area rights letters -> flag macros; device areas add BH_AREA_DEVICE.
RIGHT_FLAGS = {"r": "BH_AREA_READ", "w": "BH_AREA_WRITE", "x": "BH_AREA_EXEC"}
AREA_DEVICE_FLAG = "BH_AREA_DEVICE"
PART_SYSTEM_FLAG = "BH_PART_SYSTEM"

TESTS_SECTION = ".bh_tests"
IMAGE_END_SYMBOL = "_image_end"

# Inter-partition communication (config_tables.h, bulkhead/abi.h; docs/ports.md).
MAX_CHANNELS = 64          # BH_MAX_CHANNELS
MAX_PORTS = 64             # BH_MAX_PORTS: of one partition
MAX_SYSTEM_PORTS = 256     # BH_MAX_SYSTEM_PORTS
MAX_SHM_REGIONS = 64       # BH_MAX_SHM_REGIONS
MAX_MESSAGE_SIZE = 4096    # BH_MAX_MESSAGE_SIZE
MAX_CHANNEL_MEMORY = 0x100000  # BH_MAX_CHANNEL_MEMORY
PORT_NAME_MAX = 31         # BH_PORT_NAME_MAX (bulkhead/abi.h)
CHANNEL_KINDS = (("sampling", "BH_CHANNEL_SAMPLING"), ("queuing", "BH_CHANNEL_QUEUING"))  # enum bh_channel_kind
SOURCE_PORT = 0            # BH_SOURCE_PORT
DESTINATION_PORT = 1       # BH_DESTINATION_PORT
SHM_DOORBELL_FLAG = "BH_SHM_DOORBELL"


def msg_slot_size(max_message_size: int) -> int:
    """BH_MSG_SLOT_SIZE: a message's length word and padding, then the message rounded to 8."""
    return 8 + ((max_message_size + 7) & ~7)
