/*
 * rsprof info: not written yet.
 */
#include "builtin.h"

#include <popt.h>

#include "util/error.h"
#include "util/options.h"

static struct poptOption info_options[] = {
	{ NULL, 0, POPT_ARG_INCLUDE_TABLE, options_common, 0, "Common options:", NULL },
	POPT_TABLEEND
};

int cmd_info(int argc, const char **argv)
{
	poptContext pc = poptGetContext("rsprof info", argc, argv, info_options, 0);
	int ret = options_parse(pc, "[OPTION...]", NULL, NULL);

	if (ret == 0) {
		pr_err("not implemented yet");
		ret = EXIT_ERROR;
	} else {
		ret = ret > 0 ? EXIT_OK : EXIT_USAGE;
	}
	poptFreeContext(pc);
	return ret;
}
