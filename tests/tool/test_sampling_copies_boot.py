"""A sampling channel's copies as the tool counts them (channels.py _count_port_cores) and as the
hypervisor does at boot (core/ports.c port_cores, which checks the buffer's size): the same for
sources and destinations of every vCPU form at once: cyclic, fixed-priority and EDF cores, best-effort sets
over cores of each policy in any order, several ports of one partition on one channel, the source's
own partition as a destination, a channel whose destinations share cores."""

from bootcheck_support import boot, build_checker
from bulkhead import config

import pytest


@pytest.fixture(scope="module")
def checker() -> None:
    build_checker()


ODD = """\
system: {name: odd, platform: qemu-virt, cores: 4, memory: 1G}
hypervisor: {memory: {base: 0x40000000, size: 32M}}
schedule:
  cores: [{core: 0, policy: cyclic}, {core: 1, policy: fixed_priority}, {core: 2, policy: edf},
          {core: 3, policy: fixed_priority}]
  plans:
    - name: p
      major_frame: 1ms
      slots: [{core: 0, start: 0us, duration: 500us, vcpu: src}]
partitions:
  - {name: src, id: 0, image: app.elf, vcpus: [{core: 0}],
     memory: [{phys: 0x42000000, guest: 0x40000000, size: 2M, rights: rwx}]}
  - {name: d1, id: 1, image: app.elf,
     vcpus: [{core: 1, priority: 2}, {best_effort: true, cores: [2, 0]}, {core: 3, priority: 1}],
     memory: [{phys: 0x42200000, guest: 0x40000000, size: 2M, rights: rwx}]}
  - {name: d2, id: 2, image: app.elf, vcpus: [{core: 2, period: 1ms, budget: 100us},
                                            {best_effort: true, cores: [3, 1]}],
     memory: [{phys: 0x42400000, guest: 0x40000000, size: 2M, rights: rwx}]}
channels:
  sampling:
    - {name: all, source: src.out, destinations: [d1.in, d1.in2, d2.in, src.back], max_message_size: 3000,
       refresh_period: 1ms}
    - {name: one, source: d1.out, destinations: [d2.in3], max_message_size: 8, refresh_period: 1ms}
    - {name: self, source: d2.out, destinations: [d2.in4], max_message_size: 100, refresh_period: 1ms}
    - {name: edf, source: d1.out2, destinations: [src.in5], max_message_size: 1, refresh_period: 1ms}
"""


def test_port_cores_of_every_vcpu_form_boot(checker, workdir):
    (workdir / "odd.yaml").write_text(ODD)
    system, errors = config.check(workdir / "odd.yaml")
    assert errors == [], errors[0].format("odd.yaml")
    counted = {c.name: c.port_cores for c in system.channels.channels}
    assert counted == {"all": 4, "one": 4, "self": 3, "edf": 4}
    result = boot(system, "odd.yaml", workdir / "out")
    assert result.ok, result.output
    system.channels.channels[0].port_cores -= 1  # one copy short, as a miscount would leave it
    result = boot(system, "odd.yaml", workdir / "out2")
    assert result.status == 1 and "check failed" in result.output, result.output
