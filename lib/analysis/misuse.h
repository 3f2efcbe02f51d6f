/* misuse.h - where each record's newest misuse of each kind happened:
 * the call (its thread, caller, glibc's answer) and the stack it
 * captured, kept beside the cold part.  The record
 * layer keeps them as a misuse happens; the report reads them, and so
 * does an ended life's site line (ended.c), which keeps the newest. */
#ifndef MUTEXSTAT_MISUSE_H
#define MUTEXSTAT_MISUSE_H

#include "core/ring.h"
#include "core/table.h"

#include <stdint.h>

/* Misuse `kind` of record r: the call v (order, thread, caller, operation,
 * glibc's answer; its side-ring entry's) and its captured stack (0: none). */
void ms_misuse_keep(uint32_t r, enum ms_misuse kind, const struct ms_op_view *v, uint32_t stack);
/* The newest operation of r's current life that made a misuse of this
 * kind, and its stack (0: not captured); 0 if none is known.  Where
 * another record's misuse took its place beside the cold part, from the
 * side ring, without a stack. */
int ms_misuse_last(uint32_t r, enum ms_misuse kind, struct ms_op_view *out, uint32_t *stack);

#endif
