package dumpi

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"kairos/internal/testenv"
)

// recordTableErrors are the labels where ../shared/formats/dumpi-record-table.txt
// disagrees with sst-dumpi's readers (dumpi/common/dumpiio.c), which the
// layouts follow.
var recordTableErrors = map[string]string{
	"DUMPI_Gatherv":        "the table adds a root-only recvtype that dumpiio.c has commented out; recvtype is read once, by every rank",
	"DUMPI_Dims_create":    "the table omits the dims.in and dims.out arrays the reader reads after ndim",
	"DUMPI_Init_thread":    "the table reads argv as str[] plus a second argc; the reader reads argc, then argc strings, then the thread levels",
	"DUMPI_Init":           "the table writes argv informally; the reader reads argc (twice before 0.6.2), then argc strings",
	"DUMPI_Type_struct":    "version-dependent field, noted in the table's prose",
	"DUMPI_Cart_get":       "version-dependent field, noted in the table's prose",
	"DUMPI_Function_enter": "named without the MPI_ prefix in both",
}

// TestLayoutsMatchRecordTable compares every layout with the shared record
// table, field types in order, except where the table is known wrong.
func TestLayoutsMatchRecordTable(t *testing.T) {
	path := testenv.Shared(t, "formats/dumpi-record-table.txt")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile(`^\s*(\d+) (\S+)\s+(.*)$`)
	typ := regexp.MustCompile(`[\w.]+:([a-z0-9\[\]]+)`)
	seen := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		label, _ := strconv.Atoi(m[1])
		seen++
		if label >= len(layouts) {
			t.Errorf("label %d beyond the layouts", label)
			continue
		}
		var want []string
		for _, x := range typ.FindAllStringSubmatch(m[3], -1) {
			want = append(want, strings.Replace(x[1], "status[]", "status", 1))
		}
		var got []string
		if layouts[label].fields != "-" {
			for _, fld := range strings.Fields(layouts[label].fields) {
				_, ty, _ := strings.Cut(fld, ":")
				ty, _, _ = strings.Cut(ty, "!")
				ty, _, _ = strings.Cut(ty, "@")
				got = append(got, ty)
			}
		}
		differs := strings.Join(got, " ") != strings.Join(want, " ")
		name := m[2]
		if !strings.HasSuffix(name, strings.TrimPrefix(strings.TrimPrefix(layouts[label].name, "MPIO_"), "MPI_")) {
			t.Errorf("label %d: %s in the table, %s here", label, name, layouts[label].name)
		}
		why, known := recordTableErrors[name]
		switch {
		case differs && !known:
			t.Errorf("label %d %s: layout %v, record table %v", label, name, got, want)
		case !differs && known && !strings.Contains(why, "prose") && !strings.Contains(why, "prefix"):
			t.Errorf("label %d %s: listed as a table error but agrees", label, name)
		}
	}
	if seen != len(layouts) {
		t.Errorf("record table has %d labels, layouts %d", seen, len(layouts))
	}
}

// TestCompileRejects checks the layout parser's own errors.
func TestCompileRejects(t *testing.T) {
	for _, s := range []string{"x", "x:float", "a:str*", "a:i32 a:i32", "a:i32!root", "a:i32@1", "a:u16@069"} {
		if _, err := compile("t", s); err == nil {
			t.Errorf("%q compiled", s)
		}
	}
}
