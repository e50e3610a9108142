/* adaptive.c - h_i = distance to the k-th nearest drawn neighbour on a
 * uniform grid (render/adaptive.h), the CPU twin of
 * kernels/render_adaptive.cu. Bodies not drawn (dark, or not finite) are
 * left out of the grid entirely and get the fallback.
 *
 * Grid: the bounding box of the finite bodies cut into cubic cells of side
 * c, chosen so that an average cell holds about k/4 bodies (capped at
 * ~2 cells per body). Each body gets the key (iz*gy + iy)*gx + ix; a counting
 * sort by key gives every cell's [start, end) in one array.
 *
 * Search: body i scans shells s = 0, 1, 2, ... of cells around its own cell
 * (Chebyshev distance s in cell units), keeping its k smallest squared
 * distances in a max-heap. After shell s every body closer than
 * cov = s c + (distance from i to its own cell's faces) has been seen,
 * except that a face beyond which the grid ends has nothing behind it. Once
 * the heap is full and its top is <= cov^2 the top is the k-th distance.
 * cov is reduced by a margin far above the rounding of the cell index, so
 * the stop is always safe. A clustered set (galaxy cores) makes some cells
 * crowded and some searches long, but never wrong. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "adaptive.h"
#include "render.h"

struct grid {
	double lo[3], c; /* origin and cell side */
	int g[3];        /* cells per axis */
	size_t *start;   /* g0*g1*g2 + 1 */
	size_t *order;   /* finite body indices sorted by cell */
	double margin;
};

static int cell_coord(const struct grid *gr, double x, int a)
{
	double t = floor((x - gr->lo[a]) / gr->c);
	if (!(t >= 0))
		return 0;
	if (t >= gr->g[a])
		return gr->g[a] - 1;
	return (int)t;
}

/* Max-heap of squared distances (top = largest kept). */
static void heap_push(double *hp, int *size, int k, double d2)
{
	if (*size < k) {
		int i = (*size)++;
		while (i > 0) {
			int p = (i - 1) / 2;
			if (hp[p] >= d2)
				break;
			hp[i] = hp[p];
			i = p;
		}
		hp[i] = d2;
		return;
	}
	if (d2 >= hp[0])
		return;
	int i = 0;
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		double vm = d2;
		if (l < k && hp[l] > vm) {
			m = l;
			vm = hp[l];
		}
		if (r < k && hp[r] > vm)
			m = r;
		if (m == i)
			break;
		hp[i] = hp[m];
		i = m;
	}
	hp[i] = d2;
}

static void scan_cell(const struct grid *gr, const double *pos, size_t self, size_t cell,
		      double *hp, int *size, int k)
{
	const double *p = pos + 3 * self;
	for (size_t e = gr->start[cell]; e < gr->start[cell + 1]; e++) {
		size_t j = gr->order[e];
		if (j == self)
			continue;
		const double *q = pos + 3 * j;
		double dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
		heap_push(hp, size, k, dx * dx + dy * dy + dz * dz);
	}
}

/* k-th nearest squared distance of body i (k <= finite bodies - 1). */
static double knn_one(const struct grid *gr, const double *pos, size_t i, int k, double *hp)
{
	const double *p = pos + 3 * i;
	int ci[3], size = 0;
	double face_lo[3], face_hi[3];
	for (int a = 0; a < 3; a++) {
		ci[a] = cell_coord(gr, p[a], a);
		face_lo[a] = p[a] - (gr->lo[a] + ci[a] * gr->c);
		face_hi[a] = gr->lo[a] + (ci[a] + 1) * gr->c - p[a];
	}
	int smax = gr->g[0] > gr->g[1] ? gr->g[0] : gr->g[1];
	if (gr->g[2] > smax)
		smax = gr->g[2];
	for (int s = 0; s <= smax; s++) {
		int a0[3], a1[3];
		for (int a = 0; a < 3; a++) {
			a0[a] = ci[a] - s < 0 ? 0 : ci[a] - s;
			a1[a] = ci[a] + s > gr->g[a] - 1 ? gr->g[a] - 1 : ci[a] + s;
		}
		for (int z = a0[2]; z <= a1[2]; z++) {
			int onz = abs(z - ci[2]) == s;
			for (int y = a0[1]; y <= a1[1]; y++) {
				int ony = onz || abs(y - ci[1]) == s;
				size_t row = ((size_t)z * gr->g[1] + y) * gr->g[0];
				if (ony) {
					for (int x = a0[0]; x <= a1[0]; x++)
						scan_cell(gr, pos, i, row + x, hp, &size, k);
				} else {
					if (ci[0] - s >= 0)
						scan_cell(gr, pos, i, row + ci[0] - s, hp, &size, k);
					if (s > 0 && ci[0] + s < gr->g[0])
						scan_cell(gr, pos, i, row + ci[0] + s, hp, &size, k);
				}
			}
		}
		/* Region surely searched: distance to the nearest face of the block
		 * that has cells behind it. */
		double cov = INFINITY;
		for (int a = 0; a < 3; a++) {
			if (ci[a] - s > 0 && face_lo[a] + s * gr->c < cov)
				cov = face_lo[a] + s * gr->c;
			if (ci[a] + s < gr->g[a] - 1 && face_hi[a] + s * gr->c < cov)
				cov = face_hi[a] + s * gr->c;
		}
		if (cov == INFINITY)
			break; /* the whole grid is searched */
		cov -= gr->margin;
		if (size == k && cov > 0 && hp[0] <= cov * cov)
			break;
	}
	return hp[0];
}

static int grid_build(struct grid *gr, const double *pos, size_t n, const unsigned char *ok,
		      size_t m, int k)
{
	double hi[3];
	for (int a = 0; a < 3; a++) {
		gr->lo[a] = INFINITY;
		hi[a] = -INFINITY;
	}
	for (size_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		for (int a = 0; a < 3; a++) {
			if (pos[3 * i + a] < gr->lo[a])
				gr->lo[a] = pos[3 * i + a];
			if (pos[3 * i + a] > hi[a])
				hi[a] = pos[3 * i + a];
		}
	}
	double ext[3], emax = 0;
	for (int a = 0; a < 3; a++) {
		ext[a] = hi[a] - gr->lo[a];
		if (ext[a] > emax)
			emax = ext[a];
	}
	if (!(emax > 0))
		emax = 1.0; /* all bodies at one point */
	/* Volume with flat axes thickened to 1e-3 of the largest extent. */
	double vol = 1.0;
	for (int a = 0; a < 3; a++)
		vol *= ext[a] > 1e-3 * emax ? ext[a] : 1e-3 * emax;
	double occ = k / 4.0 > 1.0 ? k / 4.0 : 1.0;
	gr->c = cbrt(vol * occ / (double)m);
	for (;;) {
		double cells = 1.0;
		for (int a = 0; a < 3; a++) {
			double g = ceil(ext[a] / gr->c);
			gr->g[a] = g < 1 ? 1 : (int)g;
			cells *= gr->g[a];
		}
		if (cells <= 2.0 * (double)m + 8.0)
			break;
		gr->c *= 1.26;
	}
	gr->margin = 1e-9 * (emax + gr->c);
	size_t ncell = (size_t)gr->g[0] * gr->g[1] * gr->g[2];
	gr->start = calloc(ncell + 1, sizeof *gr->start);
	gr->order = malloc((m ? m : 1) * sizeof *gr->order);
	size_t *key = malloc((n ? n : 1) * sizeof *key);
	if (!gr->start || !gr->order || !key) {
		free(key);
		return NB_ERUNTIME;
	}
	/* Counting sort by cell key: counts, prefix sums, scatter in body order. */
	for (size_t i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		const double *p = pos + 3 * i;
		key[i] = ((size_t)cell_coord(gr, p[2], 2) * gr->g[1] + cell_coord(gr, p[1], 1)) *
				 gr->g[0] +
			 cell_coord(gr, p[0], 0);
		gr->start[key[i] + 1]++;
	}
	for (size_t c = 0; c < ncell; c++)
		gr->start[c + 1] += gr->start[c];
	size_t *fill = calloc(ncell, sizeof *fill);
	if (!fill) {
		free(key);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < n; i++)
		if (ok[i])
			gr->order[gr->start[key[i]] + fill[key[i]]++] = i;
	free(fill);
	free(key);
	return 0;
}

int render_adaptive_h(const double *pos, const unsigned char *drawn, size_t n, int k,
		      double fallback, double *h)
{
	int rc = 0;
	struct grid gr;
	memset(&gr, 0, sizeof gr);
	unsigned char *ok = malloc(n ? n : 1);
	if (!ok) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		return NB_ERUNTIME;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		ok[i] = (!drawn || drawn[i]) && isfinite(pos[3 * i]) && isfinite(pos[3 * i + 1]) &&
			isfinite(pos[3 * i + 2]);
		m += ok[i];
	}
	long keff = (long)m - 1 < (long)k ? (long)m - 1 : (long)k;
	if (keff < 1) {
		for (size_t i = 0; i < n; i++)
			h[i] = fallback;
		goto cleanup;
	}
	if (grid_build(&gr, pos, n, ok, m, (int)keff) != 0) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		rc = NB_ERUNTIME;
		goto cleanup;
	}
	int failed = 0;
#pragma omp parallel
	{
		double *hp = malloc((size_t)keff * sizeof *hp);
		if (!hp) {
#pragma omp atomic write
			failed = 1;
		}
#pragma omp for schedule(dynamic, 256)
		for (size_t i = 0; i < n; i++) {
			if (!ok[i])
				h[i] = fallback;
			else if (hp)
				h[i] = sqrt(knn_one(&gr, pos, i, (int)keff, hp));
		}
		free(hp);
	}
	if (failed) {
		log_error("adaptive smoothing: out of memory for neighbour heaps");
		rc = NB_ERUNTIME;
	}
cleanup:
	free(gr.start);
	free(gr.order);
	free(ok);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int render_adaptive_cap(const double *pos, const unsigned char *drawn, size_t n, double cap,
			double *h)
{
	if (!(cap > 0) || n < 2)
		return 0;
	double *v = malloc(n * sizeof *v);
	if (!v) {
		log_error("adaptive smoothing: out of memory for %zu bodies", n);
		return NB_ERUNTIME;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if ((!drawn || drawn[i]) && isfinite(pos[3 * i]) && isfinite(pos[3 * i + 1]) &&
		    isfinite(pos[3 * i + 2]))
			v[m++] = h[i];
	if (m >= 2) {
		qsort(v, m, sizeof *v, cmp_double);
		double hmax = cap * v[(m - 1) / 2];
		for (size_t i = 0; i < n; i++)
			if ((!drawn || drawn[i]) && isfinite(pos[3 * i]) &&
			    isfinite(pos[3 * i + 1]) && isfinite(pos[3 * i + 2]) && h[i] > hmax)
				h[i] = hmax;
	}
	free(v);
	return 0;
}

void render_adaptive_drawn(const struct scene *sc, const struct sim_state *st,
			   unsigned char *drawn)
{
	int density = sc->render.mode == SCENE_COLOR_DENSITY;
	for (size_t i = 0; i < st->n; i++) {
		int c = st->comp ? st->comp[i] : 0;
		int dark = 0;
		if (!density && st->comps && c < st->ncomp) {
			float col[3];
			render_body_light(sc, &st->comps[c], col);
			dark = col[0] == 0.0f && col[1] == 0.0f && col[2] == 0.0f;
		}
		drawn[i] = (unsigned char)!dark;
	}
}

int render_adaptive_h_state(const struct scene *sc, const struct sim_state *st,
			    const struct sim_units *u, double *h)
{
	struct sim_units uu;
	if (!u) {
		scene_units_of(sc->units, &uu);
		u = &uu;
	}
	double *p = malloc((st->n ? 3 * st->n : 1) * sizeof *p);
	unsigned char *drawn = malloc(st->n ? st->n : 1);
	if (!p || !drawn) {
		log_error("adaptive smoothing: out of memory for %zu bodies", st->n);
		free(p);
		free(drawn);
		return NB_ERUNTIME;
	}
	for (size_t i = 0; i < 3 * st->n; i++)
		p[i] = st->pos[i] / u->length;
	render_adaptive_drawn(sc, st, drawn);
	int rc = render_adaptive_h(p, drawn, st->n, sc->render.neighbours, sc->render.smoothing, h);
	if (rc == 0)
		rc = render_adaptive_cap(p, drawn, st->n, sc->render.h_cap, h);
	free(p);
	free(drawn);
	return rc;
}
