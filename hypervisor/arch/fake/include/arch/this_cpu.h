/* The fake architecture's current core is chosen by the test (fake.core). */
#ifndef FAKE_THIS_CPU_H
#define FAKE_THIS_CPU_H

struct percpu;
struct percpu *arch_this_cpu(void);

#endif
