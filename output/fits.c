/* fits.c - output.fits_dir: each frame's HDR map as a FITS file through
 * cfitsio, for measuring rather than watching.
 *
 * The map is the renderer's HDR image (before exposure and tone map; after
 * render.psf_wing and render.glow, which move light but keep its total):
 * each body's mass x its component's light per unit mass (colour x
 * brightness; render.mode: density weighs mass alone), divided here by
 * the area of a pixel at the camera's target distance. With render.mode:
 * density, glow and psf_wing 0 and no dust, each plane is the projected
 * mass surface density (M_sun / kpc^2 in galactic scenes), and its sum
 * times CDELT1 x CDELT2 is the mass in view.
 *
 * Header: BUNIT and BTYPE (what the planes hold: fits_bunit), CTYPE1/2 =
 * 'LINEAR', CUNIT1/2, CDELT1/2 (the pixel scale at the target's distance),
 * CRPIX1/2 at the image centre, CRVAL1/2 = 0 (offsets from the target),
 * CTYPE3 = 'RGB' (planes R, G, B), TIMESYS-free simulation time SIMTIME
 * with TIMEUNIT, FRAME, UNITSYS, and the frame's camera (CAM*: fits_camera).
 *
 * Angular maps (camera.projection fisheye or equirectangular): the pixels
 * are directions, so the map is light (mass) per steradian, each pixel
 * divided by its own solid angle, and the WCS is a spherical one about the
 * camera, CTYPE1/2 = 'CMLN-xxx' / 'CMLT-xxx' (camera longitude and
 * latitude, degrees; any FITS reader with WCS, e.g. astropy, maps pixels
 * to them):
 *   equirectangular: 'CAR', CRVAL (0, 0) at the centre: the target's
 *     direction is (0, 0), longitude grows to the right, latitude up, as
 *     docs/scenes.md's lon and lat. A pixel's solid angle is dlon (sin
 *     lat_top - sin lat_bottom).
 *   fisheye: 'ARC' (zenithal equidistant, the domemaster's own mapping),
 *     CRVAL (0, 90): latitude 90 - theta, theta the angle from the view
 *     axis (the dome's zenith, the frame centre); longitude 0 at the top
 *     of the frame (camera.up), 90 at the left, 180 at the bottom, 270 at
 *     the right. A pixel's solid angle is the integral of sin(theta) /
 *     theta over it, taken at 2 x 2 Gauss points. */
#include <errno.h>
#include <math.h>
#include <fitsio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../render/render.h"
#include "../sim/sim.h"
#include "out_internal.h"
#include "output.h"

int out_fits_path(const char *dir, int frame, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s/frame_%05d.fits", dir, frame);
	if (n < 0 || (size_t)n >= cap) {
		log_error("%s: FITS frame path too long", dir);
		return NB_ERUNTIME;
	}
	return 0;
}

/* The map's projection row; a value out of the table is a plane. */
static const struct render_projection *fits_row(const struct out_fits_meta *m)
{
	const struct render_projection *row = render_projection_of(m->projection);
	return row ? row : render_projection_of(SCENE_PROJ_PERSPECTIVE);
}

/* BUNIT and BTYPE: what the planes hold. render.mode: density weighs
 * each body by its mass alone, so the planes are a mass surface density
 * (solMass kpc-2; angular maps solMass sr-1); nbody scenes have no
 * physical mass or length, so no BUNIT. Any other mode (components, and
 * render.color_by) weighs mass x colour x brightness (x the colormap's
 * colour): light in the scene's own arbitrary unit, the light of 1 M_sun
 * (1 mass unit) of a component of colour x brightness 1, per kpc^2 or per
 * sr; FITS has no such unit, so BUNIT says 'relative' and BTYPE 'light'. */
static void fits_bunit(fitsfile *ff, const struct out_fits_meta *m, int ang, int *st)
{
	const int galactic = m->length_unit[0] != 0;
	const char *unit = !m->density ? "relative"
			   : !galactic ? NULL
			   : ang ? "solMass sr-1" : "solMass kpc-2";
	const char *what = !m->density ? "light"
			   : ang ? "mass per solid angle" : "mass surface density";
	if (unit)
		fits_write_key(ff, TSTRING, "BUNIT", (void *)unit,
			       !m->density ? (ang ? "light/sr: 1 Msun x colour x brightness = 1"
						  : "light/area: 1 Msun x colour x brightness = 1")
			       : ang ? "mass per steradian" : "mass per unit area at the target",
			       st);
	fits_write_key(ff, TSTRING, "BTYPE", (void *)what,
		       !m->density ? "mass x colour x brightness per pixel area" : "render.mode: density",
		       st);
}

static const char *fits_projection_name(int p)
{
	static const char *const names[] = {"perspective", "fisheye", "equirectangular"};
	return p >= 0 && p < 3 ? names[p] : "perspective";
}

/* The frame's camera (scene length units, as the scene's keys): CAMPOSn
 * the eye, CAMTGTn the target, CAMUPn the up vector (n = X, Y, Z), CAMFOV
 * the vertical field of view, CAMPROJ the projection, fisheye's CAMAPER
 * and CAMTILT; a stereo eye's CAMEYE. */
static void fits_camera(fitsfile *ff, const struct out_fits_meta *m, int *st)
{
	const struct render_camera *c = m->cam;
	static const char *const key[3] = {"CAMPOS", "CAMTGT", "CAMUP"};
	static const char *const what[3] = {"camera position", "camera target", "camera up vector"};
	const double *v[3] = {c->pos, c->target, c->up};
	for (int q = 0; q < 3; q++)
		for (int a = 0; a < 3; a++) {
			char k[16], com[80];
			snprintf(k, sizeof k, "%s%c", key[q], 'X' + a);
			snprintf(com, sizeof com, "%s %c%s%s", what[q], 'x' + a,
				 q < 2 && m->length_unit[0] ? ", " : "", q < 2 ? m->length_unit : "");
			double x = v[q][a];
			fits_write_key(ff, TDOUBLE, k, &x, com, st);
		}
	double fov = c->fov;
	fits_write_key(ff, TDOUBLE, "CAMFOV", &fov, "vertical field of view, deg", st);
	fits_write_key(ff, TSTRING, "CAMPROJ", (void *)fits_projection_name(c->projection),
		       "camera projection", st);
	if (c->projection == SCENE_PROJ_FISHEYE) {
		double ap = c->fisheye_aperture > 0 ? c->fisheye_aperture : 180, tilt = c->dome_tilt;
		fits_write_key(ff, TDOUBLE, "CAMAPER", &ap, "fisheye aperture, deg", st);
		fits_write_key(ff, TDOUBLE, "CAMTILT", &tilt, "dome tilt, deg", st);
	}
	if (c->eye) {
		int eye = c->eye;
		fits_write_key(ff, TINT, "CAMEYE", &eye, "stereo eye: -1 left, +1 right", st);
	}
}

/* The keywords; cfitsio's status carries the first error. */
static void fits_keys(fitsfile *ff, const struct out_fits_meta *m, int w, int h, int *st)
{
	double crpix1 = 0.5 * w + 0.5, crpix2 = 0.5 * h + 0.5, zero = 0, scale = m->pixel_scale;
	int frame = m->frame;
	double t = m->time;
	const struct render_projection *row = fits_row(m);
	const int ang = row->wcs != NULL;
	fits_bunit(ff, m, ang, st);
	const char *rgb = "RGB", *deg = "deg";
	char lon[16] = "LINEAR", lat[16] = "LINEAR";
	const char *ctype[2] = {lon, lat};
	double crval[2] = {zero, zero};
	if (ang) { /* fisheye: CRVAL2 90, the view axis is the pole */
		snprintf(lon, sizeof lon, "CMLN-%s", row->wcs);
		snprintf(lat, sizeof lat, "CMLT-%s", row->wcs);
		crval[1] = row->wcs_lat0;
	}
	if (ang)
		scale = m->px_per_rad > 0 ? (180.0 / M_PI) / m->px_per_rad : 0;
	for (int a = 1; a <= 2; a++) {
		char k[16];
		snprintf(k, sizeof k, "CTYPE%d", a);
		fits_write_key(ff, TSTRING, k, (void *)ctype[a - 1],
			       !ang ? "offset from the camera target"
			       : a == 1 ? "camera longitude" : "camera latitude", st);
		if (ang || m->length_unit[0]) {
			snprintf(k, sizeof k, "CUNIT%d", a);
			fits_write_key(ff, TSTRING, k, (void *)(ang ? deg : m->length_unit), NULL, st);
		}
		snprintf(k, sizeof k, "CDELT%d", a);
		fits_write_key(ff, TDOUBLE, k, &scale,
			       ang ? "degrees per pixel" : "pixel size at the target's distance", st);
		snprintf(k, sizeof k, "CRPIX%d", a);
		fits_write_key(ff, TDOUBLE, k, a == 1 ? &crpix1 : &crpix2, "image centre", st);
		snprintf(k, sizeof k, "CRVAL%d", a);
		fits_write_key(ff, TDOUBLE, k, &crval[a - 1],
			       ang && a == 2 && row->wcs_lat0 == 90 ? "the view axis" : NULL, st);
	}
	fits_write_key(ff, TSTRING, "CTYPE3", (void *)rgb, "planes: R, G, B light", st);
	fits_write_key(ff, TDOUBLE, "SIMTIME", &t, "simulation time of the frame", st);
	if (m->time_unit[0])
		fits_write_key(ff, TSTRING, "TIMEUNIT", (void *)m->time_unit, "unit of SIMTIME", st);
	fits_write_key(ff, TINT, "FRAME", &frame, "frame number", st);
	fits_write_key(ff, TSTRING, "UNITSYS", (void *)m->units, "scene units (nbody: G = 1)", st);
	const char *origin = "nbody-render";
	fits_write_key(ff, TSTRING, "ORIGIN", (void *)origin, NULL, st);
	if (m->cam)
		fits_camera(ff, m, st);
}

/* scale[j w + i] = 1 / (the solid angle of pixel (i, j), row 0 the top),
 * steradians, once per map (0 where it has none): the row's pixel_sr. */
static void fits_angular_scale(const struct out_fits_meta *m, int w, int h, float *scale)
{
	const double k = m->px_per_rad;
	if (k > 0) {
		fits_row(m)->pixel_sr(w, h, k, scale);
		return;
	}
	for (size_t p = 0; p < (size_t)w * (size_t)h; p++)
		scale[p] = 0.0f;
}

/* The map is built in memory (cfitsio's memory file) and written by
 * out_save_bytes: cfitsio's disk driver misses a write that fails at its
 * close (a full disk let a file one byte short be renamed into place with
 * exit 0) and its status codes carry no OS reason. The cost is the file's
 * size (w h 12 bytes and the header) in memory while one map is written. */
int out_fits_write(const char *dir, const struct out_fits_meta *meta, int w, int h,
		   const float *rgb)
{
	char path[SCENE_PATH_MAX + 32];
	const size_t px = (size_t)w * (size_t)h;
	fitsfile *ff = NULL;
	void *mem = NULL;
	size_t memsize = 0;
	LONGLONG headstart = 0, datastart = 0, dataend = 0;
	int status = 0, rc = NB_ERUNTIME;
	const int ang = fits_row(meta)->wcs != NULL;
	float *plane = malloc(px * sizeof *plane), *scale = ang ? malloc(px * sizeof *scale) : NULL;
	if (!plane || (ang && !scale)) {
		free(plane);
		free(scale);
		log_error("%s: out of memory for a %dx%d FITS plane", dir, w, h);
		return NB_ERUNTIME;
	}
	if (out_fits_path(dir, meta->frame, path, sizeof path))
		goto end;
	long naxes[3] = {w, h, 3};
	/* the whole file at once: one allocation, no growth (a FITS file is
	 * whole 2880-byte blocks; 64 of them are more than the header needs) */
	memsize = ((px * 3 * sizeof(float) + 2879) / 2880 + 64) * 2880;
	mem = malloc(memsize);
	if (!mem) {
		log_error("%s: out of memory for a %dx%d FITS map", path, w, h);
		goto end;
	}
	fits_create_memfile(&ff, &mem, &memsize, 2880 * 16, realloc, &status);
	fits_create_img(ff, FLOAT_IMG, 3, naxes, &status);
	fits_keys(ff, meta, w, h, &status);
	const double area = meta->pixel_scale * meta->pixel_scale;
	const float inv = area > 0 ? (float)(1.0 / area) : 1.0f;
	if (ang)
		fits_angular_scale(meta, w, h, scale);
	for (int c = 0; c < 3 && status == 0; c++) {
		/* FITS row 1 is the bottom: the image's last row */
		for (int j = 0; j < h; j++) {
			const int jr = h - 1 - j; /* the image's row */
			const float *src = rgb + (size_t)jr * (size_t)w * 3;
			for (int i = 0; i < w; i++) {
				const float s = ang ? scale[(size_t)jr * (size_t)w + (size_t)i] : inv;
				plane[(size_t)j * (size_t)w + (size_t)i] = src[3 * i + c] * s;
			}
		}
		long first[3] = {1, 1, c + 1};
		fits_write_pix(ff, TFLOAT, first, (LONGLONG)px, plane, &status);
	}
	/* the end of the one HDU, padded to its block: the file's length */
	fits_get_hduaddrll(ff, &headstart, &datastart, &dataend, &status);
	if (ff) {
		int cst = 0; /* closed whatever the status, so no handle is left */
		fits_close_file(ff, &cst);
		if (!status)
			status = cst;
	}
	if (status || dataend <= 0 || (size_t)dataend > memsize) {
		char msg[FLEN_STATUS] = "";
		fits_get_errstatus(status, msg);
		log_error("%s: building the FITS map in memory failed: %s", path,
			  status ? msg : "the file's length is not known");
		fits_clear_errmsg();
		goto end;
	}
	rc = out_save_bytes(path, mem, (size_t)dataend, "FITS map");
end:
	free(mem);
	free(plane);
	free(scale);
	return rc;
}
