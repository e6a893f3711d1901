/* Interrupts injected from one core into a vCPU pinned to another (an emulated GIC's SGIs and
 * GICD_ISPENDR, from a board partition's other vCPU): the other core is interrupted only when
 * the injection can change what it does -- its running vCPU's list registers, or a waiting vCPU
 * woken. Otherwise a guest writing ICC_SGI1R_EL1 in a loop at its own vCPU, halted or outside
 * its slot, interrupted another partition's slot on that core once per write (a board guest doing
 * so beside a victim, measured once with a kick counter: about 40000 kicks a second under TCG; on
 * hardware, as fast as the core could take them). */
#include "arch/fake.h"
#include "fixture.h"
#include "partition.h"
#include "percpu.h"
#include "unit.h"
#include "virq.h"

#define STORM 100u
#define SGI 1u

static struct vcpu *beta(unsigned j) { return &partitions[1].vcpus[j]; }

static void storm(struct vcpu *t)
{
	for (unsigned i = 0; i < STORM; i++)
		virq_inject(t, SGI, false);
}

TEST(sgis_to_a_halted_vcpu_on_another_core_kick_nobody)
{
	fixture_boot();
	fixture_run(1, beta(0)); /* beta.0 writes ICC_SGI1R_EL1 on core 1 */
	EXPECT_EQ(beta(1)->state, VCPU_HALTED);
	unsigned kicks = fake.kicks[2];
	storm(beta(1));
	EXPECT_EQ(fake.kicks[2], kicks);
	EXPECT(virq_is_pending(beta(1), SGI));
}

TEST(sgis_to_a_ready_vcpu_another_core_does_not_run_kick_nobody)
{
	fixture_boot();
	fixture_run(1, beta(0));
	beta(1)->state = VCPU_READY;
	percpu[2].vcpu = &partitions[0].vcpus[0]; /* core 2 runs someone else: beta.1 is out of its slot */
	unsigned kicks = fake.kicks[2];
	storm(beta(1));
	EXPECT_EQ(fake.kicks[2], kicks);
	EXPECT(virq_is_pending(beta(1), SGI)); /* its list registers get it when it is switched in */
}

TEST(an_sgi_to_a_vcpu_running_on_another_core_kicks_it)
{
	fixture_boot();
	fixture_run(1, beta(0));
	beta(1)->state = VCPU_READY;
	percpu[2].vcpu = beta(1);
	unsigned kicks = fake.kicks[2];
	virq_inject(beta(1), SGI, false);
	EXPECT_EQ(fake.kicks[2], kicks + 1); /* into its list registers now */
}

TEST(an_sgi_to_a_waiting_vcpu_on_another_core_wakes_it)
{
	fixture_boot();
	fixture_run(1, beta(0));
	beta(1)->state = VCPU_IDLE;
	percpu[2].vcpu = NULL;
	unsigned kicks = fake.kicks[2];
	virq_inject(beta(1), SGI, false);
	EXPECT_EQ(beta(1)->state, VCPU_READY);
	EXPECT(fake.kicks[2] > kicks);
}

/* A vCPU running on another core whose timer fires within one lead: the decision that timer
 * brings (the lead of the core's next instant) flushes the interrupt into its list registers,
 * and a kick handled just before would run into it (tests/system/test_chanwait.py: a port
 * interrupt raised by receives on other cores made the victim beside the vCPU late). Further
 * off, or with the timer fired already, the kick goes as before. */
TEST(an_interrupt_for_a_vcpu_running_on_a_core_whose_timer_is_within_a_lead_kicks_nobody)
{
	fixture_boot();
	fixture_run(1, beta(0));
	beta(1)->state = VCPU_READY;
	percpu[2].vcpu = beta(1);
	struct sched_core *s = &percpu[2].sched;
	uint64_t timer_was = s->timer_at;
	unsigned kicks = fake.kicks[2];
	s->timer_at = fake.counter + s->lead / 2;
	virq_inject(beta(1), SGI, false);
	EXPECT_EQ(fake.kicks[2], kicks);
	EXPECT(virq_is_pending(beta(1), SGI));
	EXPECT_EQ(percpu[2].requests, 1u); /* the timer's decision looks */
	s->timer_at = fake.counter + 2 * s->lead + 10;
	virq_inject(beta(1), SGI + 1, false);
	EXPECT_EQ(fake.kicks[2], kicks + 1);
	s->timer_at = 0; /* fired, its decision maybe over */
	virq_inject(beta(1), SGI + 2, false);
	EXPECT_EQ(fake.kicks[2], kicks + 2);
	s->timer_at = timer_was;
}
