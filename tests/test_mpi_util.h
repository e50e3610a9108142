/* test_mpi_util.h - the one gate of the MPI test cases (tests/test_dist*.c):
 * they launch the MPI build of the program (NB_MPI_BIN, which make test
 * builds when OpenMPI's headers are installed) under mpirun, and SKIP
 * without either. */
#ifndef NB_TEST_MPI_UTIL_H
#define NB_TEST_MPI_UTIL_H

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

/* 1 when the MPI cases can run: NB_MPI_BIN names an executable (its real
 * path into resolved, PATH_MAX bytes, unless NULL) and mpirun is on PATH;
 * else 0. */
static inline int nb_mpi_usable(char *resolved)
{
	const char *m = getenv("NB_MPI_BIN");
	if (!m || !*m || access(m, X_OK) != 0 || (resolved && !realpath(m, resolved)))
		return 0;
	return system("command -v mpirun >/dev/null 2>&1") == 0;
}

#endif
