/* scene.h - the resolved scene: what a scene file says, with every default
 * filled in and every value checked.
 *
 * Values are stored as the user wrote them, in the scene's own units
 * (units: nbody -> G = 1; units: galactic -> kpc, km/s, M_sun, Myr;
 * units: snapshot -> the code units of the first snapshot entry).
 * scene_units() gives the factors that turn them into the internal G = 1
 * system; the simulation converts once, when it builds the initial state.
 *
 * Loading: scene_load() parses YAML (libyaml: a plain event parser that
 * reports line and column for every node, which is what our error messages
 * need; libcyaml would map straight into structs but hides positions and
 * cannot express our cross-key checks), applies --set overrides, validates,
 * and fills struct scene. Every key has a default except those marked
 * REQUIRED below. */
#ifndef NB_SCENE_H
#define NB_SCENE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SCENE_NAME_MAX 64
#define SCENE_PATH_MAX 1024
#define SCENE_MAX_BODIES 64 /* entries in bodies: */
#define SCENE_MAX_KEYS 256  /* entries in camera.keys: */

/* units: snapshot = the code units of the scene's first snapshot entry
 * (its header's or bodies.*.units.*, else GADGET's defaults): lengths,
 * masses, velocities and times as that file's code writes them. */
enum scene_units { SCENE_UNITS_NBODY, SCENE_UNITS_GALACTIC, SCENE_UNITS_SNAPSHOT };
/* none: film mode, no forces (docs/snapshots.md, "Filming a snapshot series") */
enum scene_solver { SCENE_SOLVER_DIRECT, SCENE_SOLVER_BARNES_HUT, SCENE_SOLVER_NONE };
enum scene_backend { SCENE_BACKEND_AUTO, SCENE_BACKEND_CUDA, SCENE_BACKEND_CPU };
enum scene_direct_kernel { SCENE_DIRECT_AUTO, SCENE_DIRECT_PAIRWISE, SCENE_DIRECT_GATHER };
/* Barnes-Hut opening criterion (sim.h, sim_tree_accel_ex): bmax accepts a
 * cell when bmax < theta d (bmax: a bound on its bodies' distance from
 * its centre of mass); com when its side l < theta d. mass (not yet a
 * scene value: the trees and the bench take it, docs/PHYSICS.md "Opening
 * by mass") when bmax < theta(M) d, theta(M) >= theta growing as the
 * cell's mass M falls (Dehnen 2002; sim/tree_internal.h). */
enum scene_opening { SCENE_OPENING_BMAX, SCENE_OPENING_COM, SCENE_OPENING_MASS };
/* How the GPU tree keeps its bodies in key order between steps
 * (sim/cuda/tree_migrate.cu): sort re-sorts every body each step (CUB radix
 * sort); migrate moves only the bodies that left their branch (a key range)
 * and re-sorts within branches. Same forces within the tree's tolerance. */
enum scene_reorder { SCENE_REORDER_SORT, SCENE_REORDER_MIGRATE };
/* simulation.timesteps: shared (every body takes dt) or individual (block
 * steps dt_max / 2^L per body, sim/timestep.c; docs/PHYSICS.md). */
enum scene_timesteps { SCENE_TIMESTEPS_SHARED, SCENE_TIMESTEPS_INDIVIDUAL };
/* simulation.ranks: over MPI ranks, replicate (every rank holds and steps
 * every body, dist/dist.h) or domains (each rank holds only the bodies of
 * its stretch of the Morton curve, issue 31). */
enum scene_ranks { SCENE_RANKS_REPLICATE, SCENE_RANKS_DOMAINS };
/* simulation.softening_kernel: the force law inside the softening length
 * (sim/soften.h): plummer 1/(r^2 + eps^2)^(3/2); spline GADGET's cubic
 * spline, exactly Newtonian beyond h = 2.8 eps (eps the Plummer-equivalent
 * length). */
enum scene_soft_kernel { SCENE_SOFT_PLUMMER, SCENE_SOFT_SPLINE };
/* simulation.accuracy: a preset of theta, multipoles, softening and step
 * (scene/scene_accuracy.c has the rows and docs/BENCHMARKS.md their cost) */
enum scene_accuracy { SCENE_ACCURACY_DEFAULT, SCENE_ACCURACY_DRAFT, SCENE_ACCURACY_FINE };
enum scene_model {
	SCENE_MODEL_PLUMMER,
	SCENE_MODEL_HERNQUIST,
	SCENE_MODEL_DISK_GALAXY,
	SCENE_MODEL_FILE,
	SCENE_MODEL_SNAPSHOT,
};
/* bodies.*.columns (model: file): the quantities a body table's columns
 * can hold, in the order of scene_body.columns (sim/table.c) */
enum scene_column {
	SCENE_COL_X, SCENE_COL_Y, SCENE_COL_Z,
	SCENE_COL_VX, SCENE_COL_VY, SCENE_COL_VZ,
	SCENE_COL_MASS,
	SCENE_NCOL
};
enum scene_kernel { SCENE_KERNEL_CUBIC, SCENE_KERNEL_GAUSSIAN };
enum scene_style { SCENE_STYLE_SMOOTH, SCENE_STYLE_STARS };
/* camera.projection (render/projection_shared.h has the formulas,
 * render/projection.c a row of the table per value) and camera.stereo.mode */
enum scene_projection { SCENE_PROJ_PERSPECTIVE, SCENE_PROJ_FISHEYE, SCENE_PROJ_EQUIRECT };
enum scene_stereo { SCENE_STEREO_NONE, SCENE_STEREO_SIDE_BY_SIDE, SCENE_STEREO_TOP_BOTTOM };
/* render.diffuse_smoothing: how the diffuse layer is smoothed */
enum scene_diffuse_smoothing { SCENE_DIFFUSE_SCREEN, SCENE_DIFFUSE_ADAPTIVE };
/* camera.keys.*.ease: how the motion from a key to the next is timed along
 * the path (render/camera.c): linear keeps the spline's own timing, in
 * starts from rest at the key, out arrives at rest at the next key, in-out
 * both. */
enum scene_ease { SCENE_EASE_LINEAR, SCENE_EASE_IN, SCENE_EASE_OUT, SCENE_EASE_IN_OUT };
enum scene_tonemap { SCENE_TONEMAP_LINEAR, SCENE_TONEMAP_LOG, SCENE_TONEMAP_ASINH, SCENE_TONEMAP_FILMIC };
enum scene_colormode { SCENE_COLOR_COMPONENTS, SCENE_COLOR_DENSITY };
enum scene_colormap {
	SCENE_CMAP_MAGMA,
	SCENE_CMAP_INFERNO,
	SCENE_CMAP_VIRIDIS,
	SCENE_CMAP_GREY,
	SCENE_CMAP_PLASMA,
	SCENE_CMAP_CIVIDIS,
	SCENE_CMAP_TWILIGHT,
	SCENE_CMAP_CUBEHELIX,
};
/* render.color_by: what sets a body's colour (its weight stays mass x
 * brightness): its component's colour, its line-of-sight velocity
 * (diverging blue-white-red), or its speed (render.colormap). */
enum scene_color_by { SCENE_COLOR_BY_COMPONENT, SCENE_COLOR_BY_LOS_VELOCITY, SCENE_COLOR_BY_SPEED };
#define SCENE_LUT_N 256 /* rows of a render.colormap_file */
enum scene_codec { SCENE_CODEC_H264, SCENE_CODEC_H265 };
enum scene_preview { SCENE_PREVIEW_NONE, SCENE_PREVIEW_LAST, SCENE_PREVIEW_SHEET };
enum scene_spin { SCENE_SPIN_PROGRADE, SCENE_SPIN_RETROGRADE };
/* camera.frame: keys (the keys' distance) or auto (render/framing.c) */
enum scene_frame { SCENE_FRAME_KEYS, SCENE_FRAME_AUTO };
/* output.snapshots.format: the one format written today */
enum scene_snap_format { SCENE_SNAP_HDF5 };

/* One part of a disk galaxy (disk, bulge or halo). count 0 = part absent. */
struct scene_part {
	long count;          /* bodies, >= 0 */
	double mass;         /* scene mass units, >= 0 */
	double scale;        /* bulge/halo: Hernquist a; disk: exponential scale length h */
	double scale_height; /* disk only: z0 of sech^2(z/z0) */
	double toomre_q;     /* disk only: target Toomre Q at 2.5 h (> 0) */
	float color[3];      /* linear RGB, each >= 0 */
	double brightness;   /* light per unit mass, >= 0 (default 1) */
	/* disk only: the share of its bodies drawn as component NAME.young
	 * (sim/galaxy_young.c), their colour and light per unit mass */
	double young_fraction;   /* [0, 1], default 0 (none) */
	float young_color[3];    /* linear RGB */
	double young_brightness; /* >= 0 */
	double softening;        /* > 0: this part's softening length; 0: the entry's */
};

/* Dust of a disk galaxy (bodies.*.dust; sim/galaxy.c builds it, render/dust.c
 * draws it; docs/scenes.md "Dust"). mass_fraction 0 = no dust. */
struct scene_dust {
	double mass_fraction; /* [0, 0.9]: share of the disk's bodies (and mass) that are dust */
	double scale_height;  /* z0 of the dust layer; 0: SCENE_DUST_Z_RATIO x disk.scale_height */
	double opacity;       /* >= 0: face-on optical depth tau0 through the disk centre */
};
#define SCENE_DUST_Z_RATIO 0.4

/* model: snapshot (sim/snap*.c, docs/snapshots.md): a GADGET-style
 * snapshot read as bodies. */
#define SCENE_SNAP_NTYPES 6 /* GADGET particle types 0..5 */
/* bodies.*.format: what a snapshot entry reads (output.snapshots.format is
 * scene_snap_format, what is written) */
enum scene_snap_in_format { SCENE_SNAPIN_AUTO, SCENE_SNAPIN_GADGET_HDF5, SCENE_SNAPIN_GADGET1, SCENE_SNAPIN_GADGET2 };
enum scene_region { SCENE_REGION_NONE, SCENE_REGION_BOX, SCENE_REGION_SPHERE };
enum scene_tristate { SCENE_AUTO, SCENE_TRUE, SCENE_FALSE };
/* One particle type's look: bodies.*.types.{gas,halo,disk,bulge,stars,bh}. */
struct scene_snap_type {
	int load;          /* 0: the type's particles are not read at all (no gravity either) */
	int draw;          /* 0: read and simulated, drawn with no light (brightness 0) */
	float color[3];    /* linear RGB */
	double brightness; /* light per unit mass, >= 0 */
	double softening;  /* > 0: this type's softening length (scene length units); 0: the entry's */
};
struct scene_snapshot {
	enum scene_snap_in_format format;
	struct scene_snap_type types[SCENE_SNAP_NTYPES];
	enum scene_region region;  /* which particles are kept, by their converted position */
	double region_center[3];   /* scene length units, before bodies.*.position is added */
	double region_radius;      /* sphere: radius */
	double region_size[3];     /* box: edge lengths */
	double subsample;          /* (0, 1]: share kept, by a hash of the particle ID */
	/* the file's code units in cgs when the file does not say (0: not
	 * given; then GADGET's 1 kpc/h, 1e10 M_sun/h, 1 km/s) */
	double length_cm, mass_g, velocity_cm_s;
	enum scene_tristate comoving; /* auto: from the file (sim/snap_load.c) */
	/* bodies.*.snapshots: a series to film (sim/snap_series.c): a printf
	 * pattern with one integer conversion (%d, %03d); "" none */
	char series[SCENE_PATH_MAX];
};

/* One entry of bodies:. */
struct scene_body {
	char name[SCENE_NAME_MAX]; /* REQUIRED, unique, [A-Za-z0-9_-]+ */
	enum scene_model model;    /* REQUIRED */
	long count;                /* plummer/hernquist: >= 1 (file: ignored) */
	double mass;               /* total mass, > 0 */
	double scale;              /* plummer a / hernquist a, > 0 */
	double rmax;               /* truncation radius in units of scale (default 20 plummer, 50 hernquist) */
	double position[3];        /* centre of mass */
	double velocity[3];        /* bulk velocity */
	float color[3];            /* linear RGB, default [1,1,1] */
	double brightness;         /* light per unit mass, >= 0 (default 1) */
	double softening;          /* > 0: this entry's softening length; 0: simulation.softening */
	char file[SCENE_PATH_MAX]; /* model: file - state CSV; model: snapshot - the snapshot (its
				    * first file); relative to the scene file, stored absolute */
	/* model: file - the column of each enum scene_column: "" its default
	 * (the column of that name), a header name, or a position "1", "2".. */
	char columns[SCENE_NCOL][SCENE_NAME_MAX];
	char source[SCENE_PATH_MAX]; /* where file comes from (free text), said when it is missing */
	/* model: disk-galaxy */
	double inclination;        /* degrees: tilt of the disk's spin axis from +z */
	double position_angle;     /* degrees: rotation of the tilted disk about +z */
	struct scene_part disk, bulge, halo;
	struct scene_dust dust;    /* disk-galaxy only */
	struct scene_snapshot snap; /* model: snapshot (file holds its path) */
};

/* camera.keys entry. Fields not given in a key are taken from the camera
 * defaults (camera.position/target/up/fov); has_* say which were given. */
struct scene_camera_key {
	int frame; /* REQUIRED, >= 0, strictly increasing through the list */
	double position[3], target[3], up[3];
	double fov; /* degrees, (0, 180) */
	enum scene_ease ease; /* the segment from this key to the next */
	double exposure;      /* > 0: the manual exposure at this key (render.exposure's meaning) */
	int has_position, has_target, has_up, has_fov, has_ease, has_exposure;
};

/* Where a value of the scene came from, kept so that checks made after
 * loading (memory, backend, outputs) can point at it like the loader does. */
#define SCENE_WHERE_MAX 256
struct scene_where {
	int line, col;    /* 1-based; 0: not given (a default) */
	char origin[160]; /* "" from the file; else the override's label, "--set K=V" (truncated) */
};

struct scene {
	char path[SCENE_PATH_MAX]; /* file it was loaded from ("" if none) */
	char dir[SCENE_PATH_MAX];  /* its directory: base for relative input paths */
	enum scene_units units;
	/* units: snapshot: one scene length, mass and velocity unit in cm, g
	 * and cm/s - the code units of bodies[units_entry], the scene's first
	 * snapshot entry. The loader fills them from its bodies.*.units.*,
	 * else GADGET's defaults; sim_scene_units_resolve (sim.h) from the
	 * file's header when it gives them, once, right after loading.
	 * scene_units() reads them. Unused for nbody and galactic. */
	double units_cgs[3];
	int units_entry;
	char units_from[64]; /* where units_cgs came from, for messages */
	uint64_t seed;

	struct {
		enum scene_solver solver;
		double theta;          /* [0, 1.5] */
		int multipoles;        /* 1 monopole, 2 quadrupole */
		enum scene_opening opening; /* barnes-hut opening criterion */
		enum scene_reorder reorder; /* GPU tree body order between steps */
		double softening;      /* > 0, length units: every body's unless its entry, part or type says */
		enum scene_soft_kernel softening_kernel; /* plummer | spline */
		enum scene_accuracy accuracy; /* preset applied at load (scene/scene_accuracy.c) */
		double dt;             /* > 0, time units */
		int steps_per_frame;   /* >= 1 */
		double max_energy_error; /* [0, 1e6]: |E - E0| / |E0| that stops a run; 0 = never */
		enum scene_timesteps timesteps; /* shared | individual */
		double eta;            /* (0, 10]: individual step accuracy, GADGET's eta */
		int blocks_per_frame;  /* >= 1: individual: dt_max = dt x steps_per_frame / this */
		int max_level;         /* [0, 20]: individual: smallest step dt_max / 2^max_level */
		double coarsen_margin; /* [1, 4]: individual: coarser level only if dt_i >= margin x its step */
		enum scene_backend backend;
		enum scene_direct_kernel direct_kernel;
		enum scene_ranks ranks; /* replicate | domains: the state over MPI ranks */
	} simulation;

	int nbodies;
	struct scene_body bodies[SCENE_MAX_BODIES];

	/* Optional: two-galaxy encounter (needs exactly bodies 0 and 1). When
	 * enabled, it sets their position and velocity (Toomre & Toomre 1972). */
	struct {
		int enabled;
		double pericenter;   /* > 0 */
		double separation;   /* initial separation, >= pericenter */
		double eccentricity; /* 1 = parabolic; >= 0 */
		enum scene_spin spin[2];
		double inclination[2]; /* degrees, disk i relative to orbital plane */
		double omega[2];       /* degrees, argument of pericentre */
	} encounter;

	struct {
		double position[3], target[3], up[3]; /* defaults for keys */
		double fov;                           /* degrees */
		char follow[SCENE_NAME_MAX];          /* "" none, "all", "light", or a component name */
		double orbit;                         /* degrees turned about target.up over the clip */
		/* framing (render/framing.c, docs/scenes.md "Framing"): follow
		 * "light" and frame auto, smoothed by a critically damped spring */
		enum scene_frame frame;               /* keys | auto */
		double frame_fraction;                /* (0, 1]: share of the drawn light kept in frame */
		double frame_margin;                  /* [0, 0.5]: share of each half-extent kept clear */
		double frame_range[2];                /* auto distance within [lo, hi] x the keys' distance */
		double smoothing;                     /* >= 0 frames: the spring's time constant */
		int nkeys;
		struct scene_camera_key keys[SCENE_MAX_KEYS];
		/* Projections and stereo (docs/scenes.md "Projections and stereo") */
		enum scene_projection projection;
		double fisheye_aperture; /* degrees in (0, 360]: the domemaster circle's full angle */
		double dome_tilt;        /* degrees in [-90, 90]: view axis turned up from the target */
		struct {
			enum scene_stereo mode;
			double eye_separation;   /* scene length units, > 0 */
			int eye_separation_auto; /* auto: 1/30 of the convergence distance */
			double convergence;      /* scene length units, > 0 (perspective only) */
			int convergence_auto;    /* auto: the camera's distance to its target */
		} stereo;
	} camera;

	struct {
		int width, height;     /* even, >= 16, <= 16384 */
		double exposure;       /* > 0 */
		int exposure_auto;     /* render.exposure: auto (render/autoexp.c) */
		double gpu_memory;     /* bytes the GPU renderer may use for a film's bodies */
		int gpu_memory_auto;   /* render.gpu_memory: auto (the free device memory) */
		double auto_percentile;/* (0, 100]: exposure auto's percentile of lit luminance */
		double auto_smoothing; /* >= 0 frames: exposure auto's time constant */
		double white;          /* > 0: filmic shoulder's white parameter W */
		double glow;           /* >= 0: fraction of the light above glow_threshold moved to the halo */
		double glow_threshold; /* >= 0: in tone-map levels (render/glow_shared.h) */
		double gamma;          /* > 0 */
		enum scene_tonemap tonemap;
		enum scene_colormode mode;
		enum scene_colormap colormap;
		enum scene_kernel kernel;
		enum scene_style style; /* smooth: kernel + smoothing; stars: pixel PSF */
		double psf_fwhm;       /* stars: Gaussian FWHM in pixels */
		double psf_wing;       /* [0, 0.5]: fraction of all light in the PSF's wide wing; 0 off */
		double psf_wing_beta;  /* [1, 4]: the wing's Moffat-like power (render/glow_shared.h) */
		double smoothing;      /* > 0 length units; ignored if smoothing_adaptive */
		int smoothing_adaptive;/* render.smoothing: adaptive */
		int neighbours;        /* k for adaptive smoothing */
		int adaptive_every;    /* recompute adaptive h every this many frames */
		double h_cap;          /* adaptive h <= h_cap * median h of the drawn (0: off) */
		double diffuse;        /* stars: weight of the adaptive smooth layer (0: off) */
		enum scene_diffuse_smoothing diffuse_smoothing; /* screen (pyramid) or adaptive (3D kNN h) */
		int dust_slabs;        /* depth slabs for dust (render/dust.c), >= 1 */
		enum scene_color_by color_by;
		double color_range[2]; /* scene velocity units, lo < hi; unused when color_range_auto */
		int color_range_auto;  /* render.color_range: auto (render/color_by.c) */
		char colormap_file[SCENE_PATH_MAX]; /* "" none; else stored absolute, replaces colormap */
		float colormap_lut[SCENE_LUT_N][3]; /* colormap_file's rows, display RGB in [0, 1] */
		float background[3];
		/* render.motion_blur (render/blur.c): each body drawn at samples
		 * times spread over the open shutter, 1/samples of its light each */
		struct {
			int samples;   /* >= 1; 1: off (frames as without the key) */
			double shutter;/* (0, 1]: fraction of the frame interval, centred on the frame */
		} motion_blur;
	} render;

	/* Optional text and a scale bar drawn into the frame (render.h,
	 * render_overlay_*); every one off by default. */
	struct {
		int time;              /* 1: "t = 450 Myr" top-right */
		double scale_bar;      /* length in scene units when scale_bar_word is 0 */
		int scale_bar_word;    /* 1: none, 2: auto (a round 1-2-5 length) */
		char title[128];       /* "" none; printable ASCII, top-left */
		float color[3];        /* display RGB in [0, 1] of the text and bar */
		int size;              /* font scale (pixels per font pixel); 0: from the height */
	} overlay;

	struct {
		int frames;            /* >= 1 */
		int fps;               /* 1..240 */
		char video[SCENE_PATH_MAX];         /* "" = none; relative to the CWD */
		char png_dir[SCENE_PATH_MAX];
		char stats[SCENE_PATH_MAX];
		char initial_state[SCENE_PATH_MAX];
		char final_state[SCENE_PATH_MAX];
		char preview[SCENE_PATH_MAX];       /* "" = none; .jpg */
		enum scene_preview preview_kind;
		enum scene_codec codec;
		int crf;               /* 0..51 */
		char preset[32];       /* x264 preset name */
		int png_depth;         /* 8 or 16 */
		char resolved_scene[SCENE_PATH_MAX];/* where the resolved scene is stored; default derived */
		/* GADGET-style HDF5 snapshots (output/snap_write.c; docs/snapshots.md):
		 * DIR/snap_NNN.hdf5 at frames 0, every, 2 every, ... and the last */
		struct {
			int every;                  /* >= 1 frames */
			char dir[SCENE_PATH_MAX];   /* "" = none */
			enum scene_snap_format format;
			/* >= 1: each snapshot as a GADGET multi-file set of this
			 * many parts, DIR/snap_NNN.K.hdf5 (output/snap_set.c) */
			int files;
		} snapshots;
		char fits_dir[SCENE_PATH_MAX]; /* "" = none; DIR/frame_%05d.fits (output/fits.c) */
	} output;

	/* scene-level keys, by their place in the key table (scene_fail_key) */
	struct scene_where where[SCENE_WHERE_MAX];
	/* each body entry: its count (spheres) or the entry itself */
	struct scene_where where_body[SCENE_MAX_BODIES];
};

/* Internal units: value_internal = value_scene * factor. */
struct sim_units {
	double length, velocity, mass, time;
	double G_scene; /* G in scene units (1 for nbody) */
};
/* Fill factors for a unit system. Galactic: 1 kpc, 100 km/s,
 * 2.32509e9 M_sun, 9.7779 Myr per internal unit (G = 4.30092e-6 kpc (km/s)^2/M_sun).
 * Snapshot: GADGET's default code units (1 kpc, 1e10 M_sun, 1 km/s), the
 * same internal system as galactic; a scene's own snapshot units may
 * differ: use scene_units() for a scene. */
void scene_units_of(enum scene_units u, struct sim_units *out);
/* The factors of SC's units: scene_units_of, and for units: snapshot
 * those of sc->units_cgs (internal units as galactic's; G_scene is G in
 * the code units, 43021.9 for GADGET's). The one function a scene's
 * values are converted through. */
void scene_units(const struct scene *sc, struct sim_units *out);
/* One scene length, mass and velocity unit of SC in cgs (cm, g, cm/s):
 * galactic kpc, M_sun (from the IAU GM_sun and the G of scene_units_of),
 * km/s; snapshot sc->units_cgs. Returns 0, or -1 for units: nbody, which
 * has no physical scale. */
int scene_units_cgs(const struct scene *sc, double *length_cm, double *mass_g,
		    double *velocity_cm_s);
/* units: snapshot: the index of SC's first snapshot entry, its code units
 * from its bodies.*.units.* (GADGET's for any not given) into
 * sc->units_cgs; -1 (nothing set) when the scene has no snapshot entry.
 * The loader calls it; sim_scene_units_resolve then reads the file. */
int scene_units_snapshot_entry(struct scene *sc);
/* The scene's softening length in internal units (simulation.softening x
 * the unit system's length): the one conversion the solvers, the galaxy
 * models and the load-time force check share. */
double scene_softening(const struct scene *sc);

/* Load PATH, apply the overrides ("key.path=value" strings, checked exactly as
 * the file's own values), validate, fill *sc. Returns 0, or NB_EINPUT after
 * logging one message "PATH:LINE:COL: key.path: expected X, got Y" (overrides
 * are reported as "--set key.path=value: ..."). Unknown keys give a
 * "did you mean" suggestion. Never crashes on any input. */
int scene_load(const char *path, const char *const *overrides, int noverrides,
		   struct scene *sc);

/* Warnings about the scene (keys the user set that its render.style,
 * simulation.solver, camera.projection... leave unused; camera keys at or
 * after output.frames; scene/scene_warn.c) are errors from now on when
 * STRICT is non-zero: the load then fails (NB_EINPUT) at the first, after
 * logging it as an error. Default 0: each is logged as a warning. Set once,
 * before loading (main's --strict). */
void scene_strict_set(int strict);

/* Same, where froms[i] (froms or froms[i] may be NULL: "--set") says where
 * override i came from, e.g. "batch.yaml:4:12: runs.0.sweep": its messages
 * then read "batch.yaml:4:12: runs.0.sweep: key.path=value: key.path: ...". */
int scene_load_from(const char *path, const char *const *overrides, const char *const *froms,
			int noverrides, struct scene *sc);

/* Same, from a string in memory (NAME is used in messages, DIR as base dir). */
int scene_load_string(const char *text, const char *name, const char *dir,
			  const char *const *overrides, int noverrides, struct scene *sc);

/* Write the resolved scene as YAML: every key, defaults included, loadable
 * again by scene_load with an identical result. Returns 0, or NB_ERUNTIME
 * when f fails (not logged: the caller names its file, errno the reason). */
int scene_emit(const struct scene *sc, FILE *f);

/* A descriptor of PATH open for reading (O_NONBLOCK), or -1 with WHY (LEN
 * bytes) filled with a clause such as "it is a directory", "it is a FIFO
 * (named pipe)", "the file is empty", "it cannot be opened: Permission
 * denied". Looks before it opens (stat), so that a FIFO or a device is never
 * opened. Logs nothing. (The scene's body files; sim/state_csv.c.) */
int scene_infile_open(const char *path, char *why, size_t len);

/* render.colormap_file (scene/scene_lut.c): read PATH's SCENE_LUT_N rows
 * "r g b" (all integers 0..255 or all decimals 0..1, the first row sets
 * which; blank and '#' lines skipped) into lut as display RGB in [0, 1].
 * 0, or NB_EINPUT after one "PATH:LINE: ..." message. */
int scene_lut_read(const char *path, float lut[SCENE_LUT_N][3]);

/* Log one error about scene key KEY ("output.video", "simulation.backend")
 * found after loading, placed like the loader's messages: "FILE:LINE:COL:
 * KEY: MSG" for a value from the file, "--set K=V: KEY: MSG" for an
 * override, "FILE: KEY: MSG" for a default. BODY >= 0 places it at that
 * body entry's count instead (KEY is then e.g. "bodies.0.count"). Returns
 * NB_EINPUT. */
int scene_fail_key(const struct scene *sc, const char *key, int body, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Dust bodies of entry b: round(dust.mass_fraction x disk.count) for a
 * disk galaxy with dust, else 0. They are taken from the disk's count. */
long scene_dust_count(const struct scene_body *b);
/* Every softening key of the scene, in one list: simulation.softening
 * first, then each entry's, each disk-galaxy part's and each snapshot
 * type's (0: the level above). Fills out (SCENE_SOFT_KEYS_MAX places)
 * with their addresses and returns how many: the one place that knows
 * where a softening length can be given (the presets scale them, the
 * load's force check takes their smallest). */
#define SCENE_SOFT_KEYS_MAX (1 + SCENE_MAX_BODIES * (4 + SCENE_SNAP_NTYPES))
int scene_soft_keys(struct scene *sc, double **out);

/* The words of simulation.opening and simulation.solver (the schema's
 * names, scene/scene_schema.c): what every description, snapshot
 * attribute and restart check writes. "?" outside the enum. */
const char *scene_opening_name(enum scene_opening o);
const char *scene_solver_name(enum scene_solver s);

/* Index of the body entry named NAME, or -1. */
int scene_find_body(const struct scene *sc, const char *name);

#ifdef __cplusplus
}
#endif
#endif
