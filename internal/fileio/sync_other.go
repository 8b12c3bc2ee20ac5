//go:build !linux

package fileio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// syncTree makes the files written in directory dir durable before it is
// moved into place: an fsync of each.
func syncTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		return errors.Join(f.Sync(), f.Close())
	})
}
