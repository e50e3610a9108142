/* run_gpu.c - the frame loop when the simulation runs on the GPU: the
 * overlapped pipeline of app_run (run_gpu.h).
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
 * Camera follow: the centre of mass of the followed bodies at frame f is
 * reduced on the device (gpu_sim_com, double sums of the float positions)
 * and handed to render_camera_at as one body standing for them, so the
 * camera is the CPU path's (to float rounding) with no host copy of the
 * state. Statistics need no host copy either: the energies, momentum and
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

struct run_gpu {
	const struct scene *sc;
	struct sim_state *st;
	struct sim_engine *eng;
	struct gpu_sim *g;
	const struct sim_units *u;
	FILE *stats;
	struct out_writer *w;
	struct gpu_render *gr; /* NULL when no frames are wanted */
	int follow;            /* camera.follow set */
	/* camera follow: one body at the followed centre of mass */
	struct sim_state proxy;
	double proxy_pos[3], proxy_mass;
	uint32_t proxy_id;
	uint16_t proxy_comp;
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

/* Tell the device which bodies the camera follows, and prepare the proxy
 * state that carries their centre of mass to render_camera_at. */
static int follow_setup(struct run_gpu *r)
{
	const struct sim_state *st = r->st;
	const char *f = r->sc->camera.follow;
	r->follow = f[0] != '\0';
	if (!r->follow)
		return 0;
	int all = strcmp(f, "all") == 0, rc = 0;
	r->proxy_comp = 0;
	unsigned char *match = calloc((size_t)(st->ncomp > 0 ? st->ncomp : 1), 1);
	unsigned char *sel = NULL;
	if (!match)
		goto oom;
	for (int c = st->ncomp - 1; c >= 0; c--)
		if (all || follows(f, st->comps[c].name)) {
			match[c] = 1;
			r->proxy_comp = (uint16_t)c; /* the first that matches */
		}
	if (!all) {
		if (!(sel = malloc(st->n ? st->n : 1)))
			goto oom;
		for (size_t i = 0; i < st->n; i++)
			sel[i] = st->comp[i] < st->ncomp && match[st->comp[i]];
	}
	rc = gpu_sim_set_selection(r->g, sel);
	free(match);
	free(sel);
	r->proxy.pos = r->proxy_pos;
	r->proxy.mass = &r->proxy_mass;
	r->proxy.id = &r->proxy_id;
	r->proxy.comp = &r->proxy_comp;
	r->proxy.ncomp = st->ncomp;
	r->proxy.comps = st->comps;
	return rc;
oom:
	free(match);
	log_error("out of memory for the camera follow selection of %zu bodies", st->n);
	return NB_ERUNTIME;
}

/* Camera of frame f; the steps of frame f are complete. */
static int camera_of(struct run_gpu *r, int f, struct render_camera *cam)
{
	if (!r->follow)
		return render_camera_at(r->sc, f, r->st, cam);
	double com[3], m;
	size_t count;
	int rc = gpu_sim_com(r->g, com, &m, &count);
	if (rc)
		return rc;
	/* One body of the followed mass at their centre: follow_com gives
	 * back com (for massless bodies, their mean; for none, the origin). */
	memcpy(r->proxy_pos, com, sizeof com);
	r->proxy_mass = m;
	r->proxy.n = count > 0 ? 1 : 0;
	return render_camera_at(r->sc, f, &r->proxy, cam);
}

static int renderer_create(struct run_gpu *r)
{
	const struct scene *sc = r->sc;
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
	return gpu_render_create(sc, r->st, r->u, &p, &r->gr);
}

/* Statistics row of frame f from the diagnostics queued for it. */
static int stats_of(struct run_gpu *r, int f)
{
	struct sim_diag d;
	/* sim_stats_row reads only the time of the state it is given: the
	 * host state's is stale on the GPU path, the queue's is frame f's */
	struct sim_state at = {0};
	double t = app_now();
	int rc = sim_engine_diag_take(r->eng, &d, &at.time);
	if (rc == 0)
		rc = sim_stats_row(r->stats, f, &at, &d, r->u);
	r->t_stats += app_now() - t;
	return rc;
}

/* Wait for frame f's slot and hand the frame to the writer. */
static int push_frame(struct run_gpu *r, int f)
{
	const int slot = f % RUN_GPU_SLOTS;
	struct gpu_render_host_frame h;
	struct gpu_render_timing tm;
	double t = app_now();
	int rc = gpu_render_wait(r->gr, slot);
	if (rc == 0)
		rc = gpu_render_host_frame(r->gr, slot, &h);
	if (rc == 0 && h.frame != f) {
		log_error("GPU render: slot %d holds frame %d, expected %d (internal)", slot, h.frame, f);
		rc = NB_ERUNTIME;
	}
	/* Frame f is the renderer's last one and its copy is done: this does
	 * not wait. */
	if (rc == 0 && (rc = gpu_render_last_timing(r->gr, &tm)) == 0)
		r->t_render_gpu += tm.total_ms * 1e-3;
	if (rc == 0) {
		struct out_frame8 fr = {.index = f, .w = h.w, .h = h.h, .y = h.y, .u = h.u,
					.v = h.v, .rgb8 = h.rgb8, .rgb16 = h.rgb16};
		rc = out_writer_push8(r->w, &fr);
	}
	r->t_push += app_now() - t;
	return rc;
}

/* Everything of frame f that happens after its steps are queued and
 * before frame f+1's: see the top of the file, steps 3-5. */
static int queue_frame(struct run_gpu *r, int f)
{
	int rc;
	if (r->stats && (rc = sim_engine_diag_queue(r->eng)))
		return rc;
	double t = app_now();
	rc = sim_engine_check(r->eng);
	r->t_wait_sim += app_now() - t;
	if (rc || !r->gr)
		return rc;
	struct render_camera cam;
	struct gpu_render_input in;
	if ((rc = camera_of(r, f, &cam)) || (rc = gpu_sim_render_input(r->g, &in)))
		return rc;
	t = app_now();
	rc = gpu_render_frame(r->gr, &in, f, &cam, f % RUN_GPU_SLOTS);
	r->t_push += app_now() - t;
	return rc;
}

/* Finish frame f (its steps and rendering are queued): statistics, frame. */
static int finish_frame(struct run_gpu *r, int f)
{
	int rc = 0;
	if (r->stats)
		rc = stats_of(r, f);
	if (rc == 0 && r->gr)
		rc = push_frame(r, f);
	return rc;
}

int app_run_gpu_frames(const struct scene *sc, struct sim_state *st, struct sim_engine *eng,
		       const struct sim_units *u, FILE *stats, struct out_writer *w,
		       struct app_progress *prog, struct app_result *res)
{
	struct run_gpu r = {.sc = sc, .st = st, .eng = eng, .g = sim_engine_gpu(eng), .u = u,
			    .stats = stats, .w = w};
	const int frames = sc->output.frames, spf = sc->simulation.steps_per_frame;
	int rc = 0, f, queued = 0; /* queued: frame f-1 awaits finish_frame */
	double t0 = app_now();

	if (!r.g) {
		log_error("app_run_gpu_frames: the engine is not on the GPU (internal)");
		return NB_ERUNTIME;
	}
	if (w && ((rc = renderer_create(&r)) || (rc = follow_setup(&r))))
		goto end;
	for (f = 0; f < frames; f++) {
		if (f > 0) {
			if (r.gr && (rc = gpu_sim_wait_event(r.g, gpu_render_consumed_event(r.gr))))
				break;
			if ((rc = sim_engine_advance_async(eng, spf, stats != NULL)))
				break;
			/* frame f-1, while frame f simulates */
			queued = 0;
			if ((rc = finish_frame(&r, f - 1)))
				break;
			res->frames_done = f;
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
		int frc = finish_frame(&r, f < frames ? f : frames - 1);
		if (frc)
			rc = frc;
		else
			res->frames_done = (f < frames ? f : frames - 1) + 1;
		app_progress_update(prog, res->frames_done);
	}
	if (rc == 0 && sc->output.final_state[0])
		rc = sim_engine_sync(eng);
end:
	gpu_render_free(&r.gr);
	res->sim_s += r.t_wait_sim;
	res->render_s += r.t_render_gpu;
	if (frames > 0 && (rc == 0 || rc == NB_EINTR))
		log_info("GPU pipeline: %.1f s for %d frames; host waited %.1f s for the simulation, "
			 "spent %.1f s on statistics and %.1f s queueing frames; GPU rendering %.1f s",
			 app_now() - t0, res->frames_done, r.t_wait_sim, r.t_stats, r.t_push,
			 r.t_render_gpu);
	return rc;
}
