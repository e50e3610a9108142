/* test_gpu_snapshot.c - snapshots, restart and FITS maps on the GPU
 * (--backend cuda), through the program; SKIP without a usable GPU.
 *   - restart: 8 frames in one GPU run, and 5 frames plus a restart from
 *     the snapshot of frame 4 for frames 5..7, agree per body within the
 *     tolerance docs/snapshots.md states: |dx| <= 1e-4 + 1e-5 |x| kpc,
 *     |dv| <= 1e-2 + 1e-5 |v| km/s (the snapshot holds the device's float
 *     state exactly; the accelerations are recomputed on the device);
 *   - FITS: the GPU map (one HDR download per frame) integrates to the
 *     mass in view, and each plane's sum agrees with the CPU map's within
 *     1e-3.
 *
 *   make CUDA_ARCH=sm_90 build/tests/test_gpu_snapshot
 *   NB_BIN=build/nbody-render build/tests/test_gpu_snapshot */
#include <fitsio.h>

#include "../sim/sim.h"
#include "check_main.h"
#include "twin.h"
#include "test_snapshot_util.h"

#define NB_MAXB 1024

START_TEST(gpu_restart_within_tolerance)
{
	g_backend = "cuda";
	ck_assert_int_eq(run("output.final_state=full.csv", NULL), 0);
	ck_assert_int_eq(run("output.frames=5", "output.final_state=k.csv",
			     "output.snapshots.dir=snaps", "output.snapshots.every=4", NULL),
			 0);
	ck_assert_int_eq(run("output.final_state=r.csv", "--restart", "snaps/snap_001.hdf5", NULL), 0);
	static double a[6 * NB_MAXB], b[6 * NB_MAXB];
	int n = csv_all("full.csv", a, NB_MAXB);
	ck_assert_int_eq(csv_all("r.csv", b, NB_MAXB), n);
	double dx = 0, dv = 0;
	int same = 1;
	for (int i = 0; i < n; i++)
		for (int d = 0; d < 6; d++) {
			double e = fabs(a[6 * i + d] - b[6 * i + d]);
			same &= e == 0;
			if (d < 3) {
				dx = fmax(dx, e);
				ck_assert_close(b[6 * i + d], a[6 * i + d], 1e-4, 1e-5);
			} else {
				dv = fmax(dv, e);
				ck_assert_close(b[6 * i + d], a[6 * i + d], 1e-2, 1e-5);
			}
		}
	printf("GPU restart: max |dx| %.3g kpc, max |dv| %.3g km/s over %d bodies%s\n", dx, dv, n,
	       same ? " (identical CSVs)" : "");
}
END_TEST

/* The sum of each plane x CDELT1 x CDELT2 of g_dir/NAME. */
static void fits_sums(const char *name, double s[3])
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", g_dir, name);
	fitsfile *f = NULL;
	int st = 0, nd = 0;
	long ax[3] = {0, 0, 0};
	double c1 = 0, c2 = 0;
	fits_open_file(&f, path, READONLY, &st);
	fits_get_img_dim(f, &nd, &st);
	fits_get_img_size(f, 3, ax, &st);
	fits_read_key(f, TDOUBLE, "CDELT1", &c1, NULL, &st);
	fits_read_key(f, TDOUBLE, "CDELT2", &c2, NULL, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(nd, 3);
	size_t px = (size_t)ax[0] * (size_t)ax[1];
	float *p = malloc(px * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (int c = 0; c < 3; c++) {
		long first[3] = {1, 1, c + 1};
		int any = 0;
		fits_read_pix(f, TFLOAT, first, (LONGLONG)px, NULL, p, &any, &st);
		ck_assert_int_eq(st, 0);
		s[c] = 0;
		for (size_t i = 0; i < px; i++)
			s[c] += p[i];
		s[c] *= c1 * c2;
	}
	free(p);
	fits_close_file(f, &st);
}

/* The FITS case: one scene, its map of frame 2 from each backend. */
struct fits_fix {
	double cpu[3], gpu[3]; /* each plane's sum x pixel area (M_sun) */
};

static void fits_setup(struct twin_run *r)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/fits.yaml", g_dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("units: galactic\n"
	      "simulation: {solver: direct, softening: 0.1, dt: 0.5, steps_per_frame: 3}\n"
	      "bodies: [{name: c, model: plummer, count: 300, mass: 1e9, scale: 1, rmax: 5}]\n"
	      "camera: {fov: 45, keys: [{frame: 0, position: [0, -200, 0], target: [0, 0, 0]}]}\n"
	      "render: {width: 64, height: 48, mode: density, glow: 0, psf_wing: 0, diffuse: 0}\n"
	      "output: {frames: 3}\n",
	      f);
	fclose(f);
	g_file = "fits.yaml";
	r->fix = calloc(1, sizeof(struct fits_fix));
	ck_assert_ptr_nonnull(r->fix);
	snprintf(r->what, sizeof r->what, "FITS plane sums x pixel area");
}

static void fits_teardown(struct twin_run *r)
{
	free(r->fix);
}

static void fits_cpu(struct twin_run *r)
{
	struct fits_fix *f = r->fix;
	g_backend = "cpu";
	ck_assert_int_eq(run("output.fits_dir=cpu", NULL), 0);
	fits_sums("cpu/frame_00002.fits", f->cpu);
	twin_out(r, 0, "planes");
	r->out[0].ref = twin_f64(f->cpu, 3, 0, 3);
}

static void fits_gpu(struct twin_run *r)
{
	struct fits_fix *f = r->fix;
	g_backend = "cuda";
	ck_assert_int_eq(run("output.fits_dir=gpu", "output.video=v.mp4", NULL), 0);
	fits_sums("gpu/frame_00002.fits", f->gpu);
	twin_out(r, 0, "planes");
	r->out[0].got = twin_f64(f->gpu, 3, 0, 3);
}

/* Each plane integrates to the mass in view, and agrees with the CPU's,
 * within 1e-3. */
static void fits_compare(struct twin_run *r)
{
	const struct fits_fix *f = r->fix;
	const double *g = f->gpu, *c = f->cpu;
	printf("FITS plane sums x pixel area: GPU %.7g %.7g %.7g, CPU %.7g %.7g %.7g (M_sun)\n", g[0],
	       g[1], g[2], c[0], c[1], c[2]);
	for (int k = 0; k < 3; k++)
		ck_assert_close(g[k], 1e9, 0, 1e-3);
	twin_compare_all(r);
}

static const struct twin_row fits_row = {
	"FITS", fits_setup, fits_cpu, fits_gpu, fits_compare, fits_teardown, {0, 0, 1e-3, 0, 0}, 1};
TWIN_TEST(gpu_fits_map_matches_cpu, &fits_row, twin_one)

static Suite *make_suite(void)
{
	Suite *s = suite_create("gpu_snapshot");
	TCase *tc = tcase_create("gpu");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, gpu_restart_within_tolerance);
	tcase_add_test(tc, gpu_fits_map_matches_cpu);
	NB_GPU_TCASE(s, tc);
	return s;
}

NB_CHECK_MAIN(make_suite)
