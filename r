mutexstat: exit_paths (pid 22289) ran 6.90 ms: 1 thread used mutexes, 2 mutexes tracked, 0 untracked
  hold times: on mutexes that made a thread wait (0), each of the first 4096 acquisitions, then 1 in 16
  call stacks: each of a mutex's first 256 contention events, then 1 in 8 (MUTEXSTAT_STACK_SAMPLE); 2 distinct

Top 2 mutexes by wait:
  # mutex                acquired  contended  wait tot  wait max  hold avg  hold max  changes  first locked at
  1 0x562a858452a0           1000          0      0 ns      0 ns         -         -        0  exit_paths.c:148
  2 0x562a85845220              1          0      0 ns      0 ns         -         -        0  exit_paths.c:145

#1 mutex 0x562a858452a0 (normal, no init seen)
  trylock 0 ok, 0 busy; timed out 0; most waiters at once 0; condition waits 0
  first locked at   thousand_then_close+0x38 (tests/exit_paths.c:148, exit_paths)
  recent operations, oldest first (order = happened-before order across the process; at = since start):
       order   thread  operation          result           at         caller
        1989    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        1990    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        1991    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        1992    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        1993    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        1994    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        1995    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        1996    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        1997    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        1998    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        1999    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        2000    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        2001    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        2002    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)
        2003    22290  lock               ok               -          thousand_then_close+0x38 (tests/exit_paths.c:148)
        2004    22290  unlock             ok               -          thousand_then_close+0x48 (tests/exit_paths.c:150)

#2 mutex 0x562a85845220 (normal, no init seen)
  trylock 0 ok, 0 busy; timed out 0; most waiters at once 0; condition waits 0
  first locked at   thousand_then_close+0x1d (tests/exit_paths.c:145, exit_paths)
  recent operations, oldest first (order = happened-before order across the process; at = since start):
       order   thread  operation          result           at         caller
           2    22290  lock               ok               -          thousand_then_close+0x1d (tests/exit_paths.c:145)
           3    22290  unlock             ok               -          thousand_then_close+0x2a (tests/exit_paths.c:146)
