/* unload.c - for tests/unloaded_code.sh: opens the library argv[1], calls
 * its lock_here(), and closes it, argv[2] times (0: keeps it open); with
 * "dump" after those, writes a report to stderr (mutexstat_dump, under
 * the library) after each call, before the close. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int times = argc > 2 ? atoi(argv[2]) : 0;
	int (*dump)(int) = argc > 3 && !strcmp(argv[3], "dump")
				   ? (int (*)(int))dlsym(RTLD_DEFAULT, "mutexstat_dump")
				   : NULL;
	for (int i = 0; i < (times ? times : 1); i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*fn)(void) = h ? (int (*)(void))dlsym(h, "lock_here") : NULL;
		if (!fn) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		printf("lock_here: %d\n", fn());
		if (dump)
			dump(2);
		if (times && dlclose(h) != 0) {
			printf("dlclose: %s\n", dlerror());
			return 1;
		}
	}
	return 0;
}
