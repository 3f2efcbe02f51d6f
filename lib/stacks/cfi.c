/* cfi.c - the stack walker of cfi.h: a frame rule per return address, read
 * from .eh_frame on first sight and kept in one cache for all threads.
 *
 * A rule gives the caller's rip, rsp and rbp: CFA = this frame's rsp or rbp
 * plus an offset; the return address is at CFA-8; the caller's rsp is the
 * CFA; its rbp is this frame's, or saved at CFA+k.  No other register
 * matters for code whose rule we read.  Nothing here locks, allocates or
 * makes a system call (_dl_find_object is lock-free; .eh_frame_hdr is a
 * search table), and the cache is a fixed array: two threads writing one
 * entry at once leave it unreadable (its check fails), never wrong. */
#define _GNU_SOURCE
#include "stacks/cfi.h"
#include "base/internal.h"
#include "core/thread.h"

#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* DLFO_STRUCT_HAS_EH_DBASE: defined (as 0 on x86-64: so defined(), not its
 * value) by the <dlfcn.h> of a glibc with _dl_find_object, 2.35 and later */
#if defined(__x86_64__) && defined(DLFO_STRUCT_HAS_EH_DBASE)

/* A rule, in 64 bits: the CFA offset in the low 32; rbp's save slot,
 * relative to the CFA, in the next 16; then flags. */
#define R_CFA_RBP (1ull << 48)   /* CFA = rbp + offset (else rsp + offset) */
#define R_RBP_SAVED (1ull << 49) /* the caller's rbp is at CFA + slot */
#define R_END (1ull << 50)       /* no caller: the outermost frame */
#define R_READ (1ull << 51)      /* a rule this walker reads */
#define R_KNOWN (1ull << 52)     /* set in every computed rule */

#define CFI_CACHE_BITS 12
#define CFI_CACHE (1u << CFI_CACHE_BITS) /* entries of 24 bytes, in .bss */
#define CFI_PROBES 8

struct cfi_entry {
	uintptr_t pc;
	uint64_t rule;
	uint64_t check; /* of pc and rule: a torn entry fails it */
};

static struct cfi_entry cache[CFI_CACHE];
static uint64_t computed;

/* The top of this thread's stack: every address the walk reads is below
 * it and above the walk's start, so a rule that does not fit the code (a
 * stale one, after a dlclose and another object loaded at the same
 * address) gives wrong frames at worst, never a read of unmapped memory.
 * 0 until known: a thread the library did not see start finds it at its
 * first walk (top_found_late); 1 where it cannot be known (no walk). */
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));
/* The main thread's: ld.so's __libc_stack_end, the stack pointer at the
 * process's entry (the bottom frame's, _start's, caller would be above
 * it, and _start has none); read at start-up, 0 if not found. */
static uintptr_t main_top;

static inline uint64_t entry_check(uintptr_t pc, uint64_t rule)
{
	return ((uint64_t)pc ^ rule ^ (rule >> 29)) * 0x9e3779b97f4a7c15ull | 1;
}

static inline unsigned home(uintptr_t pc)
{
	return (unsigned)(((uint64_t)pc * 0x9e3779b97f4a7c15ull) >> (64 - CFI_CACHE_BITS));
}

/* ---- reading .eh_frame ------------------------------------------------- */

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

struct reader {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_bytes(struct reader *r, unsigned n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, r->p, n); /* little-endian */
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct reader *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (r->bad || r->p >= r->end || shift > 63) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t rd_sleb(struct reader *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (r->bad || r->p >= r->end || shift > 63) {
			r->bad = 1;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* A pointer in encoding enc; datarel is relative to base.  Indirect ones
 * (personality routines) are read but not followed: only skipped. */
static uintptr_t rd_encoded(struct reader *r, uint8_t enc, uintptr_t base)
{
	const uint8_t *at = r->p;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: v = rd_bytes(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_bytes(r, 2); break;
	case 0x03: v = rd_bytes(r, 4); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_bytes(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_bytes(r, 4); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0: break;
	case DW_EH_PE_pcrel: v += (uintptr_t)at; break;
	case DW_EH_PE_datarel: v += base; break;
	default: r->bad = 1; return 0;
	}
	return (uintptr_t)v;
}

/* How rbp or the return address is recovered (the CFA has its own rule). */
enum how {
	UNSET,     /* no rule given: not one we read (not the stack's end) */
	SAME,      /* the caller's value is this frame's */
	OFFSET,    /* saved at CFA + offset */
	UNDEFINED, /* DW_CFA_undefined: for the return address, the end */
	OTHER,     /* in a register, an expression: not one we read */
};

struct row {
	int cfa_reg; /* 6 rbp, 7 rsp; another: not one we read */
	int64_t cfa_off;
	enum how rbp, ra;
	int64_t rbp_off, ra_off;
};

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16
#define STATE_DEPTH 8

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int augmented; /* "z...": FDEs have augmentation data */
	int signal_frame;
	const uint8_t *insns, *insns_end;
};

static void set_reg(struct row *row, uint64_t reg, enum how how, int64_t off)
{
	if (reg == REG_RBP) {
		row->rbp = how;
		row->rbp_off = off;
	} else if (reg == REG_RA) {
		row->ra = how;
		row->ra_off = off;
	}
}

static void restore_reg(struct row *row, const struct row *initial, uint64_t reg)
{
	if (reg == REG_RBP)
		set_reg(row, reg, initial->rbp, initial->rbp_off);
	else if (reg == REG_RA)
		set_reg(row, reg, initial->ra, initial->ra_off);
}

/* Run a CFA program from loc until the row for pc: 0, or -1 if it has an
 * instruction this walker does not know. */
static int run_program(struct reader *r, const struct cie *cie, uintptr_t loc,
		       uintptr_t pc, struct row *row, const struct row *initial)
{
	struct row saved[STATE_DEPTH];
	int depth = 0;
	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t reg, delta = 0;
		switch (op >> 6) {
		case 1:
			delta = op & 0x3f;
			goto advance;
		case 2:
			set_reg(row, op & 0x3f, OFFSET,
				(int64_t)rd_uleb(r) * cie->data_align);
			continue;
		case 3:
			restore_reg(row, initial, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			continue;
		case 0x01: /* set_loc */
			loc = rd_encoded(r, cie->fde_enc, 0);
			if (loc > pc)
				return 0;
			continue;
		case 0x02: delta = rd_bytes(r, 1); goto advance;
		case 0x03: delta = rd_bytes(r, 2); goto advance;
		case 0x04: delta = rd_bytes(r, 4); goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(r);
			set_reg(row, reg, OFFSET, (int64_t)rd_uleb(r) * cie->data_align);
			continue;
		case 0x06: /* restore_extended */
			restore_reg(row, initial, rd_uleb(r));
			continue;
		case 0x07: /* undefined */
			set_reg(row, rd_uleb(r), UNDEFINED, 0);
			continue;
		case 0x08: /* same_value */
			set_reg(row, rd_uleb(r), SAME, 0);
			continue;
		case 0x09: /* register */
		case 0x0a: /* remember_state: the whole row, CFA included */
			if (depth == STATE_DEPTH)
				return -1;
			saved[depth++] = *row;
			continue;
		case 0x0b: /* restore_state */
			if (depth == 0)
				return -1;
			*row = saved[--depth];
			continue;
		case 0x0c: /* def_cfa */
			row->cfa_reg = (int)rd_uleb(r);
			row->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0d: /* def_cfa_register */
			row->cfa_reg = (int)rd_uleb(r);
			continue;
		case 0x0e: /* def_cfa_offset */
			row->cfa_off = (int64_t)rd_uleb(r);
			continue;
		case 0x0f: /* def_cfa_expression */
			return -1;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = rd_uleb(r);
			delta = rd_uleb(r);
			if (delta > (uint64_t)(r->end - r->p))
				return -1;
			r->p += delta;
			set_reg(row, reg, OTHER, 0);
			continue;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(r);
			set_reg(row, reg, OFFSET, rd_sleb(r) * cie->data_align);
			continue;
		case 0x12: /* def_cfa_sf */
			row->cfa_reg = (int)rd_uleb(r);
			row->cfa_off = rd_sleb(r) * cie->data_align;
			continue;
		case 0x13: /* def_cfa_offset_sf */
			row->cfa_off = rd_sleb(r) * cie->data_align;
			continue;
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(r);
			(void)rd_sleb(r);
			set_reg(row, reg, OTHER, 0);
			continue;
		case 0x2e: /* GNU_args_size */
			(void)rd_uleb(r);
			continue;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(r);
			set_reg(row, reg, OFFSET, -(int64_t)rd_uleb(r) * cie->data_align);
			continue;
		default:
			return -1;
		}
	advance:
		loc += delta * cie->code_align;
		if (loc > pc)
			return 0;
	}
	return r->bad ? -1 : 0;
}

/* The CIE at p: 0, or -1 if it is not one this walker reads. */
static int read_cie(const uint8_t *p, struct cie *cie)
{
	struct reader r = { p, p + 4, 0 };
	uint64_t len = rd_bytes(&r, 4);
	if (len == 0 || len >= 0xfffffff0u)
		return -1;
	r.end = r.p + len;
	if (rd_bytes(&r, 4) != 0) /* CIE id in .eh_frame */
		return -1;
	uint8_t version = (uint8_t)rd_bytes(&r, 1);
	if (version != 1 && version != 3)
		return -1;
	const char *aug = (const char *)r.p;
	size_t auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (auglen == (size_t)(r.end - r.p))
		return -1;
	r.p += auglen + 1;
	if (strstr(aug, "eh")) /* an old GCC's pointer: not seen on x86-64 */
		return -1;
	cie->code_align = rd_uleb(&r);
	cie->data_align = rd_sleb(&r);
	uint64_t ra = version == 1 ? rd_bytes(&r, 1) : rd_uleb(&r);
	if (ra != REG_RA)
		return -1;
	cie->fde_enc = 0; /* absptr */
	cie->signal_frame = 0;
	cie->augmented = aug[0] == 'z';
	if (cie->augmented) {
		uint64_t n = rd_uleb(&r);
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return -1;
		struct reader a = { r.p, r.p + n, 0 };
		r.p += n;
		for (const char *c = aug + 1; *c; c++) {
			if (*c == 'R')
				cie->fde_enc = (uint8_t)rd_bytes(&a, 1);
			else if (*c == 'L')
				(void)rd_bytes(&a, 1);
			else if (*c == 'P') {
				uint8_t enc = (uint8_t)rd_bytes(&a, 1);
				(void)rd_encoded(&a, enc & 0x7f, 0);
			} else if (*c == 'S')
				cie->signal_frame = 1;
			else
				return -1; /* 'B' and others: not ours to read */
		}
		if (a.bad)
			return -1;
	} else if (aug[0])
		return -1;
	if (r.bad)
		return -1;
	cie->insns = r.p;
	cie->insns_end = r.end;
	return 0;
}

/* The FDE covering pc, by the binary search table of .eh_frame_hdr. */
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t pc)
{
	struct reader r = { hdr, hdr + 4, 0 };
	uint8_t version = (uint8_t)rd_bytes(&r, 1);
	uint8_t frame_enc = (uint8_t)rd_bytes(&r, 1);
	uint8_t count_enc = (uint8_t)rd_bytes(&r, 1);
	uint8_t table_enc = (uint8_t)rd_bytes(&r, 1);
	/* the linker writes datarel sdata4 entries; anything else: give up */
	if (version != 1 || frame_enc == DW_EH_PE_omit || count_enc == DW_EH_PE_omit ||
	    table_enc != (DW_EH_PE_datarel | 0x0b))
		return NULL;
	r.end = hdr + 64;
	(void)rd_encoded(&r, frame_enc, (uintptr_t)hdr);
	uintptr_t count = rd_encoded(&r, count_enc, (uintptr_t)hdr);
	if (r.bad || count == 0)
		return NULL;
	const int32_t *table = (const int32_t *)(const void *)r.p; /* pairs */
	uintptr_t lo = 0, hi = count;
	while (hi - lo > 1) {
		uintptr_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)hdr + (intptr_t)table[2 * mid] <= pc)
			lo = mid;
		else
			hi = mid;
	}
	if ((uintptr_t)hdr + (intptr_t)table[2 * lo] > pc)
		return NULL;
	return hdr + (intptr_t)table[2 * lo + 1];
}

/* The rule for return address pc (the walk asks for pc-1: inside the
 * call).  Always has R_KNOWN; R_READ only if the frame can be walked. */
static uint64_t rule_compute(uintptr_t pc)
{
	__atomic_add_fetch(&computed, 1, __ATOMIC_RELAXED);
	struct dl_find_object dlfo;
	if (_dl_find_object((void *)pc, &dlfo) != 0 || !dlfo.dlfo_eh_frame)
		return R_KNOWN;
	const uint8_t *fde = find_fde(dlfo.dlfo_eh_frame, pc);
	if (!fde)
		return R_KNOWN;
	struct reader r = { fde, fde + 4, 0 };
	uint64_t len = rd_bytes(&r, 4);
	if (len == 0 || len >= 0xfffffff0u)
		return R_KNOWN;
	r.end = r.p + len;
	const uint8_t *id_at = r.p;
	uint32_t cie_off = (uint32_t)rd_bytes(&r, 4);
	struct cie cie;
	if (r.bad || cie_off == 0 || read_cie(id_at - cie_off, &cie) != 0 ||
	    cie.signal_frame)
		return R_KNOWN;
	uintptr_t begin = rd_encoded(&r, cie.fde_enc, 0);
	uintptr_t range = rd_encoded(&r, cie.fde_enc & 0x0f, 0);
	if (r.bad || pc < begin || pc - begin >= range)
		return R_KNOWN;
	if (cie.code_align == 0)
		return R_KNOWN;
	if (cie.augmented) { /* the FDE's augmentation data (its LSDA): skipped */
		uint64_t n = rd_uleb(&r);
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return R_KNOWN;
		r.p += n;
	}
	struct row initial = { REG_RSP, 8, SAME, UNSET, 0, 0 };
	struct reader ci = { cie.insns, cie.insns_end, 0 };
	if (run_program(&ci, &cie, 0, UINTPTR_MAX, &initial, &initial) != 0)
		return R_KNOWN;
	struct row row = initial;
	if (run_program(&r, &cie, begin, pc, &row, &initial) != 0)
		return R_KNOWN;
	if (row.ra == UNDEFINED)
		return R_KNOWN | R_READ | R_END;
	if (row.ra != OFFSET || row.ra_off != -8 ||
	    (row.cfa_reg != REG_RSP && row.cfa_reg != REG_RBP) ||
	    row.cfa_off < 8 || row.cfa_off > INT32_MAX)
		return R_KNOWN;
	uint64_t rule = R_KNOWN | R_READ | (uint32_t)row.cfa_off;
	if (row.cfa_reg == REG_RBP)
		rule |= R_CFA_RBP;
	if (row.rbp == OFFSET) {
		/* saved below the return address, within the frame */
		if (row.rbp_off > -16 || row.rbp_off < INT16_MIN)
			return R_KNOWN;
		rule |= R_RBP_SAVED | (uint64_t)(uint16_t)(int16_t)row.rbp_off << 32;
	} else if (row.rbp != SAME)
		return R_KNOWN; /* its value is lost or elsewhere */
	return rule;
}

/* The rule for return address pc, from the cache or computed into it. */
static inline __attribute__((always_inline)) uint64_t rule_for(uintptr_t pc)
{
	unsigned h = home(pc), free_slot = CFI_CACHE;
	for (unsigned i = 0; i < CFI_PROBES; i++) {
		struct cfi_entry *e = &cache[(h + i) & (CFI_CACHE - 1)];
		uint64_t check = __atomic_load_n(&e->check, __ATOMIC_ACQUIRE);
		uintptr_t at = __atomic_load_n(&e->pc, __ATOMIC_RELAXED);
		uint64_t rule = __atomic_load_n(&e->rule, __ATOMIC_RELAXED);
		if (at == pc && check == entry_check(pc, rule))
			return rule;
		if (!check) {
			free_slot = (h + i) & (CFI_CACHE - 1);
			break;
		}
	}
	uint64_t rule = rule_compute(pc);
	/* the first empty slot of the probe, else the home slot (a cache:
	 * the entry it replaces is computed again when next asked for) */
	struct cfi_entry *e = &cache[free_slot < CFI_CACHE ? free_slot : h];
	__atomic_store_n(&e->check, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->pc, pc, __ATOMIC_RELAXED);
	__atomic_store_n(&e->rule, rule, __ATOMIC_RELAXED);
	__atomic_store_n(&e->check, entry_check(pc, rule), __ATOMIC_RELEASE);
	return rule;
}

/* The walk, from the registers of ms_cfi_backtrace's caller at its call
 * (not static: the asm stub below jumps to it by name):
 * ip the return address, rsp the caller's stack pointer after the call
 * returns, rbp as the caller has it; memo, the caller's third argument. */
__attribute__((visibility("hidden"), used, noinline, noclone, no_sanitize_address)) int
ms_cfi_walk(uintptr_t *frames, int max, uintptr_t rbp, uintptr_t rsp, uintptr_t ip,
	    struct ms_walk_memo *memo);
/* The top of a thread the library did not see start (the main thread,
 * one started before the library): the main thread's, or glibc's
 * descriptor of its own thread, as at a start. */
static __attribute__((noinline)) uintptr_t top_found_late(void)
{
	uintptr_t top = syscall(SYS_gettid) == getpid() ? main_top
							: (uintptr_t)pthread_self();
	return top ? top : 1;
}

/* The walk from those registers below hi; m: the memory of the walk
 * before (thread.h's ms_walk_memo), NULL to walk without. */
static inline __attribute__((always_inline)) int
walk_from(uintptr_t *frames, int max, uintptr_t rbp, uintptr_t rsp, uintptr_t ip,
	  uintptr_t hi, struct ms_walk_memo *m)
{
	int n = 0;
	while (n < max) {
		uint64_t rule;
		if (m && n < MS_WALK_MEMO && m->frame[n].ip == ip) {
			rule = m->frame[n].rule;
		} else {
			rule = rule_for(ip - 1);
			if (m && n < MS_WALK_MEMO) {
				m->frame[n].ip = ip;
				m->frame[n].rule = rule;
			}
		}
		frames[n++] = ip;
		if (!(rule & R_READ))
			return -1;
		if (rule & R_END)
			return n;
		uintptr_t cfa = ((rule & R_CFA_RBP) ? rbp : rsp) + (uint32_t)rule;
		/* a stack grows down: each caller's frame is above, within
		 * the stack */
		if (cfa <= rsp || cfa > hi || (cfa & 7))
			return -1;
		if (rule & R_RBP_SAVED) {
			uintptr_t at = cfa + (int16_t)(rule >> 32);
			if (at < rsp)
				return -1;
			rbp = *(const uintptr_t *)at;
		}
		ip = *(const uintptr_t *)(cfa - 8);
		rsp = cfa;
		if (!ip)
			return n;
	}
	return n;
}

int ms_cfi_walk(uintptr_t *frames, int max, uintptr_t rbp, uintptr_t rsp, uintptr_t ip,
		struct ms_walk_memo *memo)
{
	uintptr_t hi = stack_hi;
	if (unlikely(!hi))
		hi = stack_hi = top_found_late();
	if (rsp >= hi) /* not known, or a signal stack, a coroutine's */
		return -1;
	if (!memo || __atomic_exchange_n(&memo->walking, 1, __ATOMIC_ACQUIRE))
		return walk_from(frames, max, rbp, rsp, ip, hi, NULL);
	int n = walk_from(frames, max, rbp, rsp, ip, hi, memo);
	__atomic_store_n(&memo->walking, 0, __ATOMIC_RELEASE);
	return n;
}

/* ms_cfi_backtrace: the caller's registers at the call, then the walk
 * (a tail call: this stub has no frame of its own). */
__asm__(".text\n"
	".globl ms_cfi_backtrace\n"
	".hidden ms_cfi_backtrace\n"
	".type ms_cfi_backtrace, @function\n"
	"ms_cfi_backtrace:\n"
	".cfi_startproc\n"
	"	movq %rdx, %r9\n"
	"	movq %rbp, %rdx\n"
	"	leaq 8(%rsp), %rcx\n"
	"	movq (%rsp), %r8\n"
	"	jmp ms_cfi_walk\n"
	".cfi_endproc\n"
	".size ms_cfi_backtrace, .-ms_cfi_backtrace\n");

int ms_cfi_available(void)
{
	return 1;
}

MS_BEFORE_ASAN_THREAD void ms_cfi_thread_starts(void)
{
	/* glibc keeps a thread's descriptor at the top of its stack block,
	 * the static TLS below it and the first frame below that, so all
	 * between a frame and it is mapped -- also on a stack the program
	 * gave with pthread_attr_setstack */
	stack_hi = (uintptr_t)pthread_self();
}

void ms_cfi_stack_top(uintptr_t top)
{
	stack_hi = top;
}

void ms_cfi_start(void)
{
	void *const *end = dlsym(RTLD_DEFAULT, "__libc_stack_end"); /* ld.so's */
	main_top = end ? (uintptr_t)*end : 0;
}

uint64_t ms_cfi_rules_computed(void)
{
	return __atomic_load_n(&computed, __ATOMIC_RELAXED);
}

#else /* no walker: libunwind walks every stack */

int ms_cfi_backtrace(uintptr_t *frames, int max, struct ms_walk_memo *memo)
{
	(void)frames;
	(void)max;
	(void)memo;
	return -1;
}

int ms_cfi_available(void)
{
	return 0;
}

void ms_cfi_thread_starts(void)
{
}

void ms_cfi_start(void)
{
}

void ms_cfi_stack_top(uintptr_t top)
{
	(void)top;
}

uint64_t ms_cfi_rules_computed(void)
{
	return 0;
}

#endif
