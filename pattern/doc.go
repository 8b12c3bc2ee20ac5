// Package pattern turns a trace into a short story: its communication
// patterns, its execution phases, the pattern instances that are
// abnormally slow, who was late in them, and which to look at first. It
// implements the five steps of Alawneh et al., "Detecting and localising
// inefficient communication patterns in HPC traces" (seed paper 002);
// each step is usable on its own.
//
//  1. Process patterns (Detect): each rank's communication calls (sends,
//     receives and collectives; Wait, Test and local calls are not part of
//     patterns) are cut into contexts at every MPI_Waitall and wherever the
//     enclosing user function changes, then (method Iterations, the
//     default) at the iterations of their loops (iterationCuts), and each
//     context is covered left to right by the longest maximal repeat
//     starting there, found in linear time with a suffix array (package
//     suffix). Consecutive blocking receives from distinct partners are
//     compared in one order (a master's receives from any source come in
//     any). A repeat that is an exact power u^m inside a longer context
//     (a loop) is reduced to u. Calls where no maximal repeat starts form a
//     pattern of their own. With Iterations, a rank whose loop is wider
//     than its partners' (each iteration exchanging with several of
//     theirs) is cut at the loop within it instead (refine), and each
//     rank's runs of iterations are then turned to pair with its
//     partners' (align). A long context is also cut at its loops over
//     partners, which its symbols, holding the partners, do not show
//     (peerCuts: a latency test's round trips with each rank in turn).
//     A context still longer than longContext calls is cut at the
//     iterations of loops that leave requests pending too (a
//     message-driven program's, which completes its sends many
//     iterations later).
//  2. Communication patterns (Detect): process-pattern instances are
//     linked through matched messages (MPI's non-overtaking order per
//     source, destination, communicator and tag) and the k-th collective
//     of each communicator; each linked set is one instance, but for a
//     set in which a rank has more than chainTiles instances, a chain of
//     a program driven by its messages (a master handing out tasks in the
//     order results come): its links are made again in the order of their
//     receives, each where the two sets it joins hold no rank in common
//     (unchain). Instances
//     whose ranks make the same calls (a sorted multiset per rank, as the
//     authors' tool compares them) share a pattern, numbered CP1, CP2...
//     in order of first appearance. Instances are ordered by their first
//     call's Enter, or by Lamport clocks in an untimed trace; ties go to
//     the lower rank.
//  3. Phases (Split): recursive segmentation of the pattern sequence at
//     the maximum Jensen-Shannon divergence, while the AIC or BIC
//     segmentation strength is positive, within a depth and a minimum
//     length. Entropies use natural logarithms, consistent with the K ln N
//     of BIC. The search for a split point is linear in the segment's
//     length: entropy sums are updated one symbol at a time. With
//     Iterations, instances weigh half by count and half by time
//     (SplitWeighted, timeWeights) and the tree grows best first up to a
//     number of phases (SegmentOptions.MaxPhases); Paper is the paper's
//     AIC, counts and depth 3.
//  4. Slow instances (FindSlow): within each (pattern, total bytes) group
//     over the whole trace, the modified Z-score M = 0.6745 (x − x̃)/MAD
//     with cut-off 3.5. Medians are lower medians (element ⌊(n−1)/2⌋ of
//     the sorted sample), for x̃ and for MAD, as Table 7's patterns A and
//     B require. When MAD is 0, M = (x − x̃)/(1.253314 · MeanAD), Iglewicz
//     and Hoaglin's fallback; when every value equals the median, M is 0.
//     The last process to start (the rank whose first call in the
//     instance begins last) is the late one: a late process if it calls a
//     collective in the instance, else a late sender if it sends (the
//     others wait for its messages), else a late receiver. On the authors'
//     SMG2000 trace this gives 630 late receivers where the paper reports
//     632.
//  5. Inspection affinity (Classify): AHP per phase over the slow
//     instances, with severity (duration ÷ bytes) and complexity
//     (processes × events) as criteria, ratio comparison matrices and
//     principal-eigenvector weights (power method); the angle of
//     (complexity, severity) above 60° is High, below 30° Low.
//
// Times: an instance runs from its first call's entry to its last call's
// completion; a non-blocking call completes at the exit of the Wait or
// Waitall that completes its request, as the paper's Isend..IsendComplete
// and IrecvRequest..Irecv spans do.
//
// The trace model records the user function each call is made from, not
// the function's entries and exits: two back-to-back calls of the same
// function with no MPI_Waitall between them form one context.
package pattern
