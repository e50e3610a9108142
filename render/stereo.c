/* stereo.c - camera.stereo: where each eye's image sits in the frame, the
 * eye's camera, and the fisheye's circle mask (render.h, "Stereo";
 * the projections themselves are in render/projection_shared.h).
 *
 * An eye is rendered as a picture of its own (splat, diffuse layer, wing,
 * glow, mask) and copied into its half of the frame, which is then tone
 * mapped as one: so no light crosses the split and both eyes share one
 * exposure. (The GPU draws a top-bottom eye in place in its half: the
 * same picture, no copy.) The overlay is drawn in each eye
 * (render/overlay.c). */
#include <math.h>
#include <string.h>

#include "render.h"

void render_eye_size(const struct scene *sc, int *w, int *h)
{
	*w = sc->render.width;
	*h = sc->render.height;
	if (sc->camera.stereo.mode == SCENE_STEREO_SIDE_BY_SIDE)
		*w /= 2;
	else if (sc->camera.stereo.mode == SCENE_STEREO_TOP_BOTTOM)
		*h /= 2;
}

void render_eye_origin(const struct scene *sc, int eye, int *x0, int *y0)
{
	int ew, eh;
	render_eye_size(sc, &ew, &eh);
	*x0 = 0;
	*y0 = 0;
	if (eye > 0 && sc->camera.stereo.mode == SCENE_STEREO_SIDE_BY_SIDE)
		*x0 = ew;
	else if (eye > 0 && sc->camera.stereo.mode == SCENE_STEREO_TOP_BOTTOM)
		*y0 = eh;
}

void render_eye_camera(const struct render_camera *cam, int eye, struct render_camera *out)
{
	*out = *cam;
	out->eye = eye < 0 ? -1 : eye > 0 ? 1 : 0;
	double d[3] = {cam->target[0] - cam->pos[0], cam->target[1] - cam->pos[1],
		       cam->target[2] - cam->pos[2]};
	double dist = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
	if (!(out->convergence > 0))
		out->convergence = dist;
	if (!(out->eye_separation > 0))
		out->eye_separation = out->convergence / 30.0;
}

void render_image_blit(const struct render_image *src, struct render_image *dst, int x0, int y0)
{
	for (int j = 0; j < src->h; j++)
		memcpy(dst->rgb + 3 * ((size_t)(y0 + j) * dst->w + x0),
		       src->rgb + 3 * (size_t)j * src->w, 3 * (size_t)src->w * sizeof(float));
}

void render_projection_mask(const struct render_camera *cam, struct render_image *img)
{
	const struct render_projection *row = render_projection_of(cam->projection);
	if (!row || !row->circle)
		return;
	struct render_proj p = {.kind = cam->projection, .w = img->w, .h = img->h};
	for (int j = 0; j < img->h; j++)
		for (int i = 0; i < img->w; i++)
			if (!render_proj_inside(&p, i, j)) {
				float *px = img->rgb + 3 * ((size_t)j * img->w + i);
				px[0] = px[1] = px[2] = 0.0f;
			}
}
