// Package waitstate finds the wait states of a timed MPI trace and follows
// each back to the delay that caused it, as Scalasca's root-cause analysis
// does (Böhme, Geimer, Arnold, Voigtlaender and Wolf, "Identifying the
// root causes of wait states in large-scale parallel applications", ICPP
// 2010 and ACM TOPC 3(2), 2016; Böhme et al., "Scalable critical-path
// based performance analysis", IPDPS 2012). The last process to start a
// slow pattern (seed paper 002's rule, package pattern) is often a
// victim: it was late because it waited for another. This package names
// the rank and call path whose excess time started the chain.
//
// Wait states (Scalasca's definitions; times are enter and exit times of
// the calls, a Waitall counts only the message that arrived last, and so
// do the waits one MPI_Waitsome is read as, completed together):
//
//   - Late Sender: a receive (MPI_Recv, or the MPI_Wait or MPI_Waitall
//     completing an MPI_Irecv) entered before its message's send:
//     min(send enter, receive exit) − receive enter. A test that
//     completes nothing never waits, but a wait (or a completing test)
//     right after such tests takes their time: it enters that much
//     earlier, the computation between the tests staying computation.
//     A blocking receive right after probes (and the computation between
//     them) enters at the first probe. A matched probe (MPI_Mprobe, or the
//     MPI_Improbe that matched after those that did not), which Kairos'
//     tracer writes as the irecv of its message, gives its time, and the
//     probes' before it, to the wait that completes it right after.
//   - Late Receiver: a send completed (blocking MPI_Send, or the wait of
//     an MPI_Isend) only after the receive was posted, the receive posted
//     after the send completion was entered: receive post enter − send
//     completion enter, when the send completion exits after it.
//   - Wait at N×N (allreduce, allgather(v), alltoall, reduce_scatter),
//     Wait at Barrier and Wait at Finalize: min(latest enter, own exit) −
//     own enter. MPI_Alltoallv (and Alltoallw) is left out, as Scalasca
//     leaves it (it may be a sparse exchange); Analysis.Alltoallv says how
//     much time that leaves out.
//   - Late Broadcast (bcast, scatter(v)): a receiving member waits for the
//     root's enter. Early Reduce (reduce, gather(v)): the root waits for
//     the latest sending member. Early Scan (scan, exscan): a member waits
//     for the latest member of lower rank.
//
// Collectives without payload other than barriers do not synchronize,
// and are left out. A receive that ends before its send begins, or a
// collective call that ends before a member whose data it receives
// enters (a barrier's last member, an N×N's latest sending member, a 1×N's
// root for its receivers, the latest sending member for an N×1's root or
// for a scan's later members), breaks the clock condition: it is counted
// and its wait clipped to the call. A broadcast's root, a reduction's
// senders and a scan's first members may leave before the last member
// enters.
//
// Synchronization points are the calls where two ranks synchronized: both
// ends of a message with a wait state, every member of a barrier, of
// MPI_Finalize, and of MPI_Init and of an N×N collective whose members all
// overlapped (otherwise the N×N's waiting members and the latest), the
// root and the waiting members of a 1×N or N×1 collective. A wait state at
// synchronization point s on rank w, caused by rank c (the sender, the
// receiver, the latest member or the root), is explained by the
// synchronization interval of the two ranks: from their previous common
// synchronization point (or the trace's first event) to s. On each rank
// the interval's time is folded by activity (a computation or an MPI call,
// in its region of the call tree; the time between calls is computation in
// the region of the call that ends it; before a rank's first event, its
// late start); the previous synchronization point counts only its
// completion time (its time after the earliest of the synchronizing ranks
// left it), and the wait states inside are taken out. The delay is
//
//	δ[k] = max(t_c[k] − t_w[k], 0) for every activity k, D = Σ δ[k],
//
// and W is the waiting time of c's own wait states inside the interval
// (the wait that propagated). With ω the waiting time and ρ the waiting
// the wait state itself caused later (its long-term cost, known because
// the wait states are handled backwards, latest first):
//
//	short-term (direct) cost of k:  min(ω/(D+W), 1) · δ[k]
//	long-term (propagated) cost of k:  ρ/(D+W) · δ[k]
//	each wait state v of c in the interval gets ρ_v += (min(ω/(D+W), 1) + ρ/(D+W)) · ω_v
//
// so that the waiting a delay causes through chains of wait states (a rank
// waits for a late sender, which was late because it waited for another)
// reaches the delay at the start of the chain. Scalasca's collective
// algorithm (Algorithm 1 of the TOPC paper) is this formula applied to
// every waiting member against the latest one; here its scale is bounded
// by 1 as the point-to-point one is, so that no delay is charged more than
// the wait it explains. The part of a wait state that is not delay of its
// causer (a message's transfer, a causer that was itself no later than
// its partner over the interval) is left unexplained and counted.
//
// A wait state's direct part is min(ω/(D+W),1)·D, its indirect part
// min(ω/(D+W),1)·W (Scalasca's direct and indirect wait states).
//
// The critical path (Böhme et al. 2012) starts at the rank that ended last
// and runs back through its execution; at each of its wait states it jumps
// to the rank that caused it, at the moment that rank reached the
// synchronization point. Its profile is the time by rank and activity on
// it; an activity's critical-path imbalance is its time on the path less
// its mean non-waiting time per rank.
//
// The seed authors' traces write a non-blocking call as one span from its
// post to its completion: a run of such spans that start inside one
// another is read as their posts and an implicit MPI_Waitall.
//
// The analysis reads each rank once, keeps per event a few words (its
// times and activity) and per communication call a few more, and works in
// memory proportional to the trace's events. Each wait state costs the
// events of its two intervals and the causer's synchronization points
// since the pair last synchronized: linear in the events for the usual
// codes, where a pair that waits synchronizes there.
package waitstate
