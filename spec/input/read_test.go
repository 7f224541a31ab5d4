//go:build unix

package input

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestReadRegularRefusesWhatCouldHangOrExhaustARun(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	tests := []struct {
		name, path string
		want       any // nil, *NotRegularError or *TooLargeError
	}{
		{"a file at the limit is read", write("ok", 8), nil},
		{"a file above the limit is too large", write("big", 9), &TooLargeError{}},
		{"a named pipe is not a regular file, and no read waits for a writer", fifo, &NotRegularError{}},
		{"a folder is not a regular file", dir, &NotRegularError{}},
		{"a device is not a regular file", os.DevNull, &NotRegularError{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := ReadRegular(tt.path, 8)
			var notRegular *NotRegularError
			var tooLarge *TooLargeError
			switch tt.want.(type) {
			case nil:
				if err != nil || len(data) != 8 {
					t.Fatalf("read %d bytes, err %v; want 8 bytes", len(data), err)
				}
			case *NotRegularError:
				if !errors.As(err, &notRegular) {
					t.Fatalf("err = %v, want not a regular file", err)
				}
			case *TooLargeError:
				if !errors.As(err, &tooLarge) || tooLarge.Max != 8 {
					t.Fatalf("err = %v, want larger than 8 bytes", err)
				}
			}
		})
	}
}

func TestReadInKeepsLinksInsideTheFolder(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "in")
	for p, data := range map[string]string{"token": "secret", "in/sub/a.yaml": "a"} {
		p = filepath.Join(parent, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{"inside.yaml": "sub/a.yaml", "outside.yaml": "../token", "up": ".."}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Skip(err)
		}
	}
	if b, err := ReadIn(dir, "inside.yaml", 8); err != nil || string(b) != "a" {
		t.Fatalf("a link inside: %q, %v", b, err)
	}
	for _, name := range []string{"outside.yaml", "up/token"} {
		var outside *OutsideError
		if b, err := ReadIn(dir, name, 8); !errors.As(err, &outside) || b != nil {
			t.Fatalf("%s: read %q, err %v; want refused as out of the folder", name, b, err)
		}
	}
}
