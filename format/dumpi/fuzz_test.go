package dumpi

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"kairos/internal/testenv"
	"kairos/trace"
)

// fuzzSeeds returns the seed corpus: every rank file of the shared samples
// (read at test time, never copied into the repository) and synthetic
// files covering the layouts the samples lack.
func fuzzSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{smallBin()}
	w := newBinWriter()
	w.call(lCommSplit, commWorld, 0, 0, 4)
	w.call(lRecv, 1, 14, -1, 0, 4, []status{{bytes: 8}})
	w.call(lGatherv, 0, 1, 1, 5, 0, 4, []int32{1}, []int32{0}, 5)
	w.call(lGroupRangeIncl, 3, 1, []int32{0, 0, 1}, 5)
	w.call(lCommSpawnMultiple, 2, 0, 0, commWorld, 6, 1, []string{"a"}, [][]string{{"-x", "1"}}, []int32{1}, []int32{0}, []int32{0})
	w.call(lTypeStruct, 1, []int32{2}, []int32{0}, []int32{9}, 28)
	w.call(labelFunctionEnter, 0x400000)
	seeds = append(seeds, w.finish())
	// MPI-IO: an open, a non-blocking write and its wait, a split read.
	w = newBinWriter()
	w.call(lFileOpen, commWorld, "f", 0, 0, 5)
	w.call(lFileOpen, commSelf, "g", 0, 0, 6)
	w.call(253, 5, 4, 9, 7) // MPI_File_iwrite
	w.call(lWait, 7, nil)
	w.call(269, 6, 2, 12) // MPI_File_read_all_begin
	w.call(270, 6, nil)   // MPI_File_read_all_end
	w.call(231, 5)        // MPI_File_close
	seeds = append(seeds, w.finish())
	// Issue 43: a corrupt count, -255 elements of 4 bytes.
	w = newBinWriter()
	w.call(lRecv, -255, 6, 0, 0, commWorld, []status{{bytes: 8}})
	w.call(lSend, -1, 5, 0, 0, commWorld)
	seeds = append(seeds, w.finish())
	shared := os.Getenv("KAIROS_SHARED")
	if shared == "" {
		shared = filepath.Join(testenv.RepoRoot(), "..", "shared")
	}
	if _, err := os.Stat(shared); err != nil && !testenv.Required() {
		return seeds // the samples are absent: synthetic seeds only
	}
	for _, name := range samples {
		files, _ := filepath.Glob(filepath.Join(testenv.Shared(t, "traces/dumpi/"+name), "*.bin"))
		for _, p := range files[:min(2, len(files))] {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// Labels only the fuzz seeds use.
const lCommSpawnMultiple = 136

// FuzzBin opens arbitrary bytes as a one-rank DUMPI trace and reads it.
// It must never panic nor allocate beyond the input's size; an error must
// be a located *FormatError or name the file.
func FuzzBin(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src, err := openFiles(1, []rankFile{{path: "fuzz-0000.bin"}}, memOpener(data))
		if err == nil {
			err = trace.ForEach(src, func(int, int, *trace.Event) error { return nil })
		}
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("unlocated error: %v", err)
		}
	})
}

// memFile serves a .bin file from memory.
type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }

// memOpener opens every path as data.
func memOpener(data []byte) opener {
	return func(string) (binFile, int64, error) {
		return memFile{bytes.NewReader(data)}, int64(len(data)), nil
	}
}
