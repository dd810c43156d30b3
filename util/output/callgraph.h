#ifndef RSPROF_UTIL_OUTPUT_CALLGRAPH_H
#define RSPROF_UTIL_OUTPUT_CALLGRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "util/analysis/callgraph.h"

/*
 * Call graphs as text (styled lines: printed by `report`, paged by `top`),
 * CSV and JSON.
 *
 * A tree (`--callers F`, `--callees F`): one row per node, Share (of F's
 * total), the value (samples or live bytes), the function indented under
 * its parent with tree lines, and the call site.
 *
 * The children view (`report -g`, perf report --children): functions by
 * total, with Children (total) and Self as shares of all, each followed by
 * the tree of its callees (shares of all), nodes below the threshold left
 * out.
 */
struct styled_text;
struct json;

struct cg_view {
	bool utf8;		/* tree lines in box drawing characters, else ASCII */
	double threshold;	/* leave out nodes below this percent (of the root, or of all) */
	int limit;		/* children view: functions shown; 0 all */
	bool full_paths;	/* call sites as recorded, not shortened */
	int max_depth;		/* tree: levels below the root shown; 0: all */
	int width;		/* text: columns to fit; 0: format__term_width() */
};

/* A tree made by callgraph__tree(). 0 or -ENOMEM. */
int callgraph__render_tree(const struct callgraph *cg, int root, enum cg_dir dir,
			   const struct cg_view *v, struct styled_text *t);
/* The children view. 0 or -ENOMEM. */
int callgraph__render_children(struct callgraph *cg, const struct cg_view *v,
			       struct styled_text *t);

/*
 * CSV: depth,function,value,share_pct,pct_of_all,call_site (preorder, depth 0
 * the root; 0 or -ENOMEM). JSON: the tree as nested objects, into j (member key,
 * or NULL inside an array).
 */
int callgraph__csv_tree(const struct callgraph *cg, int root, enum cg_dir dir,
			const struct cg_view *v, FILE *f);
void callgraph__json_tree(const struct callgraph *cg, int root, enum cg_dir dir,
			  const struct cg_view *v, struct json *j, const char *key);

/* CSV and JSON of the children view: function,total,self,total_pct,self_pct,file,line. */
void callgraph__csv_children(const struct callgraph *cg, const int *order,
			     const struct cg_view *v, FILE *f);
void callgraph__json_children(const struct callgraph *cg, const int *order,
			      const struct cg_view *v, struct json *j);

#endif
