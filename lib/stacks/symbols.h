/* symbols.h - code addresses as "function+0x2a (dir/file.c:42, module)", at
 * report time.
 *
 * elfutils' libdw does the work (the module's .symtab when present, so static
 * functions too, and DWARF line tables).  It is opened with dlopen(RTLD_LOCAL)
 * on the first report, never linked: until then it costs nothing, and its
 * libraries never enter the program's global scope.  Without libdw (or
 * without /proc) names come from dladdr: exported symbols only, no lines.
 *
 * Report time only: these functions allocate and take a spin lock of their
 * own.  Never call them from a signal handler or a lock path.  They set the
 * thread's guard themselves, so mutexes libdw locks pass straight through. */
#ifndef MUTEXSTAT_SYMBOLS_H
#define MUTEXSTAT_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/* A session: one view of the process's modules (read from /proc/self/maps
 * at the first lookup after begin, so libraries dlopen'd since the last
 * report are seen; a report that looks nothing up reads nothing) and a
 * cache of the addresses looked up.  Bracket each report with begin/end.
 * They nest (a counter): an inner pair costs nothing; the outermost end
 * frees libdw's data.  A lookup outside any session opens one that stays
 * open until the next outermost end. */
void ms_symbols_begin(void);
void ms_symbols_after_fork_child(void);
void ms_symbols_end(void);

/* What is known about one code address.  Strings are empty when unknown. */
struct ms_frame {
	char func[160];       /* demangled; "" if no symbol covers addr */
	unsigned long offset; /* addr - start of func; without func, addr's
				 address in the module's file (what
				 addr2line -e module wants) */
	char file[200];       /* source file as DWARF names it (its tail if
				 longer); "" without line information */
	int line;             /* 0 without line information.  In inlined
				 code, the innermost line outside system
				 headers: the std::lock_guard line, not
				 bits/std_mutex.h */
	char module[80];      /* basename of the module; "" if in none */
};

/* Fills *out.  is_return_address: addr is a return address (every frame of
 * a captured stack but the innermost, and the callers the history records),
 * so the line is looked up at addr - 1 -- the call, not the instruction
 * after it; offset is still from the function's start to addr.  Returns 0,
 * or -1 when addr lies in no module (out->module empty). */
int ms_symbolize_frame(uintptr_t addr, int is_return_address,
		       struct ms_frame *out);

/* The same without the source line (file "", line 0): for a frame the
 * report asks about but may not print (is it the program's _start? is a
 * mutex in a module's memory?).  A line costs reading the module's DWARF,
 * and without .debug_aranges (clang's default) every unit of it.  An answer
 * kept from ms_symbolize_frame is given whole. */
int ms_symbolize_function(uintptr_t addr, int is_return_address,
			  struct ms_frame *out);

/* The variable the lock at addr is in, as gdb names it: "cache_lock",
 * "accounts+0x18" (a mutex inside a struct or an array), "ns::Pool::mu_";
 * from the symbol table of the module it lies in, so a static variable only
 * where the module keeps its .symtab (or libdw finds its debug file).
 * Returns 1 with the name in out, or 0 with out "" (the heap, a stack, a
 * stripped module, no symbol).  Report time, as the rest.  A name longer
 * than out has room for loses its argument, then its template, lists
 * ("cache<...>::mu"), as a frame's function does; MS_VARIABLE_CAP bytes
 * keep a C++ template's arguments, which may be all that tells two apart.
 *
 * The lock's life began when the dynamic linker had loaded `loads` modules
 * (loader_lock.h; 0: unknown): it is never named after a module loaded
 * since, which may lie where the lock was (memory the program unmapped, a
 * library it unloaded) -- a mutex in a buffer unmapped before a plugin was
 * loaded there read <plug_arr+0xa00>.  Unknown: after whatever module is
 * there now, unless a library was unloaded and no code is there. */
int ms_symbolize_lock(uintptr_t addr, unsigned long long loads, char *out, size_t cap);
#define MS_VARIABLE_CAP 1024

/* Whether a source file (as struct ms_frame's `file` names it) is a system
 * header's: code the compiler took from /usr/include and the like, not the
 * program's. */
int ms_symbols_system_header(const char *file);

/* One line for the report, treating addr as a return address:
 *   func+0x2a (dir/file.c:42, module)   with line information
 *   func+0x2a (module)                  without
 *   module+0x1234                       no symbol covers addr
 *   0x7f12345678                        in no module;  "?" for 0
 * The source path is shortened to its last two components and a long C++
 * name loses its parameter and template lists.  Returns out. */
const char *ms_symbolize(uintptr_t addr, char *out, size_t cap);

/* The same for a narrow column: "func (file.c:42)" with the file's base
 * name, else as ms_symbolize.  Returns out. */
const char *ms_symbolize_short(uintptr_t addr, char *out, size_t cap);

/* Cuts s, made by ms_symbolize or ms_symbolize_short, to at most cols
 * columns so that the source line stays, taking away in turn: the module,
 * the offset (where there is a line), the source file's directory, the
 * parentheses ("func file.c:61"), the function's start while 8 characters
 * of it are left ("..consumer(int) file.c:61": C++ names end in what says
 * most), the function, and the source line's start ("..file.c:61").
 * Without a source line the offset stays: "func+0x2a module", then
 * "func+0x2a", then the function's start goes ("..ex::Lock+0x9");
 * "module+0x1a2b" loses the module's end ("libkeyv..+0x1a2b").  Text of
 * another form, or too narrow for that, is cut at its end ("abc...").
 * Returns s. */
const char *ms_symbol_fit(char *s, size_t cols);

/* Formats a frame as ms_symbolize does (addr is printed when the frame has
 * no module).  Returns out. */
const char *ms_frame_format(const struct ms_frame *fr, uintptr_t addr,
			    char *out, size_t cap);

/* Whether code address pc is in a segment of an object loaded now: where
 * the program unloaded a library, an address that is in none is shown as
 * it is, never under the name of a module mapped near it (symbols.c). */
int ms_symbols_code_loaded(uintptr_t pc);

/* How many libraries the process has unloaded (dlclose) so far, from the
 * dynamic linker's counters; 0 when they cannot tell (with a dlmopen
 * namespace they do not add up, and in the child of a fork made during a
 * stack capture, whose walk of the modules holds their lock).  Names are read at report time, from the
 * modules mapped then: an address in a library unloaded since has none,
 * or the name of what was loaded at that place later. */
unsigned long long ms_symbols_unloaded(void);

/* For tests: 1 names functions as libdw's dwfl_module_addrinfo does, by
 * reading a module's whole symbol table at each address (what the index of
 * sym_index.h stands in for), 0 by the index again.  Forgets the answers
 * kept so far. */
void ms_symbols_by_scan(int on);

/* NULL while libdw is used; otherwise why names come from dladdr
 * ("libdw.so.1 not found", "/proc/<pid>/maps unreadable"), for a note in
 * the report. */
const char *ms_symbols_fallback_reason(void);

#endif
