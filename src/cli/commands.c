/* The command table: which commands there are, `pystitch --help` made
 * from it, and running one (its options parsed by parse.c, then its run
 * function). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct ps_cli_command *const commands[] = {
	&ps_cmd_record,     &ps_cmd_script,  &ps_cmd_collapse, &ps_cmd_flamegraph, &ps_cmd_pprof,
	&ps_cmd_speedscope, &ps_cmd_archive, &ps_cmd_info,     &ps_cmd_dump,
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_usage(FILE *out)
{
	fputs("usage: pystitch [<command>] [options]\n"
	      "\n"
	      "Record a program with perf (pystitch record), or read a perf.data\n"
	      "capture made by `perf record`.\n"
	      "\n"
	      "commands:\n",
	      out);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(out, "  %-10s  %s", commands[i]->name, commands[i]->summary);
	fputs("\n"
	      "Run `pystitch <command> --help` for a command's options.\n"
	      "Also runs as `perf pystitch <command> ...` when perf-pystitch is on PATH.\n"
	      "\n"
	      "exit status: 0 success, 1 usage error, 2 damaged or unreadable input\n",
	      out);
}

static int run_command(struct ps_cli *cli, const struct ps_cli_command *command, int argc,
                       char **argv)
{
	struct ps_cli_args args = { .opts = { .sz = sizeof(args.opts) } };
	void *state = calloc(1, command->state_size ? command->state_size : 1);
	int status;

	cli->command = command->name;
	if (!state)
		return ps_cli_out_of_memory(cli);
	if (command->init)
		command->init(state);
	status = ps_cli_parse(cli, command, argc, argv, &args, state);
	if (status == 0)
		status = command->run(cli, &args, state);
	else if (status < 0)
		status = PS_EXIT_OK; /* --help */
	ps_cli_args_release(&args);
	free(state);
	return status;
}

const struct ps_cli_command *ps_cli_find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (strcmp(name, commands[i]->name) == 0)
			return commands[i];
	return NULL;
}

/* A command's own long option by name, as getopt would give it. */
static const struct option *own_option(const struct ps_cli_command *command, const char *name,
                                       size_t len)
{
	for (const struct option *o = command->options; o && o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

int ps_cli_run_command(struct ps_cli *cli, const struct ps_cli_command *command,
                       struct ps_cli_args *args, const char *output, const char *const *options)
{
	void *state = calloc(1, command->state_size ? command->state_size : 1);
	const char *caller = cli->command;
	int status = PS_EXIT_OK;

	if (!state)
		return ps_cli_out_of_memory(cli);
	if (command->init)
		command->init(state);
	cli->command = command->name;
	if (output && command->option)
		status = command->option(cli, args, state, 'o', output);
	for (size_t i = 0; options && options[i] && status == PS_EXIT_OK; i++) {
		const char *equals = strchr(options[i], '=');
		size_t len = equals ? (size_t)(equals - options[i]) : strlen(options[i]);
		const struct option *o = own_option(command, options[i], len);

		/* a caller's mistake, said as a user's would be */
		if (!o || !command->option) {
			ps_cli_command_error(cli, "no option --%.*s", (int)len, options[i]);
			status = PS_EXIT_USAGE;
			break;
		}
		status = command->option(cli, args, state, o->val, equals ? equals + 1 : NULL);
	}
	if (status == PS_EXIT_OK)
		status = command->run(cli, args, state);
	cli->command = caller;
	free(state);
	return status;
}

int ps_cli_main(int argc, char **argv)
{
	struct ps_progress progress = { 0 };
	struct ps_cli cli = { .program = "pystitch", .input = "perf.data", .progress = &progress };
	const char *base = strrchr(argv[0], '/');

	base = base ? base + 1 : argv[0];
	if (strcmp(base, "perf-pystitch") == 0)
		cli.program = "perf pystitch";
	/* `pystitch` and `pystitch -i FILE ...` are `pystitch script ...` */
	if (argc < 2)
		return run_command(&cli, &ps_cmd_script, argc, argv);
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		print_usage(stdout);
		return PS_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("pystitch %s\n", PS_VERSION_STRING);
		return PS_EXIT_OK;
	}
	if (argv[1][0] == '-')
		return run_command(&cli, &ps_cmd_script, argc, argv);
	if (ps_cli_find_command(argv[1]))
		return run_command(&cli, ps_cli_find_command(argv[1]), argc - 1, argv + 1);
	ps_cli_error(&cli, "unknown command '%s' (try --help)", argv[1]);
	return PS_EXIT_USAGE;
}
