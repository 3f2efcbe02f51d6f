/* misuse.h - where each record's newest misuse of each kind happened:
 * the stack its call captured, kept beside the cold part, and the side
 * ring's entry it goes with (the thread, glibc's answer).  The record
 * layer keeps them as a misuse happens; the report reads them, and so
 * does an ended life's site line (ended.c), which keeps the newest. */
#ifndef MUTEXSTAT_MISUSE_H
#define MUTEXSTAT_MISUSE_H

#include "core/ring.h"
#include "core/table.h"

#include <stdint.h>

/* Misuse `kind` of record r, its side-ring entry written with order o by
 * thread tid, captured stack (0: none). */
void ms_misuse_keep(uint32_t r, enum ms_misuse kind, uint64_t o, uint32_t stack, uint32_t tid);
/* The newest operation of r's current life that made a misuse of this
 * kind, from the side ring, and its stack (0: not captured); 0 if none is
 * left. */
int ms_misuse_last(uint32_t r, enum ms_misuse kind, struct ms_op_view *out, uint32_t *stack);

#endif
