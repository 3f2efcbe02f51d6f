/* maps.h - reading /proc/PID/maps, the memory a process has mapped, one
 * line per mapping: "lo-hi perms offset dev inode path".  Only open, read
 * and close, and parsing of our own: safe in a fork child's handler. */
#ifndef MUTEXSTAT_MAPS_H
#define MUTEXSTAT_MAPS_H

#include <stdint.h>

struct ms_mapping {
	uintptr_t lo, hi;
	int shared;              /* MAP_SHARED: the 's' of "rw-s" */
	char dev[16];            /* "fd:01" */
	unsigned long long inode; /* 0 for private anonymous memory */
};

/* fn with each mapping of the maps file at path, until it returns nonzero:
 * that answer, 0 after the last line, -1 if the file cannot be read
 * (another user's process). */
int ms_maps_each(const char *path, int (*fn)(const struct ms_mapping *m, void *arg),
		 void *arg);

/* The mapping of this process that holds addr; 0 if none. */
int ms_maps_find(uintptr_t addr, struct ms_mapping *out);

#endif
