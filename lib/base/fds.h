/* fds.h - the library's own file descriptors, kept out of the program's way.
 *
 * A program may count on the numbers open() gives it (the lowest free one:
 * 3 in a process started with 0, 1 and 2), and daemons and ssh close every
 * descriptor above 2 (closefrom) and then open their own files, which get
 * the numbers of whatever the library had there.  So what the library keeps
 * open -- its copy of stderr, libunwind's pipe (stack.c), the launcher's
 * list of processes -- lives at a high number, above what programs use, and code
 * that closes one of them first checks that it still is the library's. */
#ifndef MUTEXSTAT_FDS_H
#define MUTEXSTAT_FDS_H

/* fd moved to a high number (close-on-exec, the same open file): the first
 * free one from 1000 (200, 10 under a lower RLIMIT_NOFILE; under a limit
 * of 11 or less, the highest free one), and fd closed.
 * fd itself if there is no room (ours all the same); errno as it was. */
int ms_fd_move_high(int fd);

/* close(2) as the system call, for every descriptor the library opens:
 * not the program's close() (fds.c says why), nor the library's own
 * (wrap/interpose_process.c, which looks at fds 0-2 for the program), nor
 * glibc's, which is a cancellation point -- a report is not cut short by
 * a cancellation request of the thread writing it. */
int ms_fd_close(int fd);

/* dup(fd) at a high number, close-on-exec, as above; -1 if it fails. */
int ms_fd_dup_high(int fd);

/* ms_fd_dup_high, else the lowest free number from 3 (ours all the
 * same: no room up high); -1 if it fails. */
int ms_fd_dup_anywhere(int fd);

/* The program closed the descriptors first..last, or put others at their
 * numbers (close, close_range, closefrom, dup2, dup3: wrap/
 * interpose_process.c): none there is ours any more, whatever opens there
 * next -- even a close-on-exec copy of the same file, which
 * ms_fd_is_ours could not tell from ours. */
void ms_fds_forget(unsigned first, unsigned last);
/* Whether one of ours is among first..last (a look, no change). */
int ms_fds_in(unsigned first, unsigned last);

/* Whether fd is one the two calls above made and still the same open file
 * (the program may have closed ours and opened its own there since): the
 * API's mutexstat_dump() answers EBADF for ours, as write(2) would have in
 * the program without the library.  Async-signal-safe (fstat). */
int ms_fd_is_ours(int fd);

#endif
