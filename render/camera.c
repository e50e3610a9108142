/* camera.c - where the camera is on a frame, and how it projects.
 *
 * render_camera_at_com: camera keys interpolated in frame number, plus
 * orbit and a given followed centre (render.h; render_camera_at, which
 * measures the centre and frame auto's distance from the bodies, is the
 * framing's, render/framing.c). render_view_make / render_view_project: the camera
 * model every renderer (CPU here, GPU in render/cuda/) uses; the projections'
 * formulas are in render/projection_shared.h.
 *
 * Interpolation. Position and target follow a Catmull-Rom spline written in
 * cubic Hermite form with the frame number as parameter: on the segment
 * between keys k and k+1 (frames t_k < t_{k+1}, h = t_{k+1} - t_k,
 * s = (f - t_k)/h)
 *   p(f) = h00(s) p_k + h10(s) h m_k + h01(s) p_{k+1} + h11(s) h m_{k+1},
 * with the tangents in units per frame
 *   m_k = (p_{k+1} - p_{k-1}) / (t_{k+1} - t_{k-1})          (interior keys)
 *   m_0 = (p_1 - p_0) / (t_1 - t_0), m_last likewise        (end keys: the
 *   neighbour reflected through the endpoint, p_{-1} = 2 p_0 - p_1).
 * Both segments meeting at a key use the same m_k per frame, so velocity is
 * continuous in frames even with unequal key spacing; with equal spacing this
 * is the uniform Catmull-Rom spline. Two keys give a straight line at
 * constant speed. up and fov are linear between keys. Before the first key
 * and after the last one the camera holds that key. On a key frame the key's
 * values are returned exactly.
 *
 * Easing. A key's ease retimes the segment from it to the next key along
 * the same path: s becomes g(s) before the curve and the linear fields are
 * evaluated, g(s) = s (linear, the spline's own timing), s^2 (in: starts
 * from rest), s (2 - s) (out: arrives at rest), s^2 (3 - 2 s) (in-out).
 * g(0) = 0 and g(1) = 1, so every key is still reached exactly on its
 * frame; where g'(end) = 0 the camera's speed goes to zero there (the
 * velocity is continuous only where both sides agree, as with any ease).
 *
 * Exposure keys (render_camera_exposure). The keys that give an exposure
 * are interpolated geometrically (linear in log exposure) in the eased
 * parameter of the earlier one; keys without one are skipped over; before
 * the first and after the last the exposure holds. */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "render.h"

static void v3_copy(double d[3], const double s[3])
{
	d[0] = s[0];
	d[1] = s[1];
	d[2] = s[2];
}

static double v3_dot(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void v3_cross(const double a[3], const double b[3], double out[3])
{
	double c0 = a[1] * b[2] - a[2] * b[1];
	double c1 = a[2] * b[0] - a[0] * b[2];
	double c2 = a[0] * b[1] - a[1] * b[0];
	out[0] = c0;
	out[1] = c1;
	out[2] = c2;
}

static double v3_norm(const double a[3])
{
	return sqrt(v3_dot(a, a));
}

/* g(s) of the file comment, s in [0, 1]. */
static double ease_s(enum scene_ease e, double s)
{
	switch (e) {
	case SCENE_EASE_IN:
		return s * s;
	case SCENE_EASE_OUT:
		return s * (2.0 - s);
	case SCENE_EASE_IN_OUT:
		return s * s * (3.0 - 2.0 * s);
	default:
		return s;
	}
}

/* The key's value of each field, falling back to the camera defaults. */
struct key_vals {
	double t; /* frame */
	double pos[3], target[3], up[3], fov;
};

static void key_resolve(const struct scene *sc, int k, struct key_vals *kv)
{
	const struct scene_camera_key *key = &sc->camera.keys[k];
	kv->t = key->frame;
	v3_copy(kv->pos, key->has_position ? key->position : sc->camera.position);
	v3_copy(kv->target, key->has_target ? key->target : sc->camera.target);
	v3_copy(kv->up, key->has_up ? key->up : sc->camera.up);
	kv->fov = key->has_fov ? key->fov : sc->camera.fov;
}

/* Tangent (per frame) of field `off` (offset of a double[3] in key_vals) at
 * key k of n, per the rule in the file comment. */
static void key_tangent(const struct key_vals *kv, int n, int k, size_t off, double m[3])
{
	int a = k > 0 ? k - 1 : k;
	int b = k < n - 1 ? k + 1 : k;
	const double *pa = (const double *)((const char *)&kv[a] + off);
	const double *pb = (const double *)((const char *)&kv[b] + off);
	double dt = kv[b].t - kv[a].t;
	for (int c = 0; c < 3; c++)
		m[c] = dt > 0 ? (pb[c] - pa[c]) / dt : 0.0;
}

static void hermite(const struct key_vals *kv, int n, int k, double f, size_t off, double out[3])
{
	const double *p0 = (const double *)((const char *)&kv[k] + off);
	const double *p1 = (const double *)((const char *)&kv[k + 1] + off);
	double m0[3], m1[3];
	key_tangent(kv, n, k, off, m0);
	key_tangent(kv, n, k + 1, off, m1);
	double h = kv[k + 1].t - kv[k].t;
	double s = (f - kv[k].t) / h;
	double s2 = s * s, s3 = s2 * s;
	double h00 = 2 * s3 - 3 * s2 + 1;
	double h10 = s3 - 2 * s2 + s;
	double h01 = -2 * s3 + 3 * s2;
	double h11 = s3 - s2;
	for (int c = 0; c < 3; c++)
		out[c] = h00 * p0[c] + h10 * h * m0[c] + h01 * p1[c] + h11 * h * m1[c];
}

/* Keys (or defaults) interpolated at frame f, before follow and orbit. */
static void camera_keys_at(const struct scene *sc, int frame, struct render_camera *cam)
{
	int n = sc->camera.nkeys;
	if (n <= 0) {
		v3_copy(cam->pos, sc->camera.position);
		v3_copy(cam->target, sc->camera.target);
		v3_copy(cam->up, sc->camera.up);
		cam->fov = sc->camera.fov;
		return;
	}
	struct key_vals kv[SCENE_MAX_KEYS];
	if (n > SCENE_MAX_KEYS)
		n = SCENE_MAX_KEYS;
	for (int k = 0; k < n; k++)
		key_resolve(sc, k, &kv[k]);

	/* Hold outside the keyed range; exact values on a key frame. */
	int hit = -1;
	if (frame <= kv[0].t)
		hit = 0;
	else if (frame >= kv[n - 1].t)
		hit = n - 1;
	else
		for (int k = 0; k < n; k++)
			if (kv[k].t == frame)
				hit = k;
	if (hit >= 0) {
		v3_copy(cam->pos, kv[hit].pos);
		v3_copy(cam->target, kv[hit].target);
		v3_copy(cam->up, kv[hit].up);
		cam->fov = kv[hit].fov;
		return;
	}
	int k = 0;
	while (k + 1 < n - 1 && kv[k + 1].t <= frame)
		k++;
	double s = ease_s(sc->camera.keys[k].ease, (frame - kv[k].t) / (kv[k + 1].t - kv[k].t));
	double f = kv[k].t + s * (kv[k + 1].t - kv[k].t);
	hermite(kv, n, k, f, offsetof(struct key_vals, pos), cam->pos);
	hermite(kv, n, k, f, offsetof(struct key_vals, target), cam->target);
	for (int c = 0; c < 3; c++)
		cam->up[c] = (1 - s) * kv[k].up[c] + s * kv[k + 1].up[c];
	cam->fov = (1 - s) * kv[k].fov + s * kv[k + 1].fov;
}

int render_camera_has_exposure(const struct scene *sc)
{
	int n = sc->camera.nkeys < SCENE_MAX_KEYS ? sc->camera.nkeys : SCENE_MAX_KEYS;
	for (int k = 0; k < n; k++)
		if (sc->camera.keys[k].has_exposure)
			return 1;
	return 0;
}

double render_camera_exposure(const struct scene *sc, int frame)
{
	int n = sc->camera.nkeys < SCENE_MAX_KEYS ? sc->camera.nkeys : SCENE_MAX_KEYS;
	int a = -1, b = -1; /* the last exposure key at or before frame, the first after */
	for (int k = 0; k < n; k++) {
		const struct scene_camera_key *key = &sc->camera.keys[k];
		if (!key->has_exposure)
			continue;
		if (key->frame <= frame)
			a = k;
		else if (b < 0)
			b = k;
	}
	if (a < 0 && b < 0)
		return 0.0;
	if (a < 0)
		return sc->camera.keys[b].exposure;
	if (b < 0 || sc->camera.keys[a].frame == frame)
		return sc->camera.keys[a].exposure;
	const struct scene_camera_key *ka = &sc->camera.keys[a], *kb = &sc->camera.keys[b];
	double s = ease_s(ka->ease, (double)(frame - ka->frame) / (double)(kb->frame - ka->frame));
	return ka->exposure * pow(kb->exposure / ka->exposure, s); /* exact at exact powers */
}

/* Rotate p about the axis through c along unit a by angle (radians), Rodrigues. */
static void rotate_about(double p[3], const double c[3], const double a[3], double angle)
{
	double v[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
	double k[3], cs = cos(angle), sn = sin(angle), kd = v3_dot(a, v);
	v3_cross(a, v, k);
	for (int d = 0; d < 3; d++)
		p[d] = c[d] + v[d] * cs + k[d] * sn + a[d] * kd * (1 - cs);
}

void render_camera_at_com(const struct scene *sc, int frame, const double com[3],
			  struct render_camera *cam)
{
	camera_keys_at(sc, frame, cam);
	cam->projection = (int)sc->camera.projection;
	cam->fisheye_aperture = sc->camera.fisheye_aperture;
	cam->dome_tilt = sc->camera.dome_tilt;
	cam->eye = 0;
	cam->eye_separation = sc->camera.stereo.eye_separation_auto ? 0.0 : sc->camera.stereo.eye_separation;
	cam->convergence = sc->camera.stereo.convergence_auto ? 0.0 : sc->camera.stereo.convergence;

	if (sc->camera.orbit != 0 && sc->output.frames > 1) {
		double ang = sc->camera.orbit * (double)frame / (double)(sc->output.frames - 1);
		double a[3];
		v3_copy(a, cam->up);
		double n = v3_norm(a);
		if (n > 0) {
			for (int d = 0; d < 3; d++)
				a[d] /= n;
			rotate_about(cam->pos, cam->target, a, ang * M_PI / 180.0);
		}
	}

	if (sc->camera.follow[0]) {
		for (int d = 0; d < 3; d++) {
			cam->pos[d] += com[d];
			cam->target[d] += com[d];
		}
	}
}

/* Unit vector along a, or 0 if a is (numerically) zero. */
static int v3_unit(const double a[3], double out[3])
{
	double n = v3_norm(a);
	if (!(n > 0) || !isfinite(n))
		return 0;
	for (int d = 0; d < 3; d++)
		out[d] = a[d] / n;
	return 1;
}

void render_view_make(const struct render_camera *cam, int w, int h, struct render_view *v)
{
	memset(v, 0, sizeof *v);
	v->w = w;
	v->h = h;
	v3_copy(v->pos, cam->pos);
	double d[3] = {cam->target[0] - cam->pos[0], cam->target[1] - cam->pos[1],
		       cam->target[2] - cam->pos[2]};
	double dist = v3_norm(d);
	if (!v3_unit(d, v->fwd)) {
		v->fwd[1] = 1.0;
		dist = 0;
	}
	/* Up candidates: the camera's, then +z, then +y. A candidate is used
	 * when it is at least 1e-6 rad away from forward. */
	const double zaxis[3] = {0, 0, 1}, yaxis[3] = {0, 1, 0};
	const double *cand[3] = {cam->up, zaxis, yaxis};
	for (int c = 0; c < 3; c++) {
		double r[3], un[3];
		if (!v3_unit(cand[c], un))
			continue;
		v3_cross(v->fwd, un, r);
		if (v3_norm(r) > 1e-6 && v3_unit(r, v->right))
			break;
	}
	v3_cross(v->right, v->fwd, v->upv);
	double fov = cam->fov * M_PI / 180.0;
	v->focal_px = 0.5 * h / tan(0.5 * fov);
	v->near = 1e-6 * dist;
	v->pj.kind = cam->projection;
	v->pj.w = w;
	v->pj.h = h;
	const struct render_projection *row = render_projection_of(cam->projection);
	if (row && row->view) /* its focal length (fisheye: the dome's tilt too) */
		row->view(cam, v);
	if (cam->eye != 0 && cam->eye_separation > 0) {
		double half = 0.5 * cam->eye_separation * (cam->eye < 0 ? -1.0 : 1.0);
		if (row && row->ods) {
			v->pj.ods = half;
		} else {
			for (int d = 0; d < 3; d++)
				v->pos[d] += half * v->right[d];
			if (cam->convergence > 0)
				v->pj.shift = half * v->focal_px / cam->convergence;
		}
	}
	v->pj.focal = v->focal_px;
	v->pj.near = v->near;
}

int render_view_project(const struct render_view *v, const double p[3], double *x, double *y,
			double *depth)
{
	double d[3] = {p[0] - v->pos[0], p[1] - v->pos[1], p[2] - v->pos[2]};
	return render_proj_map(&v->pj, v3_dot(d, v->right), v3_dot(d, v->upv), v3_dot(d, v->fwd), x,
			       y, depth);
}
