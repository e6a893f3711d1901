"""A queuing channel's source starves its destination's port calls (partitions/tests/qstarve,
tests/system/configs/chanstarve.yaml). The source sends 4 KiB messages back to back from three
dedicated cores: there core_give_way_at() is TIME_NEVER, so lock_for_call waits for the
channel's lock in the ticket queue. The destination polls with plain receives from a cyclic
core, whose timer is always set: lock_for_call there takes the lock only when it is free
(arch_spin_lock_before: no ticket) and otherwise gives the call up at the core's timer and has
it made again. With the three senders in the queue (each back in it before the next owner lets
go) the lock is never free, so the destination's non-blocking receive never completes while the
source wishes: its vCPU is held in the HVC for the whole storm. In the ticket queue (before
b7ad02e) it waited for at most the three senders' copies ahead of it.

Found by session 31's attack review (helper-57). Observed before the fix (-icount,
deterministic): alone 23595 calls, longest 63 ticks; in the storm one call, 562779 ticks (from
1312515, the window's start, to 1875294, the storm's end), the destination's core running on
time meanwhile. Now a trap takes such a lock in the ticket queue when its core's instant is
further than a full queue of the longest holds (percpu.h trap_lock), so the call made again
after the core's decision is served in the queue's order: 893 calls in the storm, the longest
1359 ticks. Every message carries its sender and its number: the calls given up and made again
took each once, in each sender's order, and the destination, emptying the queue after the storm,
counts as many as each sender's successful sends."""

import re

from harness import run_system

LINE = re.compile(r"^\[qdst\] qstarve: (alone|storm) calls (\d+) longest (\d+)$")
RECEIVED = re.compile(r"^\[qdst\] qstarve: received (\d+) (\d+) (\d+) errors (\d+)$")
SENT = re.compile(r"^\[qsrc\] qstarve: source sends (\d+) (\d+) (\d+)$")
# Three 4 KiB copies from odd addresses ahead in the ticket queue: about 3 x 209 ticks. A call
# that waits 20 times that has not been served in the queue's order.
BOUND_TICKS = 12500  # 200 us


def test_a_channel_peer_cannot_keep_a_plain_receive_from_returning():
    run = run_system("chanstarve.yaml", icount=True, timeout=240,
                     until=lambda r: r.index(r"\[qdst\] qstarve: destination done") >= 0 and
                     r.index(r"\[qsrc\] qstarve: source sends") >= 0)
    windows = {m[1]: (int(m[2]), int(m[3])) for m in filter(None, map(LINE.match, run.lines))}
    print("\n".join(l for l in run.lines if "qstarve" in l))
    assert set(windows) == {"alone", "storm"}, run.log[-3000:]
    calls, longest = windows["storm"]
    assert longest <= BOUND_TICKS, \
        f"a plain receive took {longest} ticks beside the source's storm ({calls} calls)"
    # The calls given up and made again took each message once, in each sender's order.
    received = [m for m in map(RECEIVED.match, run.lines) if m]
    sent = [m for m in map(SENT.match, run.lines) if m]
    assert len(received) == 1 and len(sent) == 1, run.log[-3000:]
    assert int(received[0][4]) == 0, f"messages out of order, missing or twice: {received[0][0]}"
    assert received[0].groups()[:3] == sent[0].groups(), (received[0][0], sent[0][0])
