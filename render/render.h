/* render.h - what a frame means: camera, splatting, tone mapping (CPU
 * reference; the GPU renderer must match it within a stated tolerance).
 *
 * Image convention everywhere: row 0 is the TOP of the picture, pixels are
 * row-major, channels R, G, B interleaved. Camera space: the camera looks
 * along +forward = normalize(target - position); screen x grows to the right
 * (forward x up), screen y grows upward in the world and downward in rows. */
#ifndef NB_RENDER_H
#define NB_RENDER_H

#include <stdint.h>

#include "../sim/sim.h"

struct render_camera {
	double pos[3], target[3], up[3]; /* scene length units, as the scene file */
	double fov;                      /* vertical field of view, degrees */
};

/* Camera for FRAME: keys interpolated with a centripetal-free uniform
 * Catmull-Rom spline on position and target (C1: no velocity jump at a key;
 * exactly the key's values on a key frame), linear on up and fov; plus
 * follow (target and position shifted by the followed centre of mass,
 * computed from st, in scene units) and orbit (rotation of position about
 * target around up by orbit * frame / (frames - 1) degrees). st may be NULL
 * when follow is off. 0 or NB_EINPUT (follow names no component). */
int render_camera_at(const struct scene *sc, int frame, const struct sim_state *st,
		     struct render_camera *cam);

/* HDR image: w*h*3 floats, linear light, additive. */
struct render_image {
	int w, h;
	float *rgb;
};
int render_image_alloc(struct render_image *img, int w, int h); /* zeroed; 0 or NB_ERUNTIME */
void render_image_free(struct render_image *img);
void render_image_clear(struct render_image *img);

/* Splat every body of st (internal units, converted with u to scene units)
 * into img. Each body deposits mass * color (density mode: mass into all
 * three channels equally) spread by a normalised 2D kernel (cubic spline or
 * Gaussian) whose projected radius is smoothing / depth * focal_px; a
 * footprint under one pixel deposits exactly its weight into the pixel it
 * lands in. Bodies behind the near plane or whose footprint misses the image
 * are culled. The image total therefore equals the visible mass (times
 * colour). Pixel values are mass per pixel, scaled by render_splat_norm. */
int render_splat(const struct scene *sc, const struct render_camera *cam,
		 const struct sim_state *st, const struct sim_units *u, struct render_image *img);

/* Tone map img into 16-bit RGB (w*h*3, row 0 top): exposure, curve
 * (linear, log, asinh), colormap in density mode, gamma, background.
 * out16 must hold w*h*3 values. */
void render_tonemap(const struct scene *sc, const struct render_image *img, uint16_t *out16);

#endif
