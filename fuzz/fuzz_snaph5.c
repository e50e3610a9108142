/* fuzz_snaph5.c - libFuzzer harness for the HDF5 snapshot reader
 * (sim/snap_hdf5.c behind sim_snap_open / sim_snap_read).
 *
 * Structured: the input bytes are a recipe, and libhdf5 writes the file
 * they describe (which groups exist; each Header, Parameters, Units and
 * Cosmology attribute absent, scalar, a list of 0..7 values, integers, a
 * string or 2-D; each PartTypeN dataset absent or of 0..7 rows, of 1, 2
 * or 3 columns, float, int or uint64, with NaN, infinities, huge and
 * negative values; SWIFT exponents or not). So every input is a valid HDF5
 * file whose layout and values are hostile, which is what our reader must
 * judge. Raw bytes are not given to libhdf5: its own parser of damaged
 * files is not this project's code (the tests cut real files in pieces;
 * tests/test_snapshot_read.c). The file is written to $TMPDIR (default /tmp),
 * one per process.
 * Contract (sim/sim.h): open returns 0 or NB_EINPUT; an open file reads
 * each type whole with 0 or NB_EINPUT; values read are finite, masses >= 0. */
#include <hdf5.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sim/sim.h"
#include "fuzz_h5.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_quiet_stderr();
	static char path[512];
	if (!path[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(path, sizeof path, "%s/nb-fuzz-snaph5-%d.hdf5", tmp && *tmp ? tmp : "/tmp",
			 (int)getpid());
		H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	}
	if (write_recipe(path, data, size))
		abort();
	struct sim_snap *s = NULL;
	int err = sim_snap_open(path, sim_snap_format_find("gadget-hdf5"), &s);
	if (err != 0 && err != NB_EINPUT)
		fuzz_fail("sim_snap_open returned neither 0 nor NB_EINPUT", err);
	if (err == 0) {
		const struct sim_snap_header *h = sim_snap_header(s);
		for (int t = 0; t < SIM_SNAP_NTYPES; t++) {
			size_t n = (size_t)h->npart[t];
			if (n > 7)
				fuzz_fail("more particles than any dataset has rows", t);
			uint64_t id[8];
			double p[24], v[24], m[8], hs[8];
			int e = sim_snap_read(s, t, 0, n, id, p, v, m, hs);
			if (e != 0 && e != NB_EINPUT)
				fuzz_fail("sim_snap_read returned neither 0 nor NB_EINPUT", e);
			for (size_t i = 0; i < n && e == 0; i++) {
				if (!isfinite(m[i]) || m[i] < 0)
					fuzz_fail("a mass read is not finite and >= 0", (int)i);
				for (int a = 0; a < 3; a++)
					if (!isfinite(p[3 * i + a]) || !isfinite(v[3 * i + a]))
						fuzz_fail("a value read is not finite", (int)i);
			}
		}
		sim_snap_close(&s);
	}
	unlink(path);
	return 0;
}
