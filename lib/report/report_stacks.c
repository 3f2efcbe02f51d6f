/* report_stacks.c - call stacks in the text report: for each top mutex the
 * stacks of the threads that waited for it ("who waited") and of the
 * unlocks that ended the holds they waited behind ("who made them wait"),
 * each with its count,
 * total and longest wait and its share, then where the mutex was first
 * locked and initialised. */
#define _GNU_SOURCE
#include "report/report_stacks.h"
#include "report/suppress.h"
#include "analysis/blame.h"
#include "base/clock.h"
#include "base/options.h"
#include "record/record.h"
#include "stacks/site.h"
#include "analysis/findings.h"
#include "analysis/order.h"
#include "stacks/stack.h"
#include "stacks/symbols.h"
#include "core/table.h"

#include <string.h>

#define WIDTH 120
#define TOP_STACKS 5

void ms_report_stack_summary(struct ms_fmt *f, const char *noun)
{
	struct ms_depot_stats st;
	ms_depot_stats(&st);
	if (!ms_stack_available())
		ms_fmt(f, "  call stacks: unavailable (libunwind.so.8 could not be "
			  "loaded: %s); sites show the caller only\n", ms_stack_unavailable_why());
	else if (ms_stack_off_since_fork() == MS_OFF_CAPTURE)
		ms_fmt(f, "  call stacks: none in this process: another thread of the parent "
			  "was taking one when it\n  forked (libunwind's locks stay held here); "
			  "sites show the caller only\n");
	else if (ms_stack_off_since_fork() == MS_OFF_LOADER)
		ms_fmt(f, "  call stacks: none in this process: another thread of the parent "
			  "was in the dynamic linker\n  when it forked (its lock stays held "
			  "here); sites show the caller only\n");
	else if (ms_opt.stack_sample > 1)
		ms_fmt(f, "  call stacks: each of a %s's first %d contention events, "
			  "then 1 in %llu (MUTEXSTAT_STACK_SAMPLE); %llu distinct\n",
		       noun, MS_STACK_EXACT, (unsigned long long)ms_opt.stack_sample,
		       (unsigned long long)st.stacks);
	else
		ms_fmt(f, "  call stacks: every contention event; %llu distinct\n",
		       (unsigned long long)st.stacks);
	if (st.dropped)
		ms_fmt(f, "  %llu stacks were dropped: the %llu MiB for stacks are "
			  "spent; raise MUTEXSTAT_STACK_MEMORY\n",
		       (unsigned long long)st.dropped,
		       (unsigned long long)(st.budget >> 20));
	struct ms_order_stats os;
	ms_order_stats(&os);
	if (os.dropped)
		/* within 120 columns up to a billion (a million made 123) */
		ms_fmt(f, "  %llu lock-order edges not kept (their memory is spent): "
			  "inversions may be missed; raise MUTEXSTAT_STACK_MEMORY\n",
		       (unsigned long long)os.dropped);
	if (os.cut_short)
		ms_fmt(f, "  %llu of %llu lock-order cycle searches gave up (65,536 steps): "
			  "inversions may be missed\n",
		       (unsigned long long)os.cut_short, (unsigned long long)os.searches);
	struct ms_findings_stats fs;
	ms_findings_stats(&fs);
	if (fs.cycles_lost)
		ms_fmt(f, "  %llu lock-order cycles found but not kept: the first %llu "
			  "distinct ones are\n",
		       (unsigned long long)fs.cycles_lost, (unsigned long long)fs.cycles);
	if (os.not_followed)
		ms_fmt(f, "  lock order not followed for %llu acquisitions: their thread "
			  "already held %d %s (the most followed per thread)\n",
		       (unsigned long long)os.not_followed, MS_HELD_MAX,
		       strcmp(noun, "mutex") ? "locks" : "mutexes");
}

/* Frames past the program's own, into the C library's thread or process
 * start, say nothing: stop before them.  The C library's are known by
 * their module, before libdw is asked for the name _start: that answer
 * comes with a source line, and libc's means inflating its whole debug
 * file if libc6-dbg is installed, at every exit of every small program,
 * for frames the report does not show (doc/benchmark.md).  The module is
 * known from start-up (stack.c), not from dladdr, whose search of the
 * module's symbols cost 50,000 instructions a frame.  The program's own
 * _start is asked for without its line (ms_symbolize_function). */
static int is_start_frame(uintptr_t addr)
{
	if (ms_stack_own_code(addr))
		return 1; /* our thread_start, where it is not a tail call */
	if (ms_stack_c_library_code(addr) || ms_stack_program_start(addr))
		return 1; /* the program's _start by its address: stripped, it has no name */
	struct ms_frame fr;
	return ms_symbolize_function(addr, 1, &fr) >= 0 && !strcmp(fr.func, "_start");
}

/* std::thread starts its threads through the C++ runtime's trampoline
 * (libstdc++'s execute_native_thread_routine), unnamed without the
 * runtime's debug symbols: every std::thread stack ended in a bare
 * "libstdc++.so.6+0xd44a3", a thread start, not the program's code.  An
 * outermost frame of the C++ runtime with no name, or with that one, is
 * left out (a stack cut short by MUTEXSTAT_FRAMES may end in another
 * unnamed frame of the runtime: that one said nothing either). */
static int is_cxx_thread_start(uintptr_t addr)
{
	struct ms_frame fr;
	if (ms_symbolize_function(addr, 1, &fr) < 0)
		return 0;
	if (strncmp(fr.module, "libstdc++.so", 12) != 0 && strncmp(fr.module, "libc++.so", 9) != 0)
		return 0;
	return !fr.func[0] || !strncmp(fr.func, "execute_native_thread_routine", 29);
}

int ms_stack_shown(const uintptr_t *frames, int n)
{
	int last = n - 1;
	while (last > 0 && is_start_frame(frames[last]))
		last--;
	if (last > 0 && is_cxx_thread_start(frames[last]))
		last--;
	return last + 1;
}

void ms_report_stack_from(struct ms_fmt *f, ms_stack_id id, int first, int indent)
{
	const uintptr_t *frames;
	int n = ms_depot_get(id, &frames);
	int last = n ? ms_stack_shown(frames, n) - 1 : -1;
	if (first > last) {
		ms_fmt(f, "(stack not captured)\n");
		return;
	}
	for (int i = first; i <= last; i++) {
		char where[256];
		ms_symbolize(frames[i], where, sizeof where);
		ms_fmt(f, "%*s%s\n", i > first ? indent : 0, "",
		       ms_symbol_fit(where, (size_t)(WIDTH - indent)));
	}
}

void ms_report_wrapper_callers(struct ms_fmt *f, ms_stack_id id)
{
	if (!id)
		return;
	ms_fmt(f, "    %s  ", MS_WRAPPER_CALLERS);
	ms_report_stack_from(f, id, 1, 4 + (int)strlen(MS_WRAPPER_CALLERS) + 2);
}

void ms_report_stack(struct ms_fmt *f, ms_stack_id id, int indent)
{
	ms_report_stack_from(f, id, 0, indent);
}

/* The lines of one kind, best (most wait) first. */
static int collect(const struct ms_blame *b, uint64_t birth, unsigned kind,
		   const struct ms_blame **out, int cap, uint64_t *sum, int *all)
{
	int n = 0;
	*sum = 0;
	*all = 0;
	for (; b; b = b->next) {
		if (b->birth != birth || b->kind != kind)
			continue;
		*sum += b->total;
		(*all)++;
		int i = n < cap ? n++ : cap - 1;
		if (n == cap && i == cap - 1 && out[i] && out[i]->total >= b->total)
			continue;
		while (i > 0 && out[i - 1]->total < b->total) {
			out[i] = out[i - 1];
			i--;
		}
		out[i] = b;
	}
	return n;
}

void ms_report_blame_head(struct ms_fmt *f, const char *title, int all, const char *what,
			  const char *third)
{
	ms_fmt(f, "  %s (%d %s):\n", title, all, all == 1 ? "stack" : "stacks");
	ms_fmt(f, "  %8s %10s %10s %6s  %s\n", "waits", what, third, "share", "stack");
}

void ms_report_blame_row(struct ms_fmt *f, unsigned kind, uint64_t count, uint64_t total,
			 uint64_t third, uint64_t sum, ms_stack_id stack)
{
	char tot[16], thr[16];
	unsigned share = sum ? (unsigned)((total * 100 + sum / 2) / sum) : 0;
	ms_fmt(f, "  %8llu %10s %10s %5u%%  ", (unsigned long long)count,
	       ms_duration(tot, ms_ticks_to_ns(total)), ms_duration(thr, ms_ticks_to_ns(third)),
	       share);
	if (!stack && kind == MS_BLAME_HOLD)
		/* no unlock saw the waiter: mostly one that checked for
		 * waiters just before this one announced itself (a short
		 * wait), but on a loaded machine also a waiter woken and not
		 * run for a while (a long one): the label claims no cause */
		ms_fmt(f, "(not attributed: whose hold it was is not known)\n");
	else
		ms_report_stack(f, stack, 41);
}

/* The lines of one kind of a list: a mutex life's (birth), or a site
 * line's (birth 0). */
static void section(struct ms_fmt *f, const struct ms_blame *list, uint64_t birth,
		    unsigned kind, const char *title, const char *what)
{
	const struct ms_blame *lines[TOP_STACKS] = { 0 };
	uint64_t sum;
	int all;
	int n = collect(list, birth, kind, lines, TOP_STACKS, &sum, &all);
	if (!n)
		return;
	ms_report_blame_head(f, title, all, what, "max");
	for (int i = 0; i < n; i++)
		ms_report_blame_row(f, kind, lines[i]->count, lines[i]->total, lines[i]->max, sum,
				    lines[i]->stack);
	if (all > n)
		ms_fmt(f, "  (%d more stacks)\n", all - n);
}

/* Where a mutex was first locked or initialised.  A call site's stack is
 * captured once, for the first mutex it locks (or initialises): for the
 * mutexes after it only the site itself is theirs, and its callers -- which
 * may differ -- are left out, with a line that says so (two accounts
 * locked at one line of transfer(), one from alice_pays_bob and one from
 * bob_pays_alice, both read alice_pays_bob). */
static void site_stack(struct ms_fmt *f, const char *label, uint32_t id,
		       const char *verb)
{
	if (!id)
		return;
	ms_fmt(f, "  %s", label);
	const uintptr_t *frames;
	int n = ms_depot_get(id & ~MS_SITE_SHARED, &frames);
	if (!(id & MS_SITE_SHARED) || !n || ms_stack_shown(frames, n) == 1) {
		ms_report_stack(f, id & ~MS_SITE_SHARED, 20);
		return;
	}
	char where[256];
	ms_symbolize(frames[0], where, sizeof where);
	ms_fmt(f, "%s\n%20s(its callers: not kept, this line's stack was taken for the first "
		  "mutex it %s)\n", ms_symbol_fit(where, WIDTH - 20), "", verb);
}

static void all_stacks(struct ms_fmt *f, const struct ms_blame *list, uint64_t birth,
		       uint32_t first_stack, uint32_t init_stack)
{
	section(f, list, birth, MS_BLAME_WAIT,
		"who waited: the stacks of the threads that waited", "waited");
	section(f, list, birth, MS_BLAME_HOLD,
		"who made them wait: the unlocks that ended the holds they waited behind",
		"caused");
	site_stack(f, "first locked at   ", first_stack, "locked");
	site_stack(f, "initialised at    ", init_stack, "initialised");
}

void ms_report_mutex_stacks(struct ms_fmt *f, uint32_t r)
{
	const struct ms_record *rec = ms_rec(r);
	uint64_t birth = LOAD(&rec->birth);
	all_stacks(f, ms_blame_of(r, birth), birth, LOAD(&rec->first_stack),
		   LOAD(&ms_table.init_stacks[r]));
}

void ms_report_site_stacks(struct ms_fmt *f, const struct ms_site *s)
{
	all_stacks(f, __atomic_load_n(&s->blame, __ATOMIC_ACQUIRE), 0, LOAD(&s->first_stack),
		   LOAD(&s->init_stack));
}
