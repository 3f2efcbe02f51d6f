/* stack_blocked.c - where another thread is, without a signal, when it is
 * blocked in the kernel: see stack_blocked.h.
 *
 * /proc/self/task/TID/syscall gives its stack pointer and the instruction
 * after its system call; libunwind walks on from those two.  A frame that
 * needs %rbp (frame pointers) has it worked out from its function's
 * prologue (frame_pointer).  The walk only reads: Debian's libunwind checks
 * each address, and a guessed register goes into our copy of the context.
 * The thread may run meanwhile, so the walk is kept only if /proc shows the
 * same call, arguments, stack pointer and program counter after it, and no
 * context switch.  See doc/processes-and-signals.md, "Where a thread is now". */
#define _GNU_SOURCE
#include "glibc/loader_lock.h"
#include "stacks/stack_blocked.h"
#include "base/internal.h"
#include "stacks/stack.h"
#include "core/thread_pool.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <ucontext.h>

typedef int (*init_fn)(unw_cursor_t *, unw_context_t *, int);
typedef int (*step_fn)(unw_cursor_t *);
typedef int (*get_reg_fn)(unw_cursor_t *, int, unw_word_t *);
typedef int (*proc_info_fn)(unw_cursor_t *, unw_proc_info_t *);

static init_fn init2_p;
static step_fn step_p;
static get_reg_fn get_reg_p;
static proc_info_fn proc_info_p;
static int looked_up;

static int lookup(void)
{
	if (!__atomic_load_n(&looked_up, __ATOMIC_ACQUIRE)) {
		if (ms_loader_busy())
			return 0; /* dlsym would wait for ever: a later dump looks */
		init2_p = (init_fn)ms_stack_symbol("_ULx86_64_init_local2");
		step_p = (step_fn)ms_stack_symbol("_ULx86_64_step");
		get_reg_p = (get_reg_fn)ms_stack_symbol("_ULx86_64_get_reg");
		proc_info_p = (proc_info_fn)ms_stack_symbol("_ULx86_64_get_proc_info");
		__atomic_store_n(&looked_up, 1, __ATOMIC_RELEASE);
	}
	return init2_p && step_p && get_reg_p && proc_info_p;
}

/* Copies len bytes of our own memory at addr; 0 if any is not mapped. */
static int peek(uintptr_t addr, void *out, size_t len)
{
	struct iovec local = { out, len }, remote = { (void *)addr, len };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* Whether a return address follows a call instruction: the 5-byte direct
 * call, or the indirect ones (through a register, [reg], [reg+d8],
 * [rip+d32], [reg+d32]). */
static int after_call(uintptr_t ret)
{
	unsigned char b[7];
	if (ret < 7 || !peek(ret - 7, b, sizeof b))
		return 0;
	return b[2] == 0xe8 ||
	       (b[5] == 0xff && ((b[6] & 0xf8) == 0xd0 || (b[6] & 0xf8) == 0x10)) ||
	       (b[4] == 0xff && (b[5] & 0xf8) == 0x50) ||
	       (b[1] == 0xff && (b[2] == 0x15 || (b[2] & 0xf8) == 0x90));
}

/* Bytes of a ModRM byte and what follows it (SIB, displacement). */
static unsigned modrm_len(const unsigned char *p)
{
	unsigned mod = p[0] >> 6, rm = p[0] & 7, n = 1;
	if (mod != 3 && rm == 4)
		n++; /* SIB */
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && (rm == 5 || (rm == 4 && (p[1] & 7) == 5))))
		n += 4;
	return n;
}

/* The length of one instruction a compiler mixes into a prologue (moves,
 * lea, xor, moves of constants), 0 for any other: the decoding ends. */
static unsigned prologue_insn_len(const unsigned char *p)
{
	unsigned rex = (p[0] & 0xf0) == 0x40;
	unsigned char op = p[rex];
	switch (op) {
	case 0x89: case 0x8b: case 0x8d: case 0x31: case 0x33: case 0x85:
		return rex + 1 + modrm_len(p + rex + 1);
	case 0xc7:
		return rex + 1 + modrm_len(p + rex + 1) + 4;
	case 0xc6:
		return rex + 1 + modrm_len(p + rex + 1) + 1;
	default:
		if (op >= 0xb8 && op <= 0xbf) /* mov $imm32 (imm64 with REX.W) */
			return rex + 1 + ((p[0] & 0xf8) == 0x48 ? 8 : 4);
		return 0;
	}
}

/* The %rbp of a frame-pointer frame whose stack pointer at its call is
 * sp, from its function's prologue (from start): [endbr64] push %rbp;
 * mov %rsp,%rbp; pushes of saved registers; sub $N,%rsp -- with moves the
 * compiler mixed in (-O2) -- so %rbp is sp plus the pushes and N.
 * Believed only if it points at a frame record: the caller's %rbp (zero
 * or further up) and an address just after a call.  0 if not: another
 * prologue, or a frame that moved its stack pointer since (alloca,
 * arguments pushed for a call). */
static uintptr_t frame_pointer(uintptr_t start, uintptr_t sp)
{
	unsigned char b[64 + 16];
	unsigned i = 0;
	uintptr_t below = 0; /* from %rbp down to sp */
	if (!peek(start, b, sizeof b))
		return 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4; /* endbr64 */
	if (b[i++] != 0x55)
		return 0;
	int framed = 0; /* mov %rsp,%rbp seen */
	while (i < 64) {
		unsigned len;
		if (b[i] == 0x48 && ((b[i + 1] == 0x89 && b[i + 2] == 0xe5) ||
				     (b[i + 1] == 0x8b && b[i + 2] == 0xec))) {
			framed = 1;
			i += 3;
		} else if (b[i] >= 0x50 && b[i] <= 0x57) { /* push of rax..rdi */
			if (!framed)
				return 0; /* %rbp would not point at the record */
			below += 8;
			i += 1;
		} else if (b[i] == 0x41 && b[i + 1] >= 0x50 && b[i + 1] <= 0x57) { /* r8..r15 */
			if (!framed)
				return 0;
			below += 8;
			i += 2;
		} else if (framed && b[i] == 0x48 && b[i + 1] == 0x83 && b[i + 2] == 0xec) {
			below += b[i + 3]; /* sub $imm8,%rsp */
			break;
		} else if (framed && b[i] == 0x48 && b[i + 1] == 0x81 && b[i + 2] == 0xec) {
			below += (uintptr_t)b[i + 3] | (uintptr_t)b[i + 4] << 8 |
				 (uintptr_t)b[i + 5] << 16 | (uintptr_t)b[i + 6] << 24;
			break;
		} else if ((len = prologue_insn_len(b + i)))
			i += len;
		else
			break; /* a call, a jump, or what we do not decode */
	}
	if (!framed)
		return 0;
	uintptr_t bp = sp + below, record[2];
	if (!peek(bp, record, sizeof record) || (record[0] && record[0] <= bp) ||
	    !after_call(record[1]))
		return 0;
	return bp;
}

/* Walks from pc and sp (and bp, 0 if unknown) into frames.  If it
 * stops at a frame that %rbp was never found for, *guess is that frame's
 * %rbp as its prologue tells it, if it can (else 0). */
static int walk(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t *frames,
		int max, uintptr_t *guess)
{
	ucontext_t uc;
	unw_cursor_t c;
	*guess = 0;
	memset(&uc, 0, sizeof uc);
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
	/* a "signal frame": pc is where the thread is, not a return address */
	if (init2_p(&c, (unw_context_t *)&uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return 0;
	int n = 0;
	frames[n++] = pc;
	while (n < max) {
		unw_word_t fsp = 0, fbp = 0, ip = 0;
		unw_cursor_t here = c; /* read only, for the guess below */
		if (step_p(&c) > 0 && get_reg_p(&c, UNW_REG_IP, &ip) >= 0 && ip) {
			frames[n++] = ip;
			continue;
		}
		unw_proc_info_t pi;
		if (get_reg_p(&here, UNW_X86_64_RBP, &fbp) >= 0 && !fbp &&
		    get_reg_p(&here, UNW_REG_SP, &fsp) >= 0 &&
		    proc_info_p(&here, &pi) >= 0)
			*guess = frame_pointer(pi.start_ip, fsp);
		break;
	}
	return n;
}

/* The last two numbers of the line: its stack pointer and program
 * counter (hexadecimal); 0 unless the thread is blocked ("running"). */
static int sp_and_pc(const char *line, uintptr_t *sp, uintptr_t *pc)
{
	const char *words[9];
	int n = 0;
	for (const char *p = line; *p && n < 9; ) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\n')
			p++;
	}
	/* "NR ARGS... SP PC", or "-1 SP PC" blocked outside a system call */
	if (n != 9 && !(n == 3 && line[0] == '-'))
		return 0;
	uintptr_t v[2] = { 0, 0 };
	for (int i = 0; i < 2; i++) {
		const char *p = words[n - 2 + i];
		if (p[0] != '0' || p[1] != 'x')
			return 0;
		for (p += 2; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
			v[i] = v[i] * 16 + (uintptr_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	}
	*sp = v[0];
	*pc = v[1];
	return *sp && *pc;
}

/* The thread's context switches so far, voluntary and not (/proc's
 * status); 0 if unknown.  A thread blocked all along has made none. */
static unsigned long switches(uint32_t tid)
{
	char buf[4096];
	unsigned long n = 0;
	if (!ms_task_file(tid, "status", buf, sizeof buf))
		return 0;
	for (const char *p = buf; (p = strstr(p, "ctxt_switches:")) != NULL;) {
		for (p += 14; *p == ' ' || *p == '\t'; p++)
			;
		unsigned long v = 0;
		for (; *p >= '0' && *p <= '9'; p++)
			v = v * 10 + (unsigned long)(*p - '0');
		n += v;
	}
	return n;
}

int ms_stack_blocked_available(void)
{
	return ms_stack_available() && lookup();
}

int ms_stack_blocked(uint32_t tid, uintptr_t *frames, int max)
{
	char before[256], after[256];
	uintptr_t sp, pc, bp;
	int saved = errno, n = 0;
	unsigned long ran = switches(tid);
	if (max < 2 || !ms_task_file(tid, "syscall", before, sizeof before) ||
	    !sp_and_pc(before, &sp, &pc) || !lookup() || !ms_stack_begin()) {
		errno = saved;
		return 0;
	}
	int cancel = ms_cancel_off(); /* libunwind read()s to probe memory */
	n = walk(pc, sp, 0, frames, max, &bp);
	/* stopped at a frame-pointer frame: again, with its %rbp (the frames
	 * above it all keep %rbp where the call frame information says) */
	if (bp) {
		uintptr_t again[MS_MAX_FRAMES], no_guess;
		int m = walk(pc, sp, bp, again, max < MS_MAX_FRAMES ? max : MS_MAX_FRAMES,
			     &no_guess);
		if (m > n) {
			memcpy(frames, again, (size_t)m * sizeof *frames);
			n = m;
		}
	}
	ms_cancel_restore(cancel);
	ms_stack_end();
	/* it moved while walked: what was read may be half old, half new */
	if (!ms_task_file(tid, "syscall", after, sizeof after) || strcmp(before, after) != 0 ||
	    switches(tid) != ran)
		n = 0;
	errno = saved;
	return n;
}
#else
int ms_stack_blocked_available(void)
{
	return 0;
}

int ms_stack_blocked(uint32_t tid, uintptr_t *frames, int max)
{
	(void)tid;
	(void)frames;
	(void)max;
	return 0;
}
#endif
