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
	(void)sc;
	memset(meta, 0, sizeof *meta); /* flat, mono: no spherical metadata */
	/* TODO(lead, issue 15): when camera.projection and camera.stereo.mode
	 * are merged, map them here:
	 *   camera.projection: perspective -> OUT_PROJECTION_FLAT,
	 *                      equirectangular -> OUT_PROJECTION_EQUIRECT,
	 *                      fisheye -> OUT_PROJECTION_FISHEYE (no box);
	 *   camera.stereo.mode: none -> OUT_STEREO_MONO,
	 *                       side-by-side -> OUT_STEREO_SIDE_BY_SIDE (left eye left),
	 *                       top-bottom -> OUT_STEREO_TOP_BOTTOM (left eye on top).
	 * The renderer must put the left eye where the comments say: st3d
	 * has no flag for the other order that the muxer writes. */
}
