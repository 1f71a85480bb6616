/* pystitch's entry point; everything else of the program is in the
 * other files of src/cli, so that its commands link without main(). */
#include "cli.h"

int main(int argc, char **argv)
{
	ps_cli_use_huge_pages(argv);
	return ps_cli_main(argc, argv);
}
