/* yuv.c - 16-bit RGB -> YUV420P, BT.709 limited range (render/yuv.h): the
 * reference the GPU conversion is tested against. Computed in double. */
#include <math.h>
#include <stddef.h>

#include "yuv.h"

static uint8_t yuv_round(double x)
{
	double r = floor(x + 0.5);
	return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

void render_rgb16_to_yuv420p(const uint16_t *rgb16, int w, int h, uint8_t *y, uint8_t *u,
			     uint8_t *v)
{
	const double s = 1.0 / 65535.0;
#pragma omp parallel for schedule(static)
	for (int by = 0; by < h / 2; by++) {
		for (int bx = 0; bx < w / 2; bx++) {
			double sum[3] = {0, 0, 0};
			for (int dy = 0; dy < 2; dy++) {
				for (int dx = 0; dx < 2; dx++) {
					size_t p = (size_t)(2 * by + dy) * w + 2 * bx + dx;
					const uint16_t *c = rgb16 + 3 * p;
					double luma = RENDER_YUV_KR * c[0] + RENDER_YUV_KG * c[1] +
						      RENDER_YUV_KB * c[2];
					y[p] = yuv_round(16.0 + 219.0 * s * luma);
					sum[0] += c[0];
					sum[1] += c[1];
					sum[2] += c[2];
				}
			}
			double r = 0.25 * s * sum[0], g = 0.25 * s * sum[1], b = 0.25 * s * sum[2];
			double luma = RENDER_YUV_KR * r + RENDER_YUV_KG * g + RENDER_YUV_KB * b;
			size_t q = (size_t)by * (w / 2) + bx;
			u[q] = yuv_round(128.0 + 112.0 * (b - luma) / (1.0 - RENDER_YUV_KB));
			v[q] = yuv_round(128.0 + 112.0 * (r - luma) / (1.0 - RENDER_YUV_KR));
		}
	}
}
