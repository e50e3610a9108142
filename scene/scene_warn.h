/* scene_warn.h - keys the user set that do nothing (private to scene/:
 * scene.c calls it once a scene has passed every check). The table of
 * rows is in scene_warn.c; scene_strict_set (scene.h) makes each warning
 * an error. */
#ifndef NB_SCENE_WARN_H
#define NB_SCENE_WARN_H

#include "scene.h"
#include "yaml_tree.h"

/* Warn (log_warn) about every key of SC that the file or a --set gave and
 * that the scene's choices leave unused (render.style, simulation.solver,
 * camera.projection, ...), unless it holds its row's "off" value
 * (render.diffuse: 0); about each body entry's softening (entry, part,
 * snapshot type) above 0 in film mode; and, unless the run is a still
 * (a preview of its last frame and no video, PNG or FITS frames or
 * snapshots), about camera keys at or after output.frames.
 * NAME is the scene's name for messages; key_frame[i] and key_fov[i] are
 * the nodes of camera key i's frame and fov (NULL: not given). Returns 0;
 * under scene_strict_set(1) the first such warning is logged as an error
 * instead, and the result is NB_EINPUT. */
int scene_warn_unused(const struct scene *sc, const char *name,
		      const struct ynode *const *key_frame, const struct ynode *const *key_fov);

#endif
