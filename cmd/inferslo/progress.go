package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"
)

// progressFlag silences the progress line of long runs.
type progressFlag struct {
	Quiet bool `short:"q" help:"Show no progress line on stderr (it is shown only when stderr is a terminal)."`
}

// Progress is drawn once a run is older than progressAfter, every
// progressEvery: runs shorter than that print nothing more than before.
const (
	progressAfter = 2 * time.Second
	progressEvery = time.Second
)

// start shows the progress of a run of total units (SLOs, services) on
// stderr, when it is a terminal and --quiet is not given; it returns nil
// otherwise, whose methods do nothing.
func (f progressFlag) start(e *env, label, unit string, total int) *progress {
	if f.Quiet || !isTerminal(e.stderr) {
		return nil
	}
	return startProgress(e.stderr, label, unit, total, progressAfter, progressEvery)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress keeps one line up to date: units done of the total and the time
// elapsed. The line is rewritten in place and erased at the end, so the
// run's own output follows as it would without it.
type progress struct {
	w     io.Writer
	label string
	unit  string
	total int
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	ended sync.WaitGroup
	shown bool // touched by the drawing goroutine only, then by end
}

func startProgress(w io.Writer, label, unit string, total int, after, every time.Duration) *progress {
	p := &progress{w: w, label: label, unit: unit, total: total, start: time.Now(), stop: make(chan struct{})}
	p.ended.Add(1)
	go p.draw(after, every)
	return p
}

func (p *progress) draw(after, every time.Duration) {
	defer p.ended.Done()
	wait := time.NewTimer(after)
	defer wait.Stop()
	select {
	case <-p.stop:
		return
	case <-wait.C:
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		// \r and erase-line rewrite the line in place.
		fmt.Fprintf(p.w, "\r\x1b[K%s: %d/%d %s, %s", p.label, p.done.Load(), p.total, p.unit, time.Since(p.start).Round(time.Second))
		p.shown = true
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
	}
}

// step counts one unit done; safe from several goroutines.
func (p *progress) step() {
	if p != nil {
		p.done.Add(1)
	}
}

// end stops drawing and erases the line.
func (p *progress) end() {
	if p == nil {
		return
	}
	close(p.stop)
	p.ended.Wait()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
