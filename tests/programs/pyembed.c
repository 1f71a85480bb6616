/* pyembed: a C program that embeds CPython, as uWSGI and Blender do, and
 * runs a script in it with perf trampolines on (PyConfig.perf_profiling,
 * CPython 3.12+). tests/e2e/python_embedded.sh builds it at run time
 * against each interpreter it tests (python3-config --embed).
 *   usage: pyembed SCRIPT [ARGS...]   (sys.argv is SCRIPT ARGS...) */
#include <Python.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	PyConfig config;
	PyStatus status;
	FILE *f;
	int rc;

	if (argc < 2) {
		fprintf(stderr, "usage: pyembed SCRIPT [ARGS...]\n");
		return 2;
	}
	PyConfig_InitPythonConfig(&config);
	config.parse_argv = 0;
#if PY_VERSION_HEX >= 0x030c0000
	config.perf_profiling = 1;
#endif
	status = PyConfig_SetBytesArgv(&config, argc - 1, argv + 1);
	if (!PyStatus_Exception(status))
		status = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(status))
		Py_ExitStatusException(status);
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	/* the host's own frames stay below the script's, as in a real host */
	rc = PyRun_SimpleFileExFlags(f, argv[1], 1, NULL);
	if (Py_FinalizeEx() < 0)
		rc = 1;
	return rc ? 1 : 0;
}
