/* libapex: the ARINC 653 Part 1 application executive (APEX) as a library kernel linked into a
 * paravirtual Bulkhead partition (docs/apex.md).
 *
 * UPPERCASE names are the ARINC 653 C binding: its types, constants, return codes and services,
 * each service returning its RETURN_CODE_TYPE through the last argument. Lowercase apex_ names
 * are Bulkhead's own additions (start-up, counters, limits) and say so.
 *
 * Each vCPU of the partition (an ARINC 653 core) runs the processes bound to it, vCPU 0 by
 * default: preemptive fixed priority, FIFO among equal priorities.
 * Processes run at EL1 with the general-purpose registers only: partitions are built with
 * -mgeneral-regs-only and a context switch saves no FP/SIMD state, so a process must not use
 * FP/SIMD registers.
 */
#ifndef APEX_APEX_H
#define APEX_APEX_H

#include "bulkhead/bulkhead.h"

/* ---------------------------------------------------------------------------------------
 * Limits, fixed when libapex.a is built (docs/apex.md, "Limits").
 * --------------------------------------------------------------------------------------- */
#define APEX_MAX_PROCESSES    32          /* processes a partition may create */
#define APEX_MAX_CORES        4           /* the vCPUs (cores) APEX runs on: 0 .. 3 */
#define APEX_STACK_POOL_SIZE  (192 * 1024) /* bytes of stacks and canary zones (guard pages apart) */
#define APEX_MIN_STACK_SIZE   1024        /* smallest STACK_SIZE accepted */
#define APEX_STACK_GUARD_SIZE 512         /* canary zone below each stack (not part of STACK_SIZE) */
#define APEX_MAX_SEMAPHORES   16
#define APEX_MAX_EVENTS       16
#define APEX_MAX_PORTS        16          /* sampling and queuing ports together */
#define APEX_MAX_BUFFERS      16
#define APEX_MAX_BLACKBOARDS  16
#define APEX_MESSAGE_POOL_SIZE (32 * 1024) /* bytes shared by buffer and blackboard messages */

/* ---------------------------------------------------------------------------------------
 * Base types and return codes.
 * --------------------------------------------------------------------------------------- */
typedef unsigned char APEX_BYTE;
typedef int APEX_INTEGER;
typedef unsigned int APEX_UNSIGNED;
typedef long long APEX_LONG_INTEGER;

typedef enum {
	NO_ERROR = 0,       /* request valid and operation performed */
	NO_ACTION = 1,      /* system's operational status unaffected by the request */
	NOT_AVAILABLE = 2,  /* the request cannot be performed immediately */
	INVALID_PARAM = 3,  /* a parameter is invalid */
	INVALID_CONFIG = 4, /* a parameter is incompatible with the configuration */
	INVALID_MODE = 5,   /* the request is incompatible with the current mode */
	TIMED_OUT = 6       /* the time-out of the request expired */
} RETURN_CODE_TYPE;

#define MAX_NAME_LENGTH 30
typedef char NAME_TYPE[MAX_NAME_LENGTH];   /* NUL-terminated if shorter than 30 */
/* Services take names as `const char *` (a NAME_TYPE or a string literal): at most
 * MAX_NAME_LENGTH characters are read, fewer when a NUL comes first. */
typedef void (*SYSTEM_ADDRESS_TYPE)(void);
typedef APEX_BYTE *MESSAGE_ADDR_TYPE;
typedef APEX_INTEGER MESSAGE_SIZE_TYPE;
typedef APEX_INTEGER MESSAGE_RANGE_TYPE;
typedef APEX_INTEGER WAITING_RANGE_TYPE;

typedef enum { SOURCE = 0, DESTINATION = 1 } PORT_DIRECTION_TYPE;
typedef enum { FIFO = 0, PRIORITY = 1 } QUEUING_DISCIPLINE_TYPE;

/* ---------------------------------------------------------------------------------------
 * Time: nanoseconds of the system counter (the same clock in every partition).
 * --------------------------------------------------------------------------------------- */
typedef APEX_LONG_INTEGER SYSTEM_TIME_TYPE;
#define INFINITE_TIME_VALUE ((SYSTEM_TIME_TYPE)-1)

void GET_TIME(SYSTEM_TIME_TYPE *SYSTEM_TIME, RETURN_CODE_TYPE *RETURN_CODE);
void TIMED_WAIT(SYSTEM_TIME_TYPE DELAY_TIME, RETURN_CODE_TYPE *RETURN_CODE);
void PERIODIC_WAIT(RETURN_CODE_TYPE *RETURN_CODE);
void REPLENISH(SYSTEM_TIME_TYPE BUDGET_TIME, RETURN_CODE_TYPE *RETURN_CODE);

/* ---------------------------------------------------------------------------------------
 * Partition.
 * --------------------------------------------------------------------------------------- */
typedef enum { IDLE = 0, COLD_START = 1, WARM_START = 2, NORMAL = 3 } OPERATING_MODE_TYPE;
typedef enum {
	NORMAL_START = 0,
	PARTITION_RESTART = 1,
	HM_MODULE_RESTART = 2,
	HM_PARTITION_RESTART = 3
} START_CONDITION_TYPE;
typedef APEX_INTEGER PARTITION_ID_TYPE;
typedef APEX_INTEGER LOCK_LEVEL_TYPE;
typedef APEX_UNSIGNED NUM_CORES_TYPE;
#define MIN_LOCK_LEVEL 0
#define MAX_LOCK_LEVEL 16

typedef struct {
	SYSTEM_TIME_TYPE PERIOD;      /* apex_set_partition_period, else INFINITE_TIME_VALUE */
	SYSTEM_TIME_TYPE DURATION;    /* INFINITE_TIME_VALUE: not known to the partition yet */
	PARTITION_ID_TYPE IDENTIFIER; /* the partition's id in the system description */
	LOCK_LEVEL_TYPE LOCK_LEVEL;
	OPERATING_MODE_TYPE OPERATING_MODE;
	START_CONDITION_TYPE START_CONDITION;
	NUM_CORES_TYPE NUM_ASSIGNED_CORES;
} PARTITION_STATUS_TYPE;

void GET_PARTITION_STATUS(PARTITION_STATUS_TYPE *PARTITION_STATUS, RETURN_CODE_TYPE *RETURN_CODE);
/* NORMAL from the initialization does not return: the caller becomes the idle loop. */
void SET_PARTITION_MODE(OPERATING_MODE_TYPE OPERATING_MODE, RETURN_CODE_TYPE *RETURN_CODE);

/* ---------------------------------------------------------------------------------------
 * Processes.
 * --------------------------------------------------------------------------------------- */
typedef NAME_TYPE PROCESS_NAME_TYPE;
typedef APEX_INTEGER PROCESS_ID_TYPE;      /* 1..APEX_MAX_PROCESSES */
typedef APEX_INTEGER PRIORITY_TYPE;
typedef APEX_UNSIGNED STACK_SIZE_TYPE;
#define NULL_PROCESS_ID 0
#define MIN_PRIORITY_VALUE 1
#define MAX_PRIORITY_VALUE 239

typedef enum { DORMANT = 0, READY = 1, RUNNING = 2, WAITING = 3, FAULTED = 4 } PROCESS_STATE_TYPE;
typedef enum { SOFT = 0, HARD = 1 } DEADLINE_TYPE;

typedef struct {
	SYSTEM_TIME_TYPE PERIOD;          /* INFINITE_TIME_VALUE: aperiodic */
	SYSTEM_TIME_TYPE TIME_CAPACITY;   /* INFINITE_TIME_VALUE: no deadline */
	SYSTEM_ADDRESS_TYPE ENTRY_POINT;
	STACK_SIZE_TYPE STACK_SIZE;
	PRIORITY_TYPE BASE_PRIORITY;
	DEADLINE_TYPE DEADLINE;
	PROCESS_NAME_TYPE NAME;
} PROCESS_ATTRIBUTE_TYPE;

/* A core is one of the partition's vCPUs, by index: 0 .. NUM_ASSIGNED_CORES - 1. */
typedef APEX_INTEGER PROCESSOR_CORE_ID_TYPE;

typedef struct {
	SYSTEM_TIME_TYPE DEADLINE_TIME;   /* INFINITE_TIME_VALUE: none; undefined while DORMANT */
	PRIORITY_TYPE CURRENT_PRIORITY;
	PROCESS_STATE_TYPE PROCESS_STATE;
	PROCESS_ATTRIBUTE_TYPE ATTRIBUTES;
	PROCESSOR_CORE_ID_TYPE PROCESSOR_CORE_ID; /* its core affinity (Bulkhead: always one core) */
} PROCESS_STATUS_TYPE;

void CREATE_PROCESS(PROCESS_ATTRIBUTE_TYPE *ATTRIBUTES, PROCESS_ID_TYPE *PROCESS_ID,
		    RETURN_CODE_TYPE *RETURN_CODE);
void SET_PRIORITY(PROCESS_ID_TYPE PROCESS_ID, PRIORITY_TYPE PRIORITY,
		  RETURN_CODE_TYPE *RETURN_CODE);
void SUSPEND_SELF(SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
void SUSPEND(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
void RESUME(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
void STOP_SELF(void);
void STOP(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
void START(PROCESS_ID_TYPE PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
void DELAYED_START(PROCESS_ID_TYPE PROCESS_ID, SYSTEM_TIME_TYPE DELAY_TIME,
		   RETURN_CODE_TYPE *RETURN_CODE);
void LOCK_PREEMPTION(LOCK_LEVEL_TYPE *LOCK_LEVEL, RETURN_CODE_TYPE *RETURN_CODE);
void UNLOCK_PREEMPTION(LOCK_LEVEL_TYPE *LOCK_LEVEL, RETURN_CODE_TYPE *RETURN_CODE);
void GET_MY_ID(PROCESS_ID_TYPE *PROCESS_ID, RETURN_CODE_TYPE *RETURN_CODE);
void GET_PROCESS_ID(const char *PROCESS_NAME, PROCESS_ID_TYPE *PROCESS_ID,
		    RETURN_CODE_TYPE *RETURN_CODE);
void GET_PROCESS_STATUS(PROCESS_ID_TYPE PROCESS_ID, PROCESS_STATUS_TYPE *PROCESS_STATUS,
			RETURN_CODE_TYPE *RETURN_CODE);
/* Multicore (ARINC 653 Part 1 Supplement 4): during initialization only, binds a process to one
 * of the partition's cores (default: core 0, the initialization's). */
void INITIALIZE_PROCESS_CORE_AFFINITY(PROCESS_ID_TYPE PROCESS_ID,
				      PROCESSOR_CORE_ID_TYPE PROCESSOR_CORE_ID,
				      RETURN_CODE_TYPE *RETURN_CODE);
void GET_MY_PROCESSOR_CORE_ID(PROCESSOR_CORE_ID_TYPE *PROCESSOR_CORE_ID,
			      RETURN_CODE_TYPE *RETURN_CODE);

/* ---------------------------------------------------------------------------------------
 * Semaphores and events (intra-partition).
 * --------------------------------------------------------------------------------------- */
typedef NAME_TYPE SEMAPHORE_NAME_TYPE;
typedef APEX_INTEGER SEMAPHORE_ID_TYPE;    /* 1..APEX_MAX_SEMAPHORES */
typedef APEX_INTEGER SEMAPHORE_VALUE_TYPE;
#define MAX_SEMAPHORE_VALUE 32767

typedef struct {
	SEMAPHORE_VALUE_TYPE CURRENT_VALUE;
	SEMAPHORE_VALUE_TYPE MAXIMUM_VALUE;
	WAITING_RANGE_TYPE WAITING_PROCESSES;
} SEMAPHORE_STATUS_TYPE;

void CREATE_SEMAPHORE(const char *SEMAPHORE_NAME, SEMAPHORE_VALUE_TYPE CURRENT_VALUE,
		      SEMAPHORE_VALUE_TYPE MAXIMUM_VALUE,
		      QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE, SEMAPHORE_ID_TYPE *SEMAPHORE_ID,
		      RETURN_CODE_TYPE *RETURN_CODE);
void WAIT_SEMAPHORE(SEMAPHORE_ID_TYPE SEMAPHORE_ID, SYSTEM_TIME_TYPE TIME_OUT,
		    RETURN_CODE_TYPE *RETURN_CODE);
void SIGNAL_SEMAPHORE(SEMAPHORE_ID_TYPE SEMAPHORE_ID, RETURN_CODE_TYPE *RETURN_CODE);
void GET_SEMAPHORE_ID(const char *SEMAPHORE_NAME, SEMAPHORE_ID_TYPE *SEMAPHORE_ID,
		      RETURN_CODE_TYPE *RETURN_CODE);
void GET_SEMAPHORE_STATUS(SEMAPHORE_ID_TYPE SEMAPHORE_ID, SEMAPHORE_STATUS_TYPE *SEMAPHORE_STATUS,
			  RETURN_CODE_TYPE *RETURN_CODE);

typedef NAME_TYPE EVENT_NAME_TYPE;
typedef APEX_INTEGER EVENT_ID_TYPE;        /* 1..APEX_MAX_EVENTS */
typedef enum { DOWN = 0, UP = 1 } EVENT_STATE_TYPE;

typedef struct {
	EVENT_STATE_TYPE EVENT_STATE;
	WAITING_RANGE_TYPE WAITING_PROCESSES;
} EVENT_STATUS_TYPE;

void CREATE_EVENT(const char *EVENT_NAME, EVENT_ID_TYPE *EVENT_ID,
		  RETURN_CODE_TYPE *RETURN_CODE);
void SET_EVENT(EVENT_ID_TYPE EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE);
void RESET_EVENT(EVENT_ID_TYPE EVENT_ID, RETURN_CODE_TYPE *RETURN_CODE);
void WAIT_EVENT(EVENT_ID_TYPE EVENT_ID, SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
void GET_EVENT_ID(const char *EVENT_NAME, EVENT_ID_TYPE *EVENT_ID,
		  RETURN_CODE_TYPE *RETURN_CODE);
void GET_EVENT_STATUS(EVENT_ID_TYPE EVENT_ID, EVENT_STATUS_TYPE *EVENT_STATUS,
		      RETURN_CODE_TYPE *RETURN_CODE);

/* ---------------------------------------------------------------------------------------
 * Buffers and blackboards (intra-partition messages, copied by the kernel).
 * --------------------------------------------------------------------------------------- */
typedef NAME_TYPE BUFFER_NAME_TYPE;
typedef APEX_INTEGER BUFFER_ID_TYPE;       /* 1..APEX_MAX_BUFFERS */
#define MAX_NUMBER_OF_MESSAGES 512         /* MAX_NB_MESSAGE of a buffer */

typedef struct {
	MESSAGE_RANGE_TYPE NB_MESSAGE;
	MESSAGE_RANGE_TYPE MAX_NB_MESSAGE;
	MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
	WAITING_RANGE_TYPE WAITING_PROCESSES;
} BUFFER_STATUS_TYPE;

void CREATE_BUFFER(const char *BUFFER_NAME, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
		   MESSAGE_RANGE_TYPE MAX_NB_MESSAGE, QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE,
		   BUFFER_ID_TYPE *BUFFER_ID, RETURN_CODE_TYPE *RETURN_CODE);
void SEND_BUFFER(BUFFER_ID_TYPE BUFFER_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
		 SYSTEM_TIME_TYPE TIME_OUT, RETURN_CODE_TYPE *RETURN_CODE);
void RECEIVE_BUFFER(BUFFER_ID_TYPE BUFFER_ID, SYSTEM_TIME_TYPE TIME_OUT,
		    MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
		    RETURN_CODE_TYPE *RETURN_CODE);
void GET_BUFFER_ID(const char *BUFFER_NAME, BUFFER_ID_TYPE *BUFFER_ID,
		   RETURN_CODE_TYPE *RETURN_CODE);
void GET_BUFFER_STATUS(BUFFER_ID_TYPE BUFFER_ID, BUFFER_STATUS_TYPE *BUFFER_STATUS,
		       RETURN_CODE_TYPE *RETURN_CODE);

typedef NAME_TYPE BLACKBOARD_NAME_TYPE;
typedef APEX_INTEGER BLACKBOARD_ID_TYPE;   /* 1..APEX_MAX_BLACKBOARDS */
typedef enum { EMPTY = 0, OCCUPIED = 1 } EMPTY_INDICATOR_TYPE;

typedef struct {
	EMPTY_INDICATOR_TYPE EMPTY_INDICATOR;
	MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
	WAITING_RANGE_TYPE WAITING_PROCESSES;
} BLACKBOARD_STATUS_TYPE;

void CREATE_BLACKBOARD(const char *BLACKBOARD_NAME, MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE,
		       BLACKBOARD_ID_TYPE *BLACKBOARD_ID, RETURN_CODE_TYPE *RETURN_CODE);
void DISPLAY_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
void READ_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, SYSTEM_TIME_TYPE TIME_OUT,
		     MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
		     RETURN_CODE_TYPE *RETURN_CODE);
void CLEAR_BLACKBOARD(BLACKBOARD_ID_TYPE BLACKBOARD_ID, RETURN_CODE_TYPE *RETURN_CODE);
void GET_BLACKBOARD_ID(const char *BLACKBOARD_NAME, BLACKBOARD_ID_TYPE *BLACKBOARD_ID,
		       RETURN_CODE_TYPE *RETURN_CODE);
void GET_BLACKBOARD_STATUS(BLACKBOARD_ID_TYPE BLACKBOARD_ID,
			   BLACKBOARD_STATUS_TYPE *BLACKBOARD_STATUS,
			   RETURN_CODE_TYPE *RETURN_CODE);

/* ---------------------------------------------------------------------------------------
 * Sampling and queuing ports (inter-partition, over Bulkhead's channels: docs/ports.md).
 * --------------------------------------------------------------------------------------- */
typedef NAME_TYPE SAMPLING_PORT_NAME_TYPE;
typedef APEX_INTEGER SAMPLING_PORT_ID_TYPE; /* 1..APEX_MAX_PORTS */
typedef enum { INVALID = 0, VALID = 1 } VALIDITY_TYPE;

typedef struct {
	SYSTEM_TIME_TYPE REFRESH_PERIOD;
	MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
	PORT_DIRECTION_TYPE PORT_DIRECTION;
	VALIDITY_TYPE LAST_MSG_VALIDITY;
} SAMPLING_PORT_STATUS_TYPE;

void CREATE_SAMPLING_PORT(const char *SAMPLING_PORT_NAME,
			  MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE, PORT_DIRECTION_TYPE PORT_DIRECTION,
			  SYSTEM_TIME_TYPE REFRESH_PERIOD, SAMPLING_PORT_ID_TYPE *SAMPLING_PORT_ID,
			  RETURN_CODE_TYPE *RETURN_CODE);
void WRITE_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			    MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
void READ_SAMPLING_MESSAGE(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			   MESSAGE_SIZE_TYPE *LENGTH, VALIDITY_TYPE *VALIDITY,
			   RETURN_CODE_TYPE *RETURN_CODE);
void GET_SAMPLING_PORT_ID(const char *SAMPLING_PORT_NAME,
			  SAMPLING_PORT_ID_TYPE *SAMPLING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE);
void GET_SAMPLING_PORT_STATUS(SAMPLING_PORT_ID_TYPE SAMPLING_PORT_ID,
			      SAMPLING_PORT_STATUS_TYPE *SAMPLING_PORT_STATUS,
			      RETURN_CODE_TYPE *RETURN_CODE);

typedef NAME_TYPE QUEUING_PORT_NAME_TYPE;
typedef APEX_INTEGER QUEUING_PORT_ID_TYPE;  /* 1..APEX_MAX_PORTS */

typedef struct {
	MESSAGE_RANGE_TYPE NB_MESSAGE;
	MESSAGE_RANGE_TYPE MAX_NB_MESSAGE;
	MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE;
	PORT_DIRECTION_TYPE PORT_DIRECTION;
	WAITING_RANGE_TYPE WAITING_PROCESSES;
} QUEUING_PORT_STATUS_TYPE;

void CREATE_QUEUING_PORT(const char *QUEUING_PORT_NAME,
			 MESSAGE_SIZE_TYPE MAX_MESSAGE_SIZE, MESSAGE_RANGE_TYPE MAX_NB_MESSAGE,
			 PORT_DIRECTION_TYPE PORT_DIRECTION,
			 QUEUING_DISCIPLINE_TYPE QUEUING_DISCIPLINE,
			 QUEUING_PORT_ID_TYPE *QUEUING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE);
void SEND_QUEUING_MESSAGE(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			  MESSAGE_SIZE_TYPE LENGTH, SYSTEM_TIME_TYPE TIME_OUT,
			  RETURN_CODE_TYPE *RETURN_CODE);
void RECEIVE_QUEUING_MESSAGE(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID, SYSTEM_TIME_TYPE TIME_OUT,
			     MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE *LENGTH,
			     RETURN_CODE_TYPE *RETURN_CODE);
void GET_QUEUING_PORT_ID(const char *QUEUING_PORT_NAME,
			 QUEUING_PORT_ID_TYPE *QUEUING_PORT_ID, RETURN_CODE_TYPE *RETURN_CODE);
void GET_QUEUING_PORT_STATUS(QUEUING_PORT_ID_TYPE QUEUING_PORT_ID,
			     QUEUING_PORT_STATUS_TYPE *QUEUING_PORT_STATUS,
			     RETURN_CODE_TYPE *RETURN_CODE);

/* ---------------------------------------------------------------------------------------
 * Health monitoring: the error handler process and the errors it handles (docs/apex.md,
 * "Errors and the health monitor").
 * --------------------------------------------------------------------------------------- */
typedef enum {
	DEADLINE_MISSED = 0,
	APPLICATION_ERROR = 1,
	NUMERIC_ERROR = 2,
	ILLEGAL_REQUEST = 3,
	STACK_OVERFLOW = 4,
	MEMORY_VIOLATION = 5,
	HARDWARE_FAULT = 6,
	POWER_FAIL = 7
} ERROR_CODE_TYPE;

#define MAX_ERROR_MESSAGE_SIZE 128
typedef APEX_INTEGER ERROR_MESSAGE_SIZE_TYPE;
typedef APEX_BYTE ERROR_MESSAGE_TYPE[MAX_ERROR_MESSAGE_SIZE];

typedef struct {
	ERROR_CODE_TYPE ERROR_CODE;
	ERROR_MESSAGE_TYPE MESSAGE;          /* RAISE_APPLICATION_ERROR's message, else empty */
	ERROR_MESSAGE_SIZE_TYPE LENGTH;
	PROCESS_ID_TYPE FAILED_PROCESS_ID;
	SYSTEM_ADDRESS_TYPE FAILED_ADDRESS;  /* the faulting instruction, or the raising call */
} ERROR_STATUS_TYPE;

void CREATE_ERROR_HANDLER(SYSTEM_ADDRESS_TYPE ENTRY_POINT, STACK_SIZE_TYPE STACK_SIZE,
			  RETURN_CODE_TYPE *RETURN_CODE);
void GET_ERROR_STATUS(ERROR_STATUS_TYPE *ERROR_STATUS, RETURN_CODE_TYPE *RETURN_CODE);
void RAISE_APPLICATION_ERROR(ERROR_CODE_TYPE ERROR_CODE, MESSAGE_ADDR_TYPE MESSAGE_ADDR,
			     ERROR_MESSAGE_SIZE_TYPE LENGTH, RETURN_CODE_TYPE *RETURN_CODE);
void REPORT_APPLICATION_MESSAGE(MESSAGE_ADDR_TYPE MESSAGE_ADDR, MESSAGE_SIZE_TYPE LENGTH,
				RETURN_CODE_TYPE *RETURN_CODE);

/* Errors waiting for the error handler (GET_ERROR_STATUS); one more is partition-level. */
#define APEX_MAX_PENDING_ERRORS 16
/* `brk #APEX_BRK_NUMERIC` in a process is a NUMERIC_ERROR (the Cortex-A53 raises no numeric
 * trap of its own: integer division by zero gives 0, FP traps are not implemented). */
#define APEX_BRK_NUMERIC 0x4e55
#define APEX_NUMERIC_CHECK(cond) \
	do { \
		if (!(cond)) \
			__asm__ volatile("brk #0x4e55"); \
	} while (0)

/* ---------------------------------------------------------------------------------------
 * Bulkhead additions.
 * --------------------------------------------------------------------------------------- */

/* Starts the kernel; the first call of main, with main's boot_kind and restarts. The partition
 * is then in COLD_START (BH_BOOT_COLD, BH_BOOT_COLD_RESTART) or WARM_START
 * (BH_BOOT_WARM_RESTART) mode and main is its initialization, which creates the processes and
 * resources and ends with SET_PARTITION_MODE(NORMAL). Only vCPU 0 may call it. */
void apex_init(unsigned boot_kind, unsigned restarts);

/* Initialization only: the partition's period, the grid of "partition period starts" that
 * aligns the first release of periodic processes (docs/apex.md, "Time"). Until it comes from
 * the system description, a partition sets it here; default none (INFINITE_TIME_VALUE).
 * NO_ERROR; INVALID_PARAM if not > 0; INVALID_MODE in NORMAL mode. */
void apex_set_partition_period(SYSTEM_TIME_TYPE PERIOD, RETURN_CODE_TYPE *RETURN_CODE);

/* The partition's APEX configuration: `bulkhead build` writes the `apex:` key of the system
 * description (docs/apex.md, "Configuration") into this table of the partition's image, and
 * apex_init reads it. Without that key the table keeps its defaults (declared 0): the library's
 * own limits above, no partition period, no process list. With it, a create call beyond the
 * declared count (or beyond the declared stack or message bytes) is INVALID_CONFIG, and, when
 * the description lists the processes, CREATE_PROCESS of a process that is not listed or whose
 * PERIOD, TIME_CAPACITY, BASE_PRIORITY or DEADLINE differ from the list is INVALID_CONFIG too.
 * The layout is the tool's (tools/src/bulkhead/apex.py): change both together. */
#define APEX_CONFIG_MAGIC   0x43585041u /* "APXC" */
#define APEX_CONFIG_VERSION 3
struct apex_config_process {
	char name[32];                    /* NUL-padded, at most MAX_NAME_LENGTH characters */
	SYSTEM_TIME_TYPE period;          /* INFINITE_TIME_VALUE: aperiodic */
	SYSTEM_TIME_TYPE time_capacity;   /* INFINITE_TIME_VALUE: no deadline */
	unsigned int priority;
	unsigned int deadline;            /* SOFT or HARD */
	unsigned int stack_size;          /* 0: not declared */
	unsigned int core;                /* its core affinity (CREATE_PROCESS binds it there) */
};
/* Indexes of apex_config.limits (and of the kernel's own copy). */
enum apex_limit {
	APEX_LIMIT_PROCESSES, APEX_LIMIT_STACK_TOTAL, APEX_LIMIT_SEMAPHORES, APEX_LIMIT_EVENTS,
	APEX_LIMIT_BUFFERS, APEX_LIMIT_BLACKBOARDS, APEX_LIMIT_PORTS, APEX_LIMIT_MESSAGE_POOL,
	APEX_LIMIT_COUNT
};
struct apex_config {
	unsigned int magic, version;
	unsigned int declared;            /* 1: written from the system description */
	unsigned int process_count;       /* entries of process_list (0: not listed) */
	unsigned int limits[APEX_LIMIT_COUNT]; /* processes, stack bytes, ..., message pool bytes */
	unsigned int partition_errors;    /* bit n: ERROR_CODE_TYPE n is partition-level */
	unsigned int reserved;
	SYSTEM_TIME_TYPE partition_period; /* INFINITE_TIME_VALUE: none declared */
	SYSTEM_TIME_TYPE period_start;    /* the partition's first window in the major frame */
	SYSTEM_TIME_TYPE duration;        /* its window time per partition period, or INFINITE */
	struct apex_config_process process_list[APEX_MAX_PROCESSES];
};
extern struct apex_config apex_config;

/* What this incarnation may create of `which`: the declared limit, or the library's. */
unsigned int apex_limit(enum apex_limit which);

/* Errors the kernel detected in a process: what GET_PROCESS_STATUS has no field for. */
struct apex_process_counters {
	unsigned long long activations;      /* releases (START, DELAYED_START, each period) */
	unsigned long long deadline_misses;  /* deadline timer expired before completion */
	unsigned long long stack_overflows;  /* guard found damaged (the process was stopped) */
	SYSTEM_TIME_TYPE last_missed_deadline; /* the DEADLINE_TIME missed last, 0 if none */
	SYSTEM_TIME_TYPE worst_response;   /* periodic: longest release point to PERIODIC_WAIT */
	unsigned long long completions;    /* PERIODIC_WAIT calls (completed activations) */
};

/* INVALID_PARAM for an unknown id, else NO_ERROR. */
void apex_get_process_counters(PROCESS_ID_TYPE PROCESS_ID, struct apex_process_counters *c,
			       RETURN_CODE_TYPE *RETURN_CODE);

/* Partition-wide counters. */
struct apex_counters {
	unsigned long long context_switches; /* the running context changed */
	unsigned long long idle_waits;       /* BH_HC_IDLE calls with no process ready */
	unsigned long long deadline_misses;
	unsigned long long stack_overflows;
	unsigned long long stack_pool_used;  /* bytes of APEX_STACK_POOL_SIZE taken */
	unsigned long long message_pool_used; /* bytes of APEX_MESSAGE_POOL_SIZE taken */
	unsigned long long errors_handled;   /* process-level errors queued for the error handler */
	unsigned long long errors_to_hm;     /* errors raised to Bulkhead's health monitor */
	unsigned long long reports;          /* REPORT_APPLICATION_MESSAGE calls that printed */
};
void apex_get_counters(struct apex_counters *c);

/* Health-monitor codes libapex raises for the errors the error handler does not get (none
 * created, raised in the handler itself, outside a process, or APEX_MAX_PENDING_ERRORS
 * waiting): the event's address field in Bulkhead's HM log is the code | the process id
 * (APEX_HM_NO_PROCESS: the initialization or the idle loop; APEX_HM_HANDLER: the error
 * handler). A missed deadline is a deadline_miss event (BH_HC_DEADLINE_MISS), every other
 * error a partition_error event (BH_HC_RAISE_EVENT). */
#define APEX_HM_DEADLINE          0xA0010000ul
#define APEX_HM_STACK_OVERFLOW    0xA0020000ul
#define APEX_HM_APPLICATION       0xA0030000ul
#define APEX_HM_NUMERIC           0xA0040000ul
#define APEX_HM_ILLEGAL_REQUEST   0xA0050000ul
#define APEX_HM_MEMORY_VIOLATION  0xA0060000ul
#define APEX_HM_HARDWARE_FAULT    0xA0070000ul
#define APEX_HM_NO_PROCESS        0x0000ul
#define APEX_HM_HANDLER           0xFFFFul

#endif
