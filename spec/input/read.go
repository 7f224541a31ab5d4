// Package input reads the files inferslo is handed (specs, templates, rule
// files, catalogs, scrapes) and the outputs it compares, with one set of
// guards: regular files only, bounded in size, and links kept inside the
// folder they were found in. It imports nothing of inferslo, so the front
// end and the backends share it.
package input

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NotRegularError is a path that is not a regular file: inferslo reads
// only those, so that a FIFO or a device can neither hang nor exhaust a run.
type NotRegularError struct {
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("not a regular file (%s)", fileKind(e.Mode))
}

// TooLargeError is a file above the size a read allows.
type TooLargeError struct {
	Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("larger than %s", sizeText(e.Max))
}

// ReadRegular reads a regular file of at most max bytes. The file is opened
// without blocking and checked again once open, so a FIFO, a device or a
// file swapped in between is refused rather than read.
func ReadRegular(name string, max int64) ([]byte, error) {
	info, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(info, max); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(info, max); err != nil {
		return nil, err
	}
	// Sized by the file: one allocation when it does not grow meanwhile.
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > max {
		return nil, &TooLargeError{Max: max}
	}
	return buf.Bytes(), nil
}

func checkRegular(info fs.FileInfo, max int64) error {
	if !info.Mode().IsRegular() {
		return &NotRegularError{Mode: info.Mode()}
	}
	if info.Size() > max {
		return &TooLargeError{Max: max}
	}
	return nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	default:
		return "type " + m.Type().String()
	}
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OutsideError is a symbolic link in a folder that leads out of it.
type OutsideError struct {
	Dir string
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("a symbolic link out of folder %s", e.Dir)
}

// ReadIn reads the file name below the folder dir as ReadRegular does, and
// refuses it when it (or a folder on the way) is a symbolic link leading
// out of dir: a folder of specs, templates or rules handed to inferslo
// cannot make it read, and report, a file elsewhere (a token, /etc/passwd).
// Links that stay inside dir are followed.
func ReadIn(dir, name string, max int64) ([]byte, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	target, err := filepath.EvalSymlinks(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	if !Within(root, target) {
		return nil, &OutsideError{Dir: dir}
	}
	return ReadRegular(target, max)
}

// Within reports whether target lies inside the folder dir (both absolute
// or both relative to the same directory).
func Within(dir, target string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	target, err = filepath.Abs(target)
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(dir, target)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// ReadInput reads a file inferslo was handed, named what ("spec",
// "template", ...) in errors, with ReadRegular's guards; in is the folder
// it was found in, whose links it may not leave, or "" for a file named on
// the command line, which is read wherever it points. Errors name the file
// and what would be valid.
func ReadInput(what, in, name string, max int64) ([]byte, error) {
	var data []byte
	var err error
	p := name
	if in == "" {
		data, err = ReadRegular(name, max)
	} else {
		p = filepath.Join(in, name)
		data, err = ReadIn(in, name, max)
	}
	var notRegular *NotRegularError
	var tooLarge *TooLargeError
	var outside *OutsideError
	switch {
	case errors.As(err, &notRegular):
		return nil, fmt.Errorf("%s %s is %v; only regular files are read", what, p, err)
	case errors.As(err, &tooLarge):
		return nil, fmt.Errorf("%s %s is %v; a %s is at most that", what, p, err, what)
	case errors.As(err, &outside):
		return nil, fmt.Errorf("%s %s is %v; refusing to read it", what, p, err)
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	return data, nil
}

// OutputMarker is the file that marks a folder as inferslo's output (the
// artifact package writes it with the list of files it wrote).
const OutputMarker = ".inferslo"

// IsOutput says whether a folder is inferslo's output: it holds the marker
// as a regular file.
func IsOutput(dir string) bool {
	info, err := os.Lstat(filepath.Join(dir, OutputMarker))
	return err == nil && info.Mode().IsRegular()
}
