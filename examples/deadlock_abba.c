/* deadlock_abba.c - the classic lock-order inversion, found on a run that
 * did not hang.
 *
 *   mutexstat ./examples/deadlock_abba [ordered]
 *
 * transfer() locks the account the money leaves, then the account it goes
 * to.  Alice pays Bob: Alice's lock, then Bob's.  Bob pays Alice: Bob's
 * lock, then Alice's.  Had the two payments run at the same moment, each
 * could have taken its first lock and then waited for the other's forever
 * (examples/deadlock_hang.c does just that).  This run makes them take
 * turns, so it finishes -- and mutexstat still reports
 *
 *   POTENTIAL DEADLOCK: 2 mutexes taken in a cycle of orders
 *
 * with where each thread took its first lock and its second: the bug is in
 * the two orders, whatever the timing of one run.  Every thread that takes
 * B while holding A adds the order A -> B; a cycle among the orders is a
 * deadlock waiting for its timing.
 *
 * The fix: take the two locks in one order whatever the direction of the
 * payment, here by account number.  With `ordered`, transfer_ordered() does
 * that, and mutexstat reports nothing.
 *
 * Each lock's result is checked on the lock's own line, so the return
 * address a stack holds is on that line too; the marker comments are for
 * tests/deadlocks.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct account {
	int number;
	const char *owner;
	long balance;
	pthread_mutex_t lock;
};

static struct account alice = { 1, "alice", 100, PTHREAD_MUTEX_INITIALIZER };
static struct account bob = { 2, "bob", 100, PTHREAD_MUTEX_INITIALIZER };
static int ordered;
static sem_t alice_paid;

static void check(int rc, const char *func, const char *call)
{
	if (rc != 0) {
		fprintf(stderr, "deadlock_abba: %s: %s: %s\n", func, call, strerror(rc));
		exit(3);
	}
}
#define CHECK(call) check((call), __func__, #call)

/* The bug: the order of the two locks follows the payment's direction. */
void transfer(struct account *from, struct account *to, long amount)
{
	CHECK(pthread_mutex_lock(&from->lock)); /* LOCK_FROM */
	CHECK(pthread_mutex_lock(&to->lock)); /* LOCK_TO */
	from->balance -= amount;
	to->balance += amount;
	CHECK(pthread_mutex_unlock(&to->lock));
	CHECK(pthread_mutex_unlock(&from->lock));
}

/* The fix: the lower account number first, whichever way the money goes. */
void transfer_ordered(struct account *from, struct account *to, long amount)
{
	struct account *first = from->number < to->number ? from : to;
	struct account *second = first == from ? to : from;
	CHECK(pthread_mutex_lock(&first->lock)); /* LOCK_FIRST */
	CHECK(pthread_mutex_lock(&second->lock)); /* LOCK_SECOND */
	from->balance -= amount;
	to->balance += amount;
	CHECK(pthread_mutex_unlock(&second->lock));
	CHECK(pthread_mutex_unlock(&first->lock));
}

static void say(const struct account *from, const struct account *to, long amount)
{
	printf("thread %ld: %s pays %s %ld\n", (long)syscall(SYS_gettid),
	       from->owner, to->owner, amount);
}

void *alice_pays_bob(void *arg)
{
	(void)arg;
	say(&alice, &bob, 10);
	if (ordered)
		transfer_ordered(&alice, &bob, 10);
	else
		transfer(&alice, &bob, 10);
	sem_post(&alice_paid);
	return NULL;
}

void *bob_pays_alice(void *arg)
{
	(void)arg;
	sem_wait(&alice_paid); /* one after the other: this run cannot hang */
	say(&bob, &alice, 5);
	if (ordered)
		transfer_ordered(&bob, &alice, 5);
	else
		transfer(&bob, &alice, 5);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "ordered") != 0)) {
		fprintf(stderr, "usage: deadlock_abba [ordered]\n");
		return 2;
	}
	ordered = argc == 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("alice's lock %p, bob's lock %p\n", (void *)&alice.lock,
	       (void *)&bob.lock);
	sem_init(&alice_paid, 0, 0);
	pthread_t t1, t2;
	CHECK(pthread_create(&t1, NULL, alice_pays_bob, NULL));
	CHECK(pthread_create(&t2, NULL, bob_pays_alice, NULL));
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("balances: alice %ld, bob %ld\n", alice.balance, bob.balance);
	return alice.balance + bob.balance == 200 ? 0 : 1;
}
