/* The boot checker's replacements for fake-architecture functions (ram.c). */
#ifndef BOOTCHECK_H
#define BOOTCHECK_H

#include <stdbool.h>
#include "config_tables.h"

/* Reserve host memory for the tables' RAM range; false (with a message) if it cannot. */
bool bootcheck_ram_map(const struct bh_system_cfg *sys);

#endif
