/*
 * rmawriter writes, with Debian's libotf2, a 2-rank OTF2 archive of MPI
 * one-sided and MPI-IO calls recorded as Score-P 8 records them (its
 * SCOREP_Mpi_Rma.c and SCOREP_Mpi_Io.c wrappers): Kairos' tests read it.
 *
 *   rmawriter DIR
 *
 * Each rank: MPI_Init; MPI_Win_allocate; MPI_Win_lock_all; MPI_Put of 8 KiB
 * to the other and MPI_Win_flush; MPI_Rget of 1 KiB and MPI_Wait;
 * MPI_Fetch_and_op and MPI_Win_flush_all; MPI_Win_unlock_all; MPI_Win_lock
 * (exclusive) of the other, MPI_Accumulate, MPI_Win_unlock;
 * MPI_Win_fence, MPI_Get, MPI_Win_fence; rank 0 MPI_Win_start of {1},
 * MPI_Put, MPI_Win_complete, rank 1 MPI_Win_post of {0}, MPI_Win_wait;
 * MPI_Win_free; MPI_File_open; MPI_File_write_all of 4 KiB;
 * MPI_File_iread of 2 KiB and MPI_Wait; MPI_File_set_view (no record);
 * MPI_File_close; MPI_Finalize. Every call takes 1 us, 1 us apart.
 *
 * Build: cc -O2 rmawriter.c -lotf2
 */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>

static OTF2_FlushType pre_flush(void* u, OTF2_FileType ft, OTF2_LocationRef l, void* c, bool final)
{
    (void)u; (void)ft; (void)l; (void)c; (void)final;
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void* u, OTF2_FileType ft, OTF2_LocationRef l)
{
    (void)u; (void)ft; (void)l;
    return 0;
}

static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush };

static void check(OTF2_ErrorCode s, const char* what)
{
    if (s != OTF2_SUCCESS) {
        fprintf(stderr, "rmawriter: %s: %s\n", what, OTF2_Error_GetName(s));
        exit(1);
    }
}

enum { R_INIT, R_FINALIZE, R_WIN_ALLOCATE, R_WIN_LOCK_ALL, R_PUT, R_WIN_FLUSH, R_RGET, R_WAIT, R_FETCH_AND_OP,
       R_WIN_FLUSH_ALL, R_WIN_UNLOCK_ALL, R_WIN_LOCK, R_ACCUMULATE, R_WIN_UNLOCK, R_WIN_FENCE, R_GET, R_WIN_START,
       R_WIN_COMPLETE, R_WIN_POST, R_WIN_WAIT, R_WIN_FREE, R_FILE_OPEN, R_FILE_WRITE_ALL, R_FILE_IREAD,
       R_FILE_SET_VIEW, R_FILE_CLOSE, NREG };
static const char* names[NREG] = { "MPI_Init", "MPI_Finalize", "MPI_Win_allocate", "MPI_Win_lock_all", "MPI_Put",
    "MPI_Win_flush", "MPI_Rget", "MPI_Wait", "MPI_Fetch_and_op", "MPI_Win_flush_all", "MPI_Win_unlock_all",
    "MPI_Win_lock", "MPI_Accumulate", "MPI_Win_unlock", "MPI_Win_fence", "MPI_Get", "MPI_Win_start",
    "MPI_Win_complete", "MPI_Win_post", "MPI_Win_wait", "MPI_Win_free", "MPI_File_open", "MPI_File_write_all",
    "MPI_File_iread", "MPI_File_set_view", "MPI_File_close" };
enum { S_EMPTY = NREG, S_WORLD, S_RANK, S_THREAD, S_MACHINE, S_WIN, S_MPIIO, S_MPIIO_NAME, S_FILE, NSTR };

/* Groups: 0 COMM_LOCATIONS, 1 the world's COMM_GROUP, 2 {0}, 3 {1}. */
static void write_defs(OTF2_Archive* a)
{
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 1000000, OTF2_UNDEFINED_TIMESTAMP), "clock");
    for (int i = 0; i < NREG; i++)
        check(OTF2_GlobalDefWriter_WriteString(g, i, names[i]), "string");
    const char* more[] = { "", "MPI_COMM_WORLD", "MPI Rank", "Master thread", "machine", "MPI_Win_allocate window",
                           "MPI-IO", "MPI I/O", "/tmp/out.dat" };
    for (int i = S_EMPTY; i < NSTR; i++)
        check(OTF2_GlobalDefWriter_WriteString(g, i, more[i - S_EMPTY]), "string");
    for (int r = 0; r < NREG; r++)
        check(OTF2_GlobalDefWriter_WriteRegion(g, r, r, r, S_EMPTY, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI,
                                               OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0), "region");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, S_MACHINE, S_MACHINE, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "stn");
    uint64_t members[2] = { 0, 1 }, zero[1] = { 0 }, one[1] = { 1 };
    for (int r = 0; r < 2; r++) {
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, S_RANK, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                      OTF2_UNDEFINED_LOCATION_GROUP), "location group");
        check(OTF2_GlobalDefWriter_WriteLocation(g, r, S_THREAD, OTF2_LOCATION_TYPE_CPU_THREAD, 0, r), "location");
    }
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, S_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 2, members), "comm locations");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 2, members), "world group");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 2, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 1, zero), "group {0}");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 3, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 1, one), "group {1}");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, S_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "world");
    check(OTF2_GlobalDefWriter_WriteRmaWin(g, 0, S_WIN, 0, OTF2_RMA_WIN_FLAG_NONE), "window");
    check(OTF2_GlobalDefWriter_WriteIoParadigm(g, 0, S_MPIIO, S_MPIIO_NAME, OTF2_IO_PARADIGM_CLASS_PARALLEL,
                                               OTF2_IO_PARADIGM_FLAG_NONE, 0, NULL, NULL, NULL), "io paradigm");
    check(OTF2_GlobalDefWriter_WriteIoRegularFile(g, 0, S_FILE, 0), "io file");
    check(OTF2_GlobalDefWriter_WriteIoHandle(g, 0, S_FILE, 0, 0, OTF2_IO_HANDLE_FLAG_NONE, 0, OTF2_UNDEFINED_IO_HANDLE),
          "io handle");
    check(OTF2_Archive_CloseGlobalDefWriter(a, g), "close global defs");
}

static OTF2_EvtWriter* w;
static OTF2_TimeStamp now;

/* enter and leave bracket a call of 1 us, 1 us after the previous one. */
static OTF2_TimeStamp enter(int region)
{
    now += 1000;
    check(OTF2_EvtWriter_Enter(w, NULL, now, region), "enter");
    return now;
}

static void leave(int region)
{
    now += 1000;
    check(OTF2_EvtWriter_Leave(w, NULL, now, region), "leave");
}

static void complete(uint64_t id, int remote)
{
    check(OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, NULL, now, 0, id), "complete");
    if (remote)
        check(OTF2_EvtWriter_RmaOpCompleteRemote(w, NULL, now, 0, id), "complete remote");
}

static void write_rank(int r)
{
    int peer = 1 - r;
    uint64_t id = 100 * r;
    OTF2_TimeStamp t;
    now = 0;
    enter(R_INIT), leave(R_INIT);

    t = enter(R_WIN_ALLOCATE);
    check(OTF2_EvtWriter_RmaCollectiveBegin(w, NULL, t), "coll begin");
    check(OTF2_EvtWriter_RmaWinCreate(w, NULL, t, 0), "win create");
    check(OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, t, OTF2_COLLECTIVE_OP_CREATE_HANDLE_AND_ALLOCATE,
                                          OTF2_RMA_SYNC_LEVEL_PROCESS, 0, OTF2_UNDEFINED_UINT32, 0, 0), "coll end");
    leave(R_WIN_ALLOCATE);

    t = enter(R_WIN_LOCK_ALL);
    check(OTF2_EvtWriter_RmaRequestLock(w, NULL, t, 0, OTF2_UNDEFINED_UINT32, 0, OTF2_LOCK_SHARED), "lock all");
    leave(R_WIN_LOCK_ALL);
    t = enter(R_PUT);
    check(OTF2_EvtWriter_RmaPut(w, NULL, t, 0, peer, 8192, ++id), "put");
    leave(R_PUT);
    enter(R_WIN_FLUSH), complete(id, 1), leave(R_WIN_FLUSH);
    t = enter(R_RGET);
    check(OTF2_EvtWriter_RmaGet(w, NULL, t, 0, peer, 1024, ++id), "rget");
    leave(R_RGET);
    enter(R_WAIT), complete(id, 1), leave(R_WAIT);
    t = enter(R_FETCH_AND_OP);
    check(OTF2_EvtWriter_RmaAtomic(w, NULL, t, 0, peer, OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE, 8, 8, ++id), "fop");
    leave(R_FETCH_AND_OP);
    enter(R_WIN_FLUSH_ALL), complete(id, 1), leave(R_WIN_FLUSH_ALL);
    enter(R_WIN_UNLOCK_ALL);
    check(OTF2_EvtWriter_RmaReleaseLock(w, NULL, now, 0, OTF2_UNDEFINED_UINT32, 0), "unlock all");
    leave(R_WIN_UNLOCK_ALL);

    t = enter(R_WIN_LOCK);
    check(OTF2_EvtWriter_RmaRequestLock(w, NULL, t, 0, peer, 0, OTF2_LOCK_EXCLUSIVE), "lock");
    leave(R_WIN_LOCK);
    t = enter(R_ACCUMULATE);
    check(OTF2_EvtWriter_RmaAtomic(w, NULL, t, 0, peer, OTF2_RMA_ATOMIC_TYPE_ACCUMULATE, 4096, 0, ++id), "acc");
    leave(R_ACCUMULATE);
    enter(R_WIN_UNLOCK), complete(id, 1);
    check(OTF2_EvtWriter_RmaReleaseLock(w, NULL, now, 0, peer, 0), "unlock");
    leave(R_WIN_UNLOCK);

    for (int k = 0; k < 2; k++) {
        t = enter(R_WIN_FENCE);
        check(OTF2_EvtWriter_RmaCollectiveBegin(w, NULL, t), "fence begin");
        if (k == 1)
            complete(id, 0);
        check(OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, t, OTF2_COLLECTIVE_OP_BARRIER,
                                              OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, 0,
                                              OTF2_UNDEFINED_UINT32, 0, 0), "fence end");
        leave(R_WIN_FENCE);
        if (k == 0) {
            t = enter(R_GET);
            check(OTF2_EvtWriter_RmaGet(w, NULL, t, 0, peer, 2048, ++id), "get");
            leave(R_GET);
        }
    }

    if (r == 0) {
        enter(R_WIN_START);
        check(OTF2_EvtWriter_RmaGroupSync(w, NULL, now, OTF2_RMA_SYNC_LEVEL_PROCESS, 0, 3), "start");
        leave(R_WIN_START);
        t = enter(R_PUT);
        check(OTF2_EvtWriter_RmaPut(w, NULL, t, 0, 1, 512, ++id), "put");
        leave(R_PUT);
        enter(R_WIN_COMPLETE), complete(id, 0);
        check(OTF2_EvtWriter_RmaGroupSync(w, NULL, now, OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, 0, 3),
              "complete");
        leave(R_WIN_COMPLETE);
    } else {
        enter(R_WIN_POST);
        check(OTF2_EvtWriter_RmaGroupSync(w, NULL, now, OTF2_RMA_SYNC_LEVEL_PROCESS, 0, 2), "post");
        leave(R_WIN_POST);
        enter(R_WIN_WAIT);
        check(OTF2_EvtWriter_RmaGroupSync(w, NULL, now, OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, 0, 2),
              "wait");
        leave(R_WIN_WAIT);
    }

    t = enter(R_WIN_FREE);
    check(OTF2_EvtWriter_RmaCollectiveBegin(w, NULL, t), "free begin");
    check(OTF2_EvtWriter_RmaWinDestroy(w, NULL, now, 0), "win destroy");
    check(OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, now, OTF2_COLLECTIVE_OP_DESTROY_HANDLE_AND_DEALLOCATE,
                                          OTF2_RMA_SYNC_LEVEL_PROCESS, 0, OTF2_UNDEFINED_UINT32, 0, 0), "free end");
    leave(R_WIN_FREE);

    enter(R_FILE_OPEN);
    check(OTF2_EvtWriter_IoCreateHandle(w, NULL, now, 0, OTF2_IO_ACCESS_MODE_READ_WRITE, OTF2_IO_CREATION_FLAG_CREATE,
                                        OTF2_IO_STATUS_FLAG_NONE), "open");
    leave(R_FILE_OPEN);
    t = enter(R_FILE_WRITE_ALL);
    check(OTF2_EvtWriter_IoOperationBegin(w, NULL, t, 0, OTF2_IO_OPERATION_MODE_WRITE, OTF2_IO_OPERATION_FLAG_COLLECTIVE,
                                          4096, ++id), "write begin");
    check(OTF2_EvtWriter_IoOperationComplete(w, NULL, t + 500, 0, 4096, id), "write complete");
    leave(R_FILE_WRITE_ALL);
    t = enter(R_FILE_IREAD);
    check(OTF2_EvtWriter_IoOperationBegin(w, NULL, t, 0, OTF2_IO_OPERATION_MODE_READ,
                                          OTF2_IO_OPERATION_FLAG_NON_BLOCKING, 2048, ++id), "iread begin");
    check(OTF2_EvtWriter_IoOperationIssued(w, NULL, t, 0, id), "iread issued");
    leave(R_FILE_IREAD);
    enter(R_WAIT);
    check(OTF2_EvtWriter_IoOperationComplete(w, NULL, now, 0, 2048, id), "iread complete");
    leave(R_WAIT);
    enter(R_FILE_SET_VIEW), leave(R_FILE_SET_VIEW);
    enter(R_FILE_CLOSE);
    check(OTF2_EvtWriter_IoDestroyHandle(w, NULL, now, 0), "close");
    leave(R_FILE_CLOSE);
    enter(R_FINALIZE), leave(R_FINALIZE);
}

int main(int argc, char** argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: rmawriter DIR\n");
        return 2;
    }
    OTF2_Archive* a = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 1 << 20, 4 << 20,
                                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!a) {
        fprintf(stderr, "rmawriter: cannot create %s\n", argv[1]);
        return 1;
    }
    check(OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "collective callbacks");
    check(OTF2_Archive_SetCreator(a, "Score-P 8.4"), "creator");
    check(OTF2_Archive_OpenEvtFiles(a), "open event files");
    for (int r = 0; r < 2; r++) {
        w = OTF2_Archive_GetEvtWriter(a, r);
        write_rank(r);
        check(OTF2_Archive_CloseEvtWriter(a, w), "close event writer");
    }
    check(OTF2_Archive_CloseEvtFiles(a), "close event files");
    write_defs(a);
    check(OTF2_Archive_Close(a), "close archive");
    return 0;
}
