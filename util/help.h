#ifndef RSPROF_UTIL_HELP_H
#define RSPROF_UTIL_HELP_H

/*
 * Show the manual page `page` ("rsprof", "rsprof-record", "rsprof-files"):
 * with man(1) when the page is installed, else the page built next to the
 * binary (out/man/), else the copy of its text embedded at build time.
 * Returns 0, or -ENOENT when there is no such page.
 */
int help__show_page(const char *page);

/* The embedded text of a page, or NULL. */
const char *help__embedded(const char *page);

#endif
