package artifact

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
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
