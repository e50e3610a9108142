/* twin.h - one driver for the GPU twin checks (tests/test_gpu_*.c).
 *
 * A twin check runs a CPU reference and its GPU twin on the same small
 * scene and holds the GPU's numbers against the CPU's within a stated
 * tolerance. The parts are a row, struct twin_row:
 *   setup    builds the scene, the bodies and whatever both twins need;
 *   cpu      computes the reference of one view (a camera, a frame ...;
 *            NULL: setup made the one reference of every view);
 *   gpu      computes the same view on the device;
 *   compare  holds each output pair within tol (NULL: twin_compare_all);
 *   teardown frees what setup made;
 * and a table of cases (scenes, parameters) that the row runs over:
 * twin_run_cases(row, args, sizeof args[0], count) runs setup, then cpu,
 * gpu and compare for each of the row's views (setup may set a case's own
 * number, and its own tolerance), then teardown, for every case. On a
 * failure the message names the test's case (run->what), the output, the
 * first value out of tolerance (where: pixel x, y and channel, or body
 * and component) and both values.
 *
 * Skipping: the rows run inside Check tests that a program registers in
 * its GPU TCase through NB_GPU_TCASE (check_main.h). Without a usable GPU
 * that TCase is not added: the program prints "SKIP: ..." and Check counts
 * no pass for a case that did not run.
 *
 * Tolerances (struct twin_tol) are the project's form,
 *   |got - ref| <= atol + amax * max|ref| + rtol * |ref|   for every value,
 * with two optional extras: total > 0 also bounds the sums,
 * |sum got - sum ref| <= total |sum ref|, and lit requires max|ref| > 0 (an
 * empty reference would prove nothing). A NaN anywhere fails. */
#ifndef NB_TWIN_H
#define NB_TWIN_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"

struct twin_tol {
	double atol, amax, rtol; /* per value, as above */
	double total;            /* > 0: bound on the relative difference of the sums */
	int lit;                 /* 1: the reference must not be all zeros */
};

/* The GPU renderer's HDR image (render/cuda/gpu_render.h). */
#define TWIN_TOL_HDR ((struct twin_tol){0, 1e-4, 1e-3, 1e-5, 1})
/* A row whose compare states its own tolerances (twin_expect per output). */
#define TWIN_TOL_OWN ((struct twin_tol){0, 0, 0, 0, 0})
/* 16-bit frames: n least significant bits. */
#define TWIN_TOL_LSB(n) ((struct twin_tol){(n), 0, 0, 0, 0})

enum twin_type { TWIN_F32, TWIN_F64, TWIN_U16 };

/* n values of one type; w > 0: an image w pixels wide, ch values a pixel
 * (for the message's "where"); w = 0: bodies of ch values each. */
struct twin_vec {
	const void *p;
	enum twin_type type;
	size_t n;
	int w, ch;
};

static inline struct twin_vec twin_f32(const float *p, size_t n, int w, int ch)
{
	return (struct twin_vec){p, TWIN_F32, n, w, ch};
}

static inline struct twin_vec twin_f64(const double *p, size_t n, int w, int ch)
{
	return (struct twin_vec){p, TWIN_F64, n, w, ch};
}

static inline struct twin_vec twin_u16(const uint16_t *p, size_t n, int w, int ch)
{
	return (struct twin_vec){p, TWIN_U16, n, w, ch};
}

static inline double twin_at(const struct twin_vec *v, size_t k)
{
	switch (v->type) {
	case TWIN_F32:
		return ((const float *)v->p)[k];
	case TWIN_F64:
		return ((const double *)v->p)[k];
	case TWIN_U16:
		return ((const uint16_t *)v->p)[k];
	}
	return NAN;
}

/* What the compare found: the largest error as a fraction of its
 * tolerance, where, and the two values there. */
struct twin_diff {
	double worst, got, ref, err;
	size_t at;
	int failed; /* some value out of tolerance (or NaN) */
	double sum_got, sum_ref, ref_max;
};

/* Every value of got against ref within t (no assertion: see twin_expect). */
static inline void twin_diff_of(const struct twin_vec *got, const struct twin_vec *ref,
				const struct twin_tol *t, struct twin_diff *d)
{
	memset(d, 0, sizeof *d);
	for (size_t k = 0; k < ref->n; k++)
		d->ref_max = fmax(d->ref_max, fabs(twin_at(ref, k)));
	for (size_t k = 0; k < ref->n; k++) {
		const double g = twin_at(got, k), r = twin_at(ref, k);
		const double tol = t->atol + (t->amax > 0 ? t->amax * d->ref_max : 0.0) + t->rtol * fabs(r);
		const double e = fabs(g - r);
		const double q = tol > 0 ? e / tol : (e > 0 ? INFINITY : 0.0);
		const int bad = !(e <= tol); /* NaN fails */
		/* the first failure is what is reported; until one, the worst */
		if (!d->failed && (bad || k == 0 || q > d->worst))
			d->worst = q, d->at = k, d->got = g, d->ref = r, d->err = e;
		d->failed |= bad;
		d->sum_got += g;
		d->sum_ref += r;
	}
}

/* "pixel x,y ch c" or "body i comp c" of value k. */
static inline void twin_where(const struct twin_vec *v, size_t k, char *buf, size_t len)
{
	const size_t ch = v->ch > 0 ? (size_t)v->ch : 1;
	if (v->w > 0)
		snprintf(buf, len, "pixel %zu,%zu ch %zu", k / ch % (size_t)v->w, k / ch / (size_t)v->w,
			 k % ch);
	else
		snprintf(buf, len, "body %zu comp %zu", k / ch, k % ch);
}

/* Asserts got ~ ref within t; prints the worst error. what names the case. */
static inline void twin_expect(const struct twin_vec *got, const struct twin_vec *ref,
			       const struct twin_tol *t, const char *what)
{
	struct twin_diff d;
	char where[64];
	ck_assert_msg(got->n == ref->n, "%s: %zu values, reference %zu", what, got->n, ref->n);
	twin_diff_of(got, ref, t, &d);
	twin_where(ref, d.at, where, sizeof where);
	if (t->lit)
		ck_assert_msg(d.ref_max > 0, "%s: empty reference", what);
	ck_assert_msg(!d.failed,
		      "%s: value %zu (%s): gpu %.9g cpu %.9g, |diff| %.3g (atol %g amax %g rtol %g)", what,
		      d.at, where, d.got, d.ref, d.err, t->atol, t->amax, t->rtol);
	if (t->total > 0)
		ck_assert_msg(NB_CLOSE(d.sum_got, d.sum_ref, 0, t->total),
			      "%s: total gpu %.10g, cpu %.10g (rtol %g)", what, d.sum_got, d.sum_ref, t->total);
	printf("%s: worst |gpu-cpu| / tolerance = %.3g (%s), totals %.9g vs %.9g\n", what, d.worst, where,
	       d.sum_got, d.sum_ref);
}

/* A w x h RGB float image against its reference within the HDR tolerance. */
static inline void twin_expect_hdr(const float *got, const float *ref, int w, int h,
				   const char *what)
{
	const size_t n = (size_t)w * h * 3;
	const struct twin_vec g = twin_f32(got, n, w, 3), c = twin_f32(ref, n, w, 3);
	const struct twin_tol tol = TWIN_TOL_HDR;
	twin_expect(&g, &c, &tol, what);
}

/* ---- error distributions ---- */

/* The relative error of each of n 3-vectors, |a - ref| / |ref| (|a - ref|
 * where ref = 0), sorted: for the tree codes, whose error is a
 * distribution (median, 99th percentile) rather than a bound. malloc'd. */
static inline double *twin_rel_errors(const double *a, const double *ref, size_t n)
{
	double *e = malloc(n * sizeof *e);
	ck_assert_ptr_nonnull(e);
	for (size_t i = 0; i < n; i++) {
		double d2 = 0, r2 = 0;
		for (int k = 0; k < 3; k++) {
			double d = a[3 * i + k] - ref[3 * i + k];
			d2 += d * d;
			r2 += ref[3 * i + k] * ref[3 * i + k];
		}
		e[i] = r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
	}
	for (size_t i = 1; i < n; i++) { /* insertion sort is fine at test sizes */
		double v = e[i];
		size_t j = i;
		for (; j > 0 && e[j - 1] > v; j--)
			e[j] = e[j - 1];
		e[j] = v;
	}
	return e;
}

/* The p-quantile (0..1) of n sorted values, the lower one of a pair. */
static inline double twin_pct(const double *sorted, size_t n, double p)
{
	size_t k = (size_t)(p * (double)(n - 1));
	return sorted[k];
}

/* ---- rows and cases ---- */

#define TWIN_MAX_OUT 4

struct twin_row;

/* One case of a row while it runs. */
struct twin_run {
	const struct twin_row *row;
	const void *arg;  /* this case: one element of the table */
	size_t index;     /* its place in the table */
	int view;         /* the view cpu, gpu and compare are at */
	void *fix;        /* what setup made; teardown frees it */
	struct twin_tol tol; /* the row's; setup may set a case's own */
	int views;           /* the row's; setup may set a case's own */
	char what[128];   /* the case's name in messages (setup may refine it) */
	/* outputs of the view: cpu fills ref, gpu fills got */
	struct {
		const char *name;
		struct twin_vec ref, got;
	} out[TWIN_MAX_OUT];
	int nout;
};

/* A kind of twin check. Written one row a line, in this order. */
struct twin_row {
	const char *name;
	void (*setup)(struct twin_run *r);
	void (*cpu)(struct twin_run *r);
	void (*gpu)(struct twin_run *r);
	void (*compare)(struct twin_run *r); /* NULL: twin_compare_all */
	void (*teardown)(struct twin_run *r);
	struct twin_tol tol;
	int views; /* cpu, gpu and compare run for views 0 .. views-1 (0: one) */
};

/* Names output k of r (both twins fill it). */
static inline void twin_out(struct twin_run *r, int k, const char *name)
{
	ck_assert_int_lt(k, TWIN_MAX_OUT);
	r->out[k].name = name;
	if (k >= r->nout)
		r->nout = k + 1;
}

/* Every output pair of r within the row's tolerance. */
static inline void twin_compare_all(struct twin_run *r)
{
	char what[200];
	for (int k = 0; k < r->nout; k++) {
		if (r->views > 1)
			snprintf(what, sizeof what, "%s, view %d%s%s", r->what, r->view,
				 r->out[k].name ? ": " : "", r->out[k].name ? r->out[k].name : "");
		else
			snprintf(what, sizeof what, "%s%s%s", r->what, r->out[k].name ? ": " : "",
				 r->out[k].name ? r->out[k].name : "");
		twin_expect(&r->out[k].got, &r->out[k].ref, &r->tol, what);
	}
}

/* Runs row over count cases args (each size bytes). */
static inline void twin_run_cases(const struct twin_row *row, const void *args, size_t size,
				  size_t count)
{
	for (size_t c = 0; c < count; c++) {
		struct twin_run r;
		memset(&r, 0, sizeof r);
		r.row = row;
		r.arg = (const char *)args + c * size;
		r.index = c;
		r.tol = row->tol;
		r.views = row->views > 0 ? row->views : 1;
		snprintf(r.what, sizeof r.what, "%s case %zu", row->name, c);
		if (row->setup)
			row->setup(&r);
		for (r.view = 0; r.view < r.views; r.view++) {
			r.nout = 0;
			if (row->cpu)
				row->cpu(&r);
			if (row->gpu)
				row->gpu(&r);
			(row->compare ? row->compare : twin_compare_all)(&r);
		}
		if (row->teardown)
			row->teardown(&r);
	}
}

/* The one case of a row whose setup takes no parameter. */
static const int twin_one[1];

/* Runs row over every case of the array cases. */
#define TWIN_RUN(row, cases)                                                                  \
	twin_run_cases((row), (cases), sizeof(cases)[0], sizeof(cases) / sizeof(cases)[0])

/* A Check test that runs row over every case of the array cases. */
#define TWIN_TEST(name, row, cases)                                                           \
	START_TEST(name)                                                                      \
	{                                                                                     \
		TWIN_RUN(row, cases);                                                         \
	}                                                                                     \
	END_TEST

#endif
