/*
 * otf2writer writes OTF2 archives with Debian's libotf2 for Kairos' tests
 * and benchmarks.
 *
 *   otf2writer DIR features   a 3-rank MPI archive exercising what a reader
 *                             must get right: records over 255 bytes,
 *                             several chunks per location, attribute lists,
 *                             undefined (0xFF) fields, clock offsets with
 *                             drift, mapping tables, equal timestamps on
 *                             different locations, metrics, parameters.
 *   otf2writer DIR bench N L  L ranks of N events each (Enter/Leave around
 *                             MPI_Send/MPI_Recv pairs), for benchmarks.
 *   otf2writer DIR nbc        2 ranks of non-blocking collectives.
 *   otf2writer DIR pending    2 ranks that start an isend and an irecv in
 *                             one call (a Startall), complete both in
 *                             another, then leave a receive pending,
 *                             tested once and never completed, wait
 *                             on a null request, and call a barrier, a
 *                             receive and a broadcast with no record
 *                             (the tracer's with processes of another
 *                             MPI world, which MPI_Comm_spawn started).
 *   otf2writer DIR scorep8    4 ranks as Score-P 8 writes them (creator
 *                             "Score-P 8.4"): MPI_Init, MPI_Comm_split and
 *                             MPI_Finalize each with a collective that
 *                             creates or destroys a communicator, an
 *                             MPI_Reduce of 8 doubles in place at its root
 *                             (rank 1 flushes its buffer before it, 5 us)
 *                             and an MPI_Allgatherv in place of blocks of
 *                             32, 64, 96 and 128 bytes.
 *   otf2writer DIR unwind     2 ranks as Score-P records them when it
 *                             unwinds the stack: calling-context enters
 *                             and leaves, no Enter or Leave.
 *   otf2writer DIR intercomm  4 ranks: a sendrecv and a broadcast over an
 *                             intercommunicator (OTF2 3.0), then an
 *                             allreduce over the world.
 *   otf2writer DIR threads    2 ranks whose processes have a second
 *                             thread that sends and receives.
 *   otf2writer DIR late       2 ranks: rank 0 starts an isend that it
 *                             cancels in a later wait; rank 1 starts an
 *                             irecv from rank 0 and one from itself on
 *                             MPI_COMM_SELF (which it sends), and
 *                             completes them after 5,000 receives from
 *                             rank 0 (more events than a reader holds
 *                             back for a receive's sender).
 *
 * The Omp* records are deprecated in OTF2 3.0 but still in old traces.
 *
 * Build: cc -O2 -Wno-deprecated-declarations otf2writer.c -lotf2
 */
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        fprintf(stderr, "otf2writer: %s: %s\n", what, OTF2_Error_GetName(s));
        exit(1);
    }
}

enum { S_EMPTY, S_MAIN, S_SEND, S_RECV, S_ISEND, S_IRECV, S_WAIT, S_ALLREDUCE, S_BCAST, S_SENDRECV, S_IALLREDUCE, S_WORLD,
       S_RANK, S_THREAD, S_NODE, S_MACHINE, S_ATTR, S_METRIC, S_UNIT, S_PARAM, S_OPENMP, S_TEAM, S_WIN, S_POSIX, S_FILE, S_DIR, S_FD, S_SRC, S_TIMER,
       S_BARRIER, S_INIT, S_SPLIT, S_FINALIZE, S_REDUCE, S_SOLVE, S_ALLGATHERV, S_DEVICE, S_ARG0, NSTR = S_ARG0 + 300 };
enum { R_MAIN, R_SEND, R_RECV, R_ISEND, R_IRECV, R_WAIT, R_ALLREDUCE, R_BCAST, R_SENDRECV, R_IALLREDUCE, R_BARRIER,
       R_INIT, R_SPLIT, R_FINALIZE, R_REDUCE, R_SOLVE, R_ALLGATHERV, NREG };
enum { NATTR = 40, NMEMBERS = 40 };

static const char* strs[] = { "", "main", "MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Irecv", "MPI_Wait",
    "MPI_Allreduce", "MPI_Bcast", "MPI_Sendrecv", "MPI_Iallreduce", "MPI_COMM_WORLD", "MPI Rank", "Master thread", "node0", "machine0",
    "attribute", "metric member", "bytes", "parameter", "OpenMP", "thread team", "window", "POSIX I/O", "/tmp/data.bin", "/tmp", "fd 3", "/home/user/src/solver.c", "cpu timer", "MPI_Barrier",
    "MPI_Init", "MPI_Comm_split", "MPI_Finalize", "MPI_Reduce", "solve", "MPI_Allgatherv", "CUDA[0:7]" };

/* with_intercomm adds the intercomm archive's groups and intercommunicator;
 * with_threads the threads archive's second thread of each process
 * (location 100 + rank), thread_events their events, and a device stream
 * of each, without events (location 200 + rank). */
static int with_intercomm, with_threads, with_self;
static uint64_t thread_events[2];

static void write_defs(OTF2_Archive* a, int nranks, const uint64_t* events, uint64_t length)
{
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 1000, length, OTF2_UNDEFINED_TIMESTAMP), "clock");
    for (int i = 0; i < NSTR; i++) {
        char buf[64];
        const char* s = buf;
        if (i < S_ARG0) s = strs[i];
        else snprintf(buf, sizeof buf, "argument-%d", i - S_ARG0);
        check(OTF2_GlobalDefWriter_WriteString(g, i, s), "string");
    }
    static const struct { int name; OTF2_RegionRole role; OTF2_Paradigm par; } regs[NREG] = {
        { S_MAIN, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_COMPILER },
        { S_SEND, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
        { S_RECV, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
        { S_ISEND, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
        { S_IRECV, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
        { S_WAIT, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
        { S_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI },
        { S_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL, OTF2_PARADIGM_MPI },
        { S_SENDRECV, OTF2_REGION_ROLE_POINT2POINT, OTF2_PARADIGM_MPI },
        { S_IALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI },
        { S_BARRIER, OTF2_REGION_ROLE_BARRIER, OTF2_PARADIGM_MPI },
        { S_INIT, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI },
        { S_SPLIT, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI },
        { S_FINALIZE, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_MPI },
        { S_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE, OTF2_PARADIGM_MPI },
        { S_SOLVE, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_SAMPLING },
        { S_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL, OTF2_PARADIGM_MPI },
    };
    for (int r = 0; r < NREG; r++)
        check(OTF2_GlobalDefWriter_WriteRegion(g, r, regs[r].name, regs[r].name, S_EMPTY, regs[r].role,
                                               regs[r].par, OTF2_REGION_FLAG_NONE, S_EMPTY, 0, 0), "region");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, S_MACHINE, S_MACHINE, OTF2_UNDEFINED_SYSTEM_TREE_NODE), "stn");
    uint64_t* members = calloc(nranks, sizeof *members);
    for (int r = 0; r < nranks; r++) {
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, r, S_RANK, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                      OTF2_UNDEFINED_LOCATION_GROUP), "group");
        check(OTF2_GlobalDefWriter_WriteLocation(g, r, S_THREAD, OTF2_LOCATION_TYPE_CPU_THREAD, events[r], r), "loc");
        if (with_threads) {
            check(OTF2_GlobalDefWriter_WriteLocation(g, 100 + r, S_THREAD, OTF2_LOCATION_TYPE_CPU_THREAD, thread_events[r], r), "thread");
            check(OTF2_GlobalDefWriter_WriteLocation(g, 200 + r, S_DEVICE, OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, 0, r), "device");
        }
        members[r] = r;
    }
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, S_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, nranks, members), "comm locations");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, nranks, members), "comm group");
    /* comm 0 is a sub-communicator of ranks 2, 0 (in that order); comm 1 is the world. */
    uint64_t sub[2] = { nranks > 2 ? 2 : 0, 0 };
    check(OTF2_GlobalDefWriter_WriteGroup(g, 2, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, 2, sub), "sub group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 1, S_WORLD, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "world");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, S_EMPTY, 2, 1, OTF2_COMM_FLAG_NONE), "sub comm");
    if (with_intercomm) { /* comm 3 joins the even ranks (group A) and the odd ones (B) */
        uint64_t even[2] = { 0, 2 }, odd[2] = { 1, 3 };
        check(OTF2_GlobalDefWriter_WriteGroup(g, 5, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                              OTF2_GROUP_FLAG_NONE, 2, even), "even group");
        check(OTF2_GlobalDefWriter_WriteGroup(g, 6, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                              OTF2_GROUP_FLAG_NONE, 2, odd), "odd group");
        check(OTF2_GlobalDefWriter_WriteInterComm(g, 3, S_EMPTY, 5, 6, 1, OTF2_COMM_FLAG_NONE), "intercomm");
    }
    if (with_self) { /* comm 4 is MPI_COMM_SELF */
        check(OTF2_GlobalDefWriter_WriteGroup(g, 7, S_EMPTY, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                              OTF2_GROUP_FLAG_NONE, 0, NULL), "self group");
        check(OTF2_GlobalDefWriter_WriteComm(g, 4, S_EMPTY, 7, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "self");
    }
    /* OpenMP: a paradigm definition, its locations and a thread team of one */
    check(OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENMP, S_OPENMP, OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN), "paradigm");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 3, S_EMPTY, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENMP,
                                          OTF2_GROUP_FLAG_NONE, nranks, members), "omp locations");
    uint64_t team[1] = { 0 };
    check(OTF2_GlobalDefWriter_WriteGroup(g, 4, S_EMPTY, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENMP,
                                          OTF2_GROUP_FLAG_NONE, 1, team), "omp team group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 2, S_TEAM, 4, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE), "team");
    check(OTF2_GlobalDefWriter_WriteRmaWin(g, 0, S_WIN, 1, OTF2_RMA_WIN_FLAG_NONE), "window");
    /* calling contexts: main, main -> MPI_Send at solver.c:42 */
    check(OTF2_GlobalDefWriter_WriteSourceCodeLocation(g, 0, S_SRC, 42), "scl");
    check(OTF2_GlobalDefWriter_WriteCallingContext(g, 0, R_MAIN, OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
                                                   OTF2_UNDEFINED_CALLING_CONTEXT), "cc main");
    check(OTF2_GlobalDefWriter_WriteCallingContext(g, 1, R_SEND, 0, 0), "cc send");
    /* the unwind archive's: main -> MPI_Init, main -> solve (never entered,
     * only unwound) -> MPI_Send or MPI_Recv, main -> MPI_Allreduce, main
     * -> MPI_Finalize */
    static const int ccs[][2] = { { R_INIT, 0 }, { R_SOLVE, 0 }, { R_SEND, 3 }, { R_RECV, 3 }, { R_ALLREDUCE, 0 }, { R_FINALIZE, 0 } };
    for (int i = 0; i < 6; i++)
        check(OTF2_GlobalDefWriter_WriteCallingContext(g, 2 + i, ccs[i][0], OTF2_UNDEFINED_SOURCE_CODE_LOCATION, ccs[i][1]), "cc");
    check(OTF2_GlobalDefWriter_WriteInterruptGenerator(g, 0, S_TIMER, OTF2_INTERRUPT_GENERATOR_MODE_TIME,
                                                       OTF2_BASE_DECIMAL, -6, 1000), "interrupt generator");
    check(OTF2_GlobalDefWriter_WriteIoParadigm(g, 0, S_POSIX, S_POSIX, OTF2_IO_PARADIGM_CLASS_SERIAL,
                                               OTF2_IO_PARADIGM_FLAG_OS, 0, NULL, NULL, NULL), "io paradigm");
    check(OTF2_GlobalDefWriter_WriteIoRegularFile(g, 0, S_FILE, 0), "io file");
    check(OTF2_GlobalDefWriter_WriteIoDirectory(g, 1, S_DIR, 0), "io directory");
    check(OTF2_GlobalDefWriter_WriteIoHandle(g, 0, S_FD, 0, 0, OTF2_IO_HANDLE_FLAG_NONE, OTF2_UNDEFINED_COMM,
                                             OTF2_UNDEFINED_IO_HANDLE), "io handle");
    check(OTF2_GlobalDefWriter_WriteIoHandle(g, 1, S_FD, 1, 0, OTF2_IO_HANDLE_FLAG_NONE, OTF2_UNDEFINED_COMM,
                                             OTF2_UNDEFINED_IO_HANDLE), "io handle");
    /* a handle without a name, as Score-P writes them: named after its paradigm and file */
    check(OTF2_GlobalDefWriter_WriteIoHandle(g, 2, S_EMPTY, 0, 0, OTF2_IO_HANDLE_FLAG_NONE, OTF2_UNDEFINED_COMM,
                                             OTF2_UNDEFINED_IO_HANDLE), "io handle");
    free(members);
    for (int i = 0; i < NATTR; i++)
        check(OTF2_GlobalDefWriter_WriteAttribute(g, i, S_ATTR, S_EMPTY, i % 2 ? OTF2_TYPE_INT32 : OTF2_TYPE_UINT64), "attr");
    OTF2_MetricMemberRef mm[NMEMBERS];
    for (int i = 0; i < NMEMBERS; i++) {
        mm[i] = i;
        check(OTF2_GlobalDefWriter_WriteMetricMember(g, i, S_METRIC, S_EMPTY, OTF2_METRIC_TYPE_OTHER,
                                                     OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_UINT64,
                                                     OTF2_BASE_DECIMAL, 0, S_UNIT), "member");
    }
    check(OTF2_GlobalDefWriter_WriteMetricClass(g, 0, NMEMBERS, mm, OTF2_METRIC_SYNCHRONOUS_STRICT,
                                                OTF2_RECORDER_KIND_CPU), "metric class");
    check(OTF2_GlobalDefWriter_WriteParameter(g, 0, S_PARAM, OTF2_PARAMETER_TYPE_INT64), "parameter");
    check(OTF2_Archive_CloseGlobalDefWriter(a, g), "close global defs");
}

/* Rank 2 writes local region ids, which its dense mapping table maps to
 * global ones: global = (local + 3) % NREG. Rank 0 has a sparse COMM table
 * mapping local 5 to the world (1). */
#define REG(x) (r == 2 ? ((x) + NREG - 3) % NREG : (x))
#define WORLD (r == 0 ? 5 : 1)

/* features writes rank r's events of the feature archive; returns the count. */
static uint64_t features(OTF2_EvtWriter* w, int r, int nranks, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
    OTF2_AttributeList* al = OTF2_AttributeList_New();
    OTF2_StringRef args[300];
    for (int i = 0; i < 300; i++) args[i] = S_ARG0 + i;
    /* a record longer than 255 bytes, and an attribute list longer than 255 bytes */
    for (int i = 0; i < NATTR; i++) {
        OTF2_AttributeValue v;
        if (i % 2) v.int32 = -1000000 * i; else v.uint64 = 0xFFFFFFFFFFFFULL * i;
        OTF2_AttributeList_AddAttribute(al, i, i % 2 ? OTF2_TYPE_INT32 : OTF2_TYPE_UINT64, v);
    }
    check(OTF2_EvtWriter_ProgramBegin(w, al, t, S_MAIN, 300, args), "program begin"); n++;
    check(OTF2_EvtWriter_Enter(w, NULL, t, REG(R_MAIN)), "enter"); n++;
    int peer = (r + 1) % nranks, from = (r + nranks - 1) % nranks;
    for (int i = 0; i < 12000; i++) {
        t += 100; /* every rank has the same timestamps: ties go to the lower location */
        if (i % 7 == 0) {
            OTF2_AttributeList_AddUint8(al, 0, (uint8_t)i);
            OTF2_AttributeList_AddInt32(al, 1, -i);
        }
        check(OTF2_EvtWriter_Enter(w, al, t, REG(R_ISEND)), "enter"); n++;
        check(OTF2_EvtWriter_MpiIsend(w, NULL, t + 1, peer, WORLD, i % 1000, 1000 + i, 2 * i), "isend"); n++;
        check(OTF2_EvtWriter_Leave(w, NULL, t + 2, REG(R_ISEND)), "leave"); n++;
        check(OTF2_EvtWriter_Enter(w, NULL, t + 3, REG(R_IRECV)), "enter"); n++;
        check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 4, 2 * i + 1), "irecv request"); n++;
        check(OTF2_EvtWriter_Leave(w, NULL, t + 5, REG(R_IRECV)), "leave"); n++;
        check(OTF2_EvtWriter_Enter(w, NULL, t + 6, REG(R_WAIT)), "enter"); n++;
        check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t + 7, 2 * i), "isend complete"); n++;
        check(OTF2_EvtWriter_MpiIrecv(w, NULL, t + 8, from, WORLD, i % 1000, 1000 + i, 2 * i + 1), "irecv"); n++;
        check(OTF2_EvtWriter_Leave(w, NULL, t + 9, REG(R_WAIT)), "leave"); n++;
        if (i % 100 == 0) {
            /* an undefined region (a singleton written as 0xFF), undefined root and sizes */
            check(OTF2_EvtWriter_Enter(w, NULL, t + 10, REG(R_ALLREDUCE)), "enter"); n++;
            check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 10), "coll begin"); n++;
            check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 11, OTF2_COLLECTIVE_OP_ALLREDUCE, WORLD,
                                                  OTF2_UNDEFINED_UINT32, 8, 8), "coll end"); n++;
            check(OTF2_EvtWriter_Leave(w, NULL, t + 12, REG(R_ALLREDUCE)), "leave"); n++;
            if (r == 0 || r == 2) { /* a rooted collective on the sub-communicator {2, 0} */
                check(OTF2_EvtWriter_Enter(w, NULL, t + 13, REG(R_BCAST)), "enter"); n++;
                check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 13), "coll begin"); n++;
                check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 14, OTF2_COLLECTIVE_OP_BCAST, 0, 0,
                                                      r == 2 ? 64 : 0, r == 2 ? 0 : 32), "coll end"); n++;
                check(OTF2_EvtWriter_Leave(w, NULL, t + 15, REG(R_BCAST)), "leave"); n++;
            }
            OTF2_Type types[NMEMBERS];
            OTF2_MetricValue vals[NMEMBERS];
            for (int k = 0; k < NMEMBERS; k++) {
                types[k] = OTF2_TYPE_UINT64;
                vals[k].unsigned_int = k == 0 ? UINT64_MAX : (uint64_t)i << k;
            }
            check(OTF2_EvtWriter_Metric(w, NULL, t + 16, 0, NMEMBERS, types, vals), "metric"); n++;
            check(OTF2_EvtWriter_ParameterInt(w, NULL, t + 17, 0, -(int64_t)i), "parameter"); n++;
            check(OTF2_EvtWriter_Enter(w, NULL, t + 18, OTF2_UNDEFINED_REGION), "enter undefined"); n++;
            check(OTF2_EvtWriter_Leave(w, NULL, t + 19, OTF2_UNDEFINED_REGION), "leave undefined"); n++;
        }
        if (i % 1000 == 500) { /* MPI_Sendrecv around the ring */
            check(OTF2_EvtWriter_Enter(w, NULL, t + 21, REG(R_SENDRECV)), "enter"); n++;
            check(OTF2_EvtWriter_MpiSend(w, NULL, t + 22, peer, WORLD, 5000 + i, 256), "send"); n++;
            check(OTF2_EvtWriter_MpiRecv(w, NULL, t + 23, from, WORLD, 5000 + i, 256), "recv"); n++;
            check(OTF2_EvtWriter_Leave(w, NULL, t + 24, REG(R_SENDRECV)), "leave"); n++;
        }
        if (i % 1000 == 750) { /* MPI_Iallreduce, completed in MPI_Wait */
            check(OTF2_EvtWriter_Enter(w, NULL, t + 21, REG(R_IALLREDUCE)), "enter"); n++;
            check(OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t + 22, 1000000 + i), "nbc request"); n++;
            check(OTF2_EvtWriter_Leave(w, NULL, t + 23, REG(R_IALLREDUCE)), "leave"); n++;
            check(OTF2_EvtWriter_Enter(w, NULL, t + 24, REG(R_WAIT)), "enter"); n++;
            check(OTF2_EvtWriter_NonBlockingCollectiveComplete(w, NULL, t + 25, OTF2_COLLECTIVE_OP_ALLREDUCE, WORLD,
                                                               OTF2_UNDEFINED_UINT32, 16, 16, 1000000 + i), "nbc complete"); n++;
            check(OTF2_EvtWriter_Leave(w, NULL, t + 26, REG(R_WAIT)), "leave"); n++;
        }
        if (i % 1000 == 600) { /* MPI one-sided records on window 0 (the world) */
            uint64_t u = t + 27;
            check(OTF2_EvtWriter_RmaWinCreate(w, NULL, u, 0), "win create"); n++;
            check(OTF2_EvtWriter_RmaCollectiveBegin(w, NULL, u), "rma coll begin"); n++;
            check(OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, u, OTF2_COLLECTIVE_OP_CREATE_HANDLE,
                                                  OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY | 0x10,
                                                  0, OTF2_UNDEFINED_UINT32, 0, 0), "rma coll end"); n++;
            check(OTF2_EvtWriter_RmaCollectiveEnd(w, NULL, u, OTF2_COLLECTIVE_OP_BCAST, OTF2_RMA_SYNC_LEVEL_NONE,
                                                  0, 1, 64, 64), "rma coll end rooted"); n++;
            check(OTF2_EvtWriter_RmaGroupSync(w, NULL, u, OTF2_RMA_SYNC_LEVEL_MEMORY, 0, 1), "group sync"); n++;
            check(OTF2_EvtWriter_RmaRequestLock(w, NULL, u, 0, peer, 5, OTF2_LOCK_EXCLUSIVE), "request lock"); n++;
            check(OTF2_EvtWriter_RmaAcquireLock(w, NULL, u, 0, peer, 5, OTF2_LOCK_EXCLUSIVE), "acquire lock"); n++;
            check(OTF2_EvtWriter_RmaTryLock(w, NULL, u, 0, peer, 6, OTF2_LOCK_SHARED), "try lock"); n++;
            check(OTF2_EvtWriter_RmaReleaseLock(w, NULL, u, 0, peer, 5), "release lock"); n++;
            check(OTF2_EvtWriter_RmaSync(w, NULL, u, 0, 7, OTF2_RMA_SYNC_TYPE_NOTIFY_IN), "sync, remote out of range"); n++;
            check(OTF2_EvtWriter_RmaWaitChange(w, NULL, u, 0), "wait change"); n++;
            check(OTF2_EvtWriter_RmaPut(w, NULL, u, 0, peer, 1024, 77), "put"); n++;
            check(OTF2_EvtWriter_RmaGet(w, NULL, u, 0, from, 2048, 78), "get"); n++;
            check(OTF2_EvtWriter_RmaAtomic(w, NULL, u, 0, peer, OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ADD, 8, 8, 79), "atomic"); n++;
            check(OTF2_EvtWriter_RmaOpCompleteBlocking(w, NULL, u, 0, 77), "complete"); n++;
            check(OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, NULL, u, 0, 78), "complete nb"); n++;
            check(OTF2_EvtWriter_RmaOpTest(w, NULL, u, 0, 79), "test"); n++;
            check(OTF2_EvtWriter_RmaOpCompleteRemote(w, NULL, u, 0, 79), "complete remote"); n++;
            check(OTF2_EvtWriter_RmaWinDestroy(w, NULL, u, 0), "win destroy"); n++;
        }
        if (i % 1000 == 950) { /* sampling records */
            uint64_t u = t + 29;
            check(OTF2_EvtWriter_CallingContextEnter(w, NULL, u, 0, 1), "cc enter"); n++;
            check(OTF2_EvtWriter_CallingContextSample(w, NULL, u, 1, 2, 0), "cc sample"); n++;
            check(OTF2_EvtWriter_CallingContextSample(w, NULL, u, 1, OTF2_UNDEFINED_UINT32, 0), "cc sample"); n++;
            check(OTF2_EvtWriter_CallingContextLeave(w, NULL, u, 0), "cc leave"); n++;
        }
        if (i % 1000 == 900) { /* POSIX I/O records */
            uint64_t u = t + 28;
            check(OTF2_EvtWriter_IoCreateHandle(w, NULL, u, 0, OTF2_IO_ACCESS_MODE_READ_WRITE,
                                                OTF2_IO_CREATION_FLAG_CREATE | OTF2_IO_CREATION_FLAG_TRUNCATE,
                                                OTF2_IO_STATUS_FLAG_NONE), "create handle"); n++;
            check(OTF2_EvtWriter_IoDuplicateHandle(w, NULL, u, 0, 1, OTF2_IO_STATUS_FLAG_APPEND | 0x4000), "dup"); n++;
            check(OTF2_EvtWriter_IoSeek(w, NULL, u, 0, -4096, OTF2_IO_SEEK_FROM_END, 123456), "seek"); n++;
            check(OTF2_EvtWriter_IoChangeStatusFlags(w, NULL, u, 0, OTF2_IO_STATUS_FLAG_NON_BLOCKING), "flags"); n++;
            check(OTF2_EvtWriter_IoOperationBegin(w, NULL, u, 0, OTF2_IO_OPERATION_MODE_WRITE,
                                                  OTF2_IO_OPERATION_FLAG_NON_BLOCKING, 65536, 11), "op begin"); n++;
            check(OTF2_EvtWriter_IoOperationIssued(w, NULL, u, 0, 11), "op issued"); n++;
            check(OTF2_EvtWriter_IoOperationTest(w, NULL, u, 0, 11), "op test"); n++;
            check(OTF2_EvtWriter_IoOperationComplete(w, NULL, u, 0, 65000, 11), "op complete"); n++;
            check(OTF2_EvtWriter_IoOperationCancelled(w, NULL, u, 0, 12), "op cancelled"); n++;
            check(OTF2_EvtWriter_IoAcquireLock(w, NULL, u, 0, OTF2_LOCK_SHARED), "io lock"); n++;
            check(OTF2_EvtWriter_IoTryLock(w, NULL, u, 0, OTF2_LOCK_EXCLUSIVE), "io try lock"); n++;
            check(OTF2_EvtWriter_IoReleaseLock(w, NULL, u, 0, OTF2_LOCK_SHARED), "io unlock"); n++;
            check(OTF2_EvtWriter_IoDestroyHandle(w, NULL, u, 1), "destroy"); n++;
            check(OTF2_EvtWriter_IoDuplicateHandle(w, NULL, u, 0, 2, OTF2_IO_STATUS_FLAG_NONE), "dup"); n++;
            check(OTF2_EvtWriter_IoDestroyHandle(w, NULL, u, 2), "destroy"); n++;
            check(OTF2_EvtWriter_IoDeleteFile(w, NULL, u, 0, 0), "delete file"); n++;
            check(OTF2_EvtWriter_IoDeleteFile(w, NULL, u, 0, 1), "delete directory"); n++;
        }
        if (i % 1000 == 250) { /* OpenMP and thread records (not MPI: the model skips them) */
            uint64_t u = t + 25;
            check(OTF2_EvtWriter_OmpFork(w, NULL, u, 4), "omp fork"); n++;
            check(OTF2_EvtWriter_OmpAcquireLock(w, NULL, u, 7, 2), "omp lock"); n++;
            check(OTF2_EvtWriter_OmpReleaseLock(w, NULL, u, 7, 2), "omp unlock"); n++;
            check(OTF2_EvtWriter_OmpTaskCreate(w, NULL, u, 123456789ULL * i), "omp task"); n++;
            check(OTF2_EvtWriter_OmpTaskSwitch(w, NULL, u, 123456789ULL * i), "omp task"); n++;
            check(OTF2_EvtWriter_OmpTaskComplete(w, NULL, u, 123456789ULL * i), "omp task"); n++;
            check(OTF2_EvtWriter_OmpJoin(w, NULL, u), "omp join"); n++;
            check(OTF2_EvtWriter_ThreadFork(w, NULL, u, OTF2_PARADIGM_OPENMP, 4), "fork"); n++;
            check(OTF2_EvtWriter_ThreadTeamBegin(w, NULL, u, 2), "team begin"); n++;
            check(OTF2_EvtWriter_ThreadAcquireLock(w, NULL, u, OTF2_PARADIGM_PTHREAD, 3, 1), "lock"); n++;
            check(OTF2_EvtWriter_ThreadReleaseLock(w, NULL, u, OTF2_PARADIGM_PTHREAD, 3, 1), "unlock"); n++;
            check(OTF2_EvtWriter_ThreadTaskCreate(w, NULL, u, 2, 0, 5), "task create"); n++;
            check(OTF2_EvtWriter_ThreadTaskSwitch(w, NULL, u, 2, 0, 5), "task switch"); n++;
            check(OTF2_EvtWriter_ThreadTaskComplete(w, NULL, u, 2, 3, 5), "task complete"); n++;
            check(OTF2_EvtWriter_ThreadTeamEnd(w, NULL, u, 2), "team end"); n++;
            check(OTF2_EvtWriter_ThreadJoin(w, NULL, u, OTF2_PARADIGM_OPENMP), "join"); n++;
            check(OTF2_EvtWriter_ThreadCreate(w, NULL, u, 2, 99), "create"); n++;
            check(OTF2_EvtWriter_ThreadBegin(w, NULL, u, 2, 99), "begin"); n++;
            check(OTF2_EvtWriter_ThreadWait(w, NULL, u, 2, 99), "wait"); n++;
            check(OTF2_EvtWriter_ThreadEnd(w, NULL, u, 2, 99), "end"); n++;
        }
        if (i == 5000) {
            check(OTF2_EvtWriter_MeasurementOnOff(w, NULL, t + 20, OTF2_MEASUREMENT_OFF), "off"); n++;
            t += 1000;
            check(OTF2_EvtWriter_MeasurementOnOff(w, NULL, t + 20, OTF2_MEASUREMENT_ON), "on"); n++;
        }
        t += 30;
    }
    t += 100;
    check(OTF2_EvtWriter_Leave(w, NULL, t, REG(R_MAIN)), "leave"); n++;
    check(OTF2_EvtWriter_ProgramEnd(w, NULL, t, r == 1 ? -30 : 0), "program end"); n++;
    OTF2_AttributeList_Delete(al);
    if (t > *tmax) *tmax = t;
    return n;
}

/* bench writes n events of rank r: Enter, MpiSend or MpiRecv, Leave. */
static uint64_t bench(OTF2_EvtWriter* w, int r, int nranks, uint64_t n, uint64_t* tmax)
{
    uint64_t t = 10000, k = 0;
    int peer = r ^ 1;
    if (peer >= nranks) peer = r;
    for (uint64_t i = 0; k + 3 <= n; i++) {
        t += 17;
        int send = (i + r) % 2 == 0;
        check(OTF2_EvtWriter_Enter(w, NULL, t, send ? R_SEND : R_RECV), "enter");
        if (send) check(OTF2_EvtWriter_MpiSend(w, NULL, t + 3, peer, 1, (uint32_t)i, 4096), "send");
        else check(OTF2_EvtWriter_MpiRecv(w, NULL, t + 3, peer, 1, (uint32_t)i, 4096), "recv");
        check(OTF2_EvtWriter_Leave(w, NULL, t + 9, send ? R_SEND : R_RECV), "leave");
        k += 3;
    }
    if (t + 9 > *tmax) *tmax = t + 9;
    return k;
}

/* nbc writes rank r's non-blocking collectives, as Score-P records them:
 * two called, completed in an order that differs between the ranks; a
 * third called before a blocking allreduce, tested, then completed. */
static uint64_t nbc(OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
#define CALL(region, record) do { \
        check(OTF2_EvtWriter_Enter(w, NULL, t, region), "enter"); \
        check(record, #record); \
        check(OTF2_EvtWriter_Leave(w, NULL, t + 5, region), "leave"); \
        n += 3, t += 10; \
    } while (0)
#define DONE(op, req) OTF2_EvtWriter_NonBlockingCollectiveComplete(w, NULL, t + 4, op, 1, \
        op == OTF2_COLLECTIVE_OP_BCAST ? 0 : OTF2_UNDEFINED_UINT32, \
        op == OTF2_COLLECTIVE_OP_BCAST ? (r == 0 ? 16 : 0) : 16, op == OTF2_COLLECTIVE_OP_BCAST ? 8 : 16, req)
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_MAIN), "enter"); n++;
    CALL(R_IALLREDUCE, OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t + 1, 1));
    CALL(R_IALLREDUCE, OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t + 1, 2));
    if (r == 0) {
        CALL(R_WAIT, DONE(OTF2_COLLECTIVE_OP_BCAST, 2));
        CALL(R_WAIT, DONE(OTF2_COLLECTIVE_OP_ALLREDUCE, 1));
    } else {
        CALL(R_WAIT, DONE(OTF2_COLLECTIVE_OP_ALLREDUCE, 1));
        CALL(R_WAIT, DONE(OTF2_COLLECTIVE_OP_BCAST, 2));
    }
    CALL(R_IALLREDUCE, OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, t + 1, 3));
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_ALLREDUCE), "enter");
    check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 1), "begin");
    check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 4, OTF2_COLLECTIVE_OP_ALLREDUCE, 1, OTF2_UNDEFINED_UINT32, 32, 32), "end");
    check(OTF2_EvtWriter_Leave(w, NULL, t + 5, R_ALLREDUCE), "leave");
    n += 4, t += 10;
    CALL(R_WAIT, OTF2_EvtWriter_MpiRequestTest(w, NULL, t + 1, 3));
    CALL(R_WAIT, DONE(OTF2_COLLECTIVE_OP_ALLREDUCE, 3));
    check(OTF2_EvtWriter_Leave(w, NULL, t, R_MAIN), "leave"); n++;
#undef CALL
#undef DONE
    *tmax = t;
    return n;
}

/* pending writes rank r's calls of the "pending" archive. */
static uint64_t pending(OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
    int peer = 1 - r;
#define CALL(region, records) do { \
        check(OTF2_EvtWriter_Enter(w, NULL, t, region), "enter"); \
        records; \
        check(OTF2_EvtWriter_Leave(w, NULL, t + 5, region), "leave"); \
        n += 2, t += 10; \
    } while (0)
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_MAIN), "enter"); n++;
    CALL(R_IRECV, (check(OTF2_EvtWriter_MpiIsend(w, NULL, t + 1, peer, 1, 1, 8, 2), "isend"),
                   check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 1, 3), "irecv request"), n += 2));
    CALL(R_WAIT, (check(OTF2_EvtWriter_MpiIsendComplete(w, NULL, t + 1, 2), "isend complete"),
                  check(OTF2_EvtWriter_MpiIrecv(w, NULL, t + 2, peer, 1, 1, 8, 3), "irecv"), n += 2));
    CALL(R_IRECV, (check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 1, 1), "irecv request"), n++));
    CALL(R_WAIT, (check(OTF2_EvtWriter_MpiRequestTest(w, NULL, t + 1, 1), "test"), n++));
    CALL(R_WAIT, (void)0); /* a wait on a null request: nothing inside */
    CALL(R_BARRIER, (void)0); /* on a communicator with another MPI world's processes: no record */
    CALL(R_RECV, (void)0); /* from another MPI world's process */
    CALL(R_BCAST, (void)0); /* on a communicator merged with another MPI world */
    check(OTF2_EvtWriter_Leave(w, NULL, t, R_MAIN), "leave"); n++;
    *tmax = t;
    return n;
}

/* late writes rank r's calls of the "late" archive (with pending's CALL). */
static uint64_t late(OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
    enum { SENDS = 5000 };
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_MAIN), "enter"); n++;
    if (r == 0) {
        CALL(R_ISEND, (check(OTF2_EvtWriter_MpiIsend(w, NULL, t + 1, 1, 1, 7, 8, 5), "isend"), n++));
        CALL(R_WAIT, (check(OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t + 1, 5), "cancelled"), n++));
        for (int i = 0; i < SENDS; i++)
            CALL(R_SEND, (check(OTF2_EvtWriter_MpiSend(w, NULL, t + 1, 1, 1, 2, 16), "send"), n++));
        CALL(R_SEND, (check(OTF2_EvtWriter_MpiSend(w, NULL, t + 1, 1, 1, 3, 24), "send"), n++));
    } else {
        CALL(R_IRECV, (check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 1, 6), "irecv request"), n++));
        CALL(R_IRECV, (check(OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t + 1, 8), "irecv request"), n++));
        CALL(R_SEND, (check(OTF2_EvtWriter_MpiSend(w, NULL, t + 1, 0, 4, 4, 32), "self send"), n++));
        for (int i = 0; i < SENDS; i++)
            CALL(R_RECV, (check(OTF2_EvtWriter_MpiRecv(w, NULL, t + 1, 0, 1, 2, 16), "recv"), n++));
        CALL(R_WAIT, (check(OTF2_EvtWriter_MpiIrecv(w, NULL, t + 1, 0, 1, 3, 24, 6), "irecv"), n++));
        CALL(R_WAIT, (check(OTF2_EvtWriter_MpiIrecv(w, NULL, t + 1, 0, 4, 4, 32, 8), "self irecv"), n++));
    }
    check(OTF2_EvtWriter_Leave(w, NULL, t, R_MAIN), "leave"); n++;
#undef CALL
    *tmax = t;
    return n;
}

/* unwind writes rank r of 2 as Score-P records it with
 * SCOREP_ENABLE_UNWINDING: calling-context enters and leaves in place of
 * Enter and Leave, a sample in between. Rank 0 sends 64 bytes to rank 1
 * from solve, a frame only the unwinding shows, then both allreduce 8
 * bytes from main. */
static uint64_t unwind(OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
#define CC(cc, records) do { \
        check(OTF2_EvtWriter_CallingContextEnter(w, NULL, t, cc, 2), "cc enter"); \
        records; \
        check(OTF2_EvtWriter_CallingContextLeave(w, NULL, t + 1000, cc), "cc leave"); \
        n += 2, t += 2000; \
    } while (0)
    CC(2, (void)0);
    check(OTF2_EvtWriter_CallingContextSample(w, NULL, t, 3, 1, 0), "sample"); n++;
    t += 1000;
    if (r == 0)
        CC(4, (check(OTF2_EvtWriter_MpiSend(w, NULL, t + 1, 1, 1, 7, 64), "send"), n++));
    else
        CC(5, (check(OTF2_EvtWriter_MpiRecv(w, NULL, t + 999, 0, 1, 7, 64), "recv"), n++));
    CC(6, (check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 1), "begin"),
           check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 999, OTF2_COLLECTIVE_OP_ALLREDUCE, 1, OTF2_UNDEFINED_UINT32, 8, 8), "end"),
           n += 2));
    CC(7, (void)0);
#undef CC
    *tmax = t;
    return n;
}

/* intercomm writes rank r of 4: over intercommunicator 3, whose groups
 * are the even and the odd ranks, a sendrecv with the rank of the same
 * place in the other group (each naming it by that place) and a
 * broadcast of 8 bytes from rank 0 (MPI_ROOT) to the odd ranks, rank 2
 * passing MPI_PROC_NULL; then an allreduce of 8 bytes on the world. */
static uint64_t intercomm(OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
    uint32_t place = r / 2, root = r == 0 ? OTF2_COLLECTIVE_ROOT_SELF : r % 2 ? 0 : OTF2_COLLECTIVE_ROOT_THIS_GROUP;
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_SENDRECV), "enter");
    check(OTF2_EvtWriter_MpiSend(w, NULL, t + 1, place, 3, 5, 8), "send");
    check(OTF2_EvtWriter_MpiRecv(w, NULL, t + 999, place, 3, 5, 8), "recv");
    check(OTF2_EvtWriter_Leave(w, NULL, t + 1000, R_SENDRECV), "leave");
    n += 4, t += 2000;
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_BCAST), "enter");
    check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 1), "begin");
    check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 999, OTF2_COLLECTIVE_OP_BCAST, 3, root, r == 0 ? 16 : 0, r % 2 ? 8 : 0), "end");
    check(OTF2_EvtWriter_Leave(w, NULL, t + 1000, R_BCAST), "leave");
    n += 4, t += 2000;
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_ALLREDUCE), "enter");
    check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 1), "begin");
    check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 999, OTF2_COLLECTIVE_OP_ALLREDUCE, 1, OTF2_UNDEFINED_UINT32, 32, 32), "end");
    check(OTF2_EvtWriter_Leave(w, NULL, t + 1000, R_ALLREDUCE), "leave");
    n += 4, t += 2000;
    *tmax = t;
    return n;
}

/* threads writes rank r of 2: an allreduce of 8 bytes on its own
 * thread, and on a second thread of its process (MPI_THREAD_MULTIPLE) a
 * send of 8 bytes to the other rank and the receive of the other's. */
static uint64_t threads(OTF2_Archive* a, OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t t = 10000;
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_ALLREDUCE), "enter");
    check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 1), "begin");
    check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 999, OTF2_COLLECTIVE_OP_ALLREDUCE, 1, OTF2_UNDEFINED_UINT32, 16, 16), "end");
    check(OTF2_EvtWriter_Leave(w, NULL, t + 1000, R_ALLREDUCE), "leave");
    OTF2_EvtWriter* tw = OTF2_Archive_GetEvtWriter(a, 100 + r);
    check(OTF2_EvtWriter_Enter(tw, NULL, t, R_SEND), "enter");
    check(OTF2_EvtWriter_MpiSend(tw, NULL, t + 1, 1 - r, 1, 1, 8), "send");
    check(OTF2_EvtWriter_Leave(tw, NULL, t + 2, R_SEND), "leave");
    check(OTF2_EvtWriter_Enter(tw, NULL, t + 3, R_RECV), "enter");
    check(OTF2_EvtWriter_MpiRecv(tw, NULL, t + 500, 1 - r, 1, 1, 8), "recv");
    check(OTF2_EvtWriter_Leave(tw, NULL, t + 501, R_RECV), "leave");
    check(OTF2_Archive_CloseEvtWriter(a, tw), "close thread writer");
    thread_events[r] = 6;
    *tmax = t + 1000;
    return 4;
}

/* scorep8 writes rank r of 4 as Score-P 8 records it: its communicators'
 * creation and release as collectives of handles, an MPI_Reduce of 8
 * doubles in place at root 0 (counting none sent and 3 blocks received,
 * which 4 blocks of 48 bytes would give too), and an MPI_Allgatherv in
 * place of rank r's 32(r+1) bytes (counting 3 blocks sent, which 4 of
 * 24(r+1) would give too, and the other ranks' blocks received). */
static uint64_t scorep8(OTF2_EvtWriter* w, int r, uint64_t* tmax)
{
    uint64_t n = 0, t = 10000;
#define COLL(region, op, root, sent, recv) do { \
        check(OTF2_EvtWriter_Enter(w, NULL, t, region), "enter"); \
        check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, t + 1), "begin"); \
        check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, t + 1000, op, 1, root, sent, recv), "end"); \
        check(OTF2_EvtWriter_Leave(w, NULL, t + 1001, region), "leave"); \
        n += 4, t += 2000; \
    } while (0)
    COLL(R_INIT, OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_UNDEFINED_UINT32, 0, 0);
    check(OTF2_EvtWriter_Enter(w, NULL, t, R_MAIN), "enter"); n++;
    COLL(R_SPLIT, OTF2_COLLECTIVE_OP_CREATE_HANDLE, OTF2_UNDEFINED_UINT32, 0, 0);
    if (r == 1) { check(OTF2_EvtWriter_BufferFlush(w, NULL, t, t + 5000), "flush"); n++; }
    t += 6000;
    COLL(R_REDUCE, OTF2_COLLECTIVE_OP_REDUCE, 0, r == 0 ? 0 : 64, r == 0 ? 3 * 64 : 0);
    COLL(R_ALLGATHERV, OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_UNDEFINED_UINT32, 3 * 32 * (r + 1), 320 - 32 * (r + 1));
    check(OTF2_EvtWriter_Leave(w, NULL, t, R_MAIN), "leave"); n++;
    COLL(R_FINALIZE, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, OTF2_UNDEFINED_UINT32, 0, 0);
#undef COLL
    *tmax = t;
    return n;
}

int main(int argc, char** argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: otf2writer DIR features | DIR nbc | DIR pending | DIR scorep8 | DIR unwind | DIR intercomm | DIR threads | DIR late | DIR bench EVENTS RANKS\n");
        return 2;
    }
    int is_bench = strcmp(argv[2], "bench") == 0, is_nbc = strcmp(argv[2], "nbc") == 0;
    int is_pending = strcmp(argv[2], "pending") == 0, is_scorep8 = strcmp(argv[2], "scorep8") == 0;
    int is_unwind = strcmp(argv[2], "unwind") == 0, is_late = strcmp(argv[2], "late") == 0;
    with_self = is_late;
    with_intercomm = strcmp(argv[2], "intercomm") == 0, with_threads = strcmp(argv[2], "threads") == 0;
    int is_features = !is_bench && !is_nbc && !is_pending && !is_scorep8 && !is_unwind && !with_intercomm && !with_threads && !is_late;
    int nranks = is_bench ? atoi(argv[4]) : is_nbc || is_pending || is_unwind || with_threads || is_late ? 2 : is_scorep8 || with_intercomm ? 4 : 3;
    uint64_t nevents = is_bench ? strtoull(argv[3], NULL, 10) : 0;
    OTF2_Archive* a = OTF2_Archive_Open(argv[1], "traces", OTF2_FILEMODE_WRITE, 256 * 1024, 4 * 1024 * 1024,
                                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!a) {
        fprintf(stderr, "otf2writer: cannot create %s\n", argv[1]);
        return 1;
    }
    check(OTF2_Archive_SetFlushCallbacks(a, &flush_callbacks, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(a), "serial");
    check(OTF2_Archive_SetCreator(a, is_scorep8 ? "Score-P 8.4" : "kairos otf2writer"), "creator");
    check(OTF2_Archive_OpenEvtFiles(a), "open evt files");
    uint64_t* events = calloc(nranks, sizeof *events);
    uint64_t tmax = 0;
    for (int r = 0; r < nranks; r++) {
        OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, r);
        events[r] = is_bench  ? bench(w, r, nranks, nevents, &tmax)
                    : is_nbc  ? nbc(w, r, &tmax)
                    : is_pending ? pending(w, r, &tmax)
                    : is_scorep8 ? scorep8(w, r, &tmax)
                    : is_unwind ? unwind(w, r, &tmax)
                    : with_intercomm ? intercomm(w, r, &tmax)
                    : with_threads ? threads(a, w, r, &tmax)
                    : is_late ? late(w, r, &tmax)
                               : features(w, r, nranks, &tmax);
        check(OTF2_Archive_CloseEvtWriter(a, w), "close evt writer");
    }
    check(OTF2_Archive_CloseEvtFiles(a), "close evt files");
    check(OTF2_Archive_OpenDefFiles(a), "open def files");
    for (int r = 0; r < nranks; r++) {
        OTF2_DefWriter* d = OTF2_Archive_GetDefWriter(a, r);
        if (is_features && r == 1) {
            /* rank 1's clock drifts: three offsets, the middle one negative */
            check(OTF2_DefWriter_WriteClockOffset(d, 5000, 250, 0.5), "offset");
            check(OTF2_DefWriter_WriteClockOffset(d, 1000000, -731, 0.25), "offset");
            check(OTF2_DefWriter_WriteClockOffset(d, 2000000, 4099, 0), "offset");
        }
        if (is_features && r == 2) {
            check(OTF2_DefWriter_WriteClockOffset(d, 5000, 77, 0), "single offset (ignored)");
            OTF2_IdMap* m = OTF2_IdMap_Create(OTF2_ID_MAP_DENSE, NREG);
            for (int i = 0; i < NREG; i++) OTF2_IdMap_AddIdPair(m, i, (i + 3) % NREG);
            check(OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_REGION, m), "region map");
            OTF2_IdMap_Free(m);
        }
        if (is_features && r == 0) {
            OTF2_IdMap* m = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, 2);
            OTF2_IdMap_AddIdPair(m, 5, 1);
            OTF2_IdMap_AddIdPair(m, 0, 0);
            check(OTF2_DefWriter_WriteMappingTable(d, OTF2_MAPPING_COMM, m), "comm map");
            OTF2_IdMap_Free(m);
        }
        check(OTF2_Archive_CloseDefWriter(a, d), "close def writer");
    }
    check(OTF2_Archive_CloseDefFiles(a), "close def files");
    write_defs(a, nranks, events, tmax);
    check(OTF2_Archive_Close(a), "close archive");
    free(events);
    return 0;
}
