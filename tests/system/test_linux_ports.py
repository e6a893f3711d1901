"""Ports, shared memory and doorbells between Linux user space and a real-time partition (issue 5):
`bhport` (linux/bhport) in the Debian Linux partition, linuxpeer on core 1."""

from __future__ import annotations

import re

from harness import Console
from test_linux_guests import boot, shell


def test_linux_user_space_exchanges_messages_with_a_real_time_partition():
    with Console.boot("linux_ports.yaml") as con:
        boot(con)
        # A port notifies only once it is open: the first recv opens it (and finds it empty).
        assert shell(con, "bhport recv reply; echo rc=$?").strip() == "rc=2"
        # Queuing both ways: Linux sends a command, the peer answers on another channel; the
        # background waiter, armed before the send, wakes on the event GPIO's port line.
        out = shell(con, "(bhport wait port 5000 && echo WOKE) & sleep 0.5; bhport send cmd hello; "
                         "wait; bhport recv reply")
        assert out.splitlines()[:2] == ["WOKE", "ack hello"], out

        # Sampling: the peer's latest value, valid (younger than the 100 ms refresh period),
        # and it moves on.
        first = shell(con, "bhport read sensor")
        m = re.fullmatch(r"valid: temp=(\d+)\n", first)
        assert m, first
        later = re.fullmatch(r"valid: temp=(\d+)\n", shell(con, "sleep 0.3; bhport read sensor"))
        assert later and int(later[1]) > int(m[1])

        # Shared memory with doorbells both ways: Linux writes, rings; the peer reads what Linux
        # wrote, writes its answer into the region and rings back.
        out = shell(con, "bhport poke shared 0 ping1234; (bhport wait doorbell 5000 && echo RUNG) & "
                         "sleep 0.5; bhport ring shared; wait; bhport peek shared 64 13")
        assert out.splitlines()[:2] == ["RUNG", "seen:ping1234"], out
        assert "address 0x70000000, size 4096, rights rw, doorbell yes" in shell(con, "bhport shm shared")

        # Only declared endpoints: a port or region Linux is not given does not open.
        assert "INVALID_CONFIG" in shell(con, "bhport read sensor_of_someone_else 2>&1")
        assert "INVALID_CONFIG" in shell(con, "bhport shm not_ours 2>&1")
        # And the wrong direction is refused: Linux is the source of cmd, not a reader.
        assert "rc=1" in shell(con, "bhport recv cmd 2>/dev/null; echo rc=$?")
        assert not re.search(r"HM: partition", con.text)
