package dumpi

// lCancel is MPI_Cancel's label.
const lCancel = 24

// wildcardSource finds the source of a wildcard Irecv: it decodes this
// rank's following records, from the byte after the Irecv, up to the
// first completion of the Irecv's request, and returns the source of that
// completion's stored status (a rank of the Irecv's communicator). It
// returns false if the completion stores no status, if the request is
// never completed, or if its id is reused first; and cancelled true if
// the completion's status says the receive was cancelled, or, where it
// stores none, if the program called MPI_Cancel on it before (HPCC
// cancels its pending receives from any source, and waits for them with
// MPI_STATUS_IGNORE). The look-ahead costs a second decoding of the
// records between an Irecv and its completion, and a small buffer;
// nothing is kept.
func (r *Reader) wildcardSource(req int64) (src int32, ok, cancelled bool) {
	d := newDecoderAt(r.f, r.d.info, r.d.pos(), 16<<10)
	asked := false
	for d.next() {
		c := &d.c
		if startsAgain(c, req) {
			return 0, false, false // the id is started again: never completed
		}
		if c.label == lCancel && c.v[programs()[lCancel].idx[fRequest]] == req {
			asked = true
		}
		if st, found := completedStatus(c, req); found {
			return st.source, st.ok, st.cancelled || !st.ok && asked
		}
	}
	return 0, false, false
}

// p2pOf returns the point-to-point fields of label, nil if it is not one.
func p2pOf(label int) *p2pFields {
	if label < lIrecv+1 {
		return p2p()[label]
	}
	return nil
}

// foundStatus is the status a completion stores for a request.
type foundStatus struct {
	source    int32
	ok        bool // a status is stored
	cancelled bool // and says the request was cancelled
}

// completedStatus reports whether completion c completes request req,
// and with which stored status.
func completedStatus(c *call, req int64) (foundStatus, bool) {
	p := &programs()[c.label]
	get := func(n fieldName) int64 { return c.v[p.idx[n]] }
	arr := func(n fieldName) []int32 { return c.arr[p.idx[n]] }
	status := func(k int) (foundStatus, bool) {
		if k < len(c.statuses) && c.statuses[k].cancelled != 0 {
			return foundStatus{ok: true, cancelled: true}, true
		}
		if k < len(c.statuses) && c.statuses[k].source >= 0 {
			return foundStatus{source: c.statuses[k].source, ok: true}, true
		}
		return foundStatus{}, true
	}
	flag := int64(1)
	if i := p.idx[fFlag]; i >= 0 {
		flag = c.v[i]
	}
	if flag == 0 {
		return foundStatus{}, false
	}
	switch c.label {
	case lWait, lTest:
		if get(fRequest) == req {
			return status(0)
		}
	case lWaitany, lTestany:
		reqs, i := arr(fRequests), get(fIndex)
		if i >= 0 && i < int64(len(reqs)) && int64(reqs[i]) == req {
			return status(0)
		}
	case lWaitall, lTestall:
		for k, h := range arr(fRequests) {
			if int64(h) == req {
				return status(k)
			}
		}
	case lWaitsome, lTestsome:
		reqs := arr(fRequests)
		for k, i := range arr(fIndices) {
			if i >= 0 && int(i) < len(reqs) && int64(reqs[i]) == req {
				return status(k)
			}
		}
	}
	return foundStatus{}, false
}
