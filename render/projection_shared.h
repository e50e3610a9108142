/* projection_shared.h - camera.projection's formulas (perspective, fisheye,
 * equirectangular, and the stereo eyes), written once for the CPU
 * (render/camera.c's render_view_project, the splats of render/) and the
 * GPU (render/cuda/render_stars.cu, render_splat.cu, render_dust.cu) as static
 * inline functions that compile for both (RENDER_PROJ_HD). docs/scenes.md
 * ("Projections and stereo") states the rules for users.
 *
 * Input: a body's offset from the eye in the view's basis, cx = d.right,
 * cy = d.upv, cz = d.fwd (render_view: fwd is the view axis, upv the
 * image's up, right = fwd x upv). Output: continuous pixel coordinates
 * (x, y) on the eye's w x h image (row 0 the top; pixel (i, j) covers
 * [i, i+1) x [j, j+1)) and a depth, the distance that sizes footprints
 * (r = smoothing / depth * focal) and orders dust slabs.
 *
 *  perspective   x = (w/2 + shift) + focal cx / cz, y = h/2 - focal cy / cz,
 *                depth = cz, culled when cz <= near. focal = (h/2) /
 *                tan(fov/2) pixels per unit slope; shift: the stereo eye's
 *                image shift (0 mono, and then exactly the old pinhole).
 *  fisheye       azimuthal equidistant: theta = atan2(sqrt(cx^2 + cy^2), cz)
 *                the angle from the view axis, radius on the image rho =
 *                focal theta with focal = (w/2) / (aperture/2) pixels per
 *                radian, direction (cx, -cy) / sqrt(cx^2 + cy^2) from the
 *                centre (w/2, h/2) (a body right behind goes straight down);
 *                depth = |d|, culled when |d| <= near. The circle of radius
 *                w/2 holds the aperture; pixels whose centre lies outside
 *                it are set to 0 after the glow (render_proj_inside).
 *  equirect      longitude lon = atan2(cx, cz) (0 at the view axis, the
 *                target; positive to the right), latitude lat = atan2(cy,
 *                sqrt(cx^2 + cz^2)) (from the horizontal plane of the
 *                camera's up); x = w/2 + focal lon, y = h/2 - focal lat,
 *                focal = w / (2 pi) = h / pi pixels per radian; x wrapped
 *                into [0, w). depth = |d|.
 *                Omni-directional stereo (ods = signed eye radius, -r the
 *                left eye, +r the right, 0 mono): each body is seen from the
 *                point of the eye circle (radius r about the camera, in the
 *                horizontal plane) whose tangent ray passes through it:
 *                lon = atan2(cx, cz) - asin(ods / rh), rh = sqrt(cx^2 +
 *                cz^2) (the ratio clamped to [-1, 1]), lat = atan2(cy, t),
 *                t = sqrt(max(rh^2 - r^2, 0)) the tangent ray's horizontal
 *                length, depth = sqrt(t^2 + cy^2).
 *
 * Wrap-around (equirect only): a footprint is drawn as up to
 * RENDER_PROJ_COPIES copies (render_proj_ghost): copy 0 itself, bit 0 the
 * copy shifted by -+w across the +-180 degree seam, bit 1 the copy
 * reflected across the nearer pole (y -> -y or 2h - y, x -> x + w/2: going
 * over a pole lands on the opposite meridian). Each copy is clipped to the
 * image like any footprint, so the parts that leave the frame through the
 * seam or a pole come back from the other side and a body's light is kept
 * (footprints stay round: they are not stretched towards the poles). */
#ifndef NB_RENDER_PROJECTION_SHARED_H
#define NB_RENDER_PROJECTION_SHARED_H

#include <math.h>

#include "../scene/scene.h"

#ifdef __CUDACC__
#define RENDER_PROJ_HD __host__ __device__
#else
#define RENDER_PROJ_HD
#endif

/* Kinds: enum scene_projection, the one enum for the choice (the row of
 * each, render/projection.c, holds everything else about it). */
#define RENDER_PROJ_COPIES 4 /* copies of an equirect footprint (render_proj_ghost) */

/* A projection as the kernels read it (render_view_make fills it). */
struct render_proj {
	int kind;     /* enum scene_projection */
	int w, h;     /* the eye's image */
	double focal; /* perspective: pixels per unit slope; else pixels per radian */
	double near;  /* depth <= near is culled */
	double shift; /* perspective stereo: image shift, pixels (0 mono) */
	double ods;   /* equirect stereo: signed eye radius, scene units (0 mono) */
};

/* a + b and a * b without fused multiply-adds, so the CPU and the GPU
 * round alike. */
#ifdef __CUDA_ARCH__
#define RENDER_PROJ_ADD(a, b) __dadd_rn((a), (b))
#define RENDER_PROJ_MUL(a, b) __dmul_rn((a), (b))
#else
#define RENDER_PROJ_ADD(a, b) ((a) + (b))
#define RENDER_PROJ_MUL(a, b) ((a) * (b))
#endif

/* The projection above. Returns 1 with (x, y, depth) set, or 0 when culled
 * (depth still set). x, y may be non-finite only for non-finite input. */
static inline RENDER_PROJ_HD int render_proj_map(const struct render_proj *p, double cx,
						 double cy, double cz, double *x, double *y,
						 double *depth)
{
	if (p->kind == SCENE_PROJ_PERSPECTIVE) {
		*depth = cz;
		if (!(cz > p->near) || cz <= 0)
			return 0;
		*x = RENDER_PROJ_ADD(RENDER_PROJ_ADD(0.5 * p->w, p->shift),
				     RENDER_PROJ_MUL(p->focal, cx) / cz);
		*y = 0.5 * p->h - RENDER_PROJ_MUL(p->focal, cy) / cz;
		return 1;
	}
	if (p->kind == SCENE_PROJ_FISHEYE) {
		const double rp = sqrt(RENDER_PROJ_ADD(RENDER_PROJ_MUL(cx, cx), RENDER_PROJ_MUL(cy, cy)));
		const double dist = sqrt(RENDER_PROJ_ADD(RENDER_PROJ_MUL(rp, rp), RENDER_PROJ_MUL(cz, cz)));
		*depth = dist;
		if (!(dist > p->near))
			return 0;
		const double rho = RENDER_PROJ_MUL(p->focal, atan2(rp, cz));
		if (rp > 0) {
			*x = 0.5 * p->w + RENDER_PROJ_MUL(rho, cx / rp);
			*y = 0.5 * p->h - RENDER_PROJ_MUL(rho, cy / rp);
		} else { /* on the axis: the centre, or (behind) straight down */
			*x = 0.5 * p->w;
			*y = 0.5 * p->h + rho;
		}
		return 1;
	}
	/* equirectangular */
	const double rh = sqrt(RENDER_PROJ_ADD(RENDER_PROJ_MUL(cx, cx), RENDER_PROJ_MUL(cz, cz)));
	double lon = atan2(cx, cz), t = rh;
	if (p->ods != 0) {
		const double r = fabs(p->ods);
		const double s = rh > r ? p->ods / rh : (p->ods > 0 ? 1.0 : -1.0);
		lon = lon - asin(s);
		const double t2 = RENDER_PROJ_ADD(RENDER_PROJ_MUL(rh, rh), -RENDER_PROJ_MUL(r, r));
		t = t2 > 0 ? sqrt(t2) : 0.0;
	}
	const double dist = sqrt(RENDER_PROJ_ADD(RENDER_PROJ_MUL(t, t), RENDER_PROJ_MUL(cy, cy)));
	*depth = dist;
	if (!(dist > p->near))
		return 0;
	double xx = 0.5 * p->w + RENDER_PROJ_MUL(p->focal, lon);
	if (xx >= p->w)
		xx -= p->w;
	else if (xx < 0)
		xx += p->w;
	*x = xx;
	*y = 0.5 * p->h - RENDER_PROJ_MUL(p->focal, atan2(cy, t));
	return 1;
}

/* Copies of a footprint to draw: RENDER_PROJ_COPIES for equirect, else 1
 * (the row's wrap, render/projection.c). */
static inline RENDER_PROJ_HD int render_proj_copies(const struct render_proj *p)
{
	return p->kind == SCENE_PROJ_EQUIRECT ? RENDER_PROJ_COPIES : 1;
}

/* Centre (*gx, *gy) of copy k (0 .. render_proj_copies - 1) of a footprint
 * centred at (x, y): the wrap-around rule above (copy 0: (x, y)). */
static inline RENDER_PROJ_HD void render_proj_ghost(const struct render_proj *p, int k, double x,
						    double y, double *gx, double *gy)
{
	double ax = x, ay = y;
	if (k & 2) { /* over the nearer pole, onto the opposite meridian */
		ay = y < 0.5 * p->h ? -y : 2.0 * p->h - y;
		/* A footprint window starts at floor(centre): for the mirror
		 * of an integer centre k the window must start one row lower
		 * (the mirror of rows [k - R, k + R] is [-k - R - 1, -k + R - 1]),
		 * so an integer is moved down by one ulp. */
		if (ay == floor(ay))
			ay = nextafter(ay, ay - 1.0);
		ax = x + 0.5 * p->w;
		if (ax >= p->w)
			ax -= p->w;
	}
	if (k & 1) /* across the seam */
		ax = ax < 0.5 * p->w ? ax + p->w : ax - p->w;
	*gx = ax;
	*gy = ay;
}

/* 1 when pixel (i, j) shows the scene: always, except for the fisheye (the
 * row's circle, render/projection.c),
 * whose pixels with their centre beyond the circle of radius w/2 about
 * (w/2, h/2) stay 0. */
static inline RENDER_PROJ_HD int render_proj_inside(const struct render_proj *p, int i, int j)
{
	if (p->kind != SCENE_PROJ_FISHEYE)
		return 1;
	const double dx = (i + 0.5) - 0.5 * p->w, dy = (j + 0.5) - 0.5 * p->h, r = 0.5 * p->w;
	return RENDER_PROJ_ADD(RENDER_PROJ_MUL(dx, dx), RENDER_PROJ_MUL(dy, dy)) <= r * r;
}

#endif
