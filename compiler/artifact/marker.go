package artifact

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/inferslo/inferslo/spec/input"
)

// Marker is the file that marks a folder as inferslo output. It names the
// command that wrote the folder and every file it wrote; Write replaces a
// non-empty folder only when the marker is there, names the same command and
// lists every file the folder holds, so `-o .` cannot wipe a repository and a
// file a user added is never deleted.
const Marker = input.OutputMarker

// maxMarkerSize bounds the marker read: a marker lists file paths.
const maxMarkerSize = 1 << 20

// marker is what a marker file records.
type marker struct {
	// command is the command's name ("compile"); line the whole command
	// as written, with the flags that shaped the output
	// ("compile --tests --namespace mon").
	command, line string
	files         map[string]bool
}

// commandName is the name of a command written with its flags: "compile"
// of "compile --tests". The flags never stop a run replacing its own
// output; they are recorded so that a check can repeat them.
func commandName(line string) string {
	name, _, _ := strings.Cut(line, " ")
	return name
}

// RecordedCommand returns the command, with its flags, that wrote the
// output folder dir, as its marker records it ("compile --tests"), or ""
// when dir holds no marker.
func RecordedCommand(dir string) string {
	m, err := readMarker(dir)
	if err != nil {
		return ""
	}
	return m.line
}

// parseMarker reads a marker. A marker of an earlier inferslo lists bare
// paths and no command: a folder holding only index.html was rendered, any
// other was compiled.
func parseMarker(data []byte) marker {
	m := marker{files: map[string]bool{}}
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "command "):
			m.line = strings.TrimPrefix(line, "command ")
			m.command = commandName(m.line)
		case strings.HasPrefix(line, "file "):
			m.files[strings.TrimPrefix(line, "file ")] = true
		default:
			m.files[line] = true
		}
	}
	if m.command == "" {
		m.command = "compile"
		if len(m.files) == 1 && m.files["index.html"] {
			m.command = "render"
		}
		m.line = m.command
	}
	return m
}

func readMarker(dir string) (marker, error) {
	p := filepath.Join(dir, Marker)
	info, err := os.Lstat(p)
	if err != nil {
		return marker{}, err
	}
	// A link is no marker: inferslo writes the marker itself.
	if !info.Mode().IsRegular() {
		return marker{}, fmt.Errorf("%s is not a marker inferslo wrote", p)
	}
	data, err := input.ReadRegular(p, maxMarkerSize)
	if err != nil {
		return marker{}, fmt.Errorf("%s is not a marker inferslo wrote: %w", p, err)
	}
	return parseMarker(data), nil
}

// checkReplaceable refuses to replace dir unless it is missing, empty, or
// wholly the output of an earlier run of the same command. The refusal
// names up to show files inferslo did not write (all when show < 0).
func checkReplaceable(dir, command string, show int) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("output folder: %w", err)
	}
	if !info.IsDir() {
		return fmt.Errorf("output %s is not a folder; choose a new or empty folder", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read output folder: %w", err)
	}
	if len(entries) == 0 {
		return nil
	}
	m, err := readMarker(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("output folder %s is not empty and was not written by inferslo (no %s file); choose an empty or new folder", dir, Marker)
	}
	if err != nil {
		return fmt.Errorf("output folder %s: %w", dir, err)
	}
	if m.command != commandName(command) {
		return fmt.Errorf("output folder %s was written by `inferslo %s`; `inferslo %s` does not replace it: choose another folder", dir, m.command, commandName(command))
	}
	foreign, err := foreignFiles(dir, m)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return fmt.Errorf("output folder %s holds files inferslo did not write (%s); move them out or choose another folder", dir, strings.Join(limitList(foreign, show), ", "))
	}
	return nil
}

// foreignFiles lists what dir holds that the marker does not: files it does
// not name, links and anything that is neither file nor folder.
func foreignFiles(dir string, m marker) ([]string, error) {
	var foreign []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			return nil
		case rel == Marker:
		case !d.Type().IsRegular() || !m.files[rel]:
			foreign = append(foreign, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read output folder: %w", err)
	}
	sort.Strings(foreign)
	return foreign, nil
}

// limitList shortens a list of names for a message to show names, and
// keeps it whole when show < 0.
func limitList(names []string, show int) []string {
	if show < 0 || len(names) <= show {
		return names
	}
	return append(names[:show:show], fmt.Sprintf("and %d more", len(names)-show))
}
