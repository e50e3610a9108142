/* test_gpu_ooc.c - the GPU renderer out of core (render/cuda/render_ooc.cu):
 * a frame drawn from host bodies in chunks equals the one-shot frame of
 * the same bodies (in core: gpu_render_upload + gpu_render_frame) within 1
 * LSB of its 16-bit output, every value, because splats add: only the
 * float summation order differs. A tiny budget (render_ooc_plan over
 * gpu_render_memory's sizes) forces 7 chunks, the last one short. Each
 * case also checks that the picture is not blank and how many chunks and
 * bytes went over the bus.
 *
 * Without a usable GPU the cases are neither run nor counted (SKIP).
 *
 *   make CUDA_ARCH=sm_90 BUILD=/tmp/b /tmp/b/tests/test_gpu_ooc && /tmp/b/tests/test_gpu_ooc */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "twin.h"
#include "sim/cuda/gpu.h"
#include "render/cuda/gpu_render.h"
#include "render/render.h"
#include "scene/scene.h"
#include "sim/sim.h"

#define NB 65000   /* bodies */
#define CHUNK 10000 /* the budget's chunk: 7 chunks, the last 5000 */

static struct scene g_sc;

/* A film scene (the default look: stars, filmic, auto exposure, glow)
 * with overrides ov. */
static struct scene *scene_of(const char *const *ov, int nov)
{
	static const char *text =
		"bodies: [{name: a, model: plummer}]\n"
		"simulation: {solver: none}\n"
		"render: {width: 160, height: 96}\n"
		"camera: {keys: [{frame: 0, position: [1, -9, 3], target: [0, 0, 0]}]}\n";
	int rc = scene_load_string(text, "t.yaml", ".", ov, nov, &g_sc);
	ck_assert_int_eq(rc, 0);
	return &g_sc;
}

/* NB bodies in 3 components: a Plummer-like core with a tail reaching
 * past the frame, float-representable, velocities a slow spin. */
static void bodies(struct sim_state *st)
{
	ck_assert_int_eq(sim_state_alloc(st, NB, 3), 0);
	static const float col[3][3] = {{1, 0.6f, 0.3f}, {0.3f, 0.7f, 1}, {0.9f, 0.9f, 0.9f}};
	for (int c = 0; c < 3; c++) {
		snprintf(st->comps[c].name, sizeof st->comps[c].name, "c%d", c);
		memcpy(st->comps[c].color, col[c], sizeof col[c]);
		st->comps[c].brightness = 1.0;
	}
	for (size_t i = 0; i < NB; i++) {
		double u = fmin(sim_rng_uniform(5, i, 0), 0.999);
		double r = 1.0 / sqrt(pow(u, -2.0 / 3.0) - 1);
		double cz = 2 * sim_rng_uniform(5, i, 1) - 1, ph = 2 * M_PI * sim_rng_uniform(5, i, 2);
		double sz = sqrt(1 - cz * cz);
		st->pos[3 * i] = (float)(r * sz * cos(ph));
		st->pos[3 * i + 1] = (float)(r * sz * sin(ph));
		st->pos[3 * i + 2] = (float)(0.5 * r * cz);
		st->vel[3 * i] = (float)(-0.3 * st->pos[3 * i + 1]);
		st->vel[3 * i + 1] = (float)(0.3 * st->pos[3 * i]);
		st->vel[3 * i + 2] = (float)(0.05 * cz);
		st->mass[i] = (float)((0.5 + sim_rng_uniform(5, i, 3)) / NB);
		st->comp[i] = (uint16_t)(i % 3);
	}
}

static struct gpu_render *renderer(const struct scene *sc, const struct sim_state *st, size_t chunk)
{
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = GPU_RENDER_OUT_RGB16;
	p.slots = 2;
	p.chunk = chunk;
	struct gpu_render *gr = NULL;
	ck_assert_int_eq(gpu_render_create(sc, st, NULL, &p, &gr), 0);
	return gr;
}

/* The chunk a tiny budget gives: fixed + CHUNK bodies (+ a few spare
 * bytes, which buy no body). */
static size_t tiny_budget_chunk(const struct scene *sc)
{
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = GPU_RENDER_OUT_RGB16;
	p.slots = 2;
	size_t fixed, per_body, max_chunk;
	gpu_render_memory(sc, &p, 1, &fixed, &per_body, &max_chunk);
	ck_assert(per_body > 0 && max_chunk >= CHUNK);
	struct render_ooc_plan plan;
	ck_assert_int_eq(render_ooc_plan(NB, fixed + CHUNK * per_body + per_body / 2, fixed, per_body,
					 max_chunk, &plan), 0);
	ck_assert_uint_eq(plan.chunk, CHUNK);
	ck_assert_uint_eq(plan.nchunks, 7);
	ck_assert_uint_eq(plan.last, NB - 6 * CHUNK);
	return plan.chunk;
}

static uint16_t *frame_copy(struct gpu_render *gr, int slot, size_t nv)
{
	ck_assert_int_eq(gpu_render_wait(gr, slot), 0);
	struct gpu_render_host_frame f;
	ck_assert_int_eq(gpu_render_host_frame(gr, slot, &f), 0);
	ck_assert_ptr_nonnull(f.rgb16);
	uint16_t *c = malloc(nv * sizeof *c);
	memcpy(c, f.rgb16, nv * sizeof *c);
	return c;
}

/* The picture lit: some value above 1/8 of full scale, and most of the
 * values differ from the corner's. */
static void expect_lit(const uint16_t *a, size_t nv, const char *what)
{
	int bright = 0;
	size_t differ = 0;
	for (size_t i = 0; i < nv; i++) {
		bright = a[i] > bright ? a[i] : bright;
		differ += a[i] != a[i % 3];
	}
	printf("%s: brightest %d, %zu of %zu values lit\n", what, bright, differ, nv);
	fflush(stdout);
	ck_assert_msg(bright > 65535 / 8, "%s: blank picture (brightest %d)", what, bright);
	ck_assert_msg(differ > nv / 10, "%s: only %zu values lit", what, differ);
}

static void expect_chunks(struct gpu_render *gr, int chunks, size_t bytes, const char *what)
{
	struct gpu_render_ooc_timing t;
	ck_assert_int_eq(gpu_render_ooc_last_timing(gr, &t), 0);
	printf("%s: %d chunks, %zu bytes, upload %.3f ms, splat %.3f ms, look %.3f ms, frame %.3f ms\n",
	       what, t.chunks, t.bytes, t.upload_ms, t.splat_ms, t.look_ms, t.frame_ms);
	fflush(stdout);
	ck_assert_int_eq(t.chunks, chunks);
	ck_assert_uint_eq(t.bytes, bytes);
}

/* A case: the scene's overrides, the eyes the chunks are streamed for
 * and the bytes a body takes on the bus. */
struct ooc_arg {
	const char *what;
	const char *const *ov;
	int nov, eyes;
	size_t row_bytes;
};

struct ofix {
	struct scene *sc;
	struct sim_state st;
	size_t chunk, nv;
	struct render_camera cams[3];
	uint16_t *ref[3], *got[3];
};

/* The scene of the case: frames 0..2 (the camera moving over a still
 * film) one-shot, the reference. */
static void ooc_setup(struct twin_run *r)
{
	const struct ooc_arg *a = r->arg;
	struct ofix *f = calloc(1, sizeof *f);
	ck_assert_ptr_nonnull(f);
	r->fix = f;
	f->sc = scene_of(a->ov, a->nov);
	bodies(&f->st);
	f->chunk = tiny_budget_chunk(f->sc);
	f->nv = (size_t)f->sc->render.width * f->sc->render.height * 3;
	struct gpu_render *one = renderer(f->sc, &f->st, 0);
	for (int fr = 0; fr < 3; fr++) {
		ck_assert_int_eq(render_camera_at(f->sc, 0, &f->st, &f->cams[fr]), 0);
		f->cams[fr].pos[0] += 0.7 * fr;
		struct gpu_render_input in;
		ck_assert_int_eq(gpu_render_upload(one, &f->st, &in), 0);
		ck_assert_int_eq(gpu_render_frame(one, &in, fr, &f->cams[fr], fr % 2), 0);
		f->ref[fr] = frame_copy(one, fr % 2, f->nv);
	}
	gpu_render_free(&one);
}

static void ooc_teardown(struct twin_run *r)
{
	struct ofix *f = r->fix;
	for (int fr = 0; fr < 3; fr++)
		free(f->ref[fr]), free(f->got[fr]);
	sim_state_free(&f->st);
	free(f);
}

static void ooc_ref(struct twin_run *r)
{
	static const char *const names[3] = {"frame 0", "frame 1", "frame 2"};
	struct ofix *f = r->fix;
	const int w = f->sc->render.width;
	for (int fr = 0; fr < 3; fr++) {
		twin_out(r, fr, names[fr]);
		r->out[fr].ref = twin_u16(f->ref[fr], f->nv, w, 3);
	}
}

/* The same rows as the mirror's in ordinary memory: staged. */
static void rows_copy(const struct gpu_render_host *mirror, struct gpu_render_host *rows)
{
	*rows = *mirror;
	rows->owned = NULL;
	float *pos = malloc(NB * 4 * sizeof *pos), *vel = NULL;
	uint16_t *comp = malloc(NB * sizeof *comp);
	ck_assert(pos && comp);
	memcpy(pos, mirror->pos4, NB * 4 * sizeof *pos);
	memcpy(comp, mirror->comp, NB * sizeof *comp);
	if (mirror->vel4) {
		vel = malloc(NB * 4 * sizeof *vel);
		memcpy(vel, mirror->vel4, NB * 4 * sizeof *vel);
	}
	rows->pos4 = pos;
	rows->vel4 = vel;
	rows->comp = comp;
}

/* View 0: out of core from the state, 1: from a page-locked mirror, 2:
 * from ordinary rows (staged); each with a renderer of its own (auto
 * exposure is a running state over a renderer's frames), each frame
 * streamed in 7 chunks a eye. */
static void ooc_frames(struct twin_run *r)
{
	static const char *const src[3] = {"from the state", "pinned mirror", "staged rows"};
	const struct ooc_arg *a = r->arg;
	struct ofix *f = r->fix;
	const int w = f->sc->render.width;
	struct gpu_render *ooc = renderer(f->sc, &f->st, f->chunk);
	ck_assert_uint_eq(gpu_render_chunk(ooc), CHUNK);
	struct gpu_render_host mirror, rows;
	ck_assert_int_eq(gpu_render_mirror(ooc, &f->st, &mirror), 0);
	rows_copy(&mirror, &rows);
	snprintf(r->what, sizeof r->what, "%s, %s", a->what, src[r->view]);
	for (int fr = 0; fr < 3; fr++) {
		int rc = r->view == 0 ? gpu_render_frame_state(ooc, &f->st, fr, &f->cams[fr], fr % 2)
					: gpu_render_frame_host(ooc, r->view == 1 ? &mirror : &rows, fr,
								&f->cams[fr], fr % 2);
		ck_assert_int_eq(rc, 0);
		free(f->got[fr]);
		f->got[fr] = frame_copy(ooc, fr % 2, f->nv);
		expect_chunks(ooc, 7 * a->eyes, (size_t)a->eyes * NB * a->row_bytes, r->what);
		r->out[fr].got = twin_u16(f->got[fr], f->nv, w, 3);
	}
	gpu_render_mirror_free(&mirror);
	ck_assert_ptr_null(mirror.pos4);
	free((void *)rows.pos4);
	free((void *)rows.vel4);
	free((void *)rows.comp);
	gpu_render_free(&ooc);
}

/* Every value within 1 LSB of the one-shot frame's, and the picture lit. */
static void ooc_compare(struct twin_run *r)
{
	struct ofix *f = r->fix;
	twin_compare_all(r);
	for (int fr = 0; fr < 3; fr++)
		expect_lit(f->got[fr], f->nv, r->what);
}

static const struct twin_row ooc_row = {
	"out of core", ooc_setup, ooc_ref, ooc_frames, ooc_compare, ooc_teardown, TWIN_TOL_LSB(1), 3};

/* The default look: stars, filmic, auto exposure, glow 0.3. 18 bytes a
 * body: position and mass, component. */
static const struct ooc_arg default_look_cases[] = {{"stars, default look", NULL, 0, 1, 18}};
TWIN_TEST(stars_default_look_in_7_chunks_equals_one_shot, &ooc_row, default_look_cases)

/* Every stage of the look on the summed picture: the screen diffuse
 * layer (its counts summed over the chunks), the wing, the glow, auto
 * exposure; and the atomic form of the stars splat. */
START_TEST(stars_full_look_in_7_chunks_equals_one_shot)
{
	static const char *ov[] = {"render.diffuse=0.3", "render.psf_wing=0.1", "render.glow=0.5"};
	static const struct ooc_arg tiled[] = {{"stars, diffuse screen, wing, glow", ov, 3, 1, 18}};
	static const struct ooc_arg atomic[] = {
		{"stars atomic, diffuse screen, wing, glow", ov, 3, 1, 18}};
	TWIN_RUN(&ooc_row, tiled);
	setenv("NB_STARS_ATOMIC", "1", 1);
	TWIN_RUN(&ooc_row, atomic);
	unsetenv("NB_STARS_ATOMIC");
}
END_TEST

/* Velocities over the bus too (34 bytes a body): motion blur and colour by
 * line-of-sight velocity; side-by-side stereo streams the chunks once per
 * eye. */
static const char *const blur_stereo_ov[] = {
	"render.motion_blur.samples=3", "render.color_by=los_velocity", "render.width=320",
	"camera.stereo.mode=side-by-side", "simulation.dt=0.2"};
static const struct ooc_arg blur_stereo_cases[] = {
	{"stars, blur, color_by, stereo", blur_stereo_ov, 5, 2, 34}};
TWIN_TEST(blur_color_by_and_stereo_in_chunks_equal_one_shot, &ooc_row, blur_stereo_cases)

/* Style smooth with a fixed smoothing: each chunk's picture (levels of
 * detail upsampled) added into the accumulator. */
static const char *const smooth_fixed_ov[] = {"render.style=smooth", "render.smoothing=0.08",
					      "render.tonemap=asinh", "render.glow=0"};
static const struct ooc_arg smooth_fixed_cases[] = {{"smooth, h 0.08", smooth_fixed_ov, 4, 1, 18}};
TWIN_TEST(smooth_fixed_in_7_chunks_equals_one_shot, &ooc_row, smooth_fixed_cases)

/* What needs every body at once is refused at create; an out-of-core
 * renderer takes no device input. */
START_TEST(unchunkable_features_are_refused)
{
	struct sim_state st;
	memset(&st, 0, sizeof st);
	bodies(&st);
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.chunk = CHUNK;
	struct gpu_render *gr = NULL;
	const char *ad[] = {"render.style=smooth", "render.smoothing=adaptive"};
	ck_assert_int_eq(gpu_render_create(scene_of(ad, 2), &st, NULL, &p, &gr), NB_EINPUT);
	ck_assert_ptr_null(gr);
	const char *df[] = {"render.diffuse=0.3", "render.diffuse_smoothing=adaptive"};
	ck_assert_int_eq(gpu_render_create(scene_of(df, 2), &st, NULL, &p, &gr), NB_EINPUT);
	st.comps[1].kappa = 1.0; /* a dust component */
	ck_assert_int_eq(gpu_render_create(scene_of(NULL, 0), &st, NULL, &p, &gr), NB_EINPUT);
	st.comps[1].kappa = 0.0;
	ck_assert_int_eq(gpu_render_create(scene_of(NULL, 0), &st, NULL, &p, &gr), 0);
	struct gpu_render_input in;
	ck_assert_int_eq(gpu_render_upload(gr, &st, &in), NB_EINPUT);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(&g_sc, 0, &st, &cam), 0);
	memset(&in, 0, sizeof in);
	ck_assert_int_eq(gpu_render_frame(gr, &in, 0, &cam, 0), NB_EINPUT);
	gpu_render_free(&gr);
	sim_state_free(&st);
}
END_TEST

/* The budget holds: at 1080p with the default look and a 512 MiB budget,
 * the device memory taken by the renderer after a frame of 3 chunks is at
 * most the plan's bytes (gpu_render_memory's estimate) + 32 MiB (the
 * allocator's rounding). */
START_TEST(device_memory_stays_within_the_budget)
{
	const char *ov[] = {"render.width=1920", "render.height=1080"};
	struct scene *sc = scene_of(ov, 2);
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = GPU_RENDER_OUT_RGB16;
	p.slots = 2;
	size_t fixed, per_body, max_chunk;
	gpu_render_memory(sc, &p, 1, &fixed, &per_body, &max_chunk);
	const size_t budget = (size_t)512 << 20;
	struct render_ooc_plan plan;
	ck_assert_int_eq(render_ooc_plan(SIZE_MAX / 64, budget, fixed, per_body, max_chunk, &plan), 0);
	const size_t n = 3 * plan.chunk - plan.chunk / 3;
	struct sim_state st;
	memset(&st, 0, sizeof st);
	ck_assert_int_eq(sim_state_alloc(&st, n, 1), 0);
	for (size_t i = 0; i < n; i++) {
		st.pos[3 * i] = 4 * sim_rng_uniform(9, i, 0) - 2;
		st.pos[3 * i + 1] = 4 * sim_rng_uniform(9, i, 1) - 2;
		st.pos[3 * i + 2] = 4 * sim_rng_uniform(9, i, 2) - 2;
		st.mass[i] = 1.0 / (double)n;
	}
	st.comps[0].color[0] = st.comps[0].color[1] = st.comps[0].color[2] = 1.0f;
	st.comps[0].brightness = 1.0;
	char name[128];
	size_t free0 = 0, free1 = 0, total = 0;
	ck_assert_int_eq(gpu_device_info(name, sizeof name, &free0, &total), 0);
	p.chunk = plan.chunk;
	struct gpu_render *gr = NULL;
	ck_assert_int_eq(gpu_render_create(sc, &st, NULL, &p, &gr), 0);
	struct render_camera cam;
	ck_assert_int_eq(render_camera_at(sc, 0, &st, &cam), 0);
	ck_assert_int_eq(gpu_render_frame_state(gr, &st, 0, &cam, 0), 0);
	ck_assert_int_eq(gpu_render_wait(gr, 0), 0);
	ck_assert_int_eq(gpu_device_info(name, sizeof name, &free1, &total), 0);
	const size_t used = free0 > free1 ? free0 - free1 : 0;
	printf("1080p, budget %zu MiB: chunk %zu bodies (%zu B each), plan %.1f MiB (fixed %.1f), "
	       "used %.1f MiB\n", budget >> 20, plan.chunk, per_body, plan.bytes / 1048576.0,
	       fixed / 1048576.0, used / 1048576.0);
	fflush(stdout);
	ck_assert_msg(used <= plan.bytes + ((size_t)32 << 20), "used %zu bytes, plan %zu", used,
		      plan.bytes);
	gpu_render_free(&gr);
	sim_state_free(&st);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_ooc");
	TCase *tc = tcase_create("gpu");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, stars_default_look_in_7_chunks_equals_one_shot);
	tcase_add_test(tc, stars_full_look_in_7_chunks_equals_one_shot);
	tcase_add_test(tc, blur_color_by_and_stereo_in_chunks_equal_one_shot);
	tcase_add_test(tc, smooth_fixed_in_7_chunks_equals_one_shot);
	tcase_add_test(tc, unchunkable_features_are_refused);
	tcase_add_test(tc, device_memory_stays_within_the_budget);
	NB_GPU_TCASE(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
