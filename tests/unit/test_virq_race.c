/* A start drops what the halted vCPU was sent when it is posted (partition.c vcpu_start,
 * virq_drop_pending), on the poster's core. The vCPU may still run on its own core then: a stop
 * posted and not served yet shows it halted (a sibling's BH_VCPU_HALT, then BH_VCPU_START at
 * once), and its core may be taking its pending interrupts into its list registers
 * (arch_vgic_flush, virq_take) at that moment. Each pending interrupt must go to exactly one of
 * the two, and be counted down once: two host threads play the two cores, round after round,
 * one pending forwarded device interrupt each round. */
#include <pthread.h>
#include <string.h>
#include "arch/fake.h"
#include "partition.h"
#include "unit.h"
#include "virq.h"

#define ROUNDS 200000u
#define SPI 40u

static struct vcpu racer;
static unsigned round_go, round_done; /* the round the taker may start / has finished */
static unsigned taken_rounds;

static void *taker(void *arg)
{
	(void)arg;
	for (unsigned r = 1; r <= ROUNDS; r++) {
		while (__atomic_load_n(&round_go, __ATOMIC_ACQUIRE) != r)
			;
		bool forwarded = false;
		int intid = virq_take(&racer, &forwarded);
		if (intid == (int)SPI) /* into a list register (as a forwarded one or not) */
			taken_rounds++;
		__atomic_store_n(&round_done, r, __ATOMIC_RELEASE);
	}
	return NULL;
}

TEST(a_start_dropping_interrupts_races_with_their_take_and_counts_each_once)
{
	pthread_t t;
	unsigned both = 0, lost = 0, bad_count = 0;

	memset(&racer, 0, sizeof(racer));
	memset(fake.irq_released, 0, sizeof(fake.irq_released));
	round_go = round_done = taken_rounds = 0;
	pthread_create(&t, NULL, taker, NULL);
	for (unsigned r = 1; r <= ROUNDS; r++) {
		virq_put_back(&racer, SPI, true); /* a device interrupt forwarded to it, pending */
		unsigned released = fake.irq_released[SPI], taken = taken_rounds;
		__atomic_store_n(&round_go, r, __ATOMIC_RELEASE);
		for (volatile unsigned d = r % 1999; d; d--) /* offsets swept across the take */
			;
		virq_drop_pending(&racer); /* the start, posted from another core */
		while (__atomic_load_n(&round_done, __ATOMIC_ACQUIRE) != r)
			;
		unsigned by_drop = fake.irq_released[SPI] - released, by_take = taken_rounds - taken;
		if (by_drop + by_take > 1)
			both++;
		else if (by_drop + by_take == 0)
			lost++;
		if (racer.virq.count != 0) {
			bad_count++;
			racer.virq.count = 0;
		}
		racer.virq.pending[SPI / 32] = racer.virq.forwarded[SPI / 32] = 0;
	}
	pthread_join(t, NULL);
	printf("    taker won %u rounds\n", taken_rounds);
	printf("    %u rounds: taken by both %u, by neither %u, count left wrong %u\n", ROUNDS, both,
	       lost, bad_count);
	EXPECT_EQ(both, 0);
	EXPECT_EQ(lost, 0);
	EXPECT_EQ(bad_count, 0);
}
