/* colormap_data.h - control points of the density-mode colormaps.
 *
 * Values are matplotlib's published 256-entry tables for magma, inferno and
 * viridis (van der Walt & Smith 2015; lib/matplotlib/_cm_listed.py), taken at
 * entries 0, 15, 30, ..., 255: 18 points, equally spaced in t = entry/255.
 * Linear interpolation between them stays within about 0.02 (per channel)
 * of the full tables. Display-encoded (sRGB) RGB in [0, 1]. Included only by
 * render/colormap.c. */
#ifndef NB_COLORMAP_DATA_H
#define NB_COLORMAP_DATA_H

#define COLORMAP_NPOINTS 18

static const float colormap_magma[COLORMAP_NPOINTS][3] = {
	{0.001462f, 0.000466f, 0.013866f}, /* entry 0 */
	{0.035520f, 0.028397f, 0.125209f}, /* entry 15 */
	{0.102815f, 0.063010f, 0.257854f}, /* entry 30 */
	{0.191460f, 0.064818f, 0.396152f}, /* entry 45 */
	{0.291366f, 0.064553f, 0.475462f}, /* entry 60 */
	{0.384299f, 0.097855f, 0.501002f}, /* entry 75 */
	{0.475780f, 0.134577f, 0.507921f}, /* entry 90 */
	{0.569172f, 0.167454f, 0.504105f}, /* entry 105 */
	{0.664915f, 0.198075f, 0.488836f}, /* entry 120 */
	{0.761077f, 0.231214f, 0.460162f}, /* entry 135 */
	{0.852126f, 0.276106f, 0.418573f}, /* entry 150 */
	{0.925937f, 0.346844f, 0.374959f}, /* entry 165 */
	{0.969680f, 0.446936f, 0.360311f}, /* entry 180 */
	{0.989363f, 0.557873f, 0.391671f}, /* entry 195 */
	{0.996580f, 0.668256f, 0.456192f}, /* entry 210 */
	{0.996727f, 0.776795f, 0.541039f}, /* entry 225 */
	{0.992440f, 0.884330f, 0.640099f}, /* entry 240 */
	{0.987053f, 0.991438f, 0.749504f}, /* entry 255 */
};

static const float colormap_inferno[COLORMAP_NPOINTS][3] = {
	{0.001462f, 0.000466f, 0.013866f}, /* entry 0 */
	{0.037668f, 0.025921f, 0.132232f}, /* entry 15 */
	{0.116656f, 0.047574f, 0.272321f}, /* entry 30 */
	{0.217949f, 0.036615f, 0.383522f}, /* entry 45 */
	{0.316282f, 0.053490f, 0.425116f}, /* entry 60 */
	{0.410113f, 0.087896f, 0.433098f}, /* entry 75 */
	{0.503493f, 0.121575f, 0.423356f}, /* entry 90 */
	{0.596940f, 0.154848f, 0.398125f}, /* entry 105 */
	{0.688653f, 0.192239f, 0.357603f}, /* entry 120 */
	{0.775059f, 0.239667f, 0.303526f}, /* entry 135 */
	{0.851384f, 0.302260f, 0.239636f}, /* entry 150 */
	{0.912966f, 0.381636f, 0.169755f}, /* entry 165 */
	{0.956852f, 0.475356f, 0.094695f}, /* entry 180 */
	{0.981895f, 0.579392f, 0.026250f}, /* entry 195 */
	{0.987464f, 0.690366f, 0.079990f}, /* entry 210 */
	{0.973088f, 0.805409f, 0.216877f}, /* entry 225 */
	{0.947594f, 0.917399f, 0.410665f}, /* entry 240 */
	{0.988362f, 0.998364f, 0.644924f}, /* entry 255 */
};

static const float colormap_viridis[COLORMAP_NPOINTS][3] = {
	{0.267004f, 0.004874f, 0.329415f}, /* entry 0 */
	{0.281924f, 0.089666f, 0.412415f}, /* entry 15 */
	{0.280255f, 0.165693f, 0.476498f}, /* entry 30 */
	{0.263663f, 0.237631f, 0.518762f}, /* entry 45 */
	{0.237441f, 0.305202f, 0.541921f}, /* entry 60 */
	{0.208623f, 0.367752f, 0.552675f}, /* entry 75 */
	{0.182256f, 0.426184f, 0.557120f}, /* entry 90 */
	{0.159194f, 0.482237f, 0.558073f}, /* entry 105 */
	{0.137770f, 0.537492f, 0.554906f}, /* entry 120 */
	{0.121148f, 0.592739f, 0.544641f}, /* entry 135 */
	{0.128087f, 0.647749f, 0.523491f}, /* entry 150 */
	{0.180653f, 0.701402f, 0.488189f}, /* entry 165 */
	{0.274149f, 0.751988f, 0.436601f}, /* entry 180 */
	{0.395174f, 0.797475f, 0.367757f}, /* entry 195 */
	{0.535621f, 0.835785f, 0.281908f}, /* entry 210 */
	{0.688944f, 0.865448f, 0.182725f}, /* entry 225 */
	{0.845561f, 0.887322f, 0.099702f}, /* entry 240 */
	{0.993248f, 0.906157f, 0.143936f}, /* entry 255 */
};

#endif
