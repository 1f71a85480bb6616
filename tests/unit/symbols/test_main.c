/* Runs the symbols module's Check suites after building the fixture ELF
 * (cc and binutils from PATH). Check's own environment variables pick what
 * runs: CK_RUN_SUITE, CK_RUN_CASE, CK_VERBOSITY, CK_FORK=no. */
#include <stdio.h>
#include <stdlib.h>

#include "helpers.h"

int main(void)
{
	SRunner *runner;
	int failed;

	if (!fixture_build(&fixture))
		fprintf(stderr, "symbols tests: cannot build the fixture: %s\n", fixture.why);
	runner = srunner_create(suite_symtab());
	srunner_add_suite(runner, suite_lookup());
	srunner_add_suite(runner, suite_inline());
	srunner_add_suite(runner, suite_damage());
	srunner_add_suite(runner, suite_kallsyms());
	srunner_add_suite(runner, suite_kernel_source());
	srunner_add_suite(runner, suite_names());
	srunner_add_suite(runner, suite_addr2line());
	srunner_add_suite(runner, suite_die_walk());
	srunner_add_suite(runner, suite_inflate());
	srunner_add_suite(runner, suite_source());
	srunner_add_suite(runner, suite_variables());
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	fixture_remove(&fixture);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
