package format_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kairos/format"
	_ "kairos/format/alawneh"
	_ "kairos/format/dumpi"
	_ "kairos/format/rsd"
)

// TestUnknownFormatMessages: a file or directory that no format
// recognises gets an error that says which format it nearly is (the
// byte of its magic that differs, and what was expected), or what it
// starts with and what each format's files start with.
func TestUnknownFormatMessages(t *testing.T) {
	ktr := "\x89KTR\r\n\x1a\n\x01\x00\x00\x00"
	pad := strings.Repeat("\x00", 40)
	const every = `expected one of alawneh: a line "OPERATION RANK t1 T1 t2 T2 ..." or "DEL<n>" (a file Process<r>.txt); ` +
		`dumpi: a .bin file starts with the magic "\xff\xaa\xddDUMPI", a .meta file with key=value lines, numprocs= among them; ` +
		`ktr: the magic "\x89KTR\r\n\x1a\n"; ` +
		`otf2: an anchor file (traces.otf2) starts with 0x03, the byte order (0x42 or 0x23) and "OTF2\x00"; ` +
		`rsd: the magic "\x89KRS\r\n\x1a\n"; ` +
		`ti: a line "RANK ACTION ...", such as "0 init" (a shared or a rank's file), or a rank's file name a line (a description)`
	for _, c := range []struct {
		name, file, content string
		want                string // after "PATH: not a trace in any format Kairos reads: "; DIR is the test's directory
	}{
		{"ktr byte 3", "x.ktr", "\x89KT\xad" + ktr[4:] + pad,
			`nearly a trace of format ktr: byte 3 is 0xad, expected 0x52, in the magic "\x89KTR\r\n\x1a\n" (a damaged file?)`},
		{"ktr two bytes", "x.ktr", "\x00K\x00R" + ktr[4:] + pad,
			`nearly a trace of format ktr: byte 0 is 0x00, expected 0x89, byte 2 is 0x00, expected 0x54, in the magic "\x89KTR\r\n\x1a\n" (a damaged file?)`},
		{"ktr 7-bit", "x.ktr", "\x09" + ktr[1:] + pad,
			`nearly a trace of format ktr: byte 0 is 0x09, expected 0x89 (its high bit cleared: a 7-bit transfer?), in the magic "\x89KTR\r\n\x1a\n" (a damaged file?)`},
		{"ktr text mode", "x.ktr", "\x89KTR\n\x1a\n\x01\x00" + pad,
			`nearly a trace of format ktr: the magic "\x89KTR\r\n\x1a\n" has its \r\n turned into \n (a text-mode transfer?)`},
		{"ktr truncated", "x.ktr", "\x89KTR",
			`nearly a trace of format ktr: the file's 4 bytes are the first of the magic "\x89KTR\r\n\x1a\n" (truncated?)`},
		{"rsd byte 2, nearer rsd than ktr", "x.rsd", "\x89K\xadS\r\n\x1a\n" + pad,
			`nearly a trace of format rsd: byte 2 is 0xad, expected 0x52, in the magic "\x89KRS\r\n\x1a\n" (a damaged file?)`},
		{"otf2 anchor byte order", "traces.otf2", "\x03\x00OTF2\x00" + pad,
			`nearly a trace of format otf2: byte 1 is 0x00, expected 0x42, in the magic "\x03BOTF2\x00" (a damaged file?)`},
		{"dumpi bin truncated", "a-0000.bin", "\xff\xaa\xdd",
			`nearly a trace of format dumpi: the file's 3 bytes are the first of the magic "\xff\xaa\xddDUMPI" (truncated?)`},
		{"otf2 definitions file", "traces.def", "\x03\x42" + pad,
			`an OTF2 definitions file, one part of an archive: give the archive's anchor file, DIR/traces.otf2, or its directory`},
		{"otf2 events file", "traces/0.evt", "\x03\x42" + pad,
			`an OTF2 events file, one part of an archive: give the archive's anchor file, DIR/traces.otf2, or its directory`},
		{"dumpi meta renamed", "run.ti", "hostname=h\nnumprocs=4\nfileprefix=run\n",
			`the lines of a DUMPI .meta file (numprocs=, fileprefix=) in a file not named .meta: Kairos reads a DUMPI trace by its .meta file, its directory or a .bin file`},
		{"dumpi meta without numprocs", "run.meta", "hostname=h\nnumprocz=4\n",
			`a .meta file without a numprocs= line: expected DUMPI's key=value lines, numprocs= (the number of ranks) among them`},
		{"ti action", "x.ti", "0 inxt\n0 finalize\n",
			`line 1 reads as a TI action of rank 0, but for its action: expected a SimGrid 3.32 action name (init, send, recv, compute, ...), got "inxt"`},
		{"alawneh rank file", "Process0.txt", "\x00EL1\nSend 1 t1 1 t2 2 t 0 l 1 m 0\n",
			`named as a rank's file of an alawneh trace (Process<r>.txt), but line 1: expected an operation, a rank and key-value pairs, got 1 fields`},
		{"zeros named .ktr", "x.ktr", "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
			`it starts with "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" (00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00); expected, as its name ends in .ktr, a ktr trace: the magic "\x89KTR\r\n\x1a\n"`},
		{"a zip file", "x.zip", "PK\x03\x04\x14\x00",
			`it starts with "PK\x03\x04\x14\x00" (50 4b 03 04 14 00); ` + every},
		{"empty directory", "d/", "",
			`a directory holding no trace directly inside it; a directory read as a trace holds alawneh: Process0.txt, Process1.txt ...; ` +
				`dumpi: a .meta file and its <prefix>-NNNN.bin files, or the .bin files alone; otf2: traces.otf2; ti: index.txt (a description, as kairos tracer writes)`},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, c.file)
		if strings.HasSuffix(c.file, "/") {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		} else {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if strings.HasSuffix(c.file, ".def") || strings.HasSuffix(c.file, ".evt") {
			os.WriteFile(filepath.Join(dir, "traces.otf2"), []byte("\x03\x42OTF2\x00"), 0o644)
		}
		_, err := format.Detect(path)
		want := path + ": " + format.ErrUnknownFormat.Error() + ": " + strings.ReplaceAll(c.want, "DIR", dir)
		if !errors.Is(err, format.ErrUnknownFormat) || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", c.name, err, want)
		}
	}
}
