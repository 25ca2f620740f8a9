/*
 * tb_thread: MPI_THREAD_MULTIPLE. Each rank runs TB_THREADS threads; thread t of rank r ping-pongs
 * with thread t of rank r xor 1 (tag t) over sizes from 1 B to 256 KiB, all threads at once, so
 * that sends, receives and progress of several threads meet in the transport. Every byte is
 * checked. Fails at once when the library does not provide MPI_THREAD_MULTIPLE.
 */
#include "tb_common.h"

#include <pthread.h>

#define TB_THREADS 4
#define TB_ROUNDS  40

static void *tb_thread_main(void *arg)
{
    int t = (int) (intptr_t) arg, peer = tb_rank ^ 1, initiator = 0 == (tb_rank & 1);
    unsigned char *buf = tb_malloc(256 * 1024 + 8); /* 2^18 + the thread index */

    for (int k = 0; k < TB_ROUNDS; k++) {
        size_t len = ((size_t) 1 << (k % 19)) + (size_t) t;
        for (int step = 0; step < 2; step++) {
            if ((0 == step) == initiator) {
                tb_fill(buf, len, ((uint64_t) tb_rank << 32) ^ ((uint64_t) t << 16) ^ (uint64_t) k);
                MPI_Send(buf, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD);
            } else {
                char what[64];
                memset(buf, 0, len);
                MPI_Recv(buf, (int) len, MPI_BYTE, peer, t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                snprintf(what, sizeof(what), "thread %d round %d", t, k);
                tb_verify(buf, len, ((uint64_t) peer << 32) ^ ((uint64_t) t << 16) ^ (uint64_t) k,
                          what);
            }
        }
    }
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t th[TB_THREADS];
    int provided = 0;

    tb_name = "thread";
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &tb_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &tb_size);
    tb_check(MPI_THREAD_MULTIPLE == provided, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    if ((tb_rank ^ 1) < tb_size && MPI_THREAD_MULTIPLE == provided) {
        for (int t = 0; t < TB_THREADS; t++) {
            pthread_create(&th[t], NULL, tb_thread_main, (void *) (intptr_t) t);
        }
        for (int t = 0; t < TB_THREADS; t++) {
            pthread_join(th[t], NULL);
        }
    }
    return tb_finish();
}
