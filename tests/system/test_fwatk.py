"""Adversarial review of firmware partitions (fwatk branch): odd CFI command sequences and accesses a
hostile or careless firmware sends to its emulated flash (hypervisor/arch/aarch64/vflash.c)."""

from harness import BUILD, run_system
from test_firmware import bare_probe, probe_lines

# What flashseq's odd buffered programs leave in a partition: each broken, the bank back in read
# array, nothing programmed (QEMU 7.2 stores the data words wherever they are written, and after a
# count beyond its buffer takes every later write as data).
BROKEN_BUFFERS = [
    "buffer setup 0x00000000 0x00800080", "buffer count read 0x00000000 0x00800080",
    "buffer data read 0x00000000 0xffffffff", "buffer confirm 0x00000000 0x00800080",
    "buffer word 0 0xffffffff 0xffffffff", "buffer data 0xffffffff 0xffffffff",
] * 2 + [
    "buffer setup 0x00000000 0x00800080", "buffer count read 0x00000000 0x00800080",
    "buffer data read 0x00000000 0x00800080", "buffer confirm 0x00000000 0x00800080",
    "buffer word 0 0xffffffff 0xffffffff", "buffer data 0xffffffff 0xffffffff",
] + [
    "buffer setup 0x00000000 0x00800080", "buffer count read 0x00000000 0x00800080",
    "buffer data read 0x00000000 0x00800080", "buffer confirm 0x00000000 0xffffffff",
    "buffer word 0 0xffffffff 0xffffffff", "buffer data 0xffffffff 0xffffffff",
] * 2 + [
    "buffer setup 0x00000000 0x00800080", "buffer count read 0x00000000 0xffffffff",
    "buffer data read 0x00000000 0xffffffff", "buffer confirm 0x00000000 0x00800080",
    "buffer word 0 0xffffffff 0xffffffff", "buffer data 0xffffffff 0xffffffff",
]


def test_odd_command_sequences_answer_as_qemu():
    """flashseq (partitions/board/flashseq): word programs and commands of every width, identifier
    and query reads of every width and lane and beyond the table, lock bits, commands instead of a
    program's data or an erase's confirm. An identifier, query or status read of one byte at lane 1
    or 3 read 0 (the answer shifted by its lane; QEMU answers whatever the lane), an 8-byte read the
    same code twice (QEMU: two bus words, the next code above), and an 8-byte store was one command
    or one 8-byte program (QEMU: two bus writes, the low word first)."""
    bare = bare_probe(BUILD / "board" / "flashseq.fd", "flashseq")
    cut = bare.index("flashseq: buffers")
    (BUILD / "systest" / "firmware_seq" / "vars.fd").unlink(missing_ok=True)
    run = run_system("firmware_seq.yaml", timeout=60, until=lambda r: r.index(r"^\[seq\] flashseq: done") >= 0)
    got = probe_lines(run.lines, "flashseq", "[seq] ")
    assert run.index(r"HM: partition") < 0
    assert got[:cut] == bare[:cut], "\n".join(f"{a!r} | {b!r}" for a, b in zip(got, bare) if a != b)
    assert got[cut + 1:] == [f"flashseq: {line}" for line in BROKEN_BUFFERS] + ["flashseq: done"], got[cut:]


def test_load_pairs_from_the_flash_read_as_qemu():
    """flashpair (partitions/board/flashpair): load pairs (LDP, LDPSW: what memcpy and edk2's
    CopyMem read with) and single loads with writeback (a checksum loop's) from the erased part of
    bank 1 beyond the variables image, and from a bank in read-status mode: where the bank traps,
    such a load has no syndrome; it was a memory_violation and the partition was halted (QEMU's
    -bios reads 0xffffffff and the status)."""
    bare = bare_probe(BUILD / "board" / "flashpair.fd", "flashpair")
    assert bare[-1] == "flashpair: done", bare
    run = run_system("firmware_pair.yaml", timeout=60, until=lambda r: r.index(r"flashpair: done|halted") >= 0)
    got = probe_lines(run.lines, "flashpair", "[pair] ")
    assert run.index(r"HM: partition") < 0, "\n".join(run.lines[-5:])
    assert got == bare, "\n".join(f"{a!r} | {b!r}" for a, b in zip(got, bare) if a != b)


def test_code_and_loads_from_a_bank_still_busy_run_as_under_qemu():
    """flashxip (partitions/board/flashxip) programs code into bank 1, sends read array without
    polling and calls it, then does the same with data read by loads with writeback (no syndrome):
    QEMU's flash is never busy, so both work; in a partition the bank was still busy, unmapped, and
    the fetch or load a memory_violation that halted the firmware. Now they wait a step at a time
    (each fault one step of the program) and then run."""
    bare = bare_probe(BUILD / "board" / "flashxip.fd", "flashxip")
    assert bare[-1] == "flashxip: done" and "flashxip: code returned 0x0000002a" in bare, bare
    run = run_system("firmware_xip.yaml", timeout=60, until=lambda r: r.index(r"flashxip: done|halted") >= 0)
    assert run.index(r"HM: partition") < 0, "\n".join(run.lines[-5:])
    assert probe_lines(run.lines, "flashxip", "[xip] ") == bare
