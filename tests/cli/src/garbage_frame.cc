// garbage_frame.cc - an allocation whose frame-pointer unwind reads one
// garbage return address (tests/cli/test_llvm_export.sh), as past code
// built without frame pointers (libstdc++'s): alloc_through_garbage()
// calls operator new with %rbp pointing at a made-up frame record whose
// return address lies in no segment and whose saved %rbp is its caller's
// frame.  The stack reads: operator new, alloc_through_garbage, the
// garbage, then main's call of caller() and on (caller's own frame is
// skipped, as a frame the unwinder cannot see).  x86-64 only.
#include <cstdint>
#include <unistd.h>

__attribute__((noinline)) void *alloc_through_garbage(void *caller_frame)
{
	/* On the stack, between operator new's frame and the caller's: an
	 * unwinder follows only frame records that go up the stack. */
	void *volatile record[2];	// saved %rbp, return address
	void *p;

	record[0] = caller_frame;
	record[1] = (void *)(uintptr_t)0x6bc6b61e02bfu;	// in no segment
	asm volatile("mov %%rsp, %%rbx\n\t"
		     "and $-16, %%rsp\n\t"
		     "push %%rbp\n\t"
		     "sub $8, %%rsp\n\t"
		     "mov %[rec], %%rbp\n\t"
		     "mov $64, %%edi\n\t"
		     "call _Znwm@PLT\n\t"
		     "add $8, %%rsp\n\t"
		     "pop %%rbp\n\t"
		     "mov %%rbx, %%rsp"
		     : "=a"(p)
		     : [rec] "r"(&record[0])
		     : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10",
		       "r11", "memory", "cc");
	return p;
}

__attribute__((noinline)) void *caller(void)
{
	void *p = alloc_through_garbage(__builtin_frame_address(0));

	asm volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) char *plain(void)
{
	char *p = new char[64];

	asm volatile("" ::: "memory");
	return p;
}

int main()
{
	void *keep[10];
	char *q[10];

	for (int i = 0; i < 10; i++) {
		keep[i] = caller();
		q[i] = plain();
	}
	for (int i = 0; i < 10; i++) {
		operator delete(keep[i]);
		delete[] q[i];
	}
	return 0;
}
