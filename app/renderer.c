/* renderer.c - the renderer interface (renderer.h): pick the backend and
 * dispatch. */
#include "renderer.h"

int renderer_create(const struct scene *sc, struct sim_state *st, struct engine *eng,
		    const struct sim_units *u, struct renderer **out)
{
	*out = NULL;
	if (engine_draws_on_gpu(eng))
		return renderer_gpu_create(sc, st, eng, u, out);
	return renderer_cpu_create(sc, st, eng, u, out);
}

int renderer_queue(struct renderer *r, int f, const struct render_camera *cam)
{
	return r->ops->queue(r, f, cam);
}

int renderer_push(struct renderer *r, int f, struct out_writer *w, double *render_s)
{
	return r->ops->push(r, f, w, render_s);
}

int renderer_release(struct renderer *r)
{
	return r->ops->release(r);
}

int renderer_hdr(struct renderer *r, int f, const float **rgb, int *w, int *h)
{
	return r->ops->hdr(r, f, rgb, w, h);
}

void renderer_free(struct renderer **r)
{
	if (!r || !*r)
		return;
	(*r)->ops->free(*r);
	*r = NULL;
}
