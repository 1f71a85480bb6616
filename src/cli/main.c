/* pystitch's entry point; everything else of the program is in the
 * other files of src/cli, so that its commands link without main(). */
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	/* not for record: the restart's environment would reach perf and the
	 * recorded command */
	if (argc < 2 || strcmp(argv[1], "record") != 0)
		ps_cli_use_huge_pages(argv);
	return ps_cli_main(argc, argv);
}
