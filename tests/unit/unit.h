/* SPDX-License-Identifier: GPL-2.0-only */
/* The main of every unit test binary: run the tests named on the command line (shell
 * patterns: `test_formats 'test_bad_*'`), or all of them. Include after <cmocka.h>.
 * cmocka_set_test_filter() takes a single pattern, tests/run.sh may pass several. */
#ifndef TESTS_UNIT_UNIT_H
#define TESTS_UNIT_UNIT_H

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>

static inline int unit_main(int argc, char **argv, const struct CMUnitTest *tests, size_t n)
{
	struct CMUnitTest *sel;
	size_t k = 0;
	int ret;

	if (argc < 2)
		return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
	sel = calloc(n, sizeof(*sel));
	if (!sel)
		return 2;
	for (size_t i = 0; i < n; i++) {
		for (int a = 1; a < argc; a++) {
			if (!fnmatch(argv[a], tests[i].name, 0)) {
				sel[k++] = tests[i];
				break;
			}
		}
	}
	if (!k) {
		fprintf(stderr, "%s: no test matches", argv[0]);
		for (int a = 1; a < argc; a++)
			fprintf(stderr, " %s", argv[a]);
		fprintf(stderr, "\n");
		free(sel);
		return 2;
	}
	ret = _cmocka_run_group_tests("tests", sel, k, NULL, NULL);
	free(sel);
	return ret;
}

#define UNIT_MAIN(tests) unit_main(argc, argv, tests, sizeof(tests) / sizeof((tests)[0]))

#endif
