/* render_ooc.c - nbody-bench render-ooc (also `nbody-bench render
 * --out-of-core`): milliseconds per frame of the GPU renderer drawing more
 * bodies than it holds, out of core (render/cuda/render_ooc.cu): the bodies
 * live in page-locked host memory as float4 rows (x, y, z, m: 16 bytes a
 * body, + 2 with components), generated there once, and every frame
 * streams them through the GPU in chunks under a device budget, each chunk
 * splat into the same HDR frame, then the default look (stars, filmic,
 * auto exposure, glow 0.3) once.
 *
 *   nbody-bench render-ooc [--n 1e9] [--frames 5] [--budget 8G] [--size 4k|1080p|WxH]
 *                          [--model plummer|galaxies] [--png DIR]
 *
 * Models (deterministic: counter-based random numbers, any thread count):
 *   plummer   one Plummer sphere (a = 1, cut at r = 30), one component, no
 *             component array (16 bytes a body over the bus);
 *   galaxies  two exponential disks (scale 3, height 0.3, 40 apart, tilted
 *             30 and 60 degrees) with Hernquist bulges (a 20 % share),
 *             two components (18 bytes a body).
 * The camera circles the bodies, 2 degrees a frame (a still film, a moving
 * camera: each frame only copies, no conversion on the host).
 *
 * Printed: generation time (outside the timing) and the page-locked
 * allocation (made once, timed), the chunk plan, the device memory the
 * renderer took against the budget, then per frame (after one warm-up;
 * medians over --frames):
 *   wall      host time from queueing the frame to its 16-bit picture on
 *             the host (frames are not overlapped)
 *   gpu       first chunk copy's start to the picture's copy end (events)
 *   upload    the chunks' host -> device copies, summed (copy stream)
 *   splat     the chunks' splats, summed (render stream; overlaps upload)
 *   look      last splat's end to the tone map's end (glow, exposure, tone)
 *   GB/s      bytes copied / upload time
 * Host memory: n x 16 bytes (+ 2 with galaxies) page-locked: 16 GB at 1e9.
 * Needs a CUDA build and a GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sim/cuda/gpu.h"
#include "../render/cuda/gpu_render.h"
#include "../output/output.h"
#include "../render/render.h"
#include "../scene/scene.h"
#include "../sim/sim.h"
#include "bench.h"

#define RO_MAX_FRAMES 64

struct ro_opts {
	double n;
	int frames, w, h, galaxies;
	double budget;
	const char *png;
};

/* "8G", "512M", "1.5G", "123456": bytes (1024-based suffixes), -1 if bad. */
static double ro_bytes(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	double k = 1;
	if (*end) {
		const char *u = strchr("KMGT", *end & ~0x20);
		if (!u || end[1])
			return -1;
		for (const char *q = "KMGT"; q <= u; q++)
			k *= 1024;
	}
	return v > 0 ? floor(v * k) : -1;
}

static int ro_parse(int argc, char **argv, struct ro_opts *o)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--out-of-core"))
			continue;
		if (!v)
			goto bad;
		if (!strcmp(a, "--n"))
			o->n = strtod(v, NULL);
		else if (!strcmp(a, "--frames"))
			o->frames = atoi(v);
		else if (!strcmp(a, "--budget"))
			o->budget = ro_bytes(v);
		else if (!strcmp(a, "--size")) {
			if (!strcmp(v, "4k")) {
				o->w = 3840;
				o->h = 2160;
			} else if (!strcmp(v, "1080p")) {
				o->w = 1920;
				o->h = 1080;
			} else if (sscanf(v, "%dx%d", &o->w, &o->h) != 2) {
				goto bad;
			}
		} else if (!strcmp(a, "--model")) {
			if (strcmp(v, "plummer") && strcmp(v, "galaxies"))
				goto bad;
			o->galaxies = !strcmp(v, "galaxies");
		} else if (!strcmp(a, "--png"))
			o->png = v;
		else
			goto bad;
		i++;
	}
	if (!(o->n >= 1 && o->n <= 4e9) || o->frames < 1 || o->frames > RO_MAX_FRAMES ||
	    !(o->budget > 0) || o->w < 16 || o->h < 16 || o->w % 2 || o->h % 2)
		goto bad;
	return 0;
bad:
	bench_usage(stderr, "render-ooc");
	return 2;
}

/* Body i of the model into row p (x, y, z, m) and its component. */
static void ro_body(int galaxies, size_t n, size_t i, float *p, uint16_t *comp)
{
	const double u0 = sim_rng_uniform(41, i, 0), u1 = sim_rng_uniform(41, i, 1),
		     u2 = sim_rng_uniform(41, i, 2), u3 = sim_rng_uniform(41, i, 3);
	double x, y, z;
	if (!galaxies) {
		double u = fmin(u0, 0.99995); /* r <= ~30 */
		double r = 1.0 / sqrt(pow(u, -2.0 / 3.0) - 1), cz = 2 * u1 - 1, ph = 2 * M_PI * u2;
		double sz = sqrt(1 - cz * cz);
		x = r * sz * cos(ph);
		y = r * sz * sin(ph);
		z = r * cz;
		p[3] = (float)(1.0 / (double)n);
		return (void)(p[0] = (float)x, p[1] = (float)y, p[2] = (float)z);
	}
	const int g = (int)(i & 1), bulge = u3 < 0.2;
	if (bulge) { /* Hernquist a = 0.6: r = a sqrt(u) / (1 - sqrt(u)) */
		double s = sqrt(fmin(u0, 0.999)), r = 0.6 * s / (1 - s);
		double cz = 2 * u1 - 1, ph = 2 * M_PI * u2, sz = sqrt(1 - cz * cz);
		x = r * sz * cos(ph);
		y = r * sz * sin(ph);
		z = r * cz;
	} else { /* exponential disk: R from the gamma(2) inverse (two uniforms) */
		double R = -3.0 * log((1 - u0) * (1 - fmin(u1, 0.999999)) + 1e-300);
		double ph = 2 * M_PI * u2;
		x = R * cos(ph);
		y = R * sin(ph);
		z = 0.3 * log(fmax(sim_rng_uniform(41, i, 4), 1e-12) / fmax(sim_rng_uniform(41, i, 5), 1e-12));
	}
	const double inc = (g ? 60.0 : 30.0) * M_PI / 180, ci = cos(inc), si = sin(inc);
	p[0] = (float)(x + (g ? 20 : -20));
	p[1] = (float)(ci * y - si * z + (g ? 8 : 0));
	p[2] = (float)(si * y + ci * z);
	p[3] = (float)((bulge ? 2.0 : 1.0) / (double)n);
	*comp = (uint16_t)bulge;
}

struct ro_frame {
	double wall, gpu, upload, splat, look, gbs;
};

static double ro_median_of(struct ro_frame *f, int n, size_t off)
{
	double v[RO_MAX_FRAMES];
	for (int k = 0; k < n; k++)
		v[k] = *(const double *)((const char *)&f[k] + off);
	return bench_median(v, n);
}

/* The scene (the default look at o's size), st's two components (their
 * names and colours; no bodies), the renderer's parameters and the chunk
 * plan under the budget, printed. 0, 1 (failed) or 2 (no plan). */
static int ro_setup(const struct ro_opts *o, size_t n, struct scene *sc, struct sim_state *st,
		    struct gpu_render_params *p, struct render_ooc_plan *plan)
{
	char text[512];
	snprintf(text, sizeof text,
		 "bodies: [{name: a, model: plummer}]\nsimulation: {solver: none}\n"
		 "render: {width: %d, height: %d}\n", o->w, o->h);
	if (scene_load_string(text, "render-ooc", ".", NULL, 0, sc) != 0 ||
	    sim_state_alloc(st, 0, 2) != 0)
		return 1;
	static const float col[2][3] = {{0.75f, 0.85f, 1.0f}, {1.0f, 0.8f, 0.55f}};
	for (int c = 0; c < 2; c++) {
		snprintf(st->comps[c].name, sizeof st->comps[c].name, c ? "bulge" : "disk");
		memcpy(st->comps[c].color, col[c], sizeof col[c]);
	}
	st->ncomp = o->galaxies ? 2 : 1;
	gpu_render_default_params(p);
	p->outputs = GPU_RENDER_OUT_RGB16;
	p->slots = 2;
	size_t fixed, per_body, max_chunk;
	gpu_render_memory(sc, p, 1, &fixed, &per_body, &max_chunk);
	if (render_ooc_plan(n, (size_t)o->budget, fixed, per_body, max_chunk, plan) != 0)
		return 2;
	printf("plan: %zu chunks of %zu bodies (last %zu), %zu bytes a body slot, frame buffers "
	       "%.0f MiB, device total %.2f GiB of the budget\n",
	       plan->nchunks, plan->chunk, plan->last, per_body, fixed / 1048576.0,
	       plan->bytes / 1073741824.0);
	return 0;
}

/* The page-locked rows, once (timed), then the model's n bodies into them
 * (timed apart; both outside the frames' timing), printed; hb describes
 * them. *rows: the allocation, for gpu_render_host_free. 0, or 1. */
static int ro_rows(const struct ro_opts *o, size_t n, void **rows, struct gpu_render_host *hb)
{
	const size_t bytes = n * 4 * sizeof(float) + (o->galaxies ? n * sizeof(uint16_t) : 0);
	double t0 = log_clock_s();
	*rows = gpu_render_host_alloc(bytes);
	if (!*rows)
		return 1;
	const double t_pin = log_clock_s() - t0;
	float *pos = (float *)*rows;
	uint16_t *comp = o->galaxies ? (uint16_t *)((char *)*rows + n * 4 * sizeof(float)) : NULL;
	const int galaxies = o->galaxies;
	t0 = log_clock_s();
	const long long nn = (long long)n;
#pragma omp parallel for schedule(static)
	for (long long i = 0; i < nn; i++) {
		uint16_t c = 0;
		ro_body(galaxies, n, (size_t)i, pos + 4 * i, &c);
		if (comp)
			comp[i] = c;
	}
	printf("host rows: %.2f GB page-locked once in %.2f s; generated in %.2f s (outside the "
	       "timing)\n", bytes / 1e9, t_pin, log_clock_s() - t0);
	hb->pos4 = pos;
	hb->comp = comp;
	hb->n = n;
	return 0;
}

/* After the warm-up frame (wall seconds, its stages t): the device memory
 * the renderer took (free0: free before it), then the table's head. */
static void ro_warmup_report(const struct ro_opts *o, const struct render_ooc_plan *plan,
			     size_t free0, double wall, const struct gpu_render_ooc_timing *t)
{
	char name[128] = "?";
	size_t free1 = 0, total = 0;
	gpu_device_info(name, sizeof name, &free1, &total);
	printf("device memory taken by the renderer: %.2f GiB (budget %.2f GiB, plan "
	       "%.2f GiB); warm-up frame %.1f ms, %d chunks, %.2f GB copied\n\n",
	       (free0 > free1 ? free0 - free1 : 0) / 1073741824.0,
	       o->budget / 1073741824.0, plan->bytes / 1073741824.0, 1e3 * wall, t->chunks,
	       t->bytes / 1e9);
	printf("| n | size | chunks | wall ms | gpu ms | upload ms | splat ms | look ms "
	       "| upload GB/s |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
}

/* Frame -1 (the warm-up, reported) then frames 0 .. o->frames - 1 of hb
 * through gr, the camera circling 2 degrees a frame, each waited for
 * before the next: fr[f] their times; the last one written to o->png.
 * 0, or 1. */
static int ro_frames(const struct ro_opts *o, struct gpu_render *gr,
		     const struct gpu_render_host *hb, const struct render_ooc_plan *plan,
		     size_t free0, struct ro_frame *fr)
{
	const double dist = o->galaxies ? 110 : 12;
	for (int f = -1; f < o->frames; f++) {
		const double a = (2.0 * (f + 1)) * M_PI / 180;
		struct render_camera cam = {.pos = {dist * sin(a), -dist * cos(a), 0.35 * dist},
					    .target = {0, o->galaxies ? 4 : 0, 0},
					    .up = {0, 0, 1},
					    .fov = 45};
		const int slot = (f + 1) % 2;
		const double w0 = log_clock_s();
		struct gpu_render_ooc_timing t;
		if (gpu_render_frame_host(gr, hb, f + 1, &cam, slot) != 0 ||
		    gpu_render_wait(gr, slot) != 0 || gpu_render_ooc_last_timing(gr, &t) != 0)
			return 1;
		const double wall = log_clock_s() - w0;
		if (f < 0) {
			ro_warmup_report(o, plan, free0, wall, &t);
			continue;
		}
		fr[f] = (struct ro_frame){1e3 * wall, t.frame_ms, t.upload_ms, t.splat_ms, t.look_ms,
					  t.bytes / (t.upload_ms * 1e-3) / 1e9};
		if (o->png && f == o->frames - 1) {
			struct gpu_render_host_frame h;
			if (gpu_render_host_frame(gr, slot, &h) != 0 ||
			    out_png_write(o->png, 0, h.w, h.h, 16, h.rgb16) != 0)
				fprintf(stderr, "render-ooc: the last frame was not written to %s\n",
					o->png);
		}
	}
	return 0;
}

int bench_render_ooc(int argc, char **argv)
{
	struct ro_opts o = {.n = 1e7, .frames = 5, .w = 3840, .h = 2160, .budget = 8589934592.0};
	int rc = ro_parse(argc, argv, &o);
	if (rc)
		return rc;
	char why[256], name[128] = "?";
	if (!gpu_probe(why, sizeof why)) {
		printf("SKIP: %s\n", why);
		return 0;
	}
	size_t free0 = 0, total = 0;
	gpu_device_info(name, sizeof name, &free0, &total);
	const size_t n = (size_t)o.n;
	printf("GPU renderer out of core on %s: %zu bodies (%s), %dx%d, default look, budget %.2f GiB\n",
	       name, n, o.galaxies ? "two galaxies" : "Plummer sphere", o.w, o.h,
	       o.budget / 1073741824.0);

	/* the scene's look and the renderer's capacity, the host rows, the renderer */
	static struct scene sc;
	struct sim_state st;
	memset(&st, 0, sizeof st);
	struct gpu_render *gr = NULL;
	struct gpu_render_host hb;
	memset(&hb, 0, sizeof hb);
	void *rows = NULL;
	struct ro_frame fr[RO_MAX_FRAMES];
	struct gpu_render_params p;
	struct render_ooc_plan plan;
	if ((rc = ro_setup(&o, n, &sc, &st, &p, &plan)) != 0 ||
	    (rc = ro_rows(&o, n, &rows, &hb)) != 0)
		goto end;
	st.n = n; /* the most bodies a frame has; the rows are hb's */
	p.chunk = plan.chunk;
	rc = gpu_render_create(&sc, &st, NULL, &p, &gr);
	st.n = 0;
	if (rc) {
		rc = 1;
		goto end;
	}
	if ((rc = ro_frames(&o, gr, &hb, &plan, free0, fr)) != 0)
		goto end;
	printf("| %.3g | %dx%d | %zu | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", o.n, o.w, o.h,
	       plan.nchunks, ro_median_of(fr, o.frames, offsetof(struct ro_frame, wall)),
	       ro_median_of(fr, o.frames, offsetof(struct ro_frame, gpu)),
	       ro_median_of(fr, o.frames, offsetof(struct ro_frame, upload)),
	       ro_median_of(fr, o.frames, offsetof(struct ro_frame, splat)),
	       ro_median_of(fr, o.frames, offsetof(struct ro_frame, look)),
	       ro_median_of(fr, o.frames, offsetof(struct ro_frame, gbs)));
end:
	gpu_render_free(&gr);
	gpu_render_host_free(rows);
	sim_state_free(&st);
	return rc;
}
