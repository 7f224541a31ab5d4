// Command inferslo compiles SLO specs for LLM serving into Prometheus rules,
// burn-rate alerts, Grafana dashboards and KEDA ScaledObjects.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"

	"github.com/alecthomas/kong"
	kongcompletion "github.com/jotaen/kong-completion"

	"github.com/inferslo/inferslo/compiler/simulate/prom"
)

// Exit codes.
const (
	exitOK       = 0
	exitProblems = 1 // spec problems, stale artifacts, failed checks
	exitUsage    = 2 // bad command line
	exitUnknown  = 2 // budget: the gate could not read the budget
)

// cli is the command tree; each command lives in its own file.
type cli struct {
	Compile  compileCmd  `cmd:"" help:"Compile specs into rules, alerts and dashboards in an output folder."`
	Validate validateCmd `cmd:"" help:"Check specs and report every problem; writes nothing."`
	Export   exportCmd   `cmd:"" help:"Print specs as plain OpenSLO v1 (the shorthand expanded)."`
	Import   importCmd   `cmd:"" help:"Convert Sloth and Pyrra specs into OpenSLO v1, saying what changes in meaning."`
	Test     testCmd     `cmd:"" help:"Prove the alerts: replay burns through Prometheus' rule engine and check every SLO and tier."`
	Render   renderCmd   `cmd:"" help:"Render the dashboards over a simulated incident as one static HTML page for review."`
	Backtest backtestCmd `cmd:"" help:"Replay the alerts over real history read from Prometheus: what the SLOs would have said, and the budget spent."`
	Report   reportCmd   `cmd:"" help:"Report a calendar month or quarter from real history: per SLO and group the SLI, the budget spent, the alert intervals and the worst hours (backtest over the period)."`
	Budget   budgetCmd   `cmd:"" help:"Print the error budget every SLO and group has left, read from the compiled rules running in Prometheus; --fail-below gates a release on it."`
	Plan     planCmd     `cmd:"" help:"Print the capacity plan: replicas needed at peak, with the arithmetic."`
	Lint     lintCmd     `cmd:"" help:"Lint PromQL in rule files, dashboards, ScaledObjects and specs, with engine and SLO knowledge."`
	Version  versionCmd  `cmd:"" help:"Print the version, the commit it was built from and the Go version."`

	Completion completionCmd `cmd:"" help:"Print the shell code that completes inferslo's commands and flags (bash, zsh or fish)."`

	PrintVersion kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

// env is what commands write to; tests swap it.
type env struct {
	stdout, stderr io.Writer
	// report, when set, collects the problems that go into a
	// JSON document instead of onto stderr.
	report *report
	// scratch is the run's own temporary folder, where simulations keep
	// their storage ("" in tests: the system's).
	scratch string
}

// problemsErr says problems were already reported; exit 1 without more text.
var errReported = errors.New("problems reported")

func main() {
	prom.DisableTracing()
	os.Exit(withScratch(func(dir string) int { return runIn(dir, os.Args[1:], os.Stdout, os.Stderr) }))
}

// run runs a command line with the system's temporary folder as scratch.
func run(args []string, stdout, stderr io.Writer) int { return runIn("", args, stdout, stderr) }

// runIn runs a command line whose simulations keep their storage in
// scratch.
func runIn(scratch string, args []string, stdout, stderr io.Writer) int {
	var c cli
	// --help, --version and completion requests end the run early with
	// the code kong asks for; the parse error that may follow (no command
	// given) is no one's concern.
	exit := -1
	parser, err := kong.New(&c,
		kong.Name("inferslo"),
		kong.Description("SLO-as-code compiler for LLM serving: OpenSLO v1 specs to Prometheus rules, multi-window multi-burn-rate alerts, Grafana dashboards and KEDA ScaledObjects."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) {
			if exit < 0 {
				exit = code
			}
		}),
		kong.UsageOnError(),
		kong.Vars{"version": versionText()},
	)
	if err != nil {
		fmt.Fprintln(stderr, "inferslo:", err)
		return exitUsage
	}
	// A shell asking for completions (COMP_LINE set) gets them here.
	kongcompletion.Register(parser)
	if exit >= 0 {
		return exit
	}
	// inferslo alone is a usage error: the usage goes where errors go.
	if len(args) == 0 {
		run([]string{"--help"}, stderr, stderr)
		return exitUsage
	}
	ctx, err := parser.Parse(timeValues(args))
	if exit >= 0 {
		return exit
	}
	if err != nil {
		fmt.Fprintln(stderr, "inferslo:", err)
		return exitUsage
	}
	if err := ctx.Run(&env{stdout: stdout, stderr: stderr, scratch: scratch}); err != nil {
		if !errors.Is(err, errReported) {
			fmt.Fprintln(stderr, "inferslo:", err)
		}
		var code exitError
		if errors.As(err, &code) {
			return code.code
		}
		return exitProblems
	}
	return exitOK
}

// relativeTime is a duration back from now, such as -30d or -1h30m.
var relativeTime = regexp.MustCompile(`^-[0-9]+[a-z]`)

// timeFlags take a time that may be a duration back from now.
var timeFlags = map[string]bool{"--from": true, "--to": true, "--at": true}

// timeValues joins a time flag and a value back from now (--from -30d) into
// one argument (--from=-30d), which the parser would otherwise read as a
// short flag; arguments after "--" are left alone.
func timeValues(args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		if timeFlags[a] && i+1 < len(args) && relativeTime.MatchString(args[i+1]) {
			a += "=" + args[i+1]
			i++
		}
		out = append(out, a)
	}
	return out
}
