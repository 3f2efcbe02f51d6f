/* stripped_lock_user.c - uses tests/stripped_lock.c's library. */
#include <stdio.h>

void kvs_use(int n);

int main(void)
{
	kvs_use(1000);
	printf("1000 uses\n");
	return 0;
}
