#include "util/output/escape.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int escape__utf8_len(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t cp;
	int n;

	if (!s || !s[0])
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;	/* continuation byte, overlong lead (c0, c1) or above f4 */
	}
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the terminating NUL */
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;	/* overlong, beyond Unicode, surrogate */
	return n;
}

int escape__plain_len(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	int n = escape__utf8_len(s);

	if (n == 1)
		return u[0] >= 0x20 && u[0] != 0x7f;
	if (n == 2 && u[0] == 0xc2 && u[1] <= 0x9f)
		return 0;	/* C1 control */
	if (n == 3 && u[0] == 0xe2 && u[1] == 0x80 && u[2] >= 0xaa && u[2] <= 0xae)
		return 0;	/* U+202A..U+202E */
	if (n == 3 && u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
		return 0;	/* U+2066..U+2069 */
	return n;
}

bool escape__needed(const char *s)
{
	while (s && *s) {
		int n = escape__plain_len(s);

		if (!n)
			return true;
		s += n;
	}
	return false;
}

void escape__fputs(const char *s, FILE *f)
{
	while (s && *s) {
		int n = escape__plain_len(s);

		if (n) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			fprintf(f, "\\x%02x", (unsigned char)*s++);
		}
	}
}

char *escape__str(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return buf;
	while (s && *s) {
		int n = escape__plain_len(s);

		if (n) {
			if (o + n >= len)
				break;
			memcpy(buf + o, s, n);
			o += n;
			s += n;
		} else {
			if (o + 4 >= len)
				break;
			snprintf(buf + o, 5, "\\x%02x", (unsigned char)*s++);
			o += 4;
		}
	}
	buf[o] = '\0';
	return buf;
}

char *escape__dup(const char *s)
{
	size_t len = 1;
	char *d;

	if (!s)
		return NULL;
	for (const char *p = s; *p;) {
		int n = escape__plain_len(p);

		len += n ? (size_t)n : 4;
		p += n ? n : 1;
	}
	d = malloc(len);
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	return escape__str(s, d, len);
}
