/* fuzz_snapbin.c - libFuzzer harness for the GADGET binary snapshot reader
 * (sim/snap_gadget_bin.c behind sim_snap_open / sim_snap_read).
 *
 * The input is a snapshot file, handed over through an in-memory file
 * (memfd). It is opened as format 1 and as format 2 (one of the two is
 * refused at the first marker), never as AUTO: AUTO would hand a file with
 * an HDF5 signature to libhdf5, whose own parser is not what this harness
 * tests (fuzz_snaph5.c drives our HDF5 reader). Contract (sim/sim.h): open
 * returns 0 or NB_EINPUT; an open file's types read in one piece and in
 * chunks of 1..7 give 0 or NB_EINPUT, the same answer and the same values;
 * values read are finite, masses >= 0. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sim/sim.h"
#include "fuzz_util.h"

/* Read type t whole into (id, pos, vel, mass), then in chunks and compare. */
static void fuzz_type(struct sim_snap *s, int t, size_t step)
{
	const size_t n = (size_t)sim_snap_header(s)->npart[t];
	if (n == 0)
		return;
	uint64_t *id = malloc(n * sizeof *id), cid[8];
	double *pos = malloc(3 * n * sizeof *pos), *vel = malloc(3 * n * sizeof *vel);
	double *mass = malloc(n * sizeof *mass), cp[24], cv[24], cm[8], ch[8];
	if (!id || !pos || !vel || !mass)
		abort();
	int err = sim_snap_read(s, t, 0, n, id, pos, vel, mass, NULL);
	if (err != 0 && err != NB_EINPUT)
		fuzz_fail("sim_snap_read returned neither 0 nor NB_EINPUT", err);
	int err2 = 0;
	for (size_t f = 0; f < n && !err2; f += step) {
		size_t m = n - f < step ? n - f : step;
		err2 = sim_snap_read(s, t, f, m, cid, cp, cv, cm, ch);
		for (size_t i = 0; i < m && !err && !err2; i++) {
			if (cid[i] != id[f + i] || cm[i] != mass[f + i] || !(cm[i] >= 0) || !isfinite(cm[i]))
				fuzz_fail("chunked read differs from the whole read, or a bad mass", (int)i);
			for (int a = 0; a < 3; a++)
				if (cp[3 * i + a] != pos[3 * (f + i) + a] || cv[3 * i + a] != vel[3 * (f + i) + a] ||
				    !isfinite(cp[3 * i + a]) || !isfinite(cv[3 * i + a]))
					fuzz_fail("chunked read differs from the whole read, or not finite", a);
		}
	}
	if ((err == 0) != (err2 == 0))
		fuzz_fail("whole and chunked reads disagree on success", err2);
	free(id);
	free(pos);
	free(vel);
	free(mass);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	char path[64];
	int fd = fuzz_memfile("snap.dat", data, size, path, sizeof path);
	int opened = 0;
	for (int f = 0; f < 2; f++) {
		struct sim_snap *s = NULL;
		int err = sim_snap_open(path, sim_snap_format_find(f ? "gadget2" : "gadget1"), &s);
		if (err != 0 && err != NB_EINPUT)
			fuzz_fail("sim_snap_open returned neither 0 nor NB_EINPUT", err);
		if (err != 0) {
			if (s)
				fuzz_fail("a refused file left a handle", err);
			continue;
		}
		opened++;
		const struct sim_snap_header *h = sim_snap_header(s);
		if (h->num_files < 1)
			fuzz_fail("num_files < 1", h->num_files);
		for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
			if (h->npart[t] * 12 > (uint64_t)size)
				fuzz_fail("more particles than the file has room for", t);
			fuzz_type(s, t, 1 + (size ? data[size - 1] % 7 : 0));
		}
		sim_snap_close(&s);
	}
	if (opened > 1)
		fuzz_fail("one file opened as both format 1 and format 2", opened);
	close(fd);
	return 0;
}
