package compiler_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/inferslo/inferslo/compiler"
	"github.com/inferslo/inferslo/compiler/artifact"
	"github.com/inferslo/inferslo/compiler/internal/bench"
	"github.com/inferslo/inferslo/spec"
)

// BenchmarkCompile parses, validates, compiles and writes a fleet of SLOs
// as `inferslo compile` does, each artifact staged as it is built. Besides
// time it reports CPU time (the figure that holds on a busy machine) and the
// peak heap.
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) { benchmarkCompile(b, n) })
	}
}

// BenchmarkCompile10kSLOs is BenchmarkCompile at fleet scale alone, the
// figure the compile goal is stated in (10,000 SLOs under 5 s of wall time
// and 300 MB on 2 cores): run it with -benchtime 1x -cpu 2.
func BenchmarkCompile10kSLOs(b *testing.B) { benchmarkCompile(b, 10000) }

func benchmarkCompile(b *testing.B, n int) {
	sources := bench.Fleet(n)
	dir := benchDir(b)
	bench.Measure(b, n, func(i int) {
		st, err := artifact.NewStage(filepath.Join(dir, fmt.Sprint(i)), "compile")
		if err != nil {
			b.Fatal(err)
		}
		compileFleetTo(b, sources, st.Add)
		if err := st.Commit(); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkCompileCheck is `inferslo compile --check` on an up-to-date
// output folder: compile, then compare instead of write.
func BenchmarkCompileCheck(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("slos=%d", n), func(b *testing.B) {
			sources := bench.Fleet(n)
			dir := filepath.Join(benchDir(b), "out")
			st, err := artifact.NewStage(dir, "compile")
			if err != nil {
				b.Fatal(err)
			}
			compileFleetTo(b, sources, st.Add)
			if err := st.Commit(); err != nil {
				b.Fatal(err)
			}
			bench.Measure(b, n, func(int) {
				cmp, err := artifact.NewComparison(dir, "compile")
				if err != nil {
					b.Fatal(err)
				}
				compileFleetTo(b, sources, cmp.Add)
				diff, err := cmp.Diff()
				if err != nil {
					b.Fatal(err)
				}
				if len(diff) > 0 {
					b.Fatalf("output is stale:\n%s", diff)
				}
			})
		})
	}
}

// benchDir is a fresh folder for a benchmark's output, below
// INFERSLO_BENCH_DIR when set. Creating a thousand files costs from 35 ms on
// a tmpfs to most of a second on a busy virtual disk: a tmpfs (/dev/shm)
// measures inferslo rather than the disk.
func benchDir(b *testing.B) string {
	root := os.Getenv("INFERSLO_BENCH_DIR")
	if root == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(root, "inferslo-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// BenchmarkValidate is `inferslo validate`: decode, expand, resolve and
// check every spec.
func BenchmarkValidate(b *testing.B) {
	const n = 10000
	sources := bench.Fleet(n)
	bench.Measure(b, n, func(int) {
		res, err := spec.Parse(sources...)
		if err != nil {
			b.Fatal(err)
		}
		if err := res.Err(); err != nil {
			b.Fatal(err)
		}
	})
}

// compileFleetTo compiles as the command does, each artifact to add, the
// collector tuned as the command tunes it.
func compileFleetTo(b *testing.B, sources []spec.Source, add func(artifact.File) error) {
	res, err := spec.Parse(sources...)
	if err != nil {
		b.Fatal(err)
	}
	if err := res.Err(); err != nil {
		b.Fatal(err)
	}
	defer compiler.TuneGC(len(res.Set.SLOs))()
	if err := compiler.CompileTo(res.Set, compiler.Options{}, add); err != nil {
		b.Fatal(err)
	}
}
