#include "util/duration.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
	const char *name;
	double ms;
};

/* Longest names first so that "ms" is not read as "m" followed by "s". */
static const struct unit units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
};

static const struct unit *unit_at(const char *p, size_t *len)
{
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		size_t n = strlen(units[i].name);

		if (!strncmp(p, units[i].name, n)) {
			*len = n;
			return &units[i];
		}
	}
	return NULL;
}

int duration__parse(const char *s, uint64_t *ms)
{
	double total = 0;
	const char *p = s;
	int parts = 0;

	if (!s || !*s)
		return -EINVAL;
	while (*p) {
		char *end;
		double v;
		const struct unit *u;
		size_t ulen = 0;

		if (*p < '0' || *p > '9') {
			if (*p != '.')
				return -EINVAL;
		}
		errno = 0;
		v = strtod(p, &end);
		if (end == p || errno || !isfinite(v) || v < 0)
			return -EINVAL;
		for (const char *q = p; q < end; q++)
			if ((*q < '0' || *q > '9') && *q != '.')
				return -EINVAL;	/* no "1e3", "0x10", "inf" */
		p = end;
		if (!*p) {
			/* a bare number: seconds, only on its own */
			if (parts)
				return -EINVAL;
			total = v * 1000;
			break;
		}
		u = unit_at(p, &ulen);
		if (!u)
			return -EINVAL;
		total += v * u->ms;
		p += ulen;
		parts++;
	}
	if (total > 9.0e15)
		return -EINVAL;
	*ms = (uint64_t)llround(total);
	return 0;
}

int duration__parse_range(const char *s, uint64_t *from_ms, uint64_t *to_ms)
{
	const char *dots;
	char left[64];
	size_t n;
	int err;

	if (!s)
		return -EINVAL;
	dots = strstr(s, "..");
	if (!dots)
		return -EINVAL;
	n = (size_t)(dots - s);
	if (n >= sizeof(left))
		return -EINVAL;
	memcpy(left, s, n);
	left[n] = '\0';
	*from_ms = UINT64_MAX;
	*to_ms = UINT64_MAX;
	if (n) {
		err = duration__parse(left, from_ms);
		if (err)
			return err;
	}
	if (dots[2]) {
		err = duration__parse(dots + 2, to_ms);
		if (err)
			return err;
	}
	if (!n && !dots[2])
		return -EINVAL;
	if (*from_ms != UINT64_MAX && *to_ms != UINT64_MAX && *from_ms > *to_ms)
		return -EINVAL;
	return 0;
}

char *duration__format(uint64_t ms, char *buf, size_t len)
{
	if (ms < 1000)
		snprintf(buf, len, "%llums", (unsigned long long)ms);
	else if (ms < 60000)
		snprintf(buf, len, "%.1fs", ms / 1000.0);
	else if (ms < 3600000)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)(ms / 60000),
			 (unsigned long long)(ms / 1000 % 60));
	else
		snprintf(buf, len, "%lluh%02llum", (unsigned long long)(ms / 3600000),
			 (unsigned long long)(ms / 60000 % 60));
	return buf;
}
