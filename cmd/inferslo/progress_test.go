package main

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer the drawing goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestProgressLine(t *testing.T) {
	t.Run("a long run shows units done of the total, then erases the line", func(t *testing.T) {
		var w lockedBuffer
		p := startProgress(&w, "inferslo test", "SLOs done", 3, 0, time.Millisecond)
		p.step()
		p.step()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(w.String(), "inferslo test: 2/3 SLOs done, "); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no 2/3 line in %q", w.String())
			}
		}
		p.end()
		if got := w.String(); !strings.HasPrefix(got, "\r\x1b[K") || !strings.HasSuffix(got, "\r\x1b[K") {
			t.Fatalf("line not drawn in place and erased: %q", got)
		}
	})
	t.Run("a run shorter than the delay prints nothing", func(t *testing.T) {
		var w lockedBuffer
		p := startProgress(&w, "inferslo test", "SLOs done", 3, time.Hour, time.Millisecond)
		p.step()
		p.end()
		if w.String() != "" {
			t.Fatalf("printed %q", w.String())
		}
	})
	t.Run("stderr that is not a terminal gets no progress", func(t *testing.T) {
		var w bytes.Buffer
		p := (progressFlag{}).start(&env{stderr: &w}, "inferslo test", "SLOs done", 3)
		if p != nil {
			t.Fatal("progress started on a buffer")
		}
		p.step()
		p.end()
		if w.Len() != 0 {
			t.Fatalf("printed %q", w.String())
		}
	})
	t.Run("a terminal gets progress unless --quiet", func(t *testing.T) {
		tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
		if err != nil {
			t.Skip("no pseudo-terminal:", err)
		}
		defer tty.Close()
		p := (progressFlag{}).start(&env{stderr: tty}, "inferslo test", "SLOs done", 3)
		if p == nil {
			t.Fatal("no progress on a terminal")
		}
		p.end()
		if p := (progressFlag{Quiet: true}).start(&env{stderr: tty}, "inferslo test", "SLOs done", 3); p != nil {
			t.Fatal("progress started with --quiet")
		}
	})
}
