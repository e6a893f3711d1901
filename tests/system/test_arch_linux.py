"""Architecture-level isolation seen from an unmodified Linux partition (Debian's kernel, no
KASLR seed: its linear map starts at 0xffff000000000000 with the RAM base rounded down to
1 GiB): user space must not reach kernel memory through the hypercall page, and the kernel's
firmware conduit (SMC) answers the SMC Calling Convention. One boot for both, to keep the
suite short."""

from __future__ import annotations

import re

from harness import Console
from test_linux_guests import boot, shell

KERNEL_IMAGE_LINEAR = "0xffff000008000000"  # the kernel Image at 0x48000000, as the kernel maps it


def test_user_space_cannot_reach_kernel_memory_and_smccc_answers_on_smc():
    with Console.boot("arch_linux.yaml") as con:
        boot(con)
        # The name of a PORT_INFO call read from kernel memory: the hypervisor must refuse it
        # (INVALID_PARAM), not read it and look the name up (INVALID_CONFIG).
        assert shell(con, f"bhprobe kread {KERNEL_IMAGE_LINEAR}").strip() == "kread rc=INVALID_PARAM"
        # The process's own page: by its own address it works; by the kernel's linear-map alias
        # of the same page neither reading nor writing does.
        out = shell(con, "bhprobe alias cmd")
        assert "own rc=OK" in out, out
        assert re.search(r"^alias 0xffff0000[0-9a-f]{8}$", out, re.M), out
        assert "kernel-name rc=INVALID_PARAM" in out, out
        assert "kernel-buf rc=INVALID_PARAM" in out, out
        assert "written-through-alias no" in out, out
        # Ports still work for user space.
        assert shell(con, "bhport send cmd hi; sleep 0.3; bhport recv reply") == "ack hi\n"

        # PSCI_FEATURES(SMCCC_VERSION) answered, then SMCCC_VERSION itself through SMC. Linux
        # probes more of the convention once it knows 1.1 (SMCCC_ARCH_FEATURES, the vendor
        # hypervisor UID, TRNG): every probe is answered, none is a health event.
        psci = shell(con, "dmesg | grep -i psci")
        assert re.search(r"psci: SMC Calling Convention v1\.1$", psci, re.M), psci
        assert not re.search(r"HM: partition", con.text)
