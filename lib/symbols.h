/* symbols.h - code addresses as "function+0x2a (module)", at report time. */
#ifndef MUTEXSTAT_SYMBOLS_H
#define MUTEXSTAT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* Writes the description of a return address into out; returns out. */
const char *ms_symbolize(uintptr_t addr, char *out, size_t cap);

#endif
