/* A small stand-in for libpython, built by fuzz/make_corpus.sh with
 * -nostdlib in a few variants (-DVARIANT=...), so fuzz_elf's seeds hold
 * what CPython detection looks for: the eval loop and its clones,
 * Py_Version, _PyRuntime's _Py_DebugOffsets, Py_GetVersion's version
 * string and the -X perf trampoline template. Not part of any program. */
#define V312 1
#define V313 2
#define V314 3
#define V39 4

int _PyEval_EvalFrameDefault(void *tstate, void *frame, int throwflag)
{
	return tstate == frame ? throwflag + 1 : throwflag - 1;
}

static int eval_cold(int) __asm__("_PyEval_EvalFrameDefault.cold");
__attribute__((used, noinline, cold)) static int eval_cold(int x)
{
	return x * 7 + 3;
}

#if VARIANT == V314
__asm__(".text\n.globl _Py_trampoline_func_start\n_Py_trampoline_func_start:\n"
        " endbr64\n push %rbp\n mov %rsp,%rbp\n call *%rcx\n pop %rbp\n ret\n"
        ".globl _Py_trampoline_func_end\n_Py_trampoline_func_end:\n");
#elif VARIANT != V39
__asm__(".text\n.globl _Py_trampoline_func_start\n_Py_trampoline_func_start:\n"
        " sub $8,%rsp\n call *%rcx\n add $8,%rsp\n ret\n"
        ".globl _Py_trampoline_func_end\n_Py_trampoline_func_end:\n");
#endif

#if VARIANT == V312
const unsigned long Py_Version = 0x030c01f0;
struct {
	long refcount;
	void *type;
} _Py_NoneStruct = { 1, 0 };
#elif VARIANT == V313 || VARIANT == V314
const unsigned long Py_Version = VARIANT == V313 ? 0x030d00f0 : 0x030e00f0;
__attribute__((section(".PyRuntime"), used)) struct {
	char cookie[8];
	unsigned long long version, free_threaded;
	char rest[64];
} _PyRuntime = { { 'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y' },
	         VARIANT == V313 ? 0x030d00f0 : 0x030e00f0,
	         0,
	         { 1 } };
#else
extern int PyOS_snprintf(char *, unsigned long, const char *, ...);
extern const char *Py_GetBuildInfo(void);
static char version[250];
const char *Py_GetVersion(void)
{
	PyOS_snprintf(version, sizeof(version), "%.80s (%.80s) %.80s", "3.9.18", Py_GetBuildInfo(),
	              "[GCC]");
	return version;
}
#endif
