/* unload.c - for tests/unloaded_code.sh: opens the library argv[1], calls
 * its lock_here(), and closes it, argv[2] times (0: keeps it open). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int times = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < (times ? times : 1); i++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		int (*fn)(void) = h ? (int (*)(void))dlsym(h, "lock_here") : NULL;
		if (!fn) {
			printf("dlopen: %s\n", dlerror());
			return 1;
		}
		printf("lock_here: %d\n", fn());
		if (times && dlclose(h) != 0) {
			printf("dlclose: %s\n", dlerror());
			return 1;
		}
	}
	return 0;
}
