/* renderer_rank_gpu.c - the stars splat of GPU ranks that hold their own
 * bodies (simulation.ranks: domains with the forces on each rank's GPU):
 * the CPU renderer (renderer_cpu.c) keeps the frame's whole recipe (the
 * sum over the ranks, the screen diffuse layer, wing, glow, tone map, on
 * rank 0), and only its O(N) part, each rank's splat of its own bodies,
 * runs on the rank's GPU. The GPU renderer draws the rank's bodies from
 * the host state in chunks (out of core: render/cuda/gpu_render.h,
 * gpu_render_frame_state), so it holds room for one chunk of bodies
 * beside the locally essential trees whatever the rank owns, and its
 * finishing is switched off (no diffuse layer, wing or glow in its scene):
 * the HDR image it leaves is the stars splat, render_stars_splat_c's to
 * float rounding (tests/test_gpu_render.c, test_gpu_ooc.c), which is
 * downloaded into the eye's picture.
 *
 * Taken where that splat is the CPU's render_stars_splat_c: render.style
 * stars, no dust, render.color_by component (its colour range is made from
 * the state at create, which is each rank's own here), no motion blur, not
 * the fisheye (its mask belongs after the glow); elsewhere the CPU splats. */
#include <stdlib.h>

#include "../dist/dist.h"
#include "../render/cuda/gpu_render.h"
#include "../sim/cuda/gpu.h"
#include "app.h"
#include "renderer.h"

/* device memory for the chunk: this much at most, and at most half of
 * what the trees leave free (they grow little after the first steps) */
#define RANK_SPLAT_BUDGET ((size_t)1 << 30)

struct app_rank_splat {
	struct scene sc;        /* the scene with its finishing off, eye-sized */
	struct gpu_render *gr;
};

/* 1 when sc's picture of st is drawn by render_stars_splat_c alone (the
 * splat the GPU can take; see the header). */
static int rank_splat_takes(const struct scene *sc, const struct sim_state *st)
{
	return sc->render.style == SCENE_STYLE_STARS && !render_dust_present(st) &&
	       sc->render.color_by == SCENE_COLOR_BY_COMPONENT && sc->render.motion_blur.samples <= 1 &&
	       sc->camera.projection != SCENE_PROJ_FISHEYE;
}

int app_rank_splat_create(const struct scene *sc, const struct sim_state *st,
			  const struct sim_units *u, int ew, int eh, struct app_rank_splat **out)
{
	*out = NULL;
	uint64_t total = st->n;
	dist_sum_u64(&total, 1, "bodies for the GPU splat"); /* every rank, even when not taken */
	if (!rank_splat_takes(sc, st))
		return 0;
	struct app_rank_splat *s = calloc(1, sizeof *s);
	if (!s) {
		log_error("out of memory for a renderer");
		return NB_ERUNTIME;
	}
	s->sc = *sc;
	s->sc.render.width = ew;
	s->sc.render.height = eh;
	s->sc.camera.stereo.mode = SCENE_STEREO_NONE; /* the caller draws each eye */
	s->sc.render.diffuse = 0;
	s->sc.render.psf_wing = 0;
	s->sc.render.glow = 0;
	s->sc.render.exposure_auto = 0;
	s->sc.render.exposure = 1;
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = GPU_RENDER_OUT_RGB8;
	p.slots = 1;
	size_t fixed, per_body, max_chunk, fr = 0, tot = 0;
	gpu_render_memory(&s->sc, &p, 1, &fixed, &per_body, &max_chunk);
	char name[128];
	int rc = gpu_device_info(name, sizeof name, &fr, &tot);
	/* at most RANK_SPLAT_BUDGET, and half of what the trees left free: a
	 * GPU the trees nearly fill splats on the CPU instead (the sum is the
	 * same wherever a rank splats) */
	size_t room = fr / 2 > fixed ? fr / 2 - fixed : 0;
	room = room < RANK_SPLAT_BUDGET ? room : RANK_SPLAT_BUDGET;
	if (rc == 0 && (per_body == 0 || room / per_body < RENDER_OOC_MIN_CHUNK)) {
		log_info("render: rank %d splats its bodies on the CPU: its GPU has %.0f MiB free",
			 dist_rank(), (double)fr / 1048576.0);
		app_rank_splat_free(&s);
		return 0;
	}
	struct render_ooc_plan plan = {0};
	struct sim_state most = *st; /* the most bodies a rank may come to hold */
	most.n = (size_t)total;
	if (rc == 0)
		rc = render_ooc_plan(most.n, fixed + room, fixed, per_body, max_chunk, &plan);
	p.chunk = plan.chunk ? plan.chunk : 1;
	if (rc == 0)
		rc = gpu_render_create(&s->sc, &most, u, &p, &s->gr);
	if (rc) {
		app_rank_splat_free(&s);
		return rc;
	}
	if (dist_rank() == 0)
		log_info("render: each rank splats its own bodies on its GPU (chunks of %zu bodies), "
			 "rank 0 finishes the summed frame", p.chunk);
	*out = s;
	return 0;
}

int app_rank_splat(struct app_rank_splat *s, const struct render_camera *cam,
		   const struct sim_state *st, struct render_image *img)
{
	if (img->w != s->sc.render.width || img->h != s->sc.render.height) {
		log_error("GPU splat: a %dx%d picture, made for %dx%d (internal)", img->w, img->h,
			  s->sc.render.width, s->sc.render.height);
		return NB_ERUNTIME;
	}
	int rc = gpu_render_frame_state(s->gr, st, 0, cam, 0);
	if (rc == 0)
		rc = gpu_render_wait(s->gr, 0);
	return rc ? rc : gpu_render_download_hdr(s->gr, img->rgb);
}

void app_rank_splat_free(struct app_rank_splat **s)
{
	if (!s || !*s)
		return;
	gpu_render_free(&(*s)->gr);
	free(*s);
	*s = NULL;
}
