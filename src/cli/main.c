/*
 * memprof-data: inspect, merge and compare MemProf heap profiles.
 *
 * main() only dispatches: exact command names from a table, as git.c and
 * perf.c do; "memprof-data help CMD" is "memprof-data CMD --help".
 */
#include <malloc.h>
#include <string.h>

#include "cli.h"

#ifndef MEMPROF_DATA_VERSION
#define MEMPROF_DATA_VERSION "0.1.0"
#endif

static const struct cli_command *const commands[] = {
	&cli_cmd_diff,
	&cli_cmd_merge,
	&cli_cmd_overlap,
	&cli_cmd_show,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i]->name, name) == 0)
			return commands[i];
	return NULL;
}

static void print_help(FILE *out)
{
	fprintf(out,
		"usage: %s [--version] [--help] COMMAND [ARGS]\n"
		"\n"
		"Inspect, merge and compare MemProf heap-allocation profiles.\n"
		"\n"
		"Commands:\n", cli_progname);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-10s %s\n", commands[i]->name,
			commands[i]->summary);
	fprintf(out,
		"\n"
		"'%s help COMMAND' or '%s COMMAND --help' shows a command's "
		"options;\n'man %s' and 'man %s-COMMAND' say more.\n",
		cli_progname, cli_progname, cli_progname, cli_progname);
}

static int run(const struct cli_command *cmd, int argc, char **argv)
{
	return cli_finish_stdout(cmd->run(argc, argv));
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;

	/*
	 * Large blocks straight from mmap, and back to the system when
	 * freed: a merge frees its folded table while the builder grows, and
	 * glibc's default (a threshold that rises with each large free) would
	 * keep both in the heap.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
	if (argc < 2) {
		print_help(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		print_help(stdout);
		return cli_finish_stdout(EXIT_OK);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("%s %s\n", cli_progname, MEMPROF_DATA_VERSION);
		return cli_finish_stdout(EXIT_OK);
	}
	if (!strcmp(argv[1], "help")) {
		char *help_argv[3];

		if (argc < 3) {
			print_help(stdout);
			return cli_finish_stdout(EXIT_OK);
		}
		cmd = find_command(argv[2]);
		if (!cmd) {
			cli_error(NULL, "'%s' is not a command; see '%s --help'",
				  argv[2], cli_progname);
			return EXIT_USAGE;
		}
		help_argv[0] = argv[2];
		help_argv[1] = "--help";
		help_argv[2] = NULL;
		return run(cmd, 2, help_argv);
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		cli_error(NULL, "'%s' is not a command; see '%s --help'",
			  argv[1], cli_progname);
		return EXIT_USAGE;
	}
	return run(cmd, argc - 1, argv + 1);
}
