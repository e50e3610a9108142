/* overlay.c - the overlay.* keys drawn into a frame (render.h): elapsed
 * time top-right, a title top-left, a labelled scale bar bottom-right,
 * each in the font of render/font.c with a dark outline, laid out in one
 * eye's picture and, with camera.stereo, repeated in the other eye. The
 * CPU makes the codes of each box once per frame (the time changes);
 * render_overlay_apply composites them here, render/cuda/render_tone.cu the
 * same codes on the GPU, both through render/overlay_shared.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "overlay_shared.h"
#include "render.h"

int render_overlay_on(const struct scene *sc)
{
	const int bar = sc->overlay.scale_bar_word == 2 ||
			(sc->overlay.scale_bar_word == 0 && sc->overlay.scale_bar > 0);
	return sc->overlay.time || bar || sc->overlay.title[0];
}

int render_overlay_size(const struct scene *sc)
{
	if (sc->overlay.size > 0)
		return sc->overlay.size;
	int ew, eh;
	render_eye_size(sc, &ew, &eh);
	int s = (eh + 150) / 300;
	return s > 1 ? s : 1;
}

int render_overlay_outline(int size)
{
	return size / 3 > 1 ? size / 3 : 1;
}

int render_overlay_margin(const struct scene *sc)
{
	int ew, eh;
	render_eye_size(sc, &ew, &eh);
	int m = eh / 40;
	return m > 4 ? m : 4;
}

void render_overlay_time_text(const struct scene *sc, int frame, char *buf, size_t n)
{
	const double step = sc->simulation.steps_per_frame * sc->simulation.dt;
	const double t = frame * step;
	int dec = 0;
	if (step > 0 && step < 1) {
		dec = (int)ceil(-log10(step) - 1e-9);
		dec = dec < 0 ? 0 : dec > 6 ? 6 : dec;
	}
	if (sc->units == SCENE_UNITS_GALACTIC)
		snprintf(buf, n, "t = %.*f Myr", dec, t);
	else
		snprintf(buf, n, "t = %.*f", dec, t);
}

void render_overlay_length_text(const struct scene *sc, double len, char *buf, size_t n)
{
	if (sc->units != SCENE_UNITS_GALACTIC)
		snprintf(buf, n, "%g", len);
	else if (len < 1)
		snprintf(buf, n, "%g pc", len * 1000.0);
	else
		snprintf(buf, n, "%g kpc", len);
}

int render_overlay_scale_bar(const struct scene *sc, const struct render_camera *cam, double *len,
			     double *px)
{
	*len = *px = 0;
	const int word = sc->overlay.scale_bar_word;
	if (word == 1 || (word == 0 && !(sc->overlay.scale_bar > 0)))
		return 0;
	double d[3], dist = 0;
	for (int k = 0; k < 3; k++) {
		d[k] = cam->target[k] - cam->pos[k];
		dist += d[k] * d[k];
	}
	dist = sqrt(dist);
	struct render_view v;
	int ew, eh; /* the scale of one eye's picture (the frame's when mono) */
	render_eye_size(sc, &ew, &eh);
	render_view_make(cam, ew, eh, &v);
	if (!(dist > 0) || !(v.focal_px > 0))
		return 0;
	const double per_unit = v.focal_px / dist; /* pixels per scene length unit */
	if (word == 0) {
		*len = sc->overlay.scale_bar;
	} else {
		/* 1-2-5 lengths around 20% of the width; the nearest in log wins */
		const double want = 0.2 * ew / per_unit;
		const double dec = pow(10.0, floor(log10(want)));
		const double steps[4] = {1, 2, 5, 10};
		double best = dec, bestd = INFINITY;
		for (int s = 0; s < 4; s++) {
			double e = fabs(log(steps[s] * dec / want));
			if (e < bestd) {
				bestd = e;
				best = steps[s] * dec;
			}
		}
		*len = best;
	}
	*px = per_unit * *len;
	return 1;
}

/* One box being laid out: frame position and size before clipping. */
struct ov_spec {
	int x, y, w, h;
};

/* dst[k] |= src[k], k < n, 8 bytes at a time. */
static void or_into(uint8_t *dst, const uint8_t *src, size_t n)
{
	size_t k = 0;
	for (; k + 8 <= n; k += 8) {
		uint64_t a, b;
		memcpy(&a, dst + k, 8);
		memcpy(&b, src + k, 8);
		a |= b;
		memcpy(dst + k, &a, 8);
	}
	for (; k < n; k++)
		dst[k] |= src[k];
}

/* Shade every empty code within o pixels (Chebyshev) of ink: a separable
 * dilation of the ink mask, rows then columns, each an OR of 2o + 1
 * shifted rows; tmp holds 2 w*h + w bytes. */
static void outline(uint8_t *code, int w, int h, int o, uint8_t *tmp)
{
	const size_t area = (size_t)w * h;
	uint8_t *mask = tmp, *rows = tmp + area, *acc = tmp + 2 * area;
	for (size_t k = 0; k < area; k++)
		mask[k] = code[k] == RENDER_OVERLAY_INK;
	memset(rows, 0, area);
	for (int y = 0; y < h; y++) {
		const size_t r = (size_t)y * w;
		for (int d = -o; d <= o; d++) {
			const int x0 = d < 0 ? -d : 0, x1 = d > 0 ? w - d : w;
			if (x1 > x0)
				or_into(rows + r + x0, mask + r + x0 + d, (size_t)(x1 - x0));
		}
	}
	for (int y = 0; y < h; y++) {
		const int k0 = y - o > 0 ? y - o : 0, k1 = y + o < h - 1 ? y + o : h - 1;
		memset(acc, 0, (size_t)w);
		for (int k = k0; k <= k1; k++)
			or_into(acc, rows + (size_t)k * w, (size_t)w);
		uint8_t *c = code + (size_t)y * w;
		for (int x = 0; x < w; x++)
			if (acc[x] && !c[x])
				c[x] = RENDER_OVERLAY_SHADE;
	}
}

/* Keep the part of box b (codes at ov->code + off, s->w wide) that lies
 * in the w x h frame: the rows are moved to the front of its codes. */
static void clip_box(struct render_overlay *ov, const struct ov_spec *s, size_t off, int w, int h)
{
	int x0 = s->x > 0 ? s->x : 0, y0 = s->y > 0 ? s->y : 0;
	int x1 = s->x + s->w < w ? s->x + s->w : w, y1 = s->y + s->h < h ? s->y + s->h : h;
	if (x1 <= x0 || y1 <= y0)
		return;
	struct render_overlay_box *b = &ov->box[ov->nbox++];
	*b = (struct render_overlay_box){x0, y0, x1 - x0, y1 - y0, off};
	for (int y = y0; y < y1; y++)
		memmove(ov->code + off + (size_t)(y - y0) * b->w,
			ov->code + off + (size_t)(y - s->y) * s->w + (x0 - s->x), (size_t)b->w);
}

/* The ink width of a text (no gap after its last glyph). */
static int ink_width(const char *s, int size)
{
	return s[0] ? render_text_width(s, size) - size : 0;
}

/* Where a frame's boxes go and what they hold. */
struct ov_layout {
	int n, kind[RENDER_OVERLAY_KINDS]; /* kind: 0 title, 1 time, 2 scale bar */
	struct ov_spec sp[RENDER_OVERLAY_KINDS];
	int size, o;                       /* font scale, outline width */
	int bar, tb, tick, bw_in;          /* bar length, thickness, tick height; inner width */
	char tbuf[64], lbuf[48];           /* time and bar labels */
};

/* In one eye's picture (the frame when mono). */
static void layout(const struct scene *sc, const struct render_camera *cam, int frame,
		   struct ov_layout *L)
{
	int W, H;
	render_eye_size(sc, &W, &H);
	const int size = render_overlay_size(sc), o = render_overlay_outline(size);
	const int m = render_overlay_margin(sc), th = RENDER_FONT_H * size;
	double len, pxd;
	memset(L, 0, sizeof *L);
	L->size = size, L->o = o;
	L->tb = size + size / 2 > 2 ? size + size / 2 : 2; /* bar thickness; end ticks 3 tb high */
	L->tick = 3 * L->tb;
	if (render_overlay_scale_bar(sc, cam, &len, &pxd)) {
		L->bar = (int)lrint(pxd);
		if (L->bar < 2 * L->tb + 1 || L->bar > W - 2 * m)
			L->bar = 0;
	}
	if (sc->overlay.title[0]) {
		L->sp[L->n] = (struct ov_spec){m - o, m - o, ink_width(sc->overlay.title, size) + 2 * o,
					       th + 2 * o};
		L->kind[L->n++] = 0;
	}
	if (sc->overlay.time) { /* right-aligned */
		render_overlay_time_text(sc, frame, L->tbuf, sizeof L->tbuf);
		int iw = ink_width(L->tbuf, size);
		L->sp[L->n] = (struct ov_spec){W - m - iw - o, m - o, iw + 2 * o, th + 2 * o};
		L->kind[L->n++] = 1;
	}
	if (L->bar) { /* label centred above the bar */
		render_overlay_length_text(sc, len, L->lbuf, sizeof L->lbuf);
		int lw = ink_width(L->lbuf, size), ih = th + size + L->tick;
		L->bw_in = L->bar > lw ? L->bar : lw;
		L->sp[L->n] = (struct ov_spec){W - m - L->bw_in - o, H - m - ih - o, L->bw_in + 2 * o,
					       ih + 2 * o};
		L->kind[L->n++] = 2;
	}
}

/* Ink of box b into its zeroed codes c. */
static void draw_box(const struct scene *sc, const struct ov_layout *L, int b, uint8_t *c)
{
	const int w = L->sp[b].w, h = L->sp[b].h, o = L->o, size = L->size;
	if (L->kind[b] == 0) {
		render_text_draw(c, w, h, o, o, sc->overlay.title, size, RENDER_OVERLAY_INK);
	} else if (L->kind[b] == 1) {
		render_text_draw(c, w, h, o, o, L->tbuf, size, RENDER_OVERLAY_INK);
	} else {
		const int lw = ink_width(L->lbuf, size), x0 = o + (L->bw_in - L->bar) / 2;
		const int ybot = h - o; /* one past the bar's last row */
		render_text_draw(c, w, h, o + (L->bw_in - lw) / 2, o, L->lbuf, size, RENDER_OVERLAY_INK);
		for (int y = ybot - L->tick; y < ybot; y++)
			for (int x = x0; x < x0 + L->bar; x++)
				if (y >= ybot - L->tb || x < x0 + L->tb || x >= x0 + L->bar - L->tb)
					c[(size_t)y * w + x] = RENDER_OVERLAY_INK;
	}
}

int render_overlay_build(const struct scene *sc, const struct render_camera *cam, int frame,
			 struct render_overlay *ov)
{
	ov->nbox = 0;
	ov->ncode = 0;
	if (!render_overlay_on(sc))
		return 0;
	for (int c = 0; c < 3; c++) {
		double v = sc->overlay.color[c];
		v = v > 0 ? (v < 1 ? v : 1) : 0;
		ov->ink[c] = (uint16_t)lrint(v * 65535.0);
	}
	struct ov_layout L;
	layout(sc, cam, frame, &L);
	size_t need = 0, most = 0;
	for (int b = 0; b < L.n; b++) {
		size_t a = (size_t)L.sp[b].w * (size_t)L.sp[b].h;
		need += a;
		most = a > most ? a : most;
	}
	const size_t scratch = 3 * most; /* the outline's (2 w*h + w) at the end */
	if (need + scratch > ov->cap) {
		uint8_t *p = realloc(ov->code, need + scratch);
		if (!p) {
			log_error("out of memory for the overlay (%zu bytes)", need + scratch);
			return NB_ERUNTIME;
		}
		ov->code = p;
		ov->cap = need + scratch;
	}
	memset(ov->code, 0, need);
	size_t off = 0;
	for (int b = 0; b < L.n; b++) {
		draw_box(sc, &L, b, ov->code + off);
		outline(ov->code + off, L.sp[b].w, L.sp[b].h, L.o, ov->code + need);
		off += (size_t)L.sp[b].w * L.sp[b].h;
	}
	/* clip each box to the eye (in place: a clipped box is never larger) */
	int ew, eh, x0, y0;
	render_eye_size(sc, &ew, &eh);
	off = 0;
	for (int b = 0; b < L.n; b++) {
		clip_box(ov, &L.sp[b], off, ew, eh);
		off += (size_t)L.sp[b].w * L.sp[b].h;
	}
	/* stereo: the same boxes, codes shared, in the right eye (the left
	 * eye's picture is at the frame's origin) */
	render_eye_origin(sc, +1, &x0, &y0);
	if (sc->camera.stereo.mode != SCENE_STEREO_NONE) {
		const int n = ov->nbox;
		for (int b = 0; b < n; b++) {
			struct render_overlay_box *r = &ov->box[ov->nbox++];
			*r = ov->box[b];
			r->x += x0;
			r->y += y0;
		}
	}
	ov->ncode = need;
	return 0;
}

static int in_earlier_box(const struct render_overlay *ov, int b, int i, int j)
{
	for (int k = 0; k < b; k++) {
		const struct render_overlay_box *x = &ov->box[k];
		if (i >= x->x && i < x->x + x->w && j >= x->y && j < x->y + x->h)
			return 1;
	}
	return 0;
}

static int boxes_meet(const struct render_overlay_box *a, const struct render_overlay_box *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y < b->y + b->h && b->y < a->y + a->h;
}

void render_overlay_apply(const struct render_overlay *ov, int w, int h, uint16_t *rgb16)
{
	for (int b = 0; b < ov->nbox; b++) {
		const struct render_overlay_box *x = &ov->box[b];
		int alone = 1;
		for (int k = 0; k < ov->nbox; k++)
			alone &= k == b || !boxes_meet(x, &ov->box[k]);
		for (int j = x->y; j < x->y + x->h && j < h; j++) {
			const uint8_t *c = ov->code + x->off + (size_t)(j - x->y) * x->w;
			for (int i = x->x; i < x->x + x->w && i < w; i++) {
				if (alone) { /* the same rule, the box's own code */
					if (c[i - x->x])
						render_overlay_pixel(x, 1, ov->code, ov->ink, i, j,
								     rgb16 + 3 * ((size_t)j * w + i));
				} else if (!in_earlier_box(ov, b, i, j)) { /* each pixel once */
					render_overlay_pixel(ov->box, ov->nbox, ov->code, ov->ink, i, j,
							     rgb16 + 3 * ((size_t)j * w + i));
				}
			}
		}
	}
}

void render_overlay_free(struct render_overlay *ov)
{
	free(ov->code);
	memset(ov, 0, sizeof *ov);
}
