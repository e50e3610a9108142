/* run_gpu.c - the frame loop when the simulation runs on the GPU: the
 * overlapped pipeline of app_run_views (run_gpu.h), for one view or
 * several views of one simulation.
 *
 * Four things run at once:
 *   GPU, simulation stream   the steps of frame f+1;
 *   GPU, renderer's streams  splat, tone map and YUV of frame f, then its
 *                            copy into a ring of pinned host slots;
 *   writer thread (output/)  x264 / PNG of frame f-1;
 *   this thread              queues the GPU work, moves finished frames from
 *                            the ring to the writer, writes statistics.
 * Iteration f (ring of S slots, frame f in slot f % S):
 *   1. the simulation stream waits for the renderer's consumed event (frame
 *      f-1 has read the positions), then the steps of frame f are queued;
 *      the call returns at once;
 *   2. while they run: the statistics row of frame f-1 from its
 *      diagnostics; wait for slot (f-1) % S and push frame f-1 to the
 *      writer, which copies the 8-bit planes (1.5 bytes/px for video) and
 *      blocks only when its queue is full;
 *   3. queue the diagnostics of frame f (statistics only: energies and
 *      momenta reduced on the device, 96 bytes to pinned memory);
 *   4. wait for the steps of frame f (the finiteness check);
 *   5. the camera of frame f, then queue its rendering into slot f % S.
 * So nothing blocks unless the writer's queue is full or the GPU is the
 * slowest stage, in which case step 4 is where the host waits for it.
 *
 * Several views: each view has its own renderer (its own streams, ring
 * and consumed event) and writer thread; all read the same device
 * positions through gpu_sim_render_input. Step 1 waits for every
 * renderer's consumed event, steps 2 and 5 go through the views in turn,
 * and the one diagnostics reduction of step 3 gives every view's
 * statistics row. A view that fails (its writer, renderer or camera) is
 * dropped; the others go on.
 *
 * Camera follow: the centre of mass of the followed bodies at frame f is
 * reduced on the device (gpu_sim_com, double sums of the float positions)
 * and handed to render_camera_at as one body standing for them, so the
 * camera is the CPU path's (to float rounding) with no host copy of the
 * state. The device holds one selection: views that follow the same name
 * share it; views following different names set theirs in turn each frame
 * (an n-byte upload each). Statistics need no host copy either: the energies, momentum and
 * angular momentum are reduced on the device (sim_engine_diag_*,
 * kernels/diag.cu) in double, as sim_diag_compute sums the float state.
 * Only output.final_state downloads the whole state, once, at the end.
 *
 * The renderer waits once per frame for a scalar (the splat pair count,
 * kernels/render_splat.cu) inside gpu_render_frame. That wait costs the
 * GPU nothing measurable: the steps of frame f+1 cannot start before
 * frame f's positions are read (the consumed event, recorded before the
 * count is read back), so the only idle time is one host round trip per
 * frame (tens of microseconds); the host time it shows as "queueing
 * frames" is the GPU's work for frame f, waited for there instead of
 * elsewhere. */
#include <stdlib.h>
#include <string.h>

#include "../kernels/gpu.h"
#include "../kernels/gpu_render.h"
#include "../render/render.h"
#include "run_gpu.h"

#define RUN_GPU_SLOTS 3 /* frame f renders while f-1 is pushed: 2 would do, 3 gives slack */

/* One view's GPU side. */
struct gpu_view {
	struct run_view *v;
	struct gpu_render *gr; /* NULL when the view wants no frames */
	int follow;            /* camera.follow set */
	unsigned char *sel;    /* followed bodies by id; NULL: all */
	/* camera follow: one body at the followed centre of mass */
	struct sim_state proxy;
	double proxy_pos[3], proxy_mass;
	uint32_t proxy_id;
	uint16_t proxy_comp;
};

struct run_gpu {
	struct sim_state *st;
	struct sim_engine *eng;
	struct gpu_sim *g;
	const struct sim_units *u;
	struct gpu_view *gv;
	int nv;
	int need_pot;           /* some view writes statistics, or the energy is checked */
	int diag_queued;        /* a diagnostics reduction awaits its take */
	double max_e;           /* simulation.max_energy_error; 0: not checked */
	int have_d0;            /* d0 holds frame 0's diagnostics */
	struct sim_diag d0;
	const char *sel_follow; /* follow name whose selection the device holds; NULL none */
	/* stage times, seconds */
	double t_wait_sim, t_stats, t_push, t_render_gpu;
};

/* Does component name CN belong to follow name F (render/camera.c's rule:
 * exact, or F is a disk galaxy and CN is "F.disk" etc.)? */
static int follows(const char *f, const char *cn)
{
	size_t lf = strlen(f);
	return strcmp(f, cn) == 0 || (strncmp(f, cn, lf) == 0 && cn[lf] == '.');
}

/* Which bodies view gv's camera follows, and the proxy state that carries
 * their centre of mass to render_camera_at. */
static int follow_setup(struct run_gpu *r, struct gpu_view *gv)
{
	const struct sim_state *st = r->st;
	const char *f = gv->v->sc->camera.follow;
	gv->follow = f[0] != '\0';
	if (!gv->follow)
		return 0;
	int all = strcmp(f, "all") == 0;
	gv->proxy_comp = 0;
	unsigned char *match = calloc((size_t)(st->ncomp > 0 ? st->ncomp : 1), 1);
	if (!match)
		goto oom;
	for (int c = st->ncomp - 1; c >= 0; c--)
		if (all || follows(f, st->comps[c].name)) {
			match[c] = 1;
			gv->proxy_comp = (uint16_t)c; /* the first that matches */
		}
	if (!all) {
		if (!(gv->sel = malloc(st->n ? st->n : 1)))
			goto oom;
		for (size_t i = 0; i < st->n; i++)
			gv->sel[i] = st->comp[i] < st->ncomp && match[st->comp[i]];
	}
	free(match);
	gv->proxy.pos = gv->proxy_pos;
	gv->proxy.mass = &gv->proxy_mass;
	gv->proxy.id = &gv->proxy_id;
	gv->proxy.comp = &gv->proxy_comp;
	gv->proxy.ncomp = st->ncomp;
	gv->proxy.comps = st->comps;
	return 0;
oom:
	free(match);
	log_error("out of memory for the camera follow selection of %zu bodies", st->n);
	return NB_ERUNTIME;
}

/* Camera of frame f of view gv; the steps of frame f are complete. */
static int camera_of(struct run_gpu *r, struct gpu_view *gv, int f, struct render_camera *cam)
{
	const struct scene *sc = gv->v->sc;
	if (!gv->follow)
		return render_camera_at(sc, f, r->st, cam);
	int rc = 0;
	if (!r->sel_follow || strcmp(r->sel_follow, sc->camera.follow)) {
		rc = gpu_sim_set_selection(r->g, gv->sel);
		r->sel_follow = rc ? NULL : sc->camera.follow;
	}
	double com[3], m;
	size_t count;
	if (rc || (rc = gpu_sim_com(r->g, com, &m, &count)))
		return rc;
	/* One body of the followed mass at their centre: follow_com gives
	 * back com (for massless bodies, their mean; for none, the origin). */
	memcpy(gv->proxy_pos, com, sizeof com);
	gv->proxy_mass = m;
	gv->proxy.n = count > 0 ? 1 : 0;
	return render_camera_at(sc, f, &gv->proxy, cam);
}

static int renderer_create(struct run_gpu *r, struct gpu_view *gv)
{
	const struct scene *sc = gv->v->sc;
	struct gpu_render_params p;
	gpu_render_default_params(&p);
	p.outputs = 0;
	if (sc->output.video[0])
		p.outputs |= GPU_RENDER_OUT_YUV420P;
	if (sc->output.png_dir[0])
		p.outputs |= sc->output.png_depth == 16 ? GPU_RENDER_OUT_RGB16 : GPU_RENDER_OUT_RGB8;
	if (sc->output.preview[0] && sc->output.preview_kind != SCENE_PREVIEW_NONE)
		p.outputs |= GPU_RENDER_OUT_RGB8;
	if (!p.outputs)
		p.outputs = GPU_RENDER_OUT_RGB8; /* a writer with no output: keep it fed */
	p.slots = RUN_GPU_SLOTS;
	p.adaptive_every = sc->render.adaptive_every;
	return gpu_render_create(sc, r->st, r->u, &p, &gv->gr);
}

/* Statistics rows of frame f, one per view that writes them, from the
 * diagnostics queued for it. */
static int stats_of(struct run_gpu *r, int f)
{
	if (!r->diag_queued)
		return 0;
	struct sim_diag d;
	/* sim_stats_row reads only the time of the state it is given: the
	 * host state's is stale on the GPU path, the queue's is frame f's */
	struct sim_state at = {0};
	double t = app_now();
	r->diag_queued = 0;
	int rc = sim_engine_diag_take(r->eng, &d, &at.time);
	if (rc == 0 && r->max_e > 0) { /* a blow-up that stays finite (as on the CPU) */
		if (!r->have_d0) {
			r->d0 = d, r->have_d0 = 1;
		} else if (sim_diag_energy_error(&r->d0, &d) > r->max_e) {
			/* the host state for the message: the device's latest */
			if ((rc = sim_engine_sync(r->eng)) == 0)
				rc = sim_diag_check_energy(r->st, &r->d0, &d, r->max_e);
			if (rc == 0)
				rc = NB_ERUNTIME; /* cannot happen: the same test */
			return rc;
		}
	}
	for (int k = 0; rc == 0 && k < r->nv; k++) {
		struct run_view *v = r->gv[k].v;
		int vrc = v->stats ? sim_stats_row(v->stats, f, &at, &d, r->u) : 0;
		if (vrc)
			run_view_fail(v, vrc);
	}
	r->t_stats += app_now() - t;
	return rc;
}

/* Wait for frame f's slot of view gv and hand the frame to its writer. */
static int push_frame(struct run_gpu *r, struct gpu_view *gv, int f)
{
	const int slot = f % RUN_GPU_SLOTS;
	struct gpu_render_host_frame h;
	struct gpu_render_timing tm;
	double t = app_now();
	int rc = gpu_render_wait(gv->gr, slot);
	if (rc == 0)
		rc = gpu_render_host_frame(gv->gr, slot, &h);
	if (rc == 0 && h.frame != f) {
		log_error("GPU render: slot %d holds frame %d, expected %d (internal)", slot, h.frame, f);
		rc = NB_ERUNTIME;
	}
	/* Frame f is the renderer's last one and its copy is done: this does
	 * not wait. */
	if (rc == 0 && (rc = gpu_render_last_timing(gv->gr, &tm)) == 0) {
		r->t_render_gpu += tm.total_ms * 1e-3;
		gv->v->res->render_s += tm.total_ms * 1e-3;
	}
	if (rc == 0) {
		struct out_frame8 fr = {.index = f, .w = h.w, .h = h.h, .y = h.y, .u = h.u,
					.v = h.v, .rgb8 = h.rgb8, .rgb16 = h.rgb16};
		rc = out_writer_push8(gv->v->w, &fr);
	}
	r->t_push += app_now() - t;
	return rc;
}

/* Everything of frame f that happens after its steps are queued and
 * before frame f+1's: see the top of the file, steps 3-5. */
static int queue_frame(struct run_gpu *r, int f)
{
	int rc = 0, want_stats = 0, want_frames = 0;
	for (int k = 0; k < r->nv; k++) {
		want_stats |= r->gv[k].v->stats != NULL || r->max_e > 0;
		want_frames |= r->gv[k].v->rc == 0 && r->gv[k].gr;
	}
	if (want_stats) {
		if ((rc = sim_engine_diag_queue(r->eng)))
			return rc;
		r->diag_queued = 1;
	}
	double t = app_now();
	rc = sim_engine_check(r->eng);
	r->t_wait_sim += app_now() - t;
	if (rc || !want_frames)
		return rc;
	struct gpu_render_input in;
	if ((rc = gpu_sim_render_input(r->g, &in)))
		return rc;
	for (int k = 0; k < r->nv; k++) {
		struct gpu_view *gv = &r->gv[k];
		struct render_camera cam;
		if (gv->v->rc || !gv->gr)
			continue;
		int vrc = camera_of(r, gv, f, &cam);
		t = app_now();
		if (vrc == 0)
			vrc = gpu_render_frame(gv->gr, &in, f, &cam, f % RUN_GPU_SLOTS);
		r->t_push += app_now() - t;
		if (vrc)
			run_view_fail(gv->v, vrc);
	}
	return 0;
}

/* Finish frame f (its steps and rendering are queued): statistics, then
 * each view's frame. */
static int finish_frame(struct run_gpu *r, int f)
{
	int rc = stats_of(r, f);
	for (int k = 0; rc == 0 && k < r->nv; k++) {
		struct gpu_view *gv = &r->gv[k];
		if (gv->v->rc || !gv->gr)
			continue;
		int vrc = push_frame(r, gv, f);
		if (vrc)
			run_view_fail(gv->v, vrc);
	}
	for (int k = 0; rc == 0 && k < r->nv; k++)
		if (r->gv[k].v->rc == 0)
			r->gv[k].v->res->frames_done = f + 1;
	return rc;
}

/* Before the steps of the next frame: every renderer has read the positions. */
static int wait_renderers(struct run_gpu *r)
{
	for (int k = 0; k < r->nv; k++) {
		int rc = r->gv[k].gr ? gpu_sim_wait_event(r->g, gpu_render_consumed_event(r->gv[k].gr)) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

int app_run_gpu_frames(struct run_view *v, int nv, struct sim_state *st, struct sim_engine *eng,
		       const struct sim_units *u, struct app_progress *prog, double *sim_s)
{
	const struct scene *sc = v[0].sc;
	struct run_gpu r = {.st = st, .eng = eng, .g = sim_engine_gpu(eng), .u = u, .nv = nv,
			    .max_e = sc->simulation.max_energy_error,
			    .need_pot = sc->simulation.max_energy_error > 0};
	const int frames = sc->output.frames, spf = sc->simulation.steps_per_frame;
	int rc = 0, f = 0, queued = 0, done = 0, want_final = 0; /* queued: frame f-1 awaits finish_frame */
	double t0 = app_now();

	if (!r.g) {
		log_error("app_run_gpu_frames: the engine is not on the GPU (internal)");
		return NB_ERUNTIME;
	}
	if (!(r.gv = calloc((size_t)nv, sizeof *r.gv))) {
		log_error("out of memory for %d views", nv);
		return NB_ERUNTIME;
	}
	for (int k = 0; k < nv; k++) {
		r.gv[k].v = &v[k];
		r.need_pot |= v[k].stats != NULL;
		int vrc = 0;
		if (v[k].rc == 0 && v[k].w && (vrc = renderer_create(&r, &r.gv[k])) == 0)
			vrc = follow_setup(&r, &r.gv[k]);
		if (vrc)
			run_view_fail(&v[k], vrc);
	}
	for (f = 0; f < frames && run_views_live(v, nv); f++) {
		if (f > 0) {
			if ((rc = wait_renderers(&r)) || (rc = sim_engine_advance_async(eng, spf, r.need_pot)))
				break;
			/* frame f-1, while frame f simulates */
			queued = 0;
			if ((rc = finish_frame(&r, f - 1)))
				break;
			done = f;
			app_progress_update(prog, f);
		}
		if ((rc = queue_frame(&r, f)))
			break;
		queued = 1;
		if (app_interrupted() && f + 1 < frames) {
			rc = NB_EINTR;
			break;
		}
	}
	/* The last frame (or, interrupted, the current one) is still in flight. */
	if ((rc == 0 || rc == NB_EINTR) && queued) {
		int last = f < frames ? f : frames - 1;
		int frc = finish_frame(&r, last);
		if (frc)
			rc = frc;
		else
			done = last + 1;
		app_progress_update(prog, done);
	}
	for (int k = 0; k < nv; k++)
		want_final |= v[k].rc == 0 && v[k].sc->output.final_state[0];
	if (rc == 0 && want_final)
		rc = sim_engine_sync(eng);
	for (int k = 0; k < nv; k++) {
		gpu_render_free(&r.gv[k].gr);
		free(r.gv[k].sel);
	}
	free(r.gv);
	*sim_s += r.t_wait_sim;
	if (frames > 0 && (rc == 0 || rc == NB_EINTR) && run_views_live(v, nv))
		log_info("GPU pipeline: %.1f s for %d frames%s; host waited %.1f s for the simulation, "
			 "spent %.1f s on statistics and %.1f s queueing frames; GPU rendering %.1f s",
			 app_now() - t0, done, nv > 1 ? " of every view" : "", r.t_wait_sim, r.t_stats,
			 r.t_push, r.t_render_gpu);
	return rc;
}
