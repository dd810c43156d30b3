/*
 * The panes of the live view: a row annotated, a row's callers.
 */
#include "util/tui/panes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/annotate/annotate.h"
#include "util/annotate/render.h"
#include "util/analysis/callgraph.h"
#include "util/error.h"
#include "util/output/callgraph.h"
#include "util/output/styled.h"
#include "util/tui/follow.h"

static void filter_of(const struct pane_ctx *c, struct query_filter *f)
{
	query_filter__init(f);
	f->win.from_ms = c->from_ms;
}

/* Errors a pane can live with become a line of the pane; the rest are returned. */
static int pane_error(int err, struct styled_text *t, const char *what)
{
	if (err == -ENOMEM || err == -RSPROF_EDB)
		return err;
	return styled__addf(t, TS_HOT, "cannot show %s: %s", what,
			    err == -ENOENT ? "not found in the profile" :
			    err == -RSPROF_EUSAGE ? "the name is ambiguous" : rsprof_strerror(err));
}

int pane__annotate(const struct pane_ctx *c, const struct live_row *r, struct styled_text *t,
		   int *hot)
{
	char target[4200];
	struct ann_opts o = { .target = target, .exe = c->exe, .context = 10 };
	struct ann_view v = { .cpu = true, .heap = c->heap, .profile = c->path };
	struct annotation *a = NULL;
	struct query_filter f;
	int err;

	*hot = -1;
	if (r->file && r->line > 0)
		snprintf(target, sizeof(target), "%s:%d", r->file, r->line);
	else if (r->function)
		snprintf(target, sizeof(target), "%s", r->function);
	else
		return styled__addf(t, TS_DIM, "nothing to annotate: the location is unknown");
	filter_of(c, &f);
	err = annotation__new(c->db, &f, &o, &a);
	if (!err)
		err = annotation__render(a, &v, t, hot);
	else
		err = pane_error(err, t, target);
	annotation__delete(a);
	return err;
}

int pane__callers(const struct pane_ctx *c, const struct live_row *r, struct styled_text *t)
{
	struct cg_view v = { .utf8 = c->utf8, .threshold = 0.5 };
	struct callgraph *cg = NULL;
	struct query_filter f;
	int fn, root, err;

	if (!r->function)
		return styled__addf(t, TS_DIM, "no callers to show: the function is unknown");
	filter_of(c, &f);
	err = callgraph__load(c->db, &f, c->heap, &cg);
	if (!err && !cg->has_stacks) {
		err = styled__addf(t, TS_DIM, "no call stacks in this profile%s",
				   c->heap ? "" : ": record with -g (--call-graph) to keep them");
		goto out;
	}
	if (!err)
		err = callgraph__find(cg, r->function, &fn);
	if (!err)
		err = callgraph__tree(cg, fn, CG_CALLERS, &root);
	if (!err)
		err = callgraph__render_tree(cg, root, CG_CALLERS, &v, t);
	else
		err = pane_error(err, t, r->function);
out:
	callgraph__delete(cg);
	return err;
}
