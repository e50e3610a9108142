/* yuv.h - 16-bit RGB -> YUV 4:2:0 (BT.709, limited range), the CPU twin of
 * the GPU conversion (render/cuda/render_tone.cu) and its test oracle.
 *
 * With R, G, B = value / 65535 (display-encoded, as render_tonemap writes
 * them) and Kr = 0.2126, Kg = 0.7152, Kb = 0.0722 (ITU-R BT.709):
 *   Y = 16 + 219 (Kr R + Kg G + Kb B)                 per pixel;
 *   U = 128 + 112 (B' - Y') / (1 - Kb),
 *   V = 128 + 112 (R' - Y') / (1 - Kr)                per 2x2 block, where
 * R', G', B' are the block's means and Y' = Kr R' + Kg G' + Kb B' (chroma
 * sited at the block centre). Each value is rounded to nearest (halves up)
 * and clamped to [0, 255]; in range, Y lies in [16, 235] and U, V in
 * [16, 240]. */
#ifndef NB_RENDER_YUV_H
#define NB_RENDER_YUV_H

#include <stdint.h>

#define RENDER_YUV_KR 0.2126
#define RENDER_YUV_KG 0.7152
#define RENDER_YUV_KB 0.0722

/* rgb16: w*h*3, row 0 top; w and h even. y: w*h bytes (stride w); u, v:
 * (w/2)*(h/2) bytes each (stride w/2). */
void render_rgb16_to_yuv420p(const uint16_t *rgb16, int w, int h, uint8_t *y, uint8_t *u,
			     uint8_t *v);

#endif
