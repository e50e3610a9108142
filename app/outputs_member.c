/* outputs_member.c - the member names of a numbered sequence of the
 * outputs table (outputs.h): DIR/prefix%0*dsuffix, and back from a name
 * to its number. Apart from outputs.c because the table's --resume checks
 * (app/batch_verify.c, which the table points at) read members too. */
#include <stdio.h>
#include <string.h>

#include "outputs.h"

int app_out_member(const struct app_out_kind *k, const char *name)
{
	size_t np = strlen(k->prefix), ns = strlen(k->suffix), len = strlen(name);
	char again[96];
	int idx = 0, used = 0, part = -1, pused = 0;
	if (len <= np + ns || len > 64 || strncmp(name, k->prefix, np) != 0 ||
	    strcmp(name + len - ns, k->suffix) != 0)
		return -1;
	if (sscanf(name + np, "%9d%n", &idx, &used) != 1 || idx < 0)
		return -1;
	/* a part of a set: ".J" between the number and the suffix */
	if (k->parts != NULL && (size_t)used < len - np - ns && name[np + used] == '.' &&
	    (sscanf(name + np + used + 1, "%6d%n", &part, &pused) != 1 || part < 0))
		return -1;
	if ((size_t)used + (part >= 0 ? 1 + (size_t)pused : 0) != len - np - ns)
		return -1;
	if (part >= 0)
		snprintf(again, sizeof again, "%s%0*d.%d%s", k->prefix, k->width, idx, part, k->suffix);
	else
		snprintf(again, sizeof again, "%s%0*d%s", k->prefix, k->width, idx, k->suffix);
	return strcmp(again, name) == 0 ? idx : -1;
}

int app_out_member_path(const struct app_out_kind *k, const char *dir, int n, char *buf,
			size_t cap)
{
	int len = snprintf(buf, cap, "%s/%s%0*d%s", dir, k->prefix, k->width, n, k->suffix);
	return len < 0 || (size_t)len >= cap ? -1 : 0;
}

int app_out_part_path(const struct app_out_kind *k, const char *dir, int n, int j, char *buf,
		      size_t cap)
{
	int len = snprintf(buf, cap, "%s/%s%0*d.%d%s", dir, k->prefix, k->width, n, j, k->suffix);
	return len < 0 || (size_t)len >= cap ? -1 : 0;
}
