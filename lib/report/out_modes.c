/* out_modes.c - the modes of a read-write lock's calls, from its recent
 * operations; see out_modes.h. */
#define _GNU_SOURCE
#include "report/out_modes.h"
#include "stacks/depot.h"

/* Room for the longest history and the side ring, as out_json.c's. */
#define VIEWS (1024 + MS_FAIL_RING)

static void add_call(struct ms_out_calls *out, uintptr_t caller, uint32_t mode)
{
	for (uint32_t i = 0; i < out->n; i++)
		if (out->c[i].caller == caller) {
			out->c[i].modes |= mode;
			return;
		}
	if (out->n < MS_OUT_CALLS) {
		out->c[out->n].caller = caller;
		out->c[out->n++].modes = mode;
	}
}

void ms_out_calls_of(struct ms_out_calls *out, uint32_t r, const struct ms_site *site)
{
	out->n = 0;
	out->one = site ? ms_out_site_one_mode(site) : ms_out_rec_one_mode(r);
	if (out->one)
		return; /* every stack is that mode's: no need to look */
	struct ms_op_view v[VIEWS];
	uint32_t first, torn;
	uint32_t n = site ? ms_site_history_read(site, v, &first, &torn)
			  : ms_history_read(r, v, &first, &torn);
	for (uint32_t i = 0; i < n; i++) {
		const char *mode = ms_out_op_mode(v[i].op);
		if (mode && v[i].caller)
			add_call(out, v[i].caller, mode[0] == 'r' ? MS_OUT_READ : MS_OUT_WRITE);
	}
}

const char *ms_out_call_mode(const struct ms_out_calls *calls, uintptr_t caller)
{
	if (calls->one)
		return calls->one;
	for (uint32_t i = 0; i < calls->n; i++)
		if (calls->c[i].caller == caller)
			return calls->c[i].modes == MS_OUT_READ ? "read"
			       : calls->c[i].modes == MS_OUT_WRITE ? "write" : NULL;
	return NULL;
}

const char *ms_out_stack_mode(const struct ms_out_calls *calls, uint32_t stack)
{
	if (calls->one)
		return calls->one;
	const uintptr_t *frames;
	return ms_depot_get(stack, &frames) > 0 ? ms_out_call_mode(calls, frames[0]) : NULL;
}
