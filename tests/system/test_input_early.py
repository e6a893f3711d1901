"""A byte typed while the hypervisor boots kills console input for good (atk60).

QEMU's PL011 (7.2, hw/char/pl011.c) holds one received byte while its FIFO is off (LCR_H.FEN
clear: the hypervisor never sets it), raises the receive interrupt only when a byte is put in
(pl011_put_fifo: read_count == read_trigger), and takes no further byte from the host while
that one is unread (pl011_can_receive: read_count < 1). A byte typed before the hypervisor
enables input sits there with RXRIS set; plat_uart_rx_enable (platform/qemu-virt) then writes
UARTICR = RX|RT first, which clears that raw interrupt, and UARTIMSC. No interrupt is pending,
nothing reads the data register except console_receive in the interrupt (irq.c), and QEMU
delivers no further byte: console input, Ctrl-A included, is dead until the machine is reset,
against docs/architecture.md ("the hypervisor reads the UART on, so that Ctrl-A always reaches
it"). A byte typed during boot is ordinary (a key pressed while a Linux image is copied).

The reference test types only after the boot line and the switch is logged; the second types
one byte as QEMU starts, then the same Ctrl-A sequence after the boot line."""

import time

from harness import Console

SWITCH = r"\[bulkhead\] console input goes to second"


def switch_after_boot(early: bytes | None):
    with Console.boot("input_early.yaml") as con:
        if early is not None:
            con.send(early.decode())
        con.expect(r"\[bulkhead\] console input goes to first", timeout=60)
        con.expect(r"\[first\] focus: holding the input", timeout=60)
        con.wait(1.0)
        con.send("\x01\x01\x01")
        try:
            con.expect(SWITCH, timeout=20)
            return True
        except AssertionError:
            return False


def test_ctrl_a_moves_the_focus_when_typed_after_boot():
    assert switch_after_boot(None), "reference: Ctrl-A x3 after boot did not move the focus"


def test_a_byte_typed_during_boot_does_not_kill_console_input():
    assert switch_after_boot(b"x"), (
        "a byte typed while the hypervisor booted left the PL011's receive interrupt cleared "
        "and its one-byte FIFO full: Ctrl-A x3 typed after boot never reached the hypervisor")
