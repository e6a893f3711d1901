/* A PL011 per unmodified guest. Transmit goes to the shared console at once (the transmit FIFO
 * is always empty); receive takes bytes from the console while the partition has input focus.
 * The interrupt line is (RIS & IMSC) != 0, and every event that can raise it makes the SPI
 * pending again: a spare interrupt is harmless (the driver reads MIS), a lost one is not. */
#include "arch/vmachine.h"
#include "console.h"
#include "partition.h"
#include "percpu.h"

#define UART_DR 0x000
#define UART_RSR 0x004
#define UART_FR 0x018
#define UART_IBRD 0x024
#define UART_FBRD 0x028
#define UART_LCR_H 0x02c
#define UART_CR 0x030
#define UART_IFLS 0x034
#define UART_IMSC 0x038
#define UART_RIS 0x03c
#define UART_MIS 0x040
#define UART_ICR 0x044
#define UART_DMACR 0x048
#define UART_ID 0xfe0

#define FR_RXFE (1u << 4)
#define FR_RXFF (1u << 6)
#define FR_TXFE (1u << 7)
#define INT_RX (1u << 4)
#define INT_TX (1u << 5)
#define INT_RT (1u << 6)

/* The PL011's reset values (its TRM, and QEMU's model): transmit and receive enabled, the FIFO
 * levels at half full. A guest that reads them before writing them (to keep its bits) sees the
 * machine QEMU's virt board presents; they read 0 before. */
#define CR_RESET 0x300u
#define IFLS_RESET 0x12u

/* PrimeCell identification of an r1p5 PL011, as the AMBA bus probes it. */
static const uint8_t pl011_id[8] = { 0x11, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

static uint32_t raw_status(const struct vuart *u)
{
	return (u->rx_count ? INT_RX | INT_RT : 0) | (u->tx_raised ? INT_TX : 0);
}

static void update_line(struct partition *p, struct vuart *u)
{
	if (raw_status(u) & u->imsc)
		vgic_raise_spi(p, p->cfg->vmachine->uart_intid);
}

static uint32_t rx_pop(struct vuart *u)
{
	if (!u->rx_count)
		return 0;
	uint32_t c = u->rx[u->rx_head];
	u->rx_head = (u->rx_head + 1) % VUART_RX_SIZE;
	u->rx_count--;
	return c;
}

static uint32_t read_reg(struct vuart *u, uint64_t off)
{
	switch (off) {
	case UART_DR: return rx_pop(u);
	case UART_FR:
		return FR_TXFE | (u->rx_count ? 0 : FR_RXFE) |
		       (u->rx_count == VUART_RX_SIZE ? FR_RXFF : 0);
	case UART_IBRD: return u->ibrd;
	case UART_FBRD: return u->fbrd;
	case UART_LCR_H: return u->lcr_h;
	case UART_CR: return u->cr;
	case UART_IFLS: return u->ifls;
	case UART_IMSC: return u->imsc;
	case UART_RIS: return raw_status(u);
	case UART_MIS: return raw_status(u) & u->imsc;
	case UART_DMACR: return u->dmacr; /* kept, though there is no DMA */
	}
	if (off >= UART_ID && off < UART_ID + 32)
		return pl011_id[(off - UART_ID) / 4];
	return 0; /* RSR and reserved space */
}

/* False: a data byte the console refused (its ring full), nothing changed. */
static bool write_reg(struct partition *p, struct vuart *u, uint64_t off, uint32_t val)
{
	switch (off) {
	case UART_DR:
		if (!console_vuart_write(p, (char)val))
			return false;
		u->tx_raised = 1;
		break;
	case UART_IBRD: u->ibrd = val & 0xffff; break;
	case UART_FBRD: u->fbrd = val & 0x3f; break;
	case UART_LCR_H: u->lcr_h = val & 0xff; break;
	case UART_CR: u->cr = val & 0xffff; break;
	case UART_IFLS: u->ifls = val & 0x3f; break;
	case UART_IMSC: u->imsc = val & 0x7ff; break;
	case UART_DMACR: u->dmacr = val & 0x7; break;
	case UART_ICR:
		if (val & INT_TX)
			u->tx_raised = 0;
		break;
	}
	return true;
}

/* A data write that changes nothing here: the transmit interrupt is raised already and the
 * line stays low (no unmasked interrupt: a guest writing its console by polling). The byte goes
 * to the console, which has its own lock; the UART's is not needed, as the state it guards
 * stays as it is. A write racing with another vCPU's ICR or IMSC write, or with input, is one
 * of the two orders the lock would give. A byte the console refuses is written again: the
 * transmit FIFO reads empty (FR), so no guest waits for room, and a store that does not
 * complete until there is room loses nothing, whether the guest polls or not. */
enum mmio_result vuart_data_write(struct partition *p, uint64_t val)
{
	struct vuart *u = &vmachine_of_emulated(p)->uart;

	if (!__atomic_load_n(&u->tx_raised, __ATOMIC_RELAXED) ||
	    (raw_status(u) & __atomic_load_n(&u->imsc, __ATOMIC_RELAXED)))
		return MMIO_UNCLAIMED;
	return console_vuart_write(p, (char)val) ? MMIO_DONE : MMIO_AGAIN;
}

/* The partition's vCPUs on other cores may keep the UART's lock busy: a data write with the
 * transmit interrupt unmasked drains the console under it, other partitions' queued lines
 * included, a hold with no small bound. So a trap on a core with an instant of its own waits
 * only until that instant, never in the ticket queue (trap_lock's queue assumes short holds),
 * and the guest makes the access again (MMIO_AGAIN). The price is the partition's own: while its
 * other vCPUs keep the queue busy, the lock is seldom free for the one that gives up
 * (tests/system/test_uartwait.py). */
enum mmio_result vuart_access(struct vcpu *v, uint64_t off, unsigned size, bool write,
			      uint64_t *val)
{
	struct partition *p = v->partition;
	struct vuart *u = &vmachine_of(p)->uart;

	if (size > 4 || (off & 3))
		return MMIO_UNCLAIMED;
	if (write && off == UART_DR) {
		enum mmio_result done = vuart_data_write(p, *val);
		if (done != MMIO_UNCLAIMED)
			return done;
	}
	if (!arch_spin_lock_before(&u->lock, core_give_way_at()))
		return MMIO_AGAIN;
	bool done = true;
	if (write) {
		done = write_reg(p, u, off, (uint32_t)*val);
		if (done)
			update_line(p, u);
	} else {
		*val = read_reg(u, off);
	}
	arch_spin_unlock(&u->lock);
	return done ? MMIO_DONE : MMIO_AGAIN;
}

bool arch_vuart_receive(struct partition *p, char c)
{
	struct vuart *u = &vmachine_of(p)->uart;

	arch_spin_lock(&u->lock);
	bool room = u->rx_count < VUART_RX_SIZE;
	if (room) {
		u->rx[(u->rx_head + u->rx_count) % VUART_RX_SIZE] = (uint8_t)c;
		u->rx_count++;
	}
	update_line(p, u);
	arch_spin_unlock(&u->lock);
	return room;
}

void vuart_reset(struct partition *p)
{
	struct vuart *u = &vmachine_of(p)->uart;

	arch_spin_lock(&u->lock);
	u->imsc = u->tx_raised = u->lcr_h = u->ibrd = u->fbrd = u->dmacr = 0;
	u->cr = CR_RESET;
	u->ifls = IFLS_RESET;
	u->rx_head = u->rx_count = 0;
	arch_spin_unlock(&u->lock);
}
