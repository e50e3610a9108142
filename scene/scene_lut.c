/* scene_lut.c - render.colormap_file: a user colour map of SCENE_LUT_N
 * rows, read when the scene is loaded (scene_lut_read in scene.h).
 *
 * Format: one row a line, "r g b" separated by blanks; blank lines and
 * lines whose first non-blank character is '#' are skipped. Each number is
 * written either as an integer (digits only, a 0..255 value) or as a
 * decimal (with a '.' or an exponent, a 0..1 value). The first row sets
 * the file's kind; a row of the other kind, or one mixing both, is refused
 * (a "0 0.5 1" row is ambiguous: write "0.0 0.5 1.0"). Every error names
 * PATH:LINE. Values are stored divided by 255 (integers) or as read
 * (decimals): display-encoded RGB in [0, 1], as the built-in maps. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "scene.h"

#define LUT_LINE_MAX 256

/* Kind of token T: 1 integer, 2 decimal, 0 neither. */
static int token_kind(const char *t)
{
	const char *p = t;
	if (*p == '+' || *p == '-')
		p++;
	if (!*p)
		return 0;
	int digits = 1;
	for (const char *q = p; *q; q++)
		if (*q < '0' || *q > '9')
			digits = 0;
	if (digits)
		return 1;
	return strpbrk(p, ".eE") ? 2 : 0;
}

/* One row of LINE into rgb; its kind (1 or 2) into *kind. 0, or -1 with
 * WHY filled. */
static int lut_row(char *line, float rgb[3], int *kind, char *why, size_t len)
{
	char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
	int n = 0, k0 = 0;
	for (; tok; tok = strtok_r(NULL, " \t\r\n", &save), n++) {
		if (n >= 3) {
			snprintf(why, len, "expected 3 numbers \"r g b\", got a 4th ('%.40s')", tok);
			return -1;
		}
		int k = token_kind(tok);
		char *end = NULL;
		errno = 0;
		double v = k ? strtod(tok, &end) : 0;
		if (!k || !end || *end || errno || !isfinite(v)) {
			snprintf(why, len, "expected a number, got '%.40s'", tok);
			return -1;
		}
		if (n > 0 && k != k0) {
			snprintf(why, len,
				 "mixes integers (0..255) and decimals (0..1) in one row; write all "
				 "three one way");
			return -1;
		}
		k0 = k;
		double hi = k == 1 ? 255 : 1;
		if (!(v >= 0 && v <= hi)) {
			snprintf(why, len, "expected %s, got %.40s", k == 1 ? "an integer in [0, 255]"
									    : "a decimal in [0, 1]", tok);
			return -1;
		}
		rgb[n] = (float)(v / hi);
	}
	if (n != 3) {
		snprintf(why, len, "expected 3 numbers \"r g b\", got %d", n);
		return -1;
	}
	*kind = k0;
	return 0;
}

int scene_lut_read(const char *path, float lut[SCENE_LUT_N][3])
{
	char why[300], line[LUT_LINE_MAX + 2];
	int fd = scene_infile_open(path, why, sizeof why);
	if (fd < 0) {
		log_error("%s: cannot use it as a colour map: %s", path, why);
		return NB_EINPUT;
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		log_error("%s: cannot read it: %s", path, strerror(errno));
		close(fd);
		return NB_EINPUT;
	}
	int rc = 0, lineno = 0, rows = 0, kind0 = 0, first_line = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		size_t l = strlen(line);
		if (l == sizeof line - 1 && line[l - 1] != '\n') {
			log_error("%s:%d: line longer than %d characters", path, lineno, LUT_LINE_MAX);
			rc = NB_EINPUT;
			goto cleanup;
		}
		const char *p = line + strspn(line, " \t\r\n");
		if (!*p || *p == '#')
			continue;
		if (rows >= SCENE_LUT_N) {
			log_error("%s:%d: expected %d rows, got more", path, lineno, SCENE_LUT_N);
			rc = NB_EINPUT;
			goto cleanup;
		}
		int kind = 0;
		if (lut_row(line, lut[rows], &kind, why, sizeof why)) {
			log_error("%s:%d: %s", path, lineno, why);
			rc = NB_EINPUT;
			goto cleanup;
		}
		if (rows == 0) {
			kind0 = kind;
			first_line = lineno;
		} else if (kind != kind0) {
			log_error("%s:%d: expected %s like line %d, got %s", path, lineno,
				  kind0 == 1 ? "integers in [0, 255]" : "decimals in [0, 1]", first_line,
				  kind == 1 ? "integers" : "decimals");
			rc = NB_EINPUT;
			goto cleanup;
		}
		rows++;
	}
	if (ferror(f)) {
		log_error("%s:%d: read error", path, lineno);
		rc = NB_EINPUT;
	} else if (rows != SCENE_LUT_N) {
		log_error("%s:%d: expected %d rows \"r g b\", got %d", path, lineno, SCENE_LUT_N, rows);
		rc = NB_EINPUT;
	}
cleanup:
	fclose(f);
	return rc;
}
