/*
 * tb_rma: one-sided communication across the ranks, every window element checked:
 *   - fence epochs: MPI_Put of a pattern into the next rank's window, MPI_Get from the previous
 *     rank's, MPI_Accumulate (MPI_SUM) of every rank into rank 0;
 *   - passive target: MPI_Win_lock (exclusive) / MPI_Put / MPI_Win_unlock into the next rank,
 *     MPI_Win_lock_all with MPI_Accumulate and MPI_Win_flush, MPI_Get_accumulate (fetch-add)
 *     of a counter on rank 0, whose final value proves each add happened once.
 *   - window churn: TB_CHURN times a window created, one exclusive-lock put of a multi-fragment
 *     region into the next rank, unlock, check, and the window freed at once. Open MPI 5.0's
 *     osc/rdma frees its active-message module with the window, so a transport that reported
 *     a put's send completion after the answer to that put crashed here (a later callback on
 *     freed memory).
 * Window sizes cover one element and a multi-fragment region (TB_WIN ints).
 */
#include "tb_common.h"

#define TB_WIN   20000
#define TB_CHURN 40

static int tb_rma_val(int r, int i)
{
    return r * 100003 + i;
}

static void tb_rma_fence(MPI_Win win, int *base)
{
    int next = (tb_rank + 1) % tb_size, prev = (tb_rank + tb_size - 1) % tb_size;
    int *src = tb_malloc(TB_WIN * sizeof(int)), *got = tb_malloc(TB_WIN * sizeof(int));
    int bad[3] = {0}, one = 1;

    for (int i = 0; i < TB_WIN; i++) {
        src[i] = tb_rma_val(tb_rank, i);
        base[i] = -1;
    }
    base[TB_WIN] = 0; /* the accumulate counter */
    MPI_Win_fence(0, win);
    MPI_Put(src, TB_WIN, MPI_INT, next, 0, TB_WIN, MPI_INT, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, TB_WIN, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < TB_WIN; i++) {
        bad[0] += base[i] != tb_rma_val(prev, i);
    }
    MPI_Win_fence(0, win);
    MPI_Get(got, TB_WIN, MPI_INT, prev, 0, TB_WIN, MPI_INT, win);
    MPI_Win_fence(0, win);
    for (int i = 0; i < TB_WIN; i++) { /* prev's window holds what prev's prev put */
        bad[1] += got[i] != tb_rma_val((prev + tb_size - 1) % tb_size, i);
    }
    bad[2] = (0 == tb_rank) ? base[TB_WIN] != tb_size : 0;
    tb_check(0 == bad[0], "fence put: %d of %d ints wrong", bad[0], TB_WIN);
    tb_check(0 == bad[1], "fence get: %d of %d ints wrong", bad[1], TB_WIN);
    tb_check(0 == bad[2], "fence accumulate: counter %d, expected %d", base[TB_WIN], tb_size);
    free(src);
    free(got);
}

static void tb_rma_passive(MPI_Win win, int *base)
{
    int next = (tb_rank + 1) % tb_size, prev = (tb_rank + tb_size - 1) % tb_size;
    int *src = tb_malloc(TB_WIN * sizeof(int)), bad = 0, one = 1, before = -1;

    for (int i = 0; i < TB_WIN; i++) {
        src[i] = tb_rma_val(tb_rank + 7, i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (0 == tb_rank) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        base[TB_WIN] = 0;
        base[TB_WIN + 1] = 0;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
    MPI_Put(src, TB_WIN, MPI_INT, next, 0, TB_WIN, MPI_INT, win);
    MPI_Win_unlock(next, win);
    MPI_Win_lock_all(0, win);
    MPI_Accumulate(&one, 1, MPI_INT, 0, TB_WIN, 1, MPI_INT, MPI_SUM, win);
    MPI_Win_flush(0, win);
    MPI_Get_accumulate(&one, 1, MPI_INT, &before, 1, MPI_INT, 0, TB_WIN + 1, 1, MPI_INT, MPI_SUM,
                       win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, tb_rank, 0, win);
    for (int i = 0; i < TB_WIN; i++) {
        bad += base[i] != tb_rma_val(prev + 7, i);
    }
    tb_check(0 == bad, "lock/put/unlock: %d of %d ints wrong", bad, TB_WIN);
    if (0 == tb_rank) {
        tb_check(base[TB_WIN] == tb_size, "lock_all accumulate: %d, expected %d", base[TB_WIN],
                 tb_size);
        tb_check(base[TB_WIN + 1] == tb_size, "fetch-add counter: %d, expected %d",
                 base[TB_WIN + 1], tb_size);
    }
    MPI_Win_unlock(tb_rank, win);
    tb_check(0 <= before && before < tb_size, "fetch-add returned %d", before);
    free(src);
}

static void tb_rma_churn(void)
{
    int next = (tb_rank + 1) % tb_size, prev = (tb_rank + tb_size - 1) % tb_size;
    int *src = tb_malloc(TB_WIN * sizeof(int)), *base, bad = 0;
    MPI_Win win;

    MPI_Alloc_mem(TB_WIN * sizeof(int), MPI_INFO_NULL, &base);
    for (int round = 0; round < TB_CHURN; round++) {
        for (int i = 0; i < TB_WIN; i++) {
            src[i] = tb_rma_val(tb_rank + round, i);
            base[i] = -1;
        }
        MPI_Win_create(base, TB_WIN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                       &win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, next, 0, win);
        MPI_Put(src, TB_WIN, MPI_INT, next, 0, TB_WIN, MPI_INT, win);
        MPI_Win_unlock(next, win);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < TB_WIN; i++) {
            bad += base[i] != tb_rma_val(prev + round, i);
        }
        MPI_Win_free(&win);
    }
    tb_check(0 == bad, "window churn: %d ints wrong over %d windows", bad, TB_CHURN);
    MPI_Free_mem(base);
    free(src);
}

int main(int argc, char **argv)
{
    MPI_Win win;
    int *base;

    tb_init(&argc, &argv, "rma");
    MPI_Alloc_mem((TB_WIN + 2) * sizeof(int), MPI_INFO_NULL, &base);
    MPI_Win_create(base, (TB_WIN + 2) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                   &win);
    tb_rma_fence(win, base);
    tb_rma_passive(win, base);
    MPI_Win_free(&win);
    MPI_Free_mem(base);
    tb_rma_churn();
    return tb_finish();
}
