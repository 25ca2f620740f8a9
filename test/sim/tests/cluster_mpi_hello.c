/*
 * cluster_mpi_hello: the MPI program of cluster_mpirun.sh. Checks that mpirun under tbcluster
 * runs ranks on distinct simulated hosts and that they can communicate.
 *
 * Every rank sends its processor name to rank 0, which prints one "rank R/N on NAME" line per
 * rank and "distinct hosts: D". Then all ranks allreduce (rank + 1); rank 0 prints
 * "allreduce sum=S expected=E". Exit status 1 if the sum is wrong, else 0.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Number of distinct names among the n names, each MPI_MAX_PROCESSOR_NAME bytes apart. */
static int count_distinct(const char *names, int n)
{
    int distinct = 0;

    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) {
            seen =
                (0
                 == strcmp(names + i * MPI_MAX_PROCESSOR_NAME, names + j * MPI_MAX_PROCESSOR_NAME));
        }
        if (!seen) {
            distinct++;
        }
    }
    return distinct;
}

/* Gathers every rank's processor name on rank 0, which prints them. */
static void report_names(int rank, int size)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    char *names = NULL;
    int len = 0;

    MPI_Get_processor_name(mine, &len);
    if (0 == rank) {
        names = malloc((size_t) size * MPI_MAX_PROCESSOR_NAME);
        if (NULL == names) {
            fprintf(stderr, "cluster_mpi_hello: no memory for %d processor names\n", size);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Gather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
               MPI_COMM_WORLD);
    if (0 == rank) {
        for (int i = 0; i < size; i++) {
            printf("rank %d/%d on %s\n", i, size, names + i * MPI_MAX_PROCESSOR_NAME);
        }
        printf("distinct hosts: %d\n", count_distinct(names, size));
        free(names);
    }
}

int main(int argc, char **argv)
{
    int rank = 0;
    int size = 0;
    long mine = 0;
    long sum = 0;
    long expected = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    report_names(rank, size);
    mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    expected = (long) size * (size + 1) / 2;
    if (0 == rank) {
        printf("allreduce sum=%ld expected=%ld\n", sum, expected);
    }
    MPI_Finalize();
    return sum == expected ? 0 : 1;
}
