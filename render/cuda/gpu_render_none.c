/* gpu_render_none.c - the GPU renderer's interface (render/cuda/gpu_render.h)
 * in a CPU-only build (make CUDA=0; the Makefile compiles it only then,
 * beside gpu_none.c): each entry point reports that CUDA was not compiled
 * in. With CUDA, the .cu files of render/cuda provide the functions
 * (render_create.cu, render.cu, render_finish.cu, render_ooc.cu, ...). */
#include <string.h>

#include "gpu_render.h"

static int gpu_render_none(void)
{
	log_error("GPU rendering: this build has no CUDA support (built with CUDA=0)");
	return NB_ERUNTIME;
}

int gpu_render_create(const struct scene *sc, const struct sim_state *st,
		      const struct sim_units *u, const struct gpu_render_params *p,
		      struct gpu_render **out)
{
	(void)sc, (void)st, (void)u, (void)p;
	*out = NULL;
	return gpu_render_none();
}

void gpu_render_free(struct gpu_render **gr)
{
	if (gr)
		*gr = NULL;
}

int gpu_render_overlay(struct gpu_render *gr, const struct render_overlay *ov, int slot)
{
	(void)gr, (void)ov, (void)slot;
	return gpu_render_none();
}

int gpu_render_upload(struct gpu_render *gr, const struct sim_state *st,
		      struct gpu_render_input *in)
{
	(void)gr, (void)st, (void)in;
	return gpu_render_none();
}

int gpu_render_frame(struct gpu_render *gr, const struct gpu_render_input *in, int frame,
		     const struct render_camera *cam, int slot)
{
	(void)gr, (void)in, (void)frame, (void)cam, (void)slot;
	return gpu_render_none();
}

void *gpu_render_consumed_event(struct gpu_render *gr)
{
	(void)gr;
	return NULL;
}

int gpu_render_wait(struct gpu_render *gr, int slot)
{
	(void)gr, (void)slot;
	return gpu_render_none();
}

int gpu_render_query(struct gpu_render *gr, int slot)
{
	(void)gr, (void)slot;
	return gpu_render_none();
}

int gpu_render_host_frame(const struct gpu_render *gr, int slot, struct gpu_render_host_frame *f)
{
	(void)gr, (void)slot;
	memset(f, 0, sizeof *f);
	return gpu_render_none();
}

int gpu_render_last_timing(struct gpu_render *gr, struct gpu_render_timing *t)
{
	(void)gr;
	memset(t, 0, sizeof *t);
	return gpu_render_none();
}

void gpu_render_set_method(struct gpu_render *gr, enum gpu_render_method m)
{
	(void)gr, (void)m;
}

void gpu_render_set_exposure(struct gpu_render *gr, double e)
{
	(void)gr, (void)e;
}

int gpu_render_set_smoothing(struct gpu_render *gr, const float *h_by_id, size_t n)
{
	(void)gr, (void)h_by_id, (void)n;
	return gpu_render_none();
}

int gpu_render_download_hdr(struct gpu_render *gr, float *rgb)
{
	(void)gr, (void)rgb;
	return gpu_render_none();
}

int gpu_render_tonemap_hdr(struct gpu_render *gr, const float *rgb, int frame, int slot)
{
	(void)gr, (void)rgb, (void)frame, (void)slot;
	return gpu_render_none();
}

int gpu_render_auto_exposure(struct gpu_render *gr, struct render_auto_state *st)
{
	(void)gr, (void)st;
	return gpu_render_none();
}

int gpu_render_download_h(struct gpu_render *gr, float *h_by_id, size_t n)
{
	(void)gr, (void)h_by_id, (void)n;
	return gpu_render_none();
}

/* ---- the framing statistics (render/cuda/gpu_framing.h; render/cuda/framing.cu) ---- */
#include "gpu_framing.h"

int gpu_framing_create(const struct sim_state *st, const float *w_by_comp,
		       struct gpu_framing **out)
{
	(void)st, (void)w_by_comp;
	*out = NULL;
	return gpu_render_none();
}

void gpu_framing_free(struct gpu_framing **fr)
{
	if (fr)
		*fr = NULL;
}

int gpu_framing_centre(struct gpu_framing *fr, const struct gpu_render_input *in,
		       struct render_light_centre *out)
{
	(void)fr, (void)in;
	memset(out, 0, sizeof *out);
	return gpu_render_none();
}

int gpu_framing_need(struct gpu_framing *fr, const struct gpu_render_input *in,
		     const struct render_frame_geom *g, double fraction, double *dist)
{
	(void)fr, (void)in, (void)g, (void)fraction;
	*dist = -1;
	return gpu_render_none();
}

int gpu_framing_inside(struct gpu_framing *fr, const struct gpu_render_input *in,
		       const struct render_frame_geom *g, double dist, double *fraction)
{
	(void)fr, (void)in, (void)g, (void)dist;
	*fraction = 1;
	return gpu_render_none();
}

int gpu_framing_upload(struct gpu_framing *fr, const struct sim_state *st,
		       struct gpu_render_input *in)
{
	(void)fr, (void)st, (void)in;
	return gpu_render_none();
}

void gpu_render_memory(const struct scene *sc, const struct gpu_render_params *p, int out_of_core,
		       size_t *fixed, size_t *per_body, size_t *max_chunk)
{
	(void)sc, (void)p, (void)out_of_core;
	*fixed = 0;
	*per_body = 0;
	*max_chunk = 0;
}

void *gpu_render_host_alloc(size_t bytes)
{
	(void)bytes;
	gpu_render_none();
	return NULL;
}

void gpu_render_host_free(void *p)
{
	(void)p;
}

int gpu_render_mirror(const struct gpu_render *gr, const struct sim_state *st,
		      struct gpu_render_host *hb)
{
	(void)gr, (void)st;
	memset(hb, 0, sizeof *hb);
	return gpu_render_none();
}

void gpu_render_mirror_free(struct gpu_render_host *hb)
{
	if (hb)
		memset(hb, 0, sizeof *hb);
}

int gpu_render_frame_host(struct gpu_render *gr, const struct gpu_render_host *hb, int frame,
			  const struct render_camera *cam, int slot)
{
	(void)gr, (void)hb, (void)frame, (void)cam, (void)slot;
	return gpu_render_none();
}

int gpu_render_frame_state(struct gpu_render *gr, const struct sim_state *st, int frame,
			   const struct render_camera *cam, int slot)
{
	(void)gr, (void)st, (void)frame, (void)cam, (void)slot;
	return gpu_render_none();
}

int gpu_render_ooc_last_timing(struct gpu_render *gr, struct gpu_render_ooc_timing *t)
{
	(void)gr;
	memset(t, 0, sizeof *t);
	return gpu_render_none();
}

size_t gpu_render_chunk(const struct gpu_render *gr)
{
	(void)gr;
	return 0;
}
