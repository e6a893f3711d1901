"""Inter-partition communication in the description: the `channels` section (sampling and queuing
channels, shared-memory regions), read, checked and laid out (docs/configuration.md#channels).

The model objects live here rather than in model.py because nothing else needs them; a System
carries them in system.channels, and check_channels() derives for every partition its ports in
descriptor order (part.channel_ports) and its shared regions as extra memory areas
(part.shared_areas), which is all the C emitter needs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from bulkhead.abi import (DESTINATION_PORT, MAX_CHANNEL_MEMORY, MAX_CHANNELS, MAX_CORES, MAX_MESSAGE_SIZE, MAX_PORTS,
                          MAX_SHM_REGIONS, MAX_SYSTEM_PORTS, PORT_NAME_MAX, SOURCE_PORT, msg_slot_size,
                          sampling_copies, sampling_slot_size)
from bulkhead.checks import NAME_CHARS, _inside, _overlaps, ram_range, rights_valid
from bulkhead.diagnostics import Diagnostics, suggest
from bulkhead.firmware import emulated_ranges
from bulkhead.model import Area, Located, System
from bulkhead.reader import Key, Reader
from bulkhead.units import M, align_down, align_up, hexa, size_text, span
from bulkhead.yamlsrc import Node, pos_of

NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{PORT_NAME_MAX}}}")
ENDPOINT = re.compile(r"([^.\s]+)\.([^\s]+)")

CHANNELS_KEYS = {"sampling": Key(False, ""), "queuing": Key(False, ""), "shared_memory": Key(False, "")}
SAMPLING_KEYS = {
    "name": Key(True, "'name: attitude' (1 to 31 characters from A-Z a-z 0-9 _ -)"),
    "source": Key(True, "'source: control.att_out' (the writing partition and its port name)"),
    "destinations": Key(True, "'destinations: [monitor.att_in]' (the reading partitions and their port names)"),
    "max_message_size": Key(True, "'max_message_size: 64' (bytes)"),
    "refresh_period": Key(True, "'refresh_period: 10ms' (how long a message stays valid)"),
}
QUEUING_KEYS = {
    "name": Key(True, "'name: commands' (1 to 31 characters from A-Z a-z 0-9 _ -)"),
    "source": Key(True, "'source: ground.cmd_out' (the sending partition and its port name)"),
    "destination": Key(True, "'destination: control.cmd_in' (the receiving partition and its port name)"),
    "max_message_size": Key(True, "'max_message_size: 100' (bytes)"),
    "max_messages": Key(True, "'max_messages: 8' (the queue depth)"),
}
SHM_KEYS = {
    "name": Key(True, "'name: frames' (1 to 31 characters from A-Z a-z 0-9 _ -)"),
    "size": Key(True, "'size: 64K'"),
    "phys": Key(False, ""),
    "doorbell": Key(False, ""),
    "mappings": Key(True, "'mappings:' with a list such as '- {partition: app, guest: 0x50000000, rights: rw}'"),
}
MAPPING_KEYS = {
    "partition": Key(True, "'partition: app'"),
    "guest": Key(True, "'guest: 0x50000000' (where the partition sees the region)"),
    "rights": Key(False, ""),
}


# --- Model ------------------------------------------------------------------------------------

@dataclass
class Endpoint(Located):
    text: str | None = None       # as written, 'partition.port'
    partition: str | None = None
    port: str | None = None


@dataclass
class Channel(Located):
    index: int                    # position in its list (sampling or queuing)
    kind: str                     # "sampling" or "queuing"
    name: str | None = None
    source: Endpoint | None = None
    destinations: list[Endpoint] = field(default_factory=list)  # queuing: exactly one
    max_message_size: int | None = None
    max_messages: int | None = 1  # the queue depth; 1 for sampling
    refresh_period: int | None = 0  # sampling: ns a message stays valid; 0 for queuing
    port_cores: int = 0           # sampling: cores its source's and destinations' vCPUs may run on

    @property
    def title(self) -> str:
        return f"{self.kind} channel '{self.name}'" if self.name else f"channels.{self.kind}[{self.index}]"

    def endpoints(self) -> list[tuple[Endpoint, int]]:
        """(endpoint, BH_SOURCE_PORT or BH_DESTINATION_PORT) of every endpoint that was read."""
        ends = [(self.source, SOURCE_PORT)] if self.source else []
        return ends + [(d, DESTINATION_PORT) for d in self.destinations]

    @property
    def buffer_size(self) -> int:
        """Hypervisor memory for its messages: a queue's slots, or a sampling channel's copies."""
        if self.kind == "sampling":
            return sampling_copies(self.port_cores) * sampling_slot_size(self.max_message_size)
        return self.max_messages * msg_slot_size(self.max_message_size)


@dataclass
class ShmMapping(Located):
    index: int
    partition: str | None = None
    guest: int | None = None
    rights: str | None = "rw"


@dataclass
class SharedRegion(Located):
    index: int
    name: str | None = None
    size: int | None = None
    phys: int | None = None  # None until placed
    doorbell: bool = False
    mappings: list[ShmMapping] = field(default_factory=list)

    @property
    def title(self) -> str:
        return f"shared region '{self.name}'" if self.name else f"channels.shared_memory[{self.index}]"


@dataclass
class Channels(Located):
    channels: list[Channel] = field(default_factory=list)  # sampling first: bh_system_cfg.channels order
    regions: list[SharedRegion] = field(default_factory=list)


@dataclass(frozen=True)
class PortDecl:
    """One port of a partition; its descriptor is its index in part.channel_ports."""

    name: str
    channel: int    # index in system.channels.channels
    direction: int  # SOURCE_PORT or DESTINATION_PORT


# --- Reading ----------------------------------------------------------------------------------

def read_channels(reader: Reader, node: Node) -> Channels:
    result = Channels(pos_of(node))
    fields = reader.fields(node, "channels", CHANNELS_KEYS)
    if fields is None:
        return result
    for kind in ("sampling", "queuing"):
        if kind in fields:
            entries = reader.sequence(fields[kind], f"channels.{kind}") or []
            result.channels += [_read_channel(reader, entry, index, kind) for index, entry in enumerate(entries)]
    if "shared_memory" in fields:
        entries = reader.sequence(fields["shared_memory"], "channels.shared_memory") or []
        result.regions = [_read_region(reader, entry, index) for index, entry in enumerate(entries)]
    return result


def _read_channel(reader: Reader, node: Node, index: int, kind: str) -> Channel:
    where = f"channels.{kind}[{index}]"
    chan = Channel(pos_of(node), index=index, kind=kind)
    fields = reader.fields(node, where, SAMPLING_KEYS if kind == "sampling" else QUEUING_KEYS) or {}
    chan.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "name" in fields:
        chan.name = reader.string(fields["name"], f"{where}.name")
    if "source" in fields:
        chan.source = _read_endpoint(reader, fields["source"], f"{where}.source")
    if "destination" in fields:
        chan.destinations = [_read_endpoint(reader, fields["destination"], f"{where}.destination")]
    if "destinations" in fields:
        entries = reader.sequence(fields["destinations"], f"{where}.destinations") or []
        chan.destinations = [_read_endpoint(reader, entry, f"{where}.destinations[{n}]")
                             for n, entry in enumerate(entries)]
    if "max_message_size" in fields:
        chan.max_message_size = reader.integer(fields["max_message_size"], f"{where}.max_message_size", "64")
    if "max_messages" in fields:
        chan.max_messages = reader.integer(fields["max_messages"], f"{where}.max_messages", "8")
    if "refresh_period" in fields:
        chan.refresh_period = reader.duration(fields["refresh_period"], f"{where}.refresh_period", "10ms")
    return chan


def _read_endpoint(reader: Reader, node: Node, where: str) -> Endpoint:
    end = Endpoint(pos_of(node))
    end.text = reader.string(node, where)
    if end.text is None:
        return end
    match = ENDPOINT.fullmatch(end.text)
    if match is None:
        reader.diags.error(end.pos, f"{where} '{end.text}' is not a port; write the partition's name and the "
                           f"port's name joined by a dot, e.g. control.att_out")
    else:
        end.partition, end.port = match.groups()
    return end


def _read_region(reader: Reader, node: Node, index: int) -> SharedRegion:
    where = f"channels.shared_memory[{index}]"
    region = SharedRegion(pos_of(node), index=index)
    fields = reader.fields(node, where, SHM_KEYS) or {}
    region.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "name" in fields:
        region.name = reader.string(fields["name"], f"{where}.name")
    if "size" in fields:
        region.size = reader.integer(fields["size"], f"{where}.size", "64K")
    if "phys" in fields:
        region.phys = reader.integer(fields["phys"], f"{where}.phys", "0x4f000000")
    if "doorbell" in fields:
        region.doorbell = bool(reader.boolean(fields["doorbell"], f"{where}.doorbell"))
    if "mappings" in fields:
        entries = reader.sequence(fields["mappings"], f"{where}.mappings") or []
        region.mappings = [_read_mapping(reader, entry, n, f"{where}.mappings[{n}]") for n, entry in enumerate(entries)]
    return region


def _read_mapping(reader: Reader, node: Node, index: int, where: str) -> ShmMapping:
    mapping = ShmMapping(pos_of(node), index=index)
    fields = reader.fields(node, where, MAPPING_KEYS) or {}
    mapping.marks.update({key: pos_of(value) for key, value in fields.items()})
    if "partition" in fields:
        mapping.partition = reader.string(fields["partition"], f"{where}.partition")
    if "guest" in fields:
        mapping.guest = reader.integer(fields["guest"], f"{where}.guest", "0x50000000")
    if "rights" in fields:
        mapping.rights = reader.string(fields["rights"], f"{where}.rights")
    return mapping


# --- Checks -----------------------------------------------------------------------------------

def check_channels(system: System, diags: Diagnostics) -> None:
    """Names, endpoints, sizes and limits of the channels; layout of the shared regions. Then fills
    part.channel_ports and part.shared_areas for the emitter."""
    ipc = system.channels or Channels(system.pos)
    _check_names(ipc.channels, "channel", diags)
    _check_names(ipc.regions, "shared region", diags)
    _check_endpoints(system, ipc.channels, diags)
    _count_port_cores(system, ipc.channels)
    _check_sizes(ipc.channels, diags)
    _check_counts(system, ipc, diags)
    for region in ipc.regions:
        _check_region(system, region, diags)
    _check_guest_overlaps(system, ipc.regions, diags)
    _place_regions(system, ipc.regions, diags)
    _check_region_overlaps(system, ipc.regions, diags)
    _derive(system, ipc)


def _check_names(items: list, what: str, diags: Diagnostics) -> None:
    seen: dict[str, Located] = {}
    for item in items:
        if item.name is None:
            continue
        if not NAME.fullmatch(item.name):
            diags.error(item.at("name"), f"{what} name '{item.name}' is not valid; use 1 to {PORT_NAME_MAX} "
                        f"characters from {NAME_CHARS}")
        elif item.name in seen:
            diags.error(item.at("name"), f"duplicate {what} name '{item.name}' (also used at line "
                        f"{seen[item.name].at('name').line}); give each {what} a unique name")
        else:
            seen[item.name] = item


def _check_endpoints(system: System, channels: list[Channel], diags: Diagnostics) -> None:
    """Endpoints name existing partitions and valid ports, and every port is in one channel only."""
    names = [p.name for p in system.partitions if p.name]
    owners: dict[tuple[str, str], Channel] = {}
    for chan in channels:
        if not chan.destinations and "destinations" in chan.marks:
            diags.error(chan.at("destinations"), f"{chan.title}: destinations is empty; list at least one port "
                        f"that reads the channel, e.g. [monitor.att_in]")
        for end, _ in chan.endpoints():
            if end.partition is None:
                continue
            if system.partition_named(end.partition) is None:
                diags.error(end.pos, f"{chan.title}: '{end.text}' names partition '{end.partition}', which does "
                            f"not exist; {suggest(end.partition, names)}use one of: {', '.join(names)}")
            elif not NAME.fullmatch(end.port):
                diags.error(end.pos, f"{chan.title}: port name '{end.port}' in '{end.text}' is not valid; use 1 "
                            f"to {PORT_NAME_MAX} characters from {NAME_CHARS}")
            elif (end.partition, end.port) in owners:
                other = owners[(end.partition, end.port)]
                where = "this channel" if other is chan else f"{other.title} (line {other.pos.line})"
                diags.error(end.pos, f"{chan.title}: port '{end.text}' is already an endpoint of {where}; a port "
                            f"belongs to one channel, give this one another name")
            else:
                owners[(end.partition, end.port)] = chan


# A sampling write is one hypervisor call: the copy of the message, a look at each destination
# port (about 0.9 counter ticks each) and an interrupt for each destination partition (a wake-up
# and a kick of another core: about 8 ticks, as long as copying some 160 bytes from an odd
# address; tests/system/test_fanout.py). The call must stay within the longest path the
# lateness bound assumes (docs/performance.md), which the largest message to one port nearly
# takes: each destination partition beyond the first counts as DESTINATION_COST bytes of the
# message, and each further port of a partition as PORT_COST.
DESTINATION_COST = 256
PORT_COST = 32


def fan_out_cost(size: int, partitions: int, ports: int) -> int:
    """A sampling write's length, as bytes of message, within MAX_MESSAGE_SIZE if allowed."""
    return size + DESTINATION_COST * (partitions - 1) + PORT_COST * (ports - partitions)


def _check_fan_out(chan: Channel, diags: Diagnostics) -> None:
    size = chan.max_message_size
    ports = [d for d in chan.destinations if d.partition]
    parts = len({d.partition for d in ports})
    if chan.kind != "sampling" or size is None or not ports or \
            fan_out_cost(size, parts, len(ports)) <= MAX_MESSAGE_SIZE:
        return
    smaller = MAX_MESSAGE_SIZE - fan_out_cost(0, parts, len(ports))
    fix = f"make max_message_size at most {smaller} bytes, or " if smaller >= 1 else ""
    diags.error(chan.at("destinations"), f"{chan.title}: a write of up to {size} bytes to {len(ports)} "
                f"port{'s' if len(ports) > 1 else ''} in {parts} partition{'s' if parts > 1 else ''} is one "
                f"hypervisor call too long for the time other partitions may wait for it; {fix}give it fewer "
                f"destinations (split the channel): each partition beyond the first counts as "
                f"{DESTINATION_COST} bytes of the message, each further port of a partition as {PORT_COST}")


def _count_port_cores(system: System, channels: list[Channel]) -> None:
    """A sampling channel keeps a copy of its message for a read or write on each core its source's
    and destinations' vCPUs may run on (core/ports.c), as the hypervisor counts them (port_cores)."""
    for chan in channels:
        cores: set[int] = set()
        for end in [chan.source, *chan.destinations]:
            part = system.partition_named(end.partition) if end and end.partition else None
            for vcpu in part.vcpus if part else ():
                cores |= set(vcpu.cores or ()) if vcpu.best_effort else {vcpu.core}
        chan.port_cores = len({c for c in cores if isinstance(c, int) and 0 <= c < MAX_CORES})


def _check_sizes(channels: list[Channel], diags: Diagnostics) -> None:
    total = 0
    for chan in channels:
        size = chan.max_message_size
        if size is not None and not 1 <= size <= MAX_MESSAGE_SIZE:
            diags.error(chan.at("max_message_size"), f"{chan.title}: max_message_size {size} is out of range; use "
                        f"1 to {MAX_MESSAGE_SIZE} bytes (the hypervisor copies each message in one call)")
            continue
        _check_fan_out(chan, diags)
        if chan.max_messages == 0:
            diags.error(chan.at("max_messages"), f"{chan.title}: max_messages is 0; a queue holds at least 1 message")
            continue
        if chan.kind == "sampling" and chan.refresh_period == 0 and "refresh_period" in chan.marks:
            diags.error(chan.at("refresh_period"), f"{chan.title}: refresh_period is 0, so no message would ever "
                        f"be valid; give the period within which a message counts as fresh, e.g. 10ms")
        if size is None or chan.max_messages is None:
            continue
        total += chan.buffer_size
        if total > MAX_CHANNEL_MEMORY and total - chan.buffer_size <= MAX_CHANNEL_MEMORY:
            diags.error(chan.at("max_messages", "max_message_size"), f"{chan.title}: the message buffers of the "
                        f"channels up to this one need {total} bytes of hypervisor memory (a queuing channel "
                        f"max_messages x (max_message_size rounded up to 8, plus 8); a sampling channel "
                        f"(max_message_size rounded up to 8, plus 16) x (1 + the cores its source's and "
                        f"destinations' vCPUs may run on)), more than the {MAX_CHANNEL_MEMORY} ({size_text(MAX_CHANNEL_MEMORY)}) "
                        f"allowed; make messages smaller, queues shorter, or sampling readers fewer")


def _check_counts(system: System, ipc: Channels, diags: Diagnostics) -> None:
    if len(ipc.channels) > MAX_CHANNELS:
        chan = ipc.channels[MAX_CHANNELS]
        diags.error(chan.pos, f"{chan.title} is channel number {MAX_CHANNELS + 1}, but at most {MAX_CHANNELS} "
                    f"sampling and queuing channels are supported; remove {len(ipc.channels) - MAX_CHANNELS}")
    if len(ipc.regions) > MAX_SHM_REGIONS:
        region = ipc.regions[MAX_SHM_REGIONS]
        diags.error(region.pos, f"{region.title} is region number {MAX_SHM_REGIONS + 1}, but at most "
                    f"{MAX_SHM_REGIONS} shared regions are supported; remove {len(ipc.regions) - MAX_SHM_REGIONS}")
    per_partition: dict[str, int] = defaultdict(int)
    total = 0
    for chan in ipc.channels:
        for end, _ in chan.endpoints():
            if end.partition is None or system.partition_named(end.partition) is None:
                continue
            per_partition[end.partition] += 1
            total += 1
            if per_partition[end.partition] == MAX_PORTS + 1:
                diags.error(end.pos, f"{chan.title}: '{end.text}' is port number {MAX_PORTS + 1} of partition "
                            f"'{end.partition}', but a partition has at most {MAX_PORTS} ports; remove ports or "
                            f"merge channels")
            if total == MAX_SYSTEM_PORTS + 1:
                diags.error(end.pos, f"{chan.title}: '{end.text}' is port number {MAX_SYSTEM_PORTS + 1} of the "
                            f"system, but at most {MAX_SYSTEM_PORTS} ports are supported in all partitions together")


def _page(system: System) -> int:
    return system.platform.page_size if system.platform else 4096


def _check_region(system: System, region: SharedRegion, diags: Diagnostics) -> None:
    page = _page(system)
    if region.size == 0:
        diags.error(region.at("size"), f"{region.title}: size is 0; give it at least {size_text(page)}")
    elif region.size is not None and region.size % page:
        diags.error(region.at("size"), f"{region.title}: size {hexa(region.size)} is not a multiple of "
                    f"{size_text(page)}; use {hexa(align_up(region.size, page))}")
        region.size = None  # not placed, not checked further
    if region.phys is not None and region.phys % page:
        diags.error(region.at("phys"), f"{region.title}: phys {hexa(region.phys)} is not {size_text(page)} aligned; "
                    f"use {hexa(align_down(region.phys, page))} or {hexa(align_up(region.phys, page))}")
        region.phys = None
    names = [p.name for p in system.partitions if p.name]
    members: dict[str, ShmMapping] = {}
    for mapping in region.mappings:
        who = f"{region.title} mappings[{mapping.index}]"
        if mapping.partition is not None and system.partition_named(mapping.partition) is None:
            diags.error(mapping.at("partition"), f"{who}: partition '{mapping.partition}' does not exist; "
                        f"{suggest(mapping.partition, names)}use one of: {', '.join(names)}")
        elif mapping.partition in members:
            diags.error(mapping.at("partition"), f"{who}: partition '{mapping.partition}' already maps this region "
                        f"(line {members[mapping.partition].pos.line}); map a region once per partition")
        elif mapping.partition is not None:
            members[mapping.partition] = mapping
        if mapping.rights is not None and not rights_valid(mapping.rights):
            diags.error(mapping.at("rights"), f"{who}: rights '{mapping.rights}' are not valid; use the letters r, "
                        f"w and x, each at most once and always with r (e.g. r, rw)")
        _check_mapping_guest(system, region, mapping, who, diags)


def _check_mapping_guest(system: System, region: SharedRegion, mapping: ShmMapping, who: str,
                         diags: Diagnostics) -> None:
    page = _page(system)
    if mapping.guest is None:
        return
    if mapping.guest % page:
        diags.error(mapping.at("guest"), f"{who}: guest {hexa(mapping.guest)} is not {size_text(page)} aligned; "
                    f"use {hexa(align_down(mapping.guest, page))} or {hexa(align_up(mapping.guest, page))}")
        mapping.guest = None
    elif system.platform and region.size and mapping.guest + region.size > 1 << system.platform.ipa_bits:
        diags.error(mapping.at("guest"), f"{who}: guest range {span(mapping.guest, region.size)} ends beyond the "
                    f"{system.platform.ipa_bits}-bit guest address space; use a lower guest address")
        mapping.guest = None


def _mapped(regions: list[SharedRegion]) -> list[tuple[SharedRegion, ShmMapping]]:
    """(region, mapping) of every mapping whose partition and guest range are known."""
    return [(r, m) for r in regions if r.size for m in r.mappings if m.guest is not None and m.partition]


def _check_guest_overlaps(system: System, regions: list[SharedRegion], diags: Diagnostics) -> None:
    """A mapping must not overlap its partition's areas, what the hypervisor emulates for it (a Linux
    or board partition's devices, a board's flash banks) or its other mappings in guest space."""
    earlier: list[tuple[SharedRegion, ShmMapping]] = []
    for region, mapping in _mapped(regions):
        part = system.partition_named(mapping.partition)
        if part is None:
            continue
        here = span(mapping.guest, region.size)
        for area in part.areas:
            if area.placed and _overlaps(mapping.guest, region.size, area.guest, area.size):
                diags.error(mapping.at("guest"), f"{region.title}: guest range {here} of partition '{part.name}' "
                            f"overlaps its {area.title} (guest {span(area.guest, area.size)}); give the mapping "
                            f"another guest address")
        for what, base, size in emulated_ranges(part):
            if _overlaps(mapping.guest, region.size, base, size):
                diags.error(mapping.at("guest"), f"{region.title}: guest range {here} of partition '{part.name}' "
                            f"overlaps {what} ({span(base, size)}) that the partition sees; give the mapping "
                            f"another guest address")
        for other, prior in earlier:
            if prior.partition == mapping.partition and _overlaps(mapping.guest, region.size, prior.guest, other.size):
                diags.error(mapping.at("guest"), f"{region.title}: guest range {here} of partition '{part.name}' "
                            f"overlaps {other.title} (guest {span(prior.guest, other.size)}); give the mapping "
                            f"another guest address")
        earlier.append((region, mapping))


def _occupied(system: System) -> list[tuple[int, int, str]]:
    """Physical ranges a region must not touch: hypervisor memory and every normal area."""
    taken = []
    hyp = system.hypervisor
    if hyp and hyp.base is not None and hyp.size:
        taken.append((hyp.base, hyp.size, "the hypervisor memory"))
    for part in system.partitions:
        taken += [(a.phys, a.size, f"{part.title} {a.title}") for a in part.areas if a.placed and not a.is_device]
    return taken


def _place_regions(system: System, regions: list[SharedRegion], diags: Diagnostics) -> None:
    """Regions without phys go to the highest free RAM that fits, 2M aligned when the size allows
    (stage 2 then maps them with blocks), else page aligned."""
    ram = ram_range(system)
    if ram is None or not ram[1]:
        return
    taken = [(start, size) for start, size, _ in _occupied(system)]
    taken += [(r.phys, r.size) for r in regions if r.phys is not None and r.size]
    for region in regions:
        if region.phys is not None or not region.size or "phys" in region.marks:
            continue
        align = 2 * M if region.size % (2 * M) == 0 else _page(system)
        candidate = align_down(ram[0] + ram[1] - region.size, align)
        while candidate >= ram[0]:
            clash = next(((s, n) for s, n in taken if _overlaps(candidate, region.size, s, n)), None)
            if clash is None:
                region.phys = candidate
                taken.append((candidate, region.size))
                break
            candidate = align_down(clash[0] - region.size, align)
        else:
            diags.error(region.at("size"), f"{region.title}: no free RAM of {size_text(region.size)} is left for it "
                        f"outside the hypervisor and every partition; raise system.memory or shrink an area")


def _check_region_overlaps(system: System, regions: list[SharedRegion], diags: Diagnostics) -> None:
    ram = ram_range(system)
    placed: list[SharedRegion] = []
    for region in regions:
        if region.phys is None or not region.size:
            continue
        where, pos = span(region.phys, region.size), region.at("phys", "size")
        if ram and ram[1] and not _inside(region.phys, region.size, *ram):
            diags.error(pos, f"{region.title}: {where} is outside RAM ({span(*ram)}); move it into RAM, or leave "
                        f"out phys and the tool places it")
            continue
        others = _occupied(system) + [(r.phys, r.size, r.title) for r in placed]
        clash = next(((s, n, what) for s, n, what in others if _overlaps(region.phys, region.size, s, n)), None)
        if clash:
            diags.error(pos, f"{region.title}: {where} overlaps {clash[2]} ({span(clash[0], clash[1])}) in physical "
                        f"memory; a shared region lies outside the hypervisor, every partition and every other "
                        f"region: move it, or leave out phys and the tool places it")
        placed.append(region)


def _derive(system: System, ipc: Channels) -> None:
    for part in system.partitions:
        part.channel_ports = [PortDecl(end.port, index, direction)
                              for index, chan in enumerate(ipc.channels)
                              for end, direction in chan.endpoints() if end.partition == part.name]
        part.shared_areas = [_as_area(region, mapping, n) for n, (region, mapping) in enumerate(
            (r, m) for r in ipc.regions for m in r.mappings if m.partition == part.name)]


def _as_area(region: SharedRegion, mapping: ShmMapping, n: int) -> Area:
    return Area(mapping.pos, index=n, label=f"shared region {region.name}", phys=region.phys, guest=mapping.guest,
                size=region.size, rights=mapping.rights)
