/* image.c - the HDR frame buffer: w*h*3 floats, linear, additive, row 0 top. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

int render_image_alloc(struct render_image *img, int w, int h)
{
	img->w = 0;
	img->h = 0;
	img->rgb = NULL;
	if (w <= 0 || h <= 0 || (size_t)w > SIZE_MAX / 3 / sizeof(float) / (size_t)h) {
		log_error("render: cannot allocate a %d x %d image", w, h);
		return NB_ERUNTIME;
	}
	img->rgb = calloc((size_t)w * (size_t)h * 3, sizeof(float));
	if (!img->rgb) {
		log_error("render: out of memory for a %d x %d image", w, h);
		return NB_ERUNTIME;
	}
	img->w = w;
	img->h = h;
	return 0;
}

void render_image_free(struct render_image *img)
{
	free(img->rgb);
	img->rgb = NULL;
	img->w = 0;
	img->h = 0;
}

void render_image_clear(struct render_image *img)
{
	if (img->rgb)
		memset(img->rgb, 0, (size_t)img->w * (size_t)img->h * 3 * sizeof(float));
}
