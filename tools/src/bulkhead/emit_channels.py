"""The channel, port and shared-region tables of bh_config.c (struct bh_channel_cfg, bh_port_cfg,
bh_shm_cfg in config_tables.h). emit_c.py places them; shared regions reach the partitions' area
tables through part.shared_areas."""

from __future__ import annotations

from bulkhead.abi import CHANNEL_KINDS, RIGHT_FLAGS, SHM_DOORBELL_FLAG
from bulkhead.channels import Channel
from bulkhead.model import Partition, System

KIND_ENUM = dict(CHANNEL_KINDS)
DIRECTIONS = ("BH_SOURCE_PORT", "BH_DESTINATION_PORT")


def _hex(value: int) -> str:
    return f"UINT64_C({value:#x})"


def _ref(system: System, partition_name: str, port: str) -> str:
    part = system.partition_named(partition_name)
    desc = next(n for n, decl in enumerate(part.channel_ports) if decl.name == port)
    return f"{{ .partition = {part.id}u, .port = {desc}u }}"


def render_channels(system: System) -> str:
    """Buffers (writable hypervisor memory), destinations and the channel, region and port tables."""
    ipc = system.channels
    if ipc is None:
        return ""
    text = ""
    for n, chan in enumerate(ipc.channels):
        text += (f"static uint8_t bh_chan_buf_{n}[{chan.buffer_size}] __attribute__((aligned(8))); "
                 f"/* {chan.name} */\n"
                 f"static const struct bh_port_ref bh_chan_dst_{n}[] = {{ "
                 f"{', '.join(_ref(system, d.partition, d.port) for d in chan.destinations)} }};\n")
    if ipc.channels:
        text += "static const struct bh_channel_cfg bh_channels[] = {\n" + "".join(
            _channel(system, n, chan) for n, chan in enumerate(ipc.channels)) + "};\n"
    for n, region in enumerate(ipc.regions):
        rows = "".join(f"\t{{ .partition = {system.partition_named(m.partition).id}u, .flags = {_rights(m.rights)}, "
                       f".ipa = {_hex(m.guest)} }},\n" for m in region.mappings)
        text += f"static const struct bh_shm_map_cfg bh_shm_maps_{n}[] = {{\n{rows}}};\n"
    if ipc.regions:
        text += "static const struct bh_shm_cfg bh_shm_regions[] = {\n" + "".join(
            f"\t{{ .name = \"{r.name}\", .phys = {_hex(r.phys)}, .size = {_hex(r.size)}, "
            f".flags = {SHM_DOORBELL_FLAG if r.doorbell else '0u'}, .mapping_count = {len(r.mappings)}u, "
            f".mappings = bh_shm_maps_{n} }},\n" for n, r in enumerate(ipc.regions)) + "};\n"
    for part in system.by_id():
        if part.channel_ports:
            rows = "".join(f"\t{{ .name = \"{p.name}\", .channel = {p.channel}u, .direction = {p.direction}u }}, "
                           f"/* {DIRECTIONS[p.direction]} */\n" for p in part.channel_ports)
            text += f"static const struct bh_port_cfg bh_ports_{part.id}[] = {{\n{rows}}};\n"
    return text


def _channel(system: System, n: int, chan: Channel) -> str:
    return (f"\t{{ /* channel {n} */\n"
            f"\t\t.name = \"{chan.name}\",\n"
            f"\t\t.kind = {KIND_ENUM[chan.kind]},\n"
            f"\t\t.max_message_size = {chan.max_message_size}u,\n"
            f"\t\t.max_messages = {chan.max_messages}u,\n"
            f"\t\t.destination_count = {len(chan.destinations)}u,\n"
            f"\t\t.refresh_ns = UINT64_C({chan.refresh_period}),\n"
            f"\t\t.source = {_ref(system, chan.source.partition, chan.source.port)},\n"
            f"\t\t.destinations = bh_chan_dst_{n},\n"
            f"\t\t.buffer = bh_chan_buf_{n},\n"
            f"\t\t.buffer_size = {_hex(chan.buffer_size)},\n"
            f"\t}},\n")


def _rights(rights: str) -> str:
    return " | ".join(RIGHT_FLAGS[letter] for letter in "rwx" if letter in rights)


def partition_fields(part: Partition) -> str:
    """.port_count and .ports of struct bh_partition_cfg."""
    if not part.channel_ports:
        return ""
    return f"\t\t.port_count = {len(part.channel_ports)}u,\n\t\t.ports = bh_ports_{part.id},\n"


def system_fields(system: System) -> str:
    """.channel_count, .channels, .shm_count and .shm_regions of struct bh_system_cfg."""
    ipc = system.channels
    if ipc is None or not (ipc.channels or ipc.regions):
        return ""
    text = ""
    if ipc.channels:
        text += f"\t.channel_count = {len(ipc.channels)}u,\n\t.channels = bh_channels,\n"
    if ipc.regions:
        text += f"\t.shm_count = {len(ipc.regions)}u,\n\t.shm_regions = bh_shm_regions,\n"
    return text
