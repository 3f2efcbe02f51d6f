/* program_frame.c - where a stack leaves the system headers' code; see
 * program_frame.h. */
#include "stacks/program_frame.h"
#include "stacks/symbols.h"
#include "core/table.h"

/* 1 if addr's source line is known and is a system header's, 0 if it is
 * the program's, -1 if it has none (no line information: nothing says
 * whose code it is). */
static int in_header(uintptr_t addr)
{
	struct ms_frame fr;
	if (ms_symbolize_frame(addr, 1, &fr) < 0 || !fr.file[0])
		return -1;
	return ms_symbols_system_header(fr.file);
}

uintptr_t ms_program_frame(uintptr_t at, ms_stack_id stack)
{
	const uintptr_t *frames;
	int n = stack && !(stack & MS_SITE_SHARED) ? ms_depot_get(stack, &frames) : 0, i = 0;
	while (i < n && frames[i] != at)
		i++;
	if (i == n || in_header(at) != 1)
		return at;
	while (++i < n) {
		int h = in_header(frames[i]);
		if (h == 0)
			return frames[i];
		if (h < 0)
			break; /* code without lines: a library's, not the program's */
	}
	return at;
}
