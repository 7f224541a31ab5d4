//go:build unix

package artifact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestATemporaryFolderOfALiveRunIsKept(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	live, lock, err := LockedTemp(parent, tmpPrefix(dir)+"*")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	writeTree(t, live, map[string]string{"prometheus/a.yaml": "half"})
	if err := (Set{{Path: "a.yaml", Data: []byte("a: 1\n")}}).Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(live, "prometheus/a.yaml")); got != "half" {
		t.Fatalf("the live run's file reads %q", got)
	}
}

// A run killed outright leaves its stage and its lock file; neither is
// held any more, so the next run takes the lock and removes the stage.
func TestTheNextRunCleansWhatAKilledRunLeft(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	st, err := NewStage(dir, "compile")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Add(File{Path: "a.yaml", Data: []byte("a: 1\n")}); err != nil {
		t.Fatal(err)
	}
	// What the system does for a killed process: its files close.
	st.lock.f.Close()
	st.tmpLock.f.Close()
	if err := (Set{{Path: "b.yaml", Data: []byte("b: 1\n")}}).Write(dir, "compile"); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "out" {
		t.Fatalf("beside the output: %v, want only out", entries)
	}
}

func TestASecondWriterWaitsThenFailsNamingTheLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".out.lock")
	held, err := lockFile(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockFile(path, 3*lockPoll)
	var busy *BusyError
	if !errors.As(err, &busy) || busy.Path != path {
		t.Fatalf("err = %v, want the lock busy", err)
	}
	held.Release()
	again, err := lockFile(path, 0)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again.Release()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the lock file stays after release: %v", err)
	}
}

func TestSuccessNeedsTheFolderToMatchItsMarker(t *testing.T) {
	s := Set{{Path: "a.yaml", Data: []byte("a: 1\n")}, {Path: "b.yaml", Data: []byte("b: 1\n")}}
	paths := []string{"a.yaml", "b.yaml"}
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string
	}{
		{"another run's marker", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{Marker: "command compile\nfile a.yaml\n"})
		}, "replaced by another run"},
		{"a missing file", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "b.yaml"))
		}, "lacks b.yaml"},
		{"a file added", func(t *testing.T, dir string) {
			writeTree(t, dir, map[string]string{"c.yaml": "c: 1\n"})
		}, "(c.yaml)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			if err := s.Write(dir, "compile"); err != nil {
				t.Fatal(err)
			}
			if err := verifyOutput(dir, "compile", paths); err != nil {
				t.Fatalf("a whole output: %v", err)
			}
			tt.change(t, dir)
			if err := verifyOutput(dir, "compile", paths); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestALinkAtTheLockPathIsRefusedAtOnceAndItsTargetNeverCreated(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere", "planted")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, to string }{
		{"a link to a path that does not exist", target},
		{"a link to a folder", filepath.Dir(target)},
		{"a link to itself", ".out.lock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, ".out.lock")
			os.Remove(path)
			if err := os.Symlink(c.to, path); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			l, err := lockFile(path, time.Second)
			if err == nil {
				l.Release()
				t.Fatal("a link at the lock path was taken as the lock")
			}
			if !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("err = %v, want the lock named as not a regular file", err)
			}
			if d := time.Since(start); d > 500*time.Millisecond {
				t.Errorf("refusing took %s, want at once", d)
			}
			if _, err := os.Lstat(target); !os.IsNotExist(err) {
				t.Errorf("the link's target was created: %v", err)
			}
		})
	}
}
