#include "util/suggest.h"

#include "tap.h"

int main(void)
{
	const char *cmds[] = { "record", "top", "report", "diff", "timeline", "info", "query", "help" };
	int n = sizeof(cmds) / sizeof(cmds[0]);

	is_int(suggest_distance("record", "record"), 0, "same word");
	is_int(suggest_distance("recrod", "record"), 1, "swap costs one");
	is_int(suggest_distance("", "abc"), 3, "empty to abc");
	is_str(suggest_nearest("recrod", cmds, n), "record", "recrod -> record");
	is_str(suggest_nearest("reprt", cmds, n), "report", "reprt -> report");
	is_str(suggest_nearest("tpo", cmds, n), "top", "tpo -> top");
	is_str(suggest_nearest("timelin", cmds, n), "timeline", "timelin -> timeline");
	is_str(suggest_nearest("xyzzy", cmds, n), NULL, "nothing near xyzzy");
	return done_testing();
}
