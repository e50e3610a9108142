/* pyramid_shared.h - image pyramids (mip levels) for the glow
 * (render/glow.c, render/cuda/render_glow.cu) and the screen-space diffuse
 * layer (render/diffuse_screen.c, render/cuda/render_diffuse.cu): the cell
 * operations, written once as static inline functions that the CPU and
 * the GPU (one thread per cell) both run, so the two mean the same.
 *
 * Level l of a w x h image is a grid of render_lod_dim(w, l) x
 * render_lod_dim(h, l) cells of 2^l x 2^l pixels (the image rounded up to
 * whole cells), nch floats per cell, row-major, holding SUMS (light or
 * body counts), not means:
 *  - down: cell (I, J) of level l + 1 is the sum of the in-frame cells
 *    (2I .. 2I+1, 2J .. 2J+1) of level l (in double, stored as float):
 *    the total is kept exactly up to float rounding;
 *  - blur: a separable 9-tap sampled Gaussian (sigma 1 cell; render_pyr_tap),
 *    each source cell's weights renormalised to the ones that land inside
 *    the grid (render_pyr_norm), so no light leaves the frame;
 *  - up: the bilinear sample of a grid at a finer position, cell centres
 *    at d (I + 1/2) in the finer units, clamped to the edge cells
 *    (render_glow_coord's rule); going up one level the sample is divided
 *    by 4 to stay a sum per (finer) cell. Along an axis of even length each
 *    coarse cell gives exactly its value to the finer cells; a coarse edge
 *    cell hanging over an odd length loses half of its share.
 *  - wrap (equirectangular frames, the `wrap` argument): the x axis is a
 *    circle (the +-180 degree seam): the blur's taps and the bilinear
 *    sample's neighbours past one edge are the cells at the other (cell -1
 *    is cell n - 1), nothing is renormalised and nothing is clamped, so
 *    light near the left edge bleeds onto the right edge and back. Exact
 *    (every level a whole number of cells round the circle) when the
 *    width is a multiple of 2^l; otherwise the last, partial cell simply
 *    neighbours cell 0. The y axis (the poles) stays clamped and
 *    renormalised as above. */
#ifndef NB_RENDER_PYRAMID_SHARED_H
#define NB_RENDER_PYRAMID_SHARED_H

#include <math.h>

#ifdef __CUDACC__
#define RENDER_PYR_HD __host__ __device__
#else
#define RENDER_PYR_HD
#endif

#define RENDER_PYR_R 4 /* blur taps -4..4 */

/* Tap k of the blur: a Gaussian sampled at the cells -4..4, its width set
 * so that the discrete variance is 1 cell^2 (sigma 1.000036) and the taps
 * sum to 1. Its last tap is 3.4e-4 of the centre's: the halo tapers to
 * nothing before its reach ends, and its contours stay round (a product of
 * Gaussians is one); the 5-tap binomial (1 4 6 4 1) / 16 used before ended
 * at 1/6 of its centre, a visible square step round every bright clump. */
static inline RENDER_PYR_HD double render_pyr_tap(int k)
{
	switch (k < 0 ? -k : k) {
	case 0: return 0.39892909684430794;
	case 1: return 0.24197144597045123;
	case 2: return 0.053996963445191545;
	case 3: return 0.004433139192352896;
	case 4: return 0.00013390296985040987;
	default: return 0.0;
	}
}

/* Share of source cell j's blur weights that land in [0, n). */
static inline RENDER_PYR_HD double render_pyr_norm(int j, int n)
{
	if (j >= RENDER_PYR_R && j + RENDER_PYR_R < n)
		return 1.0;
	double s = 0.0;
	for (int k = -RENDER_PYR_R; k <= RENDER_PYR_R; k++)
		if (j + k >= 0 && j + k < n)
			s += render_pyr_tap(k);
	return s;
}

/* Cell k of a circle of n cells (any k: the seam's neighbours). */
static inline RENDER_PYR_HD int render_pyr_wrap(int k, int n)
{
	k %= n;
	return k < 0 ? k + n : k;
}

/* Bilinear position along one axis: unit i (centre i + 1/2) of a finer
 * grid between cells *i0 and *i1 of n cells of d units, weight *t on *i1;
 * clamped to the edge cells, or with wrap on a circle of n cells. */
static inline RENDER_PYR_HD void render_pyr_coord(int i, int d, int n, int wrap, int *i0, int *i1,
						  double *t)
{
	double u = (i + 0.5) / d - 0.5;
	if (wrap) {
		int a = (int)floor(u);
		*t = u - a;
		*i0 = render_pyr_wrap(a, n);
		*i1 = render_pyr_wrap(a + 1, n);
		return;
	}
	if (u < 0)
		u = 0;
	if (u > n - 1)
		u = n - 1;
	int a = (int)floor(u);
	*i0 = a;
	*i1 = a + 1 < n ? a + 1 : a;
	*t = u - a;
}

/* Cell (I, J) of the gw x gh grid out (nch channels) = the 2x2 sum of the
 * finer fw x fh grid in. */
static inline RENDER_PYR_HD void render_pyr_down_cell(const float *in, int fw, int fh, float *out,
						      int gw, int nch, int I, int J)
{
	double s[3] = {0, 0, 0};
	for (int j = 2 * J; j < 2 * J + 2 && j < fh; j++)
		for (int i = 2 * I; i < 2 * I + 2 && i < fw; i++)
			for (int c = 0; c < nch; c++)
				s[c] += in[(size_t)nch * ((size_t)j * fw + i) + c];
	for (int c = 0; c < nch; c++)
		out[(size_t)nch * ((size_t)J * gw + I) + c] = (float)s[c];
}

/* Cell (I, J) of one blur pass of the gw x gh grid in -> out (nch
 * channels), along x (along_x) or y, edge-renormalised; with wrap, along x
 * round the circle (nothing to renormalise). */
static inline RENDER_PYR_HD void render_pyr_blur_cell(const float *in, float *out, int gw, int gh,
						      int nch, int along_x, int wrap, int I, int J)
{
	int n = along_x ? gw : gh, at = along_x ? I : J;
	const int circle = wrap && along_x;
	double s[3] = {0, 0, 0};
	for (int k = -RENDER_PYR_R; k <= RENDER_PYR_R; k++) {
		int src = at + k;
		double wk;
		if (circle) {
			src = render_pyr_wrap(src, n);
			wk = render_pyr_tap(k);
		} else {
			if (src < 0 || src >= n)
				continue;
			wk = render_pyr_tap(k) / render_pyr_norm(src, n);
		}
		size_t p = along_x ? (size_t)J * gw + src : (size_t)src * gw + I;
		for (int c = 0; c < nch; c++)
			s[c] += wk * in[(size_t)nch * p + c];
	}
	for (int c = 0; c < nch; c++)
		out[(size_t)nch * ((size_t)J * gw + I) + c] = (float)s[c];
}

/* v[c] = bilinear sample of the gw x gh grid g (nch channels, cells of d
 * finer units) at finer unit (i, j); not divided by anything. wrap: x on
 * the circle (equirectangular), else clamped. */
static inline RENDER_PYR_HD void render_pyr_sample(const float *g, int gw, int gh, int nch, int d,
						   int wrap, int i, int j, double *v)
{
	int i0, i1, j0, j1;
	double tx, ty;
	render_pyr_coord(i, d, gw, wrap, &i0, &i1, &tx);
	render_pyr_coord(j, d, gh, 0, &j0, &j1, &ty);
	const float *a = g + (size_t)nch * ((size_t)j0 * gw + i0), *b = g + (size_t)nch * ((size_t)j0 * gw + i1);
	const float *p = g + (size_t)nch * ((size_t)j1 * gw + i0), *q = g + (size_t)nch * ((size_t)j1 * gw + i1);
	for (int c = 0; c < nch; c++)
		v[c] = (1 - ty) * ((1 - tx) * a[c] + tx * b[c]) + ty * ((1 - tx) * p[c] + tx * q[c]);
}

/* Offsets (floats) of levels 1..nlev of a w x h image with nch channels
 * packed one after the other: off[l] for l = 1..nlev, off[nlev + 1] the
 * total. (Level 0, the image itself, is not stored here.) */
static inline RENDER_PYR_HD size_t render_pyr_layout(int w, int h, int nch, int nlev, size_t *off)
{
	size_t o = 0;
	for (int l = 1; l <= nlev; l++) {
		off[l] = o;
		size_t gw = ((size_t)w + ((size_t)1 << l) - 1) >> l, gh = ((size_t)h + ((size_t)1 << l) - 1) >> l;
		o += (size_t)nch * gw * gh;
	}
	off[nlev + 1] = o;
	return o;
}

/* ---- the glow (render.glow; the rule in render/glow_shared.h) ---- */

#define RENDER_GLOW_LEVELS 4 /* pyramid levels 1..4: cells of 2, 4, 8, 16 px */

/* ---- the screen-space diffuse layer (render.diffuse_smoothing: screen) ----
 *
 * Rule (docs/scenes.md "Diffuse layer"), on the stars image S (w x h) and
 * the count image C of the drawn bodies that project into the frame
 * (a body counts in the pixel floor(x), floor(y) where its light is not
 * black; bodies drawn black, like the default scene's dark halos, count
 * nowhere):
 *  1. Levels l = 1 .. Lmax, Lmax = render_diffuse_lmax(h) (cells of 2 px
 *     up to ~h / 64 px): S_l, C_l the pyramid sums (down), SB_l, CB_l
 *     their blurs (x then y).
 *  2. Per pixel p: n_l(p) = RENDER_DIFFUSE_AREA * (bilinear sample of CB_l
 *     at p), the bodies in the disc of radius 2 sigma_l around p, sigma_l^2
 *     = 1.25 cells^2 the per-axis variance of one level's smoothing (the
 *     cell box 1/12, the blur 1, the bilinear tent 1/6), i.e. 5 pi cells.
 *  3. The level: the smallest l with n_l >= k (k = render.neighbours):
 *     lambda = 1 when l = 1; lambda = l - 1 + t, t = (k - n_{l-1}) /
 *     (n_l - n_{l-1}) in [0, 1], otherwise; lambda = Lmax when no level
 *     holds k. So lambda is continuous across the picture (no seams).
 *  4. The raw layer at p: (1 - t) * sample(SB_a) / 4^a + t * sample(SB_b)
 *     / 4^b, a = floor(lambda), b = a + 1 (t = lambda - a; b not used when
 *     t = 0).
 *  5. The weight w_p in [0, 1]: 1 where some level holds k bodies; where
 *     none does, w_p = n_Lmax(p) / k, the fraction of k that the coarsest
 *     level holds (continuous: no seam where the search gives up). A lone
 *     star (n_Lmax <= 5 pi (3/8)^2 = 2.21, the blur's peak 3/8 per axis)
 *     gives at most w = 2.21 / k of its light to the layer: sparse stars
 *     stay stars instead of lighting a square of the coarsest cells.
 *  6. The frame: out_p = S_p (1 - alpha w_p) + alpha L_p, alpha = d / (1 +
 *     d), d = render.diffuse, L_p = f w_p raw_p (raw: step 4's layer), f =
 *     sum_p w_p S_p / sum_p w_p raw_p (in double over the frame; w_p S_p
 *     the pixel's three channels summed, times w_p, stored as a float). The
 *     layer is faded by w_p as the stars are: a lone star gives away at
 *     most alpha w of its light and its halo is the raw layer times w too
 *     (with L = f raw the global f ~ 1 would put a lone star's full halo
 *     back around it). So sum_p L_p = sum_p w_p S_p
 *     and sum_p out_p = sum S - alpha sum w S + alpha sum w S = sum S: the
 *     total light is kept exactly (up to float rounding). It is written as
 *     the adaptive layer's mix (S + d E) / (1 + d) with the effective layer
 *     E_p = L_p + (1 - w_p) S_p: (S + d E) / (1 + d) = S (1 - alpha) +
 *     alpha L + alpha (1 - w) S = S (1 - alpha w) + alpha L, and sum E =
 *     sum w S + sum (1 - w) S = sum S. Where w = 1 everywhere, E = L
 *     scaled to the stars' total: the frame is (S + d L) / (1 + d) as
 *     before this weight. (w = 0 where no body is near: E = S there.)
 * A body alone in a field of density rho (bodies per px^2) is spread with
 * rms radius sqrt(2.5) cells at the level where 5 pi cells hold k bodies:
 * rms = sqrt(2.5 k / (5 pi rho)) = 0.71 r_k, r_k = sqrt(k / (pi rho)) the
 * radius of the disc holding k bodies. */
#define RENDER_DIFFUSE_MAX_LEVELS 10
#define RENDER_DIFFUSE_AREA (5.0 * 3.14159265358979323846)

/* Coarsest level: the largest l in [1, RENDER_DIFFUSE_MAX_LEVELS] with
 * 2^l <= max(2, h / RENDER_DIFFUSE_CAP_DIV): the widest smoothing is
 * 1.58 x 2^l px rms (25 px at 1080p, 50 px at 4K), the same share of the
 * frame at any size. It caps the spread of sparse bodies as render.h_cap
 * does for the adaptive layer: without it (h / 16 tried) a lone star in a
 * tail lit a square of ~160 px at 720p, and the frame fogged. */
#define RENDER_DIFFUSE_CAP_DIV 64
static inline RENDER_PYR_HD int render_diffuse_lmax(int h)
{
	int l = 1;
	while (l < RENDER_DIFFUSE_MAX_LEVELS && (2 << l) * RENDER_DIFFUSE_CAP_DIV <= h)
		l++;
	return l;
}

/* Step 5's fade, x = n_Lmax / k < 1: w = x. */
static inline RENDER_PYR_HD double render_diffuse_fade(double x)
{
	return x < 0 ? 0.0 : x > 1 ? 1.0 : x;
}

/* The levels' blurred grids, as the per-pixel rule reads them. */
struct render_diffuse_levels {
	const float *sb[RENDER_DIFFUSE_MAX_LEVELS + 1]; /* SB_l, 3 channels (index l) */
	const float *cb[RENDER_DIFFUSE_MAX_LEVELS + 1]; /* CB_l, 1 channel */
	int gw[RENDER_DIFFUSE_MAX_LEVELS + 1], gh[RENDER_DIFFUSE_MAX_LEVELS + 1];
	int lmax;
	double k;
	int wrap; /* equirectangular: x round the seam (render_pyr_sample) */
};

/* Steps 2-5 at pixel (i, j): w_p raw_p into v[3]; returns w_p. */
static inline RENDER_PYR_HD double render_diffuse_pixel(const struct render_diffuse_levels *L, int i,
							int j, double *v)
{
	double prev = 0.0, t = 0.0, wp = 1.0;
	int a = L->lmax;
	for (int l = 1; l <= L->lmax; l++) {
		double c;
		render_pyr_sample(L->cb[l], L->gw[l], L->gh[l], 1, 1 << l, L->wrap, i, j, &c);
		double n = RENDER_DIFFUSE_AREA * c;
		if (n >= L->k) {
			if (l == 1) {
				a = 1;
			} else {
				a = l - 1;
				t = n > prev ? (L->k - prev) / (n - prev) : 1.0;
				t = t < 0 ? 0 : t > 1 ? 1 : t;
			}
			break;
		}
		prev = n;
		if (l == L->lmax)
			wp = render_diffuse_fade(n / L->k);
	}
	double s[3];
	render_pyr_sample(L->sb[a], L->gw[a], L->gh[a], 3, 1 << a, L->wrap, i, j, s);
	double fa = (1.0 - t) / (double)((size_t)1 << (2 * a));
	for (int c = 0; c < 3; c++)
		v[c] = fa * s[c];
	if (t > 0) {
		int b = a + 1;
		render_pyr_sample(L->sb[b], L->gw[b], L->gh[b], 3, 1 << b, L->wrap, i, j, s);
		double fb = t / (double)((size_t)1 << (2 * b));
		for (int c = 0; c < 3; c++)
			v[c] += fb * s[c];
	}
	for (int c = 0; c < 3; c++)
		v[c] *= wp;
	return wp;
}

/* Step 6: w_p S_p of the pixel (its three channels s) as summed. */
static inline RENDER_PYR_HD float render_diffuse_wsum(double wp, const float *s)
{
	return (float)(wp * ((double)s[0] + (double)s[1] + (double)s[2]));
}

/* Step 6: one value of the effective layer E = f (w_p raw) + (1 - w_p) S,
 * f = sum w S / sum w raw; wraw: render_diffuse_pixel's value. */
static inline RENDER_PYR_HD float render_diffuse_effective(float wraw, double f, double wp, float s)
{
	return (float)((double)wraw * f + (1.0 - wp) * (double)s);
}

#endif
