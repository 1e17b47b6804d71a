/*
 * badframes.c - an allocation called with %rbp holding garbage, as code
 * built without frame pointers (libstdc++) leaves it.  The frame %rbp
 * points to is on the stack and looks well-formed, but its return address
 * points into the heap: the runtime's walk must stop there.
 *
 *	badframes		(prints the fake return address)
 *
 * Built with -mno-red-zone: the asm calls malloc from what the compiler
 * takes for a leaf function.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *malloc_with_rbp(uintptr_t *fake)
{
	void *p;

	__asm__ volatile(
		"mov %%rsp, %%rbx\n\t"
		"and $-16, %%rsp\n\t"
		"push %%rbp\n\t"
		"push %%rbp\n\t"
		"mov %1, %%rbp\n\t"
		"mov $48, %%edi\n\t"
		"call malloc@PLT\n\t"
		"pop %%rbp\n\t"
		"pop %%rbp\n\t"
		"mov %%rbx, %%rsp\n\t"
		: "=a"(p)
		: "r"(fake)
		: "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11",
		  "memory", "cc");
	return p;
}

int main(void)
{
	char *heap = malloc(4096);
	/* fake[0]: the next frame (a well-formed one: its return address
	 * is 0, which ends any walk); fake[1]: a "return address" in the
	 * heap, no code of any module. */
	uintptr_t fake[4] = { 0, (uintptr_t)(heap + 2048), 0, 0 };
	void *p;

	fake[0] = (uintptr_t)&fake[2];
	p = malloc_with_rbp(fake);
	printf("0x%lx\n", (unsigned long)(heap + 2048 - 1));
	free(p);
	free(heap);
	return 0;
}
