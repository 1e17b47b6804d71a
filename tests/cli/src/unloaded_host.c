/*
 * A plugin loaded with dlopen allocates, and is closed with dlclose before
 * the program exits: the runtime writes its memory map at exit, so the
 * plugin's return addresses lie in no segment of the profile, with the
 * host's frames after them (tests/cli/test_unloaded.sh).
 *	unloaded_host PLUGIN.so 1	closes the plugin before exit
 *	unloaded_host PLUGIN.so 0	keeps it open
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static void *call_plugin(const char *path,
						   int unload)
{
	void *h = dlopen(path, RTLD_NOW);
	void *(*alloc)(size_t);
	void *keep = NULL;

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	*(void **)&alloc = dlsym(h, "plugin_alloc");
	if (!alloc) {
		fprintf(stderr, "no plugin_alloc\n");
		exit(1);
	}
	for (int i = 0; i < 100; i++) {
		void *p = alloc(100 + (size_t)i);

		if (i == 99)
			keep = p;
		else
			free(p);
	}
	if (unload)
		dlclose(h);
	return keep;
}

int main(int argc, char **argv)
{
	void *p;

	if (argc != 3)
		return 2;
	p = call_plugin(argv[1], atoi(argv[2]));
	free(p);
	return 0;
}
