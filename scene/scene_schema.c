/* scene_schema.c - THE table of scene keys (see scene_schema.h): path, type,
 * range, default, choices and help text of every key a scene file may hold.
 * Order here is the order of scene_emit and of docs/scenes.md. */
#include "scene_schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define H INFINITY /* no bound */
/* Bound of every position, velocity and camera component: far beyond any
 * scene, and small enough that squared distances stay finite in float
 * (the GPU) and in the potential sums. */
#define XMAX 1e15

#define SC(f) .base = SBASE_SCENE, .off = offsetof(struct scene, f), .size = sizeof(((struct scene *)0)->f)
#define BD(f) .base = SBASE_BODY, .off = offsetof(struct scene_body, f), .size = sizeof(((struct scene_body *)0)->f)
#define CK(f) .base = SBASE_KEY, .off = offsetof(struct scene_camera_key, f), .has_off = offsetof(struct scene_camera_key, has_##f), .flags = SKEY_HAS
#define MAPKEY(p, doc) {.path = p, .type = SKEY_MAP, .type_doc = "map", .help = doc}
#define MAPKEY2(p, m, doc) {.path = p, .type = SKEY_MAP, .type_doc = "map", .models = m, .help = doc}
#define MAPSEE(p, doc, s) {.path = p, .type = SKEY_MAP, .type_doc = "map", .help = doc, .see = s}

static const char *const units_names[] = {"nbody", "galactic", "snapshot", NULL};
static const char *const solver_names[] = {"direct", "barnes-hut", "none", NULL};
static const char *const backend_names[] = {"auto", "cuda", "cpu", NULL};
static const char *const dkernel_names[] = {"auto", "pairwise", "gather", NULL};
static const char *const opening_names[] = {"bmax", "com", "mass", NULL};
static const char *const reorder_names[] = {"sort", "migrate", NULL};
static const char *const timesteps_names[] = {"shared", "individual", NULL};
static const char *const ranks_names[] = {"replicate", "domains", NULL};
static const char *const soft_kernel_names[] = {"plummer", "spline", NULL};
static const char *const accuracy_names[] = {"default", "draft", "fine", NULL};
const char *const scene_model_names[] = {"plummer", "hernquist", "disk-galaxy", "file", "snapshot", NULL};
static const char *const snap_in_format_names[] = {"auto", "gadget-hdf5", "gadget1", "gadget2", NULL};
static const char *const region_names[] = {"none", "box", "sphere", NULL};
static const char *const tristate_names[] = {"auto", "true", "false", NULL};
static const char *const spin_names[] = {"prograde", "retrograde", NULL};
static const char *const tonemap_names[] = {"linear", "log", "asinh", "filmic", NULL};
static const char *const adaptive_word[] = {"adaptive", NULL};
static const char *const auto_word[] = {"auto", NULL};
static const char *const ease_names[] = {"linear", "in", "out", "in-out", NULL};
static const char *const mode_names[] = {"components", "density", NULL};
static const char *const cmap_names[] = {"magma", "inferno", "viridis", "grey", "plasma",
					 "cividis", "twilight", "cubehelix", NULL};
static const char *const color_by_names[] = {"component", "los_velocity", "speed", NULL};
static const char *const kernel_names[] = {"cubic", "gaussian", NULL};
static const char *const style_names[] = {"smooth", "stars", NULL};
static const char *const diffuse_smoothing_names[] = {"screen", "adaptive", NULL};
static const char *const codec_names[] = {"h264", "h265", NULL};
static const char *const preview_names[] = {"none", "last", "sheet", NULL};
static const char *const preset_names[] = {"ultrafast", "superfast", "veryfast", "faster",
					   "fast", "medium", "slow", "slower", "veryslow",
					   "placebo", NULL};
static const char *const depth_names[] = {"8", "16", NULL};
static const char *const bool_names[] = {"false", "true", NULL};
static const char *const scale_bar_words[] = {"none", "auto", NULL};
static const char *const frame_names[] = {"keys", "auto", NULL};
static const char *const projection_names[] = {"perspective", "fisheye", "equirectangular", NULL};
static const char *const stereo_names[] = {"none", "side-by-side", "top-bottom", NULL};
static const char *const snap_format_names[] = {"hdf5", NULL};

#define SNAP SMODEL(SCENE_MODEL_SNAPSHOT)
/* help of the softening keys below simulation.softening */
#define SOFT_HELP(whose, fallback)                                                              \
	"softening length of " whose " bodies (length units); 0: " fallback ". A pair of bodies "  \
	"is softened by the larger of their two lengths (GADGET's rule)"
/* bodies.*.columns.Q: the column of quantity I of a body table (sim/table.c) */
#define COLKEY(q, i, what)                                                                       \
	{.path = "bodies.*.columns." q, .type = SKEY_STRING, BD(columns[i]), .def = "\"\"",          \
	 .models = SMODEL(SCENE_MODEL_FILE), .type_doc = "column name, or position from 1",        \
	 .help = what}
/* bodies.*.types.NAME: particle type T of a snapshot (docs/snapshots.md) */
#define SNAPTYPE(name, t, what, dload, ddraw, dcolor, dbright)                                   \
	{.path = "bodies.*.types." name, .type = SKEY_MAP, .type_doc = "map", .models = SNAP,        \
	 .help = "snapshot: particle type " #t " (" what ")"},                                       \
	{.path = "bodies.*.types." name ".load", .type = SKEY_ENUM, BD(snap.types[t].load),         \
	 .names = bool_names, .def = dload, .models = SNAP, .type_doc = "false | true",              \
	 .help = "read this type's particles at all (false: skipped, no gravity either)"},           \
	{.path = "bodies.*.types." name ".draw", .type = SKEY_ENUM, BD(snap.types[t].draw),         \
	 .names = bool_names, .def = ddraw, .models = SNAP, .type_doc = "false | true",              \
	 .help = "draw this type (false: simulated, no light)"},                                     \
	{.path = "bodies.*.types." name ".color", .type = SKEY_COLOR, BD(snap.types[t].color),      \
	 .lo = 0, .hi = 1e6, .def = dcolor, .models = SNAP, .type_doc = "[r, g, b], each in [0, 1e6]", \
	 .help = "linear RGB colour of this type"},                                                  \
	{.path = "bodies.*.types." name ".brightness", .type = SKEY_DOUBLE,                         \
	 BD(snap.types[t].brightness), .lo = 0, .hi = 1e6, .def = dbright, .models = SNAP,          \
	 .type_doc = "number in [0, 1e6]", .help = "light per unit mass of this type"},              \
	{.path = "bodies.*.types." name ".softening", .type = SKEY_DOUBLE,                          \
	 BD(snap.types[t].softening), .lo = 0, .hi = H, .def = "0", .models = SNAP,                 \
	 .type_doc = "number >= 0", .help = SOFT_HELP("this type's", "the entry's")}

#define PART(part, pth, dcount, dmass, gmass, dscale, gscale, what)                        \
	{.path = "bodies.*." #part, .type = SKEY_MAP, .type_doc = "map",                        \
	 .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .help = what},                                \
	{.path = "bodies.*." #part ".count", .type = SKEY_LONG, BD(part.count), .lo = 0, .hi = 1e9, \
	 .def = dcount, .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "integer >= 0",  \
	 .help = "bodies in this part (0 = part absent)"},                                        \
	{.path = "bodies.*." #part ".mass", .type = SKEY_DOUBLE, BD(part.mass), .lo = 0, .hi = H,   \
	 .def = dmass, .def_galactic = gmass, .models = SMODEL(SCENE_MODEL_DISK_GALAXY),        \
	 .type_doc = "number >= 0", .help = "total mass of this part"},                         \
	{.path = "bodies.*." #part ".scale", .type = SKEY_DOUBLE, BD(part.scale), .lo = 0, .hi = H, \
	 .flags = SKEY_LO_OPEN, .def = dscale, .def_galactic = gscale,                           \
	 .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "number > 0", .help = pth},        \
	{.path = "bodies.*." #part ".softening", .type = SKEY_DOUBLE, BD(part.softening), .lo = 0,  \
	 .hi = H, .def = "0", .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "number >= 0", \
	 .help = SOFT_HELP("this part's", "the entry's")}

const struct scene_key scene_schema[] = {
	{.path = "units", .type = SKEY_ENUM, SC(units), .names = units_names, .def = "nbody",
	 .type_doc = "nbody | galactic | snapshot",
	 .help = "nbody: G = 1; galactic: lengths in kpc, velocities in km/s, masses in M_sun, times in Myr; snapshot: the code units of the first snapshot entry (GADGET's: kpc, 1e10 M_sun, km/s, and kpc/(km/s) = 977.79 Myr for time), so that dt: 0.001 is what a GADGET parameter file says",
	 .see = "snapshots.md#Units"},
	{.path = "seed", .type = SKEY_U64, SC(seed), .lo = 0, .hi = H, .def = "1",
	 .type_doc = "integer >= 0", .help = "random seed: the same seed gives the same initial state"},

	MAPKEY("simulation", "how bodies move"),
	{.path = "simulation.solver", .type = SKEY_ENUM, SC(simulation.solver), .names = solver_names,
	 .def = "direct", .type_doc = "direct | barnes-hut | none",
	 .help = "direct: every pair, O(N^2); barnes-hut: octree, O(N log N); none: no forces, "
		 "bodies stay put or follow bodies.*.snapshots (film mode, docs/snapshots.md)"},
	{.path = "simulation.theta", .type = SKEY_DOUBLE, SC(simulation.theta), .lo = 0, .hi = 1.5,
	 .def = "0.5", .type_doc = "number in [0, 1.5]",
	 .help = "barnes-hut opening angle (0 = exact); smaller is slower and more accurate"},
	{.path = "simulation.multipoles", .type = SKEY_INT, SC(simulation.multipoles), .lo = 1, .hi = 2,
	 .def = "2", .type_doc = "1 | 2", .help = "barnes-hut cell moments: 1 monopole, 2 adds the quadrupole"},
	{.path = "simulation.opening", .type = SKEY_ENUM, SC(simulation.opening), .names = opening_names,
	 .def = "bmax", .type_doc = "bmax | com | mass",
	 .help = "barnes-hut cell acceptance (d = distance to the cell's centre of mass): bmax when theta d exceeds its bodies' largest distance from that centre; com when theta d exceeds its side; mass as bmax with an angle per cell from its mass (Dehnen 2002: light cells wider, heavy ones narrower; theta is the angle of a cell of the whole mass: about 0.39 gives bmax 0.5's median error with 25 % less time on the H200)",
	 .see = "PHYSICS.md#Opening by mass"},
	{.path = "simulation.reorder", .type = SKEY_ENUM, SC(simulation.reorder), .names = reorder_names,
	 .def = "sort", .type_doc = "sort | migrate",
	 .help = "GPU barnes-hut: how bodies are kept in tree order between steps: sort re-sorts every body each step; migrate moves only the bodies that left their branch and re-sorts within branches (same forces within the tree's tolerance)",
	 .see = "PHYSICS.md#Body order between steps (simulation.reorder)"},
	{.path = "simulation.softening", .type = SKEY_DOUBLE, SC(simulation.softening), .lo = 0,
	 .hi = H, .flags = SKEY_LO_OPEN, .def = "0.01", .def_galactic = "0.1",
	 .type_doc = "number > 0",
	 .help = "softening length eps of every body whose entry (bodies.*.softening), part or "
		 "type does not give its own; a pair takes the larger of its two lengths",
	 .see = "PHYSICS.md#Softening"},
	{.path = "simulation.softening_kernel", .type = SKEY_ENUM, SC(simulation.softening_kernel),
	 .names = soft_kernel_names, .def = "plummer", .type_doc = "plummer | spline",
	 .help = "force law inside the softening length: plummer 1/(r^2 + eps^2)^(3/2); spline "
		 "GADGET's cubic spline with Plummer-equivalent eps, exactly Newtonian beyond 2.8 eps "
		 "(what GADGET, AREPO and SWIFT use: continue their snapshots with it). The same eps "
		 "is not the same run under the two kernels",
	 .see = "PHYSICS.md#Softening"},
	{.path = "simulation.accuracy", .type = SKEY_ENUM, SC(simulation.accuracy),
	 .names = accuracy_names, .def = "default", .type_doc = "default | draft | fine",
	 .help = "a preset of theta, multipoles, softening and time step together (draft: "
		 "faster, coarser; fine: slower, more accurate): theta and multipoles given explicitly "
		 "win; every softening length and the step are scaled from the scene's values, the "
		 "time per frame kept. Measured energy error and time of each: docs/BENCHMARKS.md",
	 .see = "PHYSICS.md#Accuracy presets"},
	{.path = "simulation.dt", .type = SKEY_DOUBLE, SC(simulation.dt), .lo = 0, .hi = H,
	 .flags = SKEY_LO_OPEN, .def = "0.001", .def_galactic = "0.5", .type_doc = "number > 0",
	 .help = "time step (leapfrog, kick-drift-kick)"},
	{.path = "simulation.steps_per_frame", .type = SKEY_INT, SC(simulation.steps_per_frame),
	 .lo = 1, .hi = 1e6, .def = "10", .type_doc = "integer in [1, 1e6]",
	 .help = "time steps between two frames"},
	{.path = "simulation.max_energy_error", .type = SKEY_DOUBLE, SC(simulation.max_energy_error),
	 .lo = 0, .hi = 1e6, .def = "1", .type_doc = "number in [0, 1e6]",
	 .help = "stop with an error when the total energy has drifted by more than this fraction of the initial |E| (checked every frame; 0: never)"},
	{.path = "simulation.timesteps", .type = SKEY_ENUM, SC(simulation.timesteps),
	 .names = timesteps_names, .def = "shared", .type_doc = "shared | individual",
	 .help = "shared: every body steps by dt; individual: block steps dt_max / 2^L, each body on the level its acceleration needs (dt_i = min(dt_max, sqrt(2 eta softening / |a_i|)); frames stay at steps_per_frame x dt)",
	 .see = "PHYSICS.md#Individual time steps (simulation.timesteps: individual)"},
	{.path = "simulation.eta", .type = SKEY_DOUBLE, SC(simulation.eta), .lo = 0, .hi = 10,
	 .flags = SKEY_LO_OPEN, .def = "0.025", .type_doc = "number in (0, 10]",
	 .help = "individual time steps: accuracy parameter of dt_i = sqrt(2 eta softening / |a_i|) (GADGET-2's default 0.025); smaller is more accurate and slower"},
	{.path = "simulation.blocks_per_frame", .type = SKEY_INT, SC(simulation.blocks_per_frame),
	 .lo = 1, .hi = 1e6, .def = "1", .type_doc = "integer in [1, 1e6]",
	 .help = "individual time steps: synchronised block steps per frame; the longest step is dt_max = dt x steps_per_frame / blocks_per_frame"},
	{.path = "simulation.max_level", .type = SKEY_INT, SC(simulation.max_level), .lo = 0,
	 .hi = 20, .def = "10", .type_doc = "integer in [0, 20]",
	 .help = "individual time steps: finest level; no body steps by less than dt_max / 2^max_level"},
	{.path = "simulation.coarsen_margin", .type = SKEY_DOUBLE, SC(simulation.coarsen_margin),
	 .lo = 1, .hi = 4, .def = "2", .type_doc = "number in [1, 4]",
	 .help = "individual time steps: a body moves to a coarser level only where its dt_i is at "
		 "least this times that level's step (finer at once); 1: GADGET's rule, which on the "
		 "default scene's 1M bodies heats it steadily (|dE/E0| 1.8e-3 over the movie against "
		 "1.0e-4 with 2: docs/BENCHMARKS.md, issue 18)"},
	{.path = "simulation.backend", .type = SKEY_ENUM, SC(simulation.backend),
	 .names = backend_names, .def = "auto", .type_doc = "auto | cuda | cpu",
	 .help = "auto: the GPU when there is a usable one, else the CPU"},
	{.path = "simulation.ranks", .type = SKEY_ENUM, SC(simulation.ranks), .names = ranks_names,
	 .def = "replicate", .type_doc = "replicate | domains",
	 .help = "under mpirun: replicate: every rank holds and steps every body and computes its "
		 "domain's forces; domains: each rank holds only the bodies of its stretch of the "
		 "Morton curve, which move between ranks as they cross (memory per rank about 1/P). "
		 "Domains take shared and individual time steps; on GPU ranks Barnes-Hut with one "
		 "Plummer length, CPU ranks also the direct sum, the spline kernel and lengths per "
		 "component. What it does not do yet is refused before any work",
	 .see = "PHYSICS.md#Over MPI ranks (issue 19, `dist/`)"},
	{.path = "simulation.direct_kernel", .type = SKEY_ENUM, SC(simulation.direct_kernel),
	 .names = dkernel_names, .def = "auto", .type_doc = "auto | pairwise | gather",
	 .help = "GPU direct-sum kernel (auto picks by body count)"},

	{.path = "bodies", .type = SKEY_LIST, .flags = SKEY_REQUIRED, .type_doc = "list of maps",
	 .help = "the bodies, one entry per group (at most 64 entries)"},
	{.path = "bodies.*.name", .type = SKEY_NAME, BD(name), .flags = SKEY_REQUIRED,
	 .models = SMODEL_ALL, .type_doc = "name ([A-Za-z0-9_-], < 64)",
	 .help = "unique name of the entry (for camera.follow and component names)"},
	{.path = "bodies.*.model", .type = SKEY_ENUM, BD(model), .flags = SKEY_REQUIRED,
	 .names = scene_model_names, .models = SMODEL_ALL,
	 .type_doc = "plummer | hernquist | disk-galaxy | file | snapshot",
	 .help = "what the entry is: a sphere, a disk galaxy, bodies read from a state CSV, or "
		 "particles read from a GADGET/AREPO/GIZMO/SWIFT snapshot (docs/snapshots.md)"},
	{.path = "bodies.*.count", .type = SKEY_LONG, BD(count), .lo = 1, .hi = 1e9, .def = "1000",
	 .models = SMODEL_SPHERES, .type_doc = "integer in [1, 1e9]", .help = "number of bodies"},
	{.path = "bodies.*.mass", .type = SKEY_DOUBLE, BD(mass), .lo = 0, .hi = H,
	 .flags = SKEY_LO_OPEN, .def = "1", .def_galactic = "1e10", .models = SMODEL_SPHERES,
	 .type_doc = "number > 0", .help = "total mass"},
	{.path = "bodies.*.scale", .type = SKEY_DOUBLE, BD(scale), .lo = 0, .hi = H,
	 .flags = SKEY_LO_OPEN, .def = "1", .models = SMODEL_SPHERES, .type_doc = "number > 0",
	 .help = "scale radius a"},
	{.path = "bodies.*.rmax", .type = SKEY_DOUBLE, BD(rmax), .lo = 1, .hi = 1e6,
	 .flags = SKEY_LO_OPEN, .models = SMODEL_SPHERES, .type_doc = "number in (1, 1e6]",
	 .help = "truncation radius in units of scale (default 20 for plummer, 50 for hernquist)"},
	{.path = "bodies.*.file", .type = SKEY_STRING, BD(file), .def = "\"\"",
	 .models = SMODEL(SCENE_MODEL_FILE) | SNAP, .type_doc = "path",
	 .help = "model file: a body table, CSV or whitespace-separated (the state CSV "
		 "id,component,mass,x,y,z,vx,vy,vz, or any with x, y, z columns: bodies.*.columns); "
		 "model snapshot: the "
		 "snapshot (its first file, snap.0.hdf5, for a multi-file one); relative to the scene "
		 "file; required"},
	{.path = "bodies.*.source", .type = SKEY_STRING, BD(source), .def = "\"\"",
	 .models = SMODEL(SCENE_MODEL_FILE) | SNAP, .type_doc = "text",
	 .help = "where the file comes from, for a file not shipped with the scene (e.g. the "
		 "archive and the path in it, and where to put it); the error says it when the file "
		 "is missing"},
	{.path = "bodies.*.columns", .type = SKEY_MAP, .type_doc = "map",
	 .models = SMODEL(SCENE_MODEL_FILE),
	 .help = "file: which column of the table holds each quantity, by header name or by "
		 "position (1 = the first), e.g. {x: pos_x, mass: 7}; the file may be CSV or "
		 "whitespace-separated with # comments",
	 .see = "#Body tables"},
	COLKEY("x", SCENE_COL_X, "position x; \"\": the column named x (required)"),
	COLKEY("y", SCENE_COL_Y, "position y; \"\": the column named y (required)"),
	COLKEY("z", SCENE_COL_Z, "position z; \"\": the column named z (required)"),
	COLKEY("vx", SCENE_COL_VX, "velocity x; \"\": the column named vx, else every velocity 0"),
	COLKEY("vy", SCENE_COL_VY, "velocity y; \"\": the column named vy, else every velocity 0"),
	COLKEY("vz", SCENE_COL_VZ, "velocity z; \"\": the column named vz, else every velocity 0"),
	COLKEY("mass", SCENE_COL_MASS,
	       "mass; \"\": the column named mass, else 1 each (scene mass units)"),
	{.path = "bodies.*.format", .type = SKEY_ENUM, BD(snap.format), .names = snap_in_format_names,
	 .def = "auto", .models = SNAP, .type_doc = "auto | gadget-hdf5 | gadget1 | gadget2",
	 .help = "snapshot format; auto: from the file's first bytes (HDF5 signature, or the "
		 "first record marker 256 / 8 in either byte order)"},
	{.path = "bodies.*.snapshots", .type = SKEY_STRING, BD(snap.series), .def = "\"\"",
	 .models = SNAP, .type_doc = "printf pattern, e.g. run/snap_%03d.hdf5",
	 .help = "with simulation.solver: none, a snapshot series to film: files numbered "
		 "without gaps, interpolated by particle ID (docs/snapshots.md); relative to the "
		 "scene file"},
	{.path = "bodies.*.types", .type = SKEY_MAP, .type_doc = "map", .models = SNAP,
	 .help = "snapshot: each particle type's look", .see = "snapshots.md#Particle types"},
	SNAPTYPE("gas", 0, "gas", "true", "true", "[0.45, 0.6, 1]", "0.5"),
	SNAPTYPE("halo", 1, "dark matter", "true", "false", "[0.25, 0.2, 0.3]", "0.1"),
	SNAPTYPE("disk", 2, "disk", "true", "true", "[0.55, 0.7, 1]", "1"),
	SNAPTYPE("bulge", 3, "bulge", "true", "true", "[1, 0.8, 0.55]", "1"),
	SNAPTYPE("stars", 4, "stars", "true", "true", "[1, 0.9, 0.75]", "1"),
	SNAPTYPE("bh", 5, "black holes / boundary", "true", "false", "[1, 1, 1]", "1"),
	MAPKEY2("bodies.*.region", SNAP, "snapshot: keep only the particles in a box or sphere"),
	{.path = "bodies.*.region.shape", .type = SKEY_ENUM, BD(snap.region), .names = region_names,
	 .def = "none", .models = SNAP, .type_doc = "none | box | sphere",
	 .help = "none: every particle; box: within center +- size/2; sphere: within radius of center"},
	{.path = "bodies.*.region.center", .type = SKEY_VEC3, BD(snap.region_center), .lo = -XMAX,
	 .hi = XMAX, .def = "[0, 0, 0]", .models = SNAP, .type_doc = "[x, y, z], each in [-1e15, 1e15]",
	 .help = "centre of the region (scene length units, physical, before bodies.*.position)"},
	{.path = "bodies.*.region.radius", .type = SKEY_DOUBLE, BD(snap.region_radius), .lo = 0,
	 .hi = XMAX, .flags = SKEY_LO_OPEN, .def = "1", .models = SNAP, .type_doc = "number > 0",
	 .help = "sphere: radius (scene length units)"},
	{.path = "bodies.*.region.size", .type = SKEY_VEC3, BD(snap.region_size), .lo = 0,
	 .hi = XMAX, .def = "[1, 1, 1]", .models = SNAP, .type_doc = "[x, y, z], each in [0, 1e15]",
	 .help = "box: edge lengths (scene length units)"},
	{.path = "bodies.*.subsample", .type = SKEY_DOUBLE, BD(snap.subsample), .lo = 0, .hi = 1,
	 .flags = SKEY_LO_OPEN, .def = "1", .models = SNAP, .type_doc = "number in (0, 1]",
	 .help = "share of the particles kept, chosen by a hash of the particle ID (the same "
		 "particles in every snapshot of a run); each kept one carries 1/subsample of its mass"},
	MAPKEY2("bodies.*.units", SNAP,
		"snapshot: the file's code units in cgs, used only when the file does not give them"),
	{.path = "bodies.*.units.length_cm", .type = SKEY_DOUBLE, BD(snap.length_cm), .lo = 0,
	 .hi = 1e60, .def = "0", .models = SNAP, .type_doc = "number >= 0",
	 .help = "code length in cm (0: GADGET's 3.085678e21, 1 kpc/h)"},
	{.path = "bodies.*.units.mass_g", .type = SKEY_DOUBLE, BD(snap.mass_g), .lo = 0, .hi = 1e60,
	 .def = "0", .models = SNAP, .type_doc = "number >= 0",
	 .help = "code mass in g (0: GADGET's 1.989e43, 1e10 M_sun/h)"},
	{.path = "bodies.*.units.velocity_cm_s", .type = SKEY_DOUBLE, BD(snap.velocity_cm_s),
	 .lo = 0, .hi = 1e60, .def = "0", .models = SNAP, .type_doc = "number >= 0",
	 .help = "code velocity in cm/s (0: GADGET's 1e5, 1 km/s)"},
	{.path = "bodies.*.comoving", .type = SKEY_ENUM, BD(snap.comoving), .names = tristate_names,
	 .def = "auto", .models = SNAP, .type_doc = "auto | true | false",
	 .help = "comoving coordinates: positions times a, velocities times sqrt(a), lengths and "
		 "masses over h (auto: when the file says so, or when Time = 1/(1+Redshift) < 1)"},
	{.path = "bodies.*.position", .type = SKEY_VEC3, BD(position), .lo = -XMAX, .hi = XMAX,
	 .def = "[0, 0, 0]", .models = SMODEL_ALL, .type_doc = "[x, y, z], each in [-1e15, 1e15]",
	 .help = "centre of mass (ignored for bodies 0 and 1 when encounter is given)"},
	{.path = "bodies.*.velocity", .type = SKEY_VEC3, BD(velocity), .lo = -XMAX, .hi = XMAX,
	 .def = "[0, 0, 0]", .models = SMODEL_ALL, .type_doc = "[vx, vy, vz], each in [-1e15, 1e15]",
	 .help = "bulk velocity (ignored for bodies 0 and 1 when encounter is given)"},
	{.path = "bodies.*.color", .type = SKEY_COLOR, BD(color), .lo = 0, .hi = 1e6,
	 .def = "[1, 1, 1]", .models = SMODEL_SPHERES | SMODEL(SCENE_MODEL_FILE),
	 .type_doc = "[r, g, b], each in [0, 1e6]", .help = "linear RGB colour of the entry's bodies"},
	{.path = "bodies.*.softening", .type = SKEY_DOUBLE, BD(softening), .lo = 0, .hi = H,
	 .def = "0", .models = SMODEL_ALL, .type_doc = "number >= 0",
	 .help = SOFT_HELP("this entry's", "simulation.softening")},
	{.path = "bodies.*.brightness", .type = SKEY_DOUBLE, BD(brightness), .lo = 0, .hi = 1e6,
	 .def = "1", .models = SMODEL_SPHERES | SMODEL(SCENE_MODEL_FILE),
	 .type_doc = "number in [0, 1e6]",
	 .help = "light per unit mass of the entry's bodies (multiplies the colour; 0: not drawn)"},
	{.path = "bodies.*.inclination", .type = SKEY_DOUBLE, BD(inclination), .lo = -360,
	 .hi = 360, .def = "0", .models = SMODEL_ALL, .type_doc = "degrees in [-360, 360]",
	 .help = "tilt of the entry's spin axis (a disk's normal) away from +z"},
	{.path = "bodies.*.position_angle", .type = SKEY_DOUBLE, BD(position_angle), .lo = -360,
	 .hi = 360, .def = "0", .models = SMODEL_ALL, .type_doc = "degrees in [-360, 360]",
	 .help = "rotation of the tilted entry about +z"},
	PART(disk, "exponential scale length h", "10000", "1", "5e10", "1", "3",
	     "disk-galaxy: the exponential disk"),
	{.path = "bodies.*.disk.scale_height", .type = SKEY_DOUBLE, BD(disk.scale_height), .lo = 0,
	 .hi = H, .flags = SKEY_LO_OPEN, .def = "0.1", .def_galactic = "0.3",
	 .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "number > 0",
	 .help = "vertical scale z0 of sech^2(z/z0)"},
	{.path = "bodies.*.disk.toomre_q", .type = SKEY_DOUBLE, BD(disk.toomre_q), .lo = 0, .hi = 100,
	 .flags = SKEY_LO_OPEN, .def = "1.5", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "number in (0, 100]", .help = "target Toomre Q at 2.5 scale lengths"},
	{.path = "bodies.*.disk.color", .type = SKEY_COLOR, BD(disk.color), .lo = 0, .hi = 1e6,
	 .def = "[0.55, 0.7, 1]", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "[r, g, b], each in [0, 1e6]", .help = "linear RGB colour of the disk"},
	{.path = "bodies.*.disk.brightness", .type = SKEY_DOUBLE, BD(disk.brightness), .lo = 0,
	 .hi = 1e6, .def = "1", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "number in [0, 1e6]", .help = "light per unit mass of the disk (multiplies its colour)"},
	{.path = "bodies.*.disk.young_fraction", .type = SKEY_DOUBLE, BD(disk.young_fraction), .lo = 0,
	 .hi = 1, .def = "0", .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "number in [0, 1]",
	 .help = "share of the disk's bodies (and mass) drawn as the young component NAME.young: "
		 "half the scale height, half the velocity dispersion (0: none)"},
	{.path = "bodies.*.disk.young_color", .type = SKEY_COLOR, BD(disk.young_color), .lo = 0,
	 .hi = 1e6, .def = "[0.4, 0.6, 1]", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "[r, g, b], each in [0, 1e6]", .help = "linear RGB colour of the young stars"},
	{.path = "bodies.*.disk.young_brightness", .type = SKEY_DOUBLE, BD(disk.young_brightness),
	 .lo = 0, .hi = 1e6, .def = "3", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "number in [0, 1e6]", .help = "light per unit mass of the young stars"},
	PART(bulge, "Hernquist scale radius a", "2000", "0.2", "1e10", "0.2", "0.6", "disk-galaxy: the Hernquist bulge"),
	{.path = "bodies.*.bulge.color", .type = SKEY_COLOR, BD(bulge.color), .lo = 0, .hi = 1e6,
	 .def = "[1, 0.8, 0.55]", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "[r, g, b], each in [0, 1e6]", .help = "linear RGB colour of the bulge"},
	{.path = "bodies.*.bulge.brightness", .type = SKEY_DOUBLE, BD(bulge.brightness), .lo = 0,
	 .hi = 1e6, .def = "1", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "number in [0, 1e6]", .help = "light per unit mass of the bulge (multiplies its colour)"},
	PART(halo, "Hernquist scale radius a", "8000", "10", "5e11", "10", "30", "disk-galaxy: the dark Hernquist halo"),
	{.path = "bodies.*.halo.color", .type = SKEY_COLOR, BD(halo.color), .lo = 0, .hi = 1e6,
	 .def = "[0.25, 0.2, 0.3]", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "[r, g, b], each in [0, 1e6]", .help = "linear RGB colour of the halo"},
	{.path = "bodies.*.halo.brightness", .type = SKEY_DOUBLE, BD(halo.brightness), .lo = 0,
	 .hi = 1e6, .def = "1", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "number in [0, 1e6]", .help = "light per unit mass of the halo (multiplies its colour)"},
	{.path = "bodies.*.dust", .type = SKEY_MAP, .type_doc = "map",
	 .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .help = "disk-galaxy: dust on a thin cold sub-disk that absorbs light behind it (needs render.style: stars)",
	 .see = "#Dust"},
	{.path = "bodies.*.dust.mass_fraction", .type = SKEY_DOUBLE, BD(dust.mass_fraction), .lo = 0,
	 .hi = 0.9, .def = "0", .models = SMODEL(SCENE_MODEL_DISK_GALAXY),
	 .type_doc = "number in [0, 0.9]",
	 .help = "share of the disk's bodies and mass that become the dark component NAME.dust (0: no dust)"},
	{.path = "bodies.*.dust.scale_height", .type = SKEY_DOUBLE, BD(dust.scale_height), .lo = 0,
	 .hi = H, .def = "0", .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "number >= 0",
	 .help = "z0 of the dust layer's sech^2(z/z0) (0: 0.4 x disk.scale_height)"},
	{.path = "bodies.*.dust.opacity", .type = SKEY_DOUBLE, BD(dust.opacity), .lo = 0, .hi = 1e4,
	 .def = "3", .models = SMODEL(SCENE_MODEL_DISK_GALAXY), .type_doc = "number in [0, 1e4]",
	 .help = "optical depth through the disk's centre seen face-on, as generated (tau0)"},

	MAPKEY("encounter", "optional: put bodies 0 and 1 (exactly 2 entries) on a Keplerian orbit (Toomre & Toomre 1972); present = enabled"),
	{.path = "encounter.pericenter", .type = SKEY_DOUBLE, SC(encounter.pericenter), .lo = 0,
	 .hi = H, .flags = SKEY_LO_OPEN, .def = "3", .def_galactic = "10", .type_doc = "number > 0",
	 .help = "closest approach of the two centres"},
	{.path = "encounter.separation", .type = SKEY_DOUBLE, SC(encounter.separation), .lo = 0,
	 .hi = H, .flags = SKEY_LO_OPEN, .def = "20", .def_galactic = "60",
	 .type_doc = "number >= pericenter", .help = "initial distance of the two centres (before pericentre)"},
	{.path = "encounter.eccentricity", .type = SKEY_DOUBLE, SC(encounter.eccentricity), .lo = 0,
	 .hi = 100, .def = "1", .type_doc = "number in [0, 100]",
	 .help = "orbit eccentricity: 1 parabolic, < 1 bound, > 1 hyperbolic"},
	{.path = "encounter.spin", .type = SKEY_SPIN2, SC(encounter.spin), .names = spin_names,
	 .def = "[prograde, prograde]", .type_doc = "[prograde|retrograde, ...]",
	 .help = "sense of each disk's rotation relative to the orbit (one word sets both)"},
	{.path = "encounter.inclination", .type = SKEY_PAIR, SC(encounter.inclination), .lo = -360,
	 .hi = 360, .def = "[0, 0]", .type_doc = "[deg, deg]",
	 .help = "each disk's inclination to the orbital plane (one number sets both)"},
	{.path = "encounter.omega", .type = SKEY_PAIR, SC(encounter.omega), .lo = -360, .hi = 360,
	 .def = "[0, 0]", .type_doc = "[deg, deg]",
	 .help = "each disk's argument of pericentre (one number sets both)"},

	MAPKEY("camera", "where the movie is seen from"),
	{.path = "camera.position", .type = SKEY_VEC3, SC(camera.position), .lo = -XMAX, .hi = XMAX,
	 .def = "[0, -10, 4]", .def_galactic = "[0, -60, 25]", .type_doc = "[x, y, z], each in [-1e15, 1e15]",
	 .help = "eye position (default for keys)"},
	{.path = "camera.target", .type = SKEY_VEC3, SC(camera.target), .lo = -XMAX, .hi = XMAX,
	 .def = "[0, 0, 0]", .type_doc = "[x, y, z], each in [-1e15, 1e15]", .help = "point looked at (default for keys)"},
	{.path = "camera.up", .type = SKEY_VEC3, SC(camera.up), .lo = -XMAX, .hi = XMAX, .def = "[0, 0, 1]",
	 .type_doc = "[x, y, z], each in [-1e15, 1e15], not 0", .help = "up direction (default for keys)"},
	{.path = "camera.fov", .type = SKEY_DOUBLE, SC(camera.fov), .lo = 0, .hi = 180,
	 .flags = SKEY_LO_OPEN | SKEY_HI_OPEN, .def = "40", .type_doc = "degrees in (0, 180)",
	 .help = "vertical field of view (default for keys)"},
	{.path = "camera.follow", .type = SKEY_STRING, SC(camera.follow), .def = "\"\"",
	 .type_doc = "\"\" | all | light | name",
	 .help = "keep the centre of mass of all bodies, an entry, or a component (NAME.disk) at the "
		 "target offset; light: the centre of the drawn light (trimmed mean of its central 90% "
		 "per axis), smoothed over camera.smoothing frames"},
	{.path = "camera.orbit", .type = SKEY_DOUBLE, SC(camera.orbit), .lo = -1e6, .hi = 1e6,
	 .def = "0", .type_doc = "degrees", .help = "degrees turned about target and up over the clip"},
	{.path = "camera.frame", .type = SKEY_ENUM, SC(camera.frame), .names = frame_names,
	 .def = "keys", .type_doc = "keys | auto",
	 .help = "keys: the eye where the keys put it; auto: the keys give the direction from the "
		 "target, the distance is chosen so that frame_fraction of the drawn light is in the "
		 "frame inside the margin (smoothed over camera.smoothing frames)"},
	{.path = "camera.frame_fraction", .type = SKEY_DOUBLE, SC(camera.frame_fraction), .lo = 0,
	 .hi = 1, .flags = SKEY_LO_OPEN, .def = "0.95", .type_doc = "number in (0, 1]",
	 .help = "frame auto: share of the drawn light (mass x brightness) kept inside the frame"},
	{.path = "camera.frame_margin", .type = SKEY_DOUBLE, SC(camera.frame_margin), .lo = 0,
	 .hi = 0.5, .def = "0.05", .type_doc = "number in [0, 0.5]",
	 .help = "frame auto: share of the frame's half-width and half-height kept clear at each edge"},
	{.path = "camera.frame_range", .type = SKEY_PAIR, SC(camera.frame_range), .lo = 1e-6,
	 .hi = 1e6, .def = "[1, 10]", .type_doc = "[lo, hi], 1e-6 <= lo <= hi <= 1e6",
	 .help = "frame auto: the distance stays within [lo, hi] x the keys' distance from the "
		 "target (lo 1: never nearer than the keys; lo < 1 lets it zoom in)"},
	{.path = "camera.smoothing", .type = SKEY_DOUBLE, SC(camera.smoothing), .lo = 0, .hi = 1e6,
	 .def = "15", .type_doc = "frames in [0, 1e6]",
	 .help = "follow light and frame auto: time constant of the critically damped spring that "
		 "moves the camera toward each frame's value (0: no smoothing)"},
	{.path = "camera.keys", .type = SKEY_LIST, .type_doc = "list of maps",
	 .help = "key frames (at most 256); absent: one key at frame 0 with the defaults above"},
	{.path = "camera.keys.*.frame", .type = SKEY_INT, .base = SBASE_KEY,
	 .off = offsetof(struct scene_camera_key, frame), .lo = 0, .hi = 1e9,
	 .flags = SKEY_REQUIRED, .type_doc = "integer >= 0, increasing",
	 .help = "frame of this key; strictly increasing through the list"},
	{.path = "camera.keys.*.position", .type = SKEY_VEC3, CK(position), .lo = -XMAX, .hi = XMAX,
	 .type_doc = "[x, y, z], each in [-1e15, 1e15]", .help = "eye position at this key (default camera.position)"},
	{.path = "camera.keys.*.target", .type = SKEY_VEC3, CK(target), .lo = -XMAX, .hi = XMAX,
	 .type_doc = "[x, y, z], each in [-1e15, 1e15]", .help = "target at this key (default camera.target)"},
	{.path = "camera.keys.*.up", .type = SKEY_VEC3, CK(up), .lo = -XMAX, .hi = XMAX,
	 .type_doc = "[x, y, z], each in [-1e15, 1e15]", .help = "up at this key (default camera.up)"},
	{.path = "camera.keys.*.fov", .type = SKEY_DOUBLE, .base = SBASE_KEY,
	 .off = offsetof(struct scene_camera_key, fov),
	 .has_off = offsetof(struct scene_camera_key, has_fov), .lo = 0, .hi = 180,
	 .flags = SKEY_HAS | SKEY_LO_OPEN | SKEY_HI_OPEN, .type_doc = "degrees in (0, 180)",
	 .help = "field of view at this key (default camera.fov)"},
	{.path = "camera.keys.*.ease", .type = SKEY_ENUM, CK(ease), .names = ease_names,
	 .type_doc = "linear | in | out | in-out",
	 .help = "timing of the move from this key to the next along the same path: linear (the "
		 "default: the spline's own), in (starts from rest), out (arrives at rest), in-out (both)"},
	{.path = "camera.keys.*.exposure", .type = SKEY_DOUBLE, .base = SBASE_KEY,
	 .off = offsetof(struct scene_camera_key, exposure),
	 .has_off = offsetof(struct scene_camera_key, has_exposure), .lo = 0, .hi = 1e15,
	 .flags = SKEY_HAS | SKEY_LO_OPEN, .type_doc = "number > 0",
	 .help = "manual exposure at this key (render.exposure's meaning); any key with one makes "
		 "the whole clip manual: geometric between such keys, held outside them"},
	{.path = "camera.projection", .type = SKEY_ENUM, SC(camera.projection), .names = projection_names,
	 .def = "perspective", .type_doc = "perspective | fisheye | equirectangular",
	 .help = "perspective: the pinhole (camera.fov); fisheye: a domemaster (square frame, "
		 "azimuthal equidistant, the view axis at the centre, camera.up at the top); "
		 "equirectangular: 360 x 180 degrees on a 2:1 frame, the target at the centre",
	 .see = "#Projections and stereo"},
	{.path = "camera.fisheye_aperture", .type = SKEY_DOUBLE, SC(camera.fisheye_aperture), .lo = 0,
	 .hi = 360, .flags = SKEY_LO_OPEN, .def = "180", .type_doc = "degrees in (0, 360]",
	 .help = "fisheye: the full angle the circle inscribed in the frame covers"},
	{.path = "camera.dome_tilt", .type = SKEY_DOUBLE, SC(camera.dome_tilt), .lo = -90, .hi = 90,
	 .def = "0", .type_doc = "degrees in [-90, 90]",
	 .help = "fisheye: the view axis (the dome's zenith) turned this far from the target "
		 "towards camera.up, about the camera's right axis (tilted domes: the target then "
		 "sits below the centre)"},
	MAPKEY("camera.stereo", "two eyes in one frame (perspective and equirectangular)"),
	{.path = "camera.stereo.mode", .type = SKEY_ENUM, SC(camera.stereo.mode), .names = stereo_names,
	 .def = "none", .type_doc = "none | side-by-side | top-bottom",
	 .help = "side-by-side: left eye in the left half; top-bottom: left eye on top; each eye "
		 "a full image of half the frame"},
	{.path = "camera.stereo.eye_separation", .type = SKEY_NUM_OR_WORD,
	 SC(camera.stereo.eye_separation), .lo = 0, .hi = XMAX, .flags = SKEY_LO_OPEN,
	 .has_off = offsetof(struct scene, camera.stereo.eye_separation_auto), .names = auto_word,
	 .def = "auto", .type_doc = "number > 0 | auto",
	 .help = "distance between the eyes, scene length units; auto: 1/30 of the convergence "
		 "distance (equirectangular: of the distance to the target)"},
	{.path = "camera.stereo.convergence", .type = SKEY_NUM_OR_WORD, SC(camera.stereo.convergence),
	 .lo = 0, .hi = XMAX, .flags = SKEY_LO_OPEN,
	 .has_off = offsetof(struct scene, camera.stereo.convergence_auto), .names = auto_word,
	 .def = "auto", .type_doc = "number > 0 | auto",
	 .help = "perspective: distance of zero parallax (parallel eyes, images shifted); auto: "
		 "the distance to the target. Equirectangular (omni-directional stereo): unused, "
		 "zero parallax at infinity"},

	MAPKEY("render", "how a frame is drawn"),
	{.path = "render.width", .type = SKEY_INT, SC(render.width), .lo = 16, .hi = 16384,
	 .flags = SKEY_EVEN, .def = "1280", .type_doc = "even integer in [16, 16384]",
	 .help = "frame width in pixels (video needs even sizes)"},
	{.path = "render.height", .type = SKEY_INT, SC(render.height), .lo = 16, .hi = 16384,
	 .flags = SKEY_EVEN, .def = "720", .type_doc = "even integer in [16, 16384]",
	 .help = "frame height in pixels"},
	{.path = "render.exposure", .type = SKEY_NUM_OR_WORD, SC(render.exposure), .lo = 0, .hi = H,
	 .flags = SKEY_LO_OPEN, .has_off = offsetof(struct scene, render.exposure_auto),
	 .names = auto_word, .def = "auto", .type_doc = "number > 0 | auto",
	 .help = "brightness multiplier before tone mapping (times the frame's reference level), "
		 "or auto: render.auto_percentile of the lit pixels' luminance goes to 0.8 after "
		 "the curve, smoothed over render.auto_smoothing frames",
	 .see = "#Tone mapping: filmic and auto exposure"},
	{.path = "render.white", .type = SKEY_DOUBLE, SC(render.white), .lo = 0, .hi = 1e6,
	 .flags = SKEY_LO_OPEN, .def = "8", .type_doc = "number in (0, 1e6]",
	 .help = "filmic: luminance (after exposure) where the shoulder has reached (W+1)/(W+2)"},
	{.path = "render.glow", .type = SKEY_DOUBLE, SC(render.glow), .lo = 0, .hi = 1, .def = "0.3",
	 .type_doc = "number in [0, 1]",
	 .help = "fraction of the light above render.glow_threshold moved into a soft halo "
		 "(a pyramid of 2, 4, 8, 16 px cells, total light kept); 0: off", .see = "#Glow"},
	{.path = "render.glow_threshold", .type = SKEY_DOUBLE, SC(render.glow_threshold), .lo = 0,
	 .hi = 1e6, .def = "1", .type_doc = "number in [0, 1e6]",
	 .help = "glow: level above which light glows, in units of the tone map's level "
		 "(pixel value times render.exposure / reference level; 1 is white in linear)"},
	{.path = "render.auto_percentile", .type = SKEY_DOUBLE, SC(render.auto_percentile), .lo = 0,
	 .hi = 100, .flags = SKEY_LO_OPEN, .def = "99.5", .type_doc = "number in (0, 100]",
	 .help = "exposure auto: percentile of the lit pixels' luminance that is set to 0.8"},
	{.path = "render.auto_smoothing", .type = SKEY_DOUBLE, SC(render.auto_smoothing), .lo = 0,
	 .hi = 1e6, .def = "10", .type_doc = "number in [0, 1e6]",
	 .help = "exposure auto: time constant in frames of the moving average of log exposure "
		 "(0: no smoothing)"},
	{.path = "render.gamma", .type = SKEY_DOUBLE, SC(render.gamma), .lo = 0, .hi = 10,
	 .flags = SKEY_LO_OPEN, .def = "2.2", .type_doc = "number in (0, 10]",
	 .help = "display gamma applied after tone mapping"},
	{.path = "render.tonemap", .type = SKEY_ENUM, SC(render.tonemap), .names = tonemap_names,
	 .def = "filmic", .type_doc = "linear | log | asinh | filmic",
	 .help = "tone curve for the wide range of densities (filmic: on luminance, colour kept)"},
	{.path = "render.mode", .type = SKEY_ENUM, SC(render.mode), .names = mode_names,
	 .def = "components", .type_doc = "components | density",
	 .help = "components: each entry's colour; density: a colour map of brightness"},
	{.path = "render.colormap", .type = SKEY_ENUM, SC(render.colormap), .names = cmap_names,
	 .def = "magma",
	 .type_doc = "magma | inferno | viridis | grey | plasma | cividis | twilight | cubehelix",
	 .help = "colour map for mode density and color_by speed"},
	{.path = "render.colormap_file", .type = SKEY_STRING, SC(render.colormap_file), .def = "\"\"",
	 .type_doc = "path",
	 .help = "a user colour map replacing render.colormap: 256 rows \"r g b\", all floats in "
		 "[0, 1] or all integers in [0, 255], relative to the scene file"},
	{.path = "render.color_by", .type = SKEY_ENUM, SC(render.color_by), .names = color_by_names,
	 .def = "component", .type_doc = "component | los_velocity | speed",
	 .help = "mode components: a body's colour from its component, its line-of-sight velocity "
		 "(blue approaching, white 0, red receding) or its speed (render.colormap); its "
		 "weight stays mass x brightness"},
	{.path = "render.color_range", .type = SKEY_PAIR_OR_WORD, SC(render.color_range), .lo = -1e15,
	 .hi = 1e15, .has_off = offsetof(struct scene, render.color_range_auto), .names = auto_word,
	 .def = "auto", .type_doc = "[lo, hi] | auto",
	 .help = "color_by: the velocities (scene units) mapped to the ends of the colours; auto: "
		 "from the initial state seen by frame 0's camera (los_velocity: +-99th percentile of "
		 "|v_los|; speed: 1st to 99th percentile)"},
	{.path = "render.kernel", .type = SKEY_ENUM, SC(render.kernel), .names = kernel_names,
	 .def = "cubic", .type_doc = "cubic | gaussian", .help = "splat kernel shape"},
	{.path = "render.style", .type = SKEY_ENUM, SC(render.style), .names = style_names,
	 .def = "stars", .type_doc = "smooth | stars",
	 .help = "smooth: each body spread by kernel over its smoothing length; stars: each body a "
		 "point of light through a Gaussian PSF of psf_fwhm pixels (no smoothing length)"},
	{.path = "render.psf_fwhm", .type = SKEY_DOUBLE, SC(render.psf_fwhm), .lo = 0.5, .hi = 8,
	 .def = "1.5", .type_doc = "number in [0.5, 8]",
	 .help = "style stars: full width at half maximum of the Gaussian PSF, in pixels"},
	{.path = "render.psf_wing", .type = SKEY_DOUBLE, SC(render.psf_wing), .lo = 0, .hi = 0.5,
	 .def = "0", .type_doc = "number in [0, 0.5]",
	 .help = "fraction of every star's light put into a faint wide Moffat-like wing (2.5 to "
		 "20 px scales, total light kept); 0: off", .see = "#The PSF's wing"},
	{.path = "render.psf_wing_beta", .type = SKEY_DOUBLE, SC(render.psf_wing_beta), .lo = 1,
	 .hi = 4, .def = "1.5", .type_doc = "number in [1, 4]",
	 .help = "psf_wing: Moffat power beta; the wing's light beyond radius r falls as "
		 "r^(2 - 2 beta) (1: equal light per octave, as the glow's halo; larger: tighter)"},
	{.path = "render.smoothing", .type = SKEY_NUM_OR_WORD, SC(render.smoothing), .lo = 0, .hi = H,
	 .flags = SKEY_LO_OPEN, .has_off = offsetof(struct scene, render.smoothing_adaptive),
	 .names = adaptive_word,
	 .def = "0.05", .def_galactic = "0.1", .type_doc = "number > 0 | adaptive",
	 .help = "splat radius in length units, or adaptive: distance to the k-th nearest drawn "
		 "body (bodies drawn black are ignored)"},
	{.path = "render.neighbours", .type = SKEY_INT, SC(render.neighbours), .lo = 1, .hi = 1024,
	 .def = "32", .type_doc = "integer in [1, 1024]",
	 .help = "k for adaptive smoothing (counted among drawn bodies)"},
	{.path = "render.adaptive_every", .type = SKEY_INT, SC(render.adaptive_every), .lo = 1, .hi = 1e6,
	 .def = "4", .type_doc = "integer in [1, 1e6]",
	 .help = "recompute adaptive smoothing lengths every this many frames (1: every frame)"},
	{.path = "render.h_cap", .type = SKEY_DOUBLE, SC(render.h_cap), .lo = 0, .hi = 1e6,
	 .def = "0", .type_doc = "number in [0, 1e6]",
	 .help = "adaptive: cap each h at this times the median h of the drawn bodies (0: no cap)"},
	{.path = "render.diffuse", .type = SKEY_DOUBLE, SC(render.diffuse), .lo = 0, .hi = 1e6,
	 .def = "0", .type_doc = "number in [0, 1e6]",
	 .help = "style stars: weight of a smooth adaptive layer under the stars; the frame is "
		 "(stars + diffuse x smooth) / (1 + diffuse), total light kept (0: off)"},
	{.path = "render.diffuse_smoothing", .type = SKEY_ENUM, SC(render.diffuse_smoothing),
	 .names = diffuse_smoothing_names, .def = "screen", .type_doc = "screen | adaptive",
	 .help = "diffuse layer: screen: the stars' own light smoothed on an image pyramid over the "
		 "area holding render.neighbours projected bodies, every frame; adaptive: splat with "
		 "3D k-nearest-neighbour h (Diffuse layer)", .see = "#Rules"},
	{.path = "render.gpu_memory", .type = SKEY_NUM_OR_WORD, SC(render.gpu_memory),
	 .lo = 16777216, .hi = 1125899906842624, .flags = SKEY_BYTES,
	 .has_off = offsetof(struct scene, render.gpu_memory_auto), .names = auto_word,
	 .def = "auto", .type_doc = "bytes (8G, 512M, 1.5G, 8589934592) | auto",
	 .help = "film mode (simulation.solver: none) on the GPU: device memory the renderer may "
		 "use; bodies that need more stream through it in chunks (out of core); auto: the "
		 "free GPU memory less a tenth. A size is refused with a simulation and with what "
		 "cannot be drawn in chunks (adaptive smoothing, the adaptive diffuse layer, dust)",
	 .see = "snapshots.md#Bigger than the GPU: out of core"},
	{.path = "render.dust_slabs", .type = SKEY_INT, SC(render.dust_slabs), .lo = 1, .hi = 64,
	 .def = "16", .type_doc = "integer in [1, 64]",
	 .help = "dust: depth slabs composited front to back, spanning the dust bodies' depths"},
	{.path = "render.background", .type = SKEY_COLOR, SC(render.background), .lo = 0, .hi = 1e6,
	 .def = "[0, 0, 0]", .type_doc = "[r, g, b], each in [0, 1e6]", .help = "linear RGB background"},
	MAPSEE("render.motion_blur", "style stars: motion blur, each body drawn at sub-frame positions "
				     "along its velocity", "#Motion blur"),
	{.path = "render.motion_blur.samples", .type = SKEY_INT, SC(render.motion_blur.samples),
	 .lo = 1, .hi = 64, .def = "1", .type_doc = "integer in [1, 64]",
	 .help = "positions per body and frame, each with 1/samples of its light (total light "
		 "kept); 1: off"},
	{.path = "render.motion_blur.shutter", .type = SKEY_DOUBLE, SC(render.motion_blur.shutter),
	 .lo = 0, .hi = 1, .flags = SKEY_LO_OPEN, .def = "0.5", .type_doc = "number in (0, 1]",
	 .help = "fraction of the frame interval (simulation.dt x steps_per_frame) the shutter is "
		 "open, centred on the frame's time (0.5: a 180-degree shutter)"},

	/* a top-level map's help is also the resolved scene's comment: keep it */
	MAPSEE("overlay", "text and a scale bar drawn into the frame (all off by default)", "#Overlays"),
	{.path = "overlay.time", .type = SKEY_ENUM, SC(overlay.time), .names = bool_names,
	 .def = "false", .type_doc = "false | true",
	 .help = "elapsed time in the scene's units, top-right (\"t = 450 Myr\", nbody \"t = 12.5\")"},
	{.path = "overlay.scale_bar", .type = SKEY_NUM_OR_WORD, SC(overlay.scale_bar), .lo = 0,
	 .hi = H, .flags = SKEY_LO_OPEN, .has_off = offsetof(struct scene, overlay.scale_bar_word),
	 .names = scale_bar_words, .def = "none", .type_doc = "number > 0 | none | auto",
	 .help = "bar at bottom-right of this length (scene units, seen at the camera's target "
		 "distance), labelled; auto: a round 1-2-5 length near 20% of the frame width (of one eye's "
		 "picture with camera.stereo)"},
	{.path = "overlay.title", .type = SKEY_STRING, SC(overlay.title), .def = "\"\"",
	 .type_doc = "text (printable ASCII, < 128)", .help = "title drawn top-left (\"\": none)"},
	{.path = "overlay.color", .type = SKEY_COLOR, SC(overlay.color), .lo = 0, .hi = 1,
	 .def = "[1, 1, 1]", .type_doc = "[r, g, b], each in [0, 1]",
	 .help = "display colour of the text and the bar (each gets a dark outline)"},
	{.path = "overlay.size", .type = SKEY_INT, SC(overlay.size), .lo = 0, .hi = 64, .def = "0",
	 .type_doc = "integer in [0, 64]",
	 .help = "font scale: screen pixels per font pixel (glyphs 5x7 + 2 descender rows); 0: "
		 "max(1, (height + 150) / 300), the eye's height with camera.stereo"},

	MAPKEY("output", "what is written (an empty path writes nothing)"),
	{.path = "output.frames", .type = SKEY_INT, SC(output.frames), .lo = 1, .hi = 1e7,
	 .def = "60", .type_doc = "integer in [1, 1e7]", .help = "number of frames"},
	{.path = "output.fps", .type = SKEY_INT, SC(output.fps), .lo = 1, .hi = 240, .def = "30",
	 .type_doc = "integer in [1, 240]", .help = "frames per second of the video"},
	{.path = "output.video", .type = SKEY_STRING, SC(output.video), .def = "\"\"",
	 .type_doc = "path ending .mp4/.mkv/.mov/.webm/.gif",
	 .help = "the video (relative to the working directory); its extension picks the container: "
		 ".mp4, .mkv, .mov (H.264 or H.265, output.codec), .webm (VP9, else AV1: the first "
		 "this FFmpeg has), .gif (256 fixed colours, RGB 3-3-2); any other name is refused"},
	{.path = "output.png_dir", .type = SKEY_STRING, SC(output.png_dir), .def = "\"\"",
	 .type_doc = "path", .help = "directory for one PNG per frame"},
	{.path = "output.stats", .type = SKEY_STRING, SC(output.stats), .def = "\"\"",
	 .type_doc = "path", .help = "CSV of energy, momentum and angular momentum per frame"},
	{.path = "output.initial_state", .type = SKEY_STRING, SC(output.initial_state), .def = "\"\"",
	 .type_doc = "path", .help = "state CSV of the initial bodies"},
	{.path = "output.final_state", .type = SKEY_STRING, SC(output.final_state), .def = "\"\"",
	 .type_doc = "path", .help = "state CSV of the bodies after the last frame"},
	{.path = "output.preview", .type = SKEY_STRING, SC(output.preview), .def = "\"\"",
	 .type_doc = "path ending .jpg/.jpeg", .help = "JPEG preview image"},
	{.path = "output.preview_kind", .type = SKEY_ENUM, SC(output.preview_kind),
	 .names = preview_names, .def = "last", .type_doc = "none | last | sheet",
	 .help = "last: the last frame; sheet: a contact sheet of frames (none when preview is \"\")"},
	{.path = "output.codec", .type = SKEY_ENUM, SC(output.codec), .names = codec_names,
	 .def = "h264", .type_doc = "h264 | h265",
	 .help = "video codec of .mp4, .mkv and .mov; .webm and .gif have their own (h265 with them "
		 "is refused)"},
	{.path = "output.crf", .type = SKEY_INT, SC(output.crf), .lo = 0, .hi = 51, .def = "20",
	 .type_doc = "integer in [0, 51]", .help = "constant rate factor: lower is better and larger (.webm: the VP9/AV1 crf, "
		 "on its own scale; .gif: unused)"},
	{.path = "output.preset", .type = SKEY_WORD, SC(output.preset), .names = preset_names,
	 .def = "veryfast", .type_doc = "ultrafast ... placebo", .help = "x264/x265 speed preset (.webm and .gif: unused)"},
	{.path = "output.png_depth", .type = SKEY_INT, SC(output.png_depth), .lo = 8, .hi = 16,
	 .names = depth_names, .def = "8", .type_doc = "8 | 16", .help = "bits per PNG channel"},
	{.path = "output.resolved_scene", .type = SKEY_STRING, SC(output.resolved_scene),
	 .def = "\"\"", .type_doc = "path",
	 .help = "where the fully resolved scene is written (\"\": the program derives it)"},
	MAPSEE("output.snapshots", "GADGET-style HDF5 snapshots of the state",
	       "snapshots.md#Snapshots: output.snapshots"),
	{.path = "output.snapshots.every", .type = SKEY_INT, SC(output.snapshots.every), .lo = 1,
	 .hi = 1e7, .def = "10", .type_doc = "integer in [1, 1e7]",
	 .help = "a snapshot at frames 0, every, 2 every, ... and at the last frame"},
	{.path = "output.snapshots.dir", .type = SKEY_STRING, SC(output.snapshots.dir), .def = "\"\"",
	 .type_doc = "path",
	 .help = "directory for snap_000.hdf5, snap_001.hdf5, ... (snapshot k holds frame k x every, "
		 "the last one the last frame; \"\": none)"},
	{.path = "output.snapshots.format", .type = SKEY_ENUM, SC(output.snapshots.format),
	 .names = snap_format_names, .def = "hdf5", .type_doc = "hdf5",
	 .help = "hdf5: GADGET layout (Header, PartType1-4, Units), read by yt and h5py as it is"},
	{.path = "output.snapshots.files", .type = SKEY_INT, SC(output.snapshots.files), .lo = 1,
	 .hi = 1024, .def = "1", .type_doc = "integer in [1, 1024]",
	 .help = "parts per snapshot: more than 1 writes each as a GADGET multi-file set "
		 "snap_NNN.0.hdf5 .. snap_NNN.(files-1).hdf5 (NumFilesPerSnapshot; bodies split in "
		 "index order), published only when every part is whole"},
	{.path = "output.fits_dir", .type = SKEY_STRING, SC(output.fits_dir), .def = "\"\"",
	 .type_doc = "path",
	 .help = "directory for frame_00000.fits, ...: each frame's HDR map (float32 R, G, B planes, "
		 "per unit area, with BUNIT, CDELT, SIMTIME; fisheye and equirectangular cameras: per "
		 "steradian, with a CAR or ARC WCS; not with stereo)",
	 .see = "snapshots.md#FITS maps: output.fits_dir"},
};

const int scene_schema_count = (int)(sizeof(scene_schema) / sizeof(scene_schema[0]));

const struct scene_key *scene_schema_find(const char *path)
{
	for (int i = 0; i < scene_schema_count; i++)
		if (strcmp(scene_schema[i].path, path) == 0)
			return &scene_schema[i];
	return NULL;
}

const char *scene_schema_leaf(const struct scene_key *key)
{
	const char *dot = strrchr(key->path, '.');
	return dot ? dot + 1 : key->path;
}

int scene_schema_is_child(const struct scene_key *key, const char *parent)
{
	size_t lp = strlen(parent);
	if (lp == 0)
		return strchr(key->path, '.') == NULL;
	return strncmp(key->path, parent, lp) == 0 && key->path[lp] == '.' &&
	       strchr(key->path + lp + 1, '.') == NULL;
}

const char *scene_schema_suggest(const char *parent, const char *word)
{
	const char *names[128];
	int n = 0;
	for (int i = 0; i < scene_schema_count && n < 128; i++)
		if (scene_schema_is_child(&scene_schema[i], parent))
			names[n++] = scene_schema_leaf(&scene_schema[i]);
	return scene_closest(names, n, word);
}

void scene_schema_list_keys(const char *parent, char *buf, size_t size)
{
	size_t o = 0;
	buf[0] = '\0';
	for (int i = 0; i < scene_schema_count && o < size; i++)
		if (scene_schema_is_child(&scene_schema[i], parent))
			o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "",
					      scene_schema_leaf(&scene_schema[i]));
}

void *scene_schema_addr(const struct scene_key *key, struct scene *sc, struct scene_body *b,
			struct scene_camera_key *ck)
{
	char *base = key->base == SBASE_SCENE ? (char *)sc
		   : key->base == SBASE_BODY  ? (char *)b
					      : (char *)ck;
	return base ? base + key->off : NULL;
}

/* Copied by hand: key paths are short, and truncation of a message path is
 * harmless. */
void scene_path_join(char *out, size_t size, const char *parent, const char *leaf)
{
	size_t o = 0;
	for (const char *p = parent; *p && o + 1 < size; p++)
		out[o++] = *p;
	if (parent[0] && o + 1 < size)
		out[o++] = '.';
	for (const char *p = leaf; *p && o + 1 < size; p++)
		out[o++] = *p;
	out[o] = '\0';
}

const char *scene_opening_name(enum scene_opening o)
{
	return (unsigned)o < sizeof opening_names / sizeof opening_names[0] - 1 ? opening_names[o] : "?";
}

const char *scene_solver_name(enum scene_solver s)
{
	return (unsigned)s < sizeof solver_names / sizeof solver_names[0] - 1 ? solver_names[s] : "?";
}
