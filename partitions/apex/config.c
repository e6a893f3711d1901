/* libapex configuration: the partition's `apex:` key of the system description.
 *
 * `bulkhead build` finds the symbol apex_config in the partition's image and writes the
 * declared limits, partition period (with where its first window starts in the major frame and
 * its window time), process list and partition-level errors over these defaults (declared 0: the
 * library's own limits, no period, no list). apex_init copies the limits into apex_k.limits, so
 * a create call beyond what the description declares is INVALID_CONFIG (docs/apex.md).
 */
#include "kernel.h"

static const unsigned library_limits[APEX_LIMIT_COUNT] = {
	APEX_MAX_PROCESSES, APEX_STACK_POOL_SIZE, APEX_MAX_SEMAPHORES, APEX_MAX_EVENTS,
	APEX_MAX_BUFFERS, APEX_MAX_BLACKBOARDS, APEX_MAX_PORTS, APEX_MESSAGE_POOL_SIZE,
};

/* In .data (a loaded segment with file contents) so that the tool can patch its bytes. */
struct apex_config apex_config __attribute__((section(".data.apex_config"), used)) = {
	.magic = APEX_CONFIG_MAGIC,
	.version = APEX_CONFIG_VERSION,
	.partition_period = INFINITE_TIME_VALUE,
};

/* A table the tool did not write whole (another version, a damaged image) declares nothing. */
static int config_declared(void)
{
	return apex_config.magic == APEX_CONFIG_MAGIC && apex_config.version == APEX_CONFIG_VERSION &&
	       apex_config.declared == 1 && apex_config.process_count <= APEX_MAX_PROCESSES;
}

void apex_config_load(void)
{
	int declared = config_declared();
	RETURN_CODE_TYPE rc;

	for (unsigned i = 0; i < APEX_LIMIT_COUNT; i++) {
		unsigned want = declared ? apex_config.limits[i] : library_limits[i];

		apex_k.limits[i] = want < library_limits[i] ? want : library_limits[i];
	}
	apex_k.duration = declared ? apex_config.duration : INFINITE_TIME_VALUE;
	apex_k.period_start = declared ? apex_config.period_start : 0;
	if (declared && apex_config.partition_period > 0)
		apex_set_partition_period(apex_config.partition_period, &rc);
}

int apex_config_partition_level(ERROR_CODE_TYPE code)
{
	return config_declared() && (unsigned)code < 32 && (apex_config.partition_errors >> code & 1);
}

unsigned int apex_limit(enum apex_limit which)
{
	return which < APEX_LIMIT_COUNT ? apex_k.limits[which] : 0;
}

/* The description's entry for the process called name, if it declares a list with one. */
static const struct apex_config_process *listed(const char *name)
{
	unsigned n = config_declared() ? apex_config.process_count : 0;

	for (unsigned i = 0; i < n; i++)
		if (apex_name_eq(apex_config.process_list[i].name, name))
			return &apex_config.process_list[i];
	return 0;
}

int apex_config_allows_process(const PROCESS_ATTRIBUTE_TYPE *a)
{
	const struct apex_config_process *p = listed(a->NAME);

	if (!p)
		return !config_declared() || apex_config.process_count == 0;
	return p->period == a->PERIOD && p->time_capacity == a->TIME_CAPACITY &&
	       p->priority == (unsigned)a->BASE_PRIORITY && p->deadline == (unsigned)a->DEADLINE;
}

int apex_config_core(const char *name)
{
	const struct apex_config_process *p = listed(name);

	return p ? (int)p->core : -1;
}
