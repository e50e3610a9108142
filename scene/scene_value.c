/* scene_value.c - turn one YAML node into one checked scene value, by the
 * key's entry in the schema table (scene_schema.h); error messages; the
 * shortest round-trip formatting of numbers used by emit. */
#include <ctype.h>
#include <errno.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "scene_schema.h"


int scene_fail(const struct scene_errctx *ec, const struct ynode *at, const char *path,
	       const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const char *sep = path && path[0] ? ": " : "";
	if (!path)
		path = "";
	if (at && at->origin)
		log_error("%s: %s%s%s", at->origin, path, sep, msg);
	else if (at)
		log_error("%s:%d:%d: %s%s%s", ec->name, at->line, at->col, path, sep, msg);
	else
		log_error("%s: %s%s%s", ec->name, path, sep, msg);
	return NB_EINPUT;
}

void scene_fmt_double(double x, char *buf, size_t size)
{
	/* exponent notation only for very large or small magnitudes: 20, not 2e+01 */
	int allow_exp = fabs(x) >= 1e6 || (x != 0 && fabs(x) < 1e-4);
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, size, "%.*g", p, x);
		if (strtod(buf, NULL) == x && (allow_exp || !strchr(buf, 'e')))
			return;
	}
	snprintf(buf, size, "%.17g", x);
}

void scene_fmt_float(float x, char *buf, size_t size)
{
	int allow_exp = fabsf(x) >= 1e6f || (x != 0 && fabsf(x) < 1e-4f);
	for (int p = 1; p <= 9; p++) {
		snprintf(buf, size, "%.*g", p, (double)x);
		if ((float)strtod(buf, NULL) == x && (allow_exp || !strchr(buf, 'e')))
			return;
	}
	snprintf(buf, size, "%.9g", (double)x);
}

/* "a number > 0", "an integer in [1, 2]", ... for messages. */
static void describe_range(const struct scene_key *k, int integer, char *buf, size_t size)
{
	const char *what = integer ? "an integer" : "a number";
	char lo[32], hi[32];
	scene_fmt_double(k->lo, lo, sizeof(lo));
	scene_fmt_double(k->hi, hi, sizeof(hi));
	int has_lo = isfinite(k->lo), has_hi = isfinite(k->hi); /* infinite: no bound */
	if (has_lo && has_hi)
		snprintf(buf, size, "%s in %c%s, %s%c", what, (k->flags & SKEY_LO_OPEN) ? '(' : '[', lo,
			 hi, (k->flags & SKEY_HI_OPEN) ? ')' : ']');
	else if (has_lo)
		snprintf(buf, size, "%s %s %s", what, (k->flags & SKEY_LO_OPEN) ? ">" : ">=", lo);
	else if (has_hi)
		snprintf(buf, size, "%s %s %s", what, (k->flags & SKEY_HI_OPEN) ? "<" : "<=", hi);
	else
		snprintf(buf, size, "%s", what);
}

static int in_range(const struct scene_key *k, double x)
{
	if ((k->flags & SKEY_LO_OPEN) ? !(x > k->lo) : !(x >= k->lo))
		return 0;
	if ((k->flags & SKEY_HI_OPEN) ? !(x < k->hi) : !(x <= k->hi))
		return 0;
	return 1;
}

/* Plain YAML number -> double. Returns 0, or 1 with *why set. */
static int scalar_to_double(const struct ynode *v, double *x, const char **why)
{
	*why = NULL;
	if (!v || v->kind != YNODE_SCALAR || yaml_tree_is_null(v) || !v->plain ||
	    v->len != strlen(v->text)) {
		return 1;
	}
	const char *t = v->text;
	/* digits, one sign, '.', exponent: no hex, no inf/nan words */
	for (const char *p = t; *p; p++) {
		if (!(isdigit((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.' || *p == 'e' ||
		      *p == 'E')) {
			const char *l = t + (*t == '+' || *t == '-');
			if (strcasecmp(l, ".inf") == 0 || strcasecmp(l, "inf") == 0 ||
			    strcasecmp(l, "infinity") == 0 || strcasecmp(l, ".nan") == 0 ||
			    strcasecmp(l, "nan") == 0)
				*why = "not a finite number";
			return 1;
		}
	}
	/* strtod raises the overflow flag on "1e400": keep it from trapping
	 * (tests make FP exceptions fatal) and from leaking into the caller */
	char *end;
	fenv_t env;
	feholdexcept(&env);
	errno = 0;
	double d = strtod(t, &end);
	int range = errno == ERANGE;
	feclearexcept(FE_ALL_EXCEPT);
	fesetenv(&env);
	if (end == t || *end != '\0')
		return 1;
	if (range && fabs(d) > 1.0) {
		*why = "too large";
		return 1;
	}
	if (!isfinite(d)) {
		*why = "not a finite number";
		return 1;
	}
	/* "1e-400" reads as 0 and "1e-310" as a subnormal: neither is the
	 * value written, and subnormal scales or softenings only lead to
	 * overflowing forces later */
	if (range || (d != 0 && fabs(d) < DBL_MIN)) {
		*why = "too small: below 2.2e-308, the smallest normal double";
		return 1;
	}
	*x = d;
	return 0;
}

/* Plain YAML integer -> long long (or unsigned for U64). 1e6 is accepted
 * when it is a whole number. Returns 0 or 1 with *why. */
static int scalar_to_integer(const struct ynode *v, int is_unsigned, long long *ll,
			     unsigned long long *ull, const char **why)
{
	*why = NULL;
	if (!v || v->kind != YNODE_SCALAR || yaml_tree_is_null(v) || !v->plain)
		return 1;
	const char *t = v->text, *p = t;
	if (*p == '+' || *p == '-')
		p++;
	int digits = *p != '\0';
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			digits = 0;
	if (digits) {
		char *end;
		errno = 0;
		if (is_unsigned) {
			if (*t == '-') {
				*why = "negative";
				return 1;
			}
			*ull = strtoull(t, &end, 10);
		} else {
			*ll = strtoll(t, &end, 10);
		}
		if (errno == ERANGE) {
			*why = "too large";
			return 1;
		}
		return *end != '\0';
	}
	double d;
	if (scalar_to_double(v, &d, why))
		return 1;
	if (d != floor(d)) {
		*why = "not a whole number";
		return 1;
	}
	if (fabs(d) > 9007199254740992.0) { /* 2^53: beyond this 1eN is not exact */
		*why = "too large";
		return 1;
	}
	if (is_unsigned) {
		if (d < 0) {
			*why = "negative";
			return 1;
		}
		*ull = (unsigned long long)d;
	} else {
		*ll = (long long)d;
	}
	return 0;
}

static int find_name(const char *const *names, const char *s)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static void join_names(const char *const *names, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; names[i] && o < size; i++)
		o += (size_t)snprintf(buf + o, size - o, "%s%s", i ? ", " : "", names[i]);
}

/* Edit distance (Levenshtein) of two short words, capped at 64 chars. */
static int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return 99;
	int prev[65], cur[65];
	for (size_t j = 0; j <= lb; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			int sub = prev[j - 1] + (tolower((unsigned char)a[i - 1]) !=
						 tolower((unsigned char)b[j - 1]));
			int del = prev[j] + 1, ins = cur[j - 1] + 1;
			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, sizeof(int) * (lb + 1));
	}
	return prev[lb];
}

const char *scene_closest(const char *const *names, int n, const char *word)
{
	const char *best = NULL;
	int bestd = 99;
	size_t lw = strlen(word);
	for (int i = 0; (n < 0 ? names[i] != NULL : i < n); i++) {
		int d = edit_distance(word, names[i]);
		size_t ln = strlen(names[i]);
		/* one a prefix (>= 3 letters) of the other counts as close:
		 * "tone" -> tonemap, "scale_height" -> scale */
		size_t lmin = lw < ln ? lw : ln;
		if (lmin >= 3 && lw != ln && strncasecmp(word, names[i], lmin) == 0 && d > 1)
			d = 1;
		if (d < bestd) {
			bestd = d;
			best = names[i];
		}
	}
	size_t limit = lw <= 4 ? 1 : lw <= 8 ? 2 : 3;
	return bestd <= (int)limit ? best : NULL;
}

static int fail_number(const struct scene_errctx *ec, const struct scene_key *k,
		       const struct ynode *v, const char *path, int integer, const char *why)
{
	char want[128], got[160];
	describe_range(k, integer, want, sizeof(want));
	yaml_tree_describe(v, got, sizeof(got));
	if (v && v->kind == YNODE_SCALAR && !v->plain)
		return scene_fail(ec, v, path, "expected %s, got the quoted string %s", want, got);
	if (why)
		return scene_fail(ec, v, path, "expected %s, got %s (%s)", want, got, why);
	return scene_fail(ec, v, path, "expected %s, got %s", want, got);
}

/* One number (integer or not) with its range check. */
static int get_number(const struct scene_errctx *ec, const struct scene_key *k,
		      const struct ynode *v, const char *path, double *x)
{
	const char *why;
	if (scalar_to_double(v, x, &why) || !in_range(k, *x))
		return fail_number(ec, k, v, path, 0, why);
	return 0;
}

/* A list of N numbers (or, with allow_scalar, one number for all). */
static int get_numbers(const struct scene_errctx *ec, const struct scene_key *k,
		       const struct ynode *v, const char *path, int n, int allow_scalar,
		       double *out)
{
	char got[160], want[128], epath[300];
	if (allow_scalar && v && v->kind == YNODE_SCALAR) {
		if (get_number(ec, k, v, path, &out[0]))
			return NB_EINPUT;
		for (int i = 1; i < n; i++)
			out[i] = out[0];
		return 0;
	}
	if (!v || v->kind != YNODE_SEQ || v->n != n) {
		describe_range(k, 0, want, sizeof(want));
		if (isfinite(k->lo) || isfinite(k->hi))
			return scene_fail(ec, v, path, "expected a list of %d numbers (each %s), got %s",
					  n, want + 2 /* drop "a " */,
					  yaml_tree_describe(v, got, sizeof(got)));
		return scene_fail(ec, v, path, "expected a list of %d numbers, got %s", n,
				  yaml_tree_describe(v, got, sizeof(got)));
	}
	for (int i = 0; i < n; i++) {
		snprintf(epath, sizeof(epath), "%s.%d", path, i);
		if (get_number(ec, k, v->items[i], epath, &out[i]))
			return NB_EINPUT;
	}
	return 0;
}

static int get_word(const struct scene_errctx *ec, const struct scene_key *k,
		    const struct ynode *v, const char *path, int *idx)
{
	char got[160], list[512];
	if (v && v->kind == YNODE_SCALAR && !yaml_tree_is_null(v) && v->len == strlen(v->text)) {
		*idx = find_name(k->names, v->text);
		if (*idx >= 0)
			return 0;
	}
	join_names(k->names, list, sizeof(list));
	yaml_tree_describe(v, got, sizeof(got));
	const char *near = v && v->kind == YNODE_SCALAR ? scene_closest(k->names, -1, v->text) : NULL;
	if (near)
		return scene_fail(ec, v, path, "expected one of %s, got %s (did you mean '%s'?)", list,
				  got, near);
	return scene_fail(ec, v, path, "expected one of %s, got %s", list, got);
}

static int get_string(const struct scene_errctx *ec, const struct scene_key *k,
		      const struct ynode *v, const char *path, char *dst)
{
	char got[160];
	if (!v || v->kind != YNODE_SCALAR)
		return scene_fail(ec, v, path, "expected %s, got %s",
				  k->type == SKEY_NAME ? "a name" : "a string",
				  yaml_tree_describe(v, got, sizeof(got)));
	if (v->len != strlen(v->text))
		return scene_fail(ec, v, path, "expected a string, got text with a NUL byte");
	const char *s = yaml_tree_is_null(v) ? "" : v->text;
	size_t len = strlen(s);
	if (k->type == SKEY_NAME) {
		int ok = len > 0;
		for (const char *p = s; *p; p++)
			if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-'))
				ok = 0;
		if (!ok)
			return scene_fail(ec, v, path,
					  "expected a name of letters, digits, '_' and '-', got %s",
					  yaml_tree_describe(v, got, sizeof(got)));
	}
	if (len >= k->size)
		return scene_fail(ec, v, path, "expected at most %zu characters, got %zu", k->size - 1,
				  len);
	memcpy(dst, s, len + 1);
	return 0;
}

/* An SKEY_INT, SKEY_LONG or SKEY_U64 value. */
static int set_integer(const struct scene_errctx *ec, const struct scene_key *k,
		       const struct ynode *v, const char *path, void *dst)
{
	const char *why = NULL;
	long long ll = 0;
	unsigned long long ull = 0;
	char got[160], want[160];
	int is_u = k->type == SKEY_U64;
	if (scalar_to_integer(v, is_u, &ll, &ull, &why))
		return fail_number(ec, k, v, path, 1, why);
	double x = is_u ? (double)ull : (double)ll;
	if (!in_range(k, x)) {
		if ((k->flags & SKEY_EVEN) && ll < 16)
			return scene_fail(ec, v, path, "must be an even number >= 16, got %lld", ll);
		return fail_number(ec, k, v, path, 1, NULL);
	}
	if ((k->flags & SKEY_EVEN) && (ll % 2) != 0)
		return scene_fail(ec, v, path, "must be an even number >= 16, got %lld", ll);
	if (k->names) {
		snprintf(got, sizeof(got), "%lld", ll);
		if (find_name(k->names, got) < 0) {
			join_names(k->names, want, sizeof(want));
			return scene_fail(ec, v, path, "expected one of %s, got %lld", want, ll);
		}
	}
	if (k->type == SKEY_INT)
		*(int *)dst = (int)ll;
	else if (k->type == SKEY_LONG)
		*(long *)dst = (long)ll;
	else
		*(uint64_t *)dst = (uint64_t)ull;
	return 0;
}

/* An SKEY_BYTES text: digits with at most one '.', then at most one of
 * K, M, G, T (either case; 1024-based), as bytes rounded down to a whole
 * number. 0, or 1 with *why set when it is something else. */
static int scalar_to_bytes(const struct ynode *v, double *x, const char **why)
{
	*why = NULL;
	if (!v || v->kind != YNODE_SCALAR || yaml_tree_is_null(v) || !v->plain ||
	    v->len != strlen(v->text) || !v->text[0])
		return 1;
	const char *t = v->text;
	size_t len = strlen(t), digits = 0, dots = 0;
	double scale = 1.0;
	const char *units = "KMGT";
	const char *u = strchr(units, toupper((unsigned char)t[len - 1]));
	if (u && *u) { /* strchr finds the terminator too */
		for (const char *q = units; q <= u; q++)
			scale *= 1024.0;
		len--;
	}
	for (size_t i = 0; i < len; i++) {
		if (isdigit((unsigned char)t[i]))
			digits++;
		else if (t[i] == '.' && dots == 0)
			dots++;
		else
			return 1;
	}
	if (digits == 0 || digits > 15) {
		if (digits > 15)
			*why = "too large";
		return 1;
	}
	char num[32];
	snprintf(num, sizeof num, "%.*s", (int)len, t);
	*x = floor(strtod(num, NULL) * scale);
	return 0;
}

/* An SKEY_NUM_OR_WORD value: a number (*AUX = 0), or word i of k->names
 * (*AUX = i + 1; the number keeps its value). */
static int set_num_or_word(const struct scene_errctx *ec, const struct scene_key *k,
			 const struct ynode *v, const char *path, void *dst, int *aux)
{
	const char *why = NULL;
	double d;
	char got[160], want[160], words[160];
	for (int i = 0; v && v->kind == YNODE_SCALAR && k->names[i]; i++) {
		if (strcmp(v->text, k->names[i]) == 0) {
			*aux = i + 1;
			return 0;
		}
	}
	if ((k->flags & SKEY_BYTES) && (scalar_to_bytes(v, &d, &why) || !in_range(k, d))) {
		char lo[32], hi[32];
		scene_fmt_double(k->lo, lo, sizeof(lo));
		scene_fmt_double(k->hi, hi, sizeof(hi));
		return scene_fail(ec, v, path,
				  "expected a size in bytes in [%s, %s] (a whole number, or a number "
				  "with K, M, G or T, 1024-based: 8G, 1.5G, 512M) or the word %s, got "
				  "%s%s%s%s", lo, hi, k->names[0], yaml_tree_describe(v, got, sizeof(got)),
				  why ? " (" : "", why ? why : "", why ? ")" : "");
	}
	if (!(k->flags & SKEY_BYTES) && (scalar_to_double(v, &d, &why) || !in_range(k, d))) {
		describe_range(k, 0, want, sizeof(want));
		size_t o = (size_t)snprintf(words, sizeof(words), "%s %s",
					    k->names[1] ? "one of the words" : "the word", k->names[0]);
		for (int i = 1; k->names[i] && o < sizeof(words); i++)
			o += (size_t)snprintf(words + o, sizeof(words) - o, ", %s", k->names[i]);
		return scene_fail(ec, v, path, "expected %s or %s, got %s%s%s%s", want, words,
				  yaml_tree_describe(v, got, sizeof(got)), why ? " (" : "",
				  why ? why : "", why ? ")" : "");
	}
	*(double *)dst = d;
	*aux = 0;
	return 0;
}

/* An SKEY_PAIR_OR_WORD value: [a, b] (*AUX = 0), or the word k->names[0]
 * (*AUX = 1, the pair untouched). */
static int set_pair_or_word(const struct scene_errctx *ec, const struct scene_key *k,
			    const struct ynode *v, const char *path, double *dst, int *aux)
{
	char got[160];
	double d[2];
	if (v && v->kind == YNODE_SCALAR) {
		if (strcmp(v->text, k->names[0]) == 0) {
			*aux = 1;
			return 0;
		}
		return scene_fail(ec, v, path, "expected %s, got %s", k->type_doc,
				  yaml_tree_describe(v, got, sizeof(got)));
	}
	if (get_numbers(ec, k, v, path, 2, 0, d))
		return NB_EINPUT;
	dst[0] = d[0];
	dst[1] = d[1];
	*aux = 0;
	return 0;
}

/* An SKEY_SPIN2 value: one word for both, or a list of two. */
static int set_spin2(const struct scene_errctx *ec, const struct scene_key *k,
		     const struct ynode *v, const char *path, enum scene_spin *s)
{
	char got[160], want[160];
	int idx;
	if (v && v->kind == YNODE_SCALAR) {
		if (get_word(ec, k, v, path, &idx))
			return NB_EINPUT;
		s[0] = s[1] = (enum scene_spin)idx;
		return 0;
	}
	if (!v || v->kind != YNODE_SEQ || v->n != 2) {
		join_names(k->names, want, sizeof(want));
		return scene_fail(ec, v, path, "expected a list of 2 of %s, got %s", want,
				  yaml_tree_describe(v, got, sizeof(got)));
	}
	for (int i = 0; i < 2; i++) {
		char epath[300];
		snprintf(epath, sizeof(epath), "%s.%d", path, i);
		if (get_word(ec, k, v->items[i], epath, &idx))
			return NB_EINPUT;
		s[i] = (enum scene_spin)idx;
	}
	return 0;
}

int scene_value_set(const struct scene_errctx *ec, const struct scene_key *k,
		    const struct ynode *v, const char *path, void *dst, int *aux)
{
	double d[3];
	int idx, err;

	switch (k->type) {
	case SKEY_INT:
	case SKEY_LONG:
	case SKEY_U64:
		if ((err = set_integer(ec, k, v, path, dst)))
			return err;
		break;
	case SKEY_DOUBLE:
		if (get_number(ec, k, v, path, &d[0]))
			return NB_EINPUT;
		*(double *)dst = d[0];
		break;
	case SKEY_NUM_OR_WORD:
		return set_num_or_word(ec, k, v, path, dst, aux);
	case SKEY_PAIR_OR_WORD:
		return set_pair_or_word(ec, k, v, path, dst, aux);
	case SKEY_VEC3:
		if (get_numbers(ec, k, v, path, 3, 0, d))
			return NB_EINPUT;
		memcpy(dst, d, sizeof(double) * 3);
		break;
	case SKEY_COLOR:
		if (get_numbers(ec, k, v, path, 3, 0, d))
			return NB_EINPUT;
		for (int i = 0; i < 3; i++)
			((float *)dst)[i] = (float)d[i];
		break;
	case SKEY_PAIR:
		if (get_numbers(ec, k, v, path, 2, 1, d))
			return NB_EINPUT;
		memcpy(dst, d, sizeof(double) * 2);
		break;
	case SKEY_ENUM:
		if (get_word(ec, k, v, path, &idx))
			return NB_EINPUT;
		*(int *)dst = idx;
		break;
	case SKEY_SPIN2:
		if ((err = set_spin2(ec, k, v, path, dst)))
			return err;
		break;
	case SKEY_NAME:
	case SKEY_STRING:
		if (get_string(ec, k, v, path, dst))
			return NB_EINPUT;
		break;
	case SKEY_WORD:
		if (get_word(ec, k, v, path, &idx))
			return NB_EINPUT;
		snprintf(dst, k->size, "%s", k->names[idx]);
		break;
	case SKEY_MAP:
	case SKEY_LIST:
		return scene_fail(ec, v, path, "internal error: not a value key");
	}
	if (aux)
		*aux = 1;
	return 0;
}

int scene_value_default(const struct scene_key *k, enum scene_units units, void *dst, int *aux)
{
	const char *text = units == SCENE_UNITS_GALACTIC && k->def_galactic ? k->def_galactic : k->def;
	if (!text || k->type == SKEY_MAP || k->type == SKEY_LIST)
		return 0;
	struct ynode *v = NULL;
	struct scene_errctx ec = {"(built-in default)"};
	int err = yaml_tree_parse(text, strlen(text), ec.name, NULL, &v);
	if (err == 0 && !v)
		v = yaml_tree_new_scalar("", 1, 1, 1, NULL);
	if (err == 0 && !v)
		err = NB_ERUNTIME;
	if (err == 0) {
		int dummy = 0;
		err = scene_value_set(&ec, k, v, k->path, dst, aux ? aux : &dummy);
	}
	yaml_tree_free(v);
	return err;
}
