#ifndef RSPROF_UTIL_OUTPUT_ESCAPE_H
#define RSPROF_UTIL_OUTPUT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The one escaper for text that reaches a terminal.
 * Strings read from a profile (symbol names, paths, meta values) are
 * untrusted: a profile must not be able to retitle or clear the terminal,
 * move the cursor or forge report lines. Every text output (tables, info,
 * diff, timeline, top, CSV, error messages) passes them through here.
 *
 * Written as \xNN (two lower-case hex digits), byte by byte:
 *   - C0 controls (0x00-0x1f, also tab, CR and LF) and DEL (0x7f);
 *   - C1 controls U+0080..U+009F (UTF-8 c2 80..c2 9f; CSI, OSC, ...);
 *   - the bidirectional overrides and isolates U+202A..U+202E and
 *     U+2066..U+2069, which reorder what a line seems to say;
 *   - bytes that are not part of valid UTF-8 (stray continuation bytes,
 *     overlong forms, surrogates, code points above U+10FFFF, truncation).
 * Everything else, printable ASCII and valid UTF-8, is copied unchanged.
 */

/* The escaped form of s written to f (NULL writes nothing). */
void escape__fputs(const char *s, FILE *f);

/*
 * s escaped into buf (always NUL-terminated when len > 0; cut at an escape
 * boundary when too long). Returns buf. NULL s gives "".
 */
char *escape__str(const char *s, char *buf, size_t len);

/* A malloc'd escaped copy of s (NULL s gives NULL); NULL with errno ENOMEM. */
char *escape__dup(const char *s);

/*
 * How many bytes at s are copied as they are (>0), or 0 when the byte or
 * the character at s is escaped: the rule above, for writers with an escape
 * syntax of their own (JSON's \uXXXX).
 */
int escape__plain_len(const char *s);

/* Does s hold anything escape__fputs() would change? */
bool escape__needed(const char *s);

/*
 * Length in bytes of the valid UTF-8 sequence at s (1 for ASCII), 0 when
 * the bytes there are not valid UTF-8 (or s is at its end). For the
 * formats that must stay well-formed (JSON, SVG): they replace what is
 * invalid with U+FFFD.
 */
int escape__utf8_len(const char *s);

#endif
