"""The channels section: the checked model (ports in descriptor order, shared regions placed and
turned into areas) and the C tables it becomes, read back through config_tables.h."""

from __future__ import annotations

import re
import shutil
import subprocess

from bulkhead import abi, config
from bulkhead.cli import main as cli_main
from test_build import build_args, make_hyp_kit
from tool_support import CONFIG_INCLUDE, GOOD_DIR, REPO, run

ABI_H = (REPO / "partitions" / "include" / "bulkhead" / "abi.h").read_text()
TABLES_H = (CONFIG_INCLUDE / "config_tables.h").read_text()

DUMP_C = r"""
#include <stdio.h>
#include "config_tables.h"

int main(void)
{
	const struct bh_system_cfg *c = &bh_system_config;
	for (uint32_t i = 0; i < c->channel_count; i++) {
		const struct bh_channel_cfg *ch = &c->channels[i];
		printf("channel %s kind=%u size=%u messages=%u refresh=%llu source=%u.%u buffer=%llu aligned=%d dst=",
		       ch->name, ch->kind, ch->max_message_size, ch->max_messages, (unsigned long long)ch->refresh_ns,
		       ch->source.partition, ch->source.port, (unsigned long long)ch->buffer_size,
		       ((unsigned long)ch->buffer & 7) == 0);
		for (uint32_t d = 0; d < ch->destination_count; d++)
			printf("%s%u.%u", d ? "," : "", ch->destinations[d].partition, ch->destinations[d].port);
		printf("\n");
	}
	for (uint32_t i = 0; i < c->shm_count; i++) {
		const struct bh_shm_cfg *r = &c->shm_regions[i];
		printf("shm %s phys=%#llx size=%#llx flags=%u maps=", r->name, (unsigned long long)r->phys,
		       (unsigned long long)r->size, r->flags);
		for (uint32_t m = 0; m < r->mapping_count; m++)
			printf("%s%u@%#llx/%u", m ? "," : "", r->mappings[m].partition,
			       (unsigned long long)r->mappings[m].ipa, r->mappings[m].flags);
		printf("\n");
	}
	for (uint32_t i = 0; i < c->partition_count; i++) {
		const struct bh_partition_cfg *p = &c->partitions[i];
		printf("partition %s areas=%u ports=", p->name, p->area_count);
		for (uint32_t d = 0; d < p->port_count; d++)
			printf("%s%s:%u:%u", d ? "," : "", p->ports[d].name, p->ports[d].channel, p->ports[d].direction);
		printf("\n");
		for (uint32_t a = 0; a < p->area_count; a++)
			printf("  area phys=%#llx ipa=%#llx size=%#llx flags=%#x\n", (unsigned long long)p->areas[a].phys,
			       (unsigned long long)p->areas[a].ipa, (unsigned long long)p->areas[a].size, p->areas[a].flags);
	}
	return 0;
}
"""

EXPECTED = """\
channel attitude kind=0 size=20 messages=1 refresh=10000000 source=0.0 buffer=120 aligned=1 dst=1.0,0.1
channel commands kind=1 size=100 messages=3 refresh=0 source=1.1 buffer=336 aligned=1 dst=0.2
shm frames phys=0x7fc00000 size=0x400000 flags=1 maps=0@0x50000000/3,1@0x60000000/1
shm log phys=0x7fbfe000 size=0x2000 flags=0 maps=1@0x50000000/3
shm fixed phys=0x44000000 size=0x1000 flags=0 maps=0@0x50400000/1
partition ctl areas=3 ports=att_out:0:0,att_echo:0:1,cmd_in:1:1
  area phys=0x42000000 ipa=0x40000000 size=0x200000 flags=0x7
  area phys=0x7fc00000 ipa=0x50000000 size=0x400000 flags=0x3
  area phys=0x44000000 ipa=0x50400000 size=0x1000 flags=0x1
partition mon areas=3 ports=att_in:0:1,cmd_out:1:0
  area phys=0x42200000 ipa=0x40000000 size=0x200000 flags=0x7
  area phys=0x7fbfe000 ipa=0x50000000 size=0x2000 flags=0x3
  area phys=0x7fc00000 ipa=0x60000000 size=0x400000 flags=0x1
"""


def test_channels_model(workdir):
    shutil.copy(GOOD_DIR / "channels.yaml", workdir / "channels.yaml")
    system = config.load("channels.yaml")
    attitude, commands = system.channels.channels
    # Three copies of 16 + 24 bytes: the last message, and one for a read or write on each of cores
    # 1 and 2 (its ports' partitions' vCPUs: ctl's, the source and att_echo, and mon's).
    assert (attitude.kind, attitude.refresh_period, attitude.port_cores) == ("sampling", 10_000_000, 2)
    assert attitude.buffer_size == 3 * 40
    assert (commands.kind, commands.max_messages, commands.buffer_size) == ("queuing", 3, 3 * 112)
    ctl, mon = system.partitions
    assert [(p.name, p.channel, p.direction) for p in ctl.channel_ports] == [
        ("att_out", 0, abi.SOURCE_PORT), ("att_echo", 0, abi.DESTINATION_PORT), ("cmd_in", 1, abi.DESTINATION_PORT)]
    frames, log, fixed = system.channels.regions
    # Placed from the top of RAM down, 2M aligned when the size allows.
    assert (frames.phys, log.phys, fixed.phys) == (0x7FC00000, 0x7FBFE000, 0x44000000)
    assert [(a.phys, a.guest, a.rights) for a in mon.shared_areas] == [(0x7FC00000, 0x60000000, "r"),
                                                                      (0x7FBFE000, 0x50000000, "rw")]


def test_channel_tables_match_config_tables_h(workdir):
    shutil.copy(GOOD_DIR / "channels.yaml", workdir / "channels.yaml")
    assert cli_main(build_args("channels.yaml", make_hyp_kit(workdir / "kit"))) == 0
    (workdir / "dump.c").write_text(DUMP_C)
    run(["gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-I", str(CONFIG_INCLUDE), "out/bh_config.c",
         "out/bh_images.S", "dump.c", "-o", "dump"], workdir)
    assert subprocess.run([str(workdir / "dump")], capture_output=True, text=True, check=True).stdout == EXPECTED


def _define(text: str, name: str) -> int:
    return int(re.search(rf"#define {name}\s+(0x[0-9a-f]+|\d+)u?", text).group(1), 0)


def test_abi_mirrors_the_headers():
    for const, header, name in (
            (abi.MAX_CHANNELS, TABLES_H, "BH_MAX_CHANNELS"), (abi.MAX_PORTS, TABLES_H, "BH_MAX_PORTS"),
            (abi.MAX_SYSTEM_PORTS, TABLES_H, "BH_MAX_SYSTEM_PORTS"),
            (abi.MAX_SHM_REGIONS, TABLES_H, "BH_MAX_SHM_REGIONS"),
            (abi.MAX_MESSAGE_SIZE, TABLES_H, "BH_MAX_MESSAGE_SIZE"),
            (abi.MAX_CHANNEL_MEMORY, TABLES_H, "BH_MAX_CHANNEL_MEMORY"),
            (abi.PORT_NAME_MAX, ABI_H, "BH_PORT_NAME_MAX"), (abi.SOURCE_PORT, ABI_H, "BH_SOURCE_PORT"),
            (abi.DESTINATION_PORT, ABI_H, "BH_DESTINATION_PORT")):
        assert const == _define(header, name), name
    kinds = dict(re.findall(r"(BH_CHANNEL_\w+) = (\d+)", TABLES_H))
    assert [int(kinds[enum]) for _, enum in abi.CHANNEL_KINDS] == [0, 1]
    assert [_define(ABI_H, "BH_SAMPLING_PORT"), _define(ABI_H, "BH_QUEUING_PORT")] == [0, 1]
    assert "#define BH_MSG_SLOT_SIZE(max) (8u + (((max) + 7u) & ~7u))" in TABLES_H
    assert [abi.msg_slot_size(n) for n in (1, 8, 9, 100)] == [16, 16, 24, 112]
    assert "#define BH_SAMPLING_SLOT_SIZE(max) (16u + (((max) + 7u) & ~7u))" in TABLES_H
    assert "#define BH_SAMPLING_COPIES(port_cores) ((port_cores) + 1u)" in TABLES_H
    assert [abi.sampling_slot_size(n) for n in (1, 8, 9)] == [24, 24, 32] and abi.sampling_copies(3) == 4


def test_configuration_md_channels_example(workdir, cli):
    """The example of docs/configuration.md#channels, given the partitions it names, is valid."""
    doc = (REPO / "docs" / "configuration.md").read_text()
    example = next(b for b in re.findall(r"```yaml\n(.*?)```", doc, flags=re.S) if b.startswith("channels:"))
    names = sorted(set(re.findall(r"\b([a-z]+)\.[a-z_]+", example)) | set(re.findall(r"partition: (\w+)", example)))
    parts = "".join(f"  - {{name: {name}, id: {i}, image: app.elf, vcpus: [{{core: {i % 4}, priority: 1}}],\n"
                    f"     memory: [{{phys: {0x42000000 + i * 0x200000:#x}, guest: 0x40000000, size: 2M, rights: rwx}}]}}\n"
                    for i, name in enumerate(names))
    cores = ", ".join(f"{{core: {c}, policy: fixed_priority}}" for c in range(4))
    (workdir / "doc.yaml").write_text("system: {name: doc, platform: qemu-virt, cores: 4, memory: 1G}\n"
                                      "hypervisor:\n  memory: {base: 0x40000000, size: 32M}\n"
                                      f"schedule:\n  cores: [{cores}]\n"
                                      "partitions:\n" + parts + example)
    assert cli("check", "doc.yaml") == (0, f"doc.yaml: ok ({len(names)} partitions)\n", "")


def test_a_sampling_channel_keeps_a_copy_for_each_core_its_ports_may_use(workdir):
    """Port cores, of the source's and the destinations' vCPUs: a dedicated vCPU's core, a best-effort
    vCPU's whole set, each core once; one copy more for the last message."""
    (workdir / "be.yaml").write_text("""\
system: {name: be, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor: {memory: {base: 0x40000000, size: 32M}}
schedule:
  cores: [{core: 0, policy: fixed_priority}, {core: 1, policy: fixed_priority},
          {core: 2, policy: fixed_priority}, {core: 3, policy: fixed_priority}]
partitions:
  - {name: src, id: 0, image: app.elf, vcpus: [{core: 0, priority: 1}],
     memory: [{phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}]}
  - {name: dst, id: 1, image: app.elf, vcpus: [{core: 1, priority: 2}, {best_effort: true, cores: [1, 2]}],
     memory: [{phys: 0x42200000, guest: 0x40000000, size: 2M, rights: rwx}]}
  - {name: near, id: 2, image: app.elf, vcpus: [{core: 0, priority: 3}],
     memory: [{phys: 0x42400000, guest: 0x40000000, size: 2M, rights: rwx}]}
channels:
  sampling:
    - {name: s, source: src.out, destinations: [dst.in], max_message_size: 100, refresh_period: 1ms}
    - {name: local, source: src.out2, destinations: [near.in], max_message_size: 8, refresh_period: 1ms}
""")
    s, local = config.load("be.yaml").channels.channels
    assert (s.port_cores, s.buffer_size) == (3, 4 * (16 + 104))
    assert (local.port_cores, local.buffer_size) == (1, 2 * (16 + 8))
