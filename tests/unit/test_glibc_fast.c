/* test_glibc_fast.c - the start-up self-test of lib/glibc/glibc_fast.h
 * (ms_fast_compare, lib/glibc/real.c): glibc's own lock, trylock and
 * unlock agree with the inline steps, in a process of one thread (glibc's
 * plain stores) and of several (its atomic steps); and stand-ins that are
 * wrong in one way each -- no owner, a lock word of 2, a held mutex taken,
 * a user count kept, a field beyond the five touched, a waiter's 2 left
 * in the word -- are found, at the step where they go wrong. */
#include "suites.h"

#include "glibc/real.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/single_threaded.h>

static struct ms_fast_pair ours;

static void setup(void)
{
	/* glibc's functions behind ours, as start-up finds them: before that
	 * the boot aliases may be a sanitizer's wrappers, not ready yet */
	ck_assert_int_eq(ms_real_resolve(), 0);
	ms_fast_pair_ours(&ours);
}

/* ours, with fast_lock or fast_unlock replaced */
static enum ms_fast_step with_lock(int (*lock)(pthread_mutex_t *, uint32_t))
{
	struct ms_fast_pair p = ours;
	p.fast_lock = lock;
	return ms_fast_compare(&p);
}

static enum ms_fast_step with_unlock(void (*unlock)(pthread_mutex_t *))
{
	struct ms_fast_pair p = ours;
	p.fast_unlock = unlock;
	return ms_fast_compare(&p);
}

START_TEST(test_fast_agrees_one_thread)
{
	ck_assert_msg(__libc_single_threaded, "the test process has one thread");
	ck_assert_int_eq(ms_fast_compare(&ours), MS_FAST_AGREE);
}
END_TEST

static sem_t go;

static void *idle(void *arg)
{
	(void)arg;
	while (sem_wait(&go) && errno == EINTR)
		;
	return NULL;
}

START_TEST(test_fast_agrees_several_threads)
{
	pthread_t t;
	ck_assert_int_eq(sem_init(&go, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, idle, NULL), 0);
	ck_assert_msg(!__libc_single_threaded, "glibc knows of a second thread");
	ck_assert_int_eq(ms_fast_compare(&ours), MS_FAST_AGREE);
	sem_post(&go);
	pthread_join(t, NULL);
}
END_TEST

static int lock_without_owner(pthread_mutex_t *m, uint32_t tid)
{
	int rc = ours.fast_lock(m, tid);
	if (!rc)
		m->__data.__owner = 0;
	return rc;
}

START_TEST(test_fast_lock_without_owner_differs)
{
	ck_assert_int_eq(with_lock(lock_without_owner), MS_FAST_LOCK);
}
END_TEST

static int lock_writing_2(pthread_mutex_t *m, uint32_t tid)
{
	int rc = ours.fast_lock(m, tid);
	if (!rc)
		m->__data.__lock = 2;
	return rc;
}

START_TEST(test_fast_lock_writing_2_differs)
{
	ck_assert_int_eq(with_lock(lock_writing_2), MS_FAST_LOCK);
}
END_TEST

/* glibc's other fields count too: __spins is one no step writes */
static int lock_touching_spins(pthread_mutex_t *m, uint32_t tid)
{
	int rc = ours.fast_lock(m, tid);
	if (!rc)
		m->__data.__spins = 1;
	return rc;
}

START_TEST(test_fast_lock_touching_spins_differs)
{
	ck_assert_int_eq(with_lock(lock_touching_spins), MS_FAST_LOCK);
}
END_TEST

/* right on a free mutex; takes a held one as well */
static int lock_ignoring_holder(pthread_mutex_t *m, uint32_t tid)
{
	m->__data.__lock = 1;
	m->__data.__owner = (int)tid;
	m->__data.__nusers++;
	return 0;
}

START_TEST(test_fast_lock_of_held_mutex_differs)
{
	ck_assert_int_eq(with_lock(lock_ignoring_holder), MS_FAST_HELD);
}
END_TEST

static void unlock_keeping_user(pthread_mutex_t *m)
{
	ours.fast_unlock(m);
	m->__data.__nusers++;
}

START_TEST(test_fast_unlock_keeping_user_differs)
{
	ck_assert_int_eq(with_unlock(unlock_keeping_user), MS_FAST_UNLOCK);
}
END_TEST

/* lets go of a word of 1 only: a waiter's 2 stays, and nobody wakes it */
static void unlock_leaving_waiter(pthread_mutex_t *m)
{
	int one = 1;
	m->__data.__owner = 0;
	m->__data.__nusers--;
	__atomic_compare_exchange_n(&m->__data.__lock, &one, 0, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

START_TEST(test_fast_unlock_leaving_waiter_differs)
{
	ck_assert_int_eq(with_unlock(unlock_leaving_waiter), MS_FAST_WAITER_UNLOCK);
}
END_TEST

Suite *glibc_fast_suite(void)
{
	Suite *s = suite_create("glibc_fast");
	TCase *tc = tcase_create("self_test");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_fast_agrees_one_thread);
	tcase_add_test(tc, test_fast_agrees_several_threads);
	tcase_add_test(tc, test_fast_lock_without_owner_differs);
	tcase_add_test(tc, test_fast_lock_writing_2_differs);
	tcase_add_test(tc, test_fast_lock_touching_spins_differs);
	tcase_add_test(tc, test_fast_lock_of_held_mutex_differs);
	tcase_add_test(tc, test_fast_unlock_keeping_user_differs);
	tcase_add_test(tc, test_fast_unlock_leaving_waiter_differs);
	suite_add_tcase(s, tc);
	return s;
}
