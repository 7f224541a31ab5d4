package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// completionCmd prints shell code that makes the shell ask inferslo itself
// for completions (kongcompletion.Register answers in run), so they follow
// the command tree without a generated script to keep in step.
type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"Shell: bash, zsh or fish. Load it with: source <(inferslo completion bash), or for fish: inferslo completion fish | source."`
}

func (c *completionCmd) Run(e *env) error {
	bin := completer()
	switch c.Shell {
	case "bash":
		fmt.Fprintf(e.stdout, "complete -o default -o bashdefault -C %s inferslo\n", shellQuote(bin))
	case "zsh":
		// zsh runs bash completers through bashcompinit.
		fmt.Fprintf(e.stdout, "autoload -U +X bashcompinit && bashcompinit\ncomplete -o default -o bashdefault -C %s inferslo\n", shellQuote(bin))
	case "fish":
		// The completer reads the line up to the cursor from COMP_LINE; a
		// trailing space asks for the next word.
		fmt.Fprintf(e.stdout, `function __inferslo_complete
    set -lx COMP_LINE (commandline -cp)
    if test -z (commandline -ct)
        set COMP_LINE "$COMP_LINE "
    end
    %s
end
complete -f -c inferslo -a '(__inferslo_complete)'
`, shellQuote(bin))
	}
	return nil
}

// completer is how the shell should run this binary: by name when it was
// found on PATH, else by its absolute path, so that ./inferslo completes
// from any folder.
func completer() string {
	bin := os.Args[0]
	if !strings.ContainsRune(bin, filepath.Separator) {
		return bin
	}
	if abs, err := filepath.Abs(bin); err == nil {
		return abs
	}
	return bin
}
