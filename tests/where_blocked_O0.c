/* where_blocked_O0.c - where_blocked.c unoptimised, whatever CFLAGS say
 * (automake puts the user's -O2 last): code as a debug build makes it,
 * every frame found through %rbp. */
#pragma GCC optimize("O0")
#include "where_blocked.c"
