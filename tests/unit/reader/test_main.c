/* Runs the reader's Check suites. Check's own environment variables pick
 * what runs: CK_RUN_SUITE, CK_RUN_CASE, CK_INCLUDE_TAGS, CK_VERBOSITY,
 * CK_FORK=no (for a debugger). */
#include <stdlib.h>

#include "helpers.h"

int main(void)
{
	SRunner *runner = srunner_create(suite_records());
	int failed;

	srunner_add_suite(runner, suite_samples());
	srunner_add_suite(runner, suite_format());
	srunner_add_suite(runner, suite_event_names());
	srunner_add_suite(runner, suite_order());
	srunner_add_suite(runner, suite_compressed());
	srunner_add_suite(runner, suite_errors());
	srunner_add_suite(runner, suite_tracing_check());
	srunner_add_suite(runner, suite_tracing_sizeof());
	srunner_run_all(runner, CK_ENV);
	failed = srunner_ntests_failed(runner);
	srunner_free(runner);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
