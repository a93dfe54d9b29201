/* mpi_helper [OUT_DIR]: an MPI program with known, rank-dependent work, for ARUM's tests under
 * mpirun and srun. Rank r spins for (r + 1) * 50 ms of CPU time, so the last rank is the slowest,
 * then all ranks meet in an MPI_Allreduce (proving they are one job, not singletons). With
 * OUT_DIR, each rank writes OUT_DIR/mpi-rank-R.txt: "RANK SIZE SUM_OF_RANKS". */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    int rank, size, sum = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    volatile unsigned long x = 1;
    double until = cpu_seconds() + (rank + 1) * 0.05;
    while (cpu_seconds() < until)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005UL + 1;

    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (argc > 1) {
        char path[4096];
        snprintf(path, sizeof path, "%s/mpi-rank-%d.txt", argv[1], rank);
        FILE *f = fopen(path, "w");
        if (!f) {
            perror(path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(f, "%d %d %d\n", rank, size, sum);
        fclose(f);
    }
    MPI_Finalize();
    return 0;
}
