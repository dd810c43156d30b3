#ifndef RSPROF_UTIL_HELP_H
#define RSPROF_UTIL_HELP_H

/*
 * Show the manual page `page` ("rsprof", "rsprof-record", "rsprof-files")
 * with man(1), formatted for a terminal or as plain text into a pipe: the
 * page installed beside the binary (<bindir>/../share/man), else built
 * beside it (out/man/), else one in man's path; without man, the text
 * embedded at build time without its asciidoc markup. Returns 0, or
 * -ENOENT when there is no such page.
 */
int help__show_page(const char *page);

/* The embedded text of a page, or NULL. */
const char *help__embedded(const char *page);

#endif
