/* snap_series.c - film mode's player (simulation.solver: none with
 * bodies.K.snapshots, docs/snapshots.md "Filming a snapshot series"):
 * the files of a numbered series, each read by sim_snap_load_path as entry
 * K, bodies matched by ParticleID, and the state at any time between the
 * first and the last snapshot made by interpolation.
 *
 * Interpolation between snapshots a (time ta) and b (tb), h = tb - ta,
 * s = (t - ta) / h: the cubic Hermite curve
 *   x(s) = h00 xa + h10 h va + h01 xb + h11 h vb,
 *   h00 = 2s^3 - 3s^2 + 1, h10 = s^3 - 2s^2 + s, h01 = -2s^3 + 3s^2, h11 = s^3 - s^2,
 * which matches both positions and both velocities. Its error for a smooth
 * orbit is at most h^4 / 384 max|x''''| (the Hermite remainder,
 * x(t) - p(t) = x''''(xi)/4! (t-ta)^2 (t-tb)^2, whose factor is largest,
 * h^4/16, at s = 1/2). Velocities are dx/dt of the curve.
 *
 * Times: the header's Time in the file's time unit, which (GADGET
 * convention) is its length unit over its velocity unit; so
 * t_internal = Time x (length factor / velocity factor) in internal units,
 * the same conversion as the positions and velocities. Comoving series
 * (Time a scale factor) are refused. */
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snap_internal.h"

struct series_slot {
	int file;       /* -1: empty */
	double t;       /* internal units */
	double *pos, *vel, *mass;
	unsigned char *has;
};

struct sim_snap_series {
	const struct scene *sc;
	int k;
	struct sim_units u;
	char pattern[SCENE_PATH_MAX + 2];
	int first, nfiles;  /* file numbers first .. first + nfiles - 1 */
	double *times;      /* nfiles, internal units */
	size_t n;           /* union of IDs */
	uint64_t *ids;      /* n, sorted */
	struct series_slot slot[2];
	long reads;
};

/* The one integer conversion of PAT: %d, %Nd or %0Nd. 0 or -1. */
static int series_pattern_ok(const char *pat, size_t *at, size_t *len)
{
	int found = 0;
	for (size_t i = 0; pat[i]; i++) {
		if (pat[i] != '%')
			continue;
		if (pat[i + 1] == '%') {
			i++;
			continue;
		}
		size_t j = i + 1;
		while (pat[j] >= '0' && pat[j] <= '9')
			j++;
		if (pat[j] != 'd' || found)
			return -1;
		found = 1, *at = i, *len = j + 1 - i;
	}
	return found ? 0 : -1;
}

static void series_name(const struct sim_snap_series *s, int num, char *out, size_t len)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(out, len, s->pattern, num);
#pragma GCC diagnostic pop
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The numbers of the series' files: consecutive, at least 2. */
static int series_scan(struct sim_snap_series *s)
{
	const char *key = s->sc->bodies[s->k].snap.series;
	size_t at = 0, len = 0;
	if (series_pattern_ok(s->pattern, &at, &len)) {
		log_error("bodies.%d.snapshots: expected a pattern with one integer conversion "
			  "(%%d, %%03d), got '%s'",
			  s->k, key);
		return NB_EINPUT;
	}
	char glob_pat[SCENE_PATH_MAX + 8];
	snprintf(glob_pat, sizeof glob_pat, "%.*s*%s", (int)at, s->pattern, s->pattern + at + len);
	glob_t g;
	int grc = glob(glob_pat, 0, NULL, &g);
	int *nums = grc == 0 ? malloc(g.gl_pathc * sizeof *nums) : NULL;
	int nn = 0;
	for (size_t i = 0; nums && i < g.gl_pathc; i++) {
		const char *p = g.gl_pathv[i] + at;
		char *end;
		if (*p < '0' || *p > '9')
			continue;
		long v = strtol(p, &end, 10);
		char want[SCENE_PATH_MAX + 32];
		if (v < 0 || v > 100000000)
			continue;
		series_name(s, (int)v, want, sizeof want);
		if (strcmp(want, g.gl_pathv[i]) == 0) /* the pattern's own spelling of v */
			nums[nn++] = (int)v;
	}
	if (grc == 0)
		globfree(&g);
	if (nn < 2) {
		log_error("bodies.%d.snapshots: '%s': expected at least 2 files of the series, found %d",
			  s->k, s->pattern, nn);
		free(nums);
		return NB_EINPUT;
	}
	qsort(nums, (size_t)nn, sizeof *nums, cmp_int);
	for (int i = 1; i < nn; i++) {
		if (nums[i] != nums[i - 1] + 1) {
			char miss[SCENE_PATH_MAX + 32];
			series_name(s, nums[i - 1] + 1, miss, sizeof miss);
			log_error("bodies.%d.snapshots: the series has a missing number: %s does not exist "
				  "(files %d to %d are numbered, %d is not)",
				  s->k, miss, nums[0], nums[nn - 1], nums[i - 1] + 1);
			free(nums);
			return NB_EINPUT;
		}
	}
	s->first = nums[0], s->nfiles = nn;
	free(nums);
	return 0;
}

/* Member PATH's Time t (internal units; STORED as in the file) against
 * the previous member's (i > 0): finite and later. 0 or NB_EINPUT. */
static int series_time_ok(const struct sim_snap_series *s, const char *path, int i, double t,
			  double stored, double prev)
{
	if (!isfinite(t)) {
		log_error("%s: Time %g (stored) is %g internal units after conversion (time unit = "
			  "the length unit / the velocity unit): not finite; a bad length or velocity "
			  "unit (bodies.%d.units, or the file's) or a bad Time",
			  path, stored, t, s->k);
		return NB_EINPUT;
	}
	if (i > 0 && !(t > prev)) {
		log_error("%s: Time (%g internal units) is not after the previous file's (%g): "
			  "a series must go forward in time",
			  path, t, prev);
		return NB_EINPUT;
	}
	/* In scene units, |t| <= 1e15 and gaps >= 1e-15 keep the interpolation
	 * finite: velocities (distance / gap) within 2e30, drifts within 2e30
	 * (fuzz/regress/snapseries/tiny-gap.bin: a gap of 1e-298 gave inf). */
	const double ts = t / s->u.time, gap = i > 0 ? (t - prev) / s->u.time : 1;
	if (!(fabs(ts) <= SIM_CSV_XMAX && gap >= 1 / SIM_CSV_XMAX)) {
		log_error("%s: Time %g scene units is %s: film mode needs |Time| <= 1e15 and members "
			  "at least 1e-15 apart, so that the interpolated velocities stay finite",
			  path, ts, fabs(ts) <= SIM_CSV_XMAX ? "too close to the previous member's" : "out of range");
		return NB_EINPUT;
	}
	return 0;
}

/* The N ParticleIDs of member PATH (sorted here, in place) unique. */
static int series_ids_unique(const char *path, uint64_t *ids, size_t n)
{
	qsort(ids, n, sizeof *ids, cmp_u64);
	for (size_t i = 1; i < n; i++) {
		if (ids[i] == ids[i - 1]) {
			log_error("%s: ParticleID %llu appears more than once among the particles kept "
				  "(IDs must be unique to match bodies across the series)",
				  path, (unsigned long long)ids[i]);
			return NB_EINPUT;
		}
	}
	return 0;
}

/* Read file i of the series into tmp (allocated here), with its IDs. */
static int series_read(struct sim_snap_series *s, int i, struct sim_state *tmp, uint64_t **ids,
		       double *t)
{
	char path[SCENE_PATH_MAX + 32];
	struct sim_snap_info info;
	series_name(s, s->first + i, path, sizeof path);
	*ids = NULL;
	int err = sim_snap_load_path(s->sc, s->k, path, &s->u, NULL, 0, 0, NULL, &info);
	if (err)
		return err;
	if (info.comoving) {
		log_error("%s: comoving snapshot (Time is a scale factor): film mode interpolates in "
			  "time and does not take comoving series (bodies.%d.comoving: false treats "
			  "Time as a time)",
			  path, s->k);
		return NB_EINPUT;
	}
	size_t n = 0;
	for (int t = 0; t < SIM_SNAP_NTYPES; t++)
		n += info.kept[t];
	if ((err = sim_state_alloc(tmp, n, info.ncomp > 0 ? info.ncomp : 1)))
		return err;
	*ids = malloc((n ? n : 1) * sizeof **ids);
	if (!*ids) {
		sim_state_free(tmp);
		return NB_ERUNTIME;
	}
	err = sim_snap_load_path(s->sc, s->k, path, &s->u, tmp, 0, 0, *ids, &info);
	if (err) {
		free(*ids);
		*ids = NULL;
		sim_state_free(tmp);
		return err;
	}
	*t = info.time * (info.length * s->u.length) / (info.velocity * s->u.velocity);
	s->reads++;
	if ((err = series_time_ok(s, path, 0, *t, info.time, 0))) {
		free(*ids);
		*ids = NULL;
		sim_state_free(tmp);
	}
	return err;
}

static long series_index(const struct sim_snap_series *s, uint64_t id)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->ids[lo] == id ? (long)lo : -1;
}

/* Decode file i into slot sl, by union index. */
static int series_decode(struct sim_snap_series *s, struct series_slot *sl, int i)
{
	struct sim_state tmp = {0};
	uint64_t *ids;
	double t;
	int err = series_read(s, i, &tmp, &ids, &t);
	if (err)
		return err;
	memset(sl->has, 0, s->n);
	for (size_t b = 0; b < tmp.n && !err; b++) {
		long j = series_index(s, ids[b]);
		if (j < 0 || sl->has[j]) {
			char path[SCENE_PATH_MAX + 32];
			series_name(s, s->first + i, path, sizeof path);
			log_error("%s: ParticleID %llu %s", path, (unsigned long long)ids[b],
				  j < 0 ? "was not there when the series was opened (file changed?)"
					: "appears twice in the file (IDs must be unique to match bodies)");
			err = NB_EINPUT;
			break;
		}
		sl->has[j] = 1;
		memcpy(sl->pos + 3 * j, tmp.pos + 3 * b, 3 * sizeof(double));
		memcpy(sl->vel + 3 * j, tmp.vel + 3 * b, 3 * sizeof(double));
		sl->mass[j] = tmp.mass[b];
	}
	free(ids);
	sim_state_free(&tmp);
	if (err) {
		sl->file = -1;
		return err;
	}
	if (i > 0 && !(t > s->times[i - 1])) {
		log_error("bodies.%d.snapshots: file %d's Time %g is not after file %d's %g", s->k,
			  s->first + i, t, s->first + i - 1, s->times[i - 1]);
		return NB_EINPUT;
	}
	sl->file = i, sl->t = t;
	return 0;
}

/* Component index in st named NAME; added (colour and brightness of C)
 * when new. */
static int series_comp(struct sim_state *st, const struct sim_component *c)
{
	for (int i = 0; i < st->ncomp; i++)
		if (strcmp(st->comps[i].name, c->name) == 0)
			return i;
	struct sim_component *nc = &st->comps[st->ncomp];
	*nc = *c;
	nc->first = nc->count = 0;
	return st->ncomp++;
}

/* Every file once: times, the union of the IDs, each body's component. */
static int series_index_all(struct sim_snap_series *s, struct sim_state *st)
{
	uint64_t *all = NULL;
	size_t nall = 0;
	struct sim_component comps[16 * SIM_SNAP_NTYPES];
	int ncomp = 0, err = 0;
	for (int i = 0; i < s->nfiles && !err; i++) {
		struct sim_state tmp = {0};
		uint64_t *ids;
		if ((err = series_read(s, i, &tmp, &ids, &s->times[i])))
			break;
		char path[SCENE_PATH_MAX + 32];
		series_name(s, s->first + i, path, sizeof path);
		if (i > 0)
			err = series_time_ok(s, path, i, s->times[i], s->times[i], s->times[i - 1]);
		/* sorts this file's ids: the union below is sorted again anyway, and
		 * the components are assigned by a later pass */
		if (!err)
			err = series_ids_unique(path, ids, tmp.n);
		uint64_t *na = err ? NULL : realloc(all, (nall + tmp.n + 1) * sizeof *all);
		if (!err && !na)
			err = NB_ERUNTIME;
		if (!err) {
			all = na;
			memcpy(all + nall, ids, tmp.n * sizeof *ids);
			nall += tmp.n;
			for (int c = 0; c < tmp.ncomp; c++) {
				int seen = 0;
				for (int d = 0; d < ncomp; d++)
					seen |= strcmp(comps[d].name, tmp.comps[c].name) == 0;
				if (!seen && ncomp < (int)(sizeof comps / sizeof comps[0]))
					comps[ncomp++] = tmp.comps[c];
			}
		}
		free(ids);
		sim_state_free(&tmp);
	}
	if (!err) {
		qsort(all, nall, sizeof *all, cmp_u64);
		size_t m = 0;
		for (size_t i = 0; i < nall; i++)
			if (m == 0 || all[i] != all[m - 1])
				all[m++] = all[i];
		s->ids = all, s->n = m, all = NULL;
		if ((err = sim_state_alloc(st, s->n, ncomp > 0 ? ncomp : 1)) == 0 &&
		    (err = sim_state_pid_init(st)) == 0) {
			/* body j is the series' j-th ID: our snapshots write it back */
			memcpy(st->pid, s->ids, s->n * sizeof *s->ids);
			st->ncomp = 0;
			for (int c = 0; c < ncomp; c++)
				series_comp(st, &comps[c]);
			if (ncomp == 0)
				st->ncomp = 1;
		}
	}
	free(all);
	return err;
}

/* Each body's component: from the first file that holds it (the files'
 * component names are kept; one pass per file until all are known). */
static int series_components(struct sim_snap_series *s, struct sim_state *st)
{
	unsigned char *known = calloc(s->n ? s->n : 1, 1);
	size_t left = s->n;
	int err = known ? 0 : NB_ERUNTIME;
	for (int i = 0; i < s->nfiles && left && !err; i++) {
		struct sim_state tmp = {0};
		uint64_t *ids;
		double t;
		if ((err = series_read(s, i, &tmp, &ids, &t)))
			break;
		for (size_t b = 0; b < tmp.n; b++) {
			long j = series_index(s, ids[b]);
			if (j < 0 || known[j])
				continue;
			known[j] = 1, left--;
			st->comp[j] = (uint16_t)series_comp(st, &tmp.comps[tmp.comp[b]]);
		}
		free(ids);
		sim_state_free(&tmp);
	}
	for (size_t j = 0; j < s->n; j++)
		st->id[j] = (uint32_t)j;
	for (int c = 0; c < st->ncomp; c++) {
		st->comps[c].first = 0, st->comps[c].count = 0;
		for (size_t j = 0; j < s->n; j++)
			if (st->comp[j] == c) {
				if (st->comps[c].count == 0)
					st->comps[c].first = j;
				st->comps[c].count++;
			}
	}
	free(known);
	return err;
}

/* A series for entry k with its pattern made absolute (the scene file's
 * directory), nothing read; NULL when out of memory. */
static struct sim_snap_series *series_new(const struct scene *sc, int k,
					  const struct sim_units *u)
{
	struct sim_snap_series *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->sc = sc, s->k = k, s->u = *u;
	s->slot[0].file = s->slot[1].file = -1;
	const char *pat = sc->bodies[k].snap.series;
	if (pat[0] == '/' || sc->dir[0] == '\0')
		snprintf(s->pattern, sizeof s->pattern, "%s", pat);
	else
		snprintf(s->pattern, sizeof s->pattern, "%s/%s", sc->dir, pat);
	return s;
}

int sim_snap_series_open(const struct scene *sc, int k, const struct sim_units *u,
			 struct sim_state *st, struct sim_snap_series **out)
{
	*out = NULL;
	struct sim_snap_series *s = series_new(sc, k, u);
	if (!s)
		return NB_ERUNTIME;
	int err = series_scan(s);
	if (!err && !(s->times = calloc((size_t)s->nfiles, sizeof *s->times)))
		err = NB_ERUNTIME;
	if (!err)
		err = series_index_all(s, st);
	if (!err)
		err = series_components(s, st);
	for (int i = 0; i < 2 && !err; i++) {
		struct series_slot *sl = &s->slot[i];
		const size_t n = s->n ? s->n : 1;
		sl->pos = malloc(3 * n * sizeof(double));
		sl->vel = malloc(3 * n * sizeof(double));
		sl->mass = malloc(n * sizeof(double));
		sl->has = malloc(n);
		if (!sl->pos || !sl->vel || !sl->mass || !sl->has)
			err = NB_ERUNTIME;
	}
	if (!err)
		err = sim_snap_series_at(s, s->times[0], st);
	if (err) {
		sim_snap_series_free(&s);
		sim_state_free(st);
		return err;
	}
	log_info("bodies.%d (%s): film of %d snapshots (%s, numbers %d to %d), %zu bodies by "
		 "ParticleID, t = %g to %g internal units",
		 k, sc->bodies[k].name, s->nfiles, s->pattern, s->first, s->first + s->nfiles - 1,
		 s->n, s->times[0], s->times[s->nfiles - 1]);
	*out = s;
	return 0;
}

int sim_snap_series_check(const struct scene *sc, int k, const struct sim_units *u)
{
	struct sim_snap_series *s = series_new(sc, k, u);
	if (!s)
		return NB_ERUNTIME;
	int err = series_scan(s);
	double prev = 0;
	size_t any = 0; /* kept particles in all members */
	for (int i = 0; i < s->nfiles && !err; i++) {
		char path[SCENE_PATH_MAX + 32];
		struct sim_snap_info info;
		series_name(s, s->first + i, path, sizeof path);
		if ((err = sim_snap_check_path(sc, k, path, &info)))
			break;
		if (info.comoving) {
			log_error("%s: comoving snapshot (Time is a scale factor): film mode interpolates "
				  "in time and does not take comoving series (bodies.%d.comoving: false "
				  "treats Time as a time)",
				  path, k);
			err = NB_EINPUT;
			break;
		}
		const double t = info.time * (info.length * u->length) / (info.velocity * u->velocity);
		if ((err = series_time_ok(s, path, i, t, info.time, prev)))
			break;
		prev = t;
		/* the kept particles' IDs: counted, then read (IDs and, for a
		 * region, positions only) */
		if ((err = sim_snap_load_path(sc, k, path, u, NULL, 0, 0, NULL, &info)))
			break;
		size_t n = 0;
		for (int ty = 0; ty < SIM_SNAP_NTYPES; ty++)
			n += info.kept[ty];
		any += n;
		uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
		if (!ids) {
			log_error("%s: out of memory for %zu ParticleIDs", path, n);
			err = NB_ERUNTIME;
			break;
		}
		err = sim_snap_ids_path(sc, k, path, ids, n, &info);
		if (!err)
			err = series_ids_unique(path, ids, n);
		free(ids);
	}
	if (!err && any == 0) {
		log_error("bodies.%d.snapshots: '%s': no member keeps any particle (the types "
			  "loaded, the region or the subsample select none): nothing to film",
			  k, s->pattern);
		err = NB_EINPUT;
	}
	free(s);
	return err;
}

double sim_snap_series_t0(const struct sim_snap_series *s) { return s->times[0]; }
double sim_snap_series_t1(const struct sim_snap_series *s) { return s->times[s->nfiles - 1]; }
int sim_snap_series_count(const struct sim_snap_series *s) { return s->nfiles; }
long sim_snap_series_reads(const struct sim_snap_series *s) { return s->reads; }

/* Slots hold files i and i+1 (a slot kept when it holds one of them). */
static int series_bracket(struct sim_snap_series *s, int i, struct series_slot **a,
			  struct series_slot **b)
{
	struct series_slot *s0 = &s->slot[0], *s1 = &s->slot[1];
	if (s1->file == i || s0->file == i + 1) { /* swap so that s0 may hold i */
		struct series_slot tmp = *s0;
		*s0 = *s1, *s1 = tmp;
	}
	int err = 0;
	if (s0->file != i && (err = series_decode(s, s0, i)))
		return err;
	if (s1->file != i + 1 && (err = series_decode(s, s1, i + 1)))
		return err;
	*a = s0, *b = s1;
	return 0;
}

int sim_snap_series_at(struct sim_snap_series *s, double t, struct sim_state *st)
{
	const double t0 = s->times[0], t1 = s->times[s->nfiles - 1];
	if (!(t >= t0))
		t = t0;
	if (!(t <= t1))
		t = t1;
	int i = 0;
	while (i + 2 < s->nfiles && t > s->times[i + 1])
		i++;
	struct series_slot *A, *B;
	int err = series_bracket(s, i, &A, &B);
	if (err)
		return err;
	const double h = B->t - A->t, x = (t - A->t) / h;
	const double x2 = x * x, x3 = x2 * x;
	const double h00 = 2 * x3 - 3 * x2 + 1, h10 = x3 - 2 * x2 + x;
	const double h01 = -2 * x3 + 3 * x2, h11 = x3 - x2;
	/* d/dt of the basis: (d/ds) / h */
	const double d00 = (6 * x2 - 6 * x) / h, d10 = 3 * x2 - 4 * x + 1;
	const double d01 = (-6 * x2 + 6 * x) / h, d11 = 3 * x2 - 2 * x;
	for (size_t j = 0; j < s->n; j++) {
		double *p = st->pos + 3 * j, *v = st->vel + 3 * j;
		if (A->has[j] && B->has[j]) {
			const double *pa = A->pos + 3 * j, *pb = B->pos + 3 * j;
			const double *va = A->vel + 3 * j, *vb = B->vel + 3 * j;
			for (int c = 0; c < 3; c++) {
				p[c] = h00 * pa[c] + h10 * h * va[c] + h01 * pb[c] + h11 * h * vb[c];
				v[c] = d00 * pa[c] + d10 * va[c] + d01 * pb[c] + d11 * vb[c];
			}
			st->mass[j] = (1 - x) * A->mass[j] + x * B->mass[j];
		} else if (A->has[j]) { /* vanishes: drifts on, fades out */
			for (int c = 0; c < 3; c++) {
				v[c] = A->vel[3 * j + c];
				p[c] = A->pos[3 * j + c] + v[c] * (t - A->t);
			}
			st->mass[j] = (1 - x) * A->mass[j];
		} else if (B->has[j]) { /* appears: drifts in, fades in */
			for (int c = 0; c < 3; c++) {
				v[c] = B->vel[3 * j + c];
				p[c] = B->pos[3 * j + c] - v[c] * (B->t - t);
			}
			st->mass[j] = x * B->mass[j];
		} else {
			st->mass[j] = 0; /* in neither: not drawn, left where it was */
			v[0] = v[1] = v[2] = 0;
		}
	}
	st->time = t;
	return 0;
}

void sim_snap_series_free(struct sim_snap_series **sp)
{
	struct sim_snap_series *s = *sp;
	if (!s)
		return;
	for (int i = 0; i < 2; i++) {
		free(s->slot[i].pos);
		free(s->slot[i].vel);
		free(s->slot[i].mass);
		free(s->slot[i].has);
	}
	free(s->times);
	free(s->ids);
	free(s);
	*sp = NULL;
}
