/* exposure.c - render.exposure's precedence, the one rule every renderer
 * and stage reads (render.h, "Exposure"):
 *
 *   1. camera keys with an exposure (camera.keys.*.exposure): the clip is
 *      exposed by hand, frame f at render_camera_exposure(sc, f)
 *      (render/camera.c interpolates the keys); render.exposure is not read;
 *   2. else render.exposure: auto: the moving average of
 *      render_auto_exposure (render/autoexp.c, rule render/tone_shared.h);
 *   3. else the number render.exposure.
 *
 * A manual exposure e means the gain e / render_tonemap_reference(img) on
 * the frame's pixel values. The glow's threshold (render/glow.c, the GPU's
 * render/cuda/render_glow.cu) is written against the number and does not
 * follow an auto or keyed exposure (render_exposure_fixed). The CPU renderer
 * (app/renderer_cpu.c) tone maps through render_tonemap_frame; the GPU
 * renderer (render/cuda/render.cu, app/renderer_gpu.c) takes the mode at
 * create and each keyed frame's value from here. */
#include "render.h"

enum render_exposure_mode render_exposure_mode(const struct scene *sc)
{
	if (render_camera_has_exposure(sc))
		return RENDER_EXPOSURE_KEYS;
	return sc->render.exposure_auto ? RENDER_EXPOSURE_AUTO : RENDER_EXPOSURE_NUMBER;
}

double render_exposure_at(const struct scene *sc, int frame)
{
	switch (render_exposure_mode(sc)) {
	case RENDER_EXPOSURE_KEYS:
		return render_camera_exposure(sc, frame);
	case RENDER_EXPOSURE_NUMBER:
		return sc->render.exposure;
	default:
		return 0.0;
	}
}

double render_exposure_fixed(const struct scene *sc)
{
	return render_exposure_mode(sc) == RENDER_EXPOSURE_NUMBER ? sc->render.exposure : 1.0;
}

double render_exposure_gain(const struct scene *sc, int frame, const struct render_image *img,
			    struct render_auto_state *st)
{
	if (render_exposure_mode(sc) == RENDER_EXPOSURE_AUTO) {
		render_auto_exposure(sc, img, st);
		return st->gain;
	}
	double ref = render_tonemap_reference(img);
	return ref > 0 ? render_exposure_at(sc, frame) / ref : 0.0;
}

void render_tonemap_frame(const struct scene *sc, int frame, const struct render_image *img,
			  struct render_auto_state *st, uint16_t *out16)
{
	render_tonemap_gain(sc, img, render_exposure_gain(sc, frame, img, st), out16);
}

void render_tonemap(const struct scene *sc, const struct render_image *img, uint16_t *out16)
{
	struct render_auto_state st = {0};
	render_tonemap_frame(sc, 0, img, &st, out16);
}
