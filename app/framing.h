/* framing.h - each view's camera on each frame when it moves by itself
 * (camera.follow set, or camera.frame: auto): the followed centre, the
 * auto distance, their springs, and the share of the drawn light inside
 * the frame, measured on every such frame and reported at the end.
 * Private to app/frames.c (app/framing.c). */
#ifndef NB_APP_FRAMING_H
#define NB_APP_FRAMING_H

#include "../engine/engine.h"
#include "../render/render.h"

struct app_framing;

/* The framing of view number `view` (0 ..), sc, over the engine's bodies
 * (st: the run's state, as created; on the GPU the statistics come from the
 * engine's device positions). *out = NULL when the camera does not move by
 * itself (follow "" and frame keys): the caller then uses the keys alone.
 * With the environment NB_CAMERA_LOG=FILE, each frame's camera and measure
 * go to FILE as CSV (view 0 truncates it, later views append;
 * docs/scenes.md "Framing"). 0 or an error (logged). */
int app_framing_create(const struct scene *sc, const struct sim_state *st, struct engine *eng,
		       const struct sim_units *u, int view, struct app_framing **out);
/* The camera of frame f (the steps of frame f complete; frames in
 * order, each once): keys and orbit (render_camera_at_com), the followed
 * centre (follow: light smoothed by camera.smoothing, others as they
 * are), the auto distance (smoothed), then the share of the drawn light
 * inside the resulting frame is measured. 0 or an error (logged). */
int app_framing_camera(struct app_framing *fr, int f, struct render_camera *cam);
/* Log the measure over the frames made: "camera: drawn light inside the
 * frame ... min X% (frame F), mean Y%, N frames below frame_fraction".
 * who: a prefix ("" for a single view). */
void app_framing_report(const struct app_framing *fr, const char *who);
void app_framing_free(struct app_framing **fr);

#endif
