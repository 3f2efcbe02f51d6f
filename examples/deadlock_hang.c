/* deadlock_hang.c - the inversion of examples/deadlock_abba.c with the
 * timing that hangs: this program never ends.
 *
 *   timeout 5 mutexstat ./examples/deadlock_hang; echo $?    # 124
 *
 * Alice pays Bob (Alice's lock, then Bob's) while Bob pays Alice (Bob's
 * lock, then Alice's).  Both threads take their first lock, meet at a
 * barrier, and then each waits for the lock the other holds: forever.
 *
 * The exit report never comes.  While it hangs, `kill -USR1 <pid>` writes
 * a live dump (MUTEXSTAT_WATCHDOG=2 makes mutexstat write one by itself
 * after a 2 s wait): DEADLOCK, the two threads waiting for each other,
 * where each waits and where the other took the lock it wants; and the
 * POTENTIAL DEADLOCK of the two orders, as deadlock_abba's report has it.
 * Taking the two locks in one order fixes both programs. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct account {
	const char *owner;
	long balance;
	pthread_mutex_t lock;
};

static struct account alice = { "alice", 100, PTHREAD_MUTEX_INITIALIZER };
static struct account bob = { "bob", 100, PTHREAD_MUTEX_INITIALIZER };
static pthread_barrier_t both_hold_one; /* a barrier takes no pthread mutex */

static void check(int rc, const char *func, const char *call)
{
	if (rc != 0) {
		fprintf(stderr, "deadlock_hang: %s: %s: %s\n", func, call, strerror(rc));
		exit(3);
	}
}
#define CHECK(call) check((call), __func__, #call)

void transfer(struct account *from, struct account *to, long amount)
{
	CHECK(pthread_mutex_lock(&from->lock)); /* LOCK_FROM */
	pthread_barrier_wait(&both_hold_one); /* the other holds its first lock */
	CHECK(pthread_mutex_lock(&to->lock)); /* LOCK_TO: never returns */
	from->balance -= amount;
	to->balance += amount;
	CHECK(pthread_mutex_unlock(&to->lock));
	CHECK(pthread_mutex_unlock(&from->lock));
}

void *alice_pays_bob(void *arg)
{
	(void)arg;
	transfer(&alice, &bob, 10);
	return NULL;
}

void *bob_pays_alice(void *arg)
{
	(void)arg;
	transfer(&bob, &alice, 5);
	return NULL;
}

int main(void)
{
	pthread_barrier_init(&both_hold_one, NULL, 2);
	pthread_t t1, t2;
	CHECK(pthread_create(&t1, NULL, alice_pays_bob, NULL));
	CHECK(pthread_create(&t2, NULL, bob_pays_alice, NULL));
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("balances: alice %ld, bob %ld (never printed)\n", alice.balance,
	       bob.balance);
	return 0;
}
