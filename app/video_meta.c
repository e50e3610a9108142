/* video_meta.c - the scene's answer to "what is this picture?" for the
 * video's metadata (app.h, app_video_meta): the projection and stereo
 * layout the renderer produced, as output/'s struct out_video_meta, so
 * that output/ never reads camera keys and the camera never knows about
 * MP4 boxes. */
#include <string.h>

#include "../output/output.h"
#include "app.h"

void app_video_meta(const struct scene *sc, struct out_video_meta *meta)
{
	memset(meta, 0, sizeof *meta); /* flat, mono: no spherical metadata */
	meta->projection = sc->camera.projection; /* its row says the tag (output/mp4_sphere.c) */
	/* The renderers put the left eye left (side-by-side) and on top
	 * (top-bottom, render_eye_origin): the order st3d means. */
	switch (sc->camera.stereo.mode) {
	case SCENE_STEREO_SIDE_BY_SIDE:
		meta->stereo = OUT_STEREO_SIDE_BY_SIDE;
		break;
	case SCENE_STEREO_TOP_BOTTOM:
		meta->stereo = OUT_STEREO_TOP_BOTTOM;
		break;
	default:
		meta->stereo = OUT_STEREO_MONO;
		break;
	}
}
